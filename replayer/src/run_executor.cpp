#include "nimble/replayer/run_executor.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace nimble::replayer {
namespace {

std::vector<std::uint8_t> patched(std::vector<std::uint8_t> bytes, const std::vector<ArgPatch>& patches) {
  for (const ArgPatch& p : patches) {
    if (p.offset + p.bytes.size() <= bytes.size()) std::memcpy(bytes.data() + p.offset, p.bytes.data(), p.bytes.size());
  }
  return bytes;
}

// A memset node's changeable parameters as bytes: value at 0, destination at kMemsetDestination.
std::vector<std::uint8_t> memset_bytes(const MemsetOp& m) {
  std::vector<std::uint8_t> bytes(kMemsetDestination + 8);
  std::memcpy(bytes.data(), &m.value, 4);
  std::memcpy(bytes.data() + kMemsetDestination, &m.dst, 8);
  return bytes;
}

}  // namespace

GraphExecutor::GraphExecutor(const DriverApi& api, const ReplayPlan& plan, const std::vector<Segment>& segments,
                             Backend backend)
    : api_(api), plan_(plan), segments_(segments), replayer_(api, plan), graphs_(segments.size()),
      node_of_(plan.ops.size(), nullptr), in_exec_(plan.ops.size()) {
  if (backend != Backend::Graph && backend != Backend::StreamGraph) {
    throw ReplayError("nimble run launches graphs: use the single-stream or the scheduled-streams graph");
  }
  check(api_, api_.ctx_get_current(&context_), "cuCtxGetCurrent");
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const Segment& seg = segments[s];
    if (seg.program_runs) continue;
    // A stretch of host syncs alone has nothing to launch.
    const bool has_work = std::any_of(plan.ops.begin() + static_cast<std::ptrdiff_t>(seg.begin),
                                      plan.ops.begin() + static_cast<std::ptrdiff_t>(seg.end),
                                      [](const Op& op) { return op.kind != OpKind::Nop; });
    if (!has_work) continue;
    graphs_[s] = replayer_.instantiate_range(backend, seg.begin, seg.end);
    for (std::size_t i = seg.begin; i < seg.end; ++i) node_of_[i] = graphs_[s].op_nodes[i - seg.begin];
  }
}

std::size_t GraphExecutor::graphs() const {
  std::size_t n = 0;
  for (const auto& g : graphs_) n += g.exec != nullptr;
  return n;
}

void GraphExecutor::update_kernel(std::size_t op, CUgraphExec exec, const std::vector<ArgPatch>& patches) {
  const KernelOp& k = plan_.ops[op].kernel;
  std::vector<std::uint8_t> wanted = patched(k.args, patches);
  const std::vector<std::uint8_t>& holds = in_exec_[op].empty() ? k.args : in_exec_[op];
  if (wanted == holds) return;
  if (!node_of_[op]) throw ReplayError("no graph node for " + describe_op(plan_.ops[op]) + " to change its arguments in");
  CUDA_KERNEL_NODE_PARAMS params{};
  check(api_, api_.graph_kernel_node_get_params(node_of_[op], &params), "cuGraphKernelNodeGetParams for " + describe_op(plan_.ops[op]));
  std::vector<void*> pointers;
  for (std::uint32_t offset : k.param_offsets) pointers.push_back(wanted.data() + offset);
  std::size_t size = wanted.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, wanted.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  params.kernelParams = pointers.empty() ? nullptr : pointers.data();
  params.extra = pointers.empty() ? extra : nullptr;
  // The driver copies the argument bytes here, so `wanted` may go once this returns. It also
  // checks the launch against the kernel's current limits, which cuDNN lowers between calls.
  Replayer::SharedMemoryGuard limit(replayer_, op);
  check(api_, api_.graph_exec_kernel_node_set_params(exec, node_of_[op], &params),
        "cuGraphExecKernelNodeSetParams for " + describe_op(plan_.ops[op]));
  ++node_updates_;
  if (wanted == k.args) {
    in_exec_[op].clear();
  } else {
    in_exec_[op] = std::move(wanted);
  }
}

