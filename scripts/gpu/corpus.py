#!/usr/bin/env python3
"""`nimble run` on the corpus of ordinary programs (tests/programs/), on the GPU machine.

Each program runs plain (libnimble.so not loaded), then unchanged under `nimble run`; both print
a `CORPUS {json}` line (tests/programs/corpus_common.py). The table says, per program: the
iteration nimble replayed most (its calls), how many iterations were replayed (every recording's,
set-up patterns included), how many of the program's steps had replayed work (the program asks
libnimble.so after each step) and what share of the steady state that is (from the first two
such steps in a row on), whether every step's
results are bitwise identical, the in-process ratio (the trial's timed blocks of plain and
replayed iterations in the one process; --compare when COMPARE=N is set), the process-pair
ratio (median step time of the last half of the steps, plain / under nimble run; with --pairs N
the median over N alternating pairs, each pair's ratio listed), and, when nothing was replayed, why.
On the shared GPU machine one process after another meets different host contention (two plain
processes land up to 2x apart); scripts/gpu/process_pairs.py --interleaved --pin CPU measures pairs
side by side on one vCPU instead (docs/benchmarks/process-pairs-h100-nov27).

    python3 scripts/gpu/corpus.py [--out DIR] [--only NAME ...] [--mode deterministic|benchmark|both] [--pairs N] [--pin CPUS]

Writes DIR/corpus.md, DIR/corpus.csv and DIR/NAME.{plain,nimble}.log; DEADLINE (seconds) skips
programs not started in time.
"""
import argparse
import csv
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "tests", "programs")

