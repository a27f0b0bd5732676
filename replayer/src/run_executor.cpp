#include "nimble/replayer/run_executor.hpp"

#include "nimble/replayer/byte_hash.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

namespace nimble::replayer {

GraphExecutor::GraphExecutor(const DriverApi& api, const ReplayPlan& plan, const std::vector<Segment>& segments,
                             Backend backend, std::size_t max_variants, Replayer::Limits limits)
    : api_(api), plan_(plan), segments_(segments), max_variants_(std::max<std::size_t>(1, max_variants)),
      replayer_(std::make_unique<Replayer>(api, plan, limits)), graphs_(segments.size()), variants_(segments.size()),
      variants_closed_(segments.size(), false), recent_sets_(segments.size()),
      node_of_(plan.ops.size(), nullptr),
      kernel_params_(plan.ops.size()), updates_per_op_(plan.ops.size(), 0) {
  if (backend != Backend::Graph && backend != Backend::StreamGraph) {
    throw ReplayError("nimble run launches graphs: use the single-stream or the scheduled-streams graph");
  }
  check(api_, api_.ctx_get_current(&context_), "cuCtxGetCurrent");
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const Segment& seg = segments[s];
    if (seg.program_runs) continue;
    if (!has_work(plan, seg)) continue;
    graphs_[s] = replayer_->instantiate_range(backend, seg.begin, seg.end);
    for (std::size_t i = seg.begin; i < seg.end; ++i) node_of_[i] = graphs_[s].op_nodes[i - seg.begin];
    variants_[s].push_back(fresh_variant(s, graphs_[s].exec));
    ++stats_.execs;
  }
}

std::size_t GraphExecutor::graphs() const {
  std::size_t n = 0;
  for (const auto& g : graphs_) n += g.exec != nullptr;
  return n;
}

void GraphExecutor::release() {
  if (!replayer_) return;
  // The execs of every variant (the first is graphs_[s].exec) and the graphs are the Replayer's.
  variants_.assign(variants_.size(), {});
  graphs_.assign(graphs_.size(), {});
  node_of_.assign(node_of_.size(), nullptr);
  kernel_params_.assign(kernel_params_.size(), std::nullopt);
  recent_sets_.assign(recent_sets_.size(), {});
  replayer_.reset();
}

Replayer& GraphExecutor::replayer() {
  if (!replayer_) throw ReplayError("the recording's graphs were released (it was dropped): nothing more is replayed");
  return *replayer_;
}

GraphExecutor::Variant GraphExecutor::fresh_variant(std::size_t s, CUgraphExec exec) const {
  const Segment& seg = segments_.at(s);
  Variant v{exec, std::vector<std::vector<std::uint8_t>>(seg.end - seg.begin)};
  for (std::size_t i = seg.begin; i < seg.end; ++i) {
    const Op& o = plan_.ops[i];
    if (o.kind != OpKind::Memset && o.kind != OpKind::Copy) continue;  // kernels take the plan's own bytes
    const std::vector<std::uint8_t> recorded = recorded_parameters(o);
    std::vector<std::uint8_t> captured = recorded;
    if (o.kind == OpKind::Memset) {
      const std::uint64_t dst = replayer_->replayed_address(o.memset.dst, o.memset.dst_shadow);
      std::memcpy(captured.data() + kMemsetDestination, &dst, 8);
    } else {
      const std::uint64_t src = replayer_->replayed_address(o.copy.src, o.copy.src_shadow);
      const std::uint64_t dst = replayer_->replayed_address(o.copy.dst, o.copy.dst_shadow);
      std::memcpy(captured.data() + kCopySource, &src, 8);
      std::memcpy(captured.data() + kCopyDestination, &dst, 8);
    }
    if (captured != recorded) v.held[i - seg.begin] = std::move(captured);
  }
  return v;
}

// How many of the segment's nodes `v` would have to change to hold `wanted` (ops not in it: the
// recorded parameters).
std::size_t GraphExecutor::writes_needed(const Variant& v, std::size_t begin, const std::vector<Wanted>& wanted) const {
  std::size_t writes = 0;
  auto next = wanted.begin();
  for (std::size_t k = 0; k < v.held.size(); ++k) {
    if (next != wanted.end() && next->op == begin + k) {
      writes += v.held[k] != next->bytes;
      ++next;
    } else {
      writes += !v.held[k].empty();
    }
  }
  return writes;
}

