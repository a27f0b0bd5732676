// Dependency inference engine: a CUDA-free component fed with events by the hook layer.
// It turns the stream of intercepted GPU operations into trace tasks with sound dependencies,
// each edge labelled with the reason it exists (docs/dependencies.md).
//
// Contract with the hook layer (interposer/hooks):
//  * Stream handles are the raw CUstream values. The hook layer maps the per-thread default
//    stream (CU_STREAM_PER_THREAD, or stream 0 passed to a _ptsz/_ptds entry point) to
//    kPerThreadStream and the legacy default stream (0 or CU_STREAM_LEGACY) to kLegacyStream.
//  * Calls arrive in the order the program issued them; the engine is thread-safe.
//  * Addresses are device virtual addresses (CUdeviceptr values). Host ranges may be passed as
//    accesses too (under unified addressing they never overlap device ranges); under the Memory
//    policy the host side of a copy must be, or two copies through one host buffer on one
//    stream (D2H then H2D, or two D2H) lose their order. Host allocations are only resolved
//    from kernel arguments when reported with allocated(..., AllocKind::Host, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimble/trace/recorded.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::deps {

using StreamHandle = std::uint64_t;
using EventHandle = std::uint64_t;
using ThreadId = std::uint64_t;

inline constexpr StreamHandle kLegacyStream = 0x1;     // CU_STREAM_LEGACY
inline constexpr StreamHandle kPerThreadStream = 0x2;  // CU_STREAM_PER_THREAD

// Returned by Engine::task() outside the capture window: the task was not recorded.
inline constexpr trace::TaskId kNoTask = -1;

using Access = trace::AccessMode;  // Read, Write, ReadWrite

// How work on one stream is ordered (docs/dependencies.md, "Ordering policies").
//  * Keep: every task depends on the previous task of its stream (the program's stream order).
//  * Memory: tasks whose memory accesses are fully known ("relaxable": kernel, memcpy and
//    memset tasks without an `everything` access) are ordered among themselves on a stream only
//    by memory conflicts; every other task on the stream (graph launches, host functions,
//    `everything` accesses, ...) depends on all of them and later tasks depend on it. Events,
//    the legacy default stream and host syncs still cover all earlier work of the stream.
enum class StreamOrderPolicy { Keep, Memory };

// The names used in the trace ("dependency_policy") and in NIMBLE_DEPENDENCIES:
// "stream-order" (Keep) and "memory" (Memory).
const char* stream_order_policy_name(StreamOrderPolicy policy);
// Parses those names (also accepts "keep" for Keep); nullopt for anything else.
std::optional<StreamOrderPolicy> parse_stream_order_policy(std::string_view name);

// A range of device memory a task touches. `Everything` stands for memory nimble cannot see
// (opaque graph launches, kernels whose pointers cannot be resolved): it conflicts with all.
struct MemAccess {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  Access mode = Access::ReadWrite;
  bool everything = false;
};

// One argument of a kernel as reported by cuFuncGetParamInfo: where it sits in the argument bytes.
struct ParamLayout {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
};

enum class AllocKind { Device, Async, Mapped, Managed, Host, ModuleGlobal };

struct GraphNodeEvent;

// A GPU task as the hook layer saw it. `detail` holds the kind-specific trace fields
// (copy direction, library call, ...) and is copied into the trace task; a kernel's fields stay
// typed in `kernel` until the trace is built (while a window records, every launch pays for what
// it keeps: JSON values cost the program several times what the record does).
struct TaskEvent {
  // GraphLaunch: a program graph launch whose nodes are recorded (graph_nodes); Graph: one whose
  // nodes nimble could not see (one opaque task touching everything).
  trace::TaskKind kind = trace::TaskKind::Kernel;
  StreamHandle stream = kLegacyStream;
  ThreadId thread = 0;
  std::vector<MemAccess> accesses;
  trace::json detail = trace::json::object();
  std::optional<trace::KernelRecord> kernel;  // written before `detail`'s fields
  // kind "graph_launch": the graph's nodes, in a topological order.
  std::vector<GraphNodeEvent> graph_nodes;
};

