#!/usr/bin/env bash
# The CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs this after the
# normal tests; docs/testing.md). Builds into build-sanitize/ (NIMBLE_SANITIZE=ON) and runs ctest.
# Usage: scripts/sanitize.sh [extra ctest arguments, e.g. -R Trace]
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
# -O1: the usual level for ASan (fast enough, exact reports); -g1: file:line in stack traces;
# _GLIBCXX_ASSERTIONS: bounds checks on std::vector/string indexing, which ASan cannot see
# inside a vector's capacity. Asserts stay on (no NDEBUG).
flags="-O1 -g1 -D_GLIBCXX_ASSERTIONS"
cmake -S . -B build-sanitize -DNIMBLE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags"
cmake --build build-sanitize -j"$jobs"

# Every report fails the test: leaks included, UB stops at the first finding.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# Every CPU test runs. Left out, and why: label gpu (they need a GPU and skip without one in the
# normal build too; the GPU programs, tests/apps built by nvcc, are not built here at all).
ctest --test-dir build-sanitize --output-on-failure -j"$jobs" -LE gpu "$@"
