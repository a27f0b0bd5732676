#include "config.hpp"

#include <cstdlib>
#include <string_view>

#include "deps/engine.hpp"
#include "nimble/replayer/bench_report.hpp"

namespace nimble::hooks {
namespace {

bool parse_positive_int(std::string_view text, int& out) {
  if (text.empty() || text.size() > 9) return false;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value < 1) return false;
  out = value;
  return true;
}

}  // namespace

Config parse_config(const GetEnv& getenv) {
  Config c;
  auto get = [&](const char* name) -> std::string_view {
    const char* v = getenv(name);
    return v ? std::string_view(v) : std::string_view();
  };

  const std::string_view mode = get("NIMBLE_MODE");
  if (mode == "record") {
    c.record = true;
  } else if (!mode.empty() && mode != "off" && mode != "0") {
    c.errors.push_back("NIMBLE_MODE=" + std::string(mode) +
                       " is not supported; use NIMBLE_MODE=record (or off)");
  }

  if (auto out = get("NIMBLE_OUTPUT"); !out.empty()) c.output = std::string(out);

  if (auto range = get("NIMBLE_CAPTURE_RANGE"); !range.empty()) {
    c.range_text = std::string(range);
    if (range == "cudaProfilerApi") {
      c.range = CaptureRange::ProfilerApi;
    } else if (range == "auto") {
      c.range = CaptureRange::Auto;
    } else if (range.substr(0, 5) == "nvtx:" && range.size() > 5) {
      c.range = CaptureRange::Nvtx;
      c.nvtx_name = std::string(range.substr(5));
    } else {
      c.errors.push_back("NIMBLE_CAPTURE_RANGE=" + std::string(range) +
                         " is not one of cudaProfilerApi, auto, nvtx:NAME");
    }
  }

  if (auto it = get("NIMBLE_ITERATION"); !it.empty() && !parse_positive_int(it, c.iteration)) {
    c.errors.push_back("NIMBLE_ITERATION=" + std::string(it) + " is not a positive integer");
  }
  if (get("NIMBLE_CUPTI") == "0") c.cupti = false;
  if (auto d = get("NIMBLE_DEPENDENCIES"); !d.empty()) {
    if (deps::parse_stream_order_policy(d)) {
      c.dependencies = std::string(d);
    } else {
      c.errors.push_back("NIMBLE_DEPENDENCIES=" + std::string(d) + " is not one of stream-order, memory");
    }
  }
  if (auto b = get("NIMBLE_BENCH"); !b.empty() && b != "0" && !parse_positive_int(b, c.bench_iterations)) {
    c.errors.push_back("NIMBLE_BENCH=" + std::string(b) + " is not a number of replays (a positive integer)");
  }
  if (c.bench_iterations > 100000) {
    c.errors.push_back("NIMBLE_BENCH=" + std::string(get("NIMBLE_BENCH")) + " is too many replays (at most 100000)");
  }
  if (auto o = get("NIMBLE_BENCH_OUTPUT"); !o.empty()) c.bench_output = std::string(o);
  if (auto m = get("NIMBLE_BENCH_MAX_STREAMS"); !m.empty()) {
    if (m == "0") {
      c.bench_max_streams = 0;
    } else if (!parse_positive_int(m, c.bench_max_streams) || c.bench_max_streams > 1024) {
      c.errors.push_back("NIMBLE_BENCH_MAX_STREAMS=" + std::string(m) +
                         " is not a number of streams (1 to 1024, or 0 for no cap)");
    }
  }
  if (auto d = get("NIMBLE_DEBUG"); !d.empty() && d != "0") c.debug = true;
  if (auto t = get("NIMBLE_HOST_TIMES"); !t.empty() && t != "0") c.host_times = true;

  if (auto r = get("NIMBLE_RUN"); !r.empty() && r != "0") {
    if (r == "1") {
      c.run = true;
    } else {
      c.errors.push_back("NIMBLE_RUN=" + std::string(r) + " is not 0 or 1");
    }
  }
  if (c.run && c.bench_iterations > 0) {
    c.errors.push_back("NIMBLE_RUN=1 and NIMBLE_BENCH are exclusive: bench replays the recorded iteration, run the later ones");
  }
  if (auto p = get("NIMBLE_RUN_PIECE"); !p.empty()) {
    if (p == "0") {
      c.run_piece = 0;
    } else if (!parse_positive_int(p, c.run_piece)) {
      c.errors.push_back("NIMBLE_RUN_PIECE=" + std::string(p) + " is not a number of ops (a positive integer, or 0 for whole segments)");
    }
  }
  if (auto m = get("NIMBLE_RUN_MAX_STREAMS"); !m.empty()) {
    if (!parse_positive_int(m, c.run_max_streams) || c.run_max_streams > 1024) {
      c.errors.push_back("NIMBLE_RUN_MAX_STREAMS=" + std::string(m) + " is not a number of streams (1 to 1024)");
    }
  }
  if (auto v = get("NIMBLE_RUN_VARIANTS"); !v.empty()) {
    if (!parse_positive_int(v, c.run_variants) || c.run_variants > 64) {
      c.errors.push_back("NIMBLE_RUN_VARIANTS=" + std::string(v) + " is not a number of execs per graph (1 to 64)");
    }
  }
  if (auto n = get("NIMBLE_RUN_COMPARE"); !n.empty() && n != "0" && !parse_positive_int(n, c.run_compare)) {
    c.errors.push_back("NIMBLE_RUN_COMPARE=" + std::string(n) + " is not a number of iterations per block (a positive integer, or 0)");
  }
  if (auto k = get("NIMBLE_RUN_SKIP_LIBRARY"); !k.empty()) {
    if (k == "0" || k == "1") {
      c.run_skip_library = k == "1";
    } else {
      c.errors.push_back("NIMBLE_RUN_SKIP_LIBRARY=" + std::string(k) + " is not 0 or 1");
    }
  }
  if (auto n = get("NIMBLE_RUN_RECORDINGS"); !n.empty()) {
    if (!parse_positive_int(n, c.run_recordings) || c.run_recordings > 16) {
      c.errors.push_back("NIMBLE_RUN_RECORDINGS=" + std::string(n) + " is not a number of recordings (1 to 16)");
    }
  }
  if (auto n = get("NIMBLE_RUN_TRIAL"); !n.empty()) {
    if (n == "0") {
      c.run_trial = 0;
    } else if (!parse_positive_int(n, c.run_trial) || c.run_trial > 1000) {
      c.errors.push_back("NIMBLE_RUN_TRIAL=" + std::string(n) + " is not a number of iterations per block (1 to 1000, or 0 for no trial)");
    }
  }
  if (auto n = get("NIMBLE_RUN_MIN_SPEEDUP"); !n.empty()) {
    char* end = nullptr;
    const std::string text(n);
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !(v >= 0.0 && v <= 100.0)) {
      c.errors.push_back("NIMBLE_RUN_MIN_SPEEDUP=" + text + " is not a ratio (a number from 0 to 100, e.g. 1.0)");
    } else {
      c.run_min_speedup = v;
    }
  }
  if (auto n = get("NIMBLE_RUN_STALE"); !n.empty()) {
    if (!parse_positive_int(n, c.run_stale)) {
      c.errors.push_back("NIMBLE_RUN_STALE=" + std::string(n) + " is not a number of calls (a positive integer)");
    }
  }
  if (auto o = get("NIMBLE_RUN_OUTPUT"); !o.empty()) c.run_output = std::string(o);

  if (!c.errors.empty()) c.record = false;
  return c;
}

Config config_from_environment() {
  return parse_config([](const char* name) { return std::getenv(name); });
}

std::string bench_output_path(const Config& config, const std::string& trace_path) {
  return config.bench_output.empty() ? replayer::default_bench_path(trace_path) : config.bench_output;
}

std::string run_output_path(const Config& config, const std::string& trace_path) {
  return config.run_output.empty() ? replayer::beside_trace(trace_path, "run") : config.run_output;
}

std::string expand_output_path(const std::string& pattern, long pid) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace nimble::hooks
