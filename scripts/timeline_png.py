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

# Rows: process by process (recorded first), lanes in order; a process's first row carries its name.
order = sorted({(s["pid"], s["tid"]) for s in slices})
row_of = {key: i for i, key in enumerate(order)}
colors = {"kernel": "#1f4e9c", "memcpy": "#e0a040", "memset": "#60a060"}
fig, ax = plt.subplots(figsize=(12, 0.35 * len(order) + 1.6))
for s in slices:
    kind = s.get("args", {}).get("kind", "")
    ax.barh(row_of[(s["pid"], s["tid"])], max(s.get("dur", 0), 0.05), left=s["ts"], height=0.7,
            color=colors.get(kind, "#888888"), edgecolor="white", linewidth=0.3)
labels = []
for pid, tid in order:
    lane = lanes.get((pid, tid), f"lane {tid}").split(" (")[0]
    process = processes.get(pid, f"process {pid}").split(" (")[0]
    labels.append(f"{process}: {lane}")
ax.set_yticks(range(len(order)))
ax.set_yticklabels(labels, fontsize=7)
ax.invert_yaxis()
ends = {}
for s in slices:
    ends[s["pid"]] = max(ends.get(s["pid"], 0), s["ts"] + s.get("dur", 0))
starts = {}
for s in slices:
    starts[s["pid"]] = min(starts.get(s["pid"], s["ts"]), s["ts"])
spans = ", ".join(f"{processes.get(p, p).split(' (')[0]} {ends[p] - starts[p]:.0f} us" for p in sorted(ends))
ax.set_xlabel(f"time (us)   spans: {spans}")
for i in range(1, len(order)):
    if order[i][0] != order[i - 1][0]:
        ax.axhline(i - 0.5, color="black", linewidth=0.8)
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
ax.legend(handles, list(colors), fontsize=7, loc="lower right")
ax.set_title(args.title or args.timeline, fontsize=9)
ax.grid(axis="x", alpha=0.3)
fig.tight_layout()
fig.savefig(args.png, dpi=130)
print(f"wrote {args.png}: {len(slices)} slices on {len(order)} lanes")
