#!/usr/bin/env bash
# JAX on the GPU machine, both ways XLA launches work (issue 16), run from the repository root:
#   scripts/jax_graphs.sh [PROGRAM.py ...]      (default: scripts/gpu/jax_prog.py)
# For each program and each mode -- XLA's defaults (command buffers: the step is CUDA graphs
# XLA builds node by node) and command buffers off (kernels launched one by one) -- it runs:
#   nimble record  (summary: tasks by kind, coverage against CUPTI),
#   nimble bench   (the recorded step replayed without JAX: 1 stream, Nimble streams, memory check),
#   plain and nimble run (the printed results must be identical).
# Autotuning is off (--xla_gpu_autotune_level=0) and XLA's deterministic ops are on (scatter-add
# in an embedding's gradient uses atomics otherwise), so two processes compute the same bits.
# Logs and results go to $OUT (default /tmp/nimble-jax); traces to build-gpu/gpu-traces/jax.
set -u
root=$(pwd)
OUT=${OUT:-/tmp/nimble-jax}
mkdir -p "$OUT"
exec > >(tee "$OUT/jax_graphs.log") 2>&1
BUILD=${NIMBLE_BUILD_DIR:-build-gpu}
if [ -f "$BUILD/CMakeCache.txt" ] && [ ! -e /work/main/CMakeLists.txt ]; then mkdir -p /work && ln -sfn "$root" /work/main; fi
nimble="$root/$BUILD/bin/nimble"
traces="$root/$BUILD/gpu-traces/jax"
mkdir -p "$traces"
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(scripts/gpu/jax_prog.py)
DEADLINE=${NIMBLE_GPU_DEADLINE:-540}
common="--xla_gpu_autotune_level=0 --xla_gpu_deterministic_ops=true"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
# What a run computed: jax_prog's printed weight, or a corpus program's digest over all steps.
results() {
  python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("CORPUS "):
        r = json.loads(line[7:]); print("digest", r["digest"], "steps", r["steps"])
    elif line.startswith("jax_prog:"):
        print(line.strip())'
}
for prog in "${programs[@]}"; do
  name=$(basename "$prog" .py)
  for mode in defaults no-command-buffers; do
    if [ "$SECONDS" -ge "$DEADLINE" ]; then echo "SKIPPED (time): $name $mode"; continue; fi
    flags=$common
    [ "$mode" = no-command-buffers ] && flags="$common --xla_gpu_enable_command_buffer="
    t="$traces/$name${TASK:+-$TASK}-$mode.json"
    # Programs that bracket a step with cuProfilerStart/Stop are recorded there; the others (the
    # corpus programs, written as people write them) with the automatic range.
    range=()
    grep -q cuProfilerStart "$prog" || range=(--capture-range auto)
    printf '\n===== %s, %s (XLA_FLAGS=%s) =====\n' "$name" "$mode" "$flags"
    echo "--- nimble record"
    XLA_FLAGS=$flags timeout 120 "$nimble" record "${range[@]}" -o "$t" -- python3 "$prog" 2>&1 | grep -v "^W0000\|^I0000" | tail -14
    [ -f "$t" ] && python3 - "$t" <<'PY'
import collections, json, sys
t = json.load(open(sys.argv[1]))
kinds = collections.Counter(x["kind"] for x in t["tasks"])
launches = [x for x in t["tasks"] if x["kind"] == "graph_launch"]
opaque = [x.get("opaque_because") for x in t["tasks"] if x["kind"] == "graph"]
in_graphs = sum(1 for x in t["tasks"] if "graph_launch" in x)
reasons = collections.Counter(r for x in t["tasks"] for r in x.get("dep_reasons", {}).values())
print("kinds", dict(kinds), "| graph launches", len(launches), "nodes", in_graphs, "| opaque", opaque)
print("coverage", t.get("coverage"))
print("edge reasons", dict(reasons.most_common(6)))
PY
    echo "--- nimble bench"
    XLA_FLAGS=$flags timeout 150 "$nimble" bench "${range[@]}" -o "${t%.json}-bench.json" -- python3 "$prog" 2>&1 \
      | sed -n '/^bench (/,$p' | head -16
    echo "--- plain vs nimble run"
    plain=$(XLA_FLAGS=$flags timeout 90 python3 "$prog" 2>&1 | results)
    again=$(XLA_FLAGS=$flags timeout 90 python3 "$prog" 2>&1 | results)
    [ "$plain" = "$again" ] || echo "NOTE: two plain runs differ ($plain / $again): the program is not deterministic"
    run=$(XLA_FLAGS=$flags timeout 120 "$nimble" run -- python3 "$prog" 2>&1 | grep -v "^W0000\|^I0000")
    echo "plain: $plain"
    echo "$run" | grep -i "^nimble" | tail -4 | cut -c1-300
    ran=$(echo "$run" | results)
    echo "run:   $ran"
    [ -n "$plain" ] && [ "$plain" = "$ran" ] && echo "RESULT identical" || echo "RESULT DIFFERS"
  done
done
tar czf "$OUT/jax-traces.tar.gz" -C "$traces" . 2>/dev/null
