// nimble run writes each recording's trace on a thread of its own: turning a trace into JSON and
// onto the disk was a third of what a recording made the program wait (and a short run never wins
// that back). `nimble record` and `bench` still write before the program goes on.
//
// The file is complete when the process exits normally (the write under way is waited for then)
// and is written atomically (trace::write_trace): a program killed or `_exit`ed before it is done
// leaves no half-written trace, only none.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "nimble/trace/trace.hpp"

namespace nimble::hooks {

class TraceWriter {
 public:
  // Told the outcome on the writer's thread: nullopt, or why the file could not be written.
  using Done = std::function<void(const std::optional<std::string>& error)>;

  TraceWriter() = default;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter();  // waits for the write under way

  // Work on the trace before it is written, on the same thread (nimble run plans from it there);
  // `build_ms`: how long the trace took to build there (0: it came built); `build_error`: why it
  // could not be built (the trace is then empty, and nothing is written).
  using Before = std::function<void(trace::Trace& trace, double build_ms, const std::optional<std::string>& build_error)>;
  // Makes the trace (Engine::take_trace_later), on the writer's thread.
  using Build = std::function<trace::Trace()>;

  // Starts writing `trace` to `path`, after `before` if given; an earlier write is finished first
  // (traces are written in the order recorded). Once closed, does it all on the caller's thread
  // before returning.
  void write(trace::Trace trace, std::string path, Done done, Before before = {});
  // The same for a trace that `build` makes first, on the writer's thread.
  void write(Build build, std::string path, Done done, Before before = {});
  // Waits for the write under way, if any. In a forked child, whose copy of this object names the
  // parent's thread, it returns at once: the parent writes the file.
  void finish();
  // finish(), and every later write is made at once: at exit, a thread started after the last
  // wait would be cut off with the process, its file never written.
  void close();

 private:
  void join_locked();

  std::mutex mu_;
  std::unique_ptr<std::thread> thread_;
  std::atomic<pid_t> owner_{0};  // the process that started thread_
  const pid_t creator_ = getpid();  // the process that made this writer
  bool closed_ = false;          // under mu_
};

// A trace already built, as a Build (handed over once, not copied).
TraceWriter::Build built_trace(trace::Trace trace);

// The one writer of this process: created on first use and never destroyed (wrappers may run
// during exit); closed at exit.
TraceWriter& background_trace_writer();

}  // namespace nimble::hooks
