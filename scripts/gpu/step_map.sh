#!/usr/bin/env bash
# Which steps of a corpus program nimble run replayed, as lines of marks (corpus.py step_marks):
#   R  the step replayed whole iterations     s  it launched recorded segments only (a partial)
#   .  nothing of nimble's reached the GPU    (process_pairs.py prints the same for each run process)
# Runs each program once under `nimble run` with NIMBLE_DEBUG=1 (window events in the log), so a
# step that was not replayed can be looked up by the program's clock in its log.
#   bash scripts/gpu/step_map.sh MODE STEPS SCRIPT.py [SCRIPT.py ...]   (logs and summaries to $OUT)
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=$1 steps=$2; shift 2
nimble=${NIMBLE:-$PWD/build-gpu/bin/nimble}
out=${OUT:-/tmp}/step-map
mkdir -p "$out"
for script in "$@"; do
  name=$(basename "$script" .py)-$mode
  (cd tests/programs && STEPS=$steps CORPUS_MODE=$mode NIMBLE_DEBUG=1 \
     "$nimble" run -o "$out/$name.json" -- python3 "$script" > "$out/$name.log" 2>&1)
  echo "$name: exit $?"
  python3 - "$out/$name.log" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "scripts", "gpu"))
from corpus import corpus_line, step_marks
c = corpus_line(open(sys.argv[1], errors="replace").read())
if c is None:
    sys.exit("  no CORPUS line (see the log)")
marks = step_marks(c.get("step_replayed"), c.get("step_segments")) or ""
print("  %d steps, %d replayed" % (len(marks), marks.count("R")))
for i in range(0, len(marks), 60):
    print("  %4d %s" % (i, marks[i:i + 60]))
PY
done
