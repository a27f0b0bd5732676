#include "output.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "cupti.hpp"
#include "funnel.hpp"
#include "nimble/trace/io.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"
#include "trace_writer.hpp"

#ifndef NIMBLE_VERSION
#define NIMBLE_VERSION "unknown"
#endif

namespace nimble::hooks {
namespace {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

}  // namespace

trace::json describe_device() {
  using CtxGetDevice = CUresult(CUDAAPI*)(CUdevice*);
  using DeviceGetName = CUresult(CUDAAPI*)(char*, int, CUdevice);
  using DeviceGetAttribute = CUresult(CUDAAPI*)(int*, CUdevice_attribute, CUdevice);
  using DriverGetVersion = CUresult(CUDAAPI*)(int*);
  trace::json device = trace::json::object();
  CUdevice dev = 0;
  auto get_device = driver_fn<CtxGetDevice>("cuCtxGetDevice", 2000);
  if (!get_device || get_device(&dev) != CUDA_SUCCESS) {
    // No current context on this thread (JAX keeps its own): describe device 0.
    dev = 0;
    device["note"] = "no current context on the thread that opened the window; device 0 shown";
  }
  char name[256] = {0};
  if (auto get_name = driver_fn<DeviceGetName>("cuDeviceGetName", 2000)) {
    if (get_name(name, sizeof name - 1, dev) == CUDA_SUCCESS) device["name"] = name;
  }
  device["ordinal"] = dev;
  if (auto attr = driver_fn<DeviceGetAttribute>("cuDeviceGetAttribute", 2000)) {
    int major = 0, minor = 0, sms = 0;
    attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    attr(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    device["compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
    device["multiprocessors"] = sms;
  }
  if (auto version = driver_fn<DriverGetVersion>("cuDriverGetVersion", 2020)) {
    int v = 0;
    if (version(&v) == CUDA_SUCCESS) device["driver_cuda_version"] = v;
  }
  return device;
}

trace::json attach_cupti_results(trace::Trace& trace, bool cupti_used) {
  std::size_t kernels = 0;
  for (const auto& t : trace.tasks) kernels += trace::kind_of(t) == trace::TaskKind::Kernel;
  trace::json coverage = {{"traced_kernels", kernels}};
  if (!cupti_used) {
    coverage["cupti_kernels"] = nullptr;
    return coverage;
  }
  // Launch calls CUPTI saw, plus the kernels that ran as nodes of graph launches.
  const std::uint64_t graph_kernels = cupti::graph_kernel_records();
  coverage["cupti_kernels"] = cupti::kernel_launches() + graph_kernels;
  coverage["cupti_graph_kernels"] = graph_kernels;
  coverage["cupti_kernel_records"] = cupti::kernel_records();

  // Each task's GPU times: by its own correlation id, or for a kernel node of a program graph by
  // its launch's correlation id and CUPTI's id of the node.
  const auto timings = cupti::timings();
  std::unordered_map<trace::TaskId, std::uint32_t> launch_correlation;
  for (const auto& t : trace.tasks) {
    auto c = t.extra.find("correlation_id");
    if (trace::kind_of(t) == trace::TaskKind::GraphLaunch && c != t.extra.end() && c->is_number_unsigned()) {
      launch_correlation[t.id] = c->get<std::uint32_t>();
    }
  }
  auto timing_of = [&](const trace::Task& t) -> std::optional<cupti::Timing> {
    if (auto launch = t.extra.find("graph_launch"); launch != t.extra.end()) {
      auto node = t.extra.find("cupti_graph_node_id");
      auto corr = launch_correlation.find(launch->get<trace::TaskId>());
      if (node == t.extra.end() || !node->is_number_unsigned() || corr == launch_correlation.end()) return std::nullopt;
      return cupti::graph_node_timing(corr->second, node->get<std::uint64_t>());
    }
    auto c = t.extra.find("correlation_id");
    if (c == t.extra.end() || !c->is_number_unsigned()) return std::nullopt;
    auto it = timings.find(c->get<std::uint32_t>());
    if (it == timings.end()) return std::nullopt;
    return it->second;
  };
  std::vector<std::pair<std::size_t, cupti::Timing>> timed_tasks;
  std::uint64_t first = UINT64_MAX;
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    const auto timing = timing_of(trace.tasks[i]);
    if (!timing) continue;
    first = std::min(first, timing->start_ns);  // as before: any record found counts for the origin
    if (timing->end_ns >= timing->start_ns) timed_tasks.emplace_back(i, *timing);
  }
  for (const auto& [i, timing] : timed_tasks) {
    trace.tasks[i].duration_us = static_cast<double>(timing.end_ns - timing.start_ns) / 1000.0;
    trace.tasks[i].extra["start_us"] = static_cast<double>(timing.start_ns - first) / 1000.0;
  }
  coverage["tasks_with_duration"] = timed_tasks.size();
  return coverage;
}

std::string trace_output_path() {
  return this_process_path(config().output);
}

std::string numbered_trace_path(const std::string& path, int n) {
  if (n <= 1) return path;
  const std::string suffix = ".json";
  const bool json = path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string stem = json ? path.substr(0, path.size() - suffix.size()) : path;
  return stem + "." + std::to_string(n) + (json ? suffix : std::string());
}

trace::Trace build_recorded_trace(const WindowReport& report) { return build_recorded_trace_later(report)(); }

TraceWriter::Build build_recorded_trace_later(const WindowReport& report) {
  const FunnelStats funnel = funnel_stats();
  return [tasks = engine().take_trace_later(), funnel, report] {
    trace::Trace trace = tasks();
    trace::json coverage = attach_cupti_results(trace, report.cupti_used);
    trace.extra["recorded_with"] = {
        {"tool", "nimble"},
        {"version", NIMBLE_VERSION},
        {"interposer", "libnimble.so"},
        {"command", command_line()},
        {"pid", static_cast<long>(getpid())},
        {"funnel", {{"proc_address_wrapped", funnel.proc_address_wrapped},
                    {"proc_address_passed_through", funnel.proc_address_passed},
                    {"dlsym_wrapped", funnel.dlsym_wrapped}}}};
    trace.extra["device"] = report.device;
    trace::json capture = {{"range", report.range},
                           {"iteration", report.iteration},
                           {"ended_by", report.ended_by},
                           {"truncated", report.truncated},
                           {"window_ms", report.window_ms}};
    if (!report.auto_range.is_null()) capture["auto"] = report.auto_range;
    if (!report.side_exit.is_null()) capture["side_exit"] = report.side_exit;
    trace.extra["capture"] = std::move(capture);
    coverage["cupti"] = report.cupti_used ? "used" : "unavailable";
    if (!report.cupti_status.empty()) coverage["cupti_note"] = report.cupti_status;
    if (report.cupti_after_first_task) coverage["cupti_after_first_task"] = true;
    trace.extra["coverage"] = std::move(coverage);
    return trace;
  };
}

namespace {

std::string path_of(const WindowReport& report) { return report.path.empty() ? trace_output_path() : report.path; }

// "wrote 12 tasks (10 kernel, 2 sync) to t.json"
std::string wrote_message(const trace::Trace& trace, const WindowReport& report) {
  std::map<std::string, std::size_t> kinds;
  for (const auto& t : trace.tasks) ++kinds[t.kind];
  std::string summary;
  for (const auto& [kind, n] : kinds) summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  return "wrote " + std::to_string(trace.tasks.size()) + " tasks (" + summary + ") to " + path_of(report) +
         (report.truncated ? " (truncated: the capture range was still open at exit)" : "");
}

}  // namespace

bool write_recorded_trace(const trace::Trace& trace, const WindowReport& report) {
  const std::string path = path_of(report);
  if (const std::optional<std::string> error = trace::write_trace(trace, path)) {
    log_message("could not write the trace to " + path + ": " + *error);
    return false;
  }
  log_message(wrote_message(trace, report));
  return true;
}

void write_recorded_trace_in_background(trace::Trace trace, const WindowReport& report, TraceWriter::Before before) {
  write_recorded_trace_in_background(built_trace(std::move(trace)), report, std::move(before));
}

void write_recorded_trace_in_background(TraceWriter::Build build, const WindowReport& report, TraceWriter::Before before) {
  const std::string path = path_of(report);
  auto wrote = std::make_shared<std::string>();
  background_trace_writer().write(
      std::move(build), path,
      [path, wrote](const std::optional<std::string>& error) {
        log_message(error ? "could not write the trace to " + path + ": " + *error : *wrote);
      },
      [wrote, report, before = std::move(before)](trace::Trace& trace, double build_ms,
                                                  const std::optional<std::string>& build_error) {
        if (!build_error) *wrote = wrote_message(trace, report);
        if (before) before(trace, build_ms, build_error);
      });
}

}  // namespace nimble::hooks