void GraphExecutor::update_memset(std::size_t op, CUgraphExec exec, const std::vector<ArgPatch>& patches) {
  const MemsetOp& m = plan_.ops[op].memset;
  const std::vector<std::uint8_t> recorded = memset_bytes(m);
  std::vector<std::uint8_t> wanted = patched(recorded, patches);
  const std::vector<std::uint8_t>& holds = in_exec_[op].empty() ? recorded : in_exec_[op];
  if (wanted == holds) return;
  if (!node_of_[op]) throw ReplayError("no graph node for " + describe_op(plan_.ops[op]) + " to change its value in");
  CUDA_MEMSET_NODE_PARAMS params{};
  check(api_, api_.graph_memset_node_get_params(node_of_[op], &params), "cuGraphMemsetNodeGetParams for " + describe_op(plan_.ops[op]));
  std::memcpy(&params.value, wanted.data(), 4);
  std::memcpy(&params.dst, wanted.data() + kMemsetDestination, 8);
  check(api_, api_.graph_exec_memset_node_set_params(exec, node_of_[op], &params, context_),
        "cuGraphExecMemsetNodeSetParams for " + describe_op(plan_.ops[op]));
  ++node_updates_;
  if (wanted == recorded) {
    in_exec_[op].clear();
  } else {
    in_exec_[op] = std::move(wanted);
  }
}

// A device-to-device copy's ends, laid out as its patches are (kCopySource, kCopyDestination).
std::vector<std::uint8_t> copy_ends(const CopyOp& c) {
  std::vector<std::uint8_t> bytes(16);
  std::memcpy(bytes.data() + kCopySource, &c.src, 8);
  std::memcpy(bytes.data() + kCopyDestination, &c.dst, 8);
  return bytes;
}

void GraphExecutor::update_copy(std::size_t op, CUgraphExec exec, const std::vector<ArgPatch>& patches) {
  const std::vector<std::uint8_t> recorded = copy_ends(plan_.ops[op].copy);
  std::vector<std::uint8_t> wanted = patched(recorded, patches);
  const std::vector<std::uint8_t>& holds = in_exec_[op].empty() ? recorded : in_exec_[op];
  if (wanted == holds) return;
  if (!node_of_[op]) throw ReplayError("no graph node for " + describe_op(plan_.ops[op]) + " to change its addresses in");
  CUDA_MEMCPY3D params{};
  check(api_, api_.graph_memcpy_node_get_params(node_of_[op], &params), "cuGraphMemcpyNodeGetParams for " + describe_op(plan_.ops[op]));
  std::memcpy(&params.srcDevice, wanted.data() + kCopySource, 8);
  std::memcpy(&params.dstDevice, wanted.data() + kCopyDestination, 8);
  check(api_, api_.graph_exec_memcpy_node_set_params(exec, node_of_[op], &params, context_),
        "cuGraphExecMemcpyNodeSetParams for " + describe_op(plan_.ops[op]));
  ++node_updates_;
  if (wanted == recorded) {
    in_exec_[op].clear();
  } else {
    in_exec_[op] = std::move(wanted);
  }
}

void GraphExecutor::launch_segment(std::size_t segment, const IterationMatcher& matched) {
  const Segment& seg = segments_.at(segment);
  const CUgraphExec exec = graphs_.at(segment).exec;
  if (!exec) return;
  static const std::vector<ArgPatch> none;
  for (std::size_t i = seg.begin; i < seg.end; ++i) {
    const std::vector<ArgPatch>& patches = matched.patches()[i];
    if (patches.empty() && in_exec_[i].empty()) continue;  // the common case: nothing changed
    if (plan_.ops[i].kind == OpKind::Kernel) update_kernel(i, exec, patches.empty() ? none : patches);
    if (plan_.ops[i].kind == OpKind::Memset) update_memset(i, exec, patches.empty() ? none : patches);
    if (plan_.ops[i].kind == OpKind::Copy) update_copy(i, exec, patches.empty() ? none : patches);
  }
  check(api_, api_.graph_launch(exec, stream_), "cuGraphLaunch of segment " + std::to_string(segment) + " (ops " +
                                                    std::to_string(seg.begin) + ".." + std::to_string(seg.end - 1) + ")");
}

void GraphExecutor::issue(std::size_t op, const GpuCall& call) {
  if (const auto* k = std::get_if<KernelCall>(&call)) {
    replayer_.issue_kernel(op, stream_, k->args);
  } else if (const auto* m = std::get_if<MemsetCall>(&call)) {
    replayer_.issue_memset(op, stream_, m->dst, m->value);
  } else if (const auto* c = std::get_if<CopyCall>(&call)) {
    replayer_.issue_copy(op, stream_, c->src, c->dst);  // a device-to-device copy
  }
}

}  // namespace nimble::replayer
