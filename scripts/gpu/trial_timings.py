"""Each recording's trials in a nimble run summary: every timed iteration of each phase, in order,
for the earlier trials and the last one. Usage: trial_timings.py RUN_JSON..."""
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
            for phase in ("plain", "replayed"):
                print("     %-8s %s" % (phase, " ".join("%.1f" % v for v in t[phase].get("each_ms", []))))
