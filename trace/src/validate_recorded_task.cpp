// Task-level recorder fields. What replay or dependency tools interpret (launch, args, mem, copy,
// memset) is an error when malformed; descriptive fields (name, api, thread, dep_reasons, ...)
// are warnings.
#include <charconv>
#include <unordered_set>

#include "json_checks.hpp"
#include "nimble/trace/recorded.hpp"
#include "recorded_fields.hpp"

namespace nimble::trace::detail {
namespace {

std::string at(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

// The little-endian 64-bit word at byte `offset` of hex-encoded bytes (bounds checked by the caller).
std::uint64_t word_at(const std::string& bytes, std::size_t offset) {
  const auto word = parse_hex_bytes(std::string_view(bytes).substr(2 * offset, 16));
  std::uint64_t value = 0;
  for (std::size_t b = word ? word->size() : 0; b-- > 0;) value = value << 8 | (*word)[b];
  return value;
}

void check_allocation_reference(const FieldChecker& c, const RecordedContext& context, const json& alloc,
                                const std::string& path, std::int64_t offset, std::int64_t size) {
  const auto id = c.integer(alloc, path, kError);
  if (!id || !context.allocations_listed) return;
  const auto found = context.allocation_size.find(*id);
  if (found == context.allocation_size.end()) {
    c.report(kError, path, "\"" + path + "\" refers to allocation " + std::to_string(*id) +
                               ", which is not in the top-level \"allocations\"");
  } else if (static_cast<std::uint64_t>(offset) + static_cast<std::uint64_t>(size) > found->second) {
    c.report(kWarning, path, "the range [" + std::to_string(offset) + ", +" + std::to_string(size) +
                                 ") goes past the end of allocation " + std::to_string(*id) + " (" +
                                 std::to_string(found->second) + " bytes)");
  }
}

void check_launch(const FieldChecker& c, const json& launch) {
  if (!c.object(launch, "launch", kError, "{\"grid\", \"block\", ...}")) return;
  c.require(launch, "launch", kError, {"grid", "block"});
  for (const auto& [key, v] : launch.items()) {
    const std::string path = "launch." + key;
    if (key == "grid" || key == "block" || key == "cluster") {
      c.dim3(v, path, kError);
    } else if (key == "shared_mem_bytes") {
      c.integer(v, path, kError, 0, kUint32Max);
    } else if (key == "cooperative") {
      c.boolean(v, path, kError);
    } else if (key == "priority") {
      c.integer(v, path, kError, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    } else if (key == "attributes" && c.array(v, path, kError, "{\"id\", \"name\", \"value\"}")) {
      // Raw launch attributes, replayed byte for byte even when nimble does not decode them.
      for (std::size_t k = 0; k < v.size(); ++k) {
        const std::string item = at(path, k);
        if (!c.object(v[k], item, kError, "{\"id\", \"name\", \"value\"}")) continue;
        c.require(v[k], item, kError, {"id", "value"});
        c.member_integer(v[k], "id", item, kError, 0);
        if (v[k].contains("value") && !(v[k]["value"].is_string() && is_hex_bytes(v[k]["value"].get<std::string>()))) {
          c.report(kError, item + ".value", "\"" + item + ".value\" must be the attribute value as hex bytes, got " +
                                                describe_value(v[k]["value"]));
        }
      }
    }
  }
}

void check_args(const FieldChecker& c, const json& args, const RecordedContext& context) {
  if (!c.object(args, "args", kError, "{\"bytes\", \"params\", \"pointers\", \"passed_bytes\"}")) return;
  if (args.contains("known") && c.boolean(args["known"], "args.known", kError) && !args["known"].get<bool>()) {
    return;  // the recorder could not read the arguments
  }
  c.require(args, "args", kError, {"bytes"});
  std::optional<std::int64_t> byte_count;
  if (args.contains("bytes")) {
    const json& bytes = args["bytes"];
    if (bytes.is_string() && is_hex_bytes(bytes.get_ref<const std::string&>())) {
      byte_count = static_cast<std::int64_t>(bytes.get_ref<const std::string&>().size() / 2);
    } else {
      c.report(kError, "args.bytes", "\"args.bytes\" must be the argument buffer as an even number of hex digits, got " +
                                         describe_value(bytes));
    }
  }
  // A slice [offset, offset + size) of the argument buffer must lie inside it.
  const auto inside = [&](const std::string& path, std::int64_t offset, std::int64_t size) {
    if (byte_count && offset + size > *byte_count) {
      c.report(kError, path, "\"" + path + "\" covers bytes [" + std::to_string(offset) + ", " +
                                 std::to_string(offset + size) + ") but \"args.bytes\" holds " +
                                 std::to_string(*byte_count) + " bytes");
    }
  };
  if (args.contains("params") && c.array(args["params"], "args.params", kError, "{\"offset\", \"size\"}")) {
    const json& params = args["params"];
    for (std::size_t k = 0; k < params.size(); ++k) {
      const std::string path = at("args.params", k);
      if (!c.object(params[k], path, kError, "{\"offset\", \"size\"}")) continue;
      c.require(params[k], path, kError, {"offset", "size"});
      const auto offset = c.member_integer(params[k], "offset", path, kError, 0, kUint32Max);
      const auto size = c.member_integer(params[k], "size", path, kError, 1, kUint32Max);
      if (offset && size) inside(path, *offset, *size);
    }
  }
  // The bytes the program passed, when fewer than "bytes" (the rest are zeros nimble added).
  if (args.contains("passed_bytes")) {
    const auto passed = c.member_integer(args, "passed_bytes", "args", kError, 0);
    if (passed && byte_count && *passed > *byte_count) {
      c.report(kError, "args.passed_bytes", "\"args.passed_bytes\" is " + std::to_string(*passed) +
                                                " but \"args.bytes\" holds " + std::to_string(*byte_count) + " bytes");
    }
  }
  if (!args.contains("pointers") ||
      !c.array(args["pointers"], "args.pointers", kError, "{\"offset\", \"alloc\", \"alloc_offset\"}")) {
    return;
  }
  const json& pointers = args["pointers"];
  for (std::size_t k = 0; k < pointers.size(); ++k) {
    const std::string path = at("args.pointers", k);
    const json& p = pointers[k];
    if (!c.object(p, path, kError, "{\"offset\", \"alloc\", \"alloc_offset\"}")) continue;
    c.require(p, path, kError, {"offset", "alloc", "alloc_offset"});
    const auto offset = c.member_integer(p, "offset", path, kError, 0, kUint32Max);
    if (offset) inside(path, *offset, 8);
    const auto alloc_offset = c.member_integer(p, "alloc_offset", path, kError, 0);
    if (!p.contains("alloc")) continue;
    // A pointer may point one past the end of its allocation (an end iterator): size 0 here.
    check_allocation_reference(c, context, p["alloc"], path + ".alloc", alloc_offset.value_or(0), 0);
    // The bytes should hold that address; after a hand edit of one but not the other they do not.
    const auto alloc = as_int64(p["alloc"]);
    const auto base = alloc ? context.allocation_address.find(*alloc) : context.allocation_address.end();
    if (!offset || !alloc_offset || !byte_count || *offset + 8 > *byte_count || base == context.allocation_address.end()) {
      continue;
    }
    const std::uint64_t expected = base->second + static_cast<std::uint64_t>(*alloc_offset);
    const std::uint64_t actual = word_at(args["bytes"].get_ref<const std::string&>(), static_cast<std::size_t>(*offset));
    if (actual != expected) {
      c.report(kWarning, path, "the argument bytes at offset " + std::to_string(*offset) + " hold " + hex_address(actual) +
                                   ", but allocation " + std::to_string(*alloc) + " + " + std::to_string(*alloc_offset) +
                                   " is " + hex_address(expected) + "; update \"args.bytes\" or this entry");
    }
  }
}

void check_mem(const FieldChecker& c, const json& mem, const RecordedContext& context) {
  if (!c.array(mem, "mem", kError, "{\"alloc\", \"offset\", \"size\", \"mode\"}")) return;
  for (std::size_t k = 0; k < mem.size(); ++k) {
    const std::string path = at("mem", k);
    const json& access = mem[k];
    if (!c.object(access, path, kError, "{\"alloc\", \"offset\", \"size\", \"mode\"}")) continue;
    c.require(access, path, kError, {"mode"});
    if (access.contains("mode")) c.one_of(access["mode"], path + ".mode", kError, {"r", "w", "rw"});
    if (access.contains("everything")) {  // memory nimble cannot see: conflicts with all
      if (c.boolean(access["everything"], path + ".everything", kError) && access["everything"].get<bool>()) continue;
    }
    if (!access.contains("alloc") && access.contains("addr")) {  // outside every tracked allocation
      c.require(access, path, kError, {"size"});
      c.address(access["addr"], path + ".addr", kError);
      c.member_integer(access, "size", path, kError, 0);
      continue;
    }
    c.require(access, path, kError, {"alloc", "offset", "size"});
    const auto offset = c.member_integer(access, "offset", path, kError, 0);
    const auto size = c.member_integer(access, "size", path, kError, 0);
    if (access.contains("alloc")) {
      check_allocation_reference(c, context, access["alloc"], path + ".alloc", offset.value_or(0), size.value_or(0));
    }
  }
}

// One copy: {direction, src, dst, bytes, shape}. `batch` lists several under "copies".
void check_one_copy(const FieldChecker& c, const json& copy, const std::string& path, bool allow_batch) {
  if (!c.object(copy, path, kError, "{\"direction\", \"src\", \"dst\", \"bytes\"}")) return;
  c.require(copy, path, kError, {"direction", "bytes"});
  const bool batch = copy.contains("direction") && copy["direction"] == "batch" && allow_batch;
  if (copy.contains("direction") && !batch) {
    c.one_of(copy["direction"], path + ".direction", kError,
             {"HtoD", "DtoH", "DtoD", "HtoH", "default", "AtoD", "DtoA", "AtoA", "HtoA", "AtoH", "batch"});
  }
  c.member_integer(copy, "bytes", path, kError, 0);
  if (batch) {
    c.member_integer(copy, "count", path, kError, 0);
    c.require(copy, path, kError, {"copies"});
    if (copy.contains("copies") && c.array(copy["copies"], path + ".copies", kError, "copies")) {
      for (std::size_t k = 0; k < copy["copies"].size(); ++k) check_one_copy(c, copy["copies"][k], at(path + ".copies", k), false);
    }
    return;
  }
  c.require(copy, path, kError, {"src", "dst"});
  if (copy.contains("src")) c.address(copy["src"], path + ".src", kError);
  if (copy.contains("dst")) c.address(copy["dst"], path + ".dst", kError);
  if (copy.contains("shape")) c.object(copy["shape"], path + ".shape", kError, "{\"width_bytes\", \"height\", ...}");
}

void check_memset(const FieldChecker& c, const json& memset) {
  if (!c.object(memset, "memset", kError, "{\"dst\", \"value\", \"element_size\", \"bytes\"}")) return;
  c.require(memset, "memset", kError, {"dst", "value", "bytes"});
  if (memset.contains("dst")) c.address(memset["dst"], "memset.dst", kError);
  c.member_integer(memset, "value", "memset", kError, 0, kUint32Max);
  for (const char* key : {"pitch", "width", "height"}) c.member_integer(memset, key, "memset", kError, 0);
  const auto bytes = c.member_integer(memset, "bytes", "memset", kError, 0);
  std::int64_t element_size = 1;
  if (memset.contains("element_size")) {
    const auto size = as_int64(memset["element_size"]);
    if (size && (*size == 1 || *size == 2 || *size == 4)) {
      element_size = *size;
    } else {
      c.report(kError, "memset.element_size", "\"memset.element_size\" must be 1, 2 or 4, got " +
                                                  describe_value(memset["element_size"]));
      return;
    }
  }
  if (bytes && *bytes % element_size != 0) {
    c.report(kError, "memset.bytes", "\"memset.bytes\" (" + std::to_string(*bytes) + ") must be a multiple of " +
                                         "\"memset.element_size\" (" + std::to_string(element_size) + ")");
  }
}

void check_dep_reasons(const FieldChecker& c, const json& reasons, const Task& task) {
  if (!c.object(reasons, "dep_reasons", kWarning, "mapping dependency ids (as strings) to reasons")) return;
  const std::unordered_set<TaskId> deps(task.deps.begin(), task.deps.end());
  for (const auto& [key, reason] : reasons.items()) {
    const std::string path = "dep_reasons." + key;
    TaskId id = 0;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (error != std::errc() || end != key.data() + key.size()) {
      c.report(kWarning, path, "\"dep_reasons\" keys must be dependency ids written as strings, got " + quoted(key));
    } else if (!deps.count(id)) {
      c.report(kWarning, path, "gives a reason for task " + key + ", which is not in \"deps\"");
    }
    if (!reason.is_string()) {
      c.report(kWarning, path, "a dependency reason must be a string such as \"stream\", got " + describe_value(reason));
    }
  }
}

}  // namespace

void check_recorded_task(const Task& task, const RecordedContext& context, const FieldChecker& c) {
  if (!task.extra.is_object()) return;
  auto any_of = [](const std::string& key, std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (key == n) return true;
    }
    return false;
  };
  for (const auto& [key, v] : task.extra.items()) {
    if (any_of(key, {"name", "mangled", "library_call"})) c.string_or_null(v, key, kWarning);
    else if (any_of(key, {"api", "handle"})) c.string(v, key, kWarning);
    else if (any_of(key, {"thread", "correlation_id", "synced_stream", "library_call_id"})) c.integer(v, key, kWarning, 0);
    else if (key == "start_us") c.microseconds(v, key, kWarning);
    else if (any_of(key, {"function", "graph_exec", "event", "library_key"})) c.address(v, key, kWarning);
    else if (key == "sync") c.one_of(v, key, kWarning, {"stream", "event", "context"});
    else if (key == "launch") check_launch(c, v);
    else if (key == "args") check_args(c, v, context);
    else if (key == "mem") check_mem(c, v, context);
    else if (key == "copy") check_one_copy(c, v, "copy", true);
    else if (key == "memset") check_memset(c, v);
    else if (key == "dep_reasons") check_dep_reasons(c, v, task);
  }
  if (task.stream && context.stream_indexes && *task.stream >= 0 && !context.stream_indexes->count(*task.stream)) {
    c.report(kWarning, "stream", "\"stream\" is " + std::to_string(*task.stream) +
                                     ", which is not an index in the top-level \"streams\"");
  }
}

}  // namespace nimble::trace::detail
