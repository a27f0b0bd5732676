#!/usr/bin/env bash
# `nimble run` on torchvision models (GPU machine): correctness against a plain run, and speed.
#
#   scripts/run_models.sh check [MODELS...]   DETERMINISTIC=1, ITERATIONS=100: every iteration's
#                                             output digest under nimble run equals the plain run's
#   scripts/run_models.sh train [MODELS...]   training steps (batch TRAIN_BATCH, 50 steps): losses
#                                             and final weights equal
#   scripts/run_models.sh shape [MODEL]       batch changes for 3 iterations mid-run: still equal,
#                                             and the summary shows the fall-back
#   scripts/run_models.sh speed [MODELS...]   plain vs nimble run, PAIRS alternating pairs each;
#                                             ratio of median iteration times (wall clock)
#   scripts/run_models.sh compare [MODELS...] one process per model: `nimble run --compare BLOCK`
#                                             alternates blocks of replayed and plain iterations
#                                             and times both (the ratio is immune to the process-
#                                             to-process spread of these machines); TRAIN=1 for
#                                             training steps
#
# Results: $RESULTS (default $OUT or run-results)/*.log and run-results.csv (one row per run pair).
# The recorded iteration is bracketed by torch.cuda.profiler.start/stop (PROFILE_ITERATION, 10);
# RANGE=auto leaves the loop unmarked and lets nimble find the iteration itself.
# Env: NIMBLE (build-gpu/bin/nimble, else build/bin/nimble), PAIRS (2), ITERATIONS, TIMED,
# TRAIN_BATCH (32), DEADLINE (seconds; models not started by then are reported as skipped).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/run_models.sh check|train|shape|speed [MODELS...]}
shift
default_models=(resnet50 inception_v3 googlenet mobilenet_v2 densenet121 squeezenet1_1 efficientnet_b0
                resnext50_32x4d shufflenet_v2_x1_0 vit_b_16)
