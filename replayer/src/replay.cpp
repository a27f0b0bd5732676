#include "nimble/replayer/replay.hpp"

#include "nimble/replayer/launch_diagnosis.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <utility>

namespace nimble::replayer {

const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::Eager: return "eager-replay";
    case Backend::Graph: return "graph-1-stream";
    case Backend::StreamGraph: return "graph-nimble-streams";
    case Backend::EdgeGraph: return "graph-from-edges";
  }
  return "?";
}

void check(const DriverApi& api, CUresult result, const std::string& what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (api.get_error_name) api.get_error_name(result, &name);
  throw ReplayError(what + " failed: " + (name ? name : "CUresult " + std::to_string(result)));
}

namespace {

// On nimble's thread the program's limits are left alone (it may be setting them right now): a
// kernel whose limit is below its recorded need could not be captured.
void check_limits_fit(const DriverApi& api, const std::map<CUfunction, std::pair<unsigned, bool>>& needed,
                      bool have_device, CUdevice device) {
  for (const auto& [f, need] : needed) {
    const auto [bytes, is_cukernel] = need;
    int current = 0;
    if (is_cukernel && !have_device) continue;
    if (get_kernel_attribute(api, f, is_cukernel, device, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &current) ==
            CUDA_SUCCESS &&
        current < static_cast<int>(bytes)) {
      throw ReplayError("a kernel's dynamic shared memory limit (" + std::to_string(current) + " bytes) is below the " +
                        std::to_string(bytes) + " its recorded launch used, and only the program's thread may raise it");
    }
  }
}

}  // namespace

