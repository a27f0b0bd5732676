"""Step-time medians of bucketed_inference.py runs by batch length and by whether nimble run replayed
the step, from process_pairs.py folders: which steps a run made faster or slower than plain. The
lengths are drawn again as the program draws them (random.Random(17)); the first 20 steps are left
out (set-up, recording). Where the run has the main thread's CPU time per step (step_cpu_ms), each
median is wall/cpu. Usage: bucket_step_medians.py PAIRS_FOLDER..."""
import glob
import json
import random
import statistics
import sys

BUCKETS = (64, 128, 256)  # as in tests/programs/bucketed_inference.py
SKIP = 20


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
                cpu = c.get("step_cpu_ms") or [None] * len(c["step_ms"])
                groups = {}
                for i, (ms, cpu_ms, length, r) in enumerate(zip(c["step_ms"], cpu, lengths, replayed)):
                    if i >= SKIP:
                        groups.setdefault((length, bool(r)), []).append((ms, cpu_ms))
                cells = []
                for (length, r), v in sorted(groups.items()):
                    wall = statistics.median(ms for ms, _ in v)
                    on_cpu = [c for _, c in v if c is not None]
                    cells.append("%d%s:%.2f%s(n=%d)" % (length, "R" if r else "", wall,
                                                      "/%.2f" % statistics.median(on_cpu) if on_cpu else "", len(v)))
                print(path.split("/")[-1], " ".join(cells))


main()
