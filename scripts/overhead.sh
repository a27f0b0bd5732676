#!/usr/bin/env bash
# Idle overhead of the preloaded library (issue 3: within 2% of the plain loop), measured so that
# machine noise cancels: ROUNDS pairs of runs of the eager ResNet-50 batch-1 loop
# (scripts/gpu/overhead.py), plain and with LD_PRELOAD=libnimble.so (no recording), alternating
# which goes first, pinned to the same cores. Reports the median of the per-pair ratios.
#   scripts/overhead.sh            (GPU machine; OUT, NIMBLE_BUILD_DIR=build-gpu, ROUNDS=8)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/nimble-overhead}
BUILD=${NIMBLE_BUILD_DIR:-build-gpu}
preload="$(pwd)/$BUILD/lib/libnimble.so"
mkdir -p "$OUT"
results="$OUT/overhead.jsonl"
: > "$results"
export ITERATIONS=${ITERATIONS:-500} PYTHONUNBUFFERED=1
pin="taskset -c 2-5"; command -v taskset > /dev/null || pin=""
one() {  # one run: $1 = plain|preload-idle, $2 = round
  local line
  if [ "$1" = plain ]; then line=$($pin python3 scripts/gpu/overhead.py | tail -1)
  else line=$(LD_PRELOAD="$preload" $pin python3 scripts/gpu/overhead.py | tail -1); fi
  echo "$line" | python3 -c "import json,sys; r=json.load(sys.stdin); r.update(config='$1', round=$2); print(json.dumps(r))" \
    >> "$results" || echo "round $2 $1: no measurement ($line)"
}
for round in $(seq 1 "${ROUNDS:-8}"); do
  if [ $((round % 2)) = 1 ]; then one plain "$round"; one preload-idle "$round"
  else one preload-idle "$round"; one plain "$round"; fi
  echo "round $round: $(tail -2 "$results" | python3 -c "import json,sys; print(' '.join(f\"{json.loads(l)['config']} {json.loads(l)['median_ms']:.3f} ms\" for l in sys.stdin))")"
done
python3 - "$results" <<'PY' | tee "$OUT/overhead.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["round"], {})[r["config"]] = r["median_ms"]
pairs = [(v["plain"], v["preload-idle"]) for v in by.values() if "plain" in v and "preload-idle" in v]
ratios = sorted(b / a for a, b in pairs)
plain = [a for a, _ in pairs]
idle = [b for _, b in pairs]
q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
print(f"| eager ResNet-50 batch 1 | pairs | plain median ms (min..max) | preloaded idle median ms (min..max) | overhead: median of pair ratios (quartiles) | overhead: best vs best |")
print("|---|---|---|---|---|---|")
print(f"| {rows[0].get('iterations', '?')} iterations a run | {len(pairs)} | {statistics.median(plain):.3f} ({min(plain):.3f}..{max(plain):.3f}) | "
      f"{statistics.median(idle):.3f} ({min(idle):.3f}..{max(idle):.3f}) | {100 * (statistics.median(ratios) - 1):+.2f}% "
      f"({100 * (q[0] - 1):+.2f}%..{100 * (q[2] - 1):+.2f}%) | {100 * (min(idle) / min(plain) - 1):+.2f}% |")
PY
