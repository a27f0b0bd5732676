#include "nimble/replayer/plan.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "nimble/replayer/shadow_layout.hpp"
#include "nimble/trace/recorded.hpp"
#include "nimble/scheduler/dag.hpp"
#include "nimble/scheduler/reduction.hpp"
#include "nimble/scheduler/trace_schedule.hpp"

namespace nimble::replayer {
namespace {

using trace::json;
using trace::TaskKind;

// A field the recorder writes, missing or of the wrong type: the message names task and field.
struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a recorded field of the task `where` names; a problem becomes that task's FieldError.
template <class Read>
auto read_field(const std::string& where, Read&& read) {
  try {
    return read();
  } catch (const trace::RecordedFieldError& e) {
    throw FieldError(where + ": " + e.what());
  }
}

// Launch attributes that name the program's own events cannot be replayed (and need not be).
bool replayable_attribute(int id) {
  return id != trace::launch_attribute::kProgrammaticEvent && id != trace::launch_attribute::kLaunchCompletionEvent;
}

KernelOp kernel_op(const trace::KernelRecord& recorded, const std::string& where) {
  if (!recorded.args.known) {
    throw FieldError(where + ": the recorder could not read this kernel's arguments (args.known "
                             "is false), so replay cannot launch it");
  }
  KernelOp k;
  k.function = recorded.function;
  k.is_cukernel = recorded.is_cukernel;
  const trace::LaunchRecord& launch = recorded.launch;
  std::copy(launch.grid.begin(), launch.grid.end(), k.grid);
  std::copy(launch.block.begin(), launch.block.end(), k.block);
  k.shared_mem = launch.shared_mem_bytes;
  k.cooperative = launch.cooperative;
  for (const trace::LaunchAttributeRecord& a : launch.attributes) {
    if (replayable_attribute(a.id)) k.attributes.push_back({a.id, a.value});
  }
  k.args = recorded.args.bytes;
  // Every reader of the layout (the launch's kernelParams, the call check) reads inside the bytes.
  const auto outside = [&](std::uint64_t end, const std::string& what) {
    if (end > k.args.size()) {
      throw FieldError(where + ": " + what + " ends at byte " + std::to_string(end) + " but args.bytes holds " +
                       std::to_string(k.args.size()) + " bytes");
    }
  };
  for (const trace::ParamSlot& p : recorded.args.params) {
    outside(std::uint64_t{p.offset} + p.size, "a parameter");
    k.param_offsets.push_back(p.offset);
    k.param_sizes.push_back(p.size);
  }
  for (const trace::PointerRecord& p : recorded.args.pointers) {
    outside(std::uint64_t{p.offset} + 8, "a pointer");
    k.pointer_offsets.push_back(p.offset);
  }
  return k;
}

// Returns false for a copy between host buffers (replayed as nothing: it never touches the GPU
// and replaying it would write the program's memory).
bool copy_op(const trace::CopyRecord& copy, const std::string& where, CopyOp& c) {
  const std::string& d = copy.direction;
  if (copy.shape) throw FieldError(where + ": 2D/3D copies are not replayed yet");
  if (d == "HtoH") return false;
  if (d == "HtoD") c.direction = CopyDirection::HtoD;
  else if (d == "DtoH") c.direction = CopyDirection::DtoH;
  else if (d == "DtoD") c.direction = CopyDirection::DtoD;
  else throw FieldError(where + ": copy direction \"" + d + "\" is not replayed (only HtoD, DtoH, DtoD)");
  c.src = copy.src;
  c.dst = copy.dst;
  c.bytes = copy.bytes;
  return true;
}

MemsetOp memset_op(const trace::MemsetRecord& m) {
  MemsetOp op;
  op.dst = m.dst;
  op.value = static_cast<std::uint32_t>(m.value);
  op.element_size = static_cast<unsigned>(m.element_size);
  op.width = m.width;
  op.height = m.height;
  op.pitch = m.pitch;
  return op;
}

std::uint64_t address(const json& value, const std::string& where) {
  const auto parsed = value.is_string() ? trace::parse_hex_address(value.get_ref<const std::string&>()) : std::nullopt;
  if (!parsed) throw FieldError(where + ": " + value.dump() + " is not a hex address");
  return *parsed;
}

std::uint64_t number(const json& value, const std::string& where) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
    throw FieldError(where + ": expected a non-negative integer");
  }
  return value.get<std::uint64_t>();
}

