#!/usr/bin/env python3
"""Compares NIMBLE_HOST_TIMES tables (printed at exit) of runs of one program in different states:
per intercepted function, its calls and mean host time in each run, and how many milliseconds more
than the first run (the baseline, usually the idle library) each other run spent in it. Also the
program's median step (CORPUS's median_ms) when the log has one.

    python3 scripts/gpu/host_times_diff.py idle.log run.log given.log > table.md
"""
import json
import os
import re
import sys

ROW = re.compile(r"^\s{2}(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")


def read(path):
    """{function: (calls, total_ms)} from the last table in the log, and the median step in ms."""
    table, median = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("nimble: host time inside intercepted calls"):
                table = {}
            m = ROW.match(line)
            if m:
                table[m.group(1)] = (int(m.group(2)), float(m.group(3)))
            if line.startswith("CORPUS "):
                try:
                    median = json.loads(line[len("CORPUS "):]).get("median_ms")
                except ValueError:
                    pass
    return table, median


def main(paths):
    runs = [(os.path.basename(p), *read(p)) for p in paths]
    base_name, base, _ = runs[0]
    names = sorted({n for _, t, _ in runs for n in t}, key=lambda n: -max(t.get(n, (0, 0))[1] for _, t, _ in runs))
    head = "| function | " + " | ".join("%s calls | mean us" % r[0] for r in runs) + " | " + \
        " | ".join("ms more than %s (%s)" % (base_name, r[0]) for r in runs[1:]) + " |"
    print(head)
    print("|" + "---|" * (1 + 2 * len(runs) + len(runs) - 1))
    totals = [0.0] * len(runs)
    for n in names:
        cells = []
        for _, t, _ in runs:
            calls, ms = t.get(n, (0, 0.0))
            cells += [str(calls), "%.3f" % (ms * 1e3 / calls) if calls else ""]
        more = []
        for i, (_, t, _) in enumerate(runs[1:], 1):
            delta = t.get(n, (0, 0.0))[1] - base.get(n, (0, 0.0))[1]
            totals[i] += delta
            more.append("%.1f" % delta)
        print("| %s | %s | %s |" % (n, " | ".join(cells), " | ".join(more)))
    print("| **all** | %s | %s |" % (" | ".join(["", ""] * len(runs)), " | ".join("%.1f" % x for x in totals[1:])))
    print()
    print("median step ms: " + ", ".join("%s %s" % (name, "%.3f" % m if m else "?") for name, _, m in runs))


if __name__ == "__main__":
    main(sys.argv[1:])
