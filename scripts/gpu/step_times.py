#!/usr/bin/env python3
"""Where a corpus program's step time goes under nimble: runs one program (tests/programs/) once per
configuration and prints, per configuration, the median step time of each tenth of the steps, the
last half's median and how many steps had replayed work. Configurations:

    plain              libnimble.so not loaded
    idle               libnimble.so preloaded, no mode (the floor nimble run must reach when idle)
    run                nimble run, defaults
    run:VAR=V,VAR2=V2  nimble run with these settings (e.g. run:NIMBLE_RUN_SKIP_LIBRARY=0)

    python3 scripts/gpu/step_times.py compile_default.py --steps 600 plain idle run run:NIMBLE_RUN_MIN_SPEEDUP=100

Logs go to $OUT/step-times/ (or --out)."""
import argparse
import os
import statistics
import subprocess
import sys

from corpus import PROGRAMS, add_program_arguments, configured, corpus_line


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_program_arguments(ap, 400, "step-times")
    ap.add_argument("configs", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for k, config in enumerate(args.configs):
        env = dict(os.environ, STEPS=str(args.steps), CORPUS_MODE=args.mode, PYTHONUNBUFFERED="1")
        cmd, env = configured(config, [sys.executable, args.program] + args.args, env,
                              os.path.join(args.out, "%d.json" % k))
        p = subprocess.run(cmd, env=env, cwd=PROGRAMS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with open(os.path.join(args.out, "%d.log" % k), "w") as f:
            f.write(p.stdout)
        d = corpus_line(p.stdout)
        if not d:
            print("%-40s exit %d, no CORPUS line (log %s/%d.log)" % (config, p.returncode, args.out, k))
            continue
        s = d["step_ms"]
        tenth = max(1, len(s) // 10)
        parts = [round(statistics.median(s[i:i + tenth]), 3) for i in range(0, len(s) - tenth + 1, tenth)]
        replayed = sum(1 for n in d.get("step_replayed") or [] if n)
        print("%-40s tail %.3f ms, replayed %d/%d steps, tenths %s" % (config, d["tail_ms"], replayed, len(s), parts))
        for l in p.stdout.splitlines():
            if l.startswith("nimble run:") and ("trial" in l or "replayed" in l or "dropped" in l):
                print("    " + l)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
