// The recorder's task fields as types (docs/trace-format.md, "Recorder fields"): one writer
// (to_json) the recorder uses, and one reader (read_*) every tool uses to get them back. In a
// Task the fields stay JSON in `extra`, so a file's field order and the fields nimble does not
// know survive a round trip; these types are how code looks at them.
//
// Readers throw RecordedFieldError for a missing or malformed field; its message names the
// field as the file spells it ("launch.grid", "copy.src"). The validator reports the same
// problems with positions, for `nimble check`; readers serve tools that act on a trace.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::trace {

// ---- task kinds ------------------------------------------------------------------------------

enum class TaskKind {
  Kernel,
  Memcpy,
  Memset,
  Sync,         // the host waited (stream, event or context synchronisation)
  HostFunc,     // cuLaunchHostFunc: the program's callback in stream order
  Graph,        // a graph launch nimble could not look into
  GraphLaunch,  // a graph launch whose nodes are the tasks before it
  EventRecord,  // event nodes of a program graph
  EventWait,
  StreamOp,     // stream-ordered driver work nimble does not look into (memory-op waits and writes,
                // prefetches, array copies, external semaphores): may touch any memory
  Other,        // a kind this build does not know (hand-written, or a newer recorder)
};

// "kernel", "memcpy", ... as trace files spell them ("other" for Other, which is never written).
const char* kind_name(TaskKind kind);
// The kind a trace file's "kind" string names; Other for any other string.
TaskKind kind_of(std::string_view name);
inline TaskKind kind_of(const Task& task) { return kind_of(task.kind); }

// ---- hex text --------------------------------------------------------------------------------

// "0x" and 1 to 16 hex digits (either case): how traces write addresses and handles.
std::optional<std::uint64_t> parse_hex_address(std::string_view text);
// An even number of hex digits, two per byte in memory order ("args.bytes", attribute values).
std::optional<std::vector<std::uint8_t>> parse_hex_bytes(std::string_view text);

// ---- reading errors --------------------------------------------------------------------------

// what(): "missing field \"copy.src\"" or "field \"copy.src\": \"4096\" is not a hex address".
struct RecordedFieldError : std::runtime_error {
  RecordedFieldError(std::string field, const std::string& problem);
  std::string field;
};

// ---- kernels ---------------------------------------------------------------------------------

using Dim3 = std::array<std::uint32_t, 3>;

// CUlaunchAttributeID values the trace names (the hooks check them against cuda.h).
namespace launch_attribute {
inline constexpr int kCooperative = 2;
inline constexpr int kClusterDimension = 4;
inline constexpr int kClusterSchedulingPolicy = 5;
inline constexpr int kProgrammaticStreamSerialization = 6;
inline constexpr int kProgrammaticEvent = 7;
inline constexpr int kPriority = 8;
inline constexpr int kMemSyncDomain = 10;
inline constexpr int kLaunchCompletionEvent = 12;
}  // namespace launch_attribute

struct LaunchAttributeRecord {
  int id = 0;                       // CUlaunchAttributeID
  std::string name;                 // for readers of the file; replay goes by id
  std::vector<std::uint8_t> value;  // the raw CUlaunchAttributeValue
};

// "launch": the configuration, with the attributes nimble decodes also as named fields.
struct LaunchRecord {
  Dim3 grid{1, 1, 1};
  Dim3 block{1, 1, 1};
  std::uint32_t shared_mem_bytes = 0;
  bool cooperative = false;
  std::optional<Dim3> cluster;
  std::optional<int> priority;
  std::optional<int> cluster_scheduling_policy;
  std::optional<bool> programmatic_stream_serialization;
  std::optional<int> mem_sync_domain;
  std::vector<LaunchAttributeRecord> attributes;  // every attribute, as recorded
};

struct ParamSlot {
  std::uint32_t offset = 0, size = 0;
};

// A word of the argument bytes that points into a tracked allocation.
struct PointerRecord {
  std::uint32_t offset = 0;  // in the argument bytes
  std::int64_t alloc = -1;
  std::uint64_t alloc_offset = 0;
};

// "args": the argument buffer; `known` false when the recorder could not read it.
struct ArgsRecord {
  bool known = true;
  std::vector<std::uint8_t> bytes;
  std::vector<ParamSlot> params;
  std::vector<PointerRecord> pointers;
  // The bytes the program passed when fewer than `bytes` (an `extra` buffer shorter than the
  // kernel's layout, as NCCL passes): the rest of `bytes` is zeros standing for what the driver
  // leaves undefined.
  std::optional<std::uint64_t> passed_bytes;
};

