// The host reads at the two ends of a recorded iteration: a value copied to the host and waited
// for (a loss read for logging, a progress bar's metric) after the iteration's last GPU work or
// before its first. How many a program makes between two steps can change from step to step
// (Lightning's progress bar reads its metrics as often as its refresh allows: 1, 2 or 3 reads,
// H200 2026-11-29), and a recording that begins or ends with them then falls back at every
// step that reads once more or once less. Left to the program, they run between two replayed
// iterations, however many there are. CUDA-free, tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nimble/replayer/plan.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::replayer {

struct EndReads {
  std::size_t leading = 0;   // calls before the first op that launches work
  std::size_t trailing = 0;  // calls after the last
  std::size_t total() const { return leading + trailing; }
};

// Makes the device-to-host copies at either end of `plan` (ops before its first and after its
// last kernel, memset or other copy, among host syncs and host functions) ops it passes over, and
// says how many there were. Only where the trace's calls map onto the hooks' `calls` one to one
// (only kernels, copies and memsets, `calls` of them; syncs and host functions are not calls), and
// never all of the calls; otherwise nothing changes.
EndReads leave_end_reads_to_program(const trace::Trace& trace, ReplayPlan& plan, std::size_t calls);

// The hooks' call signatures of an iteration whose end reads are left to the program: from its
// first call that is matched, the reads after its last and before its first at the end (where the
// program issues them, between two iterations).
std::vector<std::uint64_t> calls_between_reads(const std::vector<std::uint64_t>& calls, const EndReads& reads);

}  // namespace nimble::replayer
