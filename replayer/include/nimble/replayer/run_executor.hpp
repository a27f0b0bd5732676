// The driver side of the in-process short-circuit (`nimble run`): one instantiated CUDA graph per
// recorded segment, launched on the program's stream when the short-circuit says the segment's
// calls have all matched. Changed scalar arguments and memset values of this iteration are
// written into the graph's nodes first (and put back when a later iteration has the recorded
// ones again); on fall-back a deferred call is issued as the program made it.
#pragma once

#include <cstdint>
#include <vector>

#include "nimble/replayer/replay.hpp"
#include "nimble/replayer/short_circuit.hpp"

namespace nimble::replayer {

class GraphExecutor : public Executor {
 public:
  // Builds the graph of every segment that is not run by the program (`backend`: Graph or
  // StreamGraph). Throws ReplayError when a graph cannot be built.
  GraphExecutor(const DriverApi& api, const ReplayPlan& plan, const std::vector<Segment>& segments, Backend backend);

  // The stream graphs are launched on: the stream the program issued the iteration on.
  void set_stream(CUstream stream) { stream_ = stream; }

  void launch_segment(std::size_t segment, const IterationMatcher& matched) override;
  void issue(std::size_t op, const GpuCall& call) override;

  std::size_t graphs() const;
  std::size_t node_updates() const { return node_updates_; }

 private:
  std::vector<std::uint8_t> recorded_bytes(std::size_t op) const;
  void update_node(std::size_t op, CUgraphExec exec, const std::vector<ArgPatch>& patches);
  void write_kernel_node(std::size_t op, CUgraphExec exec, std::vector<std::uint8_t>& args);
  void write_memset_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes);
  void write_copy_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes);

  const DriverApi& api_;
  const ReplayPlan& plan_;
  const std::vector<Segment>& segments_;
  Replayer replayer_;
  std::vector<Replayer::RangeGraph> graphs_;  // per segment (no exec for the program's own copies)
  std::vector<CUgraphNode> node_of_;          // per op
  // Per op: the argument bytes (or 4-byte memset value) the exec holds now, when they are not
  // the recorded ones; empty when they are.
  std::vector<std::vector<std::uint8_t>> in_exec_;
  CUstream stream_ = nullptr;
  CUcontext context_ = nullptr;
  std::size_t node_updates_ = 0;
};

}  // namespace nimble::replayer
