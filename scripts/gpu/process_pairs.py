#!/usr/bin/env python3
"""Is a program slower under `nimble run` than plain, process against process? On the GPU machine.

One process pair cannot say: the machine's vCPUs slow down and speed up by up to 2x for seconds at
a time (docs/benchmarks/process-noise-h100-nov27: the same vCPU, pinned, runs a step in 0.13 ms
and, a minute later, 0.28 ms; no steal, GPU clocks constant), and a launch-bound step follows the
CPU. So each program runs as PAIRS alternating pairs in ABBA order (plain, nimble, nimble, plain,
...), and each process's step time is taken two ways over the last half of its steps (after nimble
run has found, recorded and tried the iteration):

    tail  the median step time
    best  the fastest median of any window of a tenth of those steps: the step time the process
          reaches when its CPU is not slowed by other tenants (contention only ever adds time)

With --interleaved the two processes of a pair run side by side and take turns of 20 steps (--turn; each
waits on a FIFO while the other runs; tests/programs/corpus_common.py), so both meet the same
stretches of time; the wait is not counted in any step. The contention is also per vCPU (two
plain processes side by side still land 20% apart), so --pin puts both on the same vCPUs.

    turns (--interleaved) turn k of one process and turn k of the other ran one right after the
          other, so they met the same stretch of the host: the ratio of their summed step times,
          turn by turn over the last half, pooled over all pairs, median (with --turn 2 the host's
          slow stretches of seconds fall on both sides of nearly every turn)

Ratios are plain / nimble run (above 1: nimble is faster), the median over pairs. The plain-versus-
plain ratio (A/A: --aa's pair side by side, else neighbouring plain processes) says how far apart two
identical processes land, i.e. the resolution of the measurement.

    python3 scripts/gpu/process_pairs.py [--pairs 4] [--steps N] [--idle] [--aa] [--interleaved] [--mode M] NAME[:STEPS] ...

NAME is a corpus program (scripts/gpu/corpus.py), NAME:STEPS with its own step count. Writes OUT/pairs.csv (one row per process),
OUT/pairs.md (one row per program) and the logs.
"""
import argparse
import csv
import json
import os
import statistics
import sys

from corpus import (CORPUS, PROGRAMS, configured, corpus_line, identity, recording_states, run, run_summary,
                    step_marks, steps_replayed)

TURN = 20  # steps per turn when two processes run side by side (--turn)


