// The engine's front: one mutex around the parts that each own one source of edges
// (stream_order: streams, events, host syncs; memory_state: memory conflicts;
// allocations: pointer resolution) and the records trace_builder turns into a trace.
#include "engine.hpp"

#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "allocations.hpp"
#include "dep_set.hpp"
#include "memory_state.hpp"
#include "stream_order.hpp"
#include "trace_builder.hpp"

namespace nimble::deps {

using detail::AllocRecord;
using detail::DepCollector;
using detail::RangeAccess;
using detail::StreamInfo;
using detail::TaskRecord;

struct Engine::State {
  mutable std::mutex mutex;
  // Written under the mutex; read without it by capturing(), which the hooks ask twice for every
  // task the automatic range looks at (the lock was a tenth of a look's host instructions).
  std::atomic<bool> capturing{false};
  StreamOrderPolicy requested_policy = StreamOrderPolicy::Keep;  // for the next window
  detail::StreamOrder order;
  detail::AllocationTable allocations;
  detail::MemoryState memory;
  detail::TaskRecords tasks;
  std::vector<std::size_t> event_points;  // tasks recorded before each event record or wait
  // Stream ids for the nodes of program graph launches, apart from the streams' own.
  detail::StreamId next_graph_stream = detail::StreamId{1} << 62;

  trace::TaskId graph_launch(TaskEvent launch);

  trace::TaskId next_task() const {
    return capturing ? static_cast<trace::TaskId>(tasks.size()) : kNoTask;
  }

