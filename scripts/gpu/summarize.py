"""Summarises the recorded traces and the overhead runs as a Markdown report.
Usage: summarize.py TRACE_DIR OVERHEAD_JSONL [LAUNCH_RATE_JSONL] > summary.md"""
import collections
import json
import pathlib
import statistics
import sys


def trace_row(path):
    t = json.loads(path.read_text())
    tasks = t["tasks"]
    kinds = collections.Counter(task["kind"] for task in tasks)
    cov = t.get("coverage", {})
    funnel = t.get("recorded_with", {}).get("funnel", {})
    libs = collections.Counter(task.get("library_call") for task in tasks if task.get("library_call"))
    timed = sum(1 for task in tasks if "duration_us" in task)
    kernel_time = sum(task.get("duration_us", 0) for task in tasks if task["kind"] == "kernel")
    everything = sum(1 for task in tasks for m in task.get("mem", []) if m.get("everything"))
    cupti = cov.get("cupti_kernels")
    ok = "yes" if cupti is not None and cupti == cov.get("traced_kernels") else "NO"
    return (f"| {path.stem} | {len(tasks)} | {kinds.get('kernel', 0)} | {cupti} | {ok} | "
            f"{kinds.get('memcpy', 0)}/{kinds.get('memset', 0)}/{kinds.get('sync', 0)} | "
            f"{sum(len(task['deps']) for task in tasks)} | {timed} | {kernel_time / 1e3:.2f} | "
            f"{sum(libs.values())} | {everything} | {funnel.get('proc_address_passed_through', '?')} |")


def main():
    trace_dir, overhead = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    print("| program | tasks | kernels traced | CUPTI kernels | equal | memcpy/memset/sync | deps "
          "| with duration | kernel ms | library-attributed | 'everything' accesses | gPA passed through |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(trace_dir.glob("*.json")):
        try:
            print(trace_row(path))
        except Exception as error:  # a broken trace is a finding, not a crash of the report
            print(f"| {path.stem} | unreadable: {error} |")
    runs = load_runs(overhead)
    if runs:
        print("\n| ResNet-50 eager loop | runs | median of run medians, ms | best run, ms | recorded iteration ms |")
        print("|---|---|---|---|---|")
        for config, rs in runs.items():
            rec = [r["recorded_ms"] for r in rs if r.get("recorded_ms")]
            medians = [r["median_ms"] for r in rs]
            print(f"| {config} | {len(rs)} | {statistics.median(medians):.3f} | {min(medians):.3f} | "
                  + (f"{statistics.median(rec):.2f} |" if rec else "- |"))
        if "plain" in runs and "preload-idle" in runs:
            plain = statistics.median(r["median_ms"] for r in runs["plain"])
            idle = statistics.median(r["median_ms"] for r in runs["preload-idle"])
            spread = [r["median_ms"] for r in runs["plain"]]
            print(f"\nIdle overhead (preloaded, NIMBLE_MODE unset vs plain, median of run medians): "
                  f"{100 * (idle / plain - 1):+.2f}% (plain runs themselves spread "
                  f"{100 * (max(spread) / min(spread) - 1):.1f}%)")
            if "record" in runs:
                rec = statistics.median(r["median_ms"] for r in runs["record"])
                recorded = statistics.median(r["recorded_ms"] for r in runs["record"] if r.get("recorded_ms"))
                print(f"Record mode, iterations outside the window: {100 * (rec / plain - 1):+.2f}%; "
                      f"the recorded iteration took {recorded:.2f} ms ({recorded / plain:.1f}x a plain "
                      f"iteration; CUPTI on, every task described; the trace is written after it)")
    launches = load_runs(pathlib.Path(sys.argv[3])) if len(sys.argv) > 3 else {}
    if "plain" in launches and "preload-idle" in launches:
        print("\n| empty-kernel launch, host ns | plain | preloaded idle | difference |")
        print("|---|---|---|---|")
        for key, label in (("runtime_launch_ns", "runtime <<<>>> (via cuGetProcAddress)"),
                           ("driver_launch_ns", "driver cuLaunchKernel (exported symbol)")):
            plain = statistics.median(r[key] for r in launches["plain"])
            idle = statistics.median(r[key] for r in launches["preload-idle"])
            print(f"| {label} | {plain:.1f} | {idle:.1f} | {idle - plain:+.1f} |")


def load_runs(path):
    runs = collections.defaultdict(list)
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                r = json.loads(line)
                runs[r["config"]].append(r)
            except (json.JSONDecodeError, KeyError):
                continue
    return runs


if __name__ == "__main__":
    main()