// One node of a program graph as it ran (child graphs flattened, empty and disabled nodes left
// out, their edges passed on). Its stream and thread are the launch's.
struct GraphNodeEvent {
  TaskEvent task;
  std::vector<std::size_t> preds;  // earlier nodes (indices) it follows: the graph's edges
  std::vector<EventHandle> records;  // event record nodes: the events it records
  std::vector<EventHandle> waits;    // event wait nodes: the events it waits for
};

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Streams. Flags as in cuStreamCreate (CU_STREAM_NON_BLOCKING = 0x1 opts out of the
  // legacy default stream's implicit synchronisation).
  void stream_created(StreamHandle stream, unsigned flags, int priority, ThreadId thread);
  void stream_destroyed(StreamHandle stream);

  // Allocations, tracked for the whole run so pointers in kernel arguments can be resolved.
  void allocated(std::uint64_t addr, std::uint64_t size, AllocKind kind, StreamHandle stream);
  void freed(std::uint64_t addr, StreamHandle stream);

  // Events: record captures the stream's work so far; a wait makes the stream's next task
  // depend on it.
  void event_recorded(EventHandle event, StreamHandle stream, ThreadId thread);
  void stream_waited(StreamHandle stream, EventHandle event, ThreadId thread);
  // Where the window's event records and waits fell among its tasks: for each, in issue order,
  // how many tasks were recorded before it. They are not tasks, but a replay that holds work
  // back must have everything before them on the GPU there (`nimble run` ends a graph there).
  std::vector<std::size_t> event_points() const;

  // Host synchronisation: the host blocked until the named work finished. Later tasks from
  // any thread are ordered after it. Recorded as a task of kind "sync".
  void host_synced_stream(StreamHandle stream, ThreadId thread, const std::string& api);
  void host_synced_event(EventHandle event, ThreadId thread, const std::string& api);
  void host_synced_context(ThreadId thread, const std::string& api);

  // A GPU task; returns its trace id (kNoTask outside the capture window). Dependencies are
  // computed from stream order (as the window's StreamOrderPolicy says), events, default-stream
  // semantics, host syncs and memory conflicts among `accesses`. Under Memory, a "kernel",
  // "memcpy" or "memset" task without an `everything` access is relaxable: `accesses` must then
  // list every byte range it touches, host memory of copies included.
  trace::TaskId task(TaskEvent event);
  //
  // A "graph_launch" event becomes one task per node followed by the launch itself: a node
  // depends on its graph predecessors (reason "graph"), a node without any on the stream's
  // earlier work (as the next task of the stream would), every node on memory conflicts with
  // earlier tasks, and the launch task on all nodes; it then stands for them on its stream.
  // Events recorded inside the graph capture the whole launch; events waited for inside it
  // are waited for before its first node (both only ever add order). Returns the launch's id.

  // Resolve pointers found in kernel argument bytes against tracked allocations.
  // Every 8-byte aligned word inside each parameter that lands in a live allocation yields an
  // access (whole allocation, ReadWrite: the extent and mode are unknown). `pointers` receives
  // each hit: where it is in the arguments and where it points. Only the `size` bytes at `args`
  // are read, whatever the layout claims.
  std::vector<MemAccess> resolve_pointers(const std::uint8_t* args, std::size_t size,
                                          const std::vector<ParamLayout>& params,
                                          std::vector<trace::PointerRecord>* pointers) const;

  // The ordering policy of capture windows (default Keep). begin_window latches it for the
  // window it starts, so set it before begin_window; a call while capturing applies from the
  // next fresh recording. The trace's "dependency_policy" names the policy its window used.
  void set_stream_order_policy(StreamOrderPolicy policy);
  // The policy set (the one the next window will use).
  StreamOrderPolicy stream_order_policy() const;

  // Recording window: tasks are only appended between begin_window and end_window, but
  // allocations and streams are tracked all the time. begin_window (when not already
  // capturing) starts a fresh recording: earlier tasks, event captures, host syncs and memory
  // state are dropped, since work before the window is complete from the trace's point of view.
  void begin_window();
  void end_window();
  bool capturing() const;

  // The recorded tasks as a trace (allocations, streams and "dependency_policy" in top-level
  // fields).
  trace::Trace build_trace() const;
  // The same, taking the window's tasks out of the engine (a trace built once, as the recorder
  // does, is then not copied); a later build_trace has no tasks until the next window.
  trace::Trace take_trace();
  // The same in two steps: the window's tasks are taken now (and the streams and allocations the
  // trace names copied, under the engine's lock); the function returned builds the trace from
  // them alone, on any thread, once. nimble run builds it on a thread of its own while the
  // program goes on.
  std::function<trace::Trace()> take_trace_later();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nimble::deps
