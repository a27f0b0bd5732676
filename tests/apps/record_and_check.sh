#!/bin/sh
# Records a test app with libnimble.so and checks the trace. Exit 77 (skip) without a GPU.
# Usage: record_and_check.sh APP CHECKER OUTPUT RECORDER...
#   RECORDER: "env PRELOAD" to use the environment variables, or "cli NIMBLE" for `nimble record`.
app=$1 checker=$2 out=$3 how=$4 tool=$5
# No driver, no GPU: skip (the app links libcuda.so.1 and could not even start).
if ! ls /dev/nvidia0 >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "record_and_check: no NVIDIA driver or device, skipping"
  exit 77
fi
rm -f "$out"
if [ "$how" = cli ]; then
  "$tool" record -o "$out" -- "$app"
else
  LD_PRELOAD="$tool" NIMBLE_MODE=record NIMBLE_OUTPUT="$out" "$app"
fi
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "record_and_check: $app exited with $rc"; exit 1; }
exec "$checker" "$out"