# name, script and arguments, steps, extra environment, modes it runs in
CORPUS = [
    ("timm_pnasnet", ["timm_infer.py", "pnasnet5large"], 40, {}, ("deterministic", "benchmark")),
    ("timm_efficientnet", ["timm_infer.py", "efficientnet_b0"], 80, {}, ("deterministic", "benchmark")),
    ("inception_v3", ["vision_infer.py", "inception_v3"], 80, {}, ("deterministic", "benchmark")),
    ("gpt2_forward", ["hf_gpt2_forward.py"], 60, {}, ("deterministic", "benchmark")),
    ("gpt2_generate", ["hf_generate.py"], 40, {}, ("deterministic",)),
    ("bert_train", ["bert_train.py"], 60, {}, ("deterministic", "benchmark")),
    ("resnet18_amp_adamw", ["train_amp.py"], 60, {}, ("deterministic", "benchmark")),
    ("epochs_eval_lastbatch", ["train_epochs_eval.py"], 60, {}, ("deterministic", "benchmark")),
    ("googlenet_pinned", ["pinned_nonblocking.py"], 80, {}, ("deterministic", "benchmark")),
    ("compile_default", ["compile_default.py"], 80, {}, ("deterministic", "benchmark")),
    ("compile_reduce_overhead", ["compile_reduce_overhead.py"], 80, {}, ("deterministic",)),
    ("torch_cuda_graph", ["cuda_graph_manual.py"], 80, {}, ("deterministic",)),
    ("jax_flax_train", ["jax_flax_train.py"], 60, {"XLA_FLAGS": "--xla_gpu_autotune_level=0",
                                                   "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, ("default",)),
    # XLA's own defaults: autotuning on, command buffers on; and autotuning on, command buffers off.
    # XLA times its candidate kernels in each process, so two plain processes differ (H200: from
    # step 5), as cuDNN's benchmark mode does: the mode "autotuned" says so.
    ("jax_autotune", ["jax_flax_train.py"], 60, {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, ("autotuned",)),
    ("jax_autotune_no_buffers", ["jax_flax_train.py"], 60, {"XLA_FLAGS": "--xla_gpu_enable_command_buffer=",
                                                            "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, ("autotuned",)),
    ("cupy_loop", ["cupy_loop.py"], 80, {}, ("default",)),
    # Several streams (#14): a prefetching copy stream and an EMA stream; DDP with one rank.
    ("side_streams", ["side_streams.py"], 60, {}, ("deterministic", "benchmark")),
    ("ddp_one_rank", ["ddp_train.py", "resnet18"], 60, {}, ("deterministic", "benchmark")),
    # Gradient accumulation (4 micro-batches per step), bf16, LambdaLR, loss read every 10 steps.
    ("grad_accum", ["grad_accum.py"], 60, {}, ("deterministic", "benchmark")),
    # A DataLoader with worker processes and a pinning thread; GPT-2 fine-tuning with dropout and
    # gradient checkpointing; Hugging Face's Trainer running the loop.
    # (At 60 steps the trial took a third of GPT-2's steps and outlasted the Trainer's: H200.)
    ("dataloader_workers", ["dataloader_workers.py"], 66, {}, ("deterministic", "benchmark")),
    ("gpt2_finetune", ["gpt2_finetune.py"], 100, {}, ("deterministic", "benchmark")),
    ("hf_trainer", ["hf_trainer.py"], 120, {}, ("deterministic", "benchmark")),
    # Added 2026-11-29, unseen before their first run: a Llama-style LM trained with SDPA, GQA,
    # fused AdamW and a cosine schedule; a ViT evaluation loop with inference_mode, bf16 and a
    # running top-1/top-5 accuracy read every batch.
    ("llama_train", ["llama_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("vit_eval", ["vit_eval.py"], 100, {}, ("deterministic", "benchmark")),
    # Checkpoints saved every 25 steps with torch.cuda.empty_cache() after each, a validation every 50.
    ("checkpointing_train", ["checkpointing_train.py"], 100, {}, ("deterministic", "benchmark")),
    # Added 2026-11-29 (second set), unseen before their first run: PyTorch Lightning running the
    # loop; BERT with dynamic padding (the sequence length changes from batch to batch); an LSTM
    # language model with truncated BPTT (cuDNN's RNN); Faster R-CNN evaluation (shapes set by
    # the data, host copies inside each step).
    ("lightning_train", ["lightning_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("bert_dynamic_padding", ["bert_dynamic_padding.py"], 100, {}, ("deterministic", "benchmark")),
    ("lstm_lm", ["lstm_lm.py"], 100, {}, ("deterministic", "benchmark")),
    # Two more, written as their tutorials do (2026-11-29): a DCGAN (two optimizers, .item() reads
    # in the middle of the step) and PPO on host-simulated cart-poles (a sync every environment step,
    # thousands of tiny kernels per corpus step).
    ("gan_train", ["gan_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("rl_rollout", ["rl_rollout.py"], 10, {}, ("deterministic",)),
    ("detection_eval", ["detection_eval.py"], 100, {}, ("deterministic", "benchmark")),
    # A fourth set (2026-11-29), unseen before their first run: timm's training recipe by hand (EMA
    # weights, per-step cosine schedule, label smoothing, bf16, channels-last, loss logged every 10
    # steps); a U-Net segmentation with fp16 GradScaler, Dice + BCE and a running IoU on the GPU;
    # a transformer trained with activation checkpointing and gradient accumulation; torch.compile
    # of a training step's model (ConvNeXt) with AMP.
    ("timm_train_ema", ["timm_train_ema.py"], 100, {}, ("deterministic", "benchmark")),
    ("unet_segmentation", ["unet_segmentation.py"], 100, {}, ("deterministic", "benchmark")),
    ("checkpointed_transformer", ["checkpointed_transformer.py"], 100, {}, ("deterministic", "benchmark")),
    ("compile_train_amp", ["compile_train_amp.py"], 100, {}, ("deterministic", "benchmark")),
    # PyTorch's ImageNet example's train loop (2026-11-29): zero_grad() between the forward and the
    # backward pass, as the example has it (the gradients' blocks drift: scripts/gpu/alloc_drift.py),
    # and the same script with zero_grad() before the forward pass (they rotate among three sets).
    ("imagenet_style_train", ["imagenet_style_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("imagenet_style_zero_first", ["imagenet_style_train.py"], 100, {"ZERO_GRAD_AT": "before"},
     ("deterministic", "benchmark")),
    # The same with GroupNorm for batch norm: no cuDNN batch-norm kernels (part 44).
    ("imagenet_style_group_norm", ["imagenet_style_train.py"], 100, {"NORM": "group"}, ("deterministic",)),
    # A fifth set (2026-11-29), unseen before their first run: diffusion sampling (a DDPM U-Net,
    # classifier-free guidance, a DDIM sampler's host-computed coefficients, a new batch every 25
    # denoising steps); SimCLR-style contrastive training (GPU augmentations, NT-Xent, a hand-set
    # warm-up and cosine learning rate); a GCN trained full-batch (index_add_ message passing,
    # boolean-mask indexing, an evaluation every 5 steps).
    ("diffusion_sample", ["diffusion_sample.py"], 100, {}, ("deterministic", "benchmark")),
    ("simclr_train", ["simclr_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("gnn_train", ["gnn_train.py"], 100, {}, ("deterministic", "benchmark")),
    # A sixth set (2026-11-30), unseen before their first run: a DLRM-style recommender (EmbeddingBag
    # tables, pairwise interactions, Adagrad and SGD); knowledge distillation (a frozen ResNet-50
    # teacher, a ResNet-18 student under bf16 autocast, a validation every 25 steps); an inference
    # service whose batches come padded to one of three lengths, drawn at random (a recording each).
    ("recsys_train", ["recsys_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("distill_train", ["distill_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("bucketed_inference", ["bucketed_inference.py"], 200, {}, ("deterministic", "benchmark")),
    # Added 2026-11-30, unseen before its first run: a model benchmarked with CUDA events around the
    # work (ResNet-50 fp16 inference), read with elapsed_time each step, or around five passes; the
    # program checks its event times are true.
    ("event_timed_step", ["event_timed_bench.py", "per-step"], 200, {}, ("deterministic", "benchmark")),
    ("event_timed_block", ["event_timed_bench.py", "per-block"], 100, {}, ("deterministic", "benchmark")),
    # Training profiled for steps 22-24 by torch.profiler (CUPTI is the profiler's): the program
    # checks its profile still holds the GPU's kernels.
    ("profiled_train", ["profiled_train.py"], 100, {}, ("deterministic", "benchmark")),
    # Hand-written Triton kernels (an autotuned matmul, a row softmax) between PyTorch ops; a model
    # scripted, frozen and optimized for inference through TorchScript.
    ("triton_kernels", ["triton_kernels.py"], 200, {}, ("deterministic", "benchmark")),
    ("torchscript_infer", ["torchscript_infer.py"], 200, {}, ("deterministic", "benchmark")),
    # Multi-scale training: the input size cycles through three every 10 steps (a recording each).
    ("multiscale_train", ["multiscale_train.py"], 150, {}, ("deterministic", "benchmark")),
    ("multiscale_zero_first", ["multiscale_train.py"], 150, {"ZERO_GRAD_AT": "before"}, ("deterministic", "benchmark")),
    # A seventh set (2026-12-01), unseen before their first run: a Fourier neural operator (cuFFT inside
    # the model and the data); a mixture-of-experts LM whose routing syncs with the host and changes
    # the experts' shapes every step; DP-SGD's per-sample gradients through torch.func's vmap(grad);
    # a CuPy reaction-diffusion solver (cuFFT plans cached by CuPy, an ElementwiseKernel, cuRAND).
    ("fno_train", ["fno_train.py"], 150, {}, ("deterministic", "benchmark")),
    ("moe_train", ["moe_train.py"], 100, {}, ("deterministic", "benchmark")),
    ("per_sample_grads", ["per_sample_grads.py"], 150, {}, ("deterministic", "benchmark")),
    ("cupy_spectral", ["cupy_spectral.py"], 200, {}, ("default",)),
    # An eighth (2026-12-01, thirty-third session): a hyper-parameter search of four trials in one
    # process (models built afresh, PyTorch's cache emptied between trials); a seq2seq model whose
    # GRUCell recurrences are stepped in Python (launch-bound).
    ("hparam_trials", ["hparam_trials.py"], 240, {}, ("deterministic", "benchmark")),
    ("gru_seq2seq", ["gru_seq2seq.py"], 150, {}, ("deterministic", "benchmark")),
    ("gru_seq2seq_zero_first", ["gru_seq2seq.py"], 150, {"ZERO_GRAD_AT": "before"}, ("deterministic", "benchmark")),
    # A BERT-style masked LM whose loss takes the masked rows by boolean indexing (a sync and a
    # different row count every step); a convolutional VAE over shuffled epochs with a short last
    # batch, randn_like every step and an eval pass with samples after each epoch.
    ("masked_lm_train", ["masked_lm_train.py"], 200, {}, ("deterministic", "benchmark")),
    ("vae_train", ["vae_train.py"], 204, {}, ("deterministic", "benchmark")),
]


def steps_replayed(per_step):
    """From the iterations replayed during each step (CORPUS's step_replayed): how many steps had
    work replayed, and the share of the steady state that was. The steady state begins with the
    first two steps in a row that had work replayed (a lone replay before is a recording of the
    set-up's own pattern, not the loop); before it: set-up detection, the first recordings. None
    when not known."""
    if per_step is None:
        return None
    replayed = [1 if n > 0 else 0 for n in per_step]
    first = next((i for i in range(len(replayed) - 1) if replayed[i] and replayed[i + 1]), None)
    if first is None:  # no two in a row: from the first replayed step, if any
        first = next((i for i, r in enumerate(replayed) if r), None)
    steady = len(replayed) - first if first is not None else 0
    steady_replayed = sum(replayed[first:]) if steady else 0
    return {"steps_replayed": sum(replayed), "steady_steps": steady, "steady_replayed": steady_replayed,
            "steady_share": round(steady_replayed / steady, 3) if steady else 0.0}


def step_marks(per_step, segments):
    """One mark per step (CORPUS's step_replayed and step_segments), to see where a run's steps went:
    R whole iterations replayed, s recorded segments launched without a whole iteration (a partial),
    . nothing of nimble's reached the GPU. None when not known (a plain process)."""
    if per_step is None:
        return None
    segments = segments or [0] * len(per_step)
    return "".join("R" if r else ("s" if g else ".") for r, g in zip(per_step, segments))


def first_difference(a, b):
    """The first step whose digests differ (a shorter list differs where it ends), or None."""
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    return first if first is not None or len(a) == len(b) else min(len(a), len(b))


# Modes in which each process times its own algorithms (cuDNN's benchmark mode, XLA's autotuning),
# so two plain processes may differ.
TIMED_PER_PROCESS = ("benchmark", "autotuned")
# A program's only way of running (JAX, CuPy), whatever --mode asks for; and every mode.
ONLY_MODES = ("default", "autotuned")
MODES = ("deterministic", "benchmark") + ONLY_MODES


def identity(traces, mode):
    """Are every process's results the first plain process's? Each trace: config ("plain", "plain2",
    "run", "idle"), its CORPUS line (step_digests, final, step_replayed, step_segments) and its exit
    status. An exit status other than plain's is a different result whatever the digests say. In
    benchmark and autotuned modes two plain processes differ (cuDNN, or XLA, times its algorithms
    anew in each), so a nimble process that differs only from a step before any replayed work
    reached the GPU (step_segments: partial iterations count; older builds: step_replayed) differs
    the way plain processes do; a difference from then on is nimble's to answer, unless a second plain
    process (the A/A pair's, "plain2") differs from the first too: the mode is then shown not to be
    deterministic for this program, and nothing can be said (FNO training in benchmark mode: two plain
    processes differ from step 4). In any other mode every difference counts."""
    plain = next((t for t in traces if t["config"] == "plain"), None)
    if plain is None or plain["exit"] != 0 or not plain["line"].get("step_digests"):
        return "unknown: the plain process %s" % ("is missing" if plain is None else
                                                   "exited %s" % plain["exit"] if plain["exit"] != 0 else "printed no digests")
    reference = plain["line"]
    unexplained = []
    plain2 = next((t for t in traces if t["config"] == "plain2" and t["exit"] == plain["exit"]), None)
    plain2_differs = None  # where a second plain process first differs from the first, in a timed mode
    if plain2 is not None and mode in TIMED_PER_PROCESS and plain2["line"].get("step_digests"):
        plain2_differs = first_difference(reference["step_digests"], plain2["line"]["step_digests"])
    for t in traces:
        config, line = t["config"], t["line"]
        if t["exit"] != plain["exit"]:
            return "**no** (%s exited %s, plain %s)" % (config, t["exit"], plain["exit"])
        digests = line.get("step_digests")
        if not digests:
            return "**no** (%s printed no digests)" % config
        first = first_difference(reference["step_digests"], digests)
        if first is None and line.get("final") != reference.get("final"):
            first = len(digests)  # the final state differs: after the last step
        if first is None:
            continue
        counts = line.get("step_segments") or line.get("step_replayed")
        if counts is None and config not in ("plain", "plain2"):
            return "**no** (%s from step %d; it printed no replay counts)" % (config, first)
        first_work = next((i for i, n in enumerate(counts or []) if n), None)
        if mode not in TIMED_PER_PROCESS or (first_work is not None and first >= first_work):
            worked = "" if first_work is None else "; replayed work from step %d" % first_work
            if plain2_differs is not None and config != "plain2":  # (set in timed modes only)
                return "n/a: %s from step %d%s, and two plain processes differ too, from step %d (%s mode is not " \
                       "deterministic here)" % (config, first, worked, plain2_differs, mode)
            return "**no** (%s from step %d%s)" % (config, first, worked)
        unexplained.append("%s from step %d" % (config, first))
    if unexplained:
        return "n/a: %s, before any replayed work (%s mode: plain processes differ too)" % (", ".join(unexplained), mode)
    return "yes"


def nimble_paths():
    """The nimble binary and libnimble.so: $NIMBLE_BUILD (a build folder, to compare two builds on
    one lease), build-gpu/ (carried to the GPU machine) or build/."""
    nimble = os.path.join(ROOT, os.environ.get("NIMBLE_BUILD", "build-gpu"), "bin", "nimble")
    if "NIMBLE_BUILD" in os.environ and not os.path.exists(nimble):
        sys.exit(f"corpus.py: NIMBLE_BUILD={os.environ['NIMBLE_BUILD']}: no {nimble}")
    if not os.path.exists(nimble):
        nimble = os.path.join(ROOT, "build", "bin", "nimble")
    return nimble, os.path.join(os.path.dirname(os.path.dirname(nimble)), "lib", "libnimble.so")


def configured(config, cmd, env, trace):
    """(cmd, env) of a program run in one configuration: plain (libnimble.so not loaded), idle
    (libnimble.so preloaded, no mode), run (under nimble run, its trace to `trace`) or
    run:VAR=V,VAR2=V2 (nimble run with these settings; --OPTION=V passes nimble run an option)."""
    nimble, preload = nimble_paths()
    env = dict(env)
    env.pop("LD_PRELOAD", None)
    if config == "idle":
        env["LD_PRELOAD"] = preload
    elif config == "run" or config.startswith("run:"):
        options = []
        for setting in filter(None, config[4:].split(",")):
            name, value = setting.split("=", 1)
            if name.startswith("--"):
                options += [name, value]
            else:
                env[name] = value
        cmd = [nimble, "run", "-o", trace] + options + ["--"] + cmd
    elif config != "plain":
        sys.exit("unknown configuration %r (plain, idle, run, run:VAR=V,...)" % config)
    return cmd, env


def add_program_arguments(ap, steps, out_name):
    """The arguments of the scripts that run one corpus program in several configurations
    (step_times.py, process_noise.py): the script, its own arguments, steps, mode, where logs go."""
    ap.add_argument("program", help="script under tests/programs, with its arguments after --args")
    ap.add_argument("--args", nargs="*", default=[])
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--mode", default="deterministic")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), out_name))


def corpus_line(text):
    for line in reversed(text.splitlines()):
        if line.startswith("CORPUS "):
            return json.loads(line[len("CORPUS "):])
    return None


def recording_states(summary):
    """Each recording of a nimble run summary in a few words: its trace, its state, its trial's
    speedup; a trial the program ended before is marked (the run was too short to decide)."""
    def one(r):
        speed = " %.2fx" % r["trial_speedup"] if r.get("trial_speedup") else ""
        return "%s:%s%s%s" % (os.path.basename(r["trace"]), r["state"], speed,
                              " (undecided at exit)" if r.get("undecided_because") else "")
    guard = summary.get("guard", {})
    verdict = ""
    if guard.get("state") not in (None, "waiting", "off"):  # the process guard judged (or was judging at exit)
        ratio = guard.get("paused_over_running")
        verdict = " guard:%s%s" % (guard["state"].replace(" ", "-"), " %.3f" % ratio if ratio else "")
    return " ".join(one(r) for r in summary.get("recordings", [])) + verdict


def run_summary(trace):
    """The run summary nimble run wrote beside TRACE (a .json path), or {}."""
    try:
        with open(trace[:-5] + ".run.json") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def run(cmd, env, log, timeout):
    """Runs cmd in the programs' folder; on timeout its whole process group goes (torchrun's
    ranks too, which would otherwise keep their GPUs). Returns (output, exit code or "timeout", s)."""
    start = time.time()
    p = subprocess.Popen(cmd, env=env, cwd=PROGRAMS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, code = p.communicate()[0], "timeout"
    with open(log, "w") as f:
        f.write(out or "")
    return out or "", code, time.time() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "corpus-results"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--mode", default="deterministic", choices=["deterministic", "benchmark", "both"])
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--steps", type=int, help="steps of every program (generate: a quarter as many generate() calls; default: each its own)")
    ap.add_argument("--pairs", type=int, default=1,
                    help="alternating plain / nimble run process pairs per program (default 1); the process "
                         "ratio is the median over pairs of each pair's ratio of last-half step medians")
    ap.add_argument("--pin", metavar="CPUS",
                    help="run every process under `taskset -c CPUS` (plain and nimble run alike), so that pairs "
                         "compare nimble, not where the scheduler placed each process")
    ap.add_argument("--idle", action="store_true",
                    help="also run each pair's plain process with libnimble.so preloaded and no mode set: the "
                         "cost nimble run must not exceed while it replays nothing")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)  # the programs run in tests/programs
    nimble, preload = nimble_paths()
    pin = []
    if args.pin:
        if not shutil.which("taskset"):
            sys.exit("corpus.py: --pin needs taskset (util-linux), which is not on this machine")
        pin = ["taskset", "-c", args.pin]
    os.makedirs(args.out, exist_ok=True)
    deadline = time.time() + float(os.environ.get("DEADLINE", "1e9"))
    rows = []
    for name, script, steps, extra, modes in CORPUS:
        if args.only and name not in args.only:
            continue
        for mode in modes:
            if args.mode != "both" and mode != args.mode and mode not in ONLY_MODES:
                continue
            tag = name + "_bench" if mode == "benchmark" else name
            if time.time() > deadline:
                rows.append({"program": tag, "mode": mode, "why": "skipped (deadline)"})
                continue
            if args.steps:
                steps = args.steps
            env = dict(os.environ, STEPS=str(steps), CORPUS_MODE=mode, PYTHONUNBUFFERED="1", **extra)
            env.pop("LD_PRELOAD", None)
            program = [sys.executable] + script
            cmd = pin + program
            plain_out, plain_code, plain_s = run(cmd, env, os.path.join(args.out, tag + ".plain.log"), args.timeout)
            # Benchmark mode: cuDNN times its algorithms in each process, so two plain processes may
            # already differ; a second plain run says whether a difference is nimble's.
            again = None
            if mode in TIMED_PER_PROCESS:
                again = corpus_line(run(cmd, env, os.path.join(args.out, tag + ".plain2.log"), args.timeout)[0])
            trace = os.path.join(args.out, tag + ".json")
            ncmd = pin + [nimble, "run", "-o", trace]
            if os.environ.get("COMPARE"):
                ncmd += ["--compare", os.environ["COMPARE"]]
            nim_out, nim_code, nim_s = run(ncmd + ["--"] + program, env, os.path.join(args.out, tag + ".nimble.log"),
                                           args.timeout)
            plain, nim = corpus_line(plain_out), corpus_line(nim_out)
            row = {"program": tag, "mode": mode, "plain_exit": plain_code, "nimble_exit": nim_code,
                   "plain_s": round(plain_s, 1), "nimble_s": round(nim_s, 1)}
            summary = run_summary(trace)
            recs = summary.get("recordings", [])
            main_rec = max(recs, key=lambda r: r.get("iterations_replayed", 0), default=None)
            row["recordings"] = len(recs)
            row["iteration_calls"] = main_rec["calls"] if main_rec else ""
            # Graph nodes rewritten per replayed iteration: buffers that move between iterations.
            if main_rec and main_rec.get("iterations_replayed"):
                row["writes_per_iteration"] = round(main_rec.get("graphs", {}).get("node_updates", 0) /
                                                    main_rec["iterations_replayed"], 1)
            row["replayed"] = summary.get("iterations_replayed", 0)
            row["steps"] = plain["steps"] if plain else ""
            per_step = nim.get("step_replayed") if nim else None  # iterations replayed during each step
            row.update(steps_replayed(per_step) or {})
            row["identical"] = bool(plain and nim and plain["digest"] == nim["digest"]
                                    and plain.get("final") == nim.get("final"))
            if again is not None:
                row["plain_runs_identical"] = bool(plain and again and plain["digest"] == again["digest"])
            if plain and nim and not row["identical"]:
                row["first_difference"] = first_difference(plain["step_digests"], nim["step_digests"])
            row["results"] = identity([{"config": "plain", "line": plain or {}, "exit": plain_code},
                                       {"config": "run", "line": nim or {}, "exit": nim_code}], mode)
            speedups = [r.get("trial_speedup") for r in recs if r.get("trial_speedup")]
            if main_rec and main_rec.get("trial_speedup"):
                row["in_process"] = round(main_rec["trial_speedup"], 3)
            elif summary.get("compare", {}).get("speedup"):
                row["in_process"] = round(summary["compare"]["speedup"], 3)
            else:
                row["in_process"] = round(max(speedups), 3) if speedups else ""
            # More alternating pairs (plain, nimble run, plain, ...): one pair cannot show a few percent.
            pairs = [(plain, nim)]
            idle_ratios = []
            idle_env = dict(env, LD_PRELOAD=preload)
            for k in range(2, args.pairs + 1):
                p_k = corpus_line(run(cmd, env, os.path.join(args.out, "%s.plain.%d.log" % (tag, k)), args.timeout)[0])
                n_k = corpus_line(run(ncmd + ["--"] + program, env, os.path.join(args.out, "%s.nimble.%d.log" % (tag, k)),
                                      args.timeout)[0])
                pairs.append((p_k, n_k))
            for k in range(1, args.pairs + 1) if args.idle else ():
                i_k = corpus_line(run(cmd, idle_env, os.path.join(args.out, "%s.idle.%d.log" % (tag, k)), args.timeout)[0])
                p_k = pairs[k - 1][0]
                if i_k and p_k and i_k.get("tail_ms", 0) > 0:
                    idle_ratios.append(p_k.get("tail_ms", p_k["median_ms"]) / i_k["tail_ms"])
            ratios, plain_ms, nim_ms = [], [], []
            for p_k, n_k in pairs:
                if not (p_k and n_k):
                    continue
                pm, nm = p_k.get("tail_ms", p_k["median_ms"]), n_k.get("tail_ms", n_k["median_ms"])
                if pm > 0 and nm > 0:
                    ratios.append(pm / nm)
                    plain_ms.append(pm)
                    nim_ms.append(nm)
            if ratios:
                row["plain_ms"] = round(statistics.median(plain_ms), 3)
                row["nimble_ms"] = round(statistics.median(nim_ms), 3)
                row["process_ratio"] = round(statistics.median(ratios), 3)
                row["pair_ratios"] = " ".join("%.3f" % r for r in ratios)
            if idle_ratios:
                row["idle_ratio"] = round(statistics.median(idle_ratios), 3)
            row["states"] = recording_states(summary)
            why = summary.get("nothing_replayed_because", "")
            if not why and not summary:
                lines = [l for l in nim_out.splitlines() if l.startswith("nimble run:") or l.startswith("nimble:")]
                why = lines[-1] if lines else "no summary"
            row["why"] = why[:300]
            rows.append(row)
            print(json.dumps(row), flush=True)
    fields = ["program", "mode", "recordings", "iteration_calls", "writes_per_iteration", "replayed", "steps", "steps_replayed",
              "steady_steps", "steady_share", "identical",
              "plain_runs_identical", "in_process",
              "process_ratio", "pair_ratios", "idle_ratio", "plain_ms", "nimble_ms", "states", "why", "first_difference", "plain_exit",
              "nimble_exit", "plain_s", "nimble_s"]
    with open(os.path.join(args.out, "corpus.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    with open(os.path.join(args.out, "corpus.md"), "w") as f:
        f.write("| program | mode | iteration (calls) | iterations replayed | steps replayed / steps | of the steady state | identical | two plain runs identical | in-process | process pairs | each pair | preloaded idle | plain ms | nimble ms | recordings | why nothing replayed |\n")
        f.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
        for r in rows:
            twice = r.get("plain_runs_identical")
            share = "%d / %d (%.0f%%)" % (r["steps_replayed"], r["steady_steps"], 100 * r["steady_share"]) if "steady_steps" in r else ""
            f.write("| %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["program"], r.get("mode", ""), r.get("iteration_calls", ""), r.get("replayed", ""),
                r.get("steps_replayed", ""), r.get("steps", ""), share,
                r.get("results", "yes" if r.get("identical") else "**no**"), "" if twice is None else ("yes" if twice else "no"),
                r.get("in_process", ""), r.get("process_ratio", ""), r.get("pair_ratios", ""), r.get("idle_ratio", ""),
                r.get("plain_ms", ""), r.get("nimble_ms", ""), r.get("states", ""), r.get("why", "")))
    print("wrote", os.path.join(args.out, "corpus.md"))


if __name__ == "__main__":
    main()
