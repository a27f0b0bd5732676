// Streams, events, host synchronisation, the program's own stream capture, and the profiler
// range that opens and closes the recording window.
#include "handlers.hpp"
#include "host_points.hpp"
#include "recorder.hpp"
#include "recording_window.hpp"

namespace nimble::hooks {

// Streams made and destroyed, event records and waits, host synchronisations and the program's
// own captures: host points (host_points.hpp) that nimble run and the recorder each act on.
using Kind = HostPoint::Kind;

CUresult on_stream_create(H h, PFN_cuStreamCreate_v2000 real, CUstream* stream, unsigned flags) {
  HostPoint p{Kind::StreamCreate};
  p.created = stream;
  p.flags = flags;
  return around(h, p, [&] { return real(stream, flags); });
}

CUresult on_stream_create_with_priority(H h, PFN_cuStreamCreateWithPriority_v5050 real,
                                        CUstream* stream, unsigned flags, int priority) {
  HostPoint p{Kind::StreamCreate};
  p.created = stream;
  p.flags = flags;
  p.priority = priority;
  return around(h, p, [&] { return real(stream, flags, priority); });
}

CUresult on_stream_destroy(H h, PFN_cuStreamDestroy_v4000 real, CUstream stream) {
  return around(h, {Kind::StreamDestroy, stream}, [&] { return real(stream); });
}

CUresult on_event_record(H h, PFN_cuEventRecord_v2000 real, CUevent event, CUstream stream) {
  return around(h, {Kind::EventRecord, stream, event}, [&] { return real(event, stream); });
}

CUresult on_event_record_with_flags(H h, PFN_cuEventRecordWithFlags_v11010 real, CUevent event,
                                    CUstream stream, unsigned flags) {
  return around(h, {Kind::EventRecord, stream, event}, [&] { return real(event, stream, flags); });
}

CUresult on_stream_wait_event(H h, PFN_cuStreamWaitEvent_v3020 real, CUstream stream, CUevent event,
                              unsigned flags) {
  return around(h, {Kind::StreamWait, stream, event}, [&] { return real(stream, event, flags); });
}

CUresult on_stream_synchronize(H h, PFN_cuStreamSynchronize_v2000 real, CUstream stream) {
  return around(h, {Kind::StreamSync, stream}, [&] { return real(stream); });
}

CUresult on_stream_query(H h, PFN_cuStreamQuery_v2000 real, CUstream stream) {
  return around(h, {Kind::StreamQuery, stream}, [&] { return real(stream); });
}

CUresult on_ctx_synchronize(H h, PFN_cuCtxSynchronize_v2000 real) {
  return around(h, {Kind::ContextSync}, [&] { return real(); });
}

CUresult on_ctx_synchronize_v2(H h, PFN_cuCtxSynchronize_v13000 real, CUcontext ctx) {
  return around(h, {Kind::ContextSync}, [&] { return real(ctx); });
}

CUresult on_event_synchronize(H h, PFN_cuEventSynchronize_v2000 real, CUevent event) {
  return around(h, {Kind::EventSync, nullptr, event}, [&] { return real(event); });
}

CUresult on_event_query(H h, PFN_cuEventQuery_v2000 real, CUevent event) {
  return around(h, {Kind::EventQuery, nullptr, event}, [&] { return real(event); });
}

CUresult on_stream_begin_capture_v1(H h, PFN_cuStreamBeginCapture_v10000 real, CUstream stream) {
  return around(h, {Kind::CaptureBegin, stream}, [&] { return real(stream); });
}

CUresult on_stream_begin_capture(H h, PFN_cuStreamBeginCapture_v10010 real, CUstream stream,
                                 CUstreamCaptureMode mode) {
  return around(h, {Kind::CaptureBegin, stream}, [&] { return real(stream, mode); });
}

CUresult on_stream_begin_capture_to_graph(H h, PFN_cuStreamBeginCaptureToGraph_v12030 real,
                                          CUstream stream, CUgraph graph,
                                          const CUgraphNode* dependencies,
                                          const CUgraphEdgeData* edge_data, size_t count,
                                          CUstreamCaptureMode mode) {
  return around(h, {Kind::CaptureBegin, stream}, [&] { return real(stream, graph, dependencies, edge_data, count, mode); });
}

CUresult on_stream_end_capture(H h, PFN_cuStreamEndCapture_v10000 real, CUstream stream,
                               CUgraph* graph) {
  const bool was_capturing = program_capturing(stream, h.stream);
  const CUresult r = real(stream, graph);
  // An invalidated capture also ends here, with an error.
  if (was_capturing) program_capture_maybe_ended();
  return r;
}

// Capture range control: honoured whatever the driver answers (cuProfilerStart fails, for
// example, on a thread without a current context, yet the program's intent is clear).
CUresult on_profiler_start(H, PFN_cuProfilerStart_v4000 real) {
  const CUresult r = real();
  if (!inside_nimble()) with_recording_window([](RecordingWindow& c) { c.profiler_start(); });
  return r;
}

CUresult on_profiler_stop(H, PFN_cuProfilerStop_v4000 real) {
  const CUresult r = real();
  if (!inside_nimble()) with_recording_window([](RecordingWindow& c) { c.profiler_stop(); });
  return r;
}

}  // namespace nimble::hooks
