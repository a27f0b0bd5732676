#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install what is missing, build, run the tests.
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