bool GraphExecutor::seen_before(std::size_t s, const std::vector<Wanted>& wanted) {
  std::uint64_t h = kByteHashStart;  // each op's index and length, then its bytes
  for (const Wanted& w : wanted) {
    const std::uint64_t op_and_length[2] = {w.op, w.bytes.size()};
    h = byte_hash(byte_hash(h, op_and_length, sizeof op_and_length), w.bytes.data(), w.bytes.size());
  }
  std::deque<std::uint64_t>& recent = recent_sets_.at(s);
  const bool seen = std::find(recent.begin(), recent.end(), h) != recent.end();
  if (!seen) {
    recent.push_back(h);
    if (recent.size() > 2 * max_variants_) recent.pop_front();
  }
  return seen;
}

// The message is made only when the call failed: a node is written for most replayed calls.
void GraphExecutor::check_node(CUresult result, const char* call, std::size_t op) const {
  if (result != CUDA_SUCCESS) check(api_, result, std::string(call) + " for " + describe_op(plan_.ops[op]));
}

void GraphExecutor::write_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes) {
  const Op& o = plan_.ops[op];
  if (!node_of_[op]) throw ReplayError("no graph node for " + describe_op(o) + " to change its parameters in");
  switch (o.kind) {
    case OpKind::Kernel: write_kernel_node(op, exec, bytes); break;
    case OpKind::Memset: write_memset_node(op, exec, bytes); break;
    case OpKind::Copy: write_copy_node(op, exec, bytes); break;
    case OpKind::Nop:
    case OpKind::Graph: return;  // (the program launches its own graph)
  }
  ++stats_.node_updates;
  ++updates_per_op_[op];
}

void GraphExecutor::write_kernel_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& args) {
  // The node's launch (function, shape) never changes: asked once, kept.
  if (!kernel_params_[op]) {
    CUDA_KERNEL_NODE_PARAMS asked{};
    check_node(api_.graph_kernel_node_get_params(node_of_[op], &asked), "cuGraphKernelNodeGetParams", op);
    kernel_params_[op] = asked;
  }
  CUDA_KERNEL_NODE_PARAMS params = *kernel_params_[op];
  // The driver only reads the bytes (the API's pointers are not const).
  auto* bytes = const_cast<std::uint8_t*>(args.data());
  pointers_.clear();
  for (std::uint32_t offset : plan_.ops[op].kernel.param_offsets) pointers_.push_back(bytes + offset);
  std::size_t size = args.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, bytes, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  params.kernelParams = pointers_.empty() ? nullptr : pointers_.data();
  params.extra = pointers_.empty() ? extra : nullptr;
  // The driver copies the argument bytes here. It also checks the launch against the kernel's
  // current limits, which cuDNN lowers between calls.
  Replayer::SharedMemoryGuard limit(*replayer_, op);
  check_node(api_.graph_exec_kernel_node_set_params(exec, node_of_[op], &params), "cuGraphExecKernelNodeSetParams", op);
}

void GraphExecutor::write_memset_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes) {
  CUDA_MEMSET_NODE_PARAMS params{};
  check_node(api_.graph_memset_node_get_params(node_of_[op], &params), "cuGraphMemsetNodeGetParams", op);
  std::memcpy(&params.value, bytes.data(), 4);
  std::memcpy(&params.dst, bytes.data() + kMemsetDestination, 8);
  check_node(api_.graph_exec_memset_node_set_params(exec, node_of_[op], &params, context_), "cuGraphExecMemsetNodeSetParams", op);
}

void GraphExecutor::write_copy_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes) {
  CUDA_MEMCPY3D params{};
  check_node(api_.graph_memcpy_node_get_params(node_of_[op], &params), "cuGraphMemcpyNodeGetParams", op);
  std::memcpy(&params.srcDevice, bytes.data() + kCopySource, 8);
  std::memcpy(&params.dstDevice, bytes.data() + kCopyDestination, 8);
  check_node(api_.graph_exec_memcpy_node_set_params(exec, node_of_[op], &params, context_), "cuGraphExecMemcpyNodeSetParams", op);
}

