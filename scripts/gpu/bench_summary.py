"""Collects bench runs (RUNS/<model>.log with bench_model.py's JSON line, RUNS/<model>.bench.json
from nimble) into a Markdown table and a CSV. Usage: bench_summary.py RUNS OUT.md OUT.csv"""
import csv
import datetime
import glob
import json
import os
import sys

runs, md_path, csv_path = sys.argv[1:4]
rows = []
device = "?"
for log in sorted(glob.glob(os.path.join(runs, "*.log"))):
    run = os.path.basename(log)[:-4]
    model, _, allocator = run.partition(".")
    program = {}
    for line in open(log, errors="replace"):
        if line.startswith("{") and '"eager_ms"' in line:
            program = json.loads(line)
    bench_path = os.path.join(runs, run + ".bench.json")
    bench = json.load(open(bench_path)) if os.path.exists(bench_path) else {}
    device = program.get("device", device)
    times = {b["backend"]: b for b in bench.get("backends", [])}
    row = {"model": model, "allocator": allocator or "caching", "eager_ms": program.get("eager_ms"), "cudagraph_ms": program.get("cudagraph_ms"),
           "results_unchanged": program.get("results_unchanged"),
           "streams": (bench.get("schedule") or {}).get("streams"), "waits": (bench.get("schedule") or {}).get("syncs"),
           "serial_ms": bench.get("serial_us", 0) / 1000 if bench else None,
           "critical_ms": bench.get("critical_path_us", 0) / 1000 if bench else None,
           "error": bench.get("error") or ("no bench results" if not bench else "")}
    for key, name in (("replay_eager_ms", "eager-replay"), ("graph1_ms", "graph-1-stream"),
                      ("graphN_ms", "graph-nimble-streams"), ("graphE_ms", "graph-from-edges")):
        b = times.get(name, {})
        row[key] = b.get("median_ms")
        row[key.replace("_ms", "_check")] = b.get("memory_check", b.get("error", ""))
    rows.append(row)

fields = list(rows[0].keys()) if rows else ["model"]
with open(csv_path, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(rows)


def ms(v):
    return "-" if v is None else f"{v:.3f}"


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


out = [f"Device: {device}; date {datetime.date.today()}; batch 1 fp32 inference, medians of 200. "
       "Times in ms; ratios are speedups (higher is better). 'async' = PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync.",
       "",
       "| model | allocator | PyTorch eager | PyTorch CUDA graph | nimble eager replay | nimble graph, 1 stream | nimble graph, streams | nimble graph, edges | streams / waits | sum of task times | critical path | nimble streams vs CUDA graph | vs 1 stream | replay over critical path | memory check | program results unchanged |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    best = min([v for v in (r["graphN_ms"], r["graphE_ms"]) if v is not None], default=None)
    checks = {r[k] for k in ("graph1_check", "graphN_check", "graphE_check") if r.get(k)}
    out.append(f"| {r['model']} | {r['allocator']} | {ms(r['eager_ms'])} | {ms(r['cudagraph_ms'])} | {ms(r['replay_eager_ms'])} | "
               f"{ms(r['graph1_ms'])} | {ms(r['graphN_ms'])} | {ms(r['graphE_ms'])} | {r['streams']} / {r['waits']} | "
               f"{ms(r['serial_ms'])} | {ms(r['critical_ms'])} | {ratio(r['cudagraph_ms'], r['graphN_ms'])} | "
               f"{ratio(r['graph1_ms'], r['graphN_ms'])} | {ratio(best, r['critical_ms'])} | "
               f"{', '.join(sorted(checks)) or r['error']} | {r['results_unchanged']} |")
open(md_path, "w").write("\n".join(out) + "\n")
