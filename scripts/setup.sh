#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install what is missing, build, run the tests, then
# the sanitizer tests and a short fuzz run (scripts/sanitize.sh, scripts/fuzz.sh).
# Usage: scripts/setup.sh            (needs root or sudo for apt-get when packages are missing)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make nlohmann-json3-dev libcli11-dev libgtest-dev graphviz)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "nimble setup: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
echo "nimble setup: build and tests took $((SECONDS - start)) s"

# The CPU tests again under ASan and UBSan, then the trace reader under libFuzzer (docs/testing.md).
# SANITIZE=0 or FUZZ_SECONDS=0 skips a step (e.g. for a quick local run).
if [ "${SANITIZE:-1}" != 0 ]; then
  start=$SECONDS
  scripts/sanitize.sh
  echo "nimble setup: sanitizer build and tests took $((SECONDS - start)) s"
fi
if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
  start=$SECONDS
  scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
  echo "nimble setup: fuzzing took $((SECONDS - start)) s"
fi
