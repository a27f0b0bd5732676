#!/usr/bin/env python3
"""Why do two plain processes of one program differ? Runs a corpus program (tests/programs/) several
times in a row, in the configurations given (plain, idle: libnimble.so preloaded with no mode, run:
nimble run), while nvidia-smi samples the GPU (SM and memory clocks, power, temperature, throttle
reasons) and /proc/stat the host (CPU steal and busy time). Prints one line per process: its
last-half median step time and what the GPU and host did during its loop.

    python3 scripts/gpu/process_noise.py timm_infer.py --args efficientnet_b0 --steps 300 plain plain run plain run

Logs go to $OUT/noise/ (or --out)."""
import argparse
import os
import statistics
import subprocess
import sys
import time

from corpus import PROGRAMS, add_program_arguments, configured, corpus_line

FIELDS = "clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active"


def host_times():
    """(steal, busy, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    steal = v[7] if len(v) > 7 else 0
    return steal, sum(v) - idle, sum(v)


def start_sampler(path):
    """nvidia-smi every 100 ms, each line prefixed with the host's clock (so loops can be matched)."""
    fields = FIELDS
    if subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv"], capture_output=True).returncode:
        fields = fields.rsplit(",", 1)[0]  # an older nvidia-smi without throttle reasons
    script = "nvidia-smi --query-gpu=%s --format=csv,noheader,nounits -lms 100 | " \
             "while IFS= read -r l; do echo \"$(date +%%s.%%N), $l\"; done > %s" % (fields, path)
    return subprocess.Popen(["bash", "-c", script], start_new_session=True)


def python_pid(pid):
    """The python process itself: pid, or for nimble run the child it started."""
    for _ in range(3):
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().startswith("python"):
                    return pid
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
        except OSError:
            return None
        if not kids:
            return None
        pid = int(kids[0])
    return None


def main_thread_cpu(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])  # field 39: the CPU it last ran on
    except (OSError, IndexError, ValueError):
        return None


def run_watching_cpus(cmd, env):
    """Runs cmd; returns (output, exit code, Counter of the CPUs its python main thread was seen on)."""
    import collections
    import tempfile
    cpus = collections.Counter()
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(cmd, env=env, cwd=PROGRAMS, stdout=out, stderr=subprocess.STDOUT, text=True)
        while p.poll() is None:
            py = python_pid(p.pid)
            cpu = main_thread_cpu(py) if py else None
            if cpu is not None:
                cpus[cpu] += 1
            time.sleep(0.05)
        out.seek(0)
        return out.read(), p.returncode, cpus


def samples_between(path, t0, t1):
    rows = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            try:
                t = float(parts[0])
            except ValueError:
                continue
            if t0 <= t <= t1:
                rows.append(parts[1:])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_program_arguments(ap, 300, "noise")
    ap.add_argument("configs", nargs="+", help="plain, idle, run or run:VAR=V,..., one per process, in order; CONFIG@CPUS runs it "
                                                "under taskset -c CPUS")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    smi = os.path.join(args.out, "nvidia-smi.csv")
    sampler = start_sampler(smi)
    time.sleep(1)
    try:
        for k, config in enumerate(args.configs):
            env = dict(os.environ, STEPS=str(args.steps), CORPUS_MODE=args.mode, PYTHONUNBUFFERED="1")
            config, _, pin = config.partition("@")
            cmd, env = configured(config, [sys.executable, args.program] + args.args, env,
                                  os.path.join(args.out, "%d.json" % k))
            if pin:
                cmd = ["taskset", "-c", pin] + cmd
                config += "@" + pin
            h0 = host_times()
            output, code, cpus = run_watching_cpus(cmd, env)
            end, h1 = time.time(), host_times()
            with open(os.path.join(args.out, "%d.%s.log" % (k, config)), "w") as f:
                f.write(output)
            d = corpus_line(output)
            if not d:
                print("%2d %-6s exit %d, no CORPUS line" % (k, config, code))
                continue
            s = d["step_ms"]
            loop_s = sum(s) / 1e3
            half = sum(s[len(s) // 2:]) / 1e3  # the last half ends when the process's loop ends (exit is quick)
            rows = samples_between(smi, end - half - 0.3, end - 0.3)
            def med(i):
                vals = [float(r[i]) for r in rows if len(r) > i and r[i].replace(".", "", 1).isdigit()]
                return statistics.median(vals) if vals else float("nan")
            reasons = sorted({r[5] for r in rows if len(r) > 5})
            steal = 100.0 * (h1[0] - h0[0]) / max(1, h1[2] - h0[2])
            busy = 100.0 * (h1[1] - h0[1]) / max(1, h1[2] - h0[2])
            replayed = sum(1 for n in d.get("step_replayed") or [] if n)
            print("%2d %-8s tail %.3f ms (loop %.1f s, replayed %d/%d) | SM %.0f MHz, mem %.0f MHz, %.0f W, %.0f C, util %.0f%%, "
                  "reasons %s (%d samples) | host busy %.1f%%, steal %.2f%% | main thread on CPUs %s"
                  % (k, config, d["tail_ms"], loop_s, replayed, len(s), med(0), med(1), med(2), med(3), med(4),
                     "/".join(reasons) or "-", len(rows), busy, steal,
                     " ".join("%d:%d" % c for c in cpus.most_common(4))))
            sys.stdout.flush()
    finally:
        os.killpg(sampler.pid, 15)


if __name__ == "__main__":
    main()
