#!/usr/bin/env bash
# GPU machine: which nimble run setting changes an outcome of one corpus program (results that
# differ from a plain run's, steps replayed). Runs the program plain and under nimble run once per
# variant (corpus.py, so each row has the corpus columns), prints one CORPUS row per variant, and
# packs every variant's logs, run summaries and recorded traces into $OUT/bisect-PROGRAM.tgz.
#   scripts/gpu/settings_bisect.sh PROGRAM STEPS default NIMBLE_RUN_TRIAL=0 NIMBLE_RUN_SKIP_LIBRARY=0 ...
set -uo pipefail
cd "$(dirname "$0")/../.."
program=$1 steps=$2
shift 2
OUT=${OUT:-/tmp/nimble-bisect}
work=$(mktemp -d)
n=0
for variant in "$@"; do
  n=$((n + 1))
  name=$n-${variant//[^A-Za-z0-9_]/_}  # (numbered: a variant may be given twice, to see it repeat)
  echo "== $program, $variant"
  if [ "$variant" = default ]; then
    python3 scripts/gpu/corpus.py --out "$work/$name" --steps "$steps" --only "$program" 2>&1 | grep '^{'
  else
    env "$variant" python3 scripts/gpu/corpus.py --out "$work/$name" --steps "$steps" --only "$program" 2>&1 | grep '^{'
  fi
done
tar czf "$OUT/bisect-$program.tgz" -C "$work" .