case "$mode" in
  check) models=("${@:-resnet50 inception_v3 googlenet densenet121}") ;;
  train) models=("${@:-resnet18}") ;;
  shape) models=("${@:-resnet50}") ;;
  speed|compare) if (($#)); then models=("$@"); else models=("${default_models[@]}"); fi ;;
  *) echo "run_models: unknown mode $mode (check, train, shape, speed or compare)" >&2; exit 2 ;;
esac
# "${@:-a b}" gives one word: split it.
[ "$mode" != speed ] && [ "$mode" != compare ] && read -r -a models <<< "${models[*]}"
nimble=${NIMBLE:-}
[ -z "$nimble" ] && { [ -x build-gpu/bin/nimble ] && nimble=build-gpu/bin/nimble || nimble=build/bin/nimble; }
results=${RESULTS:-${OUT:-run-results}}
mkdir -p "$results"
csv="$results/run-results.csv"
[ -f "$csv" ] || echo "mode,model,batch,plain_ms,nimble_ms,speedup,equal,replayed,fallbacks" > "$csv"
deadline=$(( $(date +%s) + ${DEADLINE:-100000} ))
pin="taskset -c 2-5"; command -v taskset > /dev/null || pin=""  # both runs on the same cores
if [ "${RANGE:-profiler}" = auto ]; then
  range_args=(--capture-range auto)
else
  range_args=(--capture-range cudaProfilerApi --iteration 1)
  export PROFILE_ITERATION=${PROFILE_ITERATION:-10}
fi
failures=0

# run_pair NAME EXTRA_ARGS...: one plain run and one nimble run; echoes "plain_ms nimble_ms equal replayed fallbacks".
# The order alternates with the pair number (odd: plain first), so drift over time cancels.
run_pair() {
  local tag=$1 order=$2; shift 2
  local log="$results/$tag"
  plain() { $pin python3 scripts/gpu/run_model.py "$@" > "$log.plain.log" 2> "$log.plain.err"; }
  under_nimble() {
    $pin "$nimble" run "${range_args[@]}" -o "$log.trace.json" -- python3 scripts/gpu/run_model.py "$@" \
      > "$log.nimble.log" 2> "$log.nimble.err"
  }
  if [ "$order" = plain-first ]; then
    plain "$@" || { echo "FAILED plain"; return 1; }
    under_nimble "$@" || { echo "FAILED nimble"; return 1; }
  else
    under_nimble "$@" || { echo "FAILED nimble"; return 1; }
    plain "$@" || { echo "FAILED plain"; return 1; }
  fi
  local equal=yes
  diff <(grep -E '^(iteration|weights) ' "$log.plain.log") <(grep -E '^(iteration|weights) ' "$log.nimble.log") \
    > "$log.diff" || equal=no
  python3 - "$log" "$equal" <<'PY'
import json, sys
log, equal = sys.argv[1], sys.argv[2]
last = lambda f: json.loads([l for l in open(f) if l.startswith("{")][-1])
plain, nim = last(log + ".plain.log"), last(log + ".nimble.log")
try:
    run = json.load(open(log + ".trace.run.json"))
    replayed, fallbacks = run["iterations_replayed"], sum(f["count"] for f in run["fallbacks"])
except Exception:
    replayed, fallbacks = 0, "no-summary"
print(f'{plain["median_ms"]:.3f} {nim["median_ms"]:.3f} {equal} {replayed} {fallbacks}')
PY
}

# compare_one MODEL ARGS...: one nimble run --compare process; echoes "plain_ms nimble_ms replayed fallbacks".
compare_one() {
  local log="$results/compare-${1//\//_}${TRAIN:+-train}"
  shift
  $pin "$nimble" run "${range_args[@]}" --compare "${BLOCK:-10}" -o "$log.trace.json" -- \
    python3 scripts/gpu/run_model.py "$@" > "$log.log" 2> "$log.err" || { echo "FAILED"; return 1; }
  python3 - "$log.trace.run.json" <<'PY'
import json, sys
try:
    run = json.load(open(sys.argv[1]))
    c = run["compare"]
    print(f'{c["plain"]["median_ms"]:.3f} {c["replayed"]["median_ms"]:.3f} {run["iterations_replayed"]} '
          f'{sum(f["count"] for f in run["fallbacks"])}')
    lib = run.get("library", {})
    skipped = ", ".join(f'{k} {v["skipped"]}/{v["calls"]}' for k, v in lib.get("calls", {}).items())
    print(f'library calls skipped: {skipped or "none"}; heuristics from memory: '
          f'{lib.get("heuristics_answered_from_memory", 0)}; never skipped: {len(lib.get("never_skipped", []))}',
          file=sys.stderr)
except Exception as e:
    print("FAILED", e)
PY
}

for model in "${models[@]}"; do
  if (( $(date +%s) > deadline )); then echo "run_models: $model skipped (DEADLINE)"; continue; fi
  if [ "$mode" = compare ]; then
    args=("$model"); batch=1
    [ "${TRAIN:-0}" = 1 ] && { batch=${TRAIN_BATCH:-32}; args+=(--train --batch "$batch"); }
    echo "run_models: compare $model (batch $batch)..."
    line=$(export ITERATIONS=${ITERATIONS:-200} TIMED=${TIMED:-100}; compare_one "$model" "${args[@]}")
    echo "  $line"
    read -r plain_ms nimble_ms replayed fallbacks <<< "$line"
    if [ "$plain_ms" = FAILED ]; then failures=$((failures + 1)); continue; fi
    speedup=$(python3 -c "print(f'{$plain_ms / $nimble_ms:.3f}')")
    echo "compare,$model,$batch,$plain_ms,$nimble_ms,$speedup,n/a,$replayed,$fallbacks" >> "$csv"
    continue
  fi
  args=("$model"); batch=1
  envs=()
  case "$mode" in
    check) envs=(DETERMINISTIC=1 ITERATIONS=${ITERATIONS:-100} TIMED=50) ;;
    train) batch=${TRAIN_BATCH:-32}; args+=(--train --batch "$batch"); envs=(DETERMINISTIC=1 ITERATIONS=${ITERATIONS:-50} TIMED=25) ;;
    shape) envs=(DETERMINISTIC=1 ITERATIONS=${ITERATIONS:-80} TIMED=20 SHAPE_CHANGE_AT=40) ;;
    speed) envs=(ITERATIONS=${ITERATIONS:-150} TIMED=${TIMED:-100}) ;;
  esac
  pairs=1; [ "$mode" = speed ] && pairs=${PAIRS:-2}
  for ((p = 1; p <= pairs; ++p)); do
    echo "run_models: $mode $model (pair $p/$pairs)..."
    order=plain-first; ((p % 2 == 0)) && order=nimble-first
    line=$(export "${envs[@]}"; run_pair "$mode-${model//\//_}-$p" "$order" "${args[@]}")
    echo "  $line"
    read -r plain_ms nimble_ms equal replayed fallbacks <<< "$line"
    if [ "$plain_ms" = FAILED ]; then failures=$((failures + 1)); continue; fi
    speedup=$(python3 -c "print(f'{$plain_ms / $nimble_ms:.3f}')")
    echo "$mode,$model,$batch,$plain_ms,$nimble_ms,$speedup,$equal,$replayed,$fallbacks" >> "$csv"
    # Speed runs pick algorithms by timing (cudnn.benchmark): two processes need not agree bitwise.
    if [ "$equal" != yes ] && [ "$mode" != speed ]; then
      echo "  results DIFFER (see $results/$mode-$model-$p.diff)"; failures=$((failures + 1))
    fi
  done
done
# Per model: the median of its pairs' ratios; then their geometric mean.
python3 - "$csv" "$mode" > "$results/run-summary-$mode.md" <<'PY'
import csv, math, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mode"] == sys.argv[2]]
models = list(dict.fromkeys(r["model"] for r in rows))
print("| model | pairs | plain ms (median) | nimble run ms (median) | speedup (median of pairs) | replayed | fall-backs |")
print("| --- | --- | --- | --- | --- | --- | --- |")
ratios = []
for m in models:
    rs = [r for r in rows if r["model"] == m]
    ratio = statistics.median(float(r["speedup"]) for r in rs)
    ratios.append(ratio)
    print(f'| {m} | {len(rs)} | {statistics.median(float(r["plain_ms"]) for r in rs):.2f} | '
          f'{statistics.median(float(r["nimble_ms"]) for r in rs):.2f} | {ratio:.2f}x | '
          f'{"/".join(r["replayed"] for r in rs)} | {"/".join(r["fallbacks"] for r in rs)} |')
if ratios:
    print(f"\ngeometric mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}x, "
          f"lowest {min(ratios):.2f}x ({models[ratios.index(min(ratios))]})")
PY
cat "$results/run-summary-$mode.md"
[ "$mode" = compare ] && python3 scripts/gpu/inprocess_report.py "$results" > /dev/null
echo "run_models: done, $failures failure(s); $csv"
exit $((failures > 0))
