#include "nimble/replayer/plan.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "nimble/replayer/shadow_layout.hpp"
#include "nimble/scheduler/dag.hpp"
#include "nimble/scheduler/reduction.hpp"
#include "nimble/scheduler/trace_schedule.hpp"

namespace nimble::replayer {
namespace {

using trace::json;

// A field the recorder writes, missing or of the wrong type: the message names task and field.
struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& field(const json& object, const char* name, const std::string& where) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) throw FieldError(where + ": missing field \"" + name + "\"");
  return *it;
}

std::uint64_t address(const json& value, const std::string& where) {
  if (!value.is_string()) throw FieldError(where + ": expected a hex string like \"0x7f00\"");
  const std::string& text = value.get_ref<const std::string&>();
  std::size_t used = 0;
  std::uint64_t result = 0;
  try {
    result = std::stoull(text, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.rfind("0x", 0) != 0 || used != text.size()) {
    throw FieldError(where + ": \"" + text + "\" is not a hex address");
  }
  return result;
}

std::uint64_t number(const json& value, const std::string& where) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
    throw FieldError(where + ": expected a non-negative integer");
  }
  return value.get<std::uint64_t>();
}

std::vector<std::uint8_t> hex_bytes(const json& value, const std::string& where) {
  if (!value.is_string()) throw FieldError(where + ": expected hex bytes");
  const std::string& text = value.get_ref<const std::string&>();
  if (text.size() % 2 != 0) throw FieldError(where + ": odd number of hex digits");
  std::vector<std::uint8_t> bytes(text.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const std::string pair = text.substr(2 * i, 2);
    if (pair.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      throw FieldError(where + ": \"" + pair + "\" at byte " + std::to_string(i) + " is not hex");
    }
    bytes[i] = static_cast<std::uint8_t>(std::stoul(pair, nullptr, 16));
  }
  return bytes;
}

void dim3(const json& value, unsigned out[3], const std::string& where) {
  if (!value.is_array() || value.size() != 3) throw FieldError(where + ": expected [x, y, z]");
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t v = number(value[i], where);
    if (v == 0 || v > 0xffffffffu) throw FieldError(where + ": each size must be 1 to 2^32-1");
    out[i] = static_cast<unsigned>(v);
  }
}

// Launch attributes that name the program's own events cannot be replayed (and need not be).
bool replayable_attribute(int id) {
  return id != 7 /*PROGRAMMATIC_EVENT*/ && id != 12 /*LAUNCH_COMPLETION_EVENT*/;
}

KernelOp kernel_op(const trace::Task& task, const std::string& where) {
  KernelOp k;
  k.function = address(field(task.extra, "function", where), where + " field \"function\"");
  auto handle = task.extra.find("handle");
  k.is_cukernel = handle != task.extra.end() && *handle == "CUkernel";
  const json& launch = field(task.extra, "launch", where);
  dim3(field(launch, "grid", where + " launch"), k.grid, where + " field \"launch.grid\"");
  dim3(field(launch, "block", where + " launch"), k.block, where + " field \"launch.block\"");
  if (auto smem = launch.find("shared_mem_bytes"); smem != launch.end()) {
    k.shared_mem = static_cast<unsigned>(number(*smem, where + " field \"launch.shared_mem_bytes\""));
  }
  if (auto coop = launch.find("cooperative"); coop != launch.end() && coop->is_boolean()) {
    k.cooperative = coop->get<bool>();
  }
  if (auto attrs = launch.find("attributes"); attrs != launch.end() && attrs->is_array()) {
    for (const json& a : *attrs) {
      LaunchAttribute attr;
      attr.id = static_cast<int>(number(field(a, "id", where + " launch.attributes"), where + " attribute id"));
      attr.value = hex_bytes(field(a, "value", where + " launch.attributes"), where + " attribute value");
      if (replayable_attribute(attr.id)) k.attributes.push_back(std::move(attr));
    }
  }
  const json& args = field(task.extra, "args", where);
  if (auto known = args.find("known"); known != args.end() && *known == false) {
    throw FieldError(where + ": the recorder could not read this kernel's arguments (args.known "
                             "is false), so replay cannot launch it");
  }
  k.args = hex_bytes(field(args, "bytes", where + " args"), where + " field \"args.bytes\"");
  if (auto params = args.find("params"); params != args.end() && params->is_array()) {
    for (const json& p : *params) {
      const std::uint64_t offset = number(field(p, "offset", where + " args.params"), where + " param offset");
      const std::uint64_t size = number(field(p, "size", where + " args.params"), where + " param size");
      if (offset + size > k.args.size()) {
        throw FieldError(where + " field \"args.params\": parameter at offset " + std::to_string(offset) +
                         " of size " + std::to_string(size) + " lies outside the " +
                         std::to_string(k.args.size()) + " argument bytes");
      }
      k.param_offsets.push_back(static_cast<std::uint32_t>(offset));
      k.param_sizes.push_back(static_cast<std::uint32_t>(size));
    }
  }
  if (auto pointers = args.find("pointers"); pointers != args.end() && pointers->is_array()) {
    for (const json& p : *pointers) {
      const std::uint64_t offset = number(field(p, "offset", where + " args.pointers"), where + " pointer offset");
      if (offset + 8 > k.args.size()) {
        throw FieldError(where + " field \"args.pointers\": a pointer at offset " + std::to_string(offset) +
                         " lies outside the " + std::to_string(k.args.size()) + " argument bytes");
      }
      k.pointer_offsets.push_back(static_cast<std::uint32_t>(offset));
    }
  }
  return k;
}

