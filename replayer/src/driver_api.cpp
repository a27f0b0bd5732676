#include "nimble/replayer/driver_api.hpp"

namespace nimble::replayer {

bool load_driver_api(DriverLookup lookup, DriverApi& api, std::string* missing) {
  bool ok = true;
#define NIMBLE_REPLAY_LOAD(field, name, version, pfn)                     \
  api.field = reinterpret_cast<pfn>(lookup(name, version));               \
  if (!api.field) {                                                       \
    ok = false;                                                           \
    if (missing) *missing += (missing->empty() ? "" : ", ") + std::string(name); \
  }
  NIMBLE_REPLAY_DRIVER_FUNCTIONS(NIMBLE_REPLAY_LOAD)
#undef NIMBLE_REPLAY_LOAD
  return ok;
}

}  // namespace nimble::replayer
