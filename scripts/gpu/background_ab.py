"""NIMBLE_RUN_BACKGROUND=0 against =1 on HF generate (10 calls), each process measured against itself.

Process pairs on a shared machine differ by tens of percent (a whole process runs slower or
faster), which buries a 30 ms one-off cost. Each `nimble run` process is therefore read against its
own calls before the recording (calls 1-3, nimble only looking): the extra cost of the calls that
hold the recording and the wait (calls 4-5), and the replayed calls (6-9) over those. Rounds
alternate the order of the two settings; a plain process per round gives the machine's speed.

    python3 scripts/gpu/background_ab.py --rounds 6 --out $OUT/bg
"""
import argparse
import csv
import json
import os
import statistics as st
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS = os.path.join(ROOT, "tests", "programs")


def steps_of(output):
    for line in output.splitlines():
        if line.startswith("CORPUS "):
            return json.loads(line[7:])
    return None


def run(cmd, env):
    p = subprocess.run(cmd, env=env, cwd=PROGRAMS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--out", default=os.environ.get("OUT", "bg-results"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    nimble = os.path.join(ROOT, os.environ.get("NIMBLE_BUILD", "build-gpu"), "bin", "nimble")
    base = dict(os.environ, STEPS="40", CORPUS_MODE="deterministic", PYTHONUNBUFFERED="1")
    base.pop("LD_PRELOAD", None)
    cmd = [sys.executable, "hf_generate.py"]
    rows, digests = [], set()
    for r in range(args.rounds):
        code, out = run(cmd, base)
        plain = steps_of(out)
        digests.add(plain and plain["digest"])
        for bg in ((0, 1) if r % 2 == 0 else (1, 0)):
            trace = os.path.join(args.out, f"g{r}.bg{bg}.json")
            code, out = run([nimble, "run", "-o", trace, "--"] + cmd, dict(base, NIMBLE_RUN_BACKGROUND=str(bg)))
            with open(trace[:-5] + ".log", "w") as f:
                f.write(out)
            s = steps_of(out)
            if code != 0 or not s:
                rows.append({"round": r, "background": bg, "why": f"exit {code}"})
                continue
            digests.add(s["digest"])
            ms = s["step_ms"]
            pre = st.mean(ms[1:4])
            waited = {}
            try:
                with open(trace[:-5] + ".run.json") as f:
                    waited = json.load(f)["recordings"][0]["setup"]["program_waited_ms"]
            except (OSError, ValueError, KeyError, IndexError):
                pass
            rows.append({"round": r, "background": bg, "plain_median_ms": round(st.median(plain["step_ms"][1:]), 1),
                         "own_calls_1_3_ms": round(pre, 1),
                         "calls_4_5_extra_ms": round(ms[4] + ms[5] - 2 * pre, 1),
                         "replayed_6_9_over_own": round(st.mean(ms[6:10]) / pre, 3),
                         "waited_ms": round(waited.get("total", 0), 1), "ready_after_ms": round(waited.get("ready_after", 0), 1),
                         "identical": s["digest"] == plain["digest"], "steps": " ".join(f"{t:.0f}" for t in ms)})
            print(json.dumps(rows[-1]), flush=True)
    with open(os.path.join(args.out, "background_ab.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=sorted({k for row in rows for k in row}))
        w.writeheader()
        w.writerows(rows)
    for bg in (0, 1):
        mine = [x for x in rows if x.get("background") == bg and "calls_4_5_extra_ms" in x]
        if mine:
            print(f"background={bg}: calls 4-5 extra median {st.median(x['calls_4_5_extra_ms'] for x in mine):.1f} ms, "
                  f"replayed/own median {st.median(x['replayed_6_9_over_own'] for x in mine):.3f}, "
                  f"waited median {st.median(x['waited_ms'] for x in mine):.1f} ms, n={len(mine)}")
    print("results identical in every process:", len(digests) == 1)


if __name__ == "__main__":
    main()
