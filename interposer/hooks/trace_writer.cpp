#include "trace_writer.hpp"

#include <unistd.h>

#include <cstdlib>

#include "nimble/trace/io.hpp"

namespace nimble::hooks {

TraceWriter::~TraceWriter() { finish(); }

void TraceWriter::join_locked() {
  if (!thread_) return;
  // A forked child's copy names the parent's thread, which is not in this process: let it go.
  if (owner_ == getpid()) thread_->join();
  else (void)thread_.release();
  thread_.reset();
}

void TraceWriter::write(trace::Trace trace, std::string path, Done done) {
  std::lock_guard<std::mutex> lock(mu_);
  join_locked();
  owner_ = getpid();
  thread_ = std::make_unique<std::thread>([trace = std::move(trace), path = std::move(path), done = std::move(done)] {
    std::optional<std::string> error;
    try {
      error = trace::write_trace(trace, path);
    } catch (const std::exception& e) {
      error = std::string(e.what());
    }
    if (done) done(error);
  });
}

void TraceWriter::finish() {
  if (owner_ != getpid()) return;  // nothing started, or the parent's thread (a forked child)
  std::lock_guard<std::mutex> lock(mu_);
  join_locked();
}

TraceWriter& background_trace_writer() {
  static TraceWriter* writer = [] {
    auto* w = new TraceWriter();
    std::atexit([] { background_trace_writer().finish(); });
    return w;
  }();
  return *writer;
}

}  // namespace nimble::hooks
