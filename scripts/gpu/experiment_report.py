"""Tables and charts of the speedup experiment (scripts/experiments.sh).

  experiment_report.py RUNS OUTDIR     collect RUNS/*.log + *.bench.json, write everything
  experiment_report.py --csv CSV OUTDIR  redraw the charts and table from an existing CSV

Writes OUTDIR/experiments.csv, experiments.md, environment.json and the PNG charts
speedup_infer.png, speedup_train.png, vs_cudagraph.png, gpu_busy.png, concurrency.png.
Works without matplotlib (then no PNGs, and it says so).
"""
import csv
import datetime
import glob
import json
import os
import subprocess
import sys

FIELDS = ["mode", "model", "batch", "allocator", "max_streams", "eager_ms", "cudagraph_ms", "replay_eager_ms",
          "graph1_ms", "graphN_ms", "graphE_ms", "nimble_torch_ms", "nimble_torch_wiring", "tasks", "edges", "reduced_edges", "width_lo",
          "width_hi", "streams", "waits", "serial_ms", "critical_ms", "simulated_ms", "gpu_busy",
          "memory_check", "results_unchanged", "replays", "error"]
BACKENDS = {"replay_eager_ms": "eager-replay", "graph1_ms": "graph-1-stream",
            "graphN_ms": "graph-nimble-streams", "graphE_ms": "graph-from-edges"}


def collect(runs):
    rows, env = [], {}
    for log in sorted(glob.glob(os.path.join(runs, "*.log"))):
        run = os.path.basename(log)[:-4]
        program, last_error = {}, ""
        for line in open(log, errors="replace"):
            if line.startswith("{") and '"eager_ms"' in line:
                program = json.loads(line)
            elif "error" in line.lower() or "failed" in line.lower():
                last_error = line.strip()[:200]
        for key in ("device", "torch", "cuda", "cudnn"):
            env.setdefault(key, program.get(key))
        bench_path = os.path.join(runs, run + ".bench.json")
        bench = json.load(open(bench_path)) if os.path.exists(bench_path) else {}
        kind, model, batch, allocator, cap = (run.split(".") + ["", "", "", "", ""])[:5]
        schedule = bench.get("schedule") or {}
        times = {b["backend"]: b for b in bench.get("backends", [])}
        row = {"mode": kind, "model": model, "batch": batch.lstrip("b"), "allocator": allocator,
               "max_streams": cap.lstrip("s"),
               "eager_ms": program.get("eager_ms"), "cudagraph_ms": program.get("cudagraph_ms"),
               "nimble_torch_ms": program.get("nimble_torch_ms"), "nimble_torch_wiring": program.get("nimble_torch_wiring"),
               "tasks": bench.get("tasks"), "edges": schedule.get("edges"),
               "reduced_edges": schedule.get("reduced_edges"), "width_lo": schedule.get("width_lower_bound"),
               "width_hi": schedule.get("width_upper_bound"), "streams": schedule.get("streams"),
               "waits": schedule.get("syncs"),
               "serial_ms": bench["serial_us"] / 1000 if bench.get("serial_us") else None,
               "critical_ms": bench["critical_path_us"] / 1000 if bench.get("critical_path_us") else None,
               "simulated_ms": schedule["simulated_makespan_us"] / 1000 if schedule.get("simulated_makespan_us") else None,
               "results_unchanged": program.get("results_unchanged"), "replays": bench.get("iterations")}
        for key, name in BACKENDS.items():
            row[key] = times.get(name, {}).get("median_ms")
        checks = {b.get("memory_check") or b.get("error", "") for b in times.values()} - {"reference", ""}
        row["memory_check"] = "; ".join(sorted(checks))
        if bench.get("nondeterministic_ranges"):
            row["memory_check"] += f" ({bench['nondeterministic_ranges']} of {bench['checked_ranges']} nondeterministic)"
        if row["serial_ms"] and row["eager_ms"]:
            row["gpu_busy"] = row["serial_ms"] / row["eager_ms"]
        errors = ([bench.get("error")] + [b.get("error") for b in times.values()] +
                  [program.get("cudagraph_error"), program.get("nimble_torch_error")])
        row["error"] = "; ".join(e for e in errors if e) or ("" if bench and program else (last_error or "no results"))
        rows.append(row)
    return rows, env


