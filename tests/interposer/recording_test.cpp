// End-to-end recording on CPU: the probe program runs against the fake driver with
// NIMBLE_MODE=record, and the trace it leaves is loaded and checked.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "nimble/trace/io.hpp"
#include "test_support.hpp"

namespace nimble::test {
namespace {

using trace::json;

struct Recorded {
  RunResult run;
  std::optional<trace::Trace> trace;
  std::string diagnostics;
};

Recorded record(const std::string& mode, const std::string& range = "") {
  const std::string path = temp_dir() + "/trace.json";
  auto env = record_env(path, range);
  env.push_back("NIMBLE_CUPTI=0");  // no GPU: keep CUPTI out of it
  Recorded r;
  r.run = run_with_env(env, {probe_path(), mode});
  if (std::filesystem::exists(path)) {
    trace::LoadResult loaded = trace::load_trace(path);
    r.diagnostics = loaded.diagnostics.format(path);
    r.trace = std::move(loaded.trace);
  }
  return r;
}

const trace::Task* find(const trace::Trace& t, const std::string& kind, const std::string& name = "") {
  for (const auto& task : t.tasks) {
    if (task.kind != kind) continue;
    if (name.empty() || task.extra.value("name", json()).dump().find(name) != std::string::npos) return &task;
  }
  return nullptr;
}

bool depends(const trace::Task& task, const trace::Task* on) {
  return on && std::find(task.deps.begin(), task.deps.end(), on->id) != task.deps.end();
}

// The fake cuDNN's execute: its kernel is labelled with the call, the call's number and the key
// of its inputs; the program's own kernel with none of them.
TEST(Recording, LibraryCallsAreNumberedAndKeyedOnTheirTasks) {
  const Recorded r = record("library");
  ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
  ASSERT_TRUE(r.trace) << r.run.output << r.diagnostics;
  const trace::Task* fill = find(*r.trace, "kernel", "fill");
  const trace::Task* scale = find(*r.trace, "kernel", "scale");
  ASSERT_TRUE(fill && scale);
  EXPECT_TRUE(fill->extra["library_call"].is_null());
  EXPECT_FALSE(fill->extra.contains("library_call_id"));
  EXPECT_EQ(scale->extra["library_call"], "cudnnBackendExecute");
  ASSERT_TRUE(scale->extra.contains("library_call_id"));
  EXPECT_TRUE(scale->extra["library_call_id"].is_number_integer());
  ASSERT_TRUE(scale->extra.contains("library_key"));
  EXPECT_EQ(scale->extra["library_key"].get<std::string>().rfind("0x", 0), 0u);
}

TEST(Recording, ProfilerRangeRecordsOneIterationThroughEveryDoor) {
  const Recorded r = record("record");
  ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
  ASSERT_TRUE(r.trace) << r.run.output << r.diagnostics;
  EXPECT_EQ(r.diagnostics, "") << "the trace library found problems";
  const trace::Trace& t = *r.trace;

  std::vector<std::string> kinds;
  for (const auto& task : t.tasks) kinds.push_back(task.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"memcpy", "kernel", "kernel", "memset", "kernel", "memcpy", "sync"}));

  const trace::Task* h2d = find(t, "memcpy");
  const trace::Task* scale = find(t, "kernel", "scale");
  const trace::Task* fill = find(t, "kernel", "fill");
  const trace::Task* noargs = find(t, "kernel", "noargs");
  const trace::Task* memset = find(t, "memset");
  ASSERT_TRUE(h2d && scale && fill && noargs && memset);

  EXPECT_EQ(scale->extra["name"], "scale(float const*, float*, int)");
  EXPECT_EQ(scale->extra["mangled"], "_Z5scalePKfPfi");
  EXPECT_EQ(scale->extra["api"], "cuLaunchKernel");          // via cuGetProcAddress
  EXPECT_EQ(fill->extra["api"], "cuLaunchKernel");           // exported symbol, `extra` arguments
  EXPECT_EQ(noargs->extra["api"], "cuLaunchKernel_ptsz");    // per-thread flag
  EXPECT_TRUE(scale->extra["library_call"].is_null());
  EXPECT_EQ(scale->extra["launch"]["grid"], json({2, 1, 1}));
  EXPECT_EQ(scale->extra["launch"]["block"], json({64, 1, 1}));
  EXPECT_EQ(scale->extra["args"]["bytes"].get<std::string>().size(), 2u * 20);
  EXPECT_EQ(scale->extra["args"]["pointers"].size(), 2u);    // a and b resolve to allocations
  EXPECT_EQ(fill->extra["args"]["pointers"].size(), 1u);     // c, from the `extra` buffer
  EXPECT_EQ(h2d->extra["copy"]["direction"], "HtoD");
  EXPECT_EQ(memset->extra["memset"]["bytes"], 16);