struct Allocation {
  std::uint64_t addr = 0, size = 0;
  bool freed = false;
  bool host = false;  // host memory: replay never writes the program's host memory
  bool allocated_inside = false;  // allocated during the iteration: its first contents do not matter
};

std::map<std::int64_t, Allocation> allocations_of(const trace::Trace& trace) {
  std::map<std::int64_t, Allocation> result;
  auto list = trace.extra.find("allocations");
  if (list == trace.extra.end() || !list->is_array()) return result;
  for (const json& a : *list) {
    if (!a.contains("id") || !a["id"].is_number_integer() || !a.contains("addr") || !a.contains("size")) continue;
    Allocation alloc;
    alloc.addr = address(a["addr"], "allocation " + a["id"].dump());
    alloc.size = number(a["size"], "allocation " + a["id"].dump() + " size");
    // The validator only warns about these; a wrong type must not escape as a json exception.
    if (a.contains("freed") && !a["freed"].is_boolean()) {
      throw FieldError("allocation " + a["id"].dump() + ": \"freed\" must be true or false");
    }
    if (a.contains("kind") && !a["kind"].is_string()) {
      throw FieldError("allocation " + a["id"].dump() + ": \"kind\" must be a string");
    }
    alloc.freed = a.value("freed", false);
    alloc.host = a.value("kind", std::string()) == "host";
    alloc.allocated_inside = a.contains("allocated_before_task");
    result[a["id"].get<std::int64_t>()] = alloc;
  }
  return result;
}

// The host end of a copy to the host (replay sends it to nimble's own buffer instead, and a copy
// between host buffers is not replayed at all).
bool writes_host_end(const std::optional<trace::CopyRecord>& copy, const trace::MemoryAccess& access) {
  if (!copy) return false;
  if (copy->direction == "HtoH") return true;
  return copy->direction == "DtoH" && copy->dst == access.offset;
}

// Shadow allocations: one per freed allocation the iteration uses, numbered as first met.
struct Shadows {
  std::map<std::int64_t, std::size_t> index;
  std::vector<std::uint64_t> sizes;
  std::size_t of(std::int64_t alloc, std::uint64_t size) {
    auto [it, added] = index.emplace(alloc, sizes.size());
    if (added) sizes.push_back(size);
    return it->second;
  }
};

// What a task's mem entries say beyond the live memory it writes.
struct TaskMemory {
  std::map<std::int64_t, Allocation> freed;  // the freed allocations it uses (replayed on shadows)
  bool touches_host = false;                 // it reads or writes page-locked host memory
};

// The device memory a task touches (mem entries): adds live allocations it writes to `written`
// and returns the freed allocations it uses and whether it touches host memory; problems for
// memory nimble cannot see. `copy`: the task's copy, for copies.
TaskMemory collect_memory(const std::vector<trace::MemoryAccess>& mem, const std::string& where,
                          const std::optional<trace::CopyRecord>& copy, const std::map<std::int64_t, Allocation>& allocations,
                          std::vector<MemoryRange>& written, std::vector<std::string>& problems) {
  TaskMemory out;
  for (const trace::MemoryAccess& access : mem) {
    using Target = trace::MemoryAccess::Target;
    if (access.target == Target::Everything) {
      problems.push_back(where + ": touches memory nimble cannot see (mem: everything); replay could "
                                 "overwrite anything");
      continue;
    }
    if (access.target == Target::Allocation) {
      auto it = allocations.find(access.alloc);
      if (it == allocations.end()) {
        problems.push_back(where + ": mem names allocation " + std::to_string(access.alloc) +
                           ", which is not in the top-level \"allocations\"");
        continue;
      }
      if (it->second.host) {
        out.touches_host = true;
      } else if (it->second.freed) {
        out.freed[access.alloc] = it->second;
      } else if (access.writes()) {
        written.push_back({it->second.addr, it->second.size});
      }
    } else if (access.writes() && !writes_host_end(copy, access)) {
      written.push_back({access.offset, access.size});
    }
  }
  return out;
}

