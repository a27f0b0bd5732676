// Stamps out one wrapper per hook-table entry, the exported symbol that jumps to it, and the
// table of wrapper addresses the funnel hands out.
#include "wrappers.hpp"

namespace nimble::hooks {

#define NIMBLE_DRIVER_HOOK(symbol, base, version, stream, pfn, handler) \
  using Hook_##symbol = Hook<HookId::k_##symbol, handler, false, pfn>;
#define NIMBLE_FUNNEL_HOOK(symbol, base, version, stream, pfn, handler) \
  using Hook_##symbol = Hook<HookId::k_##symbol, handler, true, pfn>;
#include "hook_table.def"

void* wrapper_address(HookId id) {
  switch (id) {
#define NIMBLE_DRIVER_HOOK(symbol, ...) \
  case HookId::k_##symbol:              \
    return reinterpret_cast<void*>(&Hook_##symbol::wrapper);
#include "hook_table.def"
  }
  return nullptr;
}

}  // namespace nimble::hooks

// The exported symbols. Each is a two-instruction trampoline into the wrapper, so the symbol
// keeps libcuda's exact name while the wrapper stays a C++ template. `nimble_entry_*` are
// hidden constants holding the wrapper addresses (the wrappers' own names are mangled).
#define NIMBLE_DRIVER_HOOK(symbol, base, version, stream, pfn, handler)                        \
  extern "C" __attribute__((visibility("hidden"), used)) constinit const pfn                   \
      nimble_entry_##symbol = &nimble::hooks::Hook_##symbol::wrapper;                          \
  asm(".pushsection .text\n"                                                                   \
      ".globl " #symbol "\n"                                                                   \
      ".type " #symbol ", @function\n"                                                         \
      ".p2align 4\n" #symbol ":\n"                                                             \
      "  endbr64\n"                                                                            \
      "  jmp *nimble_entry_" #symbol "(%rip)\n"                                                \
      ".size " #symbol ", .-" #symbol "\n"                                                     \
      ".popsection\n");
#include "hook_table.def"