// Returns false for a copy between host buffers (replayed as nothing: it never touches the GPU
// and replaying it would write the program's memory).
bool copy_op(const trace::Task& task, const std::string& where, CopyOp& c) {
  const json& copy = field(task.extra, "copy", where);
  if (copy.contains("shape")) throw FieldError(where + ": 2D/3D copies are not replayed yet");
  const json& dir = field(copy, "direction", where + " copy");
  const std::string d = dir.is_string() ? dir.get<std::string>() : "";
  if (d == "HtoH") return false;
  if (d == "HtoD") c.direction = CopyDirection::HtoD;
  else if (d == "DtoH") c.direction = CopyDirection::DtoH;
  else if (d == "DtoD") c.direction = CopyDirection::DtoD;
  else throw FieldError(where + ": copy direction \"" + d + "\" is not replayed (only HtoD, DtoH, DtoD)");
  c.src = address(field(copy, "src", where + " copy"), where + " field \"copy.src\"");
  c.dst = address(field(copy, "dst", where + " copy"), where + " field \"copy.dst\"");
  c.bytes = number(field(copy, "bytes", where + " copy"), where + " field \"copy.bytes\"");
  return true;
}

MemsetOp memset_op(const trace::Task& task, const std::string& where) {
  const json& m = field(task.extra, "memset", where);
  MemsetOp op;
  op.dst = address(field(m, "dst", where + " memset"), where + " field \"memset.dst\"");
  op.value = static_cast<std::uint32_t>(number(field(m, "value", where + " memset"), where + " memset.value"));
  op.element_size = static_cast<unsigned>(number(field(m, "element_size", where + " memset"), where + " memset.element_size"));
  if (op.element_size != 1 && op.element_size != 2 && op.element_size != 4) {
    throw FieldError(where + " field \"memset.element_size\": must be 1, 2 or 4");
  }
  const std::uint64_t bytes = number(field(m, "bytes", where + " memset"), where + " memset.bytes");
  if (m.contains("height")) {
    op.height = number(m["height"], where + " memset.height");
    op.width = number(field(m, "width", where + " memset"), where + " memset.width");
    op.pitch = number(field(m, "pitch", where + " memset"), where + " memset.pitch");
  } else {
    op.width = bytes / op.element_size;
  }
  return op;
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
bool writes_host_end(const trace::Task& task, const json& access) {
  if (task.kind != "memcpy") return false;
  const json copy = task.extra.value("copy", json::object());
  const std::string direction = copy.value("direction", std::string());
  if (direction == "HtoH") return true;
  return direction == "DtoH" && copy.value("dst", std::string()) == access.value("addr", std::string("?"));
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

// The device memory a task touches (mem entries): adds live allocations it writes to `written`
// and returns the freed allocations it uses (replayed on shadows); problems for memory nimble
// cannot see.
std::map<std::int64_t, Allocation> collect_memory(const trace::Task& task, const std::string& where,
                                                  const std::map<std::int64_t, Allocation>& allocations,
                                                  std::vector<MemoryRange>& written, std::vector<std::string>& problems) {
  std::map<std::int64_t, Allocation> freed;
  auto mem = task.extra.find("mem");
  if (mem == task.extra.end() || !mem->is_array()) return freed;
  for (const json& access : *mem) {
    const std::string mode = access.value("mode", std::string("rw"));
    const bool writes = mode.find('w') != std::string::npos;
    if (access.value("everything", false)) {
      problems.push_back(where + ": touches memory nimble cannot see (mem: everything); replay could "
                                 "overwrite anything");
      continue;
    }
    if (access.contains("alloc")) {
      const auto id = access["alloc"].get<std::int64_t>();
      auto it = allocations.find(id);
      if (it == allocations.end()) {
        problems.push_back(where + ": mem names allocation " + std::to_string(id) +
                           ", which is not in the top-level \"allocations\"");
        continue;
      }
      if (it->second.host) {
        continue;
      } else if (it->second.freed) {
        freed[id] = it->second;
      } else if (writes) {
        written.push_back({it->second.addr, it->second.size});
      }
    } else if (access.contains("addr") && writes && !writes_host_end(task, access)) {
      written.push_back({address(access["addr"], where + " mem.addr"), number(access.value("size", json(0)), where + " mem.size")});
    }
  }
  return freed;
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
void fix_kernel_pointers(const trace::Task& task, const std::string& where, KernelOp& k,
                         const std::map<std::int64_t, Allocation>& freed, Shadows& shadows,
                         std::vector<std::string>& problems) {
  std::map<std::int64_t, bool> reached;
  for (const auto& [id, a] : freed) reached[id] = false;
  const json& args = task.extra["args"];
  if (auto pointers = args.find("pointers"); pointers != args.end() && pointers->is_array()) {
    for (const json& p : *pointers) {
      const std::int64_t id = p.value("alloc", std::int64_t{-1});
      auto it = freed.find(id);
      if (it == freed.end()) continue;
      const std::uint64_t offset = number(field(p, "offset", where + " args.pointers"), where + " pointer offset");
      if (offset + 8 > k.args.size()) throw FieldError(where + " field \"args.pointers\": offset " + std::to_string(offset) + " is outside the argument bytes");
      k.pointer_fixes.push_back({static_cast<std::uint32_t>(offset),
                                 {shadows.of(id, it->second.size), number(field(p, "alloc_offset", where + " args.pointers"), where + " alloc_offset")}});
      reached[id] = true;
    }
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
constexpr const char* kOrdersOnly = "sync, graph_launch, event_record, event_wait, host_func";

bool orders_only(const std::string& kind) {
  return kind == "sync" || kind == "graph_launch" || kind == "event_record" || kind == "event_wait" ||
         kind == "host_func";
}

std::string task_name(const trace::Task& task) {
  auto name = task.extra.find("name");
  if (name != task.extra.end() && name->is_string()) return name->get<std::string>();
  return task.kind;
}

// "library_call_id", "library_call" and "library_key" (optional: recorders before them, edited
// traces, synthetic ones).
void library_call_of(const trace::Task& task, const std::string& where, Op& op) {
  auto id = task.extra.find("library_call_id");
  if (id == task.extra.end() || id->is_null()) return;
  op.library_call = static_cast<std::int64_t>(number(*id, where + ", field \"library_call_id\""));
  auto symbol = task.extra.find("library_call");
  if (symbol != task.extra.end() && symbol->is_string()) op.library_symbol = symbol->get<std::string>();
  auto key = task.extra.find("library_key");
  if (key != task.extra.end() && !key->is_null()) op.library_key = address(*key, where + ", field \"library_key\"");
}

}  // namespace

std::string describe_op(const Op& op) {
  return "task " + std::to_string(op.task) + " (" + op.name.substr(0, 60) + ")";
}

std::string dims_text(const unsigned* dims) {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

ReplayPlan with_program_pointers(ReplayPlan plan) {
  for (Op& op : plan.ops) op.kernel.pointer_fixes.clear();
  return plan;
}

PlanResult build_plan(const trace::Trace& trace) {
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
  for (const trace::Task& task : trace.tasks) {
    const std::string where = "task " + std::to_string(task.id) + " (" + task.kind + ")";
    Op op;
    op.task = task.id;
    op.name = task_name(task);
    std::map<std::int64_t, Allocation> freed;  // the freed allocations this task touches
    try {
      if (task.kind != "kernel" && task.kind != "memcpy" && task.kind != "memset" && !orders_only(task.kind)) {
        result.problems.push_back(where + ": \"" + task.kind + "\" tasks are opaque to nimble and not "
                                  "replayed (only kernel, memcpy, memset, and tasks that only order others: " +
                                  kOrdersOnly + ")");
        continue;
      }
      plan.host_functions += task.kind == "host_func";
      freed = collect_memory(task, where, allocations, plan.written, result.problems);
      if (task.kind == "kernel") {
        op.kind = OpKind::Kernel;
        op.kernel = kernel_op(task, where);
        fix_kernel_pointers(task, where, op.kernel, freed, shadows, result.problems);
      } else if (task.kind == "memcpy") {
        op.kind = copy_op(task, where, op.copy) ? OpKind::Copy : OpKind::Nop;
        if (op.kind == OpKind::Copy && op.copy.direction != CopyDirection::DtoD) {
          plan.host_bytes = std::max(plan.host_bytes, op.copy.bytes);
        }
        if (op.copy.direction != CopyDirection::HtoD) op.copy.src_shadow = shadow_of(op.copy.src, freed, shadows);
        if (op.copy.direction != CopyDirection::DtoH) op.copy.dst_shadow = shadow_of(op.copy.dst, freed, shadows);
      } else if (task.kind == "memset") {
        op.kind = OpKind::Memset;
        op.memset = memset_op(task, where);
        op.memset.dst_shadow = shadow_of(op.memset.dst, freed, shadows);
      } else {
        op.kind = OpKind::Nop;
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
