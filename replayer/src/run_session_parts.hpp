// What run_session.cpp (calls, recordings, switches), run_trial.cpp (the trial: timing,
// verdicts, rests) and run_report.cpp ask of a recording. Private to the replayer library.
#pragma once

#include "nimble/replayer/run_session.hpp"

namespace nimble::replayer::session_parts {

// Whether the recording's iterations may be replayed now (not resting, not dropped).
inline bool replays(const Recording& r) { return r.state == RecordingState::Trial || r.state == RecordingState::Replaying; }

}  // namespace nimble::replayer::session_parts
