#!/usr/bin/env bash
# The host instructions nimble adds to each kernel launch, state by state, counted on the CPU:
# the overhead probe (tests/interposer/probe_app: 200 launches, a copy and a sync per iteration;
# overhead-short: 4 launches, a copy and a sync, as many launches)
# on the fake driver, under callgrind, counting only the second half of its 2000 iterations (by
# then a trial has decided). Instruction counts do not depend on how busy the machine is, so two
# builds compare exactly; what a launch costs in time on a GPU machine is another question
# (scripts/overhead.sh, scripts/corpus.sh).
#
#   scripts/host_cost.sh [BUILD_DIR]      (default build/; needs valgrind)
# Writes $OUT/host-cost.md (OUT defaults to /tmp/nimble-host-cost) and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
out=${OUT:-/tmp/nimble-host-cost}
command -v valgrind > /dev/null || { echo "host_cost: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
probe=$build/tests/interposer/probe_app
for f in "$probe" "$build/bin/nimble" "$build/lib/libnimble.so" "$build/tests/interposer/libfake_cuda.so"; do
  [ -e "$f" ] || { echo "host_cost: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
mkdir -p "$out"
rm -f "$out"/cg.* "$out"/*.json
export NIMBLE_LIBCUDA=$build/tests/interposer/libfake_cuda.so NIMBLE_CUPTI=0 FAKE_DRIVER_GRAPHS=1 NIMBLE_RUN_BACKGROUND=0
launches=$((1000 * 200))  # the second half: 1000 iterations of 200 launches
run_range=("$build/bin/nimble" run --capture-range cudaProfilerApi --iteration 1)

# Runs PROGRAM... under callgrind, counting only inside the function TOGGLE, with the settings given
# before `--`, under `command` when it is set (nimble run, given its trace $out/TAG.json: the summary
# beside it says what became of the recording); output in $out/TAG.log. Fails as the command does.
counted_run() {
  local tag=$1 toggle=$2; shift 2
  local settings=()
  while [ "$1" != "--" ]; do settings+=("$1"); shift; done
  shift
  local run=()
  if ((${#command[@]})); then run=("${command[@]}" -o "$out/$tag.json" --); fi
  env "${settings[@]}" valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=$toggle" --trace-children=yes \
    "--callgrind-out-file=$out/cg.$tag.%p" "${run[@]}" "$@" > "$out/$tag.log" 2>&1
}
# The counts of counted_run TAG's program: the file with counts (nimble's CLI, run by valgrind too, has none).
counted_file() { grep -l '^totals: [1-9]' "$out"/cg."$1".* | head -1; }

# One state: a name, the probe's mode, then its environment; `command` is what runs the probe
# (nimble run with its range, or nothing).
count() {
  local name=$1 mode=$2; shift 2
  local tag; tag=$(echo "$name-$mode" | tr -c 'a-z0-9' '-')
  local summary=""
  if ((${#command[@]})); then summary="$out/$tag.run.json"; fi
  echo "host_cost: $name" >&2
  counted_run "$tag" '*overhead_second_half*' "$@" -- "$probe" "$mode" ||
    grep -q '^kernels_run=' "$out/$tag.log" ||  # (nimble run fails a run that recorded nothing; the probe ran)
    { echo "host_cost: $name failed; see $out/$tag.log" >&2; exit 1; }
  local file; file=$(counted_file "$tag")
  local total; total=$(awk '/^totals:/ {print $2}' "$file")
  echo "$name|$mode|$total|$(python3 scripts/callgrind_share.py "$file")|$summary" >> "$out/counts"
}
: > "$out/counts"
for mode in overhead overhead-same overhead-unrepeating overhead-events overhead-short overhead-routed; do
  command=(); count "plain" "$mode"
  command=(); count "idle (preloaded, no mode)" "$mode" LD_PRELOAD="$build/lib/libnimble.so"
done
command=("$build/bin/nimble" run --capture-range nvtx:never)
# State followed (allocations, streams, events, library descriptors), nothing looked at or replayed:
# what nimble run costs before a given range starts, or a program it cannot find an iteration in.
count "given range never started" overhead
command=("${run_range[@]}")
count "given range, recording dropped" overhead NIMBLE_RUN_TRIAL=3 NIMBLE_RUN_MIN_SPEEDUP=100
command=("$build/bin/nimble" run)
count "automatic range, recording dropped" overhead NIMBLE_RUN_TRIAL=3 NIMBLE_RUN_MIN_SPEEDUP=100
count "automatic range, looking (no period repeats, never resting)" overhead-unrepeating NIMBLE_RUN_LOOK=0
# Nothing repeats in its first 131072 tasks: nimble run rests for 393216 calls, the whole second half.
count "automatic range, resting between looks (no period repeats)" overhead-unrepeating
# A mixture of experts: a copy and a sync after every sixth launch, shapes that follow the routing
# (every earlier sync was a candidate period at every sync until 2026-12-01: 60,385 a launch).
count "automatic range, looking (syncs every 6 launches, shapes follow the data, never resting)" overhead-routed NIMBLE_RUN_LOOK=0
# Iterations of 6 calls, below NIMBLE_RUN_ITERATION_SHORTEST: passed over, nothing looked at while
# the loop goes on.
count "automatic range, looking (a loop shorter than the minimum, never resting)" overhead-short NIMBLE_RUN_LOOK=0
# By default: 4096 tasks in that loop and looking rests.
count "automatic range, resting (a loop shorter than the minimum)" overhead-short
# Event records and waits after every second launch (cuDNN's RNN): the iteration is refused as cut
# into graphs of two calls, and once found again nimble run stops looking.
count "automatic range, refused (graphs of two calls)" overhead-events
# A recording whose trials never pay, with trials left: it rests (the program runs its own
# iterations) and wakes for another trial now and then (HF generate's recording rests like this).
count "automatic range, resting (its trials do not pay)" overhead NIMBLE_RUN_MIN_SPEEDUP=100 NIMBLE_RUN_TRIALS=100
command=("${run_range[@]}")
count "replaying, arguments as recorded" overhead-same NIMBLE_RUN_TRIAL=0 NIMBLE_RUN_GUARD=0
count "replaying, a scalar changes in half the kernels" overhead NIMBLE_RUN_TRIAL=0 NIMBLE_RUN_GUARD=0

# cuBLASLt's descriptor calls (PyTorch makes about 13 around every matmul, 800 a step in a BERT
# encoder), against the real libcublasLt: what nimble adds to each while it follows them.
descriptors=$build/tests/interposer/descriptor_probe
: > "$out/descriptor-counts"
count_descriptors() {
  local name=$1; shift
  local tag; tag=descriptors-$(echo "$name" | tr -c 'a-z0-9' '-')
  echo "host_cost: $name (descriptor calls)" >&2
  counted_run "$tag" descriptor_steps "$@" -- "$descriptors" 4000 ||
    { echo "host_cost: $name failed; see $out/$tag.log" >&2; exit 1; }
  echo "$name|$(awk '/^totals:/ {print $2}' "$(counted_file "$tag")")|$(sed -n 's/^descriptor_calls=//p' "$out/$tag.log")" \
    >> "$out/descriptor-counts"
}
if [ -x "$descriptors" ]; then
  command=(); count_descriptors "plain"
  command=(); count_descriptors "idle (preloaded, no mode)" LD_PRELOAD="$build/lib/libnimble.so"
  command=("${run_range[@]}"); count_descriptors "nimble run, given range never started"
  command=("$build/bin/nimble" run); count_descriptors "nimble run, automatic range"
fi

python3 - "$out" "$launches" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" <<'PY' | tee "$out/host-cost.md"
import json, os, sys
out, launches, commit = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [line.rstrip("\n").split("|") for line in open(os.path.join(out, "counts"))]
plain = {mode: int(total) for name, mode, total, _, _ in rows if name == "plain"}
def state(path):
    if not path or not os.path.exists(path):
        return "-"
    recs = json.load(open(path))["recordings"]
    return ", ".join("%s, %d iterations replayed" % (r["state"], r.get("iterations_replayed", 0)) for r in recs) or "none"
print("Host instructions per kernel launch (callgrind, fake driver, probe_app's second half: %d launches "
      "with a copy and a sync per 200), build %s\n" % (launches, commit))
print("| state | probe mode | all, per launch | over plain | nimble's own | recording |")
print("| --- | --- | --- | --- | --- | --- |")
for name, mode, total, own, summary in rows:
    per = int(total) / launches
    over = "-" if name == "plain" else "%+.0f" % ((int(total) - plain[mode]) / launches)
    print("| %s | %s | %.0f | %s | %.0f | %s |" % (name, mode, per, over, int(own) / launches, state(summary)))
print("\n\"nimble's own\": what the probe's calls into libnimble.so cost, less what libnimble.so's calls into "
      "the fake driver cost (scripts/callgrind_share.py). \"Over plain\" also counts the fake driver doing other "
      "work under replay (graph launches instead of kernel launches).")
path = os.path.join(out, "descriptor-counts")
rows = [line.rstrip("\n").split("|") for line in open(path)] if os.path.exists(path) else []
if rows:
    plain = int(rows[0][1])
    print("\nHost instructions per cuBLASLt descriptor call (tests/interposer/descriptor_probe, the real libcublasLt, "
          "the second half: %s calls)\n" % rows[0][2])
    print("| state | all, per call | over plain |")
    print("| --- | --- | --- |")
    for name, total, calls in rows:
        print("| %s | %.0f | %s |" % (name, int(total) / int(calls),
                                      "-" if name == "plain" else "%+.0f" % ((int(total) - plain) / int(calls))))
PY
