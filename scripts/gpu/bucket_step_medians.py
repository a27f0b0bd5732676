"""Step-time medians of bucketed_inference.py runs by batch length and by whether nimble run replayed
the step, from process_pairs.py folders: which steps a run made faster or slower than plain. The
lengths are drawn again as the program draws them (random.Random(17)); the first 20 steps are left
out (set-up, recording). Each median is labelled: wall and main-thread CPU ms, minor page faults,
with NIMBLE_HOST_TIMES ms inside nimble's wrappers, with CORPUS_COUNTERS the hardware counters. Usage: bucket_step_medians.py PAIRS_FOLDER..."""
import glob
import json
import random
import statistics
import sys

BUCKETS = (64, 128, 256)  # as in tests/programs/bucketed_inference.py
SKIP = 20
# (label, CORPUS line key): wall ms, main-thread CPU ms, minor page faults, ms inside nimble's wrappers
COLUMNS = (("wall", "step_ms"), ("cpu", "step_cpu_ms"), ("faults", "step_minor_faults"), ("inside", "step_inside_nimble_ms"))
# hardware counters (CORPUS_COUNTERS): millions of instructions and cycles, thousands of misses
COUNTERS = (("Minstr", "instructions", 1e6), ("Mcycles", "cycles", 1e6), ("Kllc_miss", "cache_misses", 1e3),
            ("Kbranch_miss", "branch_misses", 1e3))


def corpus_line(path):
    for line in open(path):
        if line.startswith("CORPUS "):
            return json.loads(line[len("CORPUS "):])
    return None


def main():
    for folder in sys.argv[1:]:
        print("==", folder)
        for kind in ("plain", "run", "idle"):
            for path in sorted(glob.glob(folder + "/*.%s.log" % kind)):
                c = corpus_line(path)
                if not c:
                    continue
                traffic = random.Random(17)
                lengths = [traffic.choice(BUCKETS) for _ in c["step_ms"]]
                replayed = c.get("step_replayed") or [0] * len(c["step_ms"])
                n = len(c["step_ms"])
                columns = {label: c[key] for label, key in COLUMNS if len(c.get(key) or []) == n}
                counters = c.get("step_counters") or {}
                columns.update({label: [x / scale for x in counters[key]] for label, key, scale in COUNTERS
                                if len(counters.get(key, [])) == n})
                groups = {}
                for i, (length, r) in enumerate(zip(lengths, replayed)):
                    if i >= SKIP:
                        groups.setdefault((length, bool(r)), []).append(i)
                cells = []
                for (length, r), steps in sorted(groups.items()):
                    medians = " ".join("%s=%.2f" % (label, statistics.median(v[i] for i in steps))
                                       for label, v in columns.items())
                    cells.append("%d%s(n=%d): %s" % (length, "R" if r else "", len(steps), medians))
                print(path.split("/")[-1] + "\n  " + "\n  ".join(cells))


main()
