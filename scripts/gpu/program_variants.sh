#!/usr/bin/env bash
# GPU machine: one corpus program run once per variant, one after another, to see which setting
# moves its step time (single processes: for effects well above the 3-5% a pair resolves).
#   scripts/gpu/program_variants.sh SCRIPT STEPS VARIANT...
# VARIANT: plain | idle (libnimble.so preloaded, no mode) | run | run:VAR=V,VAR=V (nimble run with
# those settings) | record:A:B (nimble record of steps A..B-1, the trace kept as SCRIPT-A.json).
# Prints each variant's median and tail step time, steps replayed and nimble's last lines; logs
# and traces go to $VARIANTS_DIR (default a temporary folder), which it names at the end.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
script=$1 steps=$2
shift 2
nimble="$root/build-gpu/bin/nimble"
[ -x "$nimble" ] || nimble="$root/build/bin/nimble"
preload="$(dirname "$nimble")/../lib/libnimble.so"
dir=${VARIANTS_DIR:-$(mktemp -d)}
mkdir -p "$dir"
cd "$root/tests/programs"
for variant in "$@"; do
  name=${variant//[^A-Za-z0-9_]/_}
  log="$dir/${script%.py}.$name.log"
  settings=()
  case $variant in
    plain) cmd=(python3 "$script") ;;
    idle) cmd=(env LD_PRELOAD="$preload" python3 "$script") ;;
    run) cmd=("$nimble" run -o "$dir/${script%.py}.$name.json" -- python3 "$script") ;;
    run:*) IFS=, read -ra settings <<< "${variant#run:}"
           cmd=(env "${settings[@]}" "$nimble" run -o "$dir/${script%.py}.$name.json" -- python3 "$script") ;;
    record:*) range=${variant#record:}
              cmd=(env CORPUS_PROFILE_STEPS="$range" "$nimble" record -o "$dir/${script%.py}-${range%%:*}.json" -- python3 "$script") ;;
    *) echo "program_variants.sh: unknown variant '$variant'" >&2; exit 2 ;;
  esac
  STEPS=$steps timeout 300 "${cmd[@]}" > "$log" 2>&1
  echo "== $variant (exit $?)"
  python3 - "$log" <<'PY'
import json, sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
corpus = [json.loads(l[7:]) for l in lines if l.startswith("CORPUS ")]
if corpus:
    c = corpus[-1]
    replayed = c.get("step_replayed")
    print("median %.2f ms, tail %.2f ms, steps replayed %s" % (c["median_ms"], c["tail_ms"],
          sum(1 for n in replayed if n) if replayed is not None else "n/a"))
print("\n".join([l[:300] for l in lines if l.startswith("nimble")][-6:])
if not corpus:
    print("\n".join(lines[-15:]))
PY
done
echo "logs and traces in $dir"
