// Helpers for the tests of nimble run's session (RunSession) and its report: recordings of plain
// kernels whose executors only log what they were asked to do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nimble/replayer/run_session.hpp"

namespace nimble::replayer::test {

struct Log {
  std::vector<std::string> lines;
  std::size_t launches = 0, issued = 0;
  std::size_t execs = 0;          // execs "instantiated" by the executors
  std::size_t execs_to_make = 0;  // each of the next this many launches instantiates one
  std::size_t writes = 0;         // graph node parameters "written" by the executors
  std::vector<std::size_t> writes_per_launch;  // each launch writes the next of these, in turn (none: 0)
  bool recurring = false;  // launches now write parameters their segment had recently (a rotation)
  std::size_t new_writes = 0;  // writes made while not recurring
  std::vector<std::string> released;  // the executors released, by name, in order
};

struct LoggingExecutor : Executor {
  Log& log;
  std::string name;
  LoggingExecutor(Log& l, std::string n) : log(l), name(std::move(n)) {}
  void launch_segment(std::size_t segment, const IterationMatcher&) override;
  void issue(std::size_t op, const GpuCall&) override;
  std::size_t execs_made() const override { return log.execs; }
  std::size_t node_writes() const override { return log.writes; }
  std::size_t node_writes_for_new_parameters() const override { return log.new_writes; }
  void release() override { log.released.push_back(name); }
};

// Kernel `f` with an 8-byte argument: its call, and its signature as the session sees it.
KernelCall call_of(std::uint64_t f);
std::uint64_t sig(std::uint64_t f);

// One call of the program handed to the session as the hooks hand it: the fast path when it
// concerns nothing, else on_call, after which the hooks take any request for a new recording.
// Returns what the program then does (Run; Deferred: nimble has the call); `requests` counts the
// times the session asked for a new recording.
Action hand_over(RunSession& s, std::uint64_t signature, GpuCall call, std::size_t* requests = nullptr);

// A recording of kernels `functions`, in one segment per `piece` ops (0: one segment).
RecordingSetup recording(const std::string& name, const std::vector<std::uint64_t>& functions, Log& log,
                         std::size_t piece = 0, std::uint64_t fingerprint = 0);

}  // namespace nimble::replayer::test
