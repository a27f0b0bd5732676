#!/usr/bin/env bash
# GPU machine: why JAX with XLA's autotuning on runs slower under nimble run with nothing replayed,
# and what its steady step looks like (2026-11-28, H200: 0.75x, results apart from step 5).
#   1. XLA's autotuning choices (--xla_gpu_dump_autotune_results_to) of two plain processes, one
#      with libnimble.so preloaded idle and one under nimble run: does nimble change what XLA picks?
#   2. `nimble record` of steps 20-22 (CORPUS_PROFILE_STEPS) with command buffers on and off: the
#      steady step's tasks, threads and streams.
#   3. Interleaved pairs (plain, nimble run, idle, A/A) of the JAX program and of the DataLoader and
#      Trainer programs, 200 steps.
#   4. ("sequential") Does libnimble.so preloaded and idle slow JAX when processes are not pinned?
#      Plain and idle processes one after another, alternating, autotuning on and off.
#   scripts/gpu/autotune_probe.sh [all|sequential]   (build-gpu carried; writes $OUT/probe.tgz)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out=${OUT:?"set OUT"}/probe
mkdir -p "$out"
nimble="$root/build-gpu/bin/nimble"
lib="$root/build-gpu/lib/libnimble.so"
cd "$root/tests/programs"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
if [ "${1:-all}" = sequential ]; then
  for tuning in on off; do
    flags=""; [ $tuning = off ] && flags="--xla_gpu_autotune_level=0"
    for k in 1 2 3 4; do
      for cfg in plain idle; do
        preload=""; [ $cfg = idle ] && preload="$lib"
        STEPS=100 XLA_FLAGS="$flags" LD_PRELOAD="$preload" timeout 100 python3 jax_flax_train.py > "$out/seq-$tuning-$cfg-$k.log" 2>&1
        echo "autotuning $tuning $cfg $k: $(grep -o '"tail_ms": [0-9.]*' "$out/seq-$tuning-$cfg-$k.log")"
      done
    done
  done | tee "$out/sequential.txt"
  cd "$out/.." && tar czf probe.tgz probe
  exit 0
fi
for cfg in plain-a plain-b idle run; do
  flags="--xla_gpu_dump_autotune_results_to=$out/autotune-$cfg.txt"
  case $cfg in
    plain-*) STEPS=60 XLA_FLAGS="$flags" timeout 120 python3 jax_flax_train.py > "$out/jax-$cfg.log" 2>&1 ;;
    idle) STEPS=60 XLA_FLAGS="$flags" LD_PRELOAD="$lib" timeout 120 python3 jax_flax_train.py > "$out/jax-$cfg.log" 2>&1 ;;
    run) STEPS=60 XLA_FLAGS="$flags" NIMBLE_DEBUG=1 timeout 120 "$nimble" run -o "$out/jax-run.json" -- python3 jax_flax_train.py > "$out/jax-$cfg.log" 2>&1 ;;
  esac
  echo "$cfg exit $? $(grep -o '"tail_ms": [0-9.]*' "$out/jax-$cfg.log") $(grep -o '"digest": "[0-9a-f]*"' "$out/jax-$cfg.log") $(wc -c < "$out/autotune-$cfg.txt" 2>/dev/null) bytes of choices"
done
for cfg in plain-b idle run; do cmp -s "$out/autotune-plain-a.txt" "$out/autotune-$cfg.txt" && echo "choices $cfg = plain-a" || echo "choices $cfg differ from plain-a"; done
for buffers in on off; do
  flags=""; [ $buffers = off ] && flags="--xla_gpu_enable_command_buffer="
  STEPS=30 CORPUS_PROFILE_STEPS=20:23 XLA_FLAGS="$flags" timeout 120 "$nimble" record -o "$out/steps-buffers-$buffers.json" \
    -- python3 jax_flax_train.py > "$out/record-buffers-$buffers.log" 2>&1
  echo "record buffers $buffers exit $?: $(grep -m1 'wrote' "$out/record-buffers-$buffers.log")"
done
cd "$root/scripts/gpu"
timeout 200 python3 process_pairs.py --interleaved --pin 5 --pairs 1 --idle --aa --out "$out/pairs-jax" jax_autotune:300 > "$out/pairs-jax.txt" 2>&1
tail -n +3 "$out/pairs-jax/pairs.md"
timeout 200 python3 process_pairs.py --interleaved --pin 5 --pairs 1 --idle --out "$out/pairs-torch" \
  dataloader_workers:200 hf_trainer:200 > "$out/pairs-torch.txt" 2>&1
tail -n +3 "$out/pairs-torch/pairs.md"
cd "$out/.." && tar czf probe.tgz probe