// The shadow address for `addr` if it lies in one of the task's freed allocations.
std::optional<ShadowAddress> shadow_of(std::uint64_t addr, const std::map<std::int64_t, Allocation>& freed,
                                       Shadows& shadows) {
  for (const auto& [id, a] : freed) {
    if (addr >= a.addr && addr < a.addr + a.size) return ShadowAddress{shadows.of(id, a.size), addr - a.addr};
  }
  return std::nullopt;
}

// Kernels reach freed allocations through their pointer arguments, which replay rewrites; any
// other way (a TMA descriptor, a pointer stored in device memory) cannot be redirected.
void fix_kernel_pointers(const trace::ArgsRecord& args, const std::string& where, KernelOp& k,
                         const std::map<std::int64_t, Allocation>& freed, Shadows& shadows,
                         std::vector<std::string>& problems) {
  std::map<std::int64_t, bool> reached;
  for (const auto& [id, a] : freed) reached[id] = false;
  for (const trace::PointerRecord& p : args.pointers) {
    auto it = freed.find(p.alloc);
    if (it == freed.end()) continue;
    k.pointer_fixes.push_back({p.offset, {shadows.of(p.alloc, it->second.size), p.alloc_offset}});
    reached[p.alloc] = true;
  }
  for (const auto& [id, ok] : reached) {
    if (!ok) {
      problems.push_back(where + ": reaches allocation " + std::to_string(id) + ", freed during the recorded "
                         "iteration, other than through a pointer argument (a TMA descriptor or a pointer in "
                         "device memory), so replay cannot redirect it to nimble's own memory");
    }
  }
}