def tail_and_best(step_ms):
    tail = step_ms[len(step_ms) // 2:]
    if not tail:
        return None, None
    w = max(5, len(tail) // 10)
    windows = [statistics.median(tail[i:i + w]) for i in range(0, len(tail) - w + 1, max(1, w // 2))]
    return statistics.median(tail), min(windows or [statistics.median(tail)])


def ratios(rows, key, num, den):
    """Per pair k: num's key over den's key."""
    out = []
    for k in sorted({r["pair"] for r in rows}):
        a = [r[key] for r in rows if r["pair"] == k and r["config"] == num and r.get(key)]
        b = [r[key] for r in rows if r["pair"] == k and r["config"] == den and r.get(key)]
        if a and b:
            out.append(a[0] / b[0])
    return out


def turn_ratios(a_ms, b_ms, turn):
    """Interleaved: per turn over the last half of the steps, a's summed step time over b's."""
    n = min(len(a_ms), len(b_ms))
    first = (n // 2 + turn - 1) // turn * turn
    return [sum(a_ms[i:i + turn]) / sum(b_ms[i:i + turn]) for i in range(first, n - turn + 1, turn)
            if sum(b_ms[i:i + turn]) > 0]


def pooled_turn_ratios(steps, num, den, turn):
    """turn_ratios of every pair holding both configs, pooled. steps: {(pair, config): step_ms}."""
    out = []
    for (k, config), ms in sorted(steps.items()):
        if config == num and (k, den) in steps:
            out += turn_ratios(ms, steps[(k, den)], turn)
    return out


def fmt_pooled(values):
    return "%.3f (%d turns)" % (statistics.median(values), len(values)) if values else ""


def aa_ratios(rows, key, interleaved):
    """Plain against plain: the A/A pair side by side, else neighbouring plain processes."""
    if interleaved:
        return ratios(rows, key, "plain", "plain2")
    plain = [r[key] for r in rows if r["config"] == "plain" and r.get(key)]
    return [b / a for a, b in zip(plain, plain[1:])]


def side_by_side(commands, out_dir, tags, timeout, turn=TURN):
    """Starts the processes together, taking turns of `turn` steps through FIFOs (CORPUS_BATON, see
    tests/programs/corpus_common.py); returns [(output, exit code or "timeout", seconds)]."""
    import signal
    import subprocess
    import tempfile
    import time
    fifo_dir = tempfile.mkdtemp(prefix="baton")
    fifos = [os.path.join(fifo_dir, str(i)) for i in range(len(commands))]
    for f in fifos:
        os.mkfifo(f)
    start, procs = time.time(), []
    for i, ((cmd, env), tag) in enumerate(zip(commands, tags)):
        baton = "%s,%s,%d,%d" % (fifos[i], fifos[1 - i], i == 0, turn)
        log = open(os.path.join(out_dir, tag + ".log"), "w+")
        # Side by side, a one-rank DDP program's two processes would meet on one rendezvous port.
        port = str(int(env.get("MASTER_PORT", "29511")) + i)
        procs.append((subprocess.Popen(cmd, env=dict(env, CORPUS_BATON=baton, MASTER_PORT=port), cwd=PROGRAMS, stdout=log,
                                       stderr=subprocess.STDOUT, text=True, start_new_session=True), log))
    results = []
    for p, log in procs:
        try:
            code = p.wait(timeout=max(1, timeout - (time.time() - start)))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            code = "timeout"
        log.seek(0)
        results.append((log.read(), code, time.time() - start))
        log.close()
    return results


def fmt(values):
    return "%.3f (%s)" % (statistics.median(values), " ".join("%.2f" % v for v in values)) if values else ""


def steady_text(rows):
    """The nimble processes' share of the steady state replayed (corpus.steps_replayed: from the first
    two replayed steps in a row), all their steady steps together: "95% (219/230)"."""
    runs = [r for r in rows if r["config"] == "run" and r.get("steady_steps")]
    steps = sum(r["steady_steps"] for r in runs)
    if not steps:
        return ""
    replayed = sum(r["steady_replayed"] for r in runs)
    return "%d%% (%d/%d)" % (round(100.0 * replayed / steps), replayed, steps)


def write_tables(out, rows, summary):
    with open(os.path.join(out, "pairs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["program"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "pairs.md"), "w") as f:
        f.write("| program | mode | pairs | identical | steps replayed | of the steady state | plain/nimble, tail | plain/nimble, best window "
                "| plain/nimble, turns | plain/idle, tail | plain/plain (A/A), tail | plain/plain (A/A), best window | plain/plain (A/A), turns "
                "| recordings (state, trial) |\n")
        f.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
        for s in summary:
            f.write("| %(program)s | %(mode)s | %(pairs)d | %(identical)s | %(replayed)s | %(steady)s | %(tail)s | %(best)s | %(turns)s | %(idle_tail)s "
                    "| %(aa_tail)s | %(aa_best)s | %(aa_turns)s | %(recordings)s |\n" % s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="+", metavar="NAME[:STEPS]")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--steps", type=int, help="steps per process (default: the corpus's own count x 4)")
    ap.add_argument("--mode", default="deterministic", choices=["deterministic", "benchmark"])
    ap.add_argument("--idle", action="store_true", help="also libnimble.so preloaded with no mode: a third process "
                                                        "per pair, or with --interleaved one more pair beside plain")
    ap.add_argument("--aa", action="store_true", help="one more pair: plain beside plain, the measurement's resolution")
    ap.add_argument("--interleaved", action="store_true",
                    help="run each pair's two processes side by side, taking turns of %d steps, so both meet the "
                         "same host contention (their set-up overlaps; only step times are compared)" % TURN)
    ap.add_argument("--turn", type=int, default=TURN, metavar="STEPS",
                    help="steps per turn with --interleaved (default %d); fewer for long steps, so that both "
                         "processes of a pair meet the same stretches of the host (HF generate: 80 ms a step)" % TURN)
    ap.add_argument("--pin", metavar="CPUS", help="every process under taskset -c CPUS: with --interleaved, both "
                                                   "processes of a pair on the same vCPUs at alternating times")
    ap.add_argument("--run", default="run", metavar="CONFIG",
                    help="the nimble run side of each pair: run, or run:VAR=V,... with these settings "
                         "(NIMBLE_RUN_TRIALS=1, say), or idle")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "pairs"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    known = {c[0]: c for c in CORPUS}
    wanted = [(n.partition(":")[0], n.partition(":")[2]) for n in args.names]  # NAME or NAME:STEPS
    unknown = [n for n, _ in wanted if n not in known]
    if unknown:
        sys.exit("process_pairs.py: not corpus programs: %s (see CORPUS in scripts/gpu/corpus.py)" % " ".join(unknown))
    rows, summary = [], []
    for name, own_steps in wanted:
        _, script, steps, extra, modes = known[name]
        mode = args.mode if args.mode in modes else modes[0]
        env = dict(os.environ, STEPS=own_steps or str(args.steps or steps * 4), CORPUS_MODE=mode, PYTHONUNBUFFERED="1", **extra)
        program = [sys.executable] + script

        pin = ["taskset", "-c", args.pin] if args.pin else []

        def command(config, tag):
            cmd, cmd_env = configured(args.run if config == "run" else config, program, env,
                                      os.path.join(args.out, tag + ".json"))
            return pin + cmd, cmd_env

        # Each group runs one after the other; its processes one after the other too, or, with
        # --interleaved, side by side taking turns. ABBA: every other pair puts nimble run first.
        groups = [["plain", "run"] if k % 2 == 0 else ["run", "plain"] for k in range(args.pairs)]
        if args.idle:
            groups = [g + ["idle"] for g in groups] if not args.interleaved else groups + [["plain", "idle"]]
        if args.aa:
            groups.append(["plain", "plain"])
        prog_rows, traces, step_ms = [], [], {}  # step_ms: {(pair, config): the process's step times}
        for k, group in enumerate(groups):
            tags = ["%s.%d.%s%s" % (name, k, c, "" if group.index(c) == i else "2") for i, c in enumerate(group)]
            if args.interleaved:
                outs = side_by_side([command(c, t) for c, t in zip(group, tags)], args.out, tags, args.timeout, args.turn)
            else:
                outs = [run(*command(c, t), os.path.join(args.out, t + ".log"), args.timeout) for c, t in zip(group, tags)]
            for i, (config, (out, code, secs)) in enumerate(zip(group, outs)):
                d = corpus_line(out) or {}
                traces.append({"config": config if group.index(config) == i else "plain2", "line": d, "exit": code})
                tail, best = tail_and_best(d.get("step_ms") or [])
                steady = steps_replayed(d.get("step_replayed")) or {}  # None: a plain process
                threads = d.get("threads") or {}  # corpus_common's thread census
                replayed = steady.get("steps_replayed", 0)
                row = {"program": name, "mode": mode, "pair": k, "config": config if group.index(config) == i else "plain2",
                       "exit": code, "seconds": round(secs, 1), "steps": len(d.get("step_ms") or []),
                       "steps_replayed": replayed, "steady_steps": steady.get("steady_steps", ""),
                       "steady_replayed": steady.get("steady_replayed", ""), "digest": d.get("digest", ""),
                       "tail_ms": tail and round(tail, 4), "best_ms": best and round(best, 4),
                       "process_cpu_s": threads.get("process_cpu_s", ""),
                       "threads_cpu_s": json.dumps(threads.get("cpu_s", {})),
                       "recordings": recording_states(run_summary(os.path.join(args.out, tags[i] + ".json")))}
                prog_rows.append(row)
                step_ms[(k, row["config"])] = d.get("step_ms") or []
                print("%s group %d %-6s tail %s best %s replayed %d exit %s %s" % (
                    name, k, row["config"], row["tail_ms"], row["best_ms"], replayed, code, row["recordings"]), flush=True)
                marks = step_marks(d.get("step_replayed"), d.get("step_segments"))
                if marks and row["config"].startswith("run"):  # where its steps went (corpus.step_marks)
                    print("  steps: " + marks, flush=True)
        rows += prog_rows
        summary.append({"program": name, "mode": mode, "pairs": args.pairs,
                        "identical": identity(traces, mode),
                        "tail": fmt(ratios(prog_rows, "tail_ms", "plain", "run")),
                        "best": fmt(ratios(prog_rows, "best_ms", "plain", "run")),
                        "idle_tail": fmt(ratios(prog_rows, "tail_ms", "plain", "idle")),
                        "turns": fmt_pooled(pooled_turn_ratios(step_ms, "plain", "run", args.turn)) if args.interleaved else "",
                        "aa_turns": fmt_pooled(pooled_turn_ratios(step_ms, "plain", "plain2", args.turn)) if args.interleaved else "",
                        "aa_tail": fmt(aa_ratios(prog_rows, "tail_ms", args.interleaved)),
                        "aa_best": fmt(aa_ratios(prog_rows, "best_ms", args.interleaved)),
                        "recordings": "; ".join(r["recordings"] for r in prog_rows if r["config"] == "run"),
                        "steady": steady_text(prog_rows),
                        "replayed": "%d/%d" % (sum(r["steps_replayed"] for r in prog_rows if r["config"] == "run"),
                                               sum(r["steps"] for r in prog_rows if r["config"] == "run"))})
        write_tables(args.out, rows, summary)  # after each program: a run cut short keeps what it measured
    print("wrote", os.path.join(args.out, "pairs.md"))


if __name__ == "__main__":
    main()
