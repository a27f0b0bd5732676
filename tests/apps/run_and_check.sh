#!/bin/sh
# `nimble run` on a test app: its output must equal a plain run's, byte for byte, and the
# summary must show replayed iterations (and, with EXPECT_REASON set, a fall-back or false start
# whose reason mentions it: --change-shape-at changes launch shapes right after the input copy).
# With EXPECT_RELEASED set, a recording must have been dropped and its graphs given back
# (the summary's graphs.released). NIMBLE_RUN_TRIAL from the environment, else no trial; likewise
# NIMBLE_RUN_GUARD, else no process guard (its paused spans would replay nothing of these short loops).
# With EXPECT_GUARD_JUDGED set, the process guard must have reached a verdict on timed spans (kept or
# stepped aside, not left undecided by spans it could not time); with EXPECT_NO_FALLBACKS, no
# replayed iteration may have fallen back.
# Usage: run_and_check.sh NIMBLE APP TRACE MIN_REPLAYED [APP ARGS...]. Exit 77 (skip) without a GPU.
nimble=$1 app=$2 out=$3 min_replayed=$4
shift 4
if ! ls /dev/nvidia0 >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "run_and_check: no NVIDIA driver or device, skipping"
  exit 77
fi
summary="${out%.json}.run.json"
rm -f "$out" "$summary" "$out.plain" "$out.nimble"
"$app" "$@" > "$out.plain"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "run_and_check: the app failed on its own ($rc)"; exit 1; }
# The mechanics are checked here, not the payoff trial (the corpus measures that): no trial.
NIMBLE_RUN_TRIAL=${NIMBLE_RUN_TRIAL:-0} NIMBLE_RUN_GUARD=${NIMBLE_RUN_GUARD:-0} "$nimble" run -o "$out" -- "$app" "$@" > "$out.nimble"
rc=$?
[ $rc -eq 0 ] || { echo "run_and_check: nimble run exited with $rc"; cat "$out.nimble"; exit 1; }
grep '^iteration' "$out.nimble" > "$out.nimble.iterations"
if ! cmp -s "$out.plain" "$out.nimble.iterations"; then
  echo "run_and_check: results differ from the plain run:"
  diff "$out.plain" "$out.nimble.iterations" | head -20
  exit 1
fi
echo "run_and_check: $(wc -l < "$out.plain") iterations, every checksum equal to the plain run's"
[ -f "$summary" ] || { echo "run_and_check: no summary $summary"; exit 1; }
cat "$summary"
replayed=$(sed -n 's/.*"iterations_replayed": \([0-9]*\).*/\1/p' "$summary" | head -1)  # the total, before the recordings
[ "${replayed:-0}" -ge "$min_replayed" ] || { echo "run_and_check: $replayed iterations replayed, expected at least $min_replayed"; exit 1; }
if [ -n "$EXPECT_REASON" ]; then
  grep -q "$EXPECT_REASON" "$summary" || { echo "run_and_check: no fall-back or false start reason mentioning '$EXPECT_REASON'"; exit 1; }
fi
if [ -n "$EXPECT_RELEASED" ]; then
  grep -q '"state": "dropped"' "$summary" || { echo "run_and_check: no recording was dropped"; exit 1; }
  grep -q '"released": true' "$summary" || { echo "run_and_check: a dropped recording kept its graphs"; exit 1; }
  echo "run_and_check: the dropped recording's graphs were given back"
fi
if [ -n "$EXPECT_GUARD_JUDGED" ]; then
  judgements=$(sed -n 's/.*"judgements": \([0-9]*\).*/\1/p' "$summary" | head -1)
  spoiled=$(sed -n 's/.*"spoiled_spans": \([0-9]*\).*/\1/p' "$summary" | head -1)
  gap=$(sed -n 's/.*"longest_sync_gap_calls": \([0-9]*\).*/\1/p' "$summary" | head -1)
  [ "${judgements:-0}" -ge 1 ] || { echo "run_and_check: the process guard never reached a verdict"; exit 1; }
  # Undecided takes more than twice its spans spoiled; a few may meet the first look or build.
  [ "${spoiled:-99}" -le 2 ] || { echo "run_and_check: the process guard could not time $spoiled span(s)"; exit 1; }
  echo "run_and_check: the process guard judged $judgements time(s), $spoiled span(s) untimed, host syncs up to $gap calls apart"
fi
if [ -n "$EXPECT_NO_FALLBACKS" ]; then
  grep -q '^  "fallbacks": \[\],' "$summary" || { echo "run_and_check: replayed iterations fell back"; exit 1; }
  echo "run_and_check: no fall-back"
fi
echo "run_and_check: $replayed iterations replayed"
