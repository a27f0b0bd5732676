// Launching a ReplayPlan through the driver: one by one on a stream, or as a CUDA graph built
// three ways (single stream in issue order; the schedule's streams and waits captured; nodes
// wired from the reduced dependency edges). Host ends of copies use nimble's own pinned buffers,
// so replay never reads or writes the program's host memory.
#pragma once

#include <memory>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nimble/replayer/driver_api.hpp"
#include "nimble/replayer/plan.hpp"

namespace nimble::replayer {

enum class Backend {
  Eager,        // every op launched one by one on one stream (no graph): launch costs included
  Graph,        // a graph captured from one stream in issue order
  StreamGraph,  // a graph captured from the schedule's streams and waits (needs a schedule)
  EdgeGraph,    // a graph whose nodes are wired from the reduced dependency edges
};
const char* backend_name(Backend backend);

struct ReplayError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws ReplayError naming the call and its error when `result` is not CUDA_SUCCESS.
void check(const DriverApi& api, CUresult result, const std::string& what);

class Replayer {
 public:
  // A kernel's dynamic shared memory limit, which the program changes as it goes (cuDNN sets it
  // before each launch): Raise it where a recorded launch needs more, for the Replayer's lifetime;
  // or, on a thread of nimble's while the program runs on, never touch it (MustFit: a kernel whose
  // limit is now below its need makes the constructor throw ReplayError; raise_limits() later, on
  // the program's thread).
  enum class Limits { Raise, MustFit };

  // Resolves kernels for the current context, creates streams, events and scratch buffers.
  Replayer(const DriverApi& api, const ReplayPlan& plan, Limits limits = Limits::Raise);
  ~Replayer();
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  // Raises each kernel's dynamic shared memory limit where a recorded launch needs more, for the
  // Replayer's lifetime (once; Limits::Raise does it when constructed).
  void raise_limits();

  // The stream replay runs on (graphs are launched there; Eager issues there).
  CUstream main_stream() const { return streams_[0]; }

  // nimble's stand-ins for allocations the program freed during the iteration: one block.
  MemoryRange shadow_memory() const { return {shadow_base_, shadow_bytes_}; }
  // Where replay puts an address of the plan: its shadow when it has one, else itself.
  CUdeviceptr replayed_address(std::uint64_t addr, const std::optional<ShadowAddress>& shadow) const {
    return resolve(addr, shadow);
  }

  // Eager: issues every op on main_stream(), now.
  void issue_eager();

  // Builds and instantiates the graph of a graph backend; the exec is owned by the Replayer.
  // `nodes` receives the node count.
  CUgraphExec instantiate(Backend backend, std::size_t* nodes = nullptr);

  // The graph of ops [begin, end) alone (dependencies on earlier ops are left to the stream the
  // graph is launched on), and the graph node of each of its kernels, memsets and device-to-device
  // copies, so their parameters can be changed in the exec (`op_nodes[i - begin]`; else null).
  struct RangeGraph {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<CUgraphNode> op_nodes;
  };
  RangeGraph instantiate_range(Backend backend, std::size_t begin, std::size_t end);
  // One more exec of a graph built above from ops [begin, end) (same nodes, its own parameters);
  // owned by the Replayer. Their kernels' dynamic shared memory limits are raised meanwhile.
  CUgraphExec instantiate_again(CUgraph graph, std::size_t begin, std::size_t end);

  // Issue op `op` on `stream` now as the program called it (a call that matched the op, issued on
  // fall-back): a kernel with the program's argument bytes (its dynamic shared memory limit raised
  // for the launch if the program's library lowered it since), a memset with its destination and
  // value, anything else as recorded.
  void issue_kernel(std::size_t op, CUstream stream, const std::vector<std::uint8_t>& args);
  void issue_memset(std::size_t op, CUstream stream, std::uint64_t dst, std::uint32_t value);
  void issue_copy(std::size_t op, CUstream stream, std::uint64_t src, std::uint64_t dst);

  // For as long as it lives, kernel op `op`'s dynamic shared memory limit is at least what the
  // recorded launch needs (launching it, or changing its graph node, checks against the limit,
  // which the program's library may have lowered since); then the program's value is put back.
  class SharedMemoryGuard {
   public:
    SharedMemoryGuard(const Replayer& replayer, std::size_t op);
    ~SharedMemoryGuard();
    SharedMemoryGuard(const SharedMemoryGuard&) = delete;
    SharedMemoryGuard& operator=(const SharedMemoryGuard&) = delete;

   private:
    const Replayer& replayer_;
    std::size_t op_;
    int original_ = 0;
    bool raised_ = false;
  };

 private:
  struct CallOverride {
    const std::vector<std::uint8_t>* args = nullptr;
    std::uint64_t memset_dst = 0;
    std::uint32_t memset_value = 0;
    bool memset = false;
    std::uint64_t copy_src = 0, copy_dst = 0;
    bool copy = false;
  };
  void issue(std::size_t op, CUstream stream, const CallOverride& call);
  void issue(std::size_t op, CUstream stream) { issue(op, stream, CallOverride()); }
  // Kernel function -> (dynamic shared bytes its recorded launches need at most, is a CUkernel).
  std::map<CUfunction, std::pair<unsigned, bool>> limits_needed() const;
  CUdeviceptr resolve(std::uint64_t addr, const std::optional<ShadowAddress>& shadow) const;
  // Capture helpers over ops [begin, end); `nodes`, when given, receives each op's last node.
  void capture_single(CUstream s, std::size_t begin, std::size_t end, std::vector<CUgraphNode>* nodes);
  void capture_streams(std::size_t begin, std::size_t end, std::vector<CUgraphNode>* nodes);
  void capture_edges(CUstream s, std::size_t begin, std::size_t end, std::vector<CUgraphNode>* nodes);
  RangeGraph build_range(Backend backend, std::size_t begin, std::size_t end, bool want_nodes);
  void note_node(CUstream s, std::size_t op, std::size_t begin, std::vector<CUgraphNode>* nodes);

  const DriverApi& api_;
  const ReplayPlan& plan_;
  std::vector<CUfunction> functions_;         // per op (kernels only)
  std::vector<std::vector<std::uint8_t>> args_;  // per op: argument bytes, shadow pointers patched in
  std::vector<std::vector<void*>> params_;    // per op: pointers into args_
  std::vector<CUdeviceptr> shadows_;          // base of each shadow allocation
  CUdeviceptr shadow_base_ = 0;
  std::uint64_t shadow_bytes_ = 0;
  std::vector<CUstream> streams_;
  std::vector<CUevent> done_;                 // per op that another stream waits for
  std::vector<CUevent> join_;                 // per stream, fork/join of a capture
  void* host_in_ = nullptr;                   // zeros: the source of every host-to-device copy
  void* host_out_ = nullptr;                  // where device-to-host copies land
  std::vector<CUgraph> graphs_;
  std::vector<CUgraphExec> execs_;
  struct RaisedLimit {
    CUfunction function;
    bool is_cukernel;
    int original;  // the program's dynamic shared memory limit, put back by the destructor
  };
  std::vector<RaisedLimit> raised_;
  CUdevice limits_device_ = 0;
  bool have_limits_device_ = false;
  bool limits_raised_ = false;
};

}  // namespace nimble::replayer
