// The calls that are not tasks yet matter to the consumers of what the wrappers see, the recorder
// and nimble run: streams made and destroyed, host synchronisations and queries, event records and
// waits, and the program's own stream captures. A handler names its call as one typed HostPoint and runs it through
// `around`: nimble run hears of it before the call (what it holds back must be on the GPU first),
// the recorder after the call succeeded (dependencies, the automatic range). Handlers do not ask
// which mode is on; each consumer's rules for every kind are in host_points.cpp.
#pragma once

#include <cuda.h>

#include "hook_table.hpp"
#include "recorder.hpp"
#include "run_mode.hpp"

namespace nimble::hooks {

struct HostPoint {
  enum class Kind {
    StreamCreate,  // cuStreamCreate(WithPriority): `created` receives the stream
    StreamDestroy,
    StreamSync,    // cuStreamSynchronize
    StreamQuery,   // cuStreamQuery: a completed one is a sync the program polled for
    ContextSync,   // cuCtxSynchronize
    EventSync,     // cuEventSynchronize
    EventQuery,    // cuEventQuery
    EventRecord,   // cuEventRecord(WithFlags)
    StreamWait,    // cuStreamWaitEvent
    CaptureBegin,  // cuStreamBeginCapture...: the program's own graph capture
  };
  Kind kind;
  CUstream stream = nullptr;
  CUevent event = nullptr;
  CUstream* created = nullptr;  // StreamCreate
  unsigned flags = 0;           // StreamCreate
  int priority = 0;             // StreamCreate
  // EventRecord, StreamWait: the stream was in the program's own capture before the call (then
  // the call is its graph's business, not a dependency nimble records).
  bool captured = false;
};

// nimble run: what the program does at this point, as its fall-back reason says it, or null when
// nothing held back needs to go out first (waiting for an event: everything before its record went
// out when it was recorded).
const char* run_reason(HostPoint::Kind kind);
// Whether the point concerns only its stream's work (a side thread's then makes what is held back
// go out first only when it shares that stream): event records, waits, stream syncs and queries.
bool on_one_stream(HostPoint::Kind kind);
// Whether the host waits for the GPU there, or polls it (a stream, event or device sync; a stream or
// event query, as the automatic range counts them): a step may begin next.
bool waits_for_gpu(HostPoint::Kind kind);
// After the call succeeded, while the recorder records: its bookkeeping; and, always, the count
// of the program's own captures (nimble run passes captured calls through too).
void after_host_point(const HookInfo& h, const HostPoint& p);

template <class Real>
CUresult around(const HookInfo& h, HostPoint p, Real&& real) {
  if (running()) {
    if (const char* what = run_reason(p.kind)) {
      if (on_side_thread() && on_one_stream(p.kind)) {
        short_circuit_side_call(p.stream, h.stream);  // orders or shows only that stream's work
      } else {
        short_circuit_host_visible(what);
      }
    }
    if (waits_for_gpu(p.kind) && !on_side_thread()) run_host_synchronized();
  }
  if ((p.kind == HostPoint::Kind::EventRecord || p.kind == HostPoint::Kind::StreamWait) && should_record()) {
    p.captured = program_capturing(p.stream, h.stream);
  }
  // Held until the capture begun is counted (program_capture_began).
  const std::unique_lock<std::mutex> apart =
      run_hold_apart(p.kind == HostPoint::Kind::ContextSync, p.kind == HostPoint::Kind::CaptureBegin);
  const CUresult r = real();
  if (r == CUDA_SUCCESS && (should_record() || p.kind == HostPoint::Kind::CaptureBegin)) after_host_point(h, p);
  if (g_guard_syncs.load(std::memory_order_relaxed) && waits_for_gpu(p.kind) && !on_side_thread()) {
    run_guard_tick(g_program_calls.load(std::memory_order_relaxed), /*at_host_point=*/true);
  }
  return r;
}

}  // namespace nimble::hooks
