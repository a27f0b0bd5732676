#!/usr/bin/env bash
# Interleaved process pairs of every corpus program, split into parts that each fit one
# device call (600 s), as measured on the H200 on 2026-11-28 (docs/benchmarks/sweep-h200-nov28):
#   1  ctest -L gpu, then 11 programs in deterministic mode, one pair each      (~400 s)
#   2  ctest -L gpu; generate, the programs with their own graphs, JAX, CuPy, DDP; A/A pairs;
#      benchmark mode on 4 programs                                             (~430 s)
#   3  ctest -L gpu; benchmark mode on the other 8 programs                     (~330 s)
#   4  generate at 160 calls: two pairs under nimble run, two idle, one A/A      (~330 s)
#      (docs/benchmarks/generate-h200-nov28: one pair resolves about 3%)
#   5  DDP under torchrun across two GPUs (the nvidia-h200-x2 kind), resnet18 and resnet50, twice:
#      identical ranks, valid traces, nimble run's exit status plain's  (~170 s)
#      (docs/benchmarks/sweep-h200-nov28c)
#   6  never slower? The three programs whose single pairs read 0.97-0.985 on 2026-11-28 (JAX,
#      generate, reduce-overhead: replay does not pay, their recordings rest or drop), three pairs
#      (generate two) and an A/A pair each                                 (~450 s; H200 2026-11-28)
#   7  ctest -L gpu; the programs added on 2026-11-28 (DataLoader workers, GPT-2 fine-tuning with
#      dropout and checkpointing, HF Trainer, JAX with XLA's autotuning on) through corpus.py,
#      both modes, nimble's debug log on                                          (~450 s)
#   8  the three new PyTorch programs at 200 steps in interleaved pairs with the idle library,
#      deterministic and benchmark mode     (483 s; the last idle pair, hf_trainer in benchmark
#      mode, cut by its deadline: docs/benchmarks/sweep-h200-nov28e)
#   9  never slower? The DataLoader program (its pairs read 0.87-0.93 and the idle library's
#      0.95-0.97 on 2026-11-28, with no A/A pair): three pairs, A/A and idle
#      (194 s; H200 2026-11-28: pairs 1.00, A/A 1.003: docs/benchmarks/jax-h200-nov28)
#  10  why JAX with XLA's autotuning repeats nothing free-running: nimble run with NIMBLE_DEBUG=1,
#      command buffers on and off, whose logs end with the last 256 calls the automatic range
#      looked at (thread and stream of each)            (60 s; H200 2026-11-28: docs/benchmarks/jax-h200-nov28)
#  11  JAX with side threads (transfer threads' calls the program's own) and quiet-by-cadence
#      detection: part 10, then one interleaved pair of each JAX program at 800 steps
#      (~160 s with part 10; H200 2026-11-28: docs/benchmarks/jax-h200-nov28)
#  12  never slower? JAX found and replayed: three pairs and an A/A pair of jax_flax_train and of
#      jax_autotune_no_buffers at 800 steps  (run by hand under a 300 s deadline on the H200,
#      2026-11-28, which cut the second program's A/A pair; here the deadline is 540 s)
#  13  ctest -L gpu; never slower? HF Trainer in deterministic mode (its trials read 0.92-0.96x
#      and its one pinned pair 0.96 on 2026-11-28): three pairs, A/A and idle at 200 steps; one
#      nimble run of JAX whose summary counts the side threads' calls              (~450 s)
#  14  never slower? HF generate (40 calls, turns of 2 calls): four pairs and an A/A pair; HF
#      Trainer (deterministic) in turns of 5 steps (its steps swing between 21 and 35 ms in
#      stretches of seconds, so part 13's turns of 20 could not resolve it): three pairs, A/A (~500 s)
#  15  where HF generate's 2-6% under nimble run go (part 14: four pairs 0.94-0.98 with the
#      recording resting, A/A 0.997): perf profiles (cpu-clock, by library and symbol) of a plain
#      run and of nimble run over calls 50-160, then pairs with the idle library and with nimble
#      run that never looks again (NIMBLE_RUN_STALE=100000000)                       (~400 s)
#  16  HF generate under nimble run with NIMBLE_DEBUG=1 (its lines stamped with the clock of the
#      program's loop_start_monotonic_s): when does nimble look again, and which calls slow down? (~60 s)
#  17  ctest -L gpu; HF generate again: three pairs and A/A with nimble run's defaults, three
#      pairs with NIMBLE_RUN_STALE=100000000 (part 15's two such pairs read 1.02 against part 14's
#      0.96; part 16's timeline showed no slower call while nimble looked again)       (~330 s)
#  18  HF generate with NIMBLE_RUN_TRIALS=1: its first trial drops the recording and nimble run
#      stops for good (the wrappers' idle path): is part 17's 0.96 the resting state's per-call
#      path or what the process holds after replaying?  Three pairs, one idle pair       (~170 s)
#  19  ctest -L gpu; HF generate, three pairs, after moving buffers drop the recording at once
#      (part 18 did so with NIMBLE_RUN_TRIALS=1)                                       (~150 s)
#  20  ctest -L gpu (with gpu_run_loop_dropped: a dropped recording's graphs given back); two
#      programs never run under nimble before (a Llama-style LM trained with SDPA and GQA, a ViT
#      evaluation loop with a running accuracy read every batch): one interleaved pair each,
#      deterministic and benchmark mode, 200 steps                                     (~400 s)
#  21  a third unseen program: training that saves checkpoints every 25 steps and empties
#      PyTorch's allocator cache after each (buffers may move), validation every 50 steps; one
#      interleaved pair, deterministic mode, 200 steps                                  (~120 s)
#  22  never slower? That program (part 21: its recording dropped for moving buffers at warm-up, its
#      one pair 0.94-0.97): three pairs, A/A and idle at 200 steps                      (217 s)
#  23  four more programs never run under nimble before (PyTorch Lightning; BERT with dynamic
#      padding; an LSTM language model; Faster R-CNN evaluation): one interleaved pair each,
#      deterministic mode, 200 steps                                                   (185 s)
#  24  ctest -L gpu; never slower? The LSTM language model (part 23: replayed at 0.63 of plain, its
#      iteration cut into 190 graphs of 2.5 calls by cuDNN's event records and waits; now refused):
#      two pairs, idle and A/A at 200 steps                                             (~200 s)
#  25  ctest -L gpu; why Lightning's recording fell back at its fifth call (part 23): two of its
#      steps recorded with `nimble record` (steps 10 and 11, one trace) and nimble run with its
#      debug log; BERT with dynamic padding under nimble run, for its summary      (~200 s)
#  26  ctest -L gpu; after the end reads (fe304e3) and resting looks (NIMBLE_RUN_LOOK): Lightning,
#      two pairs and A/A at 200 steps; BERT with dynamic padding at 400 steps (looking rests after
#      131072 tasks, about step 200: the tail is the resting state), two pairs and idle; Faster
#      R-CNN evaluation at 200 steps (rests from about step 85), one pair and idle     (~450 s)
#  27  Lightning with the trial off (NIMBLE_RUN_TRIAL=0: part 26 dropped its recording after 4
#      warm-up iterations for moving buffers; would replay pay?), two pairs; two programs never run
#      under nimble before (a DCGAN as PyTorch's tutorial trains it; PPO on host-simulated
#      cart-poles, a sync every environment step): one pair and A/A each           (~300 s)
#  28  ctest -L gpu; never slower? PPO (part 27: one pair 0.85 with its recording dropped at its
#      fourth iteration and nimble idle after, A/A's best window 1.10): two pairs in turns of one
#      step, idle and A/A; four DCGAN steps recorded in one trace, to see how its buffers move (~250 s)
#  29  ctest -L gpu; a fourth set never run under nimble before: timm's training recipe by hand (EMA,
#      per-step cosine schedule), a U-Net with fp16 GradScaler and a running IoU, a transformer with
#      activation checkpointing and accumulation, torch.compile of a training step with AMP; one
#      pair each, deterministic mode                                                    (~500 s)
#  30  what node updates cost (device_update_cost.cu: host-side writes against one kernel applying them
#      all on the device, 8- and 512-byte parameters, the GPU idle or busy); part 29's three programs
#      whose recordings were dropped for drifting buffers, trusted at once (NIMBLE_RUN_TRIAL=0)  (~350 s)
#  31  ctest -L gpu; recordings whose buffers drift go on to their trial (d61a2e4): part 29's three,
#      Lightning and the DCGAN (whose trusted replay did not pay: the trial must drop them), one
#      pair each at 200 steps; HF generate, one pair in turns of 2 calls                   (~480 s)
#  32  ctest -L gpu; a recording whose buffers move and whose graph variants never settle (HF
#      generate: part 31 read 0.96 with it on trial) dropped after its warm-up again: generate, one
#      pair in turns of 2 calls; the timm, U-Net and DCGAN programs, one pair each at 200 steps (~330 s)
#  33  ctest -L gpu; NIMBLE_RUN_TRIAL_MOVING=1 (a drifting recording's trial decides; the default drops
#      it after its warm-up, as part 32's rule did not tell generate from the programs that pay): the
#      timm, U-Net and DCGAN programs, one pair each at 200 steps; generate by default, one pair (~360 s)
#  34  ctest -L gpu; a further graph exec only for parameters that come again (4af9006, reverted), drifting
#      recordings on trial (NIMBLE_RUN_TRIAL_MOVING=1): timm, U-Net, DCGAN and Lightning, one pair each
#      at 200 steps; HF generate, one pair; Lightning on eight vCPUs (--pin 4-11: its two DataLoader
#      workers and pin-memory thread share part 31's one vCPU with the step), one pair and A/A (~480 s)
#  35  ctest -L gpu; the 11-program deterministic regression of part 1 after the exec rule (4af9006) and
#      the two-kinds rule (HF generate's trial, part 34: 1.47x for a process at 0.96x); HF generate with
#      NIMBLE_RUN_TRIAL_MOVING=1, one pair                                                 (~560 s)
#  36  ctest -L gpu; after reverting the exec rule (part 35: the timm EfficientNet, ResNet-18 AMP/AdamW
#      and GoogLeNet programs dropped for moving buffers): those three, one pair each; HF generate with
#      NIMBLE_RUN_TRIAL_MOVING=1 (the two-kinds rule), one pair                          (~300 s)
#  37  ctest -L gpu; the three drifting programs whose recordings were never on trial (the DataLoader
#      program, training that saves checkpoints, PPO's rollouts) with NIMBLE_RUN_TRIAL_MOVING=1 (run on
#      1727091, where it was the default, since reverted), one pair each          (172 s; H200 2026-11-29)
#  38  what those three do after their trial drops them (part 37's tails read 0.955-0.988, after the
#      trial), and PyTorch's ImageNet example's loop (zero_grad between forward and backward, and
#      before): each run plain, then under nimble run with NIMBLE_RUN_TRIAL_MOVING=1 and by default,
#      step maps with nimble's debug log (scripts/gpu/step_map.sh), step times per window   (~450 s)
#  39  the ImageNet example's loop differed from plain from step 10 under nimble run (part 38, both
#      zero_grad placements): which setting changes that (scripts/gpu/settings_bisect.sh, 40 steps)
#      (H200 2026-11-29: only NIMBLE_RUN_SKIP_LIBRARY=0 made it identical)               (174 s)
#  40  ctest -L gpu; the same with every remembered library call run and compared
#      (NIMBLE_RUN_LIBRARY_RECHECK=1): identical, and which call sites' keys miss an input? (~200 s)
#      (H200 2026-11-29: identical, no site's launches ever differed; skipping made it differ)
#  41  which library's skipped calls change the results: only cuDNN's, then only cuBLASLt's
#      (NIMBLE_RUN_SKIP_CALLS), two runs each (the differing digests were not the same twice) (~200 s)
#      (H200 2026-11-29: cuDNN's, both times, with two different digests; cuBLASLt's alone identical)
#  42  ctest -L gpu; cuDNN always called (the new default): the ImageNet example's loop, both
#      zero_grad placements, 100 steps; three conv programs that skipped most of their cuDNN calls
#      (PNASNet, Inception v3, ResNet-18 AMP), one interleaved pair each                   (~450 s)
#      (H200 2026-11-29: identical, 88% replayed, 1.33x and 1.17x in process; pairs 1.13, 1.01, 1.15
#      where they read 1.29, 1.30, 1.29 with cuDNN's calls skipped)                        (169 s)
#  43  a race? cuDNN's calls skipped with every launch synchronous (CUDA_LAUNCH_BLOCKING=1), twice (~150 s)
#      (H200 2026-11-29: identical both times, 799 of 1437 cuDNN calls skipped)            (53 s)
#  44  cuDNN's batch-norm kernels read and write counters in page-locked host memory: the same loop
#      with GroupNorm instead, cuDNN's calls skipped, twice, trusted at once (NIMBLE_RUN_TRIAL=0: its
#      buffers drift; by default its recording is dropped after its warm-up)          (~100 s)
#      (H200 2026-11-29: one of two runs differed, at step 12: not the batch-norm kernels) (41 s)
#  45  the race of skipped cuDNN calls (parts 39-44), for the next session (not yet run): every other
#      use skipped (NIMBLE_RUN_LIBRARY_RECHECK=2), then NIMBLE_HOST_TIMES=1 (every driver call counted,
#      plain and with cuDNN's calls skipped: what a cuDNN call does besides its launches), then 12 steps
#      under compute-sanitizer's memcheck with the calls skipped                          (~500 s?)
#
#   scripts/gpu/pairs_sweep.sh PART      (on the GPU machine, build-gpu carried; writes $OUT/sweep.tgz)
#
# Each part writes its tables and logs under a temporary PART-*/ and packs them into $OUT/sweep.tgz
# (the device tool brings back only a few files). A part cut short by its deadline keeps what
# it measured: process_pairs.py rewrites its tables after each program.
set -uo pipefail
part=${1:?"usage: pairs_sweep.sh PART (1 to 128; each case below says what it measures)"}
root="$(cd "$(dirname "$0")/../.." && pwd)"
results=${OUT:?"set OUT to the folder the results go to"}
# Everything is written apart from $OUT, which gets only sweep.tgz and the parts' text files: the
# device tool brings back a limited number of files (part 2's 60 left sweep.tgz behind on 2026-11-29).
out=${PAIRS_SWEEP_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/pairs-sweep.XXXXXX")}
export PAIRS_SWEEP_DIR=$out  # a part that runs another (11 runs 10) writes into the same folder
export PYTHONUNBUFFERED=1
mkdir -p /work
# The ctest files name /work/main: it must be this checkout.
[ "$(realpath /work/main 2>/dev/null)" = "$(realpath "$root")" ] || ln -sfn "$root" /work/main
cd "$root/scripts/gpu"
pairs() {  # NAME SECONDS ARGS...: one process_pairs.py run, its own folder and deadline
  local name=$1 seconds=$2; shift 2
  timeout "$seconds" python3 process_pairs.py --interleaved --pin 5 --out "$out/$part-$name" "$@" \
    > "$out/$part-$name.txt" 2>&1
  tail -n +3 "$out/$part-$name/pairs.md" 2>/dev/null
}
# New programs (parts 117, 121): an 8-step plain smoke run each, then one interleaved pair each in
# both modes (tables NAME and NAME-bench, each within SECONDS), their errors and nimble run's lines.
new_programs() {  # NAME SECONDS PROGRAM...
  local name=$1 seconds=$2; shift 2
  (cd "$root/tests/programs" && for prog in "$@"; do
    STEPS=8 timeout 60 python3 "$prog.py" > "$out/$part-$prog-smoke.txt" 2>&1 || tail -5 "$out/$part-$prog-smoke.txt"
  done)
  pairs "$name" "$seconds" --pairs 1 "$@"
  pairs "$name-bench" "$seconds" --pairs 1 --mode benchmark "$@"
  grep -H 'Error\|Traceback' "$out/$part-$name"*/*.log 2>/dev/null | head
  grep -h 'nimble run:' "$out/$part-$name"*/*.run.log 2>/dev/null | cut -c1-600 | head -40
}
bisect() {  # SECONDS PROGRAM STEPS VARIANT...: settings_bisect.sh (a CORPUS row per variant; bisect-PROGRAM.tgz)
  local seconds=$1; shift
  OUT=$results timeout "$seconds" bash "$root/scripts/gpu/settings_bisect.sh" "$@"
}
key_fields() { grep -o '"identical": [a-z]*\|"first_difference": [0-9]*\|"in_process": [0-9.]*\|"steady_share": [0-9.]*'; }
# The DataLoader script plain, then under nimble run with drifting recordings tried and its step map,
# step times per window in $out/$part-dataloader_workers.txt (parts 56, 57).
dataloader_moving_map() {
  (cd "$root/tests/programs" && STEPS=200 CORPUS_MODE=deterministic timeout 100 python3 dataloader_workers.py \
    > "$out/dataloader_workers-plain.log" 2>&1)
  OUT=$out/moving/dataloader_workers NIMBLE_RUN_TRIAL_MOVING=1 timeout 110 \
    bash "$root/scripts/gpu/step_map.sh" deterministic 200 dataloader_workers.py
  python3 step_windows.py "$out/dataloader_workers-plain.log" "$out"/moving/dataloader_workers/step-map/*.log \
    | tee "$out/$part-dataloader_workers.txt" | grep -v "calls skipped\|heuristics"
}
bucketed_debug() {  # the inference service under nimble run, 120 steps, NIMBLE_DEBUG=1: $out/bucketed-debug.log, traces beside
  (cd "$root/tests/programs" && STEPS=120 CORPUS_MODE=deterministic NIMBLE_DEBUG=1 timeout 150 \
    "$root/build-gpu/bin/nimble" run -o "$out/bucketed.json" -- python3 bucketed_inference.py > "$out/bucketed-debug.log" 2>&1)
}
service_pairs() {  # [--aa]: the inference service, 3 deterministic pairs with idle, 2 in benchmark mode; step medians
  pairs buckets3 280 --pairs 3 --idle "$@" bucketed_inference:200
  pairs buckets3-benchmark 200 --pairs 2 --idle --mode benchmark bucketed_inference:200
  python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets3" "$out/$part-buckets3-benchmark" > "$out/$part-step-medians.txt"
}
# The inference service once plain, once with the idle library and under nimble run by default, never
# looking again once it has recorded (NIMBLE_RUN_STALE) and with no trial, each with NIMBLE_HOST_TIMES=1
# (host time inside every intercepted call), 200 steps: $out/$part-host-times/, step medians and each
# run's "looking" (what its looks for iterations cost) in $out/$part-host-times.txt
service_host_times() {
  local ht=$out/$part-host-times
  mkdir -p "$ht"
  cd "$root/tests/programs"
  export STEPS=200 CORPUS_MODE=deterministic
  taskset -c 5 timeout 90 python3 bucketed_inference.py > "$ht/service.0.plain.log" 2>&1
  NIMBLE_HOST_TIMES=1 LD_PRELOAD="$root/build-gpu/lib/libnimble.so" taskset -c 5 timeout 90 python3 bucketed_inference.py \
    > "$ht/service.1.idle.log" 2>&1
  local variant
  for variant in default NIMBLE_RUN_STALE=1000000000 NIMBLE_RUN_TRIAL=0; do
    env NIMBLE_HOST_TIMES=1 ${variant/default/} taskset -c 5 timeout 90 "$root/build-gpu/bin/nimble" run \
      -o "$ht/${variant%%=*}.json" -- python3 bucketed_inference.py > "$ht/service.${variant%%=*}.run.log" 2>&1
  done
  unset STEPS CORPUS_MODE
  cd "$root/scripts/gpu"
  { python3 "$root/scripts/gpu/bucket_step_medians.py" "$ht"
    for f in "$ht"/*.run.json; do echo "$f $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("looking"))' "$f")"; done
    for f in "$ht"/*.log; do echo "== $f"; grep -A 14 "host time inside" "$f"; grep "automatic range looked" "$f"; done
  } > "$out/$part-host-times.txt" 2>&1
  head -40 "$out/$part-host-times.txt"
}
ctest_gpu() {  # the GPU tests of the carried build; their output in $out/ctest-gpu.txt, nimble run's summaries beside it
  (cd "$root/build-gpu" && ctest -L gpu) > "$out/ctest-gpu.txt" 2>&1
  tail -4 "$out/ctest-gpu.txt"
  cp "$root"/build-gpu/tests/interposer/apps/run-loop*.run.json "$out/" 2>/dev/null
  grep -o '"\(state\|released\)": [a-z"]*' "$out/run-loop-dropped.run.json" 2>/dev/null | tr '\n' ' '; echo
}
# The deterministic regression (parts 1 and 35), and nimble run with drifting recordings on trial.
regression=(timm_pnasnet timm_efficientnet inception_v3 gpt2_forward bert_train resnet18_amp_adamw
  epochs_eval_lastbatch googlenet_pinned compile_default side_streams grad_accum)
moving=run:NIMBLE_RUN_TRIAL_MOVING=1
case $part in
  1)
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
    ctest_gpu
    pairs deterministic 500 --pairs 1 "${regression[@]}"
    ;;
  2)
    ctest_gpu
    pairs generate 110 --pairs 1 --turn 2 gpt2_generate
    pairs own-graphs 230 --pairs 1 compile_reduce_overhead:2000 torch_cuda_graph cupy_loop jax_flax_train:800 ddp_one_rank
    pairs aa 110 --pairs 0 --aa timm_efficientnet bert_train jax_flax_train
    pairs benchmark 150 --pairs 1 --mode benchmark epochs_eval_lastbatch grad_accum bert_train resnet18_amp_adamw
    ;;
  3)
    ctest_gpu
    pairs benchmark 300 --pairs 1 --mode benchmark timm_pnasnet timm_efficientnet inception_v3 gpt2_forward \
      googlenet_pinned compile_default side_streams ddp_one_rank
    ;;
  4)
    pairs generate-run 150 --pairs 2 --turn 2 gpt2_generate:640
    pairs generate-idle 220 --pairs 2 --turn 2 --run idle --aa gpt2_generate:640
    ;;
  5)
    # KINDS.md: NVLink multicast stays off on the shared multi-GPU hosts (ddp.py sets it for its runs too).
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    # Each torchrun within 60 s (they take 15-40 s), so both runs end well inside the device's 600 s;
    # ddp.py rewrites its tables after each model.
    for run in a b; do
      timeout 270 python3 ddp.py --out "$out/5-ddp-$run" --gpus 2 --models resnet18,resnet50 --steps 200 \
        --timeout 60 > "$out/5-ddp-$run.txt" 2>&1
      echo "ddp.py exit $?"; cat "$out/5-ddp-$run/ddp.md"
    done
    ;;
  6)
    pairs never-slower-jax 170 --pairs 3 --aa jax_flax_train:800
    pairs never-slower-generate 170 --pairs 2 --aa --turn 2 gpt2_generate  # 3 pairs and A/A did not fit 120 s (H200)
    pairs never-slower-reduce-overhead 200 --pairs 3 --aa compile_reduce_overhead:2000
    ;;
  7)
    ctest_gpu
    python3 -c "import accelerate, transformers; print('accelerate', accelerate.__version__, 'transformers', transformers.__version__)"
    NIMBLE_DEBUG=1 DEADLINE=420 timeout 520 python3 corpus.py --mode both --timeout 150 --out "$out/7-corpus" \
      --only jax_autotune_no_buffers jax_autotune dataloader_workers gpt2_finetune hf_trainer > "$out/7-corpus.txt" 2>&1
    cat "$out/7-corpus/corpus.md"
    ;;
  8)
    pairs new-deterministic 260 --pairs 1 --idle dataloader_workers:200 gpt2_finetune:200 hf_trainer:200
    pairs new-benchmark 260 --pairs 1 --idle --mode benchmark dataloader_workers:200 gpt2_finetune:200 hf_trainer:200
    ;;
  9)
    pairs never-slower-dataloader 540 --pairs 3 --aa --idle dataloader_workers:200
    ;;
  10)
    cd "$root/tests/programs"
    for flags in "" "--xla_gpu_enable_command_buffer="; do
      name=jax-debug${flags:+-no-buffers}
      XLA_FLAGS="$flags" XLA_PYTHON_CLIENT_PREALLOCATE=false STEPS=60 NIMBLE_DEBUG=1 timeout 150 \
        "$root/build-gpu/bin/nimble" run -o "$out/$name.json" -- python3 jax_flax_train.py > "$out/$name.txt" 2>&1
      echo "$name: exit $?"; grep -v '^CORPUS' "$out/$name.txt" | tail -3 | cut -c1-300
    done
    cd "$root/scripts/gpu"
    ;;
  11)
    bash "$root/scripts/gpu/pairs_sweep.sh" 10
    pairs jax 330 --pairs 1 jax_flax_train:800 jax_autotune_no_buffers:800 jax_autotune:800
    ;;
  12)
    pairs jax-never-slower 540 --pairs 3 --aa jax_flax_train:800 jax_autotune_no_buffers:800
    ;;
  13)
    ctest_gpu
    pairs never-slower-hf-trainer 330 --pairs 3 --aa --idle hf_trainer:200
    cd "$root/tests/programs"
    STEPS=200 timeout 90 "$root/build-gpu/bin/nimble" run -o "$out/jax-side-threads.json" -- python3 jax_flax_train.py \
      > "$out/jax-side-threads.txt" 2>&1
    echo "jax-side-threads: exit $?"; grep -v '^CORPUS' "$out/jax-side-threads.txt" | tail -8 | cut -c1-300
    cd "$root/scripts/gpu"
    ;;
  14)
    pairs never-slower-generate 280 --pairs 4 --aa --turn 2 gpt2_generate
    pairs never-slower-hf-trainer-turns 250 --pairs 3 --aa --turn 5 hf_trainer:200
    ;;
  15)
    perf version || { echo "no perf here"; }
    cd "$root/tests/programs"
    for cfg in plain run; do
      launcher=(); [ $cfg = run ] && launcher=("$root/build-gpu/bin/nimble" run -o "$out/perf-run.json" --)
      # -D: from about call 50 on (set-up ~15 s, a call ~85 ms); the trial is over by then.
      STEPS=640 CORPUS_MODE=deterministic timeout 120 perf record -e cpu-clock -F 999 -D 19000 -o "$out/perf-$cfg.data" \
        "${launcher[@]}" python3 hf_generate.py > "$out/perf-$cfg.txt" 2>&1
      echo "perf $cfg: exit $?"
      perf report -i "$out/perf-$cfg.data" --sort dso --stdio 2>/dev/null | grep -v '^#' | head -25 > "$out/perf-$cfg-dso.txt"
      perf report -i "$out/perf-$cfg.data" --sort dso,sym --stdio 2>/dev/null | grep -v '^#' | head -120 > "$out/perf-$cfg-sym.txt"
      head -12 "$out/perf-$cfg-dso.txt"
    done
    cd "$root/scripts/gpu"
    pairs generate-idle 200 --pairs 3 --turn 2 --run idle gpt2_generate
    pairs generate-no-look 150 --pairs 2 --turn 2 --run run:NIMBLE_RUN_STALE=100000000 gpt2_generate
    ;;
  16)
    cd "$root/tests/programs"
    for run in a b; do
      STEPS=160 CORPUS_MODE=deterministic NIMBLE_DEBUG=1 timeout 100 "$root/build-gpu/bin/nimble" run \
        -o "$out/generate-debug-$run.json" -- python3 hf_generate.py > "$out/generate-debug-$run.txt" 2>&1
      echo "generate-debug-$run: exit $?"
    done
    STEPS=160 CORPUS_MODE=deterministic timeout 100 python3 hf_generate.py > "$out/generate-plain.txt" 2>&1
    cd "$root/scripts/gpu"
    ;;
  17)
    ctest_gpu
    pairs generate-run 180 --pairs 3 --aa --turn 2 gpt2_generate
    pairs generate-no-look 140 --pairs 3 --turn 2 --run run:NIMBLE_RUN_STALE=100000000 gpt2_generate
    ;;
  18)
    pairs generate-trials-1 180 --pairs 3 --turn 2 --run run:NIMBLE_RUN_TRIALS=1 gpt2_generate
    pairs generate-idle 70 --pairs 1 --turn 2 --run idle gpt2_generate
    ;;
  19)
    ctest_gpu
    pairs generate-drop 150 --pairs 3 --turn 2 gpt2_generate
    ;;
  20)
    ctest_gpu
    pairs unseen-deterministic 200 --pairs 1 llama_train:200 vit_eval:200
    pairs unseen-benchmark 170 --pairs 1 --mode benchmark llama_train:200 vit_eval:200
    ;;
  21)
    pairs unseen-checkpointing 200 --pairs 1 checkpointing_train:200
    ;;
  22)
    pairs never-slower-checkpointing 500 --pairs 3 --aa --idle checkpointing_train:200
    ;;
  23)
    pairs unseen-second-set 540 --pairs 1 lightning_train:200 bert_dynamic_padding:200 lstm_lm:200 detection_eval:200
    ;;
  24)
    ctest_gpu
    pairs never-slower-lstm 300 --pairs 2 --aa --idle lstm_lm:200
    ;;
  25)
    ctest_gpu
    export NIMBLE="$root/build-gpu/bin/nimble"
    STEPS=30 timeout 120 bash record_steps.sh "$out/lightning-steps.json" 10:12 lightning_train.py \
      > "$out/lightning-steps.log" 2>&1; echo "record_steps exit $?"
    (cd "$root/tests/programs" && STEPS=120 NIMBLE_DEBUG=1 timeout 150 "$NIMBLE" run -o "$out/lightning-run.json" -- \
      python3 lightning_train.py > "$out/lightning-run.log" 2>&1; echo "lightning nimble run exit $?")
    (cd "$root/tests/programs" && STEPS=200 timeout 150 "$NIMBLE" run -o "$out/bert-dyn.json" -- \
      python3 bert_dynamic_padding.py > "$out/bert-dyn.log" 2>&1; echo "bert nimble run exit $?")
    tail -3 "$out/bert-dyn.log"
    ;;
  26)
    ctest_gpu
    pairs lightning-after 170 --pairs 2 --aa lightning_train:200
    pairs bert-dyn-rest 170 --pairs 2 --idle bert_dynamic_padding:400
    pairs detection-rest 120 --pairs 1 --idle detection_eval:200
    ;;
  27)
    pairs lightning-trusted 150 --pairs 2 --run run:NIMBLE_RUN_TRIAL=0 lightning_train:200
    pairs unseen-third-set 300 --pairs 1 --aa gan_train:300 rl_rollout:20
    ;;
  28)
    ctest_gpu
    pairs rl-never-slower 240 --pairs 2 --turn 1 --aa --idle rl_rollout:16
    export NIMBLE="$root/build-gpu/bin/nimble"
    STEPS=40 timeout 120 bash record_steps.sh "$out/gan-steps.json" 20:24 gan_train.py > "$out/gan-steps.log" 2>&1
    echo "record_steps exit $?"
    ;;
  29)
    ctest_gpu
    pairs unseen-fourth-set 520 --pairs 1 timm_train_ema:200 unet_segmentation:200 checkpointed_transformer:120 \
      compile_train_amp:200
    ;;
  30)
    for pad in 8 512; do
      nvcc -O2 -rdc=true -arch=sm_90 -DPAD_BYTES=$pad -o "$out/duc$pad" device_update_cost.cu -lcuda -lcudadevrt
    done
    { "$out/duc8" 40 16 200; "$out/duc512" 40 16 200; "$out/duc512" 40 16 50 20000; } > "$out/device-update-cost.txt" 2>&1
    grep "^device\|^median\|results" "$out/device-update-cost.txt"
    pairs drift-trusted 420 --pairs 1 --run run:NIMBLE_RUN_TRIAL=0 timm_train_ema:200 unet_segmentation:200 \
      compile_train_amp:200
    ;;
  31)
    ctest_gpu
    pairs drift-trial 330 --pairs 1 timm_train_ema:200 unet_segmentation:200 compile_train_amp:200 \
      lightning_train:200 gan_train:200
    pairs generate 110 --pairs 1 --turn 2 gpt2_generate
    ;;
  32)
    ctest_gpu
    pairs generate 110 --pairs 1 --turn 2 gpt2_generate
    pairs drift-trial 200 --pairs 1 timm_train_ema:200 unet_segmentation:200 gan_train:200
    ;;
  33)
    ctest_gpu
    pairs trial-moving 260 --pairs 1 --run $moving timm_train_ema:200 unet_segmentation:200 \
      gan_train:200
    pairs generate 110 --pairs 1 --turn 2 gpt2_generate
    ;;
  34)
    ctest_gpu
    pairs trial-moving 230 --pairs 1 --run $moving timm_train_ema:200 unet_segmentation:200 gan_train:200 lightning_train:200
    pairs generate 100 --pairs 1 --turn 2 --run $moving gpt2_generate
    pairs lightning-wide 130 --pairs 1 --aa --pin 4-11 --run $moving lightning_train:200
    ;;
  35)
    ctest_gpu
    pairs deterministic 430 --pairs 1 "${regression[@]}"
    pairs generate 100 --pairs 1 --turn 2 --run $moving gpt2_generate
    ;;
  36)
    ctest_gpu
    pairs reverted 200 --pairs 1 timm_efficientnet resnet18_amp_adamw googlenet_pinned
    pairs generate 100 --pairs 1 --turn 2 --run $moving gpt2_generate
    ;;
  37)
    ctest_gpu
    pairs drift-default 240 --pairs 1 --run $moving dataloader_workers:200 checkpointing_train:200 \
      rl_rollout:20
    ;;
  38)
    # PROGRAM:STEPS[:VARIABLE=VALUE]: plain, then nimble run with drifting recordings on trial and by default
    for program in imagenet_style_train:200 imagenet_style_train:200:ZERO_GRAD_AT=before dataloader_workers:200 \
      checkpointing_train:200 rl_rollout:20; do
      IFS=: read -r name steps setting <<< "$program"
      if [ "$SECONDS" -gt 430 ]; then echo "38: $program skipped (time)"; continue; fi
      label=$name${setting:+-${setting#*=}}
      (cd "$root/tests/programs" && env $setting STEPS=$steps CORPUS_MODE=deterministic timeout 100 python3 "$name.py" \
        > "$out/$label-plain.log" 2>&1)
      for how in moving default; do
        trial=0; [ $how = moving ] && trial=1
        env $setting OUT=$out/$how/$label NIMBLE_RUN_TRIAL_MOVING=$trial timeout 120 \
          bash "$root/scripts/gpu/step_map.sh" deterministic "$steps" "$name.py"
      done
      python3 step_windows.py "$out/$label-plain.log" "$out"/{moving,default}/"$label"/step-map/*.log \
        | tee "$out/38-$label.txt"
    done
    ;;
  39)
    bisect 560 imagenet_style_train 40 default \
      NIMBLE_RUN_SKIP_LIBRARY=0 NIMBLE_RUN_SIDE_EXITS=0 NIMBLE_RUN_TRIAL=0 NIMBLE_RUN_BACKGROUND=0 NIMBLE_RUN_VARIANTS=1
    ;;
  40)
    ctest_gpu
    for program in imagenet_style_train imagenet_style_zero_first; do
      bisect 250 $program 40 default NIMBLE_RUN_LIBRARY_RECHECK=1
    done
    ;;
  41)
    bisect 500 imagenet_style_train 40 \
      NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cublasLtMatmul \
      NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cublasLtMatmul
    ;;
  42)
    ctest_gpu
    for program in imagenet_style_train imagenet_style_zero_first; do
      bisect 120 $program 100 default | key_fields
    done
    pairs cudnn-called 280 --pairs 1 timm_pnasnet inception_v3 resnet18_amp_adamw
    ;;
  43)
    CUDA_LAUNCH_BLOCKING=1 bisect 300 imagenet_style_train 40 \
      NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute
    ;;
  44)
    # (Trusted at once: its buffers drift, and by default its recording is dropped after 4 iterations.)
    NIMBLE_RUN_TRIAL=0 bisect 250 imagenet_style_group_norm 40 \
      NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute
    ;;
  45)
    bisect 150 imagenet_style_train 40 NIMBLE_RUN_LIBRARY_RECHECK=2 | key_fields
    for how in plain skipped; do
      skip=cublasLtMatmul; [ $how = skipped ] && skip=cudnnBackendExecute
      (cd "$root/tests/programs" && STEPS=40 NIMBLE_HOST_TIMES=1 NIMBLE_RUN_SKIP_CALLS=$skip timeout 120 \
        "$root/build-gpu/bin/nimble" run -o "$out/host-times-$how.json" -- python3 imagenet_style_train.py \
        > "$out/host-times-$how.log" 2>&1)
    done
    (cd "$root/tests/programs" && STEPS=12 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute timeout 300 \
      compute-sanitizer --tool memcheck --target-processes all --print-limit 20 "$root/build-gpu/bin/nimble" run -o "$out/memcheck.json" \
      -- python3 imagenet_style_train.py > "$out/memcheck.log" 2>&1)
    tail -25 "$out/memcheck.log"
    ;;
  46)  # cuDNN's calls skipped, save those whose kernels touch page-locked host memory (batch norm's)
    bisect 200 imagenet_style_train 40 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    bisect 200 imagenet_style_group_norm 40 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    # part 44's differing GroupNorm run was trusted at once: the same with cuDNN always called
    NIMBLE_RUN_TRIAL=0 bisect 200 imagenet_style_group_norm 40 default NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    ctest_gpu
    ;;
  47)  # skipped cuDNN calls that spin as long as a call takes (a diagnostic build, not kept: in
        # library_calls.cpp a skipped call busy-waited NIMBLE_DIAG_SKIP_SPIN_NS); which driver calls skipping omits
    NIMBLE_DIAG_SKIP_SPIN_NS=30000 bisect 200 imagenet_style_group_norm 40 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    for recheck in 1 64; do
      (cd "$root/tests/programs" && STEPS=40 NORM=group NIMBLE_HOST_TIMES=1 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute \
        NIMBLE_RUN_LIBRARY_RECHECK=$recheck timeout 120 "$root/build-gpu/bin/nimble" run -o "$out/host-times-$recheck.json" \
        -- python3 imagenet_style_train.py > "$out/host-times-$recheck.log" 2>&1)
      cp "$out/host-times-$recheck.log" "$results/"
    done
    ;;
  48)  # cuDNN's calls skipped save those ordered against another stream; the last line needs a diagnostic
        # build, not kept (NIMBLE_DIAG_ALLOW_HOST turned the page-locked host memory rule off)
    bisect 200 imagenet_style_group_norm 40 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    NIMBLE_RUN_TRIAL=0 bisect 200 imagenet_style_zero_first 40 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    bisect 200 imagenet_style_train 40 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    mv "$results/bisect-imagenet_style_train.tgz" "$results/bisect-imagenet_style_train-batch-norm-called.tgz"
    NIMBLE_DIAG_ALLOW_HOST=1 bisect 200 imagenet_style_train 40 NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute NIMBLE_RUN_SKIP_CALLS=cudnnBackendExecute | key_fields
    ctest_gpu
    ;;
  49)  # cuDNN's calls skipped again by default, save those ordered against another stream's work
    for program in imagenet_style_train imagenet_style_zero_first; do
      bisect 120 $program 100 default | key_fields
    done
    pairs cudnn-skipped 300 --pairs 1 timm_pnasnet inception_v3 resnet18_amp_adamw
    ;;
  50)  # the rest of the regression that calls cuDNN, with the same default
    ctest_gpu
    pairs cudnn-regression 400 --pairs 1 timm_efficientnet googlenet_pinned side_streams grad_accum epochs_eval_lastbatch
    ;;
  51)  # a fifth set of unseen programs, first run
    DEADLINE=400 timeout 450 python3 corpus.py --mode both --timeout 120 --out "$out/51-corpus" \
      --only diffusion_sample simclr_train gnn_train > "$out/51-corpus.txt" 2>&1
    cat "$out/51-corpus/corpus.md"
    tail -5 "$out/51-corpus.txt"
    ;;
  52)  # why SimCLR (benchmark mode) ran 30% slower once its recording was dropped: window events, host times
    for how in run idle; do
      if [ $how = run ]; then launcher=("$root/build-gpu/bin/nimble" run -o "$out/simclr-$how.json" --); else launcher=(env LD_PRELOAD="$root/build-gpu/lib/libnimble.so"); fi
      (cd "$root/tests/programs" && CORPUS_MODE=benchmark STEPS=100 NIMBLE_DEBUG=1 NIMBLE_HOST_TIMES=1 timeout 150 \
        "${launcher[@]}" python3 simclr_train.py > "$out/simclr-$how.log" 2>&1)
      cp "$out/simclr-$how.log" "$results/"
    done
    (cd "$root/tests/programs" && CORPUS_MODE=benchmark STEPS=100 timeout 150 python3 simclr_train.py > "$out/simclr-plain.log" 2>&1)
    cp "$out/simclr-plain.log" "$results/"
    python3 "$root/scripts/gpu/step_windows.py" "$out/simclr-plain.log" "$out/simclr-idle.log" "$out/simclr-run.log" | head -30
    ;;
  53)  # the fifth set in interleaved pairs with an idle process beside them (deterministic mode)
    pairs fifth-set 420 --pairs 1 --idle diffusion_sample:100 simclr_train:100 gnn_train:100
    ;;
  54)  # the final build: GPU tests, and the exit lines naming the call sites the recording rules out
    ctest_gpu
    bisect 150 imagenet_style_group_norm 60 NIMBLE_RUN_TRIAL=0 | key_fields
    tar xzf "$results/bisect-imagenet_style_group_norm.tgz" -O --wildcards '*.nimble.log' | grep "never skipped\|calls skipped"
    pairs final 200 --pairs 1 inception_v3 side_streams
    ;;
  55)  # the last change (a site's evidence at most a word): GPU tests, the exit lines of part 54's run
    ctest_gpu
    bisect 150 imagenet_style_group_norm 60 NIMBLE_RUN_TRIAL=0 | key_fields
    tar xzf "$results/bisect-imagenet_style_group_norm.tgz" -O --wildcards '*.nimble.log' | grep "never skipped\|calls skipped"
    ;;
  56)  # side exits shorter than NIMBLE_RUN_SIDE_EXIT_SHORTEST: part 38's DataLoader run (drifting recordings tried)
    dataloader_moving_map
    ;;
  57)  # a minimum length for nimble run's iterations (NIMBLE_RUN_ITERATION_SHORTEST, 8): GPU tests; part 56's
    # DataLoader run (its 1-call recording); the programs whose iterations are graph launches or a few calls
    ctest_gpu
    dataloader_moving_map
    grep -h "a period of\|passed over\|no repeating" "$out"/moving/dataloader_workers/step-map/*.log | sort | uniq -c | head -20
    pairs own-graphs 230 --pairs 1 compile_reduce_overhead:2000 torch_cuda_graph cupy_loop jax_flax_train:800 ddp_one_rank
    ;;
  58)  # never slower? torch.cuda.graph's loop (7 calls a step, now below the minimum: part 57 read 0.95 in one
    # pair, nothing recorded), three pairs with idle and A/A; CuPy (9 calls and a sync) and reduce-overhead, one pair
    pairs short-loop 300 --pairs 3 --idle --aa torch_cuda_graph
    pairs own-graphs 200 --pairs 1 cupy_loop compile_reduce_overhead:2000
    ;;
  59)  # the final build: GPU tests; torch.cuda.graph's loop again (nimble run now rests in a short loop it stays
    # in), three pairs with idle and A/A; the fifth set in benchmark mode, interleaved pairs with idle
    ctest_gpu
    pairs short-loop 200 --pairs 3 --idle --aa torch_cuda_graph
    pairs fifth-benchmark 280 --pairs 1 --idle --mode benchmark diffusion_sample:100 simclr_train:100 gnn_train:100
    ;;
  60)  # a sixth set of unseen programs, first run: interleaved pairs with idle, deterministic mode
    pairs sixth-set 520 --pairs 1 --idle recsys_train:100 distill_train:100 bucketed_inference:200
    ;;
  61)  # part 60's inference service dropped each bucket's recording after 16 false starts: its debug log;
    # the distillation program (its validation batches fixed), one interleaved pair with idle
    bucketed_debug
    cp "$out/bucketed-debug.log" "$out"/bucketed*.run.json "$results/" 2>/dev/null
    grep "automatic range\|nimble run:\|false start\|fall-back\|dropped\|trial" "$out/bucketed-debug.log" | cut -c1-260 | head -60
    pairs sixth-set 300 --pairs 1 --idle distill_train:100
    ;;
  62)  # after the switch rule (a mismatch before any graph launched, once a recording has replayed, is no
    # failure): GPU tests; the inference service, one interleaved pair with idle; distillation in benchmark mode
    ctest_gpu
    pairs buckets 200 --pairs 1 --idle bucketed_inference:200
    pairs sixth-benchmark 150 --pairs 1 --mode benchmark distill_train:100
    ;;
  63)  # the inference service's recordings, looked at: GPU tests on the current build; a debug run whose
    # traces come back, with each recording's first tasks and where its first kernel recurs
    ctest_gpu
    bucketed_debug
    cp "$out/bucketed-debug.log" "$out"/bucketed*.json "$results/" 2>/dev/null
    grep "automatic range\|nimble run:\|trial\|look" "$out/bucketed-debug.log" | cut -c1-260 | head -60
    for t in "$out"/bucketed.[0-9]*.json; do case $t in *.run.json) ;; *) python3 "$root/scripts/gpu/trace_head.py" "$t" 14;; esac; done
    ;;
  64)  # after the trial times iterations of recordings that begin alike and mismatches within one iteration
    # count once: GPU tests; the inference service's debug run (recordings, trials); its pairs, both modes
    ctest_gpu
    bucketed_debug
    cp "$out/bucketed-debug.log" "$out"/bucketed.run.json "$results/" 2>/dev/null
    grep "automatic range\|nimble run:\|(\|look" "$out/bucketed-debug.log" | grep -v "^nimble\[debug\].*capture window" | cut -c1-300 | head -60
    pairs buckets 200 --pairs 1 --idle bucketed_inference:200
    pairs buckets-benchmark 200 --pairs 1 --mode benchmark bucketed_inference:200
    ;;
  65)  # the inference service's pairs again, three in deterministic mode with idle and A/A, two in benchmark
    # mode: is part 64's 0.94 (one pair, processes 4% apart) real?
    service_pairs --aa
    ;;
  66)  # after the host-point rule (a recording whose first call recurs begins only after a host sync or read):
    # GPU tests; the inference service's pairs as in part 65; its step medians
    ctest_gpu
    service_pairs
    ;;
  67)  # (not run: NIMBLE_RUN_STALE=1000000000 was refused then; part 69 asks again) the service's steps no recording replays cost 0.3-1.4 ms more than plain
    # ones: which of nimble's activities? No looks asked for by staleness; no trial (trusted at once);
    # one recording at most. Two interleaved pairs each, step medians by length.
    pairs buckets-nostale 150 --pairs 2 --run run:NIMBLE_RUN_STALE=1000000000 bucketed_inference:200
    pairs buckets-notrial 150 --pairs 2 --run run:NIMBLE_RUN_TRIAL=0 bucketed_inference:200
    pairs buckets-one 150 --pairs 2 --run run:NIMBLE_RUN_RECORDINGS=1 bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets-nostale" "$out/$part-buckets-notrial" \
      "$out/$part-buckets-one" > "$out/$part-step-medians.txt"
    ;;
  68)  # part 67's question, asked another way first: where the host time of the service's steps goes
    # under nimble run (NIMBLE_HOST_TIMES, the summary's "looking"), by default, never looking again after
    # the first recording, and with no trial; GPU tests; then one interleaved pair without staleness's looks
    ctest_gpu
    service_host_times
    pairs buckets-nostale 150 --pairs 1 --run run:NIMBLE_RUN_STALE=1000000000 bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets-nostale" >> "$out/$part-host-times.txt"
    ;;
  69)  # the service (0.957 in three pairs on 2026-11-30) with one of nimble run's activities off at a time,
    # two interleaved pairs each (parts 67 and 68 asked for NIMBLE_RUN_STALE=1000000000, then refused):
    # by default (and A/A), trusted at once, never looking again, one recording at most; step medians
    pairs buckets-default 150 --pairs 2 --aa bucketed_inference:200
    pairs buckets-notrial 110 --pairs 2 --run run:NIMBLE_RUN_TRIAL=0 bucketed_inference:200
    pairs buckets-nostale 110 --pairs 2 --run run:NIMBLE_RUN_STALE=1000000000 bucketed_inference:200
    pairs buckets-one 110 --pairs 2 --run run:NIMBLE_RUN_RECORDINGS=1 bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out"/$part-buckets-* > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  70)  # after the plain-block fix (2a0cdc4: plain iterations begin only after a host point; another length's
    # step is no iteration of the recording): GPU tests; the service by default and with drifting recordings
    # on trial (part 69: trusted at once it read 1.08), two interleaved pairs each; the epochs program, one pair
    ctest_gpu
    pairs buckets-default 130 --pairs 2 bucketed_inference:200
    pairs buckets-moving 130 --pairs 2 --run run:NIMBLE_RUN_TRIAL_MOVING=1 bucketed_inference:200
    pairs epochs 100 --pairs 1 epochs_eval_lastbatch
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets-default" "$out/$part-buckets-moving" \
      > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  71)  # why part 70's second recording of the service timed none of its 15 replayed iterations: one run
    # under nimble run (200 steps) whose summary counts each phase's untimed iterations by why, and
    # its recordings' first and last tasks, copies and syncs
    cd "$root/tests/programs"
    STEPS=200 CORPUS_MODE=deterministic timeout 120 "$root/build-gpu/bin/nimble" run -o "$out/service.json" -- \
      python3 bucketed_inference.py > "$out/service.log" 2>&1
    cd "$root/scripts/gpu"
    cp "$out/service.run.json" "$results/" 2>/dev/null
    python3 - "$out/service.run.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["recordings"]:
    t = r.get("timings", {})
    print(r["trace"].split("/")[-1], r["calls"], r["state"], "replayed", r["iterations_replayed"],
          {k: (t.get(k, {}).get("iterations"), t.get(k, {}).get("untimed")) for k in ("replayed", "plain")},
          (r.get("undecided_because") or r.get("dropped_because") or r.get("last_rested_because") or "")[:160])
PY
    for t in "$out"/service.[0-9]*.json; do case $t in *.run.json) ;; *) python3 "$root/scripts/gpu/trace_head.py" "$t" 4;; esac; done
    grep "not replaying\|looked at" "$out/service.log" | cut -c1-240
    ;;
  72)  # after refusing a recording of the same calls as a live one (part 71: two of one batch length): GPU
    # tests; part 71's run; the service, two interleaved pairs with step medians
    ctest_gpu
    bash "$root/scripts/gpu/pairs_sweep.sh" 71
    pairs buckets 130 --pairs 2 bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets" > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  73)  # the session's last build (a duplicate passed over, not rejected): GPU tests; the service, two
    # interleaved pairs in each mode; step medians
    ctest_gpu
    pairs buckets 110 --pairs 2 bucketed_inference:200
    pairs buckets-benchmark 110 --pairs 2 --mode benchmark bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets" "$out/$part-buckets-benchmark" \
      > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  74)  # (for the next session) a diverged window written as what it holds, let go when known (f7bda3d,
    # ca45d8c; CPU-tested only): GPU tests; part 71's run (are all three lengths recorded, none
    # twice?); the service, two interleaved pairs in each mode; step medians
    ctest_gpu
    bash "$root/scripts/gpu/pairs_sweep.sh" 71
    pairs buckets 110 --pairs 2 bucketed_inference:200
    pairs buckets-benchmark 110 --pairs 2 --mode benchmark bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets" "$out/$part-buckets-benchmark" \
      > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  75)  # where the service's unreplayed steps lose 0.3-0.45 ms (part 74, benchmark mode, host-bound): two
    # interleaved pairs by default with an idle pair; every recording resting (trials never pay); both
    # processes on two vCPUs instead of one (does nimble's build thread take the program's CPU?)
    pairs b-default 170 --pairs 2 --idle --mode benchmark bucketed_inference:200
    pairs b-rest 110 --pairs 2 --mode benchmark --run run:NIMBLE_RUN_MIN_SPEEDUP=100 bucketed_inference:200
    pairs b-pin2 110 --pairs 2 --mode benchmark --pin 5,6 bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out"/$part-b-* > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  76)  # what the service pays for nimble's mere presence (benchmark mode): two interleaved pairs with the idle
    # library, and two with nimble run waiting for a cudaProfilerStart that never comes (recording state
    # kept: allocations, streams, events, cuBLASLt descriptors followed; nothing looked at or replayed)
    pairs b-idle 110 --pairs 2 --mode benchmark --run idle bucketed_inference:200
    pairs b-given 110 --pairs 2 --mode benchmark --run run:--capture-range=cudaProfilerApi bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out"/$part-b-* > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  77)  # an exit in a recording's first quarter is another iteration that begins alike, not a trusted side
    # exit (RunSession::begins_alike): GPU tests; the service, two interleaved pairs in each mode; the epochs
    # program (its first eval batch leaves the training recording early), one pair
    ctest_gpu
    pairs buckets 110 --pairs 2 bucketed_inference:200
    pairs buckets-benchmark 110 --pairs 2 --mode benchmark bucketed_inference:200
    pairs epochs 110 --pairs 1 epochs_eval_lastbatch
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets" "$out/$part-buckets-benchmark" \
      > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  78)  # the session's last code (nimble_config linked by libnimble.so and the CLI; call_check's reused buffer):
    # GPU tests; the CLI refuses settings libnimble.so refuses together; the service in benchmark mode, two
    # interleaved pairs; GPT-2 forward and ResNet-18 with AMP, one pair each
    ctest_gpu
    (NIMBLE_BENCH=3 "$root/build-gpu/bin/nimble" run -o "$out/refused.json" -- true; echo "exit $?") > "$out/$part-refused.txt" 2>&1
    cat "$out/$part-refused.txt"
    pairs buckets-benchmark 110 --pairs 2 --mode benchmark bucketed_inference:200
    pairs regress 150 --pairs 1 gpt2_forward resnet18_amp_adamw
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets-benchmark" > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  79)  # what the service would read if its trials said no at once (every recording dropped after its first
    # trial, NIMBLE_RUN_MIN_SPEEDUP=100 NIMBLE_RUN_TRIALS=1): is going idle after the trial enough to
    # meet 0.98? Two interleaved pairs, benchmark mode; the run summaries say how long it looked
    pairs b-strict 130 --pairs 2 --mode benchmark --run run:NIMBLE_RUN_MIN_SPEEDUP=100,NIMBLE_RUN_TRIALS=1 bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-b-strict" > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  80)  # the process guard (replayer/process_guard.hpp): GPU tests; the service, two interleaved pairs in each
    # mode (does it step aside, and does the process then read 0.98?); GPT-2 forward and BERT training,
    # one pair each (replay that pays little: is it kept?)
    # (The guard is off by default since be93ef6: turned on here.)
    ctest_gpu
    pairs buckets-benchmark 120 --pairs 2 --mode benchmark --run run:NIMBLE_RUN_GUARD=6 bucketed_inference:200
    pairs buckets 120 --pairs 2 --run run:NIMBLE_RUN_GUARD=6 bucketed_inference:200
    pairs regress 150 --pairs 1 --run run:NIMBLE_RUN_GUARD=6 gpt2_forward bert_train
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-buckets-benchmark" "$out/$part-buckets" \
      > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  81)  # where the service's host time goes in each state (benchmark mode, 200 steps, one vCPU each):
    # NIMBLE_HOST_TIMES tables of the idle library, nimble run (no guard) and nimble run waiting for a
    # cudaProfilerStart that never comes; then each state's step times without the timing, and plain
    (
      cd "$root/tests/programs"
      export STEPS=200 CORPUS_MODE=benchmark
      pin="taskset -c 5"
      lib="$root/build-gpu/lib/libnimble.so" nim="$root/build-gpu/bin/nimble"
      LD_PRELOAD=$lib NIMBLE_HOST_TIMES=1 $pin python3 bucketed_inference.py > "$out/81-idle-ht.log" 2>&1
      NIMBLE_HOST_TIMES=1 NIMBLE_RUN_GUARD=0 $pin "$nim" run -o "$out/81-run.json" -- python3 bucketed_inference.py > "$out/81-run-ht.log" 2>&1
      NIMBLE_HOST_TIMES=1 $pin "$nim" run --capture-range cudaProfilerApi -o "$out/81-given.json" -- python3 bucketed_inference.py > "$out/81-given-ht.log" 2>&1
      for round in 1 2; do
        $pin python3 bucketed_inference.py > "$out/81-plain-$round.log" 2>&1
        LD_PRELOAD=$lib $pin python3 bucketed_inference.py > "$out/81-idle-$round.log" 2>&1
        NIMBLE_RUN_GUARD=0 $pin "$nim" run -o "$out/81-run-$round.json" -- python3 bucketed_inference.py > "$out/81-run-$round.log" 2>&1
        $pin "$nim" run --capture-range cudaProfilerApi -o "$out/81-given-$round.json" -- python3 bucketed_inference.py > "$out/81-given-$round.log" 2>&1
      done
    )
    python3 "$root/scripts/gpu/host_times_diff.py" "$out/81-idle-ht.log" "$out/81-run-ht.log" "$out/81-given-ht.log" > "$out/81-host-times.txt"
    python3 "$root/scripts/gpu/host_times_diff.py" "$out"/81-plain-?.log "$out"/81-idle-?.log "$out"/81-run-?.log "$out"/81-given-?.log | tail -1 > "$out/81-steps.txt"
    head -40 "$out/81-host-times.txt"; cat "$out/81-steps.txt"
    ;;
  82)  # the session's last code (process guard off by default): GPU tests; whether the program's own code
    # runs slower beside nimble run (part 81: the host time inside intercepted calls is the same as the
    # idle library's, the steps 8-10% longer): user-space hardware counters of the service, idle, given
    # range never started and nimble run, if perf can read them here; then five regression programs,
    # one interleaved pair each
    ctest_gpu
    (
      cd "$root/tests/programs"
      export STEPS=200 CORPUS_MODE=benchmark
      lib="$root/build-gpu/lib/libnimble.so" nim="$root/build-gpu/bin/nimble"
      ev=task-clock,cycles:u,instructions:u,L1-icache-load-misses:u,branch-misses:u,dTLB-load-misses:u,LLC-load-misses:u
      if perf stat -e "$ev" -- true > "$out/82-perf-check.txt" 2>&1; then
        for round in 1 2; do
          perf stat -e "$ev" -o "$out/82-perf-idle-$round.txt" -- env LD_PRELOAD=$lib taskset -c 5 python3 bucketed_inference.py > /dev/null 2>&1
          perf stat -e "$ev" -o "$out/82-perf-given-$round.txt" -- taskset -c 5 "$nim" run --capture-range cudaProfilerApi -o "$out/82-g.json" -- python3 bucketed_inference.py > /dev/null 2>&1
          perf stat -e "$ev" -o "$out/82-perf-run-$round.txt" -- taskset -c 5 "$nim" run -o "$out/82-r.json" -- python3 bucketed_inference.py > /dev/null 2>&1
        done
      fi
    )
    tail -3 "$out/82-perf-check.txt"
    for f in "$out"/82-perf-*-?.txt; do echo "== $(basename "$f")"; grep -E "cycles|instructions|misses|task-clock" "$f"; done > "$out/82-perf.txt" 2>&1
    cat "$out/82-perf.txt"
    pairs regress 330 --pairs 1 gpt2_forward bert_train resnet18_amp_adamw epochs_eval_lastbatch timm_efficientnet
    ;;
  83)  # the rest of the deterministic regression on the session's last code (part 82 ran the first five):
    # one interleaved pair each
    pairs regress 340 --pairs 1 timm_pnasnet inception_v3 googlenet_pinned side_streams grad_accum
    ;;
  84)  # cuBLASLt heuristics answered from memory whenever nimble run runs (not only inside replayed
    # iterations; part 81: the service spends 0.7 ms of each 3 ms step asking them): GPU tests; the
    # service, one interleaved pair in each mode; BERT training, one pair
    ctest_gpu
    pairs buckets-benchmark 75 --pairs 1 --mode benchmark bucketed_inference:200
    pairs buckets 75 --pairs 1 bucketed_inference:200
    pairs regress 75 --pairs 1 bert_train
    ;;
  85)  # for the next session (not yet run): is the service's loss under nimble run CPU time of the main
    # thread or waiting? Two interleaved pairs with the idle library, benchmark mode; step medians as
    # wall/cpu (corpus_common's step_cpu_ms, time.thread_time per step)
    # and the same against nimble run whose given range never starts (state kept, nothing looked at)
    pairs b-cpu 170 --pairs 2 --idle --mode benchmark bucketed_inference:200
    pairs b-cpu-given 110 --pairs 2 --mode benchmark --run run:--capture-range=cudaProfilerApi bucketed_inference:200
    pairs b-cpu-run 110 --pairs 2 --mode benchmark bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-b-cpu" "$out/$part-b-cpu-given" "$out/$part-b-cpu-run" > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  86)  # the service's loss is main-thread CPU time (part 85): more instructions, or slower ones
    # (hardware counters per step), kernel time and page faults; and the same with glibc's malloc
    # thresholds fixed for both processes (heap trims and mmap churn that nimble's allocations cause)
    export CORPUS_COUNTERS=1
    pairs idle 150 --pairs 1 --idle --mode benchmark bucketed_inference:200
    pairs given 80 --pairs 1 --mode benchmark --run run:--capture-range=cudaProfilerApi bucketed_inference:200
    GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432 \
      pairs fixed-malloc 150 --pairs 2 --mode benchmark bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-idle" "$out/$part-given" "$out/$part-fixed-malloc" \
      > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    grep -ho '"counters_refused": [^}]*}\?' "$out/$part-idle"/*.log | sort | uniq -c
    ;;
  87)  # part 85's CPU time counted the sync's spinning: with the context waiting asleep a step's CPU
    # time is host work only; with NIMBLE_HOST_TIMES the time inside nimble's wrappers per step
    export NIMBLE_HOST_TIMES=1
    pairs given-spin 80 --pairs 1 --mode benchmark --run run:--capture-range=cudaProfilerApi bucketed_inference:200
    export CORPUS_BLOCKING_SYNC=1
    pairs idle 150 --pairs 1 --idle --mode benchmark bucketed_inference:200
    pairs given 80 --pairs 1 --mode benchmark --run run:--capture-range=cudaProfilerApi bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-given-spin" "$out/$part-idle" "$out/$part-given" \
      > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    ;;
  88)  # nimble run's following made cheaper (d130baf: 237 instructions a cuBLASLt descriptor call
    # instead of 439, idle library hooks 31 instead of 61): the service against plain with the build
    # before (build-gpu-base: bin/nimble and lib/libnimble.so of 63dd09b) and after, on one lease
    ctest_gpu
    NIMBLE_BUILD=build-gpu-base pairs base-given 100 --pairs 2 --mode benchmark --run run:--capture-range=cudaProfilerApi bucketed_inference:200
    pairs given 100 --pairs 2 --mode benchmark --run run:--capture-range=cudaProfilerApi bucketed_inference:200
    NIMBLE_BUILD=build-gpu-base pairs base-run 100 --pairs 2 --mode benchmark bucketed_inference:200
    pairs run 130 --pairs 2 --idle --mode benchmark bucketed_inference:200
    ;;
  89)  # paused spans answer cuBLASLt's heuristics from memory as running ones do (they paid every
    # query, so the guard read running faster than it was): GPU tests; the service with the guard on
    # and by default; three regression programs with the guard on (it kept them before: it must still)
    ctest_gpu
    pairs guard 110 --pairs 2 --mode benchmark --run run:NIMBLE_RUN_GUARD=3 bucketed_inference:200
    pairs run 100 --pairs 2 --mode benchmark bucketed_inference:200
    pairs regress-guard 200 --pairs 1 --run run:NIMBLE_RUN_GUARD=3 gpt2_forward bert_train resnet18_amp_adamw
    grep -ho '"guard": {[^}]*}' "$out/$part-guard"/*.run.json "$out/$part-regress-guard"/*.run.json 2>/dev/null | cut -c1-400
    ;;
  90)  # the process guard on by default (NIMBLE_RUN_GUARD=3): GPU tests; four regression programs
    # part 89 did not run, one interleaved pair each, by default; the service by default
    ctest_gpu
    pairs regress 300 --pairs 1 epochs_eval_lastbatch side_streams grad_accum inception_v3
    pairs service 60 --pairs 1 --mode benchmark bucketed_inference:200
    grep -ho '"guard": {[^}]*}' "$out/$part-regress"/*.run.json "$out/$part-service"/*.run.json 2>/dev/null | cut -c1-300
    ;;
  91)  # the guard off by default again (part 90: it stepped gradient accumulation aside at 0.845, the
    # program 0.96 of plain): gradient accumulation by default, then the regression programs parts 89
    # and 90 left out, one interleaved pair each (the session's last device time)
    pairs regress 270 --pairs 1 grad_accum timm_efficientnet googlenet_pinned timm_pnasnet
    ;;
  92)  # the guard's spans from host sync to host sync (fa431d6), NIMBLE_RUN_GUARD=3: GPU tests;
    # gradient accumulation (stepped aside at 0.845 by spans that ended anywhere), the service, and
    # the three programs part 89 kept, one interleaved pair each
    ctest_gpu
    pairs accum-guard 110 --pairs 1 --run run:NIMBLE_RUN_GUARD=3 grad_accum
    pairs service-guard 110 --pairs 2 --mode benchmark --run run:NIMBLE_RUN_GUARD=3 bucketed_inference:200
    pairs regress-guard 200 --pairs 1 --run run:NIMBLE_RUN_GUARD=3 gpt2_forward bert_train resnet18_amp_adamw
    grep -ho '"guard": {[^}]*}' "$out/$part"-*-guard/*.run.json 2>/dev/null | cut -c1-400
    ;;
  93)  # running spans warm up a span's worth before they are timed (part 92 stepped BERT aside at 0.96
    # after its first replayed steps after each pause ran 19 ms against 14), NIMBLE_RUN_GUARD=4: the
    # service, and part 92's programs, one interleaved pair each
    pairs service-guard 110 --pairs 2 --mode benchmark --run run:NIMBLE_RUN_GUARD=4 bucketed_inference:200
    pairs regress-guard 300 --pairs 1 --run run:NIMBLE_RUN_GUARD=4 bert_train grad_accum gpt2_forward resnet18_amp_adamw
    grep -ho '"guard": {[^}]*}' "$out/$part"-*-guard/*.run.json 2>/dev/null | cut -c1-400
    ;;
  94)  # the rest of the regression programs with the guard on (NIMBLE_RUN_GUARD=4): GPU tests, then
    # one interleaved pair each
    ctest_gpu
    pairs regress-guard 420 --pairs 1 --run run:NIMBLE_RUN_GUARD=4 epochs_eval_lastbatch side_streams inception_v3 timm_efficientnet googlenet_pinned timm_pnasnet
    grep -ho '"guard": {[^}]*}' "$out/$part"-*-guard/*.run.json 2>/dev/null | cut -c1-400
    ;;
  95)  # the guard on by default (4 spans, lower medians): GPU tests; the service and four programs
    # by default, one interleaved pair each (two for the service)
    ctest_gpu
    pairs service 110 --pairs 2 --mode benchmark bucketed_inference:200
    pairs regress 300 --pairs 1 bert_train grad_accum gpt2_forward timm_efficientnet
    grep -ho '"guard": {[^}]*}' "$out/$part"-*/*.run.json 2>/dev/null | cut -c1-400
    ;;
  96)  # the guard on by default: corpus programs that replay and that no guard run has met yet, one
    # interleaved pair each
    pairs more 500 --pairs 1 cupy_loop diffusion_sample simclr_train timm_train_ema unet_segmentation lstm_lm distill_train vit_eval
    grep -ho '"guard": {[^}]*}' "$out/$part"-*/*.run.json 2>/dev/null | cut -c1-400
    ;;
  97)  # the guard's lead (judged once replay has run 4x its paused spans' calls) and one-iteration
    # warm-up: GPU tests; CuPy (paused a third of its steps in part 96), BERT, GPT-2 forward and the
    # service, one interleaved pair each (two for the service)
    ctest_gpu
    pairs lead 330 --pairs 1 cupy_loop bert_train gpt2_forward
    pairs service 110 --pairs 2 --mode benchmark bucketed_inference:200
    grep -ho '"guard": {[^}]*}' "$out/$part"-*/*.run.json 2>/dev/null | cut -c1-400
    ;;
  98)  # the guard by default on five more programs that replay (transformer training, an HF Trainer,
    # torch.compile with CUDA graphs of its own), one interleaved pair each, 200 steps
    pairs five 250 --pairs 1 gpt2_finetune:200 llama_train:200 checkpointed_transformer:200 hf_trainer:200 compile_reduce_overhead:400
    grep -ho '"guard": {[^}]*}' "$out/$part"-*/*.run.json 2>/dev/null | cut -c1-400
    ;;
  99)  # the commits no GPU had run (host-sync ticks only while judging, inline thread-locals): GPU
    # tests; HF Trainer (0.951 in part 98's one pair, resting), BERT and GPT-2 forward, one pair
    # each (two for HF Trainer); the service in benchmark mode by default and with every recording
    # trusted at once (NIMBLE_RUN_TRIAL=0: would the guard, judging the whole process, do what its
    # undecided trials cannot?)
    ctest_gpu
    pairs regress 260 --pairs 1 hf_trainer:200 bert_train gpt2_forward
    pairs service 60 --pairs 1 --mode benchmark bucketed_inference:200
    pairs service-trusted 110 --pairs 2 --mode benchmark --run run:NIMBLE_RUN_TRIAL=0 bucketed_inference:200
    python3 "$root/scripts/gpu/bucket_step_medians.py" "$out/$part-service" "$out/$part-service-trusted" > "$out/$part-step-medians.txt"
    cat "$out/$part-step-medians.txt"
    grep -ho '"guard": {[^}]*}' "$out/$part"-*/*.run.json 2>/dev/null | cut -c1-400
    ;;
  100)  # programs never run under nimble before: a model benchmarked with CUDA events read each step
    # (elapsed_time after end.synchronize()) or around five passes, both modes; training profiled by
    # torch.profiler for three steps; one interleaved pair each; the programs check their event times
    # and profile (exit 1 if untrue or empty)
    pairs events 240 --pairs 1 event_timed_step event_timed_block profiled_train
    pairs events-bench 200 --pairs 1 --mode benchmark event_timed_step event_timed_block
    grep -H '^EVENTS\|^PROFILE' "$out/$part"-events*/*.log 2>/dev/null | cut -c1-200
    grep -H 'untrue\|Error\|saw no' "$out/$part"-events*/*.log 2>/dev/null | head
    grep -ho '"guard": {[^}]*}' "$out/$part"-*/*.run.json 2>/dev/null | cut -c1-300
    ;;
  101)  # two more programs never run under nimble before: hand-written Triton kernels (an autotuned
    # matmul: Triton times its candidates at the first call) between PyTorch ops, and a TorchScript
    # model (scripted, frozen, optimized for inference); one interleaved pair each, both modes
    pairs kernels 230 --pairs 1 triton_kernels torchscript_infer
    pairs kernels-bench 200 --pairs 1 --mode benchmark triton_kernels torchscript_infer
    grep -H 'Error\|Traceback' "$out/$part"-kernels*/*.log 2>/dev/null | head
    grep -h 'nimble run:' "$out/$part"-kernels*/*.run.log 2>/dev/null | cut -c1-400 | head -40
    ;;
  102)  # processes without a rank under one nimble run -o (the output claim): GPU tests; a learning-rate
    # sweep whose two workers torch.multiprocessing.spawn starts, plain then under nimble run: each
    # worker's losses as plain's, a trace and a summary per worker
    ctest_gpu
    # (part 102's first run claimed with an abstract UNIX socket, which both workers bound: can this
    # machine bind one twice?)
    python3 -c 'import socket
a = socket.socket(socket.AF_UNIX); a.bind("\0nimble-probe")
b = socket.socket(socket.AF_UNIX)
try:
    b.bind("\0nimble-probe"); print("abstract socket: bound twice")
except OSError as e:
    print("abstract socket: second bind refused:", e)' 2>&1 | tee "$out/abstract-socket.txt"
    cd "$root/tests/programs"
    STEPS=80 timeout 150 python3 spawn_sweep.py > "$out/spawn-plain.txt" 2>&1
    echo "plain: exit $?"
    mkdir -p "$out/spawn"
    STEPS=80 timeout 200 "$root/build-gpu/bin/nimble" run -o "$out/spawn/trace.json" -- python3 spawn_sweep.py \
      > "$out/spawn-run.txt" 2>&1
    echo "nimble run: exit $?"
    cd "$root/scripts/gpu"
    grep -h '^WORKER' "$out/spawn-plain.txt" | sort | tee "$out/spawn-workers-plain.txt"
    grep -h '^WORKER' "$out/spawn-run.txt" | sort | tee "$out/spawn-workers-run.txt"
    diff <(cut -d' ' -f1-4 "$out/spawn-workers-plain.txt") <(cut -d' ' -f1-4 "$out/spawn-workers-run.txt") \
      && echo "spawn: every worker's losses identical"
    ls "$out/spawn" | tee "$out/spawn-files.txt"
    grep -h '^nimble run' "$out/spawn-run.txt" | cut -c1-300
    cp "$out"/spawn/*.run.json "$out/" 2>/dev/null
    ;;
  103)  # multi-scale training (the input size cycles through three every 10 steps: three recordings),
    # one interleaved pair each mode, 150 steps; the profiled program again, its kernel names listed
    # (part 100: 63 plain, 64 under nimble run: which one is new?)
    pairs multiscale 300 --pairs 1 multiscale_train:150
    pairs multiscale-bench 260 --pairs 1 --mode benchmark multiscale_train:150
    pairs profiled 120 --pairs 1 profiled_train
    for f in "$out/$part"-profiled/profiled_train.0.*.log; do
      grep -h '^PROFILE' "$f" | python3 -c 'import json, sys; print("\n".join(json.loads(sys.stdin.read()[8:])["names"]))' \
        > "$f.names"
    done
    diff "$out/$part"-profiled/profiled_train.0.plain.log.names "$out/$part"-profiled/profiled_train.0.run.log.names \
      | tee "$out/$part-profile-names-diff.txt"
    grep -h 'nimble run: recording' "$out/$part"-multiscale*/*.run.log | cut -c1-300
    ;;
  104)  # multi-scale training with zero_grad() before the forward pass (part 103's, between forward
    # and backward, drifted: all three recordings dropped): one interleaved pair each mode, 150 steps
    pairs multiscale-zero 300 --pairs 1 multiscale_zero_first:150
    pairs multiscale-zero-bench 260 --pairs 1 --mode benchmark multiscale_zero_first:150
    grep -h 'nimble run: recording' "$out/$part"-multiscale*/*.run.log | cut -c1-300
    ;;
  105)  # a new period recorded from where a live recording begins (the automatic range's alignment):
    # GPU tests; multi-scale training with zero_grad() first in benchmark mode (part 104: two of its
    # three shapes recorded from the GradScaler's inf check, dropped for falling back at every change
    # of shape), two pairs; deterministic, one pair; regression programs with more than one
    # recording (epochs with an eval pass, the service) and BERT, one pair each
    ctest_gpu
    pairs multiscale-bench 300 --pairs 2 --mode benchmark multiscale_zero_first:150
    pairs multiscale 150 --pairs 1 multiscale_zero_first:150
    pairs regress 200 --pairs 1 epochs_eval_lastbatch bert_train bucketed_inference:200
    grep -h 'nimble run: recording' "$out/$part"-*/*.run.log | cut -c1-300
    ;;
  106)  # recorded again from where the program's steps begin (a recording left three times right after
    # a sync inside its iterations) and the run's claims folder: GPU tests; the spawned sweep (part
    # 102); multi-scale training in benchmark mode, two pairs; programs with a host sync inside
    # their step (GradScaler: ResNet-18 AMP; gradient accumulation; epochs with eval; BERT), one pair each
    ctest_gpu
    cd "$root/tests/programs"
    mkdir -p "$out/spawn"
    STEPS=80 timeout 200 "$root/build-gpu/bin/nimble" run -o "$out/spawn/trace.json" -- python3 spawn_sweep.py \
      > "$out/spawn-run.txt" 2>&1
    echo "nimble run: exit $?"; grep -h '^WORKER' "$out/spawn-run.txt" | sort; ls "$out/spawn"
    cd "$root/scripts/gpu"
    pairs multiscale-bench 260 --pairs 2 --mode benchmark multiscale_zero_first:150
    pairs regress 260 --pairs 1 resnet18_amp_adamw grad_accum epochs_eval_lastbatch bert_train
    grep -h 'nimble run: recording' "$out/$part"-*/*.run.log | cut -c1-300
    ;;
  107)  # the session's final code (the re-recording of part 106 reverted; the run's claims folder
    # kept): GPU tests; the epochs program (part 106: 1.00 with the re-recording), one pair
    ctest_gpu
    pairs regress 150 --pairs 1 epochs_eval_lastbatch
    grep -h 'nimble run: recording' "$out/$part"-*/*.run.log | cut -c1-300
    ;;
  108)  # four programs never run under nimble before (a Fourier neural operator, a mixture-of-experts
    # LM with host-synced routing, DP-SGD's per-sample gradients by torch.func, a CuPy spectral
    # solver): one interleaved pair each, both modes
    pairs new7 330 --pairs 1 fno_train moe_train per_sample_grads cupy_spectral
    pairs new7-bench 240 --pairs 1 --mode benchmark fno_train moe_train per_sample_grads
    grep -H 'Error\|Traceback' "$out/$part"-new7*/*.log 2>/dev/null | head
    grep -h 'nimble run:' "$out/$part"-new7*/*.run.log 2>/dev/null | cut -c1-400 | head -40
    ;;
  109)  # part 108's open questions: the mixture-of-experts LM (nothing repeats) read 0.952 in benchmark
    # mode: two pairs with the idle library, and one with nimble run's library state off
    # (NIMBLE_RUN_SKIP_LIBRARY=0); do two plain FNO processes in benchmark mode differ (part 108: not
    # identical from step 11)?; DP-SGD's per-sample gradients (dropped for moving buffers) on trial
    pairs moe-bench 200 --pairs 2 --idle --mode benchmark moe_train
    pairs moe-bench-nolib 120 --pairs 1 --mode benchmark --run run:NIMBLE_RUN_SKIP_LIBRARY=0 moe_train
    cd "$root/tests/programs"
    for k in 1 2; do
      STEPS=150 CORPUS_MODE=benchmark timeout 60 python3 fno_train.py 2>/dev/null | grep '^CORPUS' > "$out/fno-plain-bench-$k.txt"
    done
    python3 -c 'import json, sys
