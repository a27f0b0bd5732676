#include "report.hpp"

#include <cstdio>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "nimble/scheduler/simulate.hpp"
#include "nimble/trace/recorded.hpp"
#include "nimble/scheduler/trace_schedule.hpp"

namespace nimble::cli {
namespace {

std::string fixed(double value, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

void row(std::ostream& out, const std::string& label, const std::string& value) {
  out << "  " << label << std::string(label.size() < 26 ? 26 - label.size() : 1, ' ') << value
      << "\n";
}

}  // namespace

void print_task_kinds(std::ostream& out, const trace::Trace& trace) {
  std::vector<std::string> order;
  std::map<std::string, std::size_t> counts;
  for (const auto& task : trace.tasks) {
    if (counts[task.kind]++ == 0) order.push_back(task.kind);
  }
  std::string line;
  for (const auto& kind : order) {
    if (!line.empty()) line += ", ";
    line += kind + " " + std::to_string(counts[kind]);
  }
  row(out, "tasks", std::to_string(trace.tasks.size()) + (line.empty() ? "" : " (" + line + ")"));
}

void print_issuers(std::ostream& out, const trace::Trace& trace) {
  struct Issuer {
    std::uint64_t id = 0;
    std::vector<std::string> kinds;  // in order of first appearance
    std::map<std::string, std::size_t> counts;
    std::set<int> streams;
  };
  std::vector<Issuer> issuers;
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (const trace::Task& task : trace.tasks) {
    std::optional<std::uint64_t> thread;
    try {
      thread = trace::read_thread(task);
    } catch (const std::exception&) {
      continue;  // (`check` names a malformed field; a summary passes it by)
    }
    if (!thread) continue;
    auto [at, added] = index.try_emplace(*thread, issuers.size());
    if (added) issuers.push_back({*thread, {}, {}, {}});
    Issuer& issuer = issuers[at->second];
    if (issuer.counts[task.kind]++ == 0) issuer.kinds.push_back(task.kind);
    if (task.stream) issuer.streams.insert(*task.stream);
  }
  if (issuers.size() < 2) return;
  constexpr std::size_t kListed = 8;
  row(out, "issued by", std::to_string(issuers.size()) + " threads (the calls of several threads may interleave "
                                                          "differently in each iteration)");
  for (std::size_t t = 0; t < issuers.size() && t < kListed; ++t) {
    const Issuer& issuer = issuers[t];
    std::string kinds, streams;
    for (const std::string& kind : issuer.kinds) kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(issuer.counts.at(kind));
    for (int stream : issuer.streams) streams += (streams.empty() ? "" : ", ") + std::to_string(stream);
    row(out, "  thread " + std::to_string(t), "tid " + std::to_string(issuer.id) + ": " + kinds +
                                                   (streams.empty() ? "" : "; streams " + streams));
  }
  if (issuers.size() > kListed) row(out, "", "and " + std::to_string(issuers.size() - kListed) + " more threads");
}

void print_plan(std::ostream& out, const scheduler::Stats& s) {
  row(out, "dependencies", std::to_string(s.edges) + " edges, " + std::to_string(s.meg_edges) +
                               " after transitive reduction");
  const std::string width = s.width_lower_bound == s.width_upper_bound
                                ? std::to_string(s.width_lower_bound)
                                : std::to_string(s.width_lower_bound) + ".." +
                                      std::to_string(s.width_upper_bound);
  row(out, "width (independent tasks)", width);
  row(out, "streams", std::to_string(s.streams) + " (from " + std::to_string(s.chains) +
                          " chains of a " + std::to_string(s.matching) + "-edge matching)");
  row(out, "waits (cross-stream syncs)",
      std::to_string(s.waits) + " (" + std::to_string(s.waits_before_pruning - s.waits) +
          " implied ones removed)");
  row(out, "critical path", fixed(s.critical_path_us) + " us");
  row(out, "makespan, one stream", fixed(s.serial_us) + " us");
  std::string multi = fixed(s.makespan_us) + " us";
  if (s.makespan_us > 0) multi += " (" + fixed(s.serial_us / s.makespan_us, 2) + "x faster)";
  row(out, "makespan, nimble streams", multi);
  if (s.tasks_without_duration > 0) {
    row(out, "note", std::to_string(s.tasks_without_duration) + " task(s) have no duration_us; " +
                         "counted as " + fixed(scheduler::kDefaultDurationUs) + " us each");
  }
}

std::optional<double> simulate_stored_schedule(const trace::Trace& trace) {
  if (!trace.schedule) return std::nullopt;
  const scheduler::Dag dag = scheduler::dag_from_trace(trace);
  std::unordered_map<trace::TaskId, scheduler::NodeIndex> index_of;
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    index_of[trace.tasks[i].id] = static_cast<scheduler::NodeIndex>(i);
  }
  scheduler::StreamAssignment assignment;
  scheduler::Waits waits(trace.tasks.size());
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    const auto& schedule = trace.tasks[i].schedule;
    if (!schedule) return std::nullopt;  // validation reports partial schedules
    assignment.stream_of.push_back(static_cast<std::uint32_t>(schedule->stream));
    for (trace::TaskId id : schedule->waits) waits[i].push_back(index_of.at(id));
  }
  scheduler::renumber_streams(assignment);
  return scheduler::simulate_schedule(assignment, waits, scheduler::durations_or_default(dag))
      .makespan_us;
}

}  // namespace nimble::cli
