// Stream-ordered work nimble does not look into (handlers.hpp): recorded as one opaque task that
// may read and write any memory, in its stream's order.
#include "handlers.hpp"
#include "recorder.hpp"
#include "signature.hpp"

namespace nimble::hooks {

CUresult record_stream_op(H h, CUstream stream, FunctionRef<CUresult()> call) {
  // Under nimble run it is not a call the short-circuit replays: whatever it holds goes to the
  // GPU first, then this call runs (record_task's NotReplayed).
  return record_task({h, stream, trace::TaskKind::StreamOp, signature_of("stream_op", hash_string(h.base))}, call,
                     [](deps::TaskEvent& event) { event.accesses.push_back({0, 0, deps::Access::ReadWrite, true}); });
}

}  // namespace nimble::hooks
