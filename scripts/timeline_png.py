"""Draws a `nimble export --format perfetto` file as a PNG: one row per lane, the recorded
iteration above and nimble's scheduled plan below, on one time axis, so the two can be compared
at a glance (for zooming and details, open the JSON in https://ui.perfetto.dev).

  python3 scripts/timeline_png.py timeline.json timeline.png [--title TEXT]
Needs matplotlib.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("timeline", help="output of nimble export --format perfetto")
parser.add_argument("png")
parser.add_argument("--title", default="")
args = parser.parse_args()

try:
    with open(args.timeline) as f:
        events = json.load(f)["traceEvents"]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"timeline_png: {args.timeline}: not a nimble perfetto export ({e})")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("timeline_png: needs matplotlib (apt-get install python3-matplotlib)")

processes, lanes, slices = {}, {}, []
for e in events:
    if e.get("ph") == "M" and e.get("name") == "process_name":
        processes[e["pid"]] = e["args"]["name"]
    elif e.get("ph") == "M" and e.get("name") == "thread_name":
        lanes[(e["pid"], e["tid"])] = e["args"]["name"]
    elif e.get("ph") == "X":
        slices.append(e)
if not slices:
    sys.exit(f"timeline_png: {args.timeline}: no slices to draw")

# One panel per process (recorded first), each on its own time axis: the recorded iteration ran
# under recording, so its span is no measure of the plan's; one row per lane.
colors = {"kernel": "#1f4e9c", "memcpy": "#e0a040", "memset": "#60a060"}
pids = sorted({s["pid"] for s in slices})
rows = {pid: sorted({s["tid"] for s in slices if s["pid"] == pid}) for pid in pids}
fig, axes = plt.subplots(len(pids), 1, figsize=(12, 0.38 * sum(len(r) for r in rows.values()) + 1.2 * len(pids) + 0.6),
                         gridspec_kw={"height_ratios": [len(rows[p]) + 1 for p in pids]}, squeeze=False)
for ax, pid in zip(axes[:, 0], pids):
    mine = [s for s in slices if s["pid"] == pid]
    row_of = {tid: i for i, tid in enumerate(rows[pid])}
    for s in mine:
        kind = s.get("args", {}).get("kind", "")
        ax.barh(row_of[s["tid"]], max(s.get("dur", 0), 0.05), left=s["ts"], height=0.7,
                color=colors.get(kind, "#888888"), linewidth=0)
    ax.set_yticks(range(len(rows[pid])))
    ax.set_yticklabels([lanes.get((pid, tid), f"lane {tid}").split(" (")[0] for tid in rows[pid]], fontsize=7)
    ax.invert_yaxis()
    start = min(s["ts"] for s in mine)
    end = max(s["ts"] + s.get("dur", 0) for s in mine)
    busy = sum(s.get("dur", 0) for s in mine)
    name = str(processes.get(pid, pid)).split(" (")[0]
    note = (" (times of the recorded iteration: recording slows the program's CPU side, so the GPU's gaps "
            "are wider than in a plain run)" if name == "recorded" else " (simulated from the recorded task times)")
    ax.set_title(f"{name}: {end - start:.0f} us from first start to last end, {busy:.0f} us of task time{note}",
                 fontsize=8)
    ax.set_xlabel("time (us)", fontsize=7)
    ax.grid(axis="x", alpha=0.3)
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
fig.legend(handles, list(colors), fontsize=7, loc="upper right", ncol=3)
fig.suptitle(args.title or args.timeline, fontsize=9)
fig.tight_layout()
fig.savefig(args.png, dpi=130)
print(f"wrote {args.png}: {len(slices)} slices on {sum(len(r) for r in rows.values())} lanes")
