// Checking a later iteration's GPU calls against the recorded iteration, one call at a time: the
// first piece of the in-process short-circuit (`nimble run`, docs/replay.md). A call matches when
// it would do the recorded work: the same kernel with the same launch shape and the same device
// pointers, a copy or memset between the same device addresses. What may change is data: scalar
// kernel arguments (RNG seeds and offsets change every iteration) and memset values become
// patches for the recorded graph; the host end of a copy is staged. Anything else is a mismatch,
// with a reason a user can read, and the caller falls back to running the program eagerly.
// CUDA-free.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nimble/replayer/plan.hpp"

namespace nimble::replayer {

struct KernelCall {
  std::uint64_t function = 0;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_mem = 0;
  std::vector<std::uint8_t> args;    // the argument buffer, laid out like the recorded one
  std::uint64_t stream = 0;          // as Op::program_stream names it (0: not checked)
};

struct CopyCall {
  CopyDirection direction = CopyDirection::DtoD;
  std::uint64_t src = 0, dst = 0, bytes = 0;
  std::uint64_t stream = 0;
};

struct MemsetCall {
  std::uint64_t dst = 0;
  std::uint32_t value = 0;
  unsigned element_size = 1;
  std::uint64_t width = 0, height = 1, pitch = 0;
  std::uint64_t stream = 0;
};

// A launch of the program's own graph: the program runs it (the recording's OpKind::Graph op).
struct GraphLaunchCall {
  std::uint64_t exec = 0;            // CUgraphExec
  std::uint64_t stream = 0;
};

// Bytes of a kernel's argument buffer that differ from the recording and are to be written into
// the graph before it is launched. For a memset: its 4-byte value at offset 0, its 8-byte
// destination at offset kMemsetDestination.
struct ArgPatch {
  std::uint32_t offset = 0;
  std::vector<std::uint8_t> bytes;
  friend bool operator==(const ArgPatch&, const ArgPatch&) = default;
};
inline constexpr std::uint32_t kMemsetDestination = 8;
inline constexpr std::uint32_t kCopySource = 0, kCopyDestination = 8;  // a device-to-device copy's ends

// The changeable parameters of recorded op `op`, laid out as its patches are: a kernel's argument
// bytes; a memset's value and destination; a copy's two ends (16 bytes).
std::vector<std::uint8_t> recorded_parameters(const Op& op);
// `bytes` with `patches` written over them (a patch past the end is left out).
std::vector<std::uint8_t> with_patches(std::vector<std::uint8_t> bytes, const std::vector<ArgPatch>& patches);
// The same in place; whether any byte changed.
bool apply_patches(std::vector<std::uint8_t>& bytes, const std::vector<ArgPatch>& patches);

struct CallCheck {
  bool matches = false;
  std::string mismatch;              // why not, naming the task
  std::vector<ArgPatch> patches;
  std::uint64_t host_end = 0;        // a copy's host address in this call (staged by the caller)
};

// Whether a 64-bit value is an address CUDA knows now (device, managed or pinned host memory): a
// changed argument word that is one changes what the kernel touches; one that is not cannot be
// dereferenced by the kernel, so it is data.
using IsDevicePointer = std::function<bool(std::uint64_t)>;

// How much of a kernel's argument bytes may change. A graph that keeps the program's order on one
// stream runs each kernel where the program would have, so any bytes may change (they are
// written into the node: pointers included). A multi-stream schedule placed kernels by the memory
// they touched when recorded, so there the device addresses must stay the same.
enum class ArgumentRule { SameAddresses, AnyBytes };

CallCheck check_kernel_call(const Op& recorded, const KernelCall& call, const IsDevicePointer& is_device_pointer,
                            ArgumentRule rule = ArgumentRule::SameAddresses);
// Under ArgumentRule::AnyBytes device addresses may change too: a host copy's device end (the
// program runs the copy itself), a memset's destination and a device-to-device copy's ends
// (patches).
CallCheck check_copy_call(const Op& recorded, const CopyCall& call, ArgumentRule rule = ArgumentRule::SameAddresses);
CallCheck check_memset_call(const Op& recorded, const MemsetCall& call, ArgumentRule rule = ArgumentRule::SameAddresses);
// The same graph executable: what it runs is the program's business (it may have updated it).
CallCheck check_graph_launch(const Op& recorded, const GraphLaunchCall& call);

// Walks the recorded ops in order as the program issues its calls. Ops that launch nothing
// (host syncs) are passed over. An op that names its program stream matches only a call on that
// stream (a recording over several streams replays each op on the program's stream), unless the
// program runs it itself (runs_in_program). After a mismatch the matcher stays where it was; the
// caller falls back, then reset()s when the recorded iteration starts again.
class IterationMatcher {
 public:
  IterationMatcher(const ReplayPlan& plan, IsDevicePointer is_device_pointer,
                   ArgumentRule rule = ArgumentRule::SameAddresses);

  // Whether the call matches the next op; a match's patches go to patches(), not the result.
  CallCheck next(const KernelCall& call);
  CallCheck next(const CopyCall& call);
  CallCheck next(const MemsetCall& call);
  CallCheck next(const GraphLaunchCall& call);

  bool complete() const;                // every recorded op matched
  std::size_t position() const { return position_; }  // the next op to match
  // The patches of the ops matched so far in this iteration (per op index; empty: none).
  const std::vector<std::vector<ArgPatch>>& patches() const { return patches_; }
  // The host address of each copy matched so far (0: not a copy to or from the host): a
  // replayed HtoD copy must read the program's data from there, a DtoH copy write there.
  const std::vector<std::uint64_t>& host_ends() const { return host_ends_; }
  void reset();
  // Takes the next op as matched with `patches`, without a call (a skipped library call's op).
  void take(const std::vector<ArgPatch>& patches);

 private:
  template <class Call, class Check>
  CallCheck advance(const Call& call, OpKind kind, const char* what, Check&& check);
  void skip_empty();

  const ReplayPlan& plan_;
  IsDevicePointer is_device_pointer_;
  ArgumentRule rule_;
  std::size_t position_ = 0;
  std::vector<std::vector<ArgPatch>> patches_;
  std::vector<std::uint64_t> host_ends_;
};

}  // namespace nimble::replayer
