"""Where a side exit's recording begins, against the recording it leaves: the tasks of each trace
nimble run wrote around the exit, and each recording's fall-backs. Usage: side_exit_debug.py RUN_JSON"""
import json
import sys

summary = json.load(open(sys.argv[1]))
traces = {rec["trace"]: json.load(open(rec["trace"])) for rec in summary["recordings"]}


def show(trace, first, count, label):
    print("  ", label)
    for i in range(max(0, first), min(len(trace["tasks"]), first + count)):
        task = trace["tasks"][i]
        print("     %4d %-7s %-60s %s" % (i, task.get("kind"), str(task.get("name", ""))[:60], task.get("api", "")))


for rec in summary["recordings"]:
    print(rec["trace"], rec["calls"], rec["state"], "replayed", rec["iterations_replayed"], "side_exit_of",
          rec.get("side_exit_of"), "taken", rec.get("fallbacks_taken_by_side_exits"))
    print("   fallbacks:", json.dumps(rec["fallbacks"])[:700])
    t = traces[rec["trace"]]
    show(t, 0, 10, "first tasks")
    side = rec.get("side_exit_of")
    if side and side["trace"] in traces:
        show(traces[side["trace"]], side["after_calls"] - 2, 12, "its parent around the exit")
