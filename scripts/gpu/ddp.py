#!/usr/bin/env python3
"""`nimble run` on DistributedDataParallel training, one process per GPU (torchrun), on the GPU
machine: every rank's losses and final weights against a plain run, no hang, ratios per rank.

    python3 scripts/gpu/ddp.py --out DIR [--gpus 2] [--models resnet18,resnet50] [--steps 100]

Runs tests/programs/ddp_train.py under torchrun plainly, then unchanged under
`nimble run -o DIR/MODEL.json -- torchrun ...` (each rank writes MODEL.rankR.json and its
summary MODEL.rankR.run.json). NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and the others of
the device's KINDS.md). A run that does not end within --timeout seconds counts as a hang.
Every trace a rank wrote must pass `nimble check`, and nimble run must exit as the plain run did.
Writes DIR/ddp.md and DIR/ddp.csv; logs beside them.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import PROGRAMS, ROOT, run  # noqa: E402

NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def corpus_lines(text):
    """Every rank's CORPUS line, by rank (ranks share one pipe: a line another rank's output
    broke is skipped, and that rank then has no results)."""
    out = {}
    for line in text.splitlines():
        at = line.find("CORPUS {")
        if at < 0:
            continue
        try:
            d, _ = json.JSONDecoder().raw_decode(line[at + len("CORPUS "):])
        except ValueError:
            continue
        out[d.get("rank", 0)] = d
    return out


def traces_of(trace, rank, gpus):
    """The recordings a rank wrote: MODEL.rankR.json, MODEL.rankR.2.json, ... (one rank alone: MODEL.json, ...)."""
    stem = trace[:-5] + (".rank%d" % rank if gpus > 1 else "")
    folder = os.path.dirname(trace)
    name = os.path.basename(stem)
    return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                  if f.startswith(name + ".") and f.endswith(".json") and not f.endswith(".run.json")
                  and (f == name + ".json" or f[len(name) + 1:-5].isdigit()))


def check(nimble, path):
    """`nimble check`: is the trace file valid?"""
    return subprocess.run([nimble, "check", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


FIELDS = ["model", "rank", "gpus", "losses_identical", "weights_identical", "hang", "traces", "traces_valid", "replayed",
          "steps", "collectives_in_place", "in_process", "process_ratio", "plain_ms", "nimble_ms", "plain_exit",
          "nimble_exit", "why"]


def write_tables(out, rows):
    with open(os.path.join(out, "ddp.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "ddp.md"), "w") as f:
        f.write("| " + " | ".join(FIELDS) + " |\n|" + " --- |" * len(FIELDS) + "\n")
        for r in rows:
            f.write("| " + " | ".join(str(r.get(k, "")) for k in FIELDS) + " |\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "ddp-results"))
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--models", default="resnet18,resnet50")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)  # the programs run in tests/programs
    os.makedirs(args.out, exist_ok=True)
    nimble = os.environ.get("NIMBLE") or next(
        (p for p in (os.path.join(ROOT, d, "bin", "nimble") for d in ("build-gpu", "build")) if os.path.exists(p)), None)
    if not nimble:
        sys.exit("ddp.py: no nimble binary (build it, or set NIMBLE)")
    env = dict(os.environ, STEPS=str(args.steps), CORPUS_MODE="deterministic", PYTHONUNBUFFERED="1", **NO_MULTICAST)
    env.pop("LD_PRELOAD", None)
    rows = []
    for model in [m for m in args.models.split(",") if m]:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(args.gpus),
               os.path.join(PROGRAMS, "ddp_train.py"), model]
        plain_out, plain_code, _ = run(cmd, env, os.path.join(args.out, model + ".plain.log"), args.timeout)
        trace = os.path.join(args.out, model + ".json")
        for rank in range(args.gpus):  # an earlier run's recordings are not this run's
            for old in traces_of(trace, rank, args.gpus):
                os.remove(old)
        nim_out, nim_code, _ = run([nimble, "run", "-o", trace, "--"] + cmd, env,
                                   os.path.join(args.out, model + ".nimble.log"), args.timeout)
        plain, nim = corpus_lines(plain_out), corpus_lines(nim_out)
        for rank in range(args.gpus):
            p, n = plain.get(rank), nim.get(rank)
            summary = {}
            # One rank alone writes MODEL.run.json; each of several, MODEL.rankR.run.json.
            for path in (trace[:-5] + ".rank%d.run.json" % rank, trace[:-5] + ".run.json"):
                try:
                    with open(path) as f:
                        summary = json.load(f)
                    break
                except (OSError, ValueError):
                    continue
            recs = summary.get("recordings", [])
            traces = traces_of(trace, rank, args.gpus)
            trial = max((r.get("trial_speedup") or 0 for r in recs), default=0)
            row = {"model": model, "rank": rank, "gpus": args.gpus, "plain_exit": plain_code, "nimble_exit": nim_code,
                   "hang": "timeout" in (plain_code, nim_code),
                   "losses_identical": bool(p and n and p["digest"] == n["digest"]),
                   "weights_identical": bool(p and n and p.get("final") and p.get("final") == n.get("final")),
                   "replayed": summary.get("iterations_replayed", 0), "steps": p["steps"] if p else "",
                   "collectives_in_place": summary.get("collectives_run_in_place", 0),
                   "in_process": round(trial, 3) if trial else "",
                   "plain_ms": round(p["tail_ms"], 3) if p else "", "nimble_ms": round(n["tail_ms"], 3) if n else "",
                   "traces": len(traces), "traces_valid": all(check(nimble, t) for t in traces),
                   "why": summary.get("nothing_replayed_because", "")[:200]}
            if p and n and n["tail_ms"] > 0:
                row["process_ratio"] = round(p["tail_ms"] / n["tail_ms"], 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
        write_tables(args.out, rows)  # after each model: a run cut short keeps what it measured
    print("wrote " + os.path.join(args.out, "ddp.md"))
    # A nimble run that exits otherwise than plain (an invalid trace, a crashed rank) fails too.
    bad = [r for r in rows if not (r["losses_identical"] and r["weights_identical"]) or r["hang"]
           or r["nimble_exit"] != r["plain_exit"] or not r["traces_valid"]]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
