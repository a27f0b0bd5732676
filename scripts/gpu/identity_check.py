#!/usr/bin/env python3
"""GPU machine: is a program's every step identical under nimble run? Runs it plain twice (is it
deterministic at all?) and under nimble run with each given setting list, and prints per run the
first step whose digest differs from the first plain run and the steps replayed (1) or not (0).

    python3 scripts/gpu/identity_check.py PROGRAM.py STEPS [VAR=VALUE,... ...]

Extra environment for every run comes from the caller (XLA_FLAGS, ...)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "tests", "programs")


def corpus_line(cmd, env):
    out = subprocess.run(cmd, env=env, cwd=PROGRAMS, capture_output=True, text=True, timeout=300).stdout
    for line in out.splitlines():
        if line.startswith("CORPUS "):
            return json.loads(line[7:])
    sys.exit("no CORPUS line from %s:\n%s" % (cmd, out[-3000:]))


def main():
    program, steps, settings = sys.argv[1], sys.argv[2], sys.argv[3:]
    env = dict(os.environ, STEPS=steps)
    nimble = os.path.join(ROOT, "build-gpu", "bin", "nimble")
    first = corpus_line(["python3", program], env)
    runs = [("plain again", ["python3", program], env)]
    for s in settings or [""]:
        extra = dict(kv.split("=", 1) for kv in s.split(",") if kv)
        runs.append(("nimble run " + (s or "(defaults)"), [nimble, "run", "-o", "/tmp/identity.json", "--", "python3", program],
                     dict(env, **extra)))
    for name, cmd, run_env in runs:
        c = corpus_line(cmd, run_env)
        differ = [i for i, (a, b) in enumerate(zip(first["step_digests"], c["step_digests"])) if a != b]
        replayed = "".join("1" if r else "0" for r in c.get("step_replayed") or [])
        print("%s: %s; replayed steps %s" % (name, "identical" if not differ else
                                              "first difference at step %d (%d steps differ)" % (differ[0], len(differ)),
                                              replayed or "-"))


main()
