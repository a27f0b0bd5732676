// The driver side of the in-process short-circuit (`nimble run`): instantiated CUDA graphs per
// recorded segment, launched on the program's stream when the short-circuit says the segment's
// calls have all matched. Changed arguments and memset values of this iteration are written into
// the graph's nodes first; on fall-back a deferred call is issued as the program made it.
//
// A segment keeps up to `max_variants` execs of its graph, each remembering the parameters it
// holds, and launches the one that needs the fewest node writes. Programs often alternate
// between a few sets of addresses (PyTorch's caching allocator hands a new input the block the
// previous input did not use, so buffers ping-pong between two addresses): with one exec every
// such iteration rewrote a hundred nodes; with two, none. Another exec is instantiated only when it
// needs fewer writes than the closest exec, or as few for a set of parameters seen before: a
// program whose addresses are new every iteration (HF generate's growing KV cache) would otherwise
// instantiate every graph again for each of its first iterations (708 execs for 183 graphs in four
// replayed generate() calls, each replay slower than the program's own), to no use.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "nimble/replayer/replay.hpp"
#include "nimble/replayer/short_circuit.hpp"

namespace nimble::replayer {

class GraphExecutor : public Executor {
 public:
  // Builds the graph of every segment that is not run by the program (`backend`: Graph or
  // StreamGraph). Throws ReplayError when a graph cannot be built.
  GraphExecutor(const DriverApi& api, const ReplayPlan& plan, const std::vector<Segment>& segments, Backend backend,
                std::size_t max_variants = 1, Replayer::Limits limits = Replayer::Limits::Raise);
  // After Limits::MustFit (built on nimble's thread), on the program's: Replayer::raise_limits.
  void raise_limits() { replayer().raise_limits(); }

  // The stream graphs are launched on: the stream the program issued the iteration on. A plan
  // whose ops name their program streams (a multi-stream recording; its segments each lie on
  // one stream) launches each segment, and issues each op, on that stream instead.
  void set_stream(CUstream stream) { stream_ = stream; }

  void launch_segment(std::size_t segment, const IterationMatcher& matched) override;
  void issue(std::size_t op, const GpuCall& call) override;
  std::size_t execs_made() const override { return stats_.execs; }
  std::size_t node_writes() const override { return stats_.node_updates; }
  std::size_t node_writes_for_new_parameters() const override {
    return stats_.node_updates - stats_.node_updates_recurring;
  }
  // Destroys the graphs, execs, streams and events and frees the stand-in memory, and puts back the
  // kernels' shared memory limits it raised (a program's dropped recording held them until exit).
  // Stats stay. Launching or issuing afterwards throws ReplayError.
  void release() override;
  bool released() const { return !replayer_; }

  std::size_t graphs() const;  // graphs it holds (none once released)
  struct Stats {
    std::size_t node_updates = 0;    // parameters written into an exec
    std::size_t node_updates_recurring = 0;  // of those, for a parameter set the segment had recently
    std::size_t execs = 0;           // execs instantiated, all segments and variants
    std::size_t execs_refused = 0;   // further execs the driver would not instantiate (the segment keeps its own)
    std::size_t launches = 0;        // graph launches
    std::uint64_t update_ns = 0;     // host time writing node parameters
    std::uint64_t launch_ns = 0;     // host time in cuGraphLaunch
  };
  const Stats& stats() const { return stats_; }
  // Node writes per op: which ops change from iteration to iteration.
  const std::vector<std::size_t>& updates_per_op() const { return updates_per_op_; }

 private:
  // One exec of a segment's graph. held[i - segment.begin]: the parameters op i has in this
  // exec when they are not the recorded ones (empty: the recorded ones).
  struct Variant {
    CUgraphExec exec = nullptr;
    std::vector<std::vector<std::uint8_t>> held;
  };
  struct Wanted {
    std::size_t op;
    std::vector<std::uint8_t> bytes;
  };
  // A new exec of segment `s`: holding what was captured (a copy or memset into memory the program
  // freed during the recorded iteration was captured on nimble's stand-in).
  Variant fresh_variant(std::size_t s, CUgraphExec exec) const;
  std::size_t writes_needed(const Variant& v, std::size_t begin, const std::vector<Wanted>& wanted) const;
  // Whether segment `s` was launched with this set of parameters before (among its recent ones),
  // remembering it.
  bool seen_before(std::size_t s, const std::vector<Wanted>& wanted);
  void write_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes);
  void write_kernel_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& args);
  void check_node(CUresult result, const char* call, std::size_t op) const;  // throws ReplayError naming the op
  void write_memset_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes);
  void write_copy_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes);
  CUstream stream_of(std::size_t op) const;
  Replayer& replayer();  // throws ReplayError once released

  const DriverApi& api_;
  const ReplayPlan& plan_;
  const std::vector<Segment>& segments_;
  std::size_t max_variants_;
  std::unique_ptr<Replayer> replayer_;  // null once released
  std::vector<Replayer::RangeGraph> graphs_;  // per segment (no exec for the program's own copies)
  std::vector<std::vector<Variant>> variants_;  // per segment
  std::vector<bool> variants_closed_;           // per segment: a further exec failed to instantiate; none is tried again
  std::vector<std::deque<std::uint64_t>> recent_sets_;  // per segment: hashes of the latest parameter sets
  std::vector<CUgraphNode> node_of_;          // per op
  std::vector<std::optional<CUDA_KERNEL_NODE_PARAMS>> kernel_params_;  // per op, once a node was written
  CUstream stream_ = nullptr;
  CUcontext context_ = nullptr;
  Stats stats_;
  std::vector<std::size_t> updates_per_op_;
  std::vector<void*> pointers_;  // write_kernel_node's, kept to spare an allocation per node written
};

}  // namespace nimble::replayer
