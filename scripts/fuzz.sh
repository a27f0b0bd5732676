#!/usr/bin/env bash
# libFuzzer on the path `nimble check` takes on a file (tests/fuzz/trace_check_fuzz.cpp), with
# ASan and UBSan; CI runs it after the sanitizer tests (docs/testing.md).
# Usage: scripts/fuzz.sh [SECONDS]   (default 60)
# Builds into build-fuzz/ with clang (installed here when missing: only this step needs it).
# New inputs go to build-fuzz/corpus; the committed corpus is read, never written. A crash, hang
# (> 10 s for one input) or memory blow-up (> 2 GiB) fails the script and leaves the input in
# build-fuzz/ (crash-*, timeout-*, oom-*): fix the code, then add the input to the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

clangxx=${CLANGXX:-clang++-14}
clangc=${CLANGC:-clang-14}
if ! command -v "$clangxx" >/dev/null || ! compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "nimble fuzz: installing clang-14 and libclang-rt-14-dev (libFuzzer)"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev
fi

# Only the fuzz target and what it links (the trace library) are built.
cmake -S . -B build-fuzz -DNIMBLE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$clangxx" -DCMAKE_C_COMPILER="$clangc" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -D_GLIBCXX_ASSERTIONS"
cmake --build build-fuzz -j"$(nproc 2>/dev/null || echo 2)" --target trace_check_fuzz

mkdir -p build-fuzz/corpus
cd build-fuzz
# -rss_limit_mb: parse_trace's own limits (depth, size, capped reports) must keep memory bounded.
ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
  bin/trace_check_fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -dict=../tests/fuzz/trace_check.dict -print_final_stats=1 \
    corpus ../tests/fuzz/corpus/trace_check
