#!/usr/bin/env python3
"""Step times of corpus runs, window by window: where in a run does nimble run cost or save time?
Reads logs holding a corpus program's CORPUS line (plain runs, step_map.sh's nimble run logs), the
first taken as the baseline, and prints each run's median step time in windows of the run (the
trial is early, the resting or dropped state late), the sum of all its steps, and the ratios
baseline / run (above 1: the run is faster). The last lines of nimble run's own (its exit summary)
are printed below each run.

    python3 scripts/gpu/step_windows.py PLAIN.log RUN.log [RUN.log ...]"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import corpus_line  # noqa: E402


def windows(steps):
    """Four stretches of a run: its first tenth, up to a quarter, up to a half, and the rest."""
    n = len(steps)
    cuts = [0, max(n // 10, 1), max(n // 4, 2), max(n // 2, 3), n]
    return [(cuts[i], cuts[i + 1]) for i in range(4) if cuts[i] < cuts[i + 1]]


def main(paths):
    runs = []
    for path in paths:
        text = open(path, errors="replace").read()
        c = corpus_line(text)
        if c is None:
            print(f"{path}: no CORPUS line")
            continue
        summary = [line for line in text.splitlines() if line.startswith("nimble run:")][-12:]
        # (step_map.sh's logs share a name: the folders above say which run it was)
        parts = [x for x in os.path.normpath(path).split(os.sep) if x != "step-map"]
        runs.append(("/".join(parts[-3:]), c["step_ms"], c.get("digest"), summary))
    if not runs:
        sys.exit("step_windows: no run to read")
    base = runs[0][1]
    cuts = windows(base)
    head = " | ".join(f"steps {a}-{b - 1}" for a, b in cuts)
    print(f"| run | digest | {head} | all steps (s) |")
    print("|" + " --- |" * (len(cuts) + 3))
    for name, steps, digest, _ in runs:
        cells = []
        for a, b in cuts:
            m, mb = statistics.median(steps[a:b]), statistics.median(base[a:b])
            cells.append(f"{m:.2f} ms ({mb / m:.3f})")
        total, total_base = sum(steps) / 1000, sum(base) / 1000
        print(f"| {name} | {digest} | " + " | ".join(cells) + f" | {total:.2f} ({total_base / total:.3f}) |")
    for name, _, _, summary in runs[1:]:
        print(f"\n{name}:")
        for line in summary:
            print("  " + line[:400])


if __name__ == "__main__":
    main(sys.argv[1:])
