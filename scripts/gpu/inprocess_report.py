"""Table and chart of the in-process short-circuit (`scripts/run_models.sh compare`).

  inprocess_report.py RESULTS_DIR [OUTDIR]

Reads RESULTS_DIR/run-results.csv (rows of mode "compare": one `nimble run --compare` process per
model, plain and replayed medians from the same process) and the run logs beside it, and writes
OUTDIR/inprocess.md and OUTDIR/inprocess.png (OUTDIR defaults to RESULTS_DIR). No matplotlib:
no PNG, and it says so.
"""
import csv
import datetime
import glob
import json
import math
import os
import sys


def environment(results):
    for log in sorted(glob.glob(os.path.join(results, "compare-*.log"))):
        for line in open(log, errors="replace"):
            if line.startswith("{") and '"device"' in line:
                env = json.loads(line)
                return {k: env.get(k) for k in ("device", "torch", "cuda", "cudnn")}
    return {}


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    results = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) == 3 else results
    rows = [r for r in csv.DictReader(open(os.path.join(results, "run-results.csv"))) if r["mode"] == "compare"]
    if not rows:
        print("inprocess_report: no compare rows in run-results.csv", file=sys.stderr)
        sys.exit(1)
    env = environment(results)
    date = datetime.date.fromtimestamp(os.path.getmtime(os.path.join(results, "run-results.csv")))
    ratios = [float(r["speedup"]) for r in rows]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    lines = ["# nimble run: in-process short-circuit vs the program's own calls", "",
             f"{env.get('device')}, PyTorch {env.get('torch')}, CUDA {env.get('cuda')}, cuDNN {env.get('cudnn')}; "
             f"{date}. One process per row: `nimble run --compare 10` alternates blocks of 10 iterations the "
             "program issues itself (plain) and 10 replayed ones, timing each iteration from one start of the "
             "recorded iteration to the next; medians over the timed iterations (the first of each block is "
             "left out). Inference at batch 1 (fresh `torch.randn` input, output copied to the host every "
             "iteration); training: CIFAR-shaped step, SGD with momentum.", "",
             "| model | batch | plain ms | nimble run ms | speedup | iterations replayed | fall-backs |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        kind = "" if r["batch"] == "1" else " (training)"
        lines.append(f"| {r['model']}{kind} | {r['batch']} | {float(r['plain_ms']):.3f} | {float(r['nimble_ms']):.3f} | "
                     f"{float(r['speedup']):.2f}x | {r['replayed']} | {r['fallbacks']} |")
    lines += ["", f"Geometric mean {geomean:.3f}x over {len(rows)} rows; lowest {min(ratios):.2f}x "
              f"({rows[ratios.index(min(ratios))]['model']})."]
    os.makedirs(outdir, exist_ok=True)
    open(os.path.join(outdir, "inprocess.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("inprocess_report: matplotlib not installed, no chart", file=sys.stderr)
        return
    labels = [r["model"] + ("" if r["batch"] == "1" else f"\ntrain b{r['batch']}") for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(rows) + 2), 4.5))
    bars = ax.bar(range(len(rows)), ratios, 0.6, color="#1f4e9c", label="nimble run vs plain, same process")
    for rect, r in zip(bars, rows):
        ax.annotate(f"{float(r['speedup']):.2f}x\n{float(r['plain_ms']):.2f}->{float(r['nimble_ms']):.2f} ms",
                    (rect.get_x() + rect.get_width() / 2, rect.get_height()), ha="center", va="bottom", fontsize=6,
                    xytext=(0, 2), textcoords="offset points")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(geomean, color="#e0a040", linewidth=1, linestyle="--", label=f"geometric mean {geomean:.2f}x")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("speedup of the whole iteration (x)")
    ax.set_ylim(0, max(ratios) * 1.4)  # room for the labels under the legend
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title(f"In-process short-circuit: nimble run vs the program's own calls, same process\n"
                 f"{env.get('device')}, PyTorch {env.get('torch')}, {date}", fontsize=9)
    fig.tight_layout()
    path = os.path.join(outdir, "inprocess.png")
    fig.savefig(path, dpi=130)
    print("wrote", path)


main()