void GraphExecutor::launch_segment(std::size_t segment, const IterationMatcher& matched) {
  using Clock = std::chrono::steady_clock;
  Replayer& replayer = this->replayer();  // (throws once released)
  std::vector<Variant>& variants = variants_.at(segment);
  if (variants.empty()) return;
  const Segment& seg = segments_.at(segment);
  // This iteration's parameters, for the ops whose parameters are not the recorded ones.
  std::vector<Wanted> wanted;
  for (std::size_t i = seg.begin; i < seg.end; ++i) {
    const std::vector<ArgPatch>& patches = matched.patches()[i];
    if (patches.empty()) continue;
    std::vector<std::uint8_t> bytes = recorded_parameters(plan_.ops[i]);
    if (apply_patches(bytes, patches)) wanted.push_back({i, std::move(bytes)});
  }
  // The exec that needs the fewest writes. While there is room, a fresh one (holding the recording)
  // when it needs fewer writes than that, or as few for parameters that came before (they may come
  // again): the others keep their parameters for later iterations.
  std::size_t best = 0, best_writes = writes_needed(variants[0], seg.begin, wanted);
  for (std::size_t v = 1; v < variants.size() && best_writes > 0; ++v) {
    const std::size_t writes = writes_needed(variants[v], seg.begin, wanted);
    if (writes < best_writes) best = v, best_writes = writes;
  }
  // Whether these parameters came recently (a rotation among a few sets): asked whenever they need
  // writes, so the writes can be told apart from those for new addresses.
  const bool recurring = best_writes > 0 && seen_before(segment, wanted);
  if (best_writes > 0 && variants.size() < max_variants_ && !variants_closed_[segment]) {
    Variant fresh = fresh_variant(segment, nullptr);
    const std::size_t fresh_writes = writes_needed(fresh, seg.begin, wanted);
    if (fresh_writes < best_writes || (fresh_writes == best_writes && recurring)) {
      try {
        fresh.exec = replayer.instantiate_again(graphs_[segment].graph, seg.begin, seg.end);
        variants.push_back(std::move(fresh));
        ++stats_.execs;
        best = variants.size() - 1;
      } catch (const ReplayError&) {
        // A further exec is a saving, not a need: the segment goes on with the execs it has,
        // rewriting their nodes (cuDNN in benchmark mode, H200: INVALID_VALUE here).
        variants_closed_[segment] = true;
        ++stats_.execs_refused;
      }
    }
  }
  Variant& v = variants[best];
  const auto updates_start = Clock::now();
  const std::size_t updates_before = stats_.node_updates;
  auto next = wanted.begin();
  for (std::size_t k = 0; k < v.held.size(); ++k) {
    const std::size_t op = seg.begin + k;
    const bool changed = next != wanted.end() && next->op == op;
    if (changed && v.held[k] != next->bytes) {
      write_node(op, v.exec, next->bytes);
      v.held[k] = std::move(next->bytes);  // (wanted is not read again)
    } else if (!changed && !v.held[k].empty()) {
      write_node(op, v.exec, recorded_parameters(plan_.ops[op]));
      v.held[k].clear();
    }
    if (changed) ++next;
  }
  if (recurring) stats_.node_updates_recurring += stats_.node_updates - updates_before;
  const auto launch_start = Clock::now();
  std::size_t first = seg.begin;  // the segment's stream: its first op that names one
  while (first + 1 < seg.end && plan_.ops[first].program_stream == 0) ++first;
  if (const CUresult launched = api_.graph_launch(v.exec, stream_of(first)); launched != CUDA_SUCCESS) {
    check(api_, launched, "cuGraphLaunch of segment " + std::to_string(segment) + " (ops " + std::to_string(seg.begin) + ".." +
                              std::to_string(seg.end - 1) + ")");
  }
  const auto end = Clock::now();
  ++stats_.launches;
  stats_.update_ns += static_cast<std::uint64_t>(std::chrono::nanoseconds(launch_start - updates_start).count());
  stats_.launch_ns += static_cast<std::uint64_t>(std::chrono::nanoseconds(end - launch_start).count());
}

CUstream GraphExecutor::stream_of(std::size_t op) const {
  const std::uint64_t program = plan_.ops[op].program_stream;
  return program ? reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(program)) : stream_;
}

void GraphExecutor::issue(std::size_t op, const GpuCall& call) {
  if (const auto* k = std::get_if<KernelCall>(&call)) {
    replayer().issue_kernel(op, stream_of(op), k->args);
  } else if (const auto* m = std::get_if<MemsetCall>(&call)) {
    replayer().issue_memset(op, stream_of(op), m->dst, m->value);
  } else if (const auto* c = std::get_if<CopyCall>(&call)) {
    replayer().issue_copy(op, stream_of(op), c->src, c->dst);  // a device-to-device copy
  } else if (const auto* g = std::get_if<GraphLaunchCall>(&call)) {
    check(api_, api_.graph_launch(reinterpret_cast<CUgraphExec>(static_cast<std::uintptr_t>(g->exec)), stream_of(op)),
          "cuGraphLaunch of the program's graph (" + describe_op(plan_.ops[op]) + ")");
  }
}

}  // namespace nimble::replayer
