#!/usr/bin/env python3
"""Where host time goes below some functions, from `perf script -F ip,sym` on stdin (a profile
recorded with --call-graph dwarf). For each ROOT named: the samples whose stack holds it, the
frames right below it, the innermost frames of nimble's own code, and the leaves.

Usage: perf script -i perf.data -F ip,sym | perf_stacks.py [--hz N] ROOT [ROOT ...]
Example ROOTs: submit_task (a call described while a window records), build_recorded_trace,
run_recorded (plan and graphs), on_launch_kernel."""
import argparse
import collections
import sys


def stacks(text):
    for block in text.split("\n\n"):
        frames = [line.strip().split(" ", 1) for line in block.strip().splitlines() if line.strip()]
        yield [f[1] if len(f) > 1 else f[0] for f in frames]  # innermost first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hz", type=float, default=0, help="the sampling rate, to print milliseconds too")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("roots", nargs="+")
    args = ap.parse_args()
    all_stacks = list(stacks(sys.stdin.read()))
    for root in args.roots:
        below, own, leaf = collections.Counter(), collections.Counter(), collections.Counter()
        n = 0
        for frames in all_stacks:
            at = [i for i, f in enumerate(frames) if root in f]
            if not at:
                continue
            n += 1
            inner = frames[:max(at)]
            if inner:
                below[inner[-1][:100]] += 1
            ours = [f for f in inner if "nimble" in f]
            if ours:
                own[ours[0][:100]] += 1
            leaf[frames[0][:100]] += 1
        ms = f" ({n / args.hz * 1000:.0f} ms)" if args.hz else ""
        print(f"== {root}: {n} samples{ms}")
        for title, counts in (("right below", below), ("innermost nimble frame", own), ("leaf", leaf)):
            print(f"  -- {title}")
            for name, count in counts.most_common(args.top):
                print(f"  {count:6d}  {name}")


if __name__ == "__main__":
    main()
