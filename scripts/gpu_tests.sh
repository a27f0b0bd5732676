#!/usr/bin/env bash
# GPU checks for the recorder, run on the GPU machine from the repository root:
#   scripts/gpu_tests.sh            (logs and results go to $OUT, default /tmp/nimble-gpu)
# 1. ctest -L gpu (tests/apps: the branches DAG and CUPTI coverage);
# 2. records real programs with `nimble record`: ResNet-50 inference and a ResNet-18 training
#    step (default caching allocator and backend:cudaMallocAsync), CuPy, JAX, the automatic and
#    NVTX capture ranges; compares traced kernels with CUPTI's count for each;
# 3. overhead: an eager ResNet-50 loop plain vs preloaded-idle (3 runs each) and in record mode.
# The build comes from build-gpu (made on the developer machine and carried; configured there at
# /work/main, so that path is pointed at this checkout), or is configured here when absent (then
# nlohmann/CLI11/GTest headers must be in .deps, see docs/recording.md).
set -u
root=$(pwd)
OUT=${OUT:-/tmp/nimble-gpu}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu_tests.log") 2>&1
BUILD=${NIMBLE_BUILD_DIR:-build-gpu}
traces="$root/$BUILD/gpu-traces"
mkdir -p "$traces"
rm -f "$traces"/*.json
overhead="$traces/overhead.jsonl"
: > "$overhead"

section() { printf '\n===== %s =====\n' "$*"; }
# Stay inside the device tool's per-command limit: later steps are skipped past this many seconds.
DEADLINE=${NIMBLE_GPU_DEADLINE:-420}
in_time() {
  if [ "$SECONDS" -ge "$DEADLINE" ]; then echo "SKIPPED (time budget of ${DEADLINE}s used): $*"; return 1; fi
}
# Results so far, refreshed after every step so a cut-off run still reports what it did.
report() {
  python3 scripts/gpu/summarize.py "$traces" "$overhead" "$traces/launch_rate.jsonl" > "$OUT/summary.md" 2>&1
  tar czf "$OUT/traces.tar.gz" -C "$traces" . 2>/dev/null
}

section "machine"
date -u
nvidia-smi -L || echo "no nvidia-smi"
python3 - <<'PY' || true
import importlib
for name in ("torch", "torchvision", "cupy", "jax"):
    try:
        m = importlib.import_module(name)
        print(name, getattr(m, "__version__", "?"))
    except Exception as e:
        print(name, "unavailable:", e)
PY

section "build"
if [ -f "$BUILD/CMakeCache.txt" ] && grep -q "CMAKE_HOME_DIRECTORY:INTERNAL=/work/main" "$BUILD/CMakeCache.txt" \
   && [ ! -e /work/main/CMakeLists.txt ]; then
  mkdir -p /work && ln -sfn "$root" /work/main && echo "linked /work/main -> $root"
fi
if [ ! -x "$BUILD/lib/libnimble.so" ]; then
  echo "no carried build: configuring here"
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$root/.deps" \
        -DCMAKE_CUDA_ARCHITECTURES=90 && \
  cmake --build "$BUILD" -j"$(nproc)" --target nimble_preload nimble branches branches_check launch_rate || exit 1
fi
nimble="$root/$BUILD/bin/nimble"
preload="$root/$BUILD/lib/libnimble.so"
ls -la "$nimble" "$preload"

section "ctest -L gpu"
(cd "$BUILD" && timeout 120 ctest -L gpu --output-on-failure) 2>&1 | tee "$OUT/ctest_gpu.log"
for f in "$BUILD"/tests/interposer/apps/branches*.json; do
  case $f in *.bench.json) continue ;; esac  # bench results, not traces
  [ -f "$f" ] && cp "$f" "$traces/"
done
report

record() {  # record NAME [ENV=VALUE...] -- COMMAND...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  section "record $name"
  in_time "record $name" || return
  local start=$SECONDS
  env "${envs[@]}" NIMBLE_DEBUG=1 timeout 150 "$nimble" record -o "$traces/$name.json" "$@"
  echo "record $name: exit $? after $((SECONDS - start)) s"
  report
}

py="python3"
record resnet50_infer -- -- $py scripts/gpu/resnet50_infer.py
record resnet18_train -- -- $py scripts/gpu/resnet18_train.py
record cupy -- -- $py scripts/gpu/cupy_prog.py
record jax XLA_FLAGS=--xla_gpu_enable_command_buffer= XLA_PYTHON_CLIENT_PREALLOCATE=false -- -- $py scripts/gpu/jax_prog.py
record resnet50_infer_mallocasync PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- -- $py scripts/gpu/resnet50_infer.py
record resnet18_train_mallocasync PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- -- $py scripts/gpu/resnet18_train.py

keep() {  # keep FILE CONFIG JSON_LINE: append one measurement
  echo "$2: $3"
  echo "$3" | $py -c "import json,sys; r=json.loads(sys.stdin.read()); r['config']='$2'; print(json.dumps(r))" >> "$1" \
    || echo "(not a measurement)"
}

section "overhead: host cost of one launch (empty kernel)"
rate="$root/$BUILD/tests/interposer/apps/launch_rate"
launches="$traces/launch_rate.jsonl"
: > "$launches"
for round in 1 2 3 4 5; do
  in_time "launch rate round $round" || break
  keep "$launches" plain "$(timeout 60 "$rate" | tail -1)"
  keep "$launches" preload-idle "$(LD_PRELOAD="$preload" timeout 60 "$rate" | tail -1)"
done

section "overhead: eager ResNet-50 batch 1 (CPU-bound: the worst case for per-call costs)"
export ITERATIONS=600
for round in 1 2 3 4 5; do
  in_time "overhead round $round" || break
  keep "$overhead" plain "$(timeout 120 $py scripts/gpu/overhead.py | tail -1)"
  keep "$overhead" preload-idle "$(LD_PRELOAD="$preload" timeout 120 $py scripts/gpu/overhead.py | tail -1)"
  if [ "$round" -le 2 ]; then
    keep "$overhead" record "$(LD_PRELOAD="$preload" NIMBLE_MODE=record NIMBLE_OUTPUT="$traces/overhead_record.json" \
                   timeout 120 $py scripts/gpu/overhead.py | tail -1)"
  fi
  report
done
unset ITERATIONS

record resnet18_train_nvtx NVTX_RANGE=train_step -- --capture-range nvtx:train_step -- $py scripts/gpu/resnet18_train.py
record resnet50_auto ITERATIONS=40 -- --capture-range auto -- $py scripts/gpu/overhead.py

section "library attribution: does libtorch_cuda call cuBLAS/cuDNN through its PLT?"
in_time "library attribution check" && $py - <<'PY' || true
import os, subprocess, torch
lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so")
try:
    out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True).stdout
    for name in ("cublasLtMatmul", "cublasGemmEx", "cublasSgemm_v2", "cudnnBackendExecute"):
        print(name, "imported" if f" {name}" in out else "not imported")
except FileNotFoundError:
    print("nm not available")
PY

section "summary"
report
cat "$OUT/summary.md"
ls -la "$OUT"
echo "total ${SECONDS}s"
