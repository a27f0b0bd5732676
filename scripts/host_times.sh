#!/usr/bin/env bash
# Where a model loop's host time goes (GPU machine): scripts/gpu/run_model.py with libnimble.so
# preloaded and NIMBLE_HOST_TIMES=1, which prints, per intercepted driver or library function,
# the calls and the host time inside them. Divide by ITERATIONS for per-iteration figures.
#
#   scripts/host_times.sh [MODELS...]      eager inference, batch 1 (default: resnet50)
#   TRAIN=1 scripts/host_times.sh resnet18 training steps, batch 32
#   MODE=run scripts/host_times.sh ...     under `nimble run` instead of idle
# Output: $OUT (default host-times)/host-times-MODE-MODEL.log; ITERATIONS (60).
set -uo pipefail
cd "$(dirname "$0")/.."
build=build-gpu; [ -x $build/bin/nimble ] || build=build
out=${OUT:-host-times}
mkdir -p "$out"
mode=${MODE:-idle}
extra=(); [ "${TRAIN:-0}" = 1 ] && extra=(--train)
export ITERATIONS=${ITERATIONS:-60} TIMED=${TIMED:-40}
for model in "${@:-resnet50}"; do
  log="$out/host-times-$mode-$model${TRAIN:+-train}.log"
  echo "host_times: $mode $model ${extra[*]} -> $log"
  if [ "$mode" = run ]; then
    NIMBLE_HOST_TIMES=1 PROFILE_ITERATION=10 $build/bin/nimble run --capture-range cudaProfilerApi --iteration 1 \
      -o "$out/$model.trace.json" -- python3 scripts/gpu/run_model.py "$model" "${extra[@]}" > "$log" 2>&1
  else
    LD_PRELOAD=$build/lib/libnimble.so NIMBLE_HOST_TIMES=1 python3 scripts/gpu/run_model.py "$model" "${extra[@]}" \
      > "$log" 2>&1
  fi
  grep "^{" "$log"; grep -A 25 "host time inside" "$log" | head -26
done
