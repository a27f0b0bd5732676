// Top-level recorder fields. Allocations are errors when malformed (tasks' memory accesses and
// argument pointers refer to them); the rest describe the recording and are warnings.
#include "json_checks.hpp"
#include "recorded_fields.hpp"

namespace nimble::trace::detail {
namespace {

std::string at(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

void check_allocations(const json& list, const FieldChecker& c, RecordedContext& context) {
  if (!c.array(list, "allocations", kError, "{\"id\", \"addr\", \"size\", \"kind\"}")) return;
  context.allocations_listed = true;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string path = at("allocations", k);
    const json& a = list[k];
    if (!c.object(a, path, kError, "{\"id\", \"addr\", \"size\", \"kind\"}")) continue;
    c.require(a, path, kError, {"id", "addr", "size"});
    const auto id = c.member_integer(a, "id", path, kError);
    const auto size = c.member_integer(a, "size", path, kError, 0);
    const auto address = a.contains("addr") ? c.address(a["addr"], path + ".addr", kError) : std::nullopt;
    if (a.contains("kind")) {
      c.one_of(a["kind"], path + ".kind", kWarning, {"device", "async", "mapped", "managed", "host", "module-global"});
    }
    if (a.contains("stream")) c.address(a["stream"], path + ".stream", kWarning);  // the allocating stream's handle
    c.member_integer(a, "allocated_before_task", path, kWarning);
    c.member_integer(a, "freed_before_task", path, kWarning);
    if (a.contains("freed")) c.boolean(a["freed"], path + ".freed", kWarning);
    if (!id) continue;
    if (!context.allocation_size.emplace(*id, size ? static_cast<std::uint64_t>(*size) : ~std::uint64_t{0}).second) {
      c.report(kError, path + ".id", "allocation id " + std::to_string(*id) + " is used twice; ids must be unique");
    } else if (address) {
      context.allocation_address.emplace(*id, *address);
    }
  }
}

void check_streams(const json& list, const FieldChecker& c, RecordedContext& context) {
  if (!c.array(list, "streams", kWarning, "{\"index\", \"handle\", \"flags\", \"priority\"}")) return;
  auto& indexes = context.stream_indexes.emplace();
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string path = at("streams", k);
    const json& s = list[k];
    if (!c.object(s, path, kWarning, "{\"index\", \"handle\", \"flags\", \"priority\"}")) continue;
    c.require(s, path, kWarning, {"index"});
    if (const auto index = c.member_integer(s, "index", path, kWarning, 0); index && !indexes.insert(*index).second) {
      c.report(kWarning, path + ".index", "stream index " + std::to_string(*index) + " is listed twice");
    }
    if (s.contains("handle")) c.address(s["handle"], path + ".handle", kWarning);
    c.member_integer(s, "flags", path, kWarning, 0, kUint32Max);
    c.member_integer(s, "priority", path, kWarning, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    if (s.contains("kind")) c.one_of(s["kind"], path + ".kind", kWarning, {"legacy", "per-thread", "created"});
    c.member_integer(s, "thread", path, kWarning, 0);
    if (s.contains("seen_created")) c.boolean(s["seen_created"], path + ".seen_created", kWarning);
  }
}

void check_capture(const json& capture, const FieldChecker& c) {
  if (!c.object(capture, "capture", kWarning, "{\"range\", \"iteration\", \"ended_by\", \"truncated\"}")) return;
  if (capture.contains("range")) c.string(capture["range"], "capture.range", kWarning);
  c.member_integer(capture, "iteration", "capture", kWarning, 0);
  if (capture.contains("ended_by")) c.string(capture["ended_by"], "capture.ended_by", kWarning);
  if (capture.contains("truncated") && c.boolean(capture["truncated"], "capture.truncated", kWarning) &&
      capture["truncated"].get<bool>()) {
    c.report(kWarning, "capture.truncated",
             "the recording window was still open when the program exited, so the trace may end in the middle "
             "of an iteration; record again with a window that closes (cudaProfilerStop, an NVTX range end)");
  }
}

}  // namespace

RecordedContext check_recorded_top_level(const json& extra, const FieldChecker& top) {
  RecordedContext context;
  if (!extra.is_object()) return context;
  for (const auto& [key, value] : extra.items()) {
    if (key == "allocations") check_allocations(value, top, context);
    else if (key == "streams") check_streams(value, top, context);
    else if (key == "capture") check_capture(value, top);
    else if (key == "device" || key == "recorded_with" || key == "coverage") top.object(value, key, kWarning, "of descriptive fields");
  }
  return context;
}

}  // namespace nimble::trace::detail
