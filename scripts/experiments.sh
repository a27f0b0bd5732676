#!/usr/bin/env bash
# The speedup experiment on the GPU machine (issue 5): for each model, `nimble bench` records one
# iteration (batch-1 inference, or a CIFAR-shaped training step) and replays it with every
# backend, while bench_model.py measures PyTorch eager and PyTorch's CUDA graph in the same
# process. Then experiment_report.py writes experiments.csv/.md, the charts and environment.json.
#
#   scripts/experiments.sh infer [MODEL ...]     batch-1 inference (default: the ten-model set)
#   scripts/experiments.sh train [MODEL ...]     training step at each of TRAIN_BATCHES
#   scripts/experiments.sh report                only rebuild the tables and charts from $OUT/runs
#   scripts/experiments.sh run [MODEL ...]       the in-process short-circuit: `nimble run --compare`
#                                                alternates plain and replayed blocks of the same loop in
#                                                one process per model (scripts/run_models.sh compare;
#                                                TRAIN=1 for training steps; inprocess.md/.png in $OUT/inprocess)
#
# Environment: OUT (/tmp/nimble-experiments), NIMBLE_BUILD_DIR (build-gpu: bin/nimble and
# lib/libnimble.so), ALLOCATORS ("async": PyTorch's cudaMallocAsync backend; add "caching" for
# the default allocator), TRAIN_BATCHES ("32 64 128"), DEADLINE (seconds; later runs are skipped
# and listed), ITERATIONS (200), MAX_STREAMS (`nimble bench --max-streams`: 8 by default, 0 = no cap; named in the run when set),
# DETERMINISTIC=1 (deterministic algorithms: "-det" runs), CHECK=1 (training: also check the weights nimble restored).
# The nimble.torch column (the Python API in the same process) needs ALLOCATORS=caching: it refuses cudaMallocAsync.
# A failing model is reported and the rest go on.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/nimble-experiments}
BUILD=${NIMBLE_BUILD_DIR:-build-gpu}
DEADLINE=${DEADLINE:-540}
mode=${1:-infer}
shift || true
mkdir -p "$OUT/runs"
export RANGES=5 PYTHONUNBUFFERED=1

runs=()  # "mode model batch allocator"
case "$mode" in
  infer)
    models=("$@")
    [ ${#models[@]} -gt 0 ] || models=(resnet50 inception_v3 googlenet densenet121 mobilenet_v2 squeezenet1_1
                                      efficientnet_b0 resnext50_32x4d shufflenet_v2_x1_0 vit_b_16)
    for m in "${models[@]}"; do for a in ${ALLOCATORS:-async}; do runs+=("infer $m 1 $a"); done; done ;;
  train)
    models=("$@")
    [ ${#models[@]} -gt 0 ] || models=(resnet18 mobilenet_v2 densenet121)
    for m in "${models[@]}"; do for b in ${TRAIN_BATCHES:-32 64 128}; do
      for a in ${ALLOCATORS:-async}; do runs+=("train $m $b $a"); done; done; done ;;
  report) ;;
  run) NIMBLE=$BUILD/bin/nimble RESULTS=$OUT/inprocess exec scripts/run_models.sh compare "$@" ;;
  *) echo "usage: scripts/experiments.sh infer|train|report|run [MODEL ...]" >&2; exit 2 ;;
esac

i=0
for run in "${runs[@]}"; do
  i=$((i + 1))
  read -r kind model batch allocator <<< "$run"
  # CHECK=1 (training): the weights check, whose host copies are part of the recorded step, so
  # these runs are kept apart from the timing runs ("train-check" rows, not in the charts).
  label=$kind; [ "$kind" = train ] && [ "${CHECK:-}" = 1 ] && label=train-check
  [ "${DETERMINISTIC:-}" = 1 ] && label=$label-det
  name="$label.$model.b$batch.$allocator${MAX_STREAMS:+.s$MAX_STREAMS}"
  if [ "$SECONDS" -ge "$DEADLINE" ]; then
    echo "[$i/${#runs[@]}] $name: SKIPPED (time budget of ${DEADLINE}s used)"
    continue
  fi
  conf=""; [ "$allocator" = async ] && conf="backend:cudaMallocAsync"
  flags=(--batch "$batch"); [ "$kind" = train ] && flags+=(--train)
  bench_flags=(); [ -n "${MAX_STREAMS:-}" ] && bench_flags=(--max-streams "$MAX_STREAMS")
  start=$SECONDS
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout 300 "$BUILD/bin/nimble" bench --iterations "${ITERATIONS:-200}" \
    --iteration "$RANGES" "${bench_flags[@]}" -o "$OUT/runs/$name.json" -- python3 scripts/gpu/bench_model.py "$model" "${flags[@]}" \
    > "$OUT/runs/$name.log" 2>&1
  status=$?
  line=$(grep -h 'graph-nimble-streams\|error\|Error' "$OUT/runs/$name.log" | tail -1 | cut -c1-140)
  echo "[$i/${#runs[@]}] $name: exit $status in $((SECONDS - start))s ${line:+($line)}"
  gzip -f "$OUT/runs/$name.json" 2>/dev/null  # the trace, for timelines (nimble export reads it unzipped)
done
python3 scripts/gpu/experiment_report.py "$OUT/runs" "$OUT"
# One archive with the runs (traces, bench results, logs) next to the tables and charts.
tar czf "$OUT/experiment-runs.tar.gz" -C "$OUT" runs 2>/dev/null