a, b = (json.loads(open(f).read()[7:]) for f in sys.argv[1:])
d = [i for i, (x, y) in enumerate(zip(a["step_digests"], b["step_digests"])) if x != y]
print("fno_train, two plain processes in benchmark mode:", "identical" if not d else "first differ at step %d (%d of %d steps differ)" % (d[0], len(d), len(a["step_digests"])))' \
      "$out/fno-plain-bench-1.txt" "$out/fno-plain-bench-2.txt" | tee "$out/fno-plain-bench.txt"
    cd "$root/scripts/gpu"
    pairs dpsgd-moving 150 --pairs 1 --run run:NIMBLE_RUN_TRIAL_MOVING=1 per_sample_grads
    grep -h 'nimble run:' "$out/$part"-*/*.run.log 2>/dev/null | grep -v 'replaying /\|trace /' | cut -c1-300 | head -40
    ;;
  110)  # where the mixture-of-experts LM's host time goes (part 109: +0.5-1.8 ms of CPU a step under
    # nimble run, +0.2 idle, for ~1480 calls and 33 host syncs a step): NIMBLE_HOST_TIMES tables of
    # the idle library, nimble run and nimble run without library state, benchmark mode, 200 steps, one vCPU
    (
      cd "$root/tests/programs"
      export STEPS=200 CORPUS_MODE=benchmark
      lib="$root/build-gpu/lib/libnimble.so" nim="$root/build-gpu/bin/nimble"
      LD_PRELOAD=$lib NIMBLE_HOST_TIMES=1 taskset -c 5 python3 moe_train.py > "$out/110-idle-ht.log" 2>&1
      NIMBLE_HOST_TIMES=1 taskset -c 5 "$nim" run -o "$out/110-run.json" -- python3 moe_train.py > "$out/110-run-ht.log" 2>&1
      NIMBLE_HOST_TIMES=1 NIMBLE_RUN_SKIP_LIBRARY=0 taskset -c 5 "$nim" run -o "$out/110-nolib.json" -- python3 moe_train.py \
        > "$out/110-nolib-ht.log" 2>&1
    )
    python3 "$root/scripts/gpu/host_times_diff.py" "$out/110-idle-ht.log" "$out/110-run-ht.log" "$out/110-nolib-ht.log" \
      > "$out/110-host-times.txt"
    head -45 "$out/110-host-times.txt"
    ;;
  111)  # periods looked for where the last 16 tasks occurred before (not the last task alone): GPU
    # tests; the mixture-of-experts LM (part 109: 0.953 in benchmark mode, idle 0.968), two pairs with
    # the idle library, and deterministic, one pair; regression programs whose steps the range must
    # still find (epochs with eval, GPT-2 forward, BERT, the service), one pair each
    ctest_gpu
    pairs moe-bench 220 --pairs 2 --idle --mode benchmark moe_train
    pairs moe 120 --pairs 1 moe_train
    pairs regress 220 --pairs 1 epochs_eval_lastbatch gpt2_forward bert_train bucketed_inference:200
    grep -h 'automatic range looked' "$out/$part"-*/*.run.log | cut -c1-200
    ;;
  112)  # the mixture-of-experts LM's 5% in benchmark mode (part 111: 0.952, idle 0.988): state kept and
    # nothing looked at (a cudaProfilerStart that never comes), two pairs; the same without library
    # state, one pair
    pairs moe-bench-given 220 --pairs 2 --mode benchmark --run run:--capture-range=cudaProfilerApi moe_train
    pairs moe-bench-given-nolib 120 --pairs 1 --mode benchmark \
      --run run:--capture-range=cudaProfilerApi,NIMBLE_RUN_SKIP_LIBRARY=0 moe_train
    ;;
  113)  # the heuristics memory rests when its answers are rarely asked for again (memo_pace.hpp): GPU
    # tests; the mixture-of-experts LM in benchmark mode, two pairs with the idle library (parts 109,
    # 111: 0.952-0.953; without the memory 0.981-1.008); the service in benchmark mode, whose
    # memory answers nearly every query, and BERT training, one pair each
    ctest_gpu
    pairs moe-bench 220 --pairs 2 --idle --mode benchmark moe_train
    pairs service-bench 100 --pairs 1 --mode benchmark bucketed_inference:200
    pairs regress 90 --pairs 1 bert_train
    grep -h 'cuBLASLt heuristics' "$out/$part"-*/*.run.log | cut -c1-250
    ;;
  114)  # the session's final code (2026-12-01): GPU tests; the mixture-of-experts LM in benchmark mode,
    # one pair with the idle library, its summary's "heuristics" (did the memory rest?)
    ctest_gpu
    pairs moe-bench 160 --pairs 1 --idle --mode benchmark moe_train
    for f in "$out/$part"-*/*.run.json; do
      python3 -c 'import json, sys; print(sys.argv[1], json.load(open(sys.argv[1])).get("heuristics"))' "$f"
    done
    ;;
  115)  # which library calls' keys miss an input (the FNO's cuDNN site launched other argument bytes
    # for the same key at a recheck, 2026-12-01): 8 steps of each program recorded, every call of a
    # repeated key compared with the first of it (library_key_misses.py); the FNO under nimble run
    # with every skippable call run and compared (NIMBLE_RUN_LIBRARY_RECHECK=1): its summary's library section
    for prog in fno_train imagenet_style_train unet_segmentation train_amp bert_train; do
      STEPS=30 CORPUS_MODE=deterministic NIMBLE="$root/build-gpu/bin/nimble" timeout 120 \
        bash "$root/scripts/gpu/record_steps.sh" "$out/115-$prog.json" 20:28 "$prog.py" > "$out/115-$prog.record.log" 2>&1
      { echo "== $prog"; python3 library_key_misses.py "$out/115-$prog.json" --examples 12; } 2>&1 | tee -a "$out/115-key-misses.txt"
      python3 moving_args.py "$out/115-$prog.json" --steps 8 --examples 0 > "$out/115-$prog-moving.txt" 2>&1
    done
    (cd "$root/tests/programs" && STEPS=150 CORPUS_MODE=deterministic NIMBLE_RUN_LIBRARY_RECHECK=1 timeout 150 \
      "$root/build-gpu/bin/nimble" run -o "$out/115-fno-recheck.json" -- python3 fno_train.py > "$out/115-fno-recheck.log" 2>&1)
    python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(json.dumps(s.get("library"), indent=1)[:6000])' \
      "$out/115-fno-recheck.run.json" > "$out/115-fno-recheck-library.txt" 2>&1
    cp "$out/115-fno-recheck.run.json" "$results/" 2>/dev/null
    ls "$out"/115-fno-recheck* >> "$out/115-fno-recheck-library.txt"
    head -c 3000 "$out/115-fno-recheck-library.txt"
    ;;
  116)  # part 115's FNO key miss in full (the differing word's parameter, where it points, both
    # launches whole), and more programs with cuDNN or cuBLASLt calls (those that bracket steps)
    for prog in fno_train gan_train simclr_train timm_train_ema diffusion_sample checkpointed_transformer distill_train; do
      STEPS=30 CORPUS_MODE=deterministic NIMBLE="$root/build-gpu/bin/nimble" timeout 120 \
        bash "$root/scripts/gpu/record_steps.sh" "$out/116-$prog.json" 20:28 "$prog.py" > "$out/116-$prog.record.log" 2>&1 ||
        tail -3 "$out/116-$prog.record.log"
      { echo "== $prog"; python3 library_key_misses.py "$out/116-$prog.json" --examples 8 $([ $prog = fno_train ] && echo --dump); } \
        2>&1 | cut -c1-3000 | tee -a "$out/116-key-misses.txt"
    done
    ;;
  117)  # two programs never run under nimble before (a hyper-parameter search of four trials in one
    # process, the cache emptied between them; a seq2seq model with GRUCell loops in Python): a
    # 5-step plain smoke run each, then one interleaved pair each, both modes
    new_programs new8 240 hparam_trials gru_seq2seq
    ;;
  118)  # the GRUCell seq2seq (part 117): why benchmark mode looked no more after its first recording
    # (a 43-call piece of a time step) dropped, and whether its steps' buffers keep moving: nimble
    # run with NIMBLE_DEBUG=1 in both modes, 60 steps; steps 20-27 and 120-127 recorded (moving_args.py);
    # its steps on trial (NIMBLE_RUN_TRIAL_MOVING=1), 150 steps
    (cd "$root/tests/programs" && for mode in benchmark deterministic; do
      STEPS=60 CORPUS_MODE=$mode NIMBLE_DEBUG=1 timeout 100 "$root/build-gpu/bin/nimble" run -o "$out/118-gru-$mode.json" \
        -- python3 gru_seq2seq.py > "$out/118-gru-$mode-debug.log" 2>&1
      grep -v '^CORPUS' "$out/118-gru-$mode-debug.log" | cut -c1-400 | head -150 > "$out/118-gru-$mode-debug.txt"
    done
    STEPS=150 CORPUS_MODE=deterministic NIMBLE_RUN_TRIAL_MOVING=1 timeout 100 "$root/build-gpu/bin/nimble" run \
      -o "$out/118-gru-trial.json" -- python3 gru_seq2seq.py 2>&1 | grep 'nimble run' | cut -c1-400 > "$out/118-gru-trial.txt")
    for range in 20:28 120:128; do
      STEPS=130 CORPUS_MODE=deterministic NIMBLE="$root/build-gpu/bin/nimble" timeout 100 \
        bash "$root/scripts/gpu/record_steps.sh" "$out/118-gru-$range.json" $range gru_seq2seq.py > /dev/null 2>&1
      python3 moving_args.py "$out/118-gru-$range.json" --steps 8 --examples 10 > "$out/118-gru-moving-${range/:/-}.txt" 2>&1
    done
    head -40 "$out/118-gru-benchmark-debug.txt"; cat "$out/118-gru-trial.txt"; head -20 "$out"/118-gru-moving-*.txt
    ;;
  119)  # looks that find only known periods stop nimble run for good after 16384 tasks, not three
    # looks (the GRU seq2seq stopped inside its first step in part 118): GPU tests; the seq2seq with
    # zero_grad() between forward and backward and at the top, both modes; the epochs program and
    # the service (their steps known, left and found again), one pair each
    ctest_gpu
    pairs gru 300 --pairs 1 gru_seq2seq gru_seq2seq_zero_first
    pairs gru-bench 200 --pairs 1 --mode benchmark gru_seq2seq gru_seq2seq_zero_first
    pairs regress 150 --pairs 1 epochs_eval_lastbatch bucketed_inference:200
    grep -h 'nimble run: recording\|stopped\|automatic range looked' "$out/$part"-*/*.run.log | cut -c1-300
    ;;
  120)  # looks for staleness that find only known periods wait twice as long each time (part 119:
    # the seq2seq in benchmark mode looked 577 times, 0.935): GPU tests; the seq2seq both ways, both modes
    ctest_gpu
    pairs gru 260 --pairs 1 gru_seq2seq gru_seq2seq_zero_first
    pairs gru-bench 200 --pairs 1 --mode benchmark gru_seq2seq gru_seq2seq_zero_first
    grep -h 'nimble run: recording\|automatic range looked' "$out/$part"-*/*.run.log | cut -c1-220
    for f in "$out/$part"-*/*.run.run.json; do
      python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(sys.argv[1].split("/")[-2:], s.get("looks_that_found_only_known"), s.get("looking"))' "$f"
    done
    ;;
  121)  # two programs never run under nimble before (a masked LM whose loss takes the masked rows by
    # boolean indexing, a sync with a new row count every step; a VAE over shuffled epochs with a
    # short last batch and an eval pass): a plain smoke run each, one pair each, both modes
    new_programs new9 200 masked_lm_train vae_train
    ;;
  122)  # the process guard times programs whose host syncs come more than four spans' worth of calls
    # apart (the GRU seq2seq: a 24-call piece live, a sync every 2,500 calls; every paused span was
    # cut untimed): GPU tests; the seq2seq both modes; gradient accumulation (a loss read every 10
    # optimizer steps, 1.16x, must stay kept), one pair each
    ctest_gpu
    pairs gru 150 --pairs 1 gru_seq2seq
    pairs gru-bench 150 --pairs 1 --mode benchmark gru_seq2seq
    pairs accum 150 --pairs 1 grad_accum:300
    grep -h 'process guard\|stepped aside' "$out/$part"-*/*.run.log | cut -c1-300
    ;;
  123)  # part 121's VAE: both its recordings (a step, an epoch) dropped for moving buffers, 0.976-0.986
    # of plain: nimble run with NIMBLE_DEBUG=1 (120 steps), steps 20-27 recorded (moving_args.py);
    # gradient accumulation at 800 steps, one pair (its loss read every 10 steps: the lead counts
    # that gap now, and 300 steps were not judged in part 122): does the guard keep it?
    (cd "$root/tests/programs" && STEPS=120 CORPUS_MODE=deterministic NIMBLE_DEBUG=1 timeout 100 \
      "$root/build-gpu/bin/nimble" run -o "$out/123-vae.json" -- python3 vae_train.py > "$out/123-vae-debug.log" 2>&1
      grep -v '^CORPUS' "$out/123-vae-debug.log" | cut -c1-400 | head -200 > "$out/123-vae-debug.txt")
    STEPS=60 CORPUS_MODE=deterministic NIMBLE="$root/build-gpu/bin/nimble" timeout 100 \
      bash "$root/scripts/gpu/record_steps.sh" "$out/123-vae-20-28.json" 20:28 vae_train.py > /dev/null 2>&1
    python3 moving_args.py "$out/123-vae-20-28.json" --steps 8 --examples 10 > "$out/123-vae-moving.txt" 2>&1
    head -30 "$out/123-vae-moving.txt"
    pairs accum800 200 --pairs 1 grad_accum:800
    grep -h 'process guard\|stepped aside' "$out/$part"-*/*.run.log | cut -c1-300
    for f in "$out/$part"-*/*.run.run.json; do
      python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["guard"])' "$f"
    done
    ;;
  124)  # never slower? The VAE read 0.976-0.986 of plain in part 121 (tail, best window and turns, both
    # modes) with its recordings dropped early and nimble run idle after: two pairs with the idle
    # library and an A/A pair, deterministic mode
    pairs vae 330 --pairs 2 --idle --aa vae_train
    ;;
  125)  # where the idle library's 2.5% on the VAE goes (part 124: idle 0.975, nimble run 0.980, A/A
    # 1.007): the idle library with NIMBLE_HOST_TIMES=1 (calls and host time per intercepted
    # function), then perf profiles (cpu-clock, by library and symbol) of plain and idle, 600 steps
    cd "$root/tests/programs"
    STEPS=600 CORPUS_MODE=deterministic LD_PRELOAD="$root/build-gpu/lib/libnimble.so" NIMBLE_HOST_TIMES=1 timeout 100 \
      python3 vae_train.py 2>&1 | grep -v '^CORPUS' > "$out/125-vae-host-times.txt"
    grep -A 40 "host time inside" "$out/125-vae-host-times.txt" | head -42
    perf version || echo "no perf here"
    for cfg in plain idle; do
      pre=(); [ $cfg = idle ] && pre=(env LD_PRELOAD="$root/build-gpu/lib/libnimble.so")
      STEPS=600 CORPUS_MODE=deterministic timeout 100 perf record -e cpu-clock -F 1999 -D 8000 -o "$out/perf-$cfg.data" \
        "${pre[@]}" python3 vae_train.py > "$out/125-perf-$cfg.txt" 2>&1
      perf report -i "$out/perf-$cfg.data" --sort dso --stdio 2>/dev/null | grep -v '^#' | head -25 > "$out/125-perf-$cfg-dso.txt"
      perf report -i "$out/perf-$cfg.data" --sort dso,sym --stdio 2>/dev/null | grep -v '^#' | head -150 > "$out/125-perf-$cfg-sym.txt"
      head -14 "$out/125-perf-$cfg-dso.txt"
    done
    grep -i nimble "$out/125-perf-idle-sym.txt" | head -30
    cd "$root/scripts/gpu"
    ;;
  126)  # GPU tests, with gpu_run_loop_rare_syncs (a host sync every 128 iterations: the process guard
    # must time its paused spans from sync to sync and decide); that test's output and guard summary
    ctest_gpu
    (cd "$root/build-gpu" && ctest -R gpu_run_loop_rare_syncs -V) 2>&1 | grep 'run_and_check' | cut -c1-300
    grep -A8 '"guard"' "$out/run-loop-rare-syncs.run.json" 2>/dev/null | tr -d ' \n'; echo
    ;;
  127)  # the halfway look (a look at a sync that found nothing makes the next stretch quiet at half the
    # gap): GPU tests (gpu_run_loop_rare_syncs: found halfway, no fall-back, the guard judged), then
    # the programs whose looks at syncs find nothing (shapes that follow the data): one pair each,
    # deterministic mode, what each looked at and recorded
    ctest_gpu
    (cd "$root/build-gpu" && ctest -R gpu_run_loop_rare_syncs -V) 2>&1 | grep 'run_and_check' | cut -c1-300
    pairs dyn 420 --pairs 1 masked_lm_train:400 bert_dynamic_padding detection_eval moe_train
    for f in "$out/$part"-dyn/*.run.run.json; do
      python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(sys.argv[1].split("/")[-1], s["looking"], s["guard"]["state"], [(r["calls"], r["state"], r["iterations_replayed"]) for r in s["recordings"]])' "$f"
    done
    ;;
  128)  # never slower? The masked LM read 0.971-0.974 of plain in part 127 with nothing recorded (looks
    # rest after 131,072 tasks): two pairs with the idle library and an A/A pair, 400 steps
    pairs ml 260 --pairs 2 --idle --aa masked_lm_train:400
    ;;
  *)
    echo "pairs_sweep.sh: no part '$part' (1 to 128)" >&2
    exit 2
    ;;
esac
cp "$out"/*.txt "$results/" 2>/dev/null
cd "$out" && tar czf "$results/sweep.tgz" --ignore-failed-read ./*.txt ./*/pairs.csv ./*/pairs.md ./*/ddp.csv ./*/ddp.md ./*/*.run.run.json ./5-ddp-*/*.run.json ./*/*.log ./*/corpus.md ./*/corpus.csv ./7-corpus/*.json ./5[0-9]-corpus/*.run.json ./*/*/step-map/*.log ./*/*/step-map/*.run.json ./jax-debug*.run.json ./jax-side-threads.run.json ./generate-debug-*.run.json ./run-loop*.run.json ./lightning-*.json ./gan-steps.json ./*.log ./bert-dyn.run.json ./trace*.run.json
