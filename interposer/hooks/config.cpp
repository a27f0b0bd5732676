#include "config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "nimble/replayer/bench_report.hpp"
#include "nimble/replayer/library_memo.hpp"
#include "settings/output_claim.hpp"
#include "settings/output_path.hpp"

namespace nimble::hooks {

namespace {

const std::vector<std::string>& skippable_functions() {
  static const std::vector<std::string> names = {
#define NIMBLE_LIBRARY_REPLAYABLE(library, symbol) #symbol,
#define NIMBLE_LIBRARY_HOOK(library, symbol)
#include "library_calls.def"
  };
  return names;
}

std::string skippable_functions_text() {
  std::string text;
  for (const std::string& name : skippable_functions()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// The names in NIMBLE_RUN_SKIP_CALLS's list that are no replayable library function, joined.
std::string unskippable_names(const std::string& list) {
  const std::vector<std::string>& known = skippable_functions();
  std::string unknown;
  for (const std::string& name : replayer::function_names(list)) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    unknown += (unknown.empty() ? "" : ", ") + name;
  }
  return unknown;
}

}  // namespace

Config parse_config(const GetEnv& getenv) {
  Config c;
  auto get = [&](const settings::Setting& setting) -> std::string_view {
    const char* v = getenv(setting.variable);
    return v ? std::string_view(v) : std::string_view();
  };
  auto read = [&](const settings::Setting& setting, auto& member) {
    if (std::string error = settings::parse(setting, get(setting), member); !error.empty()) {
      c.errors.push_back(std::move(error));
    }
  };

  // Its own message: it is the one variable users set by hand to start nimble.
  const std::string_view mode = get(settings::mode);
  if (mode == "record") {
    c.record = true;
  } else if (!mode.empty() && mode != "off" && mode != "0") {
    c.errors.push_back(settings::assignment(settings::mode, mode) + " is not supported; use " +
                       settings::assignment(settings::mode, "record") + " (or off)");
  }

#define NIMBLE_SETTING(member, ...) read(settings::member, c.member);
#define NIMBLE_BY_HAND(...)
#include "settings/settings.def"

  // The capture range's text, checked above, names the range (and the NVTX range's name).
  if (c.range_text == "auto") {
    c.range = CaptureRange::Auto;
  } else if (c.range_text.rfind("nvtx:", 0) == 0) {
    c.range = CaptureRange::Nvtx;
    c.nvtx_name = c.range_text.substr(5);
  } else {
    c.range = CaptureRange::ProfilerApi;
  }
  // The functions nimble run can skip are library_calls.def's replayable ones.
  if (std::string unknown = unskippable_names(c.run_skip_calls); !unknown.empty()) {
    c.errors.push_back(settings::assignment(settings::run_skip_calls, c.run_skip_calls) + " names " + unknown +
                       ", which nimble run cannot skip (it can skip calls of: " + skippable_functions_text() +
                       "; none: no call)");
  }
  if (c.run && c.bench_iterations > 0) {
    c.errors.push_back(settings::assignment(settings::run, "1") + " and " + settings::bench_iterations.variable +
                       " are exclusive: bench replays the recorded iteration, run the later ones");
  }

  if (!c.errors.empty()) c.record = false;
  return c;
}

Config config_from_environment() {
  return parse_config([](const char* name) { return std::getenv(name); });
}

std::string bench_output_path(const Config& config, const std::string& trace_path) {
  return config.bench_output.empty() ? replayer::default_bench_path(trace_path) : this_process_path(config.bench_output);
}

std::string run_output_path(const Config& config, const std::string& trace_path) {
  return config.run_output.empty() ? replayer::beside_trace(trace_path, "run") : this_process_path(config.run_output);
}

const settings::ProcessIdentity& this_process() {
  // Read once (the program may change its environment later); a forked child does not record.
  static const settings::ProcessIdentity who = settings::process_identity(
      [](const char* name) { return std::getenv(name); }, static_cast<long>(getpid()));
  return who;
}

std::string this_process_path(const std::string& pattern) {
  settings::ProcessIdentity who = this_process();
  const std::string path = settings::expand_output_path(pattern, who);
  // Claimed when first written, not at start: a shell or launcher that records nothing holds no file.
  if (settings::output_is_its_own(pattern, who) || settings::claim_output(path)) return path;
  who.output_held_elsewhere = true;
  return settings::expand_output_path(pattern, who);
}

}  // namespace nimble::hooks