  // Appends a host-sync task whose deps `fill` computes.
  template <typename Fill>
  void add_sync(ThreadId thread, const std::string& api, trace::json detail, Fill fill) {
    if (!capturing) return;
    const auto id = static_cast<trace::TaskId>(tasks.size());
    DepCollector deps;
    fill(id, deps);
    detail["api"] = api;
    TaskRecord rec;
    rec.kind = trace::TaskKind::Sync;
    rec.thread = thread;
    rec.deps = deps.finish();
    rec.detail = std::move(detail);
    tasks.push_back(std::move(rec));
  }
};

namespace {

Access combine(std::optional<Access> a, Access b) {
  if (!a || *a == b) return b;
  return Access::ReadWrite;
}

// Work whose memory effects are exactly its accesses: kernels (pointer arguments), copies and
// memsets. Graph launches, host functions and unknown kinds touch memory nimble cannot see.
bool relaxable_kind(trace::TaskKind kind) {
  return kind == trace::TaskKind::Kernel || kind == trace::TaskKind::Memcpy || kind == trace::TaskKind::Memset;
}

}  // namespace

const char* stream_order_policy_name(StreamOrderPolicy policy) {
  switch (policy) {
    case StreamOrderPolicy::Keep: return "stream-order";
    case StreamOrderPolicy::Memory: return "memory";
  }
  return "stream-order";
}

std::optional<StreamOrderPolicy> parse_stream_order_policy(std::string_view name) {
  if (name == "memory") return StreamOrderPolicy::Memory;
  if (name == "stream-order" || name == "keep") return StreamOrderPolicy::Keep;
  return std::nullopt;
}

Engine::Engine() : state_(std::make_unique<State>()) {}
Engine::~Engine() = default;

void Engine::stream_created(StreamHandle stream, unsigned flags, int priority, ThreadId thread) {
  std::lock_guard lock(state_->mutex);
  state_->order.created(stream, flags, priority, thread);
}

void Engine::stream_destroyed(StreamHandle stream) {
  std::lock_guard lock(state_->mutex);
  state_->order.destroyed(stream, state_->capturing);
}

void Engine::allocated(std::uint64_t addr, std::uint64_t size, AllocKind kind,
                       StreamHandle stream) {
  std::lock_guard lock(state_->mutex);
  state_->allocations.allocated(addr, size, kind, stream, state_->next_task());
}

void Engine::freed(std::uint64_t addr, StreamHandle /*stream*/) {
  // Memory state is not cleared: the next user of these addresses conflicts with the last.
  std::lock_guard lock(state_->mutex);
  state_->allocations.freed(addr, state_->next_task());
}

void Engine::event_recorded(EventHandle event, StreamHandle stream, ThreadId thread) {
  std::lock_guard lock(state_->mutex);
  if (state_->capturing) state_->event_points.push_back(state_->tasks.size());
  state_->order.event_recorded(event, state_->order.resolve(stream, thread));
}

void Engine::stream_waited(StreamHandle stream, EventHandle event, ThreadId thread) {
  std::lock_guard lock(state_->mutex);
  if (state_->capturing) state_->event_points.push_back(state_->tasks.size());
  state_->order.stream_waited(state_->order.resolve(stream, thread), event);
}

std::vector<std::size_t> Engine::event_points() const {
  std::lock_guard lock(state_->mutex);
  return state_->event_points;
}

void Engine::host_synced_stream(StreamHandle stream, ThreadId thread, const std::string& api) {
  std::lock_guard lock(state_->mutex);
  State& st = *state_;
  if (!st.capturing) return;
  StreamInfo& s = st.order.resolve(stream, thread);
  trace::json detail = {{"sync", "stream"}, {"synced_stream", st.order.trace_index(s)}};
  st.add_sync(thread, api, std::move(detail), [&](trace::TaskId id, DepCollector& deps) {
    st.order.stream_synced(s, id, deps);
  });
}

void Engine::host_synced_event(EventHandle event, ThreadId thread, const std::string& api) {
  std::lock_guard lock(state_->mutex);
  State& st = *state_;
  trace::json detail = {{"sync", "event"}, {"event", trace::hex_address(event)}};
  st.add_sync(thread, api, std::move(detail), [&](trace::TaskId id, DepCollector& deps) {
    st.order.event_synced(event, id, deps);
  });
}

void Engine::host_synced_context(ThreadId thread, const std::string& api) {
  std::lock_guard lock(state_->mutex);
  State& st = *state_;
  trace::json detail = {{"sync", "context"}};
  st.add_sync(thread, api, std::move(detail), [&](trace::TaskId id, DepCollector& deps) {
    st.order.context_synced(id, deps);
  });
}

namespace {

// A task's accesses as the memory state and the trace see them.
struct TaskMemory {
  std::vector<RangeAccess> ranges;
  std::optional<Access> everything;
  std::vector<trace::MemoryAccess> shown;
};

TaskMemory task_memory(const std::vector<MemAccess>& accesses, const detail::AllocationTable& allocations) {
  TaskMemory m;
  m.ranges.reserve(accesses.size());
  m.shown.reserve(accesses.size());
  for (const MemAccess& a : accesses) {
    if (a.everything) {
      m.everything = combine(m.everything, a.mode);
      m.shown.push_back({trace::MemoryAccess::Target::Everything, -1, 0, 0, a.mode});
      continue;
    }
    if (a.size == 0) continue;
    const AllocRecord* alloc = allocations.find(a.addr);
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t hi = a.size > max - a.addr ? max : a.addr + a.size;
    RangeAccess range{a.addr, hi, a.mode, -1, 0};
    trace::MemoryAccess shown{trace::MemoryAccess::Target::Address, -1, a.addr, a.size, a.mode};
    if (alloc != nullptr) {
      shown.target = trace::MemoryAccess::Target::Allocation;
      range.alloc = shown.alloc = alloc->id;
      range.alloc_base = alloc->addr;
      shown.offset = a.addr - alloc->addr;
    }
    m.ranges.push_back(range);
    m.shown.push_back(shown);
  }
  return m;
}

TaskRecord record_of(TaskEvent& event, int stream, TaskMemory& memory, DepCollector& deps) {
  TaskRecord rec;
  rec.kind = event.kind;
  rec.stream = stream;
  rec.thread = event.thread;
  rec.deps = deps.finish();
  rec.mem = std::move(memory.shown);
  rec.kernel = std::move(event.kernel);
  rec.detail = std::move(event.detail);
  return rec;
}

}  // namespace

trace::TaskId Engine::task(TaskEvent event) {
  std::lock_guard lock(state_->mutex);
  State& st = *state_;
  if (!st.capturing) return kNoTask;
  if (event.kind == trace::TaskKind::GraphLaunch) return st.graph_launch(std::move(event));
  const auto id = static_cast<trace::TaskId>(st.tasks.size());
  StreamInfo& stream = st.order.resolve(event.stream, event.thread);
  TaskMemory memory = task_memory(event.accesses, st.allocations);

  // Under the Memory policy a task whose accesses are all known is ordered against the other
  // such tasks of its stream by memory conflicts only (docs/dependencies.md).
  const bool relaxable = st.order.policy() == StreamOrderPolicy::Memory && !memory.everything &&
                         relaxable_kind(event.kind);
  DepCollector deps;
  st.order.task_deps(stream, relaxable, deps);
  st.order.task_issued(stream, id, relaxable);
  st.memory.record(id, stream.id, stream.epoch, memory.ranges, memory.everything, deps);
  st.tasks.push_back(record_of(event, st.order.trace_index(stream), memory, deps));
  return id;
}

trace::TaskId Engine::State::graph_launch(TaskEvent launch) {
  for (std::size_t i = 0; i < launch.graph_nodes.size(); ++i) {
    for (std::size_t p : launch.graph_nodes[i].preds) {
      if (p >= i) throw std::logic_error("graph node " + std::to_string(i) + " follows a later node " + std::to_string(p));
    }
  }
  StreamInfo& stream = order.resolve(launch.stream, launch.thread);
  for (const GraphNodeEvent& node : launch.graph_nodes) {
    for (EventHandle e : node.waits) order.stream_waited(stream, e);
  }
  // What the stream's next task would wait for: the nodes without predecessors wait for it.
  DepCollector before;
  order.task_deps(stream, /*relaxable=*/false, before);
  const std::vector<detail::Dep> earlier = before.finish();
  auto add_earlier = [&](DepCollector& deps) {
    for (const detail::Dep& d : earlier) {
      for (const detail::Reason& r : d.reasons) deps.add(d.task, r);
    }
  };
  const int stream_index = order.trace_index(stream);
  // The nodes are not ordered by the stream among themselves: they share a stream id of their
  // own, so the memory state never takes two of them (or a later task of the launch's stream)
  // as ordered by stream bookkeeping.
  const detail::StreamId nodes_stream = next_graph_stream++;
  const auto first = static_cast<trace::TaskId>(tasks.size());
  const auto launch_id = first + static_cast<trace::TaskId>(launch.graph_nodes.size());
  DepCollector launch_deps;
  for (std::size_t i = 0; i < launch.graph_nodes.size(); ++i) {
    GraphNodeEvent& node = launch.graph_nodes[i];
    const auto id = first + static_cast<trace::TaskId>(i);
    DepCollector deps;
    if (node.preds.empty()) add_earlier(deps);
    for (std::size_t p : node.preds) {
      deps.add(first + static_cast<trace::TaskId>(p), detail::Why::Graph);
    }
    TaskMemory mem = task_memory(node.task.accesses, allocations);
    memory.record(id, nodes_stream, /*epoch=*/0, mem.ranges, mem.everything, deps);
    node.task.thread = launch.thread;
    node.task.detail["graph_launch"] = launch_id;
    node.task.detail["graph_node"] = i;
    tasks.push_back(record_of(node.task, stream_index, mem, deps));
    launch_deps.add(id, detail::Why::Graph);
  }
  if (launch.graph_nodes.empty()) add_earlier(launch_deps);
  order.task_issued(stream, launch_id, /*relaxable=*/false);
  TaskMemory none;
  launch.detail["graph_nodes"] = launch.graph_nodes.size();
  tasks.push_back(record_of(launch, stream_index, none, launch_deps));
  for (const GraphNodeEvent& node : launch.graph_nodes) {
    for (EventHandle e : node.records) order.event_recorded(e, stream);
  }
  return launch_id;
}

std::vector<MemAccess> Engine::resolve_pointers(const std::uint8_t* args, std::size_t size,
                                                const std::vector<ParamLayout>& params,
                                                std::vector<trace::PointerRecord>* pointers) const {
  std::lock_guard lock(state_->mutex);
  return state_->allocations.resolve_pointers(args, size, params, pointers);
}

void Engine::set_stream_order_policy(StreamOrderPolicy policy) {
  std::lock_guard lock(state_->mutex);
  state_->requested_policy = policy;  // latched by the next begin_window
}

StreamOrderPolicy Engine::stream_order_policy() const {
  std::lock_guard lock(state_->mutex);
  return state_->requested_policy;
}

void Engine::begin_window() {
  std::lock_guard lock(state_->mutex);
  State& st = *state_;
  if (st.capturing) return;
  st.tasks.clear();
  st.event_points.clear();
  st.order.reset_window();
  st.order.set_policy(st.requested_policy);
  st.memory.reset();
  st.allocations.begin_window();
  st.capturing = true;
}

void Engine::end_window() {
  std::lock_guard lock(state_->mutex);
  state_->capturing = false;
}

bool Engine::capturing() const { return state_->capturing.load(std::memory_order_acquire); }

trace::Trace Engine::build_trace() const {
  std::lock_guard lock(state_->mutex);
  return detail::build_trace(state_->tasks, state_->order.trace_streams(),
                             state_->allocations.window(), state_->order.policy());
}

trace::Trace Engine::take_trace() { return take_trace_later()(); }

std::function<trace::Trace()> Engine::take_trace_later() {
  std::lock_guard lock(state_->mutex);
  struct Taken {
    detail::TaskRecords tasks;
    trace::json streams;
    std::vector<AllocRecord> allocations;
    StreamOrderPolicy policy;
  };
  auto taken = std::make_shared<Taken>(Taken{std::move(state_->tasks), detail::streams_json(state_->order.trace_streams()),
                                             state_->allocations.window(), state_->order.policy()});
  state_->tasks.clear();
  return [taken] {
    return detail::build_trace(std::move(taken->tasks), std::move(taken->streams), taken->allocations, taken->policy);
  };
}

}  // namespace nimble::deps
