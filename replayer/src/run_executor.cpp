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

// The changeable parameters of op `op` as recorded, laid out as its patches are: a kernel's
// argument bytes; a memset's value and destination; a device-to-device copy's two ends.
std::vector<std::uint8_t> GraphExecutor::recorded_bytes(std::size_t op) const {
  const Op& o = plan_.ops[op];
  if (o.kind == OpKind::Kernel) return o.kernel.args;
  std::vector<std::uint8_t> bytes(16);
  if (o.kind == OpKind::Memset) {
    std::memcpy(bytes.data(), &o.memset.value, 4);
    std::memcpy(bytes.data() + kMemsetDestination, &o.memset.dst, 8);
  } else {
    std::memcpy(bytes.data() + kCopySource, &o.copy.src, 8);
    std::memcpy(bytes.data() + kCopyDestination, &o.copy.dst, 8);
  }
  return bytes;
}

// Writes this iteration's parameters of op `op` into the exec, unless it holds them already, and
// remembers what it holds (nothing when that is the recording).
void GraphExecutor::update_node(std::size_t op, CUgraphExec exec, const std::vector<ArgPatch>& patches) {
  const Op& o = plan_.ops[op];
  const std::vector<std::uint8_t> recorded = recorded_bytes(op);
  std::vector<std::uint8_t> wanted = patched(recorded, patches);
  if (wanted == (in_exec_[op].empty() ? recorded : in_exec_[op])) return;
  if (!node_of_[op]) throw ReplayError("no graph node for " + describe_op(o) + " to change its parameters in");
  switch (o.kind) {
    case OpKind::Kernel: write_kernel_node(op, exec, wanted); break;
    case OpKind::Memset: write_memset_node(op, exec, wanted); break;
    case OpKind::Copy: write_copy_node(op, exec, wanted); break;
    case OpKind::Nop: return;
  }
  ++node_updates_;
  if (wanted == recorded) {
    in_exec_[op].clear();
  } else {
    in_exec_[op] = std::move(wanted);
  }
}

void GraphExecutor::write_kernel_node(std::size_t op, CUgraphExec exec, std::vector<std::uint8_t>& args) {
  CUDA_KERNEL_NODE_PARAMS params{};
  check(api_, api_.graph_kernel_node_get_params(node_of_[op], &params), "cuGraphKernelNodeGetParams for " + describe_op(plan_.ops[op]));
  std::vector<void*> pointers;
  for (std::uint32_t offset : plan_.ops[op].kernel.param_offsets) pointers.push_back(args.data() + offset);
  std::size_t size = args.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, args.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  params.kernelParams = pointers.empty() ? nullptr : pointers.data();
  params.extra = pointers.empty() ? extra : nullptr;
  // The driver copies the argument bytes here. It also checks the launch against the kernel's
  // current limits, which cuDNN lowers between calls.
  Replayer::SharedMemoryGuard limit(replayer_, op);
  check(api_, api_.graph_exec_kernel_node_set_params(exec, node_of_[op], &params),
        "cuGraphExecKernelNodeSetParams for " + describe_op(plan_.ops[op]));
}

void GraphExecutor::write_memset_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes) {
  CUDA_MEMSET_NODE_PARAMS params{};
  check(api_, api_.graph_memset_node_get_params(node_of_[op], &params), "cuGraphMemsetNodeGetParams for " + describe_op(plan_.ops[op]));
  std::memcpy(&params.value, bytes.data(), 4);
  std::memcpy(&params.dst, bytes.data() + kMemsetDestination, 8);
  check(api_, api_.graph_exec_memset_node_set_params(exec, node_of_[op], &params, context_),
        "cuGraphExecMemsetNodeSetParams for " + describe_op(plan_.ops[op]));
}

void GraphExecutor::write_copy_node(std::size_t op, CUgraphExec exec, const std::vector<std::uint8_t>& bytes) {
  CUDA_MEMCPY3D params{};
  check(api_, api_.graph_memcpy_node_get_params(node_of_[op], &params), "cuGraphMemcpyNodeGetParams for " + describe_op(plan_.ops[op]));
  std::memcpy(&params.srcDevice, bytes.data() + kCopySource, 8);
  std::memcpy(&params.dstDevice, bytes.data() + kCopyDestination, 8);
  check(api_, api_.graph_exec_memcpy_node_set_params(exec, node_of_[op], &params, context_),
        "cuGraphExecMemcpyNodeSetParams for " + describe_op(plan_.ops[op]));
}

void GraphExecutor::launch_segment(std::size_t segment, const IterationMatcher& matched) {
  const Segment& seg = segments_.at(segment);
  const CUgraphExec exec = graphs_.at(segment).exec;
  if (!exec) return;
  for (std::size_t i = seg.begin; i < seg.end; ++i) {
    const std::vector<ArgPatch>& patches = matched.patches()[i];
    if (patches.empty() && in_exec_[i].empty()) continue;  // the common case: nothing changed
    update_node(i, exec, patches);
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
