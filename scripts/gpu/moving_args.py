#!/usr/bin/env python3
"""What changes from one step to the next in a trace of several steps of one program (recorded
with scripts/gpu/record_steps.sh): which tasks' kernel arguments or copy addresses differ, whether
the differing words are pointers, and whether they come back after 2, 3 or 4 steps (a program
rotating among a few sets of buffers) or keep moving.

    python3 scripts/gpu/moving_args.py TRACE.json[.gz] [--steps N]

The steps are found as the shortest period p (dividing the task count, or given by --steps) whose
repeats issue the same kernels and copies in the same order; host syncs are left out of the
comparison (their count may vary)."""
import argparse
import collections
import gzip
import json
import sys


def shape_of(task):
    """What must repeat for two tasks to be the same call of two steps."""
    return (task["kind"], task.get("name") or task.get("api"), task.get("copy", {}).get("bytes"))


def words(task):
    """The task's argument words that may move: kernel argument 8-byte words, copy addresses."""
    if task["kind"] == "kernel" and task.get("args", {}).get("bytes"):
        raw = bytes.fromhex(task["args"]["bytes"])
        pointer_offsets = {p["offset"] for p in task["args"].get("pointers", [])}
        return {("arg", off, off in pointer_offsets): raw[off:off + 8] for off in range(0, len(raw) - 7, 8)}
    if task["kind"] == "memcpy":
        c = task.get("copy", {})
        return {("src", 0, True): c.get("src"), ("dst", 0, True): c.get("dst")}
    return {}


def show(word):
    """A changed word as people read it: little-endian bytes as a hex number."""
    return hex(int.from_bytes(word, "little")) if isinstance(word, bytes) else str(word)


def split_steps(tasks, steps=None):
    """(steps, calls per step): the most steps (8 down to 2, or exactly `steps`) whose repeats issue
    the same kernels and copies in the same order; None when none does. The last step may lack a
    few calls: those issued after cuProfilerStop (the step's read of its loss)."""
    n = len(tasks)
    counts = [steps] if steps else range(8, 1, -1)
    for short in (0, 8):  # whole steps first
        for count in counts:
            p = -(-n // count)  # rounded up
            if count >= 2 and p * count - n <= min(short, p - 1) and same_work(tasks, p):
                return count, p
    return None


def same_work(tasks, p):
    return all(shape_of(tasks[i]) == shape_of(tasks[i + p]) for i in range(len(tasks) - p))


def task_name(task):
    return task.get("name") or task.get("api") or task["kind"]


def step_changes(tasks, steps, p, most_examples=40):
    """What changed between consecutive steps: `moved` (step -> calls with a changed word),
    `by_kind` ((pointer?, "back after K" or "new") -> words), `names` (call name -> changes) and
    the first `most_examples` changes as text."""
    moved, by_kind, names, examples = collections.Counter(), collections.Counter(), collections.Counter(), []
    all_words = [words(t) for t in tasks]  # each task's words, read once
    for s in range(1, steps):
        for i in range(min(p, len(tasks) - s * p)):
            now = tasks[s * p + i]
            w_now, w_before = all_words[s * p + i], all_words[(s - 1) * p + i]
            changed = [k for k in w_now if w_now[k] != w_before.get(k)]
            if not changed:
                continue
            moved[s] += 1
            names[task_name(now)] += 1
            for k in changed:
                back = next((d for d in range(2, s + 1) if all_words[(s - d) * p + i].get(k) == w_now[k]), None)
                by_kind[(k[2], f"back after {back}" if back else "new")] += 1
                if len(examples) < most_examples:
                    examples.append(f"  step {s} task {i} {k[0]}@{k[1]}: {show(w_before.get(k))} -> {show(w_now[k])}"
                                    f"  ({task_name(now)[:60]})")
    return {"moved": moved, "by_kind": by_kind, "names": names, "examples": examples}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--steps", type=int, help="how many steps the trace holds (default: found)")
    ap.add_argument("--examples", type=int, default=40, help="how many changed words to show")
    a = ap.parse_args()
    with (gzip.open if a.trace.endswith(".gz") else open)(a.trace, "rt") as f:
        tasks = [t for t in json.load(f)["tasks"] if t["kind"] in ("kernel", "memcpy", "memset")]
    split = split_steps(tasks, a.steps)
    if not split:
        sys.exit(f"moving_args.py: {len(tasks)} tasks do not split into 2-8 steps issuing the same work; "
                 "record whole steps (record_steps.sh FIRST:END) or pass --steps")
    steps, p = split
    print(f"{len(tasks)} kernels/copies/memsets: {steps} steps of {p}")
    c = step_changes(tasks, steps, p, a.examples)
    for s in range(1, steps):
        print(f"step {s} against {s - 1}: {c['moved'][s]} of {p} tasks changed")
    for (pointer, how), count in sorted(c["by_kind"].items()):
        print(f"  {'pointer' if pointer else 'other'} words, {how}: {count}")
    print("first changes:")
    print("\n".join(c["examples"]))
    print("most often changed:")
    for name, count in c["names"].most_common(15):
        print(f"  {count:4d}  {name[:110]}")


if __name__ == "__main__":
    main()
