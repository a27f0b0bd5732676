// What replay launches, read from a (scheduled) trace: one operation per task with everything a
// driver call needs, the stream and waits of the schedule, the reduced dependency edges, and the
// device memory the iteration writes (saved and restored around an in-process replay).
// CUDA-free, so CI tests it; replay.hpp turns a plan into driver calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::replayer {

// Nop: a task that only orders others (a host sync, ...). Graph: a launch of the program's own
// CUDA graph that the program runs itself (plans for `nimble run`, ProgramGraphs::RunByProgram).
enum class OpKind { Kernel, Copy, Memset, Nop, Graph };

// An address inside a shadow allocation: nimble's own stand-in, at replay time, for an
// allocation the program freed during the recorded iteration (its memory is no longer the
// program's to touch). Address = shadow's base + offset.
struct ShadowAddress {
  std::size_t shadow = 0;
  std::uint64_t offset = 0;
};

// A pointer in a kernel's argument bytes that must be rewritten to a shadow address.
struct PointerFix {
  std::uint32_t arg_offset = 0;
  ShadowAddress target;
};

struct LaunchAttribute {
  int id = 0;                        // CUlaunchAttributeID
  std::vector<std::uint8_t> value;   // raw CUlaunchAttributeValue bytes, as recorded
};

struct KernelOp {
  std::uint64_t function = 0;        // CUfunction, or CUkernel when is_cukernel
  bool is_cukernel = false;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_mem = 0;
  bool cooperative = false;
  std::vector<std::uint8_t> args;    // the argument buffer
  std::vector<std::uint32_t> param_offsets;  // where each parameter starts in args
  std::vector<std::uint32_t> param_sizes;    // and its size (the bytes between are padding)
  std::vector<LaunchAttribute> attributes;
  std::vector<PointerFix> pointer_fixes;
  std::vector<std::uint32_t> pointer_offsets;  // every argument word the recorder resolved to device memory
};

enum class CopyDirection { HtoD, DtoH, DtoD };

struct CopyOp {
  CopyDirection direction = CopyDirection::DtoD;
  std::uint64_t src = 0, dst = 0, bytes = 0;  // host ends are replaced by nimble's own buffers
  std::optional<ShadowAddress> src_shadow, dst_shadow;
};

struct MemsetOp {
  std::uint64_t dst = 0;
  std::uint32_t value = 0;
  unsigned element_size = 1;          // 1, 2 or 4
  std::uint64_t width = 0;            // elements per row (1D: all of them)
  std::uint64_t height = 1, pitch = 0;
  std::optional<ShadowAddress> dst_shadow;
};

struct Op {
  trace::TaskId task = 0;
  std::string name;                   // for messages: kernel name or kind
  OpKind kind = OpKind::Nop;
  KernelOp kernel;
  CopyOp copy;
  MemsetOp memset;
  int stream = 0;                     // schedule stream (0 when the trace is unscheduled)
  // The stream the program issued it on, as the recorder names handles (deps::StreamHandle:
  // 0x1 legacy, 0x2 per-thread default, else the CUstream); 0 when the trace does not say.
  std::uint64_t program_stream = 0;
  std::vector<std::size_t> waits;     // ops on other streams to wait for (schedule waits)
  std::vector<std::size_t> deps;      // reduced dependency edges, as op indices
  // The library call (cuDNN, cuBLAS) that issued it, when the recorder saw one: its number in the
  // trace (the tasks of one call share it; -1: none), its entry point, and the key of its inputs
  // (library_keys.hpp) where the recorder computes one.
  std::int64_t library_call = -1;
  std::string library_symbol;
  std::optional<std::uint64_t> library_key;
  std::uint64_t graph_exec = 0;       // OpKind::Graph: the program's CUgraphExec
  // It reads or writes page-locked host memory (cuDNN's legacy batch-norm kernels take a pointer
  // to 4 bytes of it): what the host writes there, nimble cannot see.
  bool touches_host_memory = false;
  // A host read at the iteration's end that the program runs between iterations (a Nop now,
  // end_reads.hpp): the window went on past the calls before it.
  bool end_read = false;
};

struct MemoryRange {
  std::uint64_t addr = 0, size = 0;
};

struct ReplayPlan {
  std::vector<Op> ops;                // one per task, in issue order
  int streams = 1;                    // streams the schedule uses (1 when unscheduled)
  bool scheduled = false;
  std::vector<MemoryRange> written;   // live device memory the iteration writes (sorted; ranges
                                      // that only touch are kept apart: one copy per allocation)
  std::vector<std::uint64_t> shadow_sizes;  // per shadow allocation (see ShadowAddress)
  std::vector<std::uint64_t> shadow_offsets;  // per shadow: where in the shadow block (shadow_layout.hpp)
  std::uint64_t shadow_bytes = 0;           // the shadow block; shadows ordered by the DAG share it
  std::size_t shadows_reused = 0;           // shadows placed where an earlier one was
  std::uint64_t host_bytes = 0;       // largest host end of a copy (nimble's scratch buffers)
  std::size_t host_functions = 0;     // the program's host functions, kept in order but not called
};

struct PlanResult {
  std::optional<ReplayPlan> plan;
  std::vector<std::string> problems;  // why a task cannot be replayed, each naming the task
};

// "task 12 (kernel name, cut to 60 characters)": how messages name an op.
std::string describe_op(const Op& op);
// A collective: a kernel NCCL launched (ncclDevKernel_*, or ncclKernel_* before NCCL 2.19). It
// waits for the other ranks' matching kernels, and its arguments point at work NCCL's host side
// wrote for that one call, so only the program's own call may launch it.
bool is_collective(const Op& op);
// Ops the program always runs itself, once everything before them is on the GPU: copies between
// the host and the device (their host end is this iteration's memory), collectives (NCCL's
// kernels, ncclDevKernel_* / ncclKernel_*), so that every rank issues its collectives itself, in
// its own order, whether it replays or falls back: no rank can wait for a collective another rank
// left inside a graph it did not launch; and launches of the program's own graphs (what they run
// is the program's, updated as it likes).
bool runs_in_program(const Op& op);
// "4x1x1": a grid or block.
std::string dims_text(const unsigned* dims);

// Builds the plan; every task that cannot be replayed safely is listed in `problems` (then no
// plan): opaque work (graphs, host functions), unknown arguments or memory, 2D/3D/array copies,
// and allocations freed inside the iteration that a task reaches other than through a pointer
// argument or a copy/memset address (those are redirected to shadow allocations).
// How the program's own graph launches are planned. Replayed (`nimble bench`): their recorded
// nodes are ops like any other, and the launch only orders. RunByProgram (`nimble run`): the
// program's call launches its graph, in order, as it would have: its nodes are Nops (their
// arguments and memory are the program's graph's business, whatever it updated since), the launch
// (recorded node by node, or opaque) is one OpKind::Graph op.
enum class ProgramGraphs { Replayed, RunByProgram };
PlanResult build_plan(const trace::Trace& trace, ProgramGraphs graphs = ProgramGraphs::Replayed);

// The plan whose kernels take the program's own addresses: no shadow pointers. For `nimble run`,
// whose graphs are only launched once every call of the segment matched, with the call's own
// bytes written into any node that holds others: a freed allocation's recorded address is only
// launched when the program passes that very address again. Copies and memsets into freed
// allocations keep their shadows: the driver checks their ends when it captures them (the graph
// executor knows those nodes hold other addresses).
ReplayPlan with_program_pointers(ReplayPlan plan);

}  // namespace nimble::replayer
