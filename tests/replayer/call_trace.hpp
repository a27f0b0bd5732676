// A small recorded iteration for the call-check and short-circuit tests.
#pragma once

#include <cstdint>
#include <string>

#include "test_util.hpp"

namespace nimble::replayer {

// A kernel with three parameters: a device pointer (allocation 0) at byte 0, a 64-bit seed at
// byte 8 and a 32-bit count at byte 16 (padded to 24 bytes). Then a HtoD copy, a memset, a host
// sync and a DtoH copy.
constexpr std::uint64_t kBuffer = 0x7f0000000000;
constexpr std::uint64_t kOther = 0x7f0000100000;  // another live allocation

inline std::string trace_text() {
  return test::document(R"(
    {"id": 0, "kind": "kernel", "deps": [], "name": "dropout", "function": "0x1000",
     "launch": {"grid": [4, 1, 1], "block": [128, 1, 1], "shared_mem_bytes": 0},
     "args": {"bytes": "00000000007f00002a000000000000001000000000000000",
              "params": [{"offset": 0, "size": 8}, {"offset": 8, "size": 8}, {"offset": 16, "size": 4}],
              "pointers": [{"offset": 0, "alloc": 0, "alloc_offset": 0}]},
     "mem": [{"alloc": 0, "offset": 0, "size": 4096, "mode": "rw"}]},
    {"id": 1, "kind": "memcpy", "deps": [0],
     "copy": {"direction": "HtoD", "src": "0x560000001000", "dst": "0x7f0000000000", "bytes": 256},
     "mem": [{"addr": "0x560000001000", "size": 256, "mode": "r"}, {"alloc": 0, "offset": 0, "size": 256, "mode": "w"}]},
    {"id": 2, "kind": "memset", "deps": [1],
     "memset": {"dst": "0x7f0000100000", "value": 7, "element_size": 4, "bytes": 1024},
     "mem": [{"alloc": 1, "offset": 0, "size": 1024, "mode": "w"}]},
    {"id": 3, "kind": "sync", "deps": [2]},
    {"id": 4, "kind": "memcpy", "deps": [3],
     "copy": {"direction": "DtoH", "src": "0x7f0000100000", "dst": "0x560000002000", "bytes": 64},
     "mem": [{"alloc": 1, "offset": 0, "size": 64, "mode": "r"}, {"addr": "0x560000002000", "size": 64, "mode": "w"}]})",
                  R"("allocations": [
    {"id": 0, "addr": "0x7f0000000000", "size": 4096, "kind": "device"},
    {"id": 1, "addr": "0x7f0000100000", "size": 4096, "kind": "device"}])");
}

inline bool on_device(std::uint64_t v) {
  return (v >= kBuffer && v < kBuffer + 4096) || (v >= kOther && v < kOther + 4096);
}

}  // namespace nimble::replayer
