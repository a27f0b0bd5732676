// TraceWriter: nimble run's traces written on a thread of their own (trace_writer.hpp).
#include "trace_writer.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <vector>

#include "nimble/trace/io.hpp"
#include "test_support.hpp"

namespace nimble::test {
namespace {

trace::Trace chain(int n) {
  trace::Trace t;
  for (int i = 0; i < n; ++i) {
    trace::Task task;
    task.id = i;
    task.kind = "kernel";
    if (i > 0) task.deps = {i - 1};
    t.tasks.push_back(task);
  }
  return t;
}

// Waits up to 10 s for a forked child to end; kills it and returns false when it does not.
bool waited_for(pid_t child, int* status) {
  for (int i = 0; i < 500; ++i) {
    if (waitpid(child, status, WNOHANG) == child) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(child, SIGKILL);
  waitpid(child, status, 0);
  return false;
}

TEST(TraceWriter, TheFileIsCompleteOnceTheWriteIsFinished) {
  const std::string path = temp_dir() + "/t.json";
  hooks::TraceWriter writer;
  std::promise<std::optional<std::string>> outcome;
  writer.write(chain(50), path, [&](const std::optional<std::string>& error) { outcome.set_value(error); });
  writer.finish();
  EXPECT_EQ(outcome.get_future().get(), std::nullopt);
  const trace::LoadResult loaded = trace::load_trace(path);
  ASSERT_TRUE(loaded.trace) << path;
  EXPECT_EQ(loaded.trace->tasks.size(), 50u);
}

TEST(TraceWriter, TracesAreWrittenInTheOrderGivenAndAFailureIsReportedWithItsPath) {
  const std::string dir = temp_dir();
  std::vector<std::string> events;  // written on the writer's thread, one write at a time
  hooks::TraceWriter writer;
  writer.write(chain(3), dir + "/missing-dir/a.json", [&](const std::optional<std::string>& error) {
    events.push_back(error ? "failed: " + *error : "a");
  });
  writer.write(chain(4), dir + "/b.json", [&](const std::optional<std::string>& error) {
    events.push_back(error ? "failed: " + *error : "b");
  });
  writer.finish();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NE(events[0].find("failed: "), std::string::npos) << events[0];
  EXPECT_NE(events[0].find("missing-dir"), std::string::npos) << "the error names the file: " << events[0];
  EXPECT_EQ(events[1], "b");
  ASSERT_TRUE(trace::load_trace(dir + "/b.json").trace);
}

// A trace whose build fails: the work before the write is told why (nimble run then refuses the
// recording with that reason instead of planning an empty trace), and no file is written.
TEST(TraceWriter, ABuildThatFailsIsToldToTheWorkBeforeTheWriteAndNothingIsWritten) {
  const std::string path = temp_dir() + "/t.json";
  hooks::TraceWriter writer;
  std::optional<std::string> told_before, told_done;
  std::size_t tasks_before = 99;
  writer.write([]() -> trace::Trace { throw std::runtime_error("task 7 names stream 3, never created"); }, path,
               [&](const std::optional<std::string>& error) { told_done = error; },
               [&](trace::Trace& trace, double, const std::optional<std::string>& build_error) {
                 told_before = build_error;
                 tasks_before = trace.tasks.size();
               });
  writer.finish();
  ASSERT_TRUE(told_before);
  EXPECT_NE(told_before->find("building the trace failed: task 7 names stream 3"), std::string::npos) << *told_before;
  EXPECT_EQ(tasks_before, 0u);
  EXPECT_EQ(told_done, told_before);
  EXPECT_FALSE(trace::load_trace(path).trace);
}

TEST(TraceWriter, DestroyingTheWriterWaitsForTheWrite) {
  const std::string path = temp_dir() + "/t.json";
  {
    hooks::TraceWriter writer;
    writer.write(chain(2000), path, {});
  }
  const trace::LoadResult loaded = trace::load_trace(path);
  ASSERT_TRUE(loaded.trace);
  EXPECT_EQ(loaded.trace->tasks.size(), 2000u);
}

// At exit the writer is closed: a recording closed after that (another thread of the program) is
// written before write() returns, not on a thread the process would cut off.
TEST(TraceWriter, OnceClosedAWriteIsMadeBeforeItReturns) {
  const std::string path = temp_dir() + "/t.json";
  hooks::TraceWriter writer;
  writer.close();
  bool told = false;
  writer.write(chain(7), path, [&](const std::optional<std::string>& error) { told = !error; });
  EXPECT_TRUE(told);
  const trace::LoadResult loaded = trace::load_trace(path);
  ASSERT_TRUE(loaded.trace) << "written before write() returned";
  EXPECT_EQ(loaded.trace->tasks.size(), 7u);
}

// A writer destroyed in a forked child while the parent's thread was writing: the child's copy
// lets that thread go (destroying it joinable would abort the child).
TEST(TraceWriter, AWriterDestroyedInAForkedChildLetsTheParentsThreadGo) {
  const std::string path = temp_dir() + "/t.json";
  auto* writer = new hooks::TraceWriter();
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  writer->write(chain(3), path, [released](const std::optional<std::string>&) { released.wait(); });
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    writer->~TraceWriter();  // the destructor alone: no free in a forked child of a threaded process
    _exit(0);
  }
  int status = 0;
  const bool ended = waited_for(child, &status);
  release.set_value();
  delete writer;
  ASSERT_TRUE(ended) << "the child hung";
  EXPECT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_TRUE(trace::load_trace(path).trace);
}

// A forked child's copy of the writer names the parent's thread: finishing there must return at
// once (joining a thread of another process would hang or crash the child), and the parent's
// write is unaffected.
TEST(TraceWriter, AForkedChildDoesNotWaitForTheParentsWrite) {
  const std::string path = temp_dir() + "/t.json";
  hooks::TraceWriter writer;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  writer.write(chain(5), path, [released](const std::optional<std::string>&) { released.wait(); });
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only what a forked child of nimble does (recording is off there): its exit closes the
    // writer. Nothing else: a child of a threaded process may not even start a thread safely.
    writer.finish();
    writer.close();
    _exit(0);
  }
  int status = 0;
  const bool ended = waited_for(child, &status);
  release.set_value();
  writer.finish();
  ASSERT_TRUE(ended) << "the child hung in finish()";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(trace::load_trace(path).trace);
}

}  // namespace
}  // namespace nimble::test
