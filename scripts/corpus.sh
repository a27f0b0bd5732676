#!/usr/bin/env bash
# GPU machine: `nimble run` on the corpus of ordinary programs (tests/programs/), each plain and
# under nimble run; table in $OUT/corpus.md and .csv, logs and summaries in $OUT/corpus-logs.tgz.
#   scripts/corpus.sh [corpus.py options: --only NAME..., --mode deterministic|benchmark|both]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/nimble-corpus}
work=$(mktemp -d)
python3 scripts/gpu/corpus.py --out "$work" "$@" 2>&1 | tee "$OUT/corpus.log"
cp "$work"/corpus.md "$work"/corpus.csv "$OUT"/ 2>/dev/null
tar czf "$OUT/corpus-logs.tgz" -C "$work" --exclude='*[!n].json' . 2>/dev/null  # logs and *.run.json, not traces
