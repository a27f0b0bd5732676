#include "trace_writer.hpp"

#include <pthread.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "nimble/trace/io.hpp"

namespace nimble::hooks {

namespace {

std::optional<std::string> write_now(const trace::Trace& trace, const std::string& path) {
  try {
    return trace::write_trace(trace, path);
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

}  // namespace

TraceWriter::~TraceWriter() {
  // In a forked child the thread is the parent's: let it go (destroying it joinable would abort).
  if (owner_ != getpid()) (void)thread_.release();
  finish();
}

void TraceWriter::join_locked() {
  if (!thread_) return;
  // A forked child's copy names the parent's thread, which is not in this process: let it go.
  if (owner_ == getpid()) thread_->join();
  else (void)thread_.release();
  thread_.reset();
}

TraceWriter::Build built_trace(trace::Trace trace) {
  // std::function copies what it holds: a shared trace, moved out when built.
  auto taken = std::make_shared<trace::Trace>(std::move(trace));
  return [taken] { return std::move(*taken); };
}

void TraceWriter::write(trace::Trace trace, std::string path, Done done, Before before) {
  write(built_trace(std::move(trace)), std::move(path), std::move(done), std::move(before));
}

void TraceWriter::write(Build build, std::string path, Done done, Before before) {
  auto job = [build = std::move(build), path = std::move(path), done = std::move(done), before = std::move(before)] {
    const auto began = std::chrono::steady_clock::now();
    trace::Trace trace;
    std::optional<std::string> error;
    try {
      trace = build();
    } catch (const std::exception& e) {
      error = std::string("building the trace failed: ") + e.what();
    }
    const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    if (before) before(trace, build_ms, error);
    if (!error) error = write_now(trace, path);
    if (done) done(error);
  };
  std::lock_guard<std::mutex> lock(mu_);
  join_locked();
  if (closed_) {
    job();
    return;
  }
  owner_ = getpid();
  thread_ = std::make_unique<std::thread>([job = std::move(job)] {
    pthread_setname_np(pthread_self(), "nimble-trace");  // so a thread census of the program names it
    job();
  });
}

void TraceWriter::finish() {
  if (owner_ != getpid()) return;  // nothing started, or the parent's thread (a forked child)
  std::lock_guard<std::mutex> lock(mu_);
  join_locked();
}

void TraceWriter::close() {
  if (creator_ != getpid()) return;  // a forked child: its lock may be held by a thread it does not have
  std::lock_guard<std::mutex> lock(mu_);
  join_locked();
  closed_ = true;
}

TraceWriter& background_trace_writer() {
  static TraceWriter* writer = [] {
    auto* w = new TraceWriter();
    std::atexit([] { background_trace_writer().close(); });
    return w;
  }();
  return *writer;
}

}  // namespace nimble::hooks
