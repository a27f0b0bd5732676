#!/usr/bin/env bash
# GPU machine: one corpus program under nimble run N times with NIMBLE_DEBUG=1, to see why some
# runs replay and others do not. One line per run in $OUT/NAME-runs.txt (iterations replayed,
# fall-backs by reason, recordings and their states, why nothing was replayed, when the debug log
# says a period was found); logs and run summaries packed into $OUT/NAME-runs.tgz.
#   scripts/gpu/repeat_runs.sh PROGRAM.py N [STEPS]     (extra environment from the caller)
set -uo pipefail
program=$1 runs=$2 steps=${3:-200}
cd "$(dirname "$0")/../../tests/programs"
OUT=${OUT:-/tmp/nimble-runs}
name=$(basename "$program" .py)
dir=$(mktemp -d)
nimble=../../build-gpu/bin/nimble
for i in $(seq 1 "$runs"); do
  STEPS=$steps NIMBLE_DEBUG=1 timeout 200 "$nimble" run -o "$dir/run$i.json" -- python3 "$program" > "$dir/run$i.log" 2>&1
  python3 - "$dir/run$i" "$i" >> "$dir/summary.txt" <<'PY'
import collections, json, sys
base, i = sys.argv[1], sys.argv[2]
log = open(base + ".log", errors="replace").read().splitlines()
found = [l for l in log if "period of" in l or "looking for another" in l or "let go" in l]
try:
    d = json.load(open(base + ".run.json"))
except Exception as e:
    print("run", i, "no summary:", e, "|", " / ".join(log[-3:])); sys.exit()
falls = collections.Counter()
for f in d.get("fallbacks", []):
    falls[f.get("reason", "?")[:90]] += f.get("count", 1)
corpus = next((json.loads(l[7:]) for l in reversed(log) if l.startswith("CORPUS ")), {})
steps = "".join("1" if r else "0" for r in corpus.get("step_replayed") or [])
print("run %s: replayed %s, graphs in place %s, recordings %s, fallbacks %s, why: %s\n  periods found: %d (%s)\n  steps %s" % (
    i, d.get("iterations_replayed"), d.get("program_graphs_run_in_place"),
    [(r.get("calls"), r.get("state"), r.get("trial_speedup")) for r in d.get("recordings", [])],
    dict(falls.most_common(4)), d.get("nothing_replayed_because", "-"), len(found),
    "; ".join(l.split("]: ", 1)[-1][:80] for l in found[:6]), steps))
PY
  rm -f "$dir"/run$i.[0-9]*.json  # later recordings; the first trace is kept
done
cp "$dir/summary.txt" "$OUT/$name-runs.txt"
tar czf "$OUT/$name-runs.tgz" -C "$dir" . && rm -rf "$dir"
