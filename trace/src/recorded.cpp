// Writers and readers of the recorder's task fields (nimble/trace/recorded.hpp). The writers'
// key order is the file format's: recorded traces must stay byte for byte what they were.
#include "nimble/trace/recorded.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

namespace nimble::trace {
namespace {

constexpr std::pair<TaskKind, const char*> kKindNames[] = {
    {TaskKind::Kernel, "kernel"},         {TaskKind::Memcpy, "memcpy"},
    {TaskKind::Memset, "memset"},         {TaskKind::Sync, "sync"},
    {TaskKind::HostFunc, "host_func"},    {TaskKind::Graph, "graph"},
    {TaskKind::GraphLaunch, "graph_launch"}, {TaskKind::EventRecord, "event_record"},
    {TaskKind::EventWait, "event_wait"},  {TaskKind::StreamOp, "stream_op"},
};

int hex_digit(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (!std::isxdigit(u)) return -1;
  return std::isdigit(u) ? u - '0' : std::tolower(u) - 'a' + 10;
}

// ---- reading helpers: every one names the field it reads --------------------------------------

std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
std::string item(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

[[noreturn]] void fail(const std::string& path, const std::string& problem) { throw RecordedFieldError(path, problem); }

const json& member(const json& object, const char* key, const std::string& path) {
  if (!object.is_object()) fail(path, "expected an object");
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) throw RecordedFieldError(join(path, key), "");
  return *it;
}

const json* optional_member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::uint64_t unsigned_value(const json& value, const std::string& path,
                             std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
    fail(path, "expected a non-negative integer");
  }
  const auto v = value.get<std::uint64_t>();
  if (v > max) fail(path, "must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return v;
}

std::uint64_t unsigned_member(const json& object, const char* key, const std::string& path,
                              std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  return unsigned_value(member(object, key, path), join(path, key), max);
}

std::uint64_t address_value(const json& value, const std::string& path) {
  if (!value.is_string()) fail(path, "expected a hex string like \"0x7f00\"");
  const auto address = parse_hex_address(value.get_ref<const std::string&>());
  if (!address) fail(path, "\"" + value.get<std::string>() + "\" is not a hex address");
  return *address;
}

std::vector<std::uint8_t> bytes_value(const json& value, const std::string& path) {
  if (!value.is_string()) fail(path, "expected hex bytes");
  const std::string& text = value.get_ref<const std::string&>();
  if (auto bytes = parse_hex_bytes(text)) return std::move(*bytes);
  if (text.size() % 2 != 0) fail(path, "odd number of hex digits");
  std::size_t i = 0;  // say which pair is not hex
  while (hex_digit(text[i]) >= 0 && hex_digit(text[i + 1]) >= 0) i += 2;
  std::string problem = "\"";
  problem.append(text, i, 2);
  fail(path, problem + "\" at byte " + std::to_string(i / 2) + " is not hex");
}

Dim3 dim3_value(const json& value, const std::string& path) {
  if (!value.is_array() || value.size() != 3) fail(path, "expected [x, y, z]");
  Dim3 out{};
  for (std::size_t i = 0; i < 3; ++i) {
    const std::uint64_t v = unsigned_value(value[i], path);
    if (v == 0 || v > 0xffffffffu) fail(path, "each size must be 1 to 2^32-1");
    out[i] = static_cast<std::uint32_t>(v);
  }
  return out;
}

int int_value(const json& value, const std::string& path) {
  if (!value.is_number_integer()) fail(path, "expected an integer");
  const auto v = value.get<std::int64_t>();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) fail(path, "out of range");
  return static_cast<int>(v);
}

bool bool_value(const json& value, const std::string& path) {
  if (!value.is_boolean()) fail(path, "expected true or false");
  return value.get<bool>();
}

const json& task_field(const Task& task, const char* key) { return member(task.extra, key, ""); }

json dim3_json(const Dim3& d) { return json::array({d[0], d[1], d[2]}); }

// The named field an attribute is also written as, and its value; nullopt for attributes nimble
// does not decode (or whose value the record does not hold).
std::optional<std::pair<const char*, json>> decoded_field(const LaunchRecord& l, int id) {
  using namespace launch_attribute;
  const auto field = [](const char* key, const auto& value) -> std::optional<std::pair<const char*, json>> {
    if (!value) return std::nullopt;
    return std::pair<const char*, json>{key, json(*value)};
  };
  switch (id) {
    case kClusterDimension:
      return l.cluster ? std::optional<std::pair<const char*, json>>({"cluster", dim3_json(*l.cluster)}) : std::nullopt;
    case kCooperative: return std::pair<const char*, json>{"cooperative", l.cooperative};
    case kPriority: return field("priority", l.priority);
    case kClusterSchedulingPolicy: return field("cluster_scheduling_policy", l.cluster_scheduling_policy);
    case kProgrammaticStreamSerialization:
      return field("programmatic_stream_serialization", l.programmatic_stream_serialization);
    case kMemSyncDomain: return field("mem_sync_domain", l.mem_sync_domain);
    default: return std::nullopt;
  }
}

json copy_fields(const CopyRecord& c) {
  return {{"direction", c.direction}, {"bytes", c.bytes}, {"src", hex_address(c.src)}, {"dst", hex_address(c.dst)}};
}

}  // namespace

