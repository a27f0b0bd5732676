"""Each recording's trials in a nimble run summary: every timed iteration of each phase, in order,
for the earlier trials and the last one; each replayed iteration with the graph execs it made
and the nodes it wrote (e.g. "21.3/e2w11": 21.3 ms, 2 execs, 11 writes), when the summary has them.
Usage: trial_timings.py RUN_JSON..."""
import json
import sys

for path in sys.argv[1:]:
    summary = json.load(open(path))
    for rec in summary["recordings"]:
        trials = rec.get("earlier_trial_timings", []) + ([rec["timings"]] if "timings" in rec else [])
        print(path.split("/")[-1], rec["trace"].split("/")[-1], rec["calls"], rec["state"])
        for i, t in enumerate(trials):
            speed = t.get("speedup")
            print("   trial %d: %s" % (i + 1, "%.2fx" % speed if speed else "-"))
            print("     %-8s %s" % ("plain", " ".join("%.1f" % v for v in t["plain"].get("each_ms", []))))
            replayed = t["replayed"]
            ms = replayed.get("each_ms", [])
            execs, writes = replayed.get("each_execs_made"), replayed.get("each_node_writes")
            if execs is not None and writes is not None and len(execs) == len(ms) == len(writes):
                cells = ["%.1f/e%dw%d" % (v, e, w) for v, e, w in zip(ms, execs, writes)]
            else:
                cells = ["%.1f" % v for v in ms]
            print("     %-8s %s" % ("replayed", " ".join(cells)))
