// Kernel launches (all forms), host functions and the program's graph launches.
#include <algorithm>
#include <cstring>

#include "device_globals.hpp"
#include "nimble/trace/recorded.hpp"
#include "handlers.hpp"
#include "kernel_info.hpp"
#include "program_graphs.hpp"
#include "recorder.hpp"
#include "signature.hpp"
#include "task_description.hpp"

namespace nimble::hooks {
namespace {

struct Launch {
  CUfunction f;
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_mem;
  void** params;
  void** extra;
  const CUlaunchConfig* config = nullptr;  // cuLaunchKernelEx: the attributes
  bool cooperative = false;
};

std::uint64_t launch_signature(const Launch& l) {
  return kernel_signature(reinterpret_cast<std::uintptr_t>(l.f), l.grid, l.block);
}

const char* attribute_name(CUlaunchAttributeID id) {
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: return "access_policy_window";
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: return "cooperative";
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: return "synchronization_policy";
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: return "cluster_dimension";
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      return "cluster_scheduling_policy_preference";
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
      return "programmatic_stream_serialization";
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT: return "programmatic_event";
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: return "priority";
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: return "mem_sync_domain_map";
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: return "mem_sync_domain";
    case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: return "launch_completion_event";
    default: return "unknown";
  }
}

// The CUlaunchAttributeID values the trace library names without cuda.h.
static_assert(trace::launch_attribute::kCooperative == CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
static_assert(trace::launch_attribute::kClusterDimension == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
static_assert(trace::launch_attribute::kClusterSchedulingPolicy ==
              CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
static_assert(trace::launch_attribute::kProgrammaticStreamSerialization ==
              CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
static_assert(trace::launch_attribute::kProgrammaticEvent == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT);
static_assert(trace::launch_attribute::kPriority == CU_LAUNCH_ATTRIBUTE_PRIORITY);
static_assert(trace::launch_attribute::kMemSyncDomain == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN);
static_assert(trace::launch_attribute::kLaunchCompletionEvent == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT);

// Launch shape and attributes: decoded where nimble knows them, raw bytes always (for replay).
trace::LaunchRecord launch_record(const KernelShape& l) {
  trace::LaunchRecord launch;
  launch.grid = {l.grid[0], l.grid[1], l.grid[2]};
  launch.block = {l.block[0], l.block[1], l.block[2]};
  launch.shared_mem_bytes = l.shared_mem;
  launch.cooperative = l.cooperative;
  for (unsigned i = 0; l.attrs && i < l.num_attrs; ++i) {
    const CUlaunchAttribute& a = l.attrs[i];
    switch (a.id) {
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        launch.cluster = trace::Dim3{a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z};
        break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: launch.cooperative = a.value.cooperative != 0; break;
      case CU_LAUNCH_ATTRIBUTE_PRIORITY: launch.priority = a.value.priority; break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        launch.cluster_scheduling_policy = static_cast<int>(a.value.clusterSchedulingPolicyPreference);
        break;
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        launch.programmatic_stream_serialization = a.value.programmaticStreamSerializationAllowed != 0;
        break;
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: launch.mem_sync_domain = static_cast<int>(a.value.memSyncDomain); break;
      default: break;
    }
    const auto* value = reinterpret_cast<const std::uint8_t*>(&a.value);
    launch.attributes.push_back({static_cast<int>(a.id), attribute_name(a.id), {value, value + sizeof a.value}});
  }
  return launch;
}

}  // namespace

void describe_kernel(const KernelShape& l, const std::optional<std::vector<std::uint8_t>>& bytes,
                     deps::TaskEvent& event, std::size_t passed) {
  const KernelInfo& k = kernel_info(l.f);
  trace::KernelRecord kernel;
  if (!k.name.empty()) kernel.name = k.name;
  kernel.mangled = k.mangled;
  kernel.function = reinterpret_cast<std::uintptr_t>(l.f);
  kernel.is_cukernel = k.is_cukernel;
  kernel.launch = launch_record(l);
  if (!bytes) {
    // Nothing tells which memory it touches: assume all of it.
    kernel.args.known = false;
    event.accesses.push_back({0, 0, deps::Access::ReadWrite, true});
  } else {
    kernel.args.bytes = *bytes;
    if (passed < bytes->size()) kernel.args.passed_bytes = passed;
    // Without a layout (an `extra` buffer from an old driver) scan the whole buffer as one parameter.
    std::vector<deps::ParamLayout> layout = k.params;
    if (!k.params_known && !bytes->empty()) layout = {{0, static_cast<std::uint32_t>(bytes->size())}};
    for (const auto& p : layout) kernel.args.params.push_back({p.offset, p.size});
    event.accesses = engine().resolve_pointers(bytes->data(), bytes->size(), layout, &kernel.args.pointers);
    for (auto& a : tensor_map_accesses(*bytes, layout)) event.accesses.push_back(a);
    for (auto& a : global_accesses(k)) event.accesses.push_back(a);
  }
  event.kernel = std::move(kernel);
}

namespace {

void describe_launch(const Launch& l, deps::TaskEvent& event) {
  KernelShape shape{l.f, {l.grid[0], l.grid[1], l.grid[2]}, {l.block[0], l.block[1], l.block[2]}, l.shared_mem};
  shape.cooperative = l.cooperative;
  if (l.config) {
    shape.attrs = l.config->attrs;
    shape.num_attrs = l.config->numAttrs;
  }
  std::size_t passed = SIZE_MAX;  // all of them unless gather_arguments padded
  const auto bytes = gather_arguments(kernel_info(l.f), l.params, l.extra, &passed);
  describe_kernel(shape, bytes, event, passed);
}

// The launch as `nimble run` compares it with the recording; nullopt when its argument bytes
// cannot be read.
std::optional<replayer::GpuCall> kernel_call(const Launch& l) {
  auto bytes = gather_arguments(kernel_info(l.f), l.params, l.extra);
  if (!bytes) return std::nullopt;
  replayer::KernelCall c;
  c.function = reinterpret_cast<std::uintptr_t>(l.f);
  std::copy(l.grid, l.grid + 3, c.grid);
  std::copy(l.block, l.block + 3, c.block);
  c.shared_mem = l.shared_mem;
  c.args = std::move(*bytes);
  return c;
}

template <class Call>
CUresult record_launch(const HookInfo& h, CUstream stream, const Launch& l, Call&& call) {
  return record_task({h, stream, trace::TaskKind::Kernel, launch_signature(l)}, call,
                     [&](deps::TaskEvent& event) { describe_launch(l, event); },
                     [&] { return kernel_call(l); });
}

}  // namespace

CUresult on_launch_kernel(H h, PFN_cuLaunchKernel_v4000 real, CUfunction f, unsigned gx,
                          unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared_mem, CUstream stream, void** params, void** extra) {
  const Launch l{f, {gx, gy, gz}, {bx, by, bz}, shared_mem, params, extra};
  return record_launch(h, stream, l, [&] {
    return real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);
  });
}

CUresult on_launch_kernel_ex(H h, PFN_cuLaunchKernelEx_v11060 real, const CUlaunchConfig* config,
                             CUfunction f, void** params, void** extra) {
  if (!config) return real(config, f, params, extra);
  const Launch l{f,
                 {config->gridDimX, config->gridDimY, config->gridDimZ},
                 {config->blockDimX, config->blockDimY, config->blockDimZ},
                 config->sharedMemBytes,
                 params,
                 extra,
                 config};
  return record_launch(h, config->hStream, l, [&] { return real(config, f, params, extra); });
}

CUresult on_launch_cooperative_kernel(H h, PFN_cuLaunchCooperativeKernel_v9000 real, CUfunction f,
                                      unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                      unsigned by, unsigned bz, unsigned shared_mem,
                                      CUstream stream, void** params) {
  Launch l{f, {gx, gy, gz}, {bx, by, bz}, shared_mem, params, nullptr};
  l.cooperative = true;
  return record_launch(h, stream, l, [&] {
    return real(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params);
  });
}

namespace {

template <class Call>
CUresult record_host_function(const HookInfo& h, CUstream stream, const void* fn, Call&& call) {
  // A host function runs in stream order and cannot call CUDA: stream order is its only edge.
  return record_task({h, stream, trace::TaskKind::HostFunc, signature_of("host_func", reinterpret_cast<std::uintptr_t>(fn))},
                     call, [&](deps::TaskEvent& event) {
                       event.detail["function"] = hex_address(reinterpret_cast<std::uintptr_t>(fn));
                     });
}

}  // namespace

CUresult on_launch_host_func(H h, PFN_cuLaunchHostFunc_v10000 real, CUstream stream, CUhostFn fn,
                             void* user_data) {
  return record_host_function(h, stream, reinterpret_cast<const void*>(fn),
                              [&] { return real(stream, fn, user_data); });
}

CUresult on_stream_add_callback(H h, PFN_cuStreamAddCallback_v5000 real, CUstream stream,
                                CUstreamCallback callback, void* user_data, unsigned flags) {
  return record_host_function(h, stream, reinterpret_cast<const void*>(callback),
                              [&] { return real(stream, callback, user_data, flags); });
}

CUresult on_graph_launch(H h, PFN_cuGraphLaunch_v10000 real, CUgraphExec exec, CUstream stream) {
  // Recorded node by node when nimble knows what the graph runs; otherwise one opaque task
  // touching everything, with the reason.
  return record_task({h, stream, trace::TaskKind::Graph, signature_of("graph", reinterpret_cast<std::uintptr_t>(exec))},
                     [&] { return real(exec, stream); },
                     [&](deps::TaskEvent& event) {
                       event.detail["graph_exec"] = hex_address(reinterpret_cast<std::uintptr_t>(exec));
                       std::string why_not;
                       if (program_graphs::describe_nodes(exec, event, &why_not)) {
                         event.kind = trace::TaskKind::GraphLaunch;
                         return;
                       }
                       event.detail["opaque_because"] = why_not;
                       event.accesses.push_back({0, 0, deps::Access::ReadWrite, true});
                     },
                     // nimble run: matched against the recording, then launched by this call in place.
                     [&] { return std::optional<replayer::GpuCall>(replayer::GraphLaunchCall{reinterpret_cast<std::uintptr_t>(exec)}); });
}

}  // namespace nimble::hooks