  // Dependencies: stream order, the event from s1 to s2, and memory.
  EXPECT_TRUE(depends(*scale, h2d)) << "scale reads what the copy wrote, on the same stream";
  EXPECT_TRUE(depends(*fill, scale)) << "s2 waited for the event recorded after scale";
  EXPECT_TRUE(depends(*memset, fill)) << "memset overwrites what fill wrote, on the same stream";
  EXPECT_FALSE(depends(*fill, h2d)) << "implied through scale: not a direct edge";
  const trace::Task& sync = t.tasks.back();
  EXPECT_TRUE(depends(sync, &t.tasks[5])) << "cuStreamSynchronize(s1) waits for the DtoH copy";

  // The per-thread launch runs on the per-thread default stream.
  ASSERT_TRUE(noargs->stream);
  const json& streams = t.extra["streams"];
  EXPECT_EQ(streams.at(*noargs->stream)["kind"], "per-thread");

  EXPECT_EQ(t.extra["recorded_with"]["tool"], "nimble");
  EXPECT_EQ(t.extra["device"]["name"], "Fake GPU");
  EXPECT_EQ(t.extra["capture"]["range"], "cudaProfilerApi");
  EXPECT_EQ(t.extra["capture"]["truncated"], false);
  EXPECT_EQ(t.extra["coverage"]["traced_kernels"], 3);
  EXPECT_EQ(t.extra["coverage"]["cupti"], "unavailable");
  EXPECT_NE(r.run.output.find("nimble: wrote 7 tasks"), std::string::npos) << r.run.output;
}

TEST(Recording, AutoRangeRecordsExactlyOnePeriod) {
  const Recorded r = record("auto", "auto");
  ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
  ASSERT_TRUE(r.trace) << r.run.output << r.diagnostics;
  const trace::Trace& t = *r.trace;
  EXPECT_EQ(t.tasks.size(), 7u);
  EXPECT_EQ(t.extra["capture"]["auto"]["period"], 7);
  EXPECT_EQ(t.extra["capture"]["auto"]["anchored_at_host_sync"], true);
  EXPECT_EQ(t.tasks.front().kind, "memcpy");  // the iteration starts after the host sync
  EXPECT_EQ(t.tasks.back().kind, "sync");
}

TEST(Recording, AWindowThatDoesNotRepeatThePeriodFoundIsDroppedAndTheIterationFoundAgain) {
  const Recorded r = record("warmup-then-steady", "auto");
  ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
  ASSERT_TRUE(r.trace) << r.run.output << r.diagnostics;
  const trace::Trace& t = *r.trace;
  // The steady iteration (as AutoRangeRecordsExactlyOnePeriod), not the warm-up's fills.
  EXPECT_EQ(t.tasks.size(), 7u);
  EXPECT_EQ(t.extra["capture"]["auto"]["period"], 7);
  EXPECT_EQ(t.extra["capture"]["auto"]["matched_expected_period"], true);
  EXPECT_EQ(t.extra["capture"]["auto"]["windows_dropped_for_not_repeating"], 1);
  EXPECT_NE(r.run.output.find("did not repeat the period found (2 tasks, window 1)"), std::string::npos) << r.run.output;
}

TEST(Recording, ADroppedWindowIsWrittenAtExitWhenNothingBetterCame) {
  const Recorded r = record("warmup-then-exit", "auto");
  ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
  ASSERT_TRUE(r.trace) << r.run.output << r.diagnostics;
  const trace::Trace& t = *r.trace;
  EXPECT_EQ(t.tasks.size(), 2u);  // the window that ended on a scale: a fill and the scale
  EXPECT_EQ(t.extra["capture"]["auto"]["matched_expected_period"], false);
  EXPECT_EQ(t.extra["capture"]["auto"]["windows_dropped_for_not_repeating"], 1);
  EXPECT_EQ(r.run.output.find("no trace written"), std::string::npos) << r.run.output;
}

