// Streams, events, host synchronisation, the program's own stream capture, and the profiler
// range that opens and closes the recording window.
#include "recording_window.hpp"
#include "handlers.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

std::uint64_t as_u64(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

template <class F>
void safely(F&& f) {
  try {
    f();
  } catch (...) {
    log_message("could not track a stream or event operation; dependencies may be missing");
  }
}

}  // namespace

CUresult on_stream_create(H, PFN_cuStreamCreate_v2000 real, CUstream* stream, unsigned flags) {
  const CUresult r = real(stream, flags);
  if (r == CUDA_SUCCESS && stream && should_record()) {
    safely([&] { engine().stream_created(as_u64(*stream), flags, 0, current_thread()); });
  }
  return r;
}

CUresult on_stream_create_with_priority(H, PFN_cuStreamCreateWithPriority_v5050 real,
                                        CUstream* stream, unsigned flags, int priority) {
  const CUresult r = real(stream, flags, priority);
  if (r == CUDA_SUCCESS && stream && should_record()) {
    safely([&] { engine().stream_created(as_u64(*stream), flags, priority, current_thread()); });
  }
  return r;
}

CUresult on_stream_destroy(H, PFN_cuStreamDestroy_v4000 real, CUstream stream) {
  const CUresult r = real(stream);
  if (r == CUDA_SUCCESS && should_record()) safely([&] { engine().stream_destroyed(as_u64(stream)); });
  return r;
}

CUresult on_event_record(H h, PFN_cuEventRecord_v2000 real, CUevent event, CUstream stream) {
  if (running()) short_circuit_host_visible("recorded an event");
  if (!should_record() || program_capturing(stream, h.stream)) return real(event, stream);
  const CUresult r = real(event, stream);
  if (r == CUDA_SUCCESS) {
    safely([&] { engine().event_recorded(as_u64(event), map_stream(stream, h.stream), current_thread()); });
  }
  return r;
}

CUresult on_event_record_with_flags(H h, PFN_cuEventRecordWithFlags_v11010 real, CUevent event,
                                    CUstream stream, unsigned flags) {
  if (running()) short_circuit_host_visible("recorded an event");
  if (!should_record() || program_capturing(stream, h.stream)) return real(event, stream, flags);
  const CUresult r = real(event, stream, flags);
  if (r == CUDA_SUCCESS) {
    safely([&] { engine().event_recorded(as_u64(event), map_stream(stream, h.stream), current_thread()); });
  }
  return r;
}

CUresult on_stream_wait_event(H h, PFN_cuStreamWaitEvent_v3020 real, CUstream stream, CUevent event,
                              unsigned flags) {
  if (running()) short_circuit_host_visible("made a stream wait for an event");
  if (!should_record() || program_capturing(stream, h.stream)) return real(stream, event, flags);
  const CUresult r = real(stream, event, flags);
  if (r == CUDA_SUCCESS) {
    safely([&] { engine().stream_waited(map_stream(stream, h.stream), as_u64(event), current_thread()); });
  }
  return r;
}

// Host synchronisations. A query that reports completion is one too: the host has seen the
// work finish and may act on it.
CUresult on_stream_synchronize(H h, PFN_cuStreamSynchronize_v2000 real, CUstream stream) {
  if (running()) short_circuit_host_visible("synchronized a stream");
  const CUresult r = real(stream);
  if (r == CUDA_SUCCESS && should_record()) submit_sync(h, SyncKind::Stream, as_u64(stream), h.stream);
  return r;
}

CUresult on_stream_query(H h, PFN_cuStreamQuery_v2000 real, CUstream stream) {
  if (running()) short_circuit_host_visible("queried a stream");
  const CUresult r = real(stream);
  if (r == CUDA_SUCCESS && should_record()) submit_sync(h, SyncKind::Stream, as_u64(stream), h.stream, /*polled=*/true);
  return r;
}

CUresult on_ctx_synchronize(H h, PFN_cuCtxSynchronize_v2000 real) {
  if (running()) short_circuit_host_visible("synchronized the device");
  const CUresult r = real();
  if (r == CUDA_SUCCESS && should_record()) submit_sync(h, SyncKind::Context, 0, h.stream);
  return r;
}

CUresult on_ctx_synchronize_v2(H h, PFN_cuCtxSynchronize_v13000 real, CUcontext ctx) {
  if (running()) short_circuit_host_visible("synchronized the device");
  const CUresult r = real(ctx);
  if (r == CUDA_SUCCESS && should_record()) submit_sync(h, SyncKind::Context, 0, h.stream);
  return r;
}

// Waiting for or querying an event needs nothing held back to go out: `nimble run` issues
// everything before an event record first, so the work an event stands for is on the GPU.
CUresult on_event_synchronize(H h, PFN_cuEventSynchronize_v2000 real, CUevent event) {
  const CUresult r = real(event);
  if (r == CUDA_SUCCESS && should_record()) submit_sync(h, SyncKind::Event, as_u64(event), h.stream);
  return r;
}

CUresult on_event_query(H h, PFN_cuEventQuery_v2000 real, CUevent event) {
  const CUresult r = real(event);
  if (r == CUDA_SUCCESS && should_record()) submit_sync(h, SyncKind::Event, as_u64(event), h.stream, /*polled=*/true);
  return r;
}

// The program's own capture passes through untouched; nimble only counts open captures so that
// calls on capturing streams are not recorded as tasks.
CUresult on_stream_begin_capture_v1(H, PFN_cuStreamBeginCapture_v10000 real, CUstream stream) {
  if (running()) short_circuit_host_visible("began a stream capture");
  const CUresult r = real(stream);
  if (r == CUDA_SUCCESS) program_capture_began();
  return r;
}

CUresult on_stream_begin_capture(H, PFN_cuStreamBeginCapture_v10010 real, CUstream stream,
                                 CUstreamCaptureMode mode) {
  if (running()) short_circuit_host_visible("began a stream capture");
  const CUresult r = real(stream, mode);
  if (r == CUDA_SUCCESS) program_capture_began();
  return r;
}

CUresult on_stream_begin_capture_to_graph(H, PFN_cuStreamBeginCaptureToGraph_v12030 real,
                                          CUstream stream, CUgraph graph,
                                          const CUgraphNode* dependencies,
                                          const CUgraphEdgeData* edge_data, size_t count,
                                          CUstreamCaptureMode mode) {
  if (running()) short_circuit_host_visible("began a stream capture");
  const CUresult r = real(stream, graph, dependencies, edge_data, count, mode);
  if (r == CUDA_SUCCESS) program_capture_began();
  return r;
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