const char* kind_name(TaskKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "other";
}

TaskKind kind_of(std::string_view name) {
  for (const auto& [k, text] : kKindNames) {
    if (name == text) return k;
  }
  return TaskKind::Other;
}

std::optional<std::uint64_t> parse_hex_address(std::string_view text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  std::uint64_t address = 0;
  for (std::size_t i = 2; i < text.size(); ++i) {
    const int digit = hex_digit(text[i]);
    if (digit < 0) return std::nullopt;
    address = address * 16 + static_cast<unsigned>(digit);
  }
  return address;
}

std::string hex_address(std::uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string to_hex(const std::uint8_t* bytes, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> parse_hex_bytes(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::vector<std::uint8_t> bytes(text.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return bytes;
}

RecordedFieldError::RecordedFieldError(std::string field_path, const std::string& problem)
    : std::runtime_error(problem.empty() ? "missing field \"" + field_path + "\""
                                         : "field \"" + field_path + "\": " + problem),
      field(std::move(field_path)) {}

const char* mode_name(AccessMode mode) {
  switch (mode) {
    case AccessMode::Read: return "r";
    case AccessMode::Write: return "w";
    case AccessMode::ReadWrite: return "rw";
  }
  return "rw";
}

// ---- writing ---------------------------------------------------------------------------------

json to_json(const LaunchRecord& l) {
  json launch = {{"grid", dim3_json(l.grid)}, {"block", dim3_json(l.block)}, {"shared_mem_bytes", l.shared_mem_bytes}};
  if (l.attributes.empty()) {
    if (l.cooperative) launch["cooperative"] = true;  // cuLaunchCooperativeKernel
    return launch;
  }
  // Decoded attributes appear in the order the program passed them.
  for (const LaunchAttributeRecord& a : l.attributes) {
    auto decoded = decoded_field(l, a.id);
    if (decoded && !launch.contains(decoded->first)) launch[decoded->first] = std::move(decoded->second);
  }
  json raw = json::array();
  for (const LaunchAttributeRecord& a : l.attributes) {
    raw.push_back({{"id", a.id}, {"name", a.name}, {"value", to_hex(a.value.data(), a.value.size())}});
  }
  launch["attributes"] = std::move(raw);
  return launch;
}

json to_json(const ArgsRecord& a) {
  if (!a.known) return {{"known", false}};
  json args = {{"bytes", to_hex(a.bytes.data(), a.bytes.size())}};
  json params = json::array();
  for (const ParamSlot& p : a.params) params.push_back({{"offset", p.offset}, {"size", p.size}});
  args["params"] = std::move(params);
  if (!a.pointers.empty()) {
    json pointers = json::array();
    for (const PointerRecord& p : a.pointers) {
      pointers.push_back({{"offset", p.offset}, {"alloc", p.alloc}, {"alloc_offset", p.alloc_offset}});
    }
    args["pointers"] = std::move(pointers);
  }
  if (a.passed_bytes) args["passed_bytes"] = *a.passed_bytes;
  return args;
}

void add_fields(json& fields, const KernelRecord& k) {
  fields["name"] = k.name ? json(*k.name) : json(nullptr);
  fields["mangled"] = k.mangled ? json(*k.mangled) : json(nullptr);
  fields["function"] = hex_address(k.function);
  fields["handle"] = k.is_cukernel ? "CUkernel" : "CUfunction";
  fields["launch"] = to_json(k.launch);
  fields["args"] = to_json(k.args);
}

json to_json(const CopyRecord& c) {
  if (c.direction == "batch") {
    json list = json::array();
    for (const CopyRecord& one : c.copies) list.push_back(copy_fields(one));
    return {{"direction", "batch"}, {"bytes", c.bytes}, {"count", c.count}, {"copies", std::move(list)}};
  }
  json copy = copy_fields(c);
  if (c.shape) {
    json shape = {{"width_bytes", c.shape->width_bytes}, {"height", c.shape->height}};
    if (c.shape->depth) shape["depth"] = *c.shape->depth;
    shape["src_pitch"] = c.shape->src_pitch;
    shape["dst_pitch"] = c.shape->dst_pitch;
    copy["shape"] = std::move(shape);
  }
  return copy;
}

json to_json(const MemsetRecord& m) {
  json out = {{"dst", hex_address(m.dst)}, {"bytes", m.bytes}, {"element_size", m.element_size}, {"value", m.value}};
  if (m.pitch) {
    out["pitch"] = m.pitch;
    out["width"] = m.width;
    out["height"] = m.height;
  }
  return out;
}

json to_json(const MemoryAccess& a) {
  switch (a.target) {
    case MemoryAccess::Target::Everything: return {{"everything", true}, {"mode", mode_name(a.mode)}};
    case MemoryAccess::Target::Allocation:
      return {{"alloc", a.alloc}, {"offset", a.offset}, {"size", a.size}, {"mode", mode_name(a.mode)}};
    case MemoryAccess::Target::Address: break;
  }
  return {{"addr", hex_address(a.offset)}, {"size", a.size}, {"mode", mode_name(a.mode)}};
}

json to_json(const std::vector<MemoryAccess>& mem) {
  json out = json::array();
  for (const MemoryAccess& a : mem) out.push_back(to_json(a));
  return out;
}

std::string join_reasons(const std::vector<DepReason>& reasons) {
  std::string out;
  for (const DepReason& r : reasons) out += (out.empty() ? "" : "; ") + r.text;
  return out;
}

// ---- reading ---------------------------------------------------------------------------------

LaunchRecord launch_from_json(const json& launch) {
  const std::string path = "launch";
  if (!launch.is_object()) fail(path, "expected an object");
  LaunchRecord l;
  l.grid = dim3_value(member(launch, "grid", path), "launch.grid");
  l.block = dim3_value(member(launch, "block", path), "launch.block");
  if (const json* v = optional_member(launch, "shared_mem_bytes")) {
    l.shared_mem_bytes = static_cast<std::uint32_t>(unsigned_value(*v, "launch.shared_mem_bytes", 0xffffffffu));
  }
  if (const json* v = optional_member(launch, "cooperative")) l.cooperative = bool_value(*v, "launch.cooperative");
  if (const json* v = optional_member(launch, "cluster")) l.cluster = dim3_value(*v, "launch.cluster");
  if (const json* v = optional_member(launch, "priority")) l.priority = int_value(*v, "launch.priority");
  if (const json* v = optional_member(launch, "cluster_scheduling_policy")) {
    l.cluster_scheduling_policy = int_value(*v, "launch.cluster_scheduling_policy");
  }
  if (const json* v = optional_member(launch, "programmatic_stream_serialization")) {
    l.programmatic_stream_serialization = bool_value(*v, "launch.programmatic_stream_serialization");
  }
  if (const json* v = optional_member(launch, "mem_sync_domain")) l.mem_sync_domain = int_value(*v, "launch.mem_sync_domain");
  if (const json* attrs = optional_member(launch, "attributes")) {
    if (!attrs->is_array()) fail("launch.attributes", "expected an array");
    for (std::size_t i = 0; i < attrs->size(); ++i) {
      const std::string at = item("launch.attributes", i);
      LaunchAttributeRecord a;
      a.id = static_cast<int>(unsigned_member((*attrs)[i], "id", at, std::numeric_limits<int>::max()));
      if (const json* name = optional_member((*attrs)[i], "name"); name && name->is_string()) a.name = name->get<std::string>();
      a.value = bytes_value(member((*attrs)[i], "value", at), at + ".value (the attribute value)");
      l.attributes.push_back(std::move(a));
    }
  }
  return l;
}

ArgsRecord args_from_json(const json& args) {
  if (!args.is_object()) fail("args", "expected an object");
  ArgsRecord a;
  if (const json* known = optional_member(args, "known"); known && *known == false) {
    a.known = false;
    return a;
  }
  a.bytes = bytes_value(member(args, "bytes", "args"), "args.bytes");
  const std::string size_text = std::to_string(a.bytes.size());
  if (const json* params = optional_member(args, "params"); params && params->is_array()) {
    for (std::size_t i = 0; i < params->size(); ++i) {
      const std::string at = item("args.params", i);
      const std::uint64_t offset = unsigned_member((*params)[i], "offset", at, 0xffffffffu);
      const std::uint64_t size = unsigned_member((*params)[i], "size", at, 0xffffffffu);
      if (offset + size > a.bytes.size()) {
        fail("args.params", "parameter at offset " + std::to_string(offset) + " of size " + std::to_string(size) +
                                " lies outside the " + size_text + " argument bytes");
      }
      a.params.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
    }
  }
  if (const json* pointers = optional_member(args, "pointers"); pointers && pointers->is_array()) {
    for (std::size_t i = 0; i < pointers->size(); ++i) {
      const json& p = (*pointers)[i];
      const std::string at = item("args.pointers", i);
      PointerRecord r;
      const std::uint64_t offset = unsigned_member(p, "offset", at, 0xffffffffu);
      if (offset + 8 > a.bytes.size()) {
        fail("args.pointers", "a pointer at offset " + std::to_string(offset) + " lies outside the " + size_text +
                                  " argument bytes");
      }
      r.offset = static_cast<std::uint32_t>(offset);
      if (const json* alloc = optional_member(p, "alloc"); alloc && alloc->is_number_integer()) {
        r.alloc = alloc->get<std::int64_t>();
      }
      if (const json* off = optional_member(p, "alloc_offset")) r.alloc_offset = unsigned_value(*off, at + ".alloc_offset");
      a.pointers.push_back(r);
    }
  }
  if (optional_member(args, "passed_bytes")) {
    a.passed_bytes = unsigned_member(args, "passed_bytes", "args", a.bytes.size());
  }
  return a;
}

KernelRecord read_kernel(const Task& task) {
  if (task.kernel) return *task.kernel;
  KernelRecord k;
  const json& fields = task.extra;
  k.name = kernel_name(task);
  if (const json* mangled = optional_member(fields, "mangled"); mangled && mangled->is_string()) {
    k.mangled = mangled->get<std::string>();
  }
  k.function = address_value(task_field(task, "function"), "function");
  const json* handle = optional_member(fields, "handle");
  k.is_cukernel = handle && *handle == "CUkernel";
  k.launch = launch_from_json(task_field(task, "launch"));
  k.args = args_from_json(task_field(task, "args"));
  return k;
}

std::optional<std::string> kernel_name(const Task& task) {
  if (task.kernel) return task.kernel->name;
  const json* name = optional_member(task.extra, "name");
  if (name && name->is_string()) return name->get<std::string>();
  return std::nullopt;
}

CopyRecord copy_from_json(const json& copy) {
  const std::string path = "copy";
  if (!copy.is_object()) fail(path, "expected an object");
  CopyRecord c;
  const json& direction = member(copy, "direction", path);
  if (!direction.is_string()) fail("copy.direction", "expected a string such as \"HtoD\"");
  c.direction = direction.get<std::string>();
  c.bytes = unsigned_member(copy, "bytes", path);
  if (c.direction == "batch") {
    if (const json* count = optional_member(copy, "count")) c.count = unsigned_value(*count, "copy.count");
    const json& list = member(copy, "copies", path);
    if (!list.is_array()) fail("copy.copies", "expected an array");
    for (const json& one : list) c.copies.push_back(copy_from_json(one));
    return c;
  }
  c.src = address_value(member(copy, "src", path), "copy.src");
  c.dst = address_value(member(copy, "dst", path), "copy.dst");
  if (const json* shape = optional_member(copy, "shape")) {
    if (!shape->is_object()) fail("copy.shape", "expected an object");
    CopyShape s;
    s.width_bytes = unsigned_member(*shape, "width_bytes", "copy.shape");
    s.height = unsigned_member(*shape, "height", "copy.shape");
    if (const json* depth = optional_member(*shape, "depth")) s.depth = unsigned_value(*depth, "copy.shape.depth");
    s.src_pitch = unsigned_member(*shape, "src_pitch", "copy.shape");
    s.dst_pitch = unsigned_member(*shape, "dst_pitch", "copy.shape");
    c.shape = s;
  }
  return c;
}

CopyRecord read_copy(const Task& task) { return copy_from_json(task_field(task, "copy")); }

MemsetRecord read_memset(const Task& task) {
  const json& m = task_field(task, "memset");
  const std::string path = "memset";
  MemsetRecord r;
  r.dst = address_value(member(m, "dst", path), "memset.dst");
  r.value = unsigned_member(m, "value", path, 0xffffffffu);
  r.element_size = unsigned_member(m, "element_size", path);
  if (r.element_size != 1 && r.element_size != 2 && r.element_size != 4) fail("memset.element_size", "must be 1, 2 or 4");
  r.bytes = unsigned_member(m, "bytes", path);
  if (optional_member(m, "height")) {
    r.height = unsigned_member(m, "height", path);
    r.width = unsigned_member(m, "width", path);
    r.pitch = unsigned_member(m, "pitch", path);
  } else {
    r.width = r.bytes / r.element_size;
  }
  return r;
}

std::vector<MemoryAccess> read_mem(const Task& task) {
  std::vector<MemoryAccess> out;
  const json* mem = optional_member(task.extra, "mem");
  if (!mem) return out;
  if (!mem->is_array()) fail("mem", "expected an array");
  for (std::size_t i = 0; i < mem->size(); ++i) {
    const json& e = (*mem)[i];
    const std::string at = item("mem", i);
    if (!e.is_object()) fail(at, "expected an object");
    MemoryAccess a;
    const std::string mode = e.value("mode", std::string("rw"));  // unknown direction: both ways
    a.mode = mode == "r" ? AccessMode::Read : mode == "w" ? AccessMode::Write : AccessMode::ReadWrite;
    if (const json* everything = optional_member(e, "everything"); everything && *everything == true) {
      a.target = MemoryAccess::Target::Everything;
    } else if (const json* alloc = optional_member(e, "alloc")) {
      if (!alloc->is_number_integer()) fail(at + ".alloc", "expected an allocation id");
      a.alloc = alloc->get<std::int64_t>();
      if (const json* offset = optional_member(e, "offset")) a.offset = unsigned_value(*offset, at + ".offset");
      if (const json* size = optional_member(e, "size")) a.size = unsigned_value(*size, at + ".size");
    } else if (const json* addr = optional_member(e, "addr")) {
      a.target = MemoryAccess::Target::Address;
      a.offset = address_value(*addr, at + ".addr");
      if (const json* size = optional_member(e, "size")) a.size = unsigned_value(*size, at + ".size");
    } else {
      a.target = MemoryAccess::Target::Everything;  // names no memory: assume all of it
    }
    out.push_back(a);
  }
  return out;
}

std::vector<DepReason> split_reasons(std::string_view text) {
  std::vector<DepReason> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    std::string_view part = text.substr(start, end - start);
    part.remove_prefix(std::min(part.find_first_not_of(' '), part.size()));
    if (!part.empty()) out.push_back({std::string(part.substr(0, part.find(' '))), std::string(part)});
    start = end + 1;
  }
  return out;
}

std::optional<std::vector<DepReason>> read_reasons(const Task& task, TaskId dependency) {
  const json* reasons = optional_member(task.extra, "dep_reasons");
  if (!reasons || !reasons->is_object()) return std::nullopt;
  const json* why = optional_member(*reasons, std::to_string(dependency).c_str());
  if (!why || !why->is_string()) return std::nullopt;
  return split_reasons(why->get_ref<const std::string&>());
}

std::optional<std::uint64_t> read_library_key(const Task& task) {
  const json* key = optional_member(task.extra, "library_key");
  if (!key) return std::nullopt;
  return address_value(*key, "library_key");
}

std::optional<std::uint64_t> read_thread(const Task& task) {
  const json* thread = optional_member(task.extra, "thread");
  if (!thread) return std::nullopt;
  return unsigned_value(*thread, "thread");
}

std::uint64_t read_graph_exec(const Task& task) { return address_value(member(task.extra, "graph_exec", ""), "graph_exec"); }

bool is_graph_node(const Task& task) { return optional_member(task.extra, "graph_launch") != nullptr; }

}  // namespace nimble::trace