TEST(Recording, WindowOpenAtExitIsWrittenAsTruncated) {
  const Recorded r = record("exit-open");
  ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
  ASSERT_TRUE(r.trace) << r.run.output << r.diagnostics;
  EXPECT_EQ(r.trace->tasks.size(), 1u);
  EXPECT_EQ(r.trace->extra["capture"]["truncated"], true);
  EXPECT_EQ(r.trace->extra["capture"]["ended_by"], "process exit");
}

TEST(Recording, AForkedChildNeverWritesTheParentsTrace) {
  const std::string dir = temp_dir();
  auto env = record_env(dir + "/trace-%p.json");
  env.push_back("NIMBLE_CUPTI=0");
  const RunResult run = run_with_env(env, {probe_path(), "fork"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  ASSERT_EQ(files.size(), 1u) << run.output;
  const auto loaded = trace::load_trace(files[0].string());
  ASSERT_TRUE(loaded.trace);
  EXPECT_EQ(loaded.trace->tasks.size(), 1u);  // the parent's launch only
}

TEST(Recording, NoCaptureRangeSaysWhatToDo) {
  const Recorded r = record("auto");  // never calls cuProfilerStart
  EXPECT_EQ(r.run.exit_code, 0);
  EXPECT_FALSE(r.trace);
  EXPECT_NE(r.run.output.find("no trace written"), std::string::npos) << r.run.output;
  EXPECT_NE(r.run.output.find("cudaProfilerStart"), std::string::npos) << r.run.output;
}

// No period in work issued on two streams whose order changes: the message says how many streams
// and threads the tasks came from.
TEST(Recording, NoPeriodAcrossStreamsNamesTheStreams) {
  const Recorded r = record("interleaved", "auto");
  EXPECT_FALSE(r.trace);
  EXPECT_NE(r.run.output.find("no repeating period was found in 160 tasks issued on 2 streams from 1 thread(s)"),
            std::string::npos) << r.run.output;
}

// The same order fed from two threads (as JAX's transfer threads feed their streams): the whole
// sequence never repeats, so after 1024 tasks nimble follows the thread that launches the most
// kernels (and the host syncs). Its lane repeats; the window then holds one iteration, the
// other thread's kernel included wherever it came: six fills, the other kernel, the sync.
TEST(Recording, InterleavedThreadsAreRecordedByFollowingTheBusiestThread) {
  const Recorded r = record("interleaved-threads", "auto");
  ASSERT_EQ(r.run.exit_code, 0) << r.run.output;
  ASSERT_TRUE(r.trace) << r.run.output << r.diagnostics;
  std::map<std::string, int> kinds;
  int others = 0;
  for (const auto& task : r.trace->tasks) {
    ++kinds[task.kind];
    if (task.kind == "kernel" && task.extra.value("name", json()).dump().find("noargs") != std::string::npos) ++others;
  }
  EXPECT_EQ(kinds["kernel"], 7) << r.run.output;
  EXPECT_EQ(others, 1) << r.run.output;
  EXPECT_EQ(kinds["sync"], 1) << r.run.output;
  const json capture = r.trace->extra.value("capture", json());
  EXPECT_EQ(capture["auto"].value("followed_one_thread", false), true) << capture.dump();
  EXPECT_EQ(capture["auto"].value("anchored_at_host_sync", false), true) << capture.dump();
  EXPECT_EQ(capture["auto"].value("period", 0), 7) << capture.dump();  // six fills and the sync
}

TEST(Recording, NvtxRangeWithoutInjectionSaysHowToEnableIt) {
  const Recorded r = record("auto", "nvtx:step");
  EXPECT_FALSE(r.trace);
  EXPECT_NE(r.run.output.find("NVTX_INJECTION64_PATH"), std::string::npos) << r.run.output;
}

}  // namespace
}  // namespace nimble::test
