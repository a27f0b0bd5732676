#include "config.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "nimble/replayer/bench_report.hpp"
#include "settings/output_path.hpp"

namespace nimble::hooks {

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

std::string this_process_path(const std::string& pattern) {
  // Read once (the program may change its environment later); a forked child does not record.
  static const settings::ProcessIdentity who = settings::process_identity(
      [](const char* name) { return std::getenv(name); }, static_cast<long>(getpid()));
  return settings::expand_output_path(pattern, who);
}

}  // namespace nimble::hooks
