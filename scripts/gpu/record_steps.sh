#!/usr/bin/env bash
# Records chosen steps of a corpus program with `nimble record` (the program brackets them with
# cuProfilerStart/Stop through CORPUS_PROFILE_STEPS), to see what it issues per step.
#   scripts/gpu/record_steps.sh OUT.json FIRST:END SCRIPT [ARGS...]   (steps FIRST..END-1)
# Extra environment (STEPS, XLA_FLAGS, ...) passes through.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(realpath -m "$1")"; steps="$2"; shift 2
nimble="${NIMBLE:-$root/build/bin/nimble}"
cd "$root/tests/programs"
CORPUS_PROFILE_STEPS="$steps" "$nimble" record -o "$out" -- python3 "$@"