// The fields of a kernel task: name, mangled, function, handle, launch, args.
struct KernelRecord {
  std::optional<std::string> name;     // null when the driver has none
  std::optional<std::string> mangled;
  std::uint64_t function = 0;          // CUfunction, or CUkernel when is_cukernel
  bool is_cukernel = false;
  LaunchRecord launch;
  ArgsRecord args;
};

// ---- copies and memsets ----------------------------------------------------------------------

struct CopyShape {  // 2D/3D copies
  std::uint64_t width_bytes = 0, height = 0;
  std::optional<std::uint64_t> depth;  // 3D only
  std::uint64_t src_pitch = 0, dst_pitch = 0;
};

// "copy". `direction` is "HtoD", "DtoH", "DtoD", "HtoH", an array form ("AtoD", ...), "default"
// or "batch" (then `copies` lists them and src/dst are unused).
struct CopyRecord {
  std::string direction;
  std::uint64_t src = 0, dst = 0, bytes = 0;
  std::optional<CopyShape> shape;
  std::uint64_t count = 0;         // batch only: the copies the call asked for
  std::vector<CopyRecord> copies;  // batch only: those nimble could read
};

// "memset": `width` elements per row, `height` rows `pitch` bytes apart (2D only: pitch > 0).
struct MemsetRecord {
  std::uint64_t dst = 0;
  std::uint64_t bytes = 0;
  std::uint64_t element_size = 1;  // 1, 2 or 4
  std::uint64_t value = 0;
  std::uint64_t pitch = 0, width = 0, height = 1;
};

// ---- memory accesses and dependency reasons --------------------------------------------------

enum class AccessMode { Read, Write, ReadWrite };
const char* mode_name(AccessMode mode);  // "r", "w", "rw"

// One entry of "mem": bytes of a tracked allocation, an untracked range, or everything.
struct MemoryAccess {
  enum class Target { Allocation, Address, Everything };
  Target target = Target::Allocation;
  std::int64_t alloc = -1;   // Target::Allocation
  std::uint64_t offset = 0;  // into the allocation, or the address for Target::Address
  std::uint64_t size = 0;
  AccessMode mode = AccessMode::ReadWrite;
  bool writes() const { return mode != AccessMode::Read; }
};

// One reason of a "dep_reasons" entry: "stream", "event", "memory RAW alloc 3 +0x0..+0x40", ...
// `label` is its first word ("memory" for the memory reasons), `text` the whole reason.
struct DepReason {
  std::string label;
  std::string text;
  bool memory() const { return label == "memory"; }
};

// ---- writing ---------------------------------------------------------------------------------

json to_json(const LaunchRecord& launch);
json to_json(const ArgsRecord& args);
json to_json(const CopyRecord& copy);
json to_json(const MemsetRecord& memset);
json to_json(const MemoryAccess& access);
json to_json(const std::vector<MemoryAccess>& mem);
// Adds name, mangled, function, handle, launch and args to a task's fields, in that order.
void add_fields(json& task_fields, const KernelRecord& kernel);
// "stream; memory RAW alloc 3 ..."
std::string join_reasons(const std::vector<DepReason>& reasons);

// ---- reading ---------------------------------------------------------------------------------

// A task's "launch", "args", ... (RecordedFieldError when missing or malformed), or its typed
// fields (Task::kernel).
KernelRecord read_kernel(const Task& task);
// A kernel task's "name", nullopt when it has none.
std::optional<std::string> kernel_name(const Task& task);
CopyRecord read_copy(const Task& task);
MemsetRecord read_memset(const Task& task);
// "mem" (empty when absent).
std::vector<MemoryAccess> read_mem(const Task& task);
// "dep_reasons" for one dependency; nullopt when it gives none (or not as a string).
std::optional<std::vector<DepReason>> read_reasons(const Task& task, TaskId dependency);
std::vector<DepReason> split_reasons(std::string_view text);
// "library_key" (nullopt when absent or null).
std::optional<std::uint64_t> read_library_key(const Task& task);
// "thread": the program's thread that issued the task (nullopt when absent).
std::optional<std::uint64_t> read_thread(const Task& task);
// "graph_exec": the CUgraphExec a graph or graph_launch task launched.
std::uint64_t read_graph_exec(const Task& task);
// Whether the task is a node of a recorded launch of the program's graph (it has "graph_launch").
bool is_graph_node(const Task& task);

LaunchRecord launch_from_json(const json& launch);
ArgsRecord args_from_json(const json& args);
CopyRecord copy_from_json(const json& copy);

}  // namespace nimble::trace
