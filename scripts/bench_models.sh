#!/usr/bin/env bash
# The framework-free speedup experiment on the GPU machine: for each model, `nimble bench` records
# one batch-1 inference forward pass and replays it with every backend; bench_model.py measures
# PyTorch eager and PyTorch CUDA graph in the same process. Writes $OUT/replay.md and replay.csv.
#   scripts/bench_models.sh [MODEL ...]       (default: the inference model set)
# NIMBLE_BUILD_DIR (default build-gpu) holds bin/nimble and lib/libnimble.so.
set -u
OUT=${OUT:-/tmp/nimble-bench}
BUILD=${NIMBLE_BUILD_DIR:-build-gpu}
DEADLINE=${NIMBLE_BENCH_DEADLINE:-500}
mkdir -p "$OUT/runs"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet50 inception_v3 googlenet densenet121 mobilenet_v2 squeezenet1_1
                                  efficientnet_b0 resnext50_32x4d shufflenet_v2_x1_0 vit_b_16)
# PyTorch's allocators: "caching" (the default: tensors share big segments, so memory conflicts
# at segment granularity serialise everything) and "async" (backend:cudaMallocAsync: one
# allocation per tensor, the dependencies nimble needs to find concurrency).
allocators=(${NIMBLE_ALLOCATORS:-async caching})
export RANGES=5 PYTHONUNBUFFERED=1
total=$(( ${#models[@]} * ${#allocators[@]} ))
i=0
for m in "${models[@]}"; do
  for a in "${allocators[@]}"; do
    i=$((i + 1))
    run="$m.$a"
    if [ "$SECONDS" -ge "$DEADLINE" ]; then echo "[$i/$total] $run: SKIPPED (time budget of ${DEADLINE}s used)"; continue; fi
    echo "[$i/$total] $run"
    conf=""; [ "$a" = async ] && conf="backend:cudaMallocAsync"
    PYTORCH_CUDA_ALLOC_CONF=$conf timeout 240 "$BUILD/bin/nimble" bench --iterations 200 --iteration "$RANGES" \
      -o "$OUT/runs/$run.json" -- python3 scripts/gpu/bench_model.py "$m" > "$OUT/runs/$run.log" 2>&1
    echo "  exit $? ($(grep -h 'graph-nimble-streams\|error' "$OUT/runs/$run.log" | tail -1 | cut -c1-150))"
  done
done
python3 scripts/gpu/bench_summary.py "$OUT/runs" "$OUT/replay.md" "$OUT/replay.csv"
cat "$OUT/replay.md"
