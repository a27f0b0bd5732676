#!/bin/sh
# Runs `nimble bench` on a test app and checks the results. Exit 77 (skip) without a GPU.
# Usage: bench_and_check.sh NIMBLE APP CHECKER TRACE EXPECTED_NODES
nimble=$1 app=$2 checker=$3 out=$4 nodes=$5
if ! ls /dev/nvidia0 >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "bench_and_check: no NVIDIA driver or device, skipping"
  exit 77
fi
bench="${out%.json}.bench.json"
rm -f "$out" "$bench"
"$nimble" bench --iterations 20 -o "$out" -- "$app"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "bench_and_check: nimble bench exited with $rc"; exit 1; }
exec "$checker" "$bench" "$nodes"