def read_csv(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k, v in r.items():
                if k in ("mode", "model", "allocator", "memory_check", "error", "batch", "results_unchanged", "max_streams",
                         "nimble_torch_wiring"):
                    continue
                r[k] = float(v) if v not in ("", None) else None
            rows.append(r)
    return rows


def capped(r):
    return r.get("max_streams") not in (None, "", "0")


def streams_label(r):
    if r.get("max_streams") == "0":
        return ", streams uncapped"
    return f", <= {r['max_streams']} streams" if capped(r) else ""


def ratio(a, b):
    return a / b if a and b else None


def fmt(v, digits=3):
    return "-" if v is None or v == "" else f"{float(v):.{digits}f}"


def fx(v):
    return "-" if v is None else f"{v:.2f}x"


def markdown(rows, env):
    counts = sorted({int(float(r["replays"])) for r in rows if r.get("replays") not in (None, "")})
    replays = " or ".join(str(c) for c in counts) or "?"
    out = [f"# nimble speedup experiment",
           "",
           f"{env.get('device')}, driver {env.get('driver')}, PyTorch {env.get('torch')}, CUDA {env.get('cuda')}, "
           f"cuDNN {env.get('cudnn')}; {env.get('date')}. fp32; medians of {replays} timed iterations per "
           "measurement (CUDA events). Inference at batch 1; training = CIFAR-shaped step (32x32 input, cross-entropy, SGD "
           "momentum). 'async' = PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync. Speedups are over PyTorch "
           "eager unless named; higher is better. GPU busy = sum of the iteration's GPU task times / eager "
           "iteration time. 'nimble.torch' = the Python API in the same process (Nimble(model).prepare(x), "
           "capture_step for training; its wiring in parentheses). The in-process short-circuit (nimble run) is "
           "measured apart, process against process (scripts/experiments.sh run; docs/benchmarks/run-h100).",
           "",
           "| mode | model | batch | alloc | eager ms | CUDA graph ms | nimble 1 stream ms | nimble streams ms | "
           "nimble.torch ms | CUDA graph | nimble 1 stream | nimble streams | nimble.torch | streams vs CUDA graph | "
           "nimble.torch vs CUDA graph | width | streams / waits | "
           "GPU busy (eager) | critical path ms | memory check | results unchanged | error |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        width = "-" if r.get("width_lo") in (None, "") else (
            f"{int(float(r['width_lo']))}" if r["width_lo"] == r["width_hi"] else
            f"{int(float(r['width_lo']))}..{int(float(r['width_hi']))}")
        sw = "-" if r.get("streams") in (None, "") else f"{int(float(r['streams']))} / {int(float(r['waits']))}"
        busy = "-" if r.get("gpu_busy") in (None, "") else f"{100 * float(r['gpu_busy']):.0f}%"
        alloc = r["allocator"] + streams_label(r)
        torch_ms = fmt(r.get("nimble_torch_ms")) + (f" ({r['nimble_torch_wiring']})" if r.get("nimble_torch_wiring") else "")
        out.append(f"| {r['mode']} | {r['model']} | {r['batch']} | {alloc} | {fmt(r['eager_ms'])} | "
                   f"{fmt(r['cudagraph_ms'])} | {fmt(r['graph1_ms'])} | {fmt(r['graphN_ms'])} | {torch_ms} | "
                   f"{fx(ratio(r['eager_ms'], r['cudagraph_ms']))} | {fx(ratio(r['eager_ms'], r['graph1_ms']))} | "
                   f"{fx(ratio(r['eager_ms'], r['graphN_ms']))} | {fx(ratio(r['eager_ms'], r.get('nimble_torch_ms')))} | "
                   f"{fx(ratio(r['cudagraph_ms'], r['graphN_ms']))} | {fx(ratio(r['cudagraph_ms'], r.get('nimble_torch_ms')))} | "
                   f"{width} | {sw} | {busy} | {fmt(r['critical_ms'])} | {r['memory_check'] or '-'} | "
                   f"{r['results_unchanged'] if r['results_unchanged'] not in (None, '') else '-'} | "
                   f"{(r['error'] or '')[:120]} |")
    return "\n".join(out) + "\n"


def charts(rows, outdir, env):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("experiment_report: matplotlib not installed, no charts", file=sys.stderr)
        return []
    subtitle = f"{env.get('device')}, PyTorch {env.get('torch')}, {env.get('date')}"
    # One bar group per configuration: where a run with a stream cap exists (the bench's
    # default), it stands for that configuration; the uncapped runs stay in the table.
    chosen = {}
    for r in rows:
        key = (r["mode"], r["model"], r["batch"], r["allocator"])
        if key not in chosen or (capped(r) and not capped(chosen[key])):
            chosen[key] = r
    # Charts show the timing runs; check and deterministic runs ("train-check", "-det") are in the table.
    rows = [r for r in rows if chosen[(r["mode"], r["model"], r["batch"], r["allocator"])] is r
            and r["mode"] in ("infer", "train")]
    written = []

    allocators = {r["allocator"] for r in rows}

    def label(r):
        text = r["model"] if r["mode"] == "infer" else f"{r['model']}\ntrain, batch {r['batch']}"

        return text + (f" ({r['allocator']})" if len(allocators) > 1 else "")

    def bars(ax, groups, series, ylabel, number="{:.2f}"):
        n = len(series)
        w = 0.8 / n
        for i, (name, values, color) in enumerate(series):
            xs = [g + (i - (n - 1) / 2) * w for g in range(len(groups))]
            heights = [v if v is not None else 0 for v in values]
            b = ax.bar(xs, heights, w, label=name, color=color)
            for rect, v in zip(b, values):
                ax.annotate("n/a" if v is None else number.format(v), (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                            ha="center", va="bottom", fontsize=6, rotation=90, xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        top = max([v for _, values, _ in series for v in values if v is not None], default=1)
        ax.set_ylim(0, top * 1.15)  # room for the value labels

    def save(fig, name):
        fig.tight_layout()
        path = os.path.join(outdir, name)
        fig.savefig(path, dpi=130)
        plt.close(fig)
        written.append(path)

    for mode, title in (("infer", "Inference, batch 1"), ("train", "Training step, CIFAR-shaped")):
        sel = [r for r in rows if r["mode"] == mode and r["eager_ms"]]
        if not sel:
            continue
        fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(sel) + 2), 4.5))
        bars(ax, [label(r) for r in sel], [
            ("PyTorch CUDA graph", [ratio(r["eager_ms"], r["cudagraph_ms"]) for r in sel], "#999999"),
            ("nimble, 1 stream", [ratio(r["eager_ms"], r["graph1_ms"]) for r in sel], "#8fb3de"),
            ("nimble, multi-stream", [ratio(r["eager_ms"], r["graphN_ms"]) for r in sel], "#1f4e9c"),
            ("nimble.torch, in the program", [ratio(r["eager_ms"], r.get("nimble_torch_ms")) for r in sel], "#2e8b57")],
            "speedup over PyTorch eager (x)")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{title}: speedup over eager\n{subtitle}", fontsize=9)
        ax.legend(fontsize=8)
        save(fig, f"speedup_{mode}.png")

    sel = [r for r in rows if r["cudagraph_ms"] and r["graphN_ms"]]
    if sel:
        fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(sel) + 2), 4.5))
        bars(ax, [label(r) for r in sel], [
            ("nimble, 1 stream", [ratio(r["cudagraph_ms"], r["graph1_ms"]) for r in sel], "#8fb3de"),
            ("nimble, multi-stream", [ratio(r["cudagraph_ms"], r["graphN_ms"]) for r in sel], "#1f4e9c"),
            ("nimble.torch, in the program", [ratio(r["cudagraph_ms"], r.get("nimble_torch_ms")) for r in sel], "#2e8b57"),
            ("upper bound: CUDA graph time / critical path", [ratio(r["cudagraph_ms"], r["critical_ms"]) for r in sel], "#e0a040")],
            "speedup over PyTorch CUDA graph (x)")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"Same GPU tasks: nimble replay vs PyTorch's own CUDA graph\n{subtitle}", fontsize=9)
        ax.legend(fontsize=8)
        save(fig, "vs_cudagraph.png")

    sel = [r for r in rows if r.get("gpu_busy")]
    if sel:
        fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(sel) + 2), 4))
        bars(ax, [label(r) for r in sel], [("GPU busy", [100 * r["gpu_busy"] for r in sel], "#1f4e9c")],
             "GPU busy under eager (% of iteration)", number="{:.0f}%")
        ax.set_ylim(0, 110)
        ax.set_title(f"How much of an eager iteration the GPU works (sum of task times / iteration time)\n{subtitle}",
                     fontsize=9)
        save(fig, "gpu_busy.png")

    sel = [r for r in rows if r.get("streams") not in (None, "")]
    if sel:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(max(9, 1.2 * len(sel) + 3), 4.5))
        bars(a1, [label(r) for r in sel], [
            ("width (most independent tasks found at once)", [r["width_lo"] for r in sel], "#e0a040"),
            ("streams used", [r["streams"] for r in sel], "#1f4e9c")], "count", number="{:.0f}")
        a1.set_title("Logical concurrency", fontsize=9)
        a1.legend(fontsize=7)
        bars(a2, [label(r) for r in sel], [("waits (cross-stream syncs)", [r["waits"] for r in sel], "#8fb3de")],
             "count", number="{:.0f}")
        a2.set_title("Synchronisations of the Nimble schedule", fontsize=9)
        fig.suptitle(subtitle, fontsize=8)
        save(fig, "concurrency.png")
    return written


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--csv":
        rows, outdir = read_csv(sys.argv[2]), sys.argv[3]
        env_path = os.path.join(os.path.dirname(sys.argv[2]), "environment.json")
        env = json.load(open(env_path)) if os.path.exists(env_path) else {}
    elif len(sys.argv) == 3:
        runs, outdir = sys.argv[1:3]
        rows, env = collect(runs)
        env["date"] = str(datetime.date.today())
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            env["driver"] = None
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if not rows:
        print(f"experiment_report: no runs found", file=sys.stderr)
        sys.exit(1)
    os.makedirs(outdir, exist_ok=True)
    rows.sort(key=lambda r: (r["mode"] != "infer", r["model"], int(float(r["batch"] or 0)), r["allocator"],
                             r.get("max_streams") or ""))
    if len(sys.argv) == 3:
        with open(os.path.join(outdir, "experiments.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        json.dump(env, open(os.path.join(outdir, "environment.json"), "w"), indent=1)
    open(os.path.join(outdir, "experiments.md"), "w").write(markdown(rows, env))
    for path in charts(rows, outdir, env):
        print("wrote", path)
    print(markdown(rows, env))


main()
