#include "host_points.hpp"

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

const char* run_reason(HostPoint::Kind kind) {
  switch (kind) {
    case HostPoint::Kind::StreamCreate:
    case HostPoint::Kind::StreamDestroy: return nullptr;
    case HostPoint::Kind::StreamSync: return "synchronized a stream";
    case HostPoint::Kind::StreamQuery: return "queried a stream";
    case HostPoint::Kind::ContextSync: return "synchronized the device";
    case HostPoint::Kind::EventRecord: return "recorded an event";
    case HostPoint::Kind::StreamWait: return "made a stream wait for an event";
    case HostPoint::Kind::CaptureBegin: return "began a stream capture";
    // Waiting for or querying an event needs nothing held back to go out: nimble run issues
    // everything before an event record first, so the work an event stands for is on the GPU.
    case HostPoint::Kind::EventSync:
    case HostPoint::Kind::EventQuery: return nullptr;
  }
  return nullptr;
}

bool waits_for_gpu(HostPoint::Kind kind) {
  using Kind = HostPoint::Kind;
  return kind == Kind::StreamSync || kind == Kind::ContextSync || kind == Kind::EventSync || kind == Kind::StreamQuery ||
         kind == Kind::EventQuery;
}

bool on_one_stream(HostPoint::Kind kind) {
  using Kind = HostPoint::Kind;
  return kind == Kind::EventRecord || kind == Kind::StreamWait || kind == Kind::StreamSync || kind == Kind::StreamQuery;
}

void after_host_point(const HookInfo& h, const HostPoint& p) {
  using Kind = HostPoint::Kind;
  switch (p.kind) {
    case Kind::StreamCreate:
      if (!p.created) return;
      return safely([&] { engine().stream_created(as_u64(*p.created), p.flags, p.priority, current_thread()); });
    case Kind::StreamDestroy: return safely([&] { engine().stream_destroyed(as_u64(p.stream)); });
    // Host synchronisations. A query that reports completion is one too: the host has seen the
    // work finish and may act on it.
    case Kind::StreamSync: return submit_sync(h, SyncKind::Stream, as_u64(p.stream), h.stream);
    case Kind::StreamQuery: return submit_sync(h, SyncKind::Stream, as_u64(p.stream), h.stream, /*polled=*/true);
    case Kind::ContextSync: return submit_sync(h, SyncKind::Context, 0, h.stream);
    case Kind::EventSync: return submit_sync(h, SyncKind::Event, as_u64(p.event), h.stream);
    case Kind::EventQuery: return submit_sync(h, SyncKind::Event, as_u64(p.event), h.stream, /*polled=*/true);
    // Orders between streams; on a stream the program captures, they are its graph's business.
    case Kind::EventRecord:
      if (p.captured) return;
      return safely([&] { engine().event_recorded(as_u64(p.event), map_stream(p.stream, h.stream), current_thread()); });
    case Kind::StreamWait:
      if (p.captured) return;
      return safely([&] { engine().stream_waited(map_stream(p.stream, h.stream), as_u64(p.event), current_thread()); });
    // Counted so that calls on capturing streams are passed through, not recorded as tasks.
    case Kind::CaptureBegin: return program_capture_began();
  }
}

}  // namespace nimble::hooks