std::vector<MemoryRange> merge(std::vector<MemoryRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](auto& a, auto& b) { return a.addr < b.addr; });
  std::vector<MemoryRange> merged;
  for (const auto& r : ranges) {
    if (r.size == 0) continue;
    if (!merged.empty() && r.addr < merged.back().addr + merged.back().size) {
      merged.back().size = std::max(merged.back().addr + merged.back().size, r.addr + r.size) - merged.back().addr;
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

// Tasks a replay keeps for their place in the order and otherwise skips: host syncs, the launch
// of a program graph whose nodes are recorded, event nodes of such graphs, and host functions
// (the program's callbacks: a replay never calls them; they change no device memory nimble sees).
constexpr trace::TaskKind kOrdersOnly[] = {trace::TaskKind::Sync, trace::TaskKind::GraphLaunch,
                                           trace::TaskKind::EventRecord, trace::TaskKind::EventWait,
                                           trace::TaskKind::HostFunc};

bool orders_only(trace::TaskKind kind) {
  return std::find(std::begin(kOrdersOnly), std::end(kOrdersOnly), kind) != std::end(kOrdersOnly);
}

std::string orders_only_names() {
  std::string names;
  for (trace::TaskKind kind : kOrdersOnly) names += (names.empty() ? "" : ", ") + std::string(trace::kind_name(kind));
  return names;
}

std::string task_name(const trace::Task& task) {
  return trace::kernel_name(task).value_or(task.kind);
}

// "library_call_id", "library_call" and "library_key" (optional: recorders before them, edited
// traces, synthetic ones).
void library_call_of(const trace::Task& task, const std::string& where, Op& op) {
  auto id = task.extra.find("library_call_id");
  if (id == task.extra.end() || id->is_null()) return;
  op.library_call = static_cast<std::int64_t>(number(*id, where + ", field \"library_call_id\""));
  auto symbol = task.extra.find("library_call");
  if (symbol != task.extra.end() && symbol->is_string()) op.library_symbol = symbol->get<std::string>();
  op.library_key = read_field(where, [&] { return trace::read_library_key(task); });
}

}  // namespace

std::string describe_op(const Op& op) {
  return "task " + std::to_string(op.task) + " (" + op.name.substr(0, 60) + ")";
}

bool is_collective(const Op& op) {
  return op.kind == OpKind::Kernel && (op.name.rfind("ncclDevKernel", 0) == 0 || op.name.rfind("ncclKernel", 0) == 0);
}

bool runs_in_program(const Op& op) {
  if (op.kind == OpKind::Graph) return true;
  if (op.kind == OpKind::Copy) return op.copy.direction != CopyDirection::DtoD;
  return is_collective(op);
}

std::string dims_text(const unsigned* dims) {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

ReplayPlan with_program_pointers(ReplayPlan plan) {
  for (Op& op : plan.ops) op.kernel.pointer_fixes.clear();
  return plan;
}

PlanResult build_plan(const trace::Trace& trace, ProgramGraphs graphs) {
  PlanResult result;
  ReplayPlan plan;
  std::map<trace::TaskId, std::size_t> index_of;
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) index_of[trace.tasks[i].id] = i;
  std::map<std::int64_t, Allocation> allocations;
  try {
    allocations = allocations_of(trace);
  } catch (const FieldError& e) {
    result.problems.push_back(e.what());
    return result;
  }

  plan.scheduled = trace.schedule.has_value();
  Shadows shadows;
  std::map<std::int64_t, std::vector<std::size_t>> users;  // freed allocation -> ops touching it
  int max_stream = 0;
  // The program's stream handles by index (the trace's top-level "streams").
  std::vector<std::uint64_t> stream_handles;
  if (auto list = trace.extra.find("streams"); list != trace.extra.end() && list->is_array()) {
    for (const trace::json& s : *list) {
      const auto handle = s.contains("handle") && s["handle"].is_string()
                              ? trace::parse_hex_address(s["handle"].get<std::string>())
                              : std::nullopt;
      stream_handles.push_back(handle.value_or(0));
    }
  }
  plan.ops.reserve(trace.tasks.size());  // growing moved every op of a large plan, on the program's thread
  for (const trace::Task& task : trace.tasks) {
    const std::string where = "task " + std::to_string(task.id) + " (" + task.kind + ")";
    Op op;
    op.task = task.id;
    op.name = task_name(task);
    std::map<std::int64_t, Allocation> freed;  // the freed allocations this task touches
    try {
      const trace::TaskKind kind = trace::kind_of(task);
      const bool launch = kind == TaskKind::Graph || kind == TaskKind::GraphLaunch;
      const bool node = trace::is_graph_node(task);
      if (graphs == ProgramGraphs::RunByProgram && (launch || node)) {
        // The program's call launches its graph: what its nodes read, write and take as
        // arguments is not nimble's to replay (a node is a Nop that keeps its place).
        op.kind = node ? OpKind::Nop : OpKind::Graph;
        if (!node) op.graph_exec = read_field(where, [&] { return trace::read_graph_exec(task); });
      } else if (kind != TaskKind::Kernel && kind != TaskKind::Memcpy && kind != TaskKind::Memset && !orders_only(kind)) {
        result.problems.push_back(where + ": \"" + task.kind + "\" tasks are opaque to nimble and not "
                                  "replayed (only kernel, memcpy, memset, and tasks that only order others: " +
                                  orders_only_names() + ")");
        continue;
      } else {
        plan.host_functions += kind == TaskKind::HostFunc;
        std::optional<trace::CopyRecord> copy;
        if (kind == TaskKind::Memcpy) copy = read_field(where, [&] { return trace::read_copy(task); });
        const auto mem = read_field(where, [&] { return trace::read_mem(task); });
        TaskMemory touched = collect_memory(mem, where, copy, allocations, plan.written, result.problems);
        freed = std::move(touched.freed);
        op.touches_host_memory = touched.touches_host;
        if (kind == TaskKind::Kernel) {
          const auto recorded = read_field(where, [&] { return trace::read_kernel(task); });
          op.kind = OpKind::Kernel;
          op.kernel = kernel_op(recorded, where);
          fix_kernel_pointers(recorded.args, where, op.kernel, freed, shadows, result.problems);
        } else if (kind == TaskKind::Memcpy) {
          op.kind = copy_op(*copy, where, op.copy) ? OpKind::Copy : OpKind::Nop;
          if (op.kind == OpKind::Copy && op.copy.direction != CopyDirection::DtoD) {
            plan.host_bytes = std::max(plan.host_bytes, op.copy.bytes);
          }
          if (op.copy.direction != CopyDirection::HtoD) op.copy.src_shadow = shadow_of(op.copy.src, freed, shadows);
          if (op.copy.direction != CopyDirection::DtoH) op.copy.dst_shadow = shadow_of(op.copy.dst, freed, shadows);
        } else if (kind == TaskKind::Memset) {
          op.kind = OpKind::Memset;
          op.memset = memset_op(read_field(where, [&] { return trace::read_memset(task); }));
          op.memset.dst_shadow = shadow_of(op.memset.dst, freed, shadows);
        } else {
          op.kind = OpKind::Nop;
        }
      }
    } catch (const FieldError& e) {
      result.problems.push_back(e.what());
      continue;
    }
    try {
      library_call_of(task, where, op);
    } catch (const FieldError& e) {
      result.problems.push_back(e.what());
      continue;
    }
    if (task.schedule) {
      op.stream = task.schedule->stream;
      for (trace::TaskId w : task.schedule->waits) {
        auto it = index_of.find(w);
        if (it == index_of.end()) {
          result.problems.push_back(where + ": schedule.waits names unknown task " + std::to_string(w));
          continue;
        }
        op.waits.push_back(it->second);
      }
    }
    max_stream = std::max(max_stream, op.stream);
    if (task.stream && *task.stream >= 0 && static_cast<std::size_t>(*task.stream) < stream_handles.size()) {
      op.program_stream = stream_handles[static_cast<std::size_t>(*task.stream)];
    }
    for (const auto& [id, a] : freed) users[id].push_back(plan.ops.size());
    plan.ops.push_back(std::move(op));
  }
  if (!result.problems.empty()) return result;

  try {
    const auto reduced = scheduler::transitive_reduction(
        scheduler::predecessor_adjacency(scheduler::dag_from_trace(trace)));
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      for (auto p : reduced[static_cast<scheduler::NodeIndex>(i)]) plan.ops[i].deps.push_back(p);
    }
  } catch (const std::exception& e) {
    result.problems.push_back(std::string("dependencies: ") + e.what());
    return result;
  }
  plan.streams = plan.scheduled ? std::max(trace.schedule->streams, max_stream + 1) : 1;
  plan.written = merge(std::move(plan.written));
  plan.shadow_sizes = std::move(shadows.sizes);
  std::vector<ShadowUse> uses(plan.shadow_sizes.size());
  for (const auto& [id, s] : shadows.index) {
    uses[s] = {plan.shadow_sizes[s], users[id], allocations.at(id).allocated_inside};
  }
  std::vector<std::vector<std::size_t>> predecessors(plan.ops.size());
  for (std::size_t i = 0; i < plan.ops.size(); ++i) predecessors[i] = plan.ops[i].deps;
  const ShadowLayout layout = layout_shadows(uses, predecessors);
  plan.shadow_offsets = layout.offsets;
  plan.shadow_bytes = layout.bytes;
  plan.shadows_reused = layout.reused;
  result.plan = std::move(plan);
  return result;
}

}  // namespace nimble::replayer
