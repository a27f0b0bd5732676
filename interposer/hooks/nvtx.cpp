// NVTX injection for NIMBLE_CAPTURE_RANGE=nvtx:NAME. When NVTX_INJECTION64_PATH points at
// libnimble.so, the program's NVTX library calls InitializeInjectionNvtx2 on its first NVTX
// call; nimble then receives range push/pop and start/end and opens the window around the
// N-th range named NAME (any domain).
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstring>
#include <string>

#include "recording_window.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

thread_local int t_depth = 0;                 // NVTX push/pop nest per thread
std::atomic<nvtxRangeId_t> g_window_range{0};  // the start/end range that opened the window
std::atomic<nvtxRangeId_t> g_next_range{1};

std::string message_of(const nvtxEventAttributes_t* a) {
  if (!a) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_REGISTERED:
      // nimble hands out registered strings as their own copies (register_string below).
      return a->message.registered ? reinterpret_cast<const char*>(a->message.registered) : "";
    default:
      return {};
  }
}

int push(const std::string& name) {
  const int depth = ++t_depth;
  if (recording()) {
    with_recording_window([&](RecordingWindow& c) { c.nvtx_push(name, current_thread(), depth); });
  }
  return depth - 1;
}

int pop() {
  const int depth = t_depth;
  if (t_depth > 0) --t_depth;
  if (recording()) with_recording_window([&](RecordingWindow& c) { c.nvtx_pop(current_thread(), depth); });
  return depth - 1;
}

nvtxRangeId_t start(const std::string& name) {
  const nvtxRangeId_t id = g_next_range.fetch_add(1);
  if (recording()) {
    with_recording_window([&](RecordingWindow& c) {
      if (c.nvtx_start(name)) g_window_range.store(id);
    });
  }
  return id;
}

void end(nvtxRangeId_t id) {
  if (id != 0 && id == g_window_range.load() && recording()) {
    with_recording_window([](RecordingWindow& c) { c.nvtx_end_of_window(); });
  }
}

int NVTX_API range_push_a(const char* message) { return push(message ? message : ""); }
int NVTX_API range_push_ex(const nvtxEventAttributes_t* a) { return push(message_of(a)); }
int NVTX_API range_pop() { return pop(); }
nvtxRangeId_t NVTX_API range_start_a(const char* message) { return start(message ? message : ""); }
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* a) { return start(message_of(a)); }
void NVTX_API range_end(nvtxRangeId_t id) { end(id); }
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  return push(message_of(a));
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t) { return pop(); }
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  return start(message_of(a));
}
void NVTX_API domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(strdup(s ? s : ""));  // lives for the process
}

template <class Fn>
void install(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
  if (table && id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace
}  // namespace nimble::hooks

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  using namespace nimble::hooks;
  if (!get_export_table) return 0;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || !callbacks->GetModuleFunctionTable) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size)) return 0;
  callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size);
  install(core, core_size, NVTX_CBID_CORE_RangePushA, &range_push_a);
  install(core, core_size, NVTX_CBID_CORE_RangePushEx, &range_push_ex);
  install(core, core_size, NVTX_CBID_CORE_RangePop, &range_pop);
  install(core, core_size, NVTX_CBID_CORE_RangeStartA, &range_start_a);
  install(core, core_size, NVTX_CBID_CORE_RangeStartEx, &range_start_ex);
  install(core, core_size, NVTX_CBID_CORE_RangeEnd, &range_end);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_range_push_ex);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_range_pop);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_range_start_ex);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_range_end);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  with_recording_window([](RecordingWindow& c) { c.nvtx_injected(); });
  return 1;
}
