// The in-memory model of a nimble trace (see docs/trace-format.md).
// Only the fields nimble's tools interpret are typed; every other field of a task or of the
// top level is kept verbatim in `extra`, so hand-edited files survive a read/write round trip.
// `extra` never holds a typed field's name (the reader puts those in the typed members; writers
// skip such keys in traces built in memory). Recorder fields (name, launch, args, mem, ...,
// allocations, streams) live in `extra` (in a trace the recorder built, a kernel's may be in
// Task::kernel instead); their layout is in docs/trace-format.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nimble::trace {

using json = nlohmann::ordered_json;  // keeps the order of fields as the user wrote them
using TaskId = std::int64_t;

inline constexpr const char* kFormatName = "nimble-trace";
inline constexpr int kFormatVersion = 1;

// Where a task runs in a scheduled trace: its stream and the tasks on other streams it waits for.
struct TaskSchedule {
  int stream = 0;
  std::vector<TaskId> waits;
  json extra = json::object();
};

struct KernelRecord;  // recorded.hpp

struct Task {
  TaskId id = 0;
  std::string kind;                   // "kernel", "memcpy", "memset", ...
  std::vector<TaskId> deps;           // ids of earlier tasks this one depends on
  std::optional<double> duration_us;  // measured or estimated GPU time
  std::optional<int> stream;          // the program's original stream index
  std::optional<TaskSchedule> schedule;
  json extra = json::object();        // every other field, preserved
  // In memory only: a kernel's recorded fields (name, mangled, function, handle, launch, args)
  // as the recorder made them, instead of in `extra`; written right after "thread". A recording
  // is planned from them and written on another thread without being turned into JSON and read
  // back first. Read them with read_kernel / kernel_name, which look in both places.
  std::shared_ptr<const KernelRecord> kernel;
};

// Top-level "schedule" section of a scheduled trace.
struct TraceSchedule {
  std::string algorithm;
  int streams = 0;
  int syncs = 0;
  json extra = json::object();
};

struct Trace {
  int version = kFormatVersion;
  std::vector<Task> tasks;                // issue order = a topological order of deps
  std::optional<TraceSchedule> schedule;
  json extra = json::object();            // other top-level fields, preserved
};

// An address as trace files and nimble's messages spell it: "0x" and lowercase hex digits.
std::string hex_address(std::uint64_t value);
// Bytes as trace files spell them ("args.bytes"): two lowercase hex digits each, in memory order.
std::string to_hex(const std::uint8_t* bytes, std::size_t size);

}  // namespace nimble::trace
