// CHECK(call) for the GPU test programs: a failed CUDA call prints where and what, and main()
// returns 1.
#pragma once

#include <cstdio>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    const auto status_ = (call);                                                         \
    if (status_ != 0) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s failed with %d\n", __FILE__, __LINE__, #call,      \
                   static_cast<int>(status_));                                           \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)