Replayer::Replayer(const DriverApi& api, const ReplayPlan& plan, Limits limits) : api_(api), plan_(plan) {
  have_limits_device_ = api_.ctx_get_device && api_.ctx_get_device(&limits_device_) == CUDA_SUCCESS;
  // Before anything is made, which a throw would leak.
  if (limits == Limits::MustFit) check_limits_fit(api_, limits_needed(), have_limits_device_, limits_device_);
  shadows_.assign(plan.shadow_offsets.begin(), plan.shadow_offsets.end());  // offsets; bases once allocated
  shadow_bytes_ = plan.shadow_bytes;
  if (shadow_bytes_ > 0) {
    check(api, api.mem_alloc(&shadow_base_, shadow_bytes_), "cuMemAlloc of " + std::to_string(shadow_bytes_) +
          " bytes for allocations the program freed during the iteration");
    for (auto& s : shadows_) s += shadow_base_;
  }
  functions_.resize(plan.ops.size(), nullptr);
  args_.resize(plan.ops.size());
  params_.resize(plan.ops.size());
  std::vector<bool> waited(plan.ops.size(), false);
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    for (std::size_t w : op.waits) waited[w] = true;
    if (op.kind != OpKind::Kernel) continue;
    const KernelOp& k = op.kernel;
    // The handle exactly as the program launched it: launches accept a CUkernel where a
    // CUfunction is expected and resolve it for the current context, as they did for the program.
    functions_[i] = reinterpret_cast<CUfunction>(k.function);
    args_[i] = k.args;
    for (const PointerFix& fix : k.pointer_fixes) {
      const std::uint64_t value = shadows_.at(fix.target.shadow) + fix.target.offset;
      std::memcpy(args_[i].data() + fix.arg_offset, &value, sizeof value);
    }
    for (std::uint32_t offset : k.param_offsets) params_[i].push_back(args_[i].data() + offset);
  }
  if (limits == Limits::Raise) raise_limits();
  streams_.resize(static_cast<std::size_t>(std::max(1, plan.streams)), nullptr);
  for (auto& s : streams_) check(api, api.stream_create(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  done_.resize(plan.ops.size(), nullptr);
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    if (waited[i]) check(api, api.event_create(&done_[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  }
  join_.resize(streams_.size(), nullptr);
  for (auto& e : join_) check(api, api.event_create(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  const std::size_t host = std::max<std::uint64_t>(plan.host_bytes, 1);
  check(api, api.mem_alloc_host(&host_in_, host), "cuMemAllocHost (replay input buffer)");
  std::memset(host_in_, 0, host);
  check(api, api.mem_alloc_host(&host_out_, host), "cuMemAllocHost (replay output buffer)");
}

std::map<CUfunction, std::pair<unsigned, bool>> Replayer::limits_needed() const {
  std::map<CUfunction, std::pair<unsigned, bool>> needed;
  for (const Op& op : plan_.ops) {
    if (op.kind != OpKind::Kernel || op.kernel.shared_mem == 0) continue;
    auto& [bytes, is_cukernel] = needed[reinterpret_cast<CUfunction>(op.kernel.function)];
    bytes = std::max(bytes, op.kernel.shared_mem);
    is_cukernel = op.kernel.is_cukernel;
  }
  return needed;
}

// A kernel's dynamic shared memory limit is a property of the kernel that the program changes
// as it goes (cuDNN sets it before each launch to what that launch needs), so at replay time it
// may be below what a recorded launch used. Raise it where needed, for as long as the Replayer
// lives, and put the program's values back afterwards.
void Replayer::raise_limits() {
  if (limits_raised_) return;
  limits_raised_ = true;
  const auto attribute = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
  for (const auto& [f, need] : limits_needed()) {
    const auto [bytes, is_cukernel] = need;
    if (is_cukernel && !have_limits_device_) continue;  // unknown: launch and see
    int current = 0;
    if (get_kernel_attribute(api_, f, is_cukernel, limits_device_, attribute, &current) != CUDA_SUCCESS ||
        current >= static_cast<int>(bytes)) {
      continue;
    }
    if (set_kernel_attribute(api_, f, is_cukernel, limits_device_, attribute, static_cast<int>(bytes)) == CUDA_SUCCESS) {
      raised_.push_back({f, is_cukernel, current});
    }
  }
}

Replayer::~Replayer() {
  // Best effort: never throw from here.
  for (const RaisedLimit& r : raised_) {
    set_kernel_attribute(api_, r.function, r.is_cukernel, limits_device_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                         r.original);
  }
  for (auto e : execs_) api_.graph_exec_destroy(e);
  for (auto g : graphs_) api_.graph_destroy(g);
  for (auto e : done_) if (e) api_.event_destroy(e);
  for (auto e : join_) if (e) api_.event_destroy(e);
  for (auto s : streams_) if (s) api_.stream_destroy(s);
  if (host_in_) api_.mem_free_host(host_in_);
  if (host_out_) api_.mem_free_host(host_out_);
  if (shadow_base_) api_.mem_free(shadow_base_);
}

CUdeviceptr Replayer::resolve(std::uint64_t addr, const std::optional<ShadowAddress>& shadow) const {
  return shadow ? shadows_.at(shadow->shadow) + shadow->offset : addr;
}

Replayer::SharedMemoryGuard::SharedMemoryGuard(const Replayer& replayer, std::size_t op) : replayer_(replayer), op_(op) {
  const KernelOp& k = replayer.plan_.ops[op].kernel;
  if (k.shared_mem == 0) return;
  const auto attribute = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
  const CUfunction f = replayer.functions_[op];
  raised_ = get_kernel_attribute(replayer.api_, f, k.is_cukernel, replayer.limits_device_, attribute, &original_) ==
                CUDA_SUCCESS &&
            original_ < static_cast<int>(k.shared_mem) &&
            set_kernel_attribute(replayer.api_, f, k.is_cukernel, replayer.limits_device_, attribute,
                                 static_cast<int>(k.shared_mem)) == CUDA_SUCCESS;
}

Replayer::SharedMemoryGuard::~SharedMemoryGuard() {
  if (!raised_) return;
  const KernelOp& k = replayer_.plan_.ops[op_].kernel;
  set_kernel_attribute(replayer_.api_, replayer_.functions_[op_], k.is_cukernel, replayer_.limits_device_,
                       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, original_);
}

void Replayer::issue_kernel(std::size_t op, CUstream stream, const std::vector<std::uint8_t>& args) {
  SharedMemoryGuard limit(*this, op);
  CallOverride call;
  call.args = &args;
  issue(op, stream, call);
}

void Replayer::issue_memset(std::size_t op, CUstream stream, std::uint64_t dst, std::uint32_t value) {
  CallOverride call;
  call.memset = true;
  call.memset_dst = dst;
  call.memset_value = value;
  issue(op, stream, call);
}

void Replayer::issue_copy(std::size_t op, CUstream stream, std::uint64_t src, std::uint64_t dst) {
  CallOverride call;
  call.copy = true;
  call.copy_src = src;
  call.copy_dst = dst;
  issue(op, stream, call);
}

void Replayer::issue(std::size_t i, CUstream s, const CallOverride& call) {
  const std::vector<std::uint8_t>* call_args = call.args;
  const Op& op = plan_.ops[i];
  switch (op.kind) {
    case OpKind::Nop:
      return;
    case OpKind::Graph:  // a plan for nimble run: the program's own call launches it
      throw ReplayError(describe_op(op) + ": a launch of the program's own graph is the program's to issue");
    case OpKind::Kernel: {
      const KernelOp& k = op.kernel;
      std::vector<CUlaunchAttribute> attrs;
      for (const LaunchAttribute& a : k.attributes) {
        CUlaunchAttribute attr{};
        attr.id = static_cast<CUlaunchAttributeID>(a.id);
        std::memcpy(&attr.value, a.value.data(), std::min(a.value.size(), sizeof attr.value));
        attrs.push_back(attr);
      }
      if (k.cooperative && std::none_of(attrs.begin(), attrs.end(), [](auto& a) {
            return a.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE; })) {
        CUlaunchAttribute attr{};
        attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr.value.cooperative = 1;
        attrs.push_back(attr);
      }
      CUlaunchConfig config{};
      config.gridDimX = k.grid[0];
      config.gridDimY = k.grid[1];
      config.gridDimZ = k.grid[2];
      config.blockDimX = k.block[0];
      config.blockDimY = k.block[1];
      config.blockDimZ = k.block[2];
      config.sharedMemBytes = k.shared_mem;
      config.hStream = s;
      config.attrs = attrs.empty() ? nullptr : attrs.data();
      config.numAttrs = static_cast<unsigned>(attrs.size());
      // The program's bytes for this call (same layout), else the recorded ones.
      std::vector<std::uint8_t> own_args;
      std::vector<void*> own_params;
      std::vector<void*>* param_ptrs = &params_[i];
      void* buffer = args_[i].data();
      if (call_args) {
        own_args = *call_args;
        for (std::uint32_t offset : k.param_offsets) own_params.push_back(own_args.data() + offset);
        param_ptrs = &own_params;
        buffer = own_args.data();
      }
      // Without a parameter layout the bytes go as one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER).
      std::size_t size = args_[i].size();
      void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                       CU_LAUNCH_PARAM_END};
      const bool use_extra = param_ptrs->empty() && size > 0;
      void** params = use_extra ? nullptr : param_ptrs->data();
      void** extra_arg = use_extra ? extra : nullptr;
      // Without attributes, the plain launch the program itself used most of the time.
      const CUresult r = attrs.empty()
          ? api_.launch_kernel(functions_[i], k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1],
                               k.block[2], k.shared_mem, s, params, extra_arg)
          : api_.launch_kernel_ex(&config, functions_[i], params, extra_arg);
      if (r == CUDA_SUCCESS) return;
      check(api_, r, "kernel launch for " + describe_op(op) + " (" + (k.is_cukernel ? "CUkernel" : "CUfunction") +
                         ", " + std::to_string(attrs.size()) + " attributes; " + describe_launch(k) + "; " +
                         describe_kernel_limits(api_, functions_[i], k.is_cukernel) + ")");
      return;
    }
    case OpKind::Copy: {
      CopyOp c = op.copy;
      if (c.bytes == 0) return;
      if (call.copy) {
        c.src = call.copy_src;
        c.dst = call.copy_dst;
        c.src_shadow.reset();
        c.dst_shadow.reset();
      }
      CUresult r = CUDA_SUCCESS;
      switch (c.direction) {
        case CopyDirection::HtoD:
          r = api_.memcpy_htod_async(resolve(c.dst, c.dst_shadow), host_in_, c.bytes, s);
          break;
        case CopyDirection::DtoH:
          r = api_.memcpy_dtoh_async(host_out_, resolve(c.src, c.src_shadow), c.bytes, s);
          break;
        case CopyDirection::DtoD:
          r = api_.memcpy_dtod_async(resolve(c.dst, c.dst_shadow), resolve(c.src, c.src_shadow), c.bytes, s);
          break;
      }
      check(api_, r, "copy for " + describe_op(op));
      return;
    }
    case OpKind::Memset: {
      MemsetOp m = op.memset;
      if (call.memset) {
        m.value = call.memset_value;
        m.dst = call.memset_dst;
        m.dst_shadow.reset();
      }
      if (m.width == 0 || m.height == 0) return;
      const CUdeviceptr dst = resolve(m.dst, m.dst_shadow);
      CUresult r = CUDA_SUCCESS;
      if (m.pitch == 0) {
        switch (m.element_size) {
          case 1: r = api_.memset_d8_async(dst, static_cast<unsigned char>(m.value), m.width, s); break;
          case 2: r = api_.memset_d16_async(dst, static_cast<unsigned short>(m.value), m.width, s); break;
          default: r = api_.memset_d32_async(dst, m.value, m.width, s); break;
        }
      } else {
        switch (m.element_size) {
          case 1: r = api_.memset_d2d8_async(dst, m.pitch, static_cast<unsigned char>(m.value), m.width, m.height, s); break;
          case 2: r = api_.memset_d2d16_async(dst, m.pitch, static_cast<unsigned short>(m.value), m.width, m.height, s); break;
          default: r = api_.memset_d2d32_async(dst, m.pitch, m.value, m.width, m.height, s); break;
        }
      }
      check(api_, r, "memset for " + describe_op(op));
      return;
    }
  }
}

void Replayer::issue_eager() {
  for (std::size_t i = 0; i < plan_.ops.size(); ++i) issue(i, streams_[0]);
}

// After op `op` was captured on `s`, the capture's dependency set is the node it added.
void Replayer::note_node(CUstream s, std::size_t op, std::size_t begin, std::vector<CUgraphNode>* nodes) {
  if (!nodes) return;
  const Op& o = plan_.ops[op];
  const bool device_copy = o.kind == OpKind::Copy && o.copy.direction == CopyDirection::DtoD && o.copy.bytes > 0;
  if (o.kind != OpKind::Kernel && o.kind != OpKind::Memset && !device_copy) return;
  if (o.kind == OpKind::Memset && (o.memset.width == 0 || o.memset.height == 0)) return;  // added nothing
  CUstreamCaptureStatus status{};
  const CUgraphNode* added = nullptr;
  std::size_t count = 0;
  check(api_, api_.capture_info(s, &status, nullptr, nullptr, &added, nullptr, &count),
        "cuStreamGetCaptureInfo for " + describe_op(plan_.ops[op]));
  if (count == 1) (*nodes)[op - begin] = added[0];
}

void Replayer::capture_single(CUstream s, std::size_t begin, std::size_t end, std::vector<CUgraphNode>* nodes) {
  for (std::size_t i = begin; i < end; ++i) {
    issue(i, s);
    note_node(s, i, begin, nodes);
  }
}

// The schedule: every op on its stream after its waits; the other streams fork from and join
// back into the first, as stream capture requires. Waits for ops before `begin` are met by
// the order of launches on the stream the graph runs on.
void Replayer::capture_streams(std::size_t begin, std::size_t end, std::vector<CUgraphNode>* nodes) {
  CUstream origin = streams_[0];
  check(api_, api_.event_record(join_[0], origin), "cuEventRecord (fork)");
  for (std::size_t s = 1; s < streams_.size(); ++s) {
    check(api_, api_.stream_wait_event(streams_[s], join_[0], 0), "cuStreamWaitEvent (fork)");
  }
  for (std::size_t i = begin; i < end; ++i) {
    const Op& op = plan_.ops[i];
    CUstream s = streams_.at(static_cast<std::size_t>(op.stream));
    for (std::size_t w : op.waits) {
      if (w < begin) continue;
      check(api_, api_.stream_wait_event(s, done_[w], 0), "cuStreamWaitEvent for " + describe_op(op));
    }
    issue(i, s);
    note_node(s, i, begin, nodes);
    if (done_[i]) check(api_, api_.event_record(done_[i], s), "cuEventRecord for " + describe_op(op));
  }
  for (std::size_t s = 1; s < streams_.size(); ++s) {
    check(api_, api_.event_record(join_[s], streams_[s]), "cuEventRecord (join)");
    check(api_, api_.stream_wait_event(origin, join_[s], 0), "cuStreamWaitEvent (join)");
  }
}

// One stream whose capture dependencies are set, before each op, to the nodes of the op's
// reduced dependencies: the graph has exactly those edges. An op with no GPU work stands for
// the nodes of its own dependencies.
void Replayer::capture_edges(CUstream s, std::size_t begin, std::size_t end, std::vector<CUgraphNode>* nodes) {
  std::vector<std::vector<CUgraphNode>> nodes_of(end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    const Op& op = plan_.ops[i];
    std::vector<CUgraphNode> deps;
    for (std::size_t d : op.deps) {
      if (d >= begin) deps.insert(deps.end(), nodes_of[d - begin].begin(), nodes_of[d - begin].end());
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const bool empty = op.kind == OpKind::Nop || (op.kind == OpKind::Copy && op.copy.bytes == 0) ||
                       (op.kind == OpKind::Memset && (op.memset.width == 0 || op.memset.height == 0));
    if (empty) {
      nodes_of[i - begin] = std::move(deps);
      continue;
    }
    check(api_, api_.update_capture_deps(s, deps.data(), nullptr, deps.size(), CU_STREAM_SET_CAPTURE_DEPENDENCIES),
          "cuStreamUpdateCaptureDependencies for " + describe_op(op));
    issue(i, s);
    CUstreamCaptureStatus status{};
    const CUgraphNode* added = nullptr;
    std::size_t count = 0;
    check(api_, api_.capture_info(s, &status, nullptr, nullptr, &added, nullptr, &count),
          "cuStreamGetCaptureInfo for " + describe_op(op));
    nodes_of[i - begin].assign(added, added + count);
    if (nodes && count == 1 && op.kind != OpKind::Nop) (*nodes)[i - begin] = added[0];
  }
}

CUgraphExec Replayer::instantiate(Backend backend, std::size_t* nodes) {
  const RangeGraph g = build_range(backend, 0, plan_.ops.size(), /*want_nodes=*/false);
  if (nodes) {
    std::size_t n = 0;
    check(api_, api_.graph_get_nodes(graphs_.back(), nullptr, &n), "cuGraphGetNodes");
    *nodes = n;
  }
  return g.exec;
}

Replayer::RangeGraph Replayer::instantiate_range(Backend backend, std::size_t begin, std::size_t end) {
  return build_range(backend, begin, end, /*want_nodes=*/true);
}

Replayer::RangeGraph Replayer::build_range(Backend backend, std::size_t begin, std::size_t end, bool want_nodes) {
  if (backend == Backend::Eager) throw ReplayError("eager replay has no graph");
  if (backend == Backend::StreamGraph && !plan_.scheduled) {
    throw ReplayError("the trace has no schedule: run `nimble schedule` first");
  }
  RangeGraph result;
  result.op_nodes.assign(end - begin, nullptr);
  std::vector<CUgraphNode>* nodes = want_nodes ? &result.op_nodes : nullptr;
  CUstream s = streams_[0];
  check(api_, api_.begin_capture(s, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  CUgraph graph = nullptr;
  try {
    switch (backend) {
      case Backend::Graph: capture_single(s, begin, end, nodes); break;
      case Backend::StreamGraph: capture_streams(begin, end, nodes); break;
      case Backend::EdgeGraph: capture_edges(s, begin, end, nodes); break;
      case Backend::Eager: break;
    }
  } catch (...) {
    api_.end_capture(s, &graph);  // leave the stream usable
    if (graph) api_.graph_destroy(graph);
    throw;
  }
  check(api_, api_.end_capture(s, &graph), std::string("cuStreamEndCapture (") + backend_name(backend) + ")");
  graphs_.push_back(graph);
  result.graph = graph;
  check(api_, api_.graph_instantiate(&result.exec, graph, 0),
        std::string("cuGraphInstantiate (") + backend_name(backend) + ")");
  execs_.push_back(result.exec);
  return result;
}

CUgraphExec Replayer::instantiate_again(CUgraph graph, std::size_t begin, std::size_t end) {
  // Instantiating checks each kernel node against its kernel's current limits, which the program's
  // library may have lowered since the graph was built (cuDNN sets them before each launch).
  std::deque<SharedMemoryGuard> limits;
  for (std::size_t op = begin; op < end && op < plan_.ops.size(); ++op) {
    if (plan_.ops[op].kind == OpKind::Kernel) limits.emplace_back(*this, op);
  }
  CUgraphExec exec = nullptr;
  check(api_, api_.graph_instantiate(&exec, graph, 0), "cuGraphInstantiate (another exec of a segment)");
  execs_.push_back(exec);
  return exec;
}

}  // namespace nimble::replayer
