#!/usr/bin/env bash
# GPU machine: the JAX/flax training program under nimble run with XLA's command buffers on
# (default) and off, each with autotuning on (XLA's default) and off; NIMBLE_DEBUG=1 logs show
# when the iteration was found. Prints a summary line per variant ($OUT/jax-variants.txt) and packs
# the logs and summaries (NAME.log, NAME.run.json) into $OUT/jax-variants.tgz.
#   scripts/gpu/jax_variants.sh [STEPS]
set -uo pipefail
cd "$(dirname "$0")/../../tests/programs"
OUT=${OUT:-/tmp/nimble-jax}
dir="$OUT/jax-variants"
mkdir -p "$dir"
nimble=../../build-gpu/bin/nimble
steps=${1:-200}
declare -A flags=(
  [buffers-on-autotune-off]="--xla_gpu_autotune_level=0"
  [buffers-off-autotune-off]="--xla_gpu_autotune_level=0 --xla_gpu_enable_command_buffer="
  [buffers-on-autotune-on]=""
  [buffers-off-autotune-on]="--xla_gpu_enable_command_buffer="
)
for name in buffers-on-autotune-off buffers-off-autotune-off buffers-on-autotune-on buffers-off-autotune-on; do
  STEPS=$steps XLA_FLAGS="${flags[$name]}" XLA_PYTHON_CLIENT_PREALLOCATE=false NIMBLE_DEBUG=1 \
    timeout 120 "$nimble" run -o "$dir/$name.json" -- python3 jax_flax_train.py 2>&1 | grep -v '^CORPUS' | head -c 200000 > "$dir/$name.log"
  python3 - "$dir/$name.run.json" "$name" >> "$dir/summary.txt" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(sys.argv[2], "no summary:", e); sys.exit()
print(sys.argv[2], "replayed", d.get("iterations_replayed"), "program graphs", d.get("program_graphs_run_in_place"),
      "fallbacks", sum(f["count"] for f in d.get("fallbacks", [])), "recordings",
      [(r.get("calls"), r.get("state"), r.get("trial_speedup")) for r in d.get("recordings", [])],
      d.get("nothing_replayed_because", ""))
PY
  rm -f "$dir/$name.json" "$dir"/$name.[0-9]*.json
done
cat "$dir/summary.txt" | tee "$OUT/jax-variants.txt"
tar czf "$OUT/jax-variants.tgz" -C "$dir" . && rm -rf "$dir"
