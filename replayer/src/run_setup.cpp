#include "nimble/replayer/run_setup.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <set>

#include "deps/engine.hpp"
#include "nimble/replayer/end_reads.hpp"
#include "nimble/replayer/plan.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/recorded.hpp"

namespace nimble::replayer {
namespace {

bool launches_program_graphs(const trace::Trace& trace) {
  return std::any_of(trace.tasks.begin(), trace.tasks.end(), [](const trace::Task& t) {
    return trace::kind_of(t) == trace::TaskKind::Graph || trace::kind_of(t) == trace::TaskKind::GraphLaunch;
  });
}

bool nimble_launches_anything(const ReplayPlan& plan, const std::vector<Segment>& segments) {
  return std::any_of(segments.begin(), segments.end(),
                     [&](const Segment& s) { return !s.program_runs && has_work(plan, s); });
}

// An iteration that the program's own event records, waits and stream changes cut into many
// graphs of a call or two each (cuDNN's RNN orders its internal streams so, about once per
// kernel): each graph launch costs about what the calls it replaces cost, and each cut is a
// point where nimble run must act. An LSTM language model on the H200 replayed at 0.59-0.91 of
// plain with 190 graphs of 2.5 calls (docs/benchmarks/unseen-h200-nov29). A few such graphs in a
// longer iteration are fine: the rule looks at the average over at least kFewCallsGraphs graphs.
constexpr std::size_t kFewCallsGraphs = 8;
constexpr double kFewestCallsPerGraph = 4.0;

std::string why_too_fragmented(const ReplayPlan& plan, const std::vector<Segment>& segments) {
  std::size_t graphs = 0, calls = 0;
  for (const Segment& s : segments) {
    if (s.program_runs) continue;
    std::size_t in_segment = 0;
    for (std::size_t op = s.begin; op < s.end; ++op) in_segment += plan.ops[op].kind != OpKind::Nop;
    graphs += in_segment > 0;  // (a stretch of syncs launches nothing: has_work)
    calls += in_segment;
  }
  const double per_graph = graphs ? static_cast<double>(calls) / static_cast<double>(graphs) : 0;
  if (graphs < kFewCallsGraphs || per_graph >= kFewestCallsPerGraph) return "";
  char mean[32];
  std::snprintf(mean, sizeof mean, "%.1f", per_graph);
  return "the program's own event records, waits and stream changes cut the iteration into " + std::to_string(graphs) +
         " graphs of " + mean + " calls on average (fewer than " + std::to_string(static_cast<int>(kFewestCallsPerGraph)) +
         "): a graph launch for every call or two costs what it saves, so the program runs its own calls";
}

// Whether the program could not run replay here: the reason, or "" when it can.
std::string why_not(const trace::Trace& trace, const PlanResult& planned, const RunSetupOptions& options) {
  if (!planned.plan) {
    return "the recorded iteration cannot be replayed safely (" + std::to_string(planned.problems.size()) +
           " problem(s)); first: " + planned.problems.front();
  }
  if (!planned.plan->shadow_sizes.empty()) {
    // Stream-ordered frees can wait until the work before them is launched (held frees); a
    // synchronous cuMemFree inside the iteration synchronises, and a schedule over several
    // streams needs the recorded addresses.
    std::size_t synchronous = 0;
    if (auto list = trace.extra.find("allocations"); list != trace.extra.end() && list->is_array()) {
      for (const trace::json& a : *list) {
        if (a.value("freed", false) && a.value("kind", std::string()) != "async") ++synchronous;
      }
    }
    if (synchronous > 0) {
      return "the program freed " + std::to_string(synchronous) + " allocation(s) inside the recorded iteration with "
             "cuMemFree, which synchronises (an allocator without a cache, such as PYTORCH_NO_CUDA_MEMORY_CACHING=1; "
             "stream-ordered allocators such as PyTorch's backend:cudaMallocAsync are replayed)";
    }
    if (options.max_streams > 1) {
      return "the program freed " + std::to_string(planned.plan->shadow_sizes.size()) + " allocation(s) inside the "
             "recorded iteration; graphs over several streams (--max-streams > 1) need the recorded addresses to stay";
    }
  }
  std::set<int> streams;
  for (const trace::Task& t : trace.tasks) {
    const trace::TaskKind kind = trace::kind_of(t);
    if ((kind == trace::TaskKind::Kernel || kind == trace::TaskKind::Memcpy || kind == trace::TaskKind::Memset) && t.stream) {
      streams.insert(*t.stream);
    }
  }
  if (streams.size() > 1 && !options.multi_stream) {
    return "the iteration used " + std::to_string(streams.size()) + " streams; nimble run replays programs that issue "
           "their iteration on one stream when NIMBLE_RUN_MULTI_STREAM=0 (1, the default, replays several)";
  }
  if (streams.size() > 1 && options.max_streams > 1) {
    return "the iteration used " + std::to_string(streams.size()) + " streams; they are replayed on the program's own "
           "streams, so --max-streams must be 1";
  }
  return "";
}

PreparedRecording refused(std::string why) {
  PreparedRecording p;
  p.refused_because = std::move(why);
  return p;
}

}  // namespace

trace::json PreparedRecording::description() const {
  if (!setup) return {{"refused_because", refused_because}};
  return {{"ops", setup->plan.ops.size()},
          {"segments", setup->segments.size()},
          {"streams", setup->plan.streams},
          {"program_streams", own_streams ? program_streams : 1},
          {"arguments", setup->rule == ArgumentRule::AnyBytes ? "any bytes may change" : "same device addresses"},
          {"end_reads_run_by_program", setup->end_reads}};
}

namespace {

// The trace as recorded again: without the schedule prepare_recording gave it to plan.
struct Unscheduled {
  trace::Trace& trace;
  ~Unscheduled() {
    trace.schedule.reset();
    for (trace::Task& task : trace.tasks) task.schedule.reset();
  }
};

}  // namespace

PreparedRecording prepare_recording(trace::Trace& trace, const RecordedIteration& recorded, const RunSetupOptions& options) {
  const Unscheduled restore{trace};
  PlanResult planned;
  try {
    // On one stream the schedule would put every op there, in issue order, waiting for nothing:
    // the plan is the same without it, and the program is spared the scheduler's work.
    if (options.max_streams != 1) {
      scheduler::Options schedule;
      schedule.max_streams = options.max_streams;
      scheduler::schedule_trace(trace, schedule);
    }
    // The program's own CUDA graphs (torch.cuda.graph, torch.compile with reduce-overhead, XLA
    // command buffers) are launched by its own calls, in place; nimble launches the rest.
    planned = build_plan(trace, ProgramGraphs::RunByProgram);
  } catch (const std::exception& e) {
    return refused(e.what());
  }
  if (std::string reason = why_not(trace, planned, options); !reason.empty()) return refused(reason);
  if (recorded.first_signature == 0) {
    return refused("the iteration has no kernel launch, copy, memset or graph launch to begin its replay with");
  }

  PreparedRecording p;
  RecordingSetup& setup = p.setup.emplace();
  setup.name = recorded.path;
  setup.plan = with_program_pointers(std::move(*planned.plan));
  // One stream: graphs go wherever the program issues the iteration (any stream). Several: each
  // op replays on the stream it was recorded on, and a segment ends where the stream changes.
  std::vector<std::size_t> breaks = recorded.event_points;
  std::set<std::uint64_t> program_streams;
  for (const Op& op : setup.plan.ops) {
    if (op.kind != OpKind::Nop && op.program_stream) program_streams.insert(op.program_stream);
  }
  p.own_streams = program_streams.size() > 1;
  p.program_streams = program_streams.size();
  // CU_STREAM_PER_THREAD names another stream on each thread: a graph launched on it from
  // whichever thread issued a segment's last call could land on the wrong one.
  if (p.own_streams && program_streams.count(deps::kPerThreadStream)) {
    return refused("the iteration used " + std::to_string(program_streams.size()) + " streams, one of them a "
                   "per-thread default stream, which nimble run does not replay across streams");
  }
  // One stream that is the per-thread default stream, issued from several threads: each thread's
  // is another stream, and a graph launched from whichever thread issued a segment's last call
  // would land on that thread's, not beside the work of the thread that issued the rest.
  if (!p.own_streams && program_streams.count(deps::kPerThreadStream)) {
    std::set<std::uint64_t> threads;
    for (std::size_t i = 0; i < setup.plan.ops.size(); ++i) {
      if (setup.plan.ops[i].kind == OpKind::Nop) continue;
      if (const auto thread = trace::read_thread(trace.tasks[i])) threads.insert(*thread);
    }
    if (threads.size() > 1) {
      return refused("the iteration was issued on the per-thread default stream from " + std::to_string(threads.size()) +
                     " threads, which nimble run does not replay (each thread's is another stream)");
    }
  }
  std::uint64_t last_stream = 0;
  for (std::size_t i = 0; i < setup.plan.ops.size(); ++i) {
    Op& op = setup.plan.ops[i];
    if (!p.own_streams) {
      op.program_stream = 0;
    } else if (op.program_stream) {
      if (last_stream && op.program_stream != last_stream) breaks.push_back(i);
      last_stream = op.program_stream;
    }
  }
  // The host reads at the iteration's ends run between iterations, however many the program makes
  // (a side exit's recording is entered at its one site, as recorded).
  EndReads end_reads;
  if (!recorded.side_exit && recorded.calls_before_first == 0) {
    end_reads = leave_end_reads_to_program(trace, setup.plan, recorded.call_signatures.size());
  }
  // Host functions are ops that only order (a segment ends there and the program's own call runs
  // then); so are event records and waits, which are not ops: a segment ends where they were.
  setup.segments = segments_of(setup.plan, options.piece, breaks);
  if (launches_program_graphs(trace) && !nimble_launches_anything(setup.plan, setup.segments)) {
    // Nothing but the program's own graph launches and calls it runs itself (host copies): replay
    // could only add work. nimble run steps aside for good.
    PreparedRecording aside = refused("the iteration launches the program's own CUDA graphs and nothing else nimble "
                                      "could launch for it");
    aside.own_graphs = true;
    return aside;
  }
  // (The program's cuts alone: pieces of --piece ops are nimble's own choice.)
  if (std::string reason = why_too_fragmented(setup.plan, segments_of(setup.plan, 0, breaks)); !reason.empty()) {
    return refused(reason);
  }
  // One stream keeps the program's order: any argument may change. A schedule over several
  // streams was built from the recorded addresses: they must stay.
  p.stream_graphs = setup.plan.streams > 1;
  setup.rule = p.stream_graphs ? ArgumentRule::SameAddresses : ArgumentRule::AnyBytes;
  setup.call_signatures = calls_between_reads(recorded.call_signatures, end_reads);
  setup.first_signature = end_reads.leading > 0 ? setup.call_signatures.front() : recorded.first_signature;
  setup.calls_before_first = recorded.calls_before_first + end_reads.total();
  setup.end_reads = end_reads.total();
  setup.fingerprint = recorded.fingerprint;
  setup.side_exit = recorded.side_exit;
  setup.skip_library = options.skip_library;
  setup.library = options.library;
  return p;
}

}  // namespace nimble::replayer
