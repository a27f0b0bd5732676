#!/usr/bin/env bash
# Builds what the GPU machine needs here and packs it into build-gpu/ (small enough to carry with
# the device tool): binaries, libnimble.so, the GPU test apps and ctest files, with build/ paths
# rewritten to build-gpu/. On the GPU machine, scripts/gpu_tests.sh links /work/main to the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)" --target nimble nimble_preload nimble_graph branches branches_check bench_check launch_rate run_loop
rm -rf build-gpu
cp -a build build-gpu
rm -f build-gpu/bin/*_tests build-gpu/bin/nimble-sched-bench build-gpu/lib/*.a
find build-gpu -name CMakeFiles -type d -prune -exec rm -rf {} +
find build-gpu -name '*.o' -delete
# Every path into build/, and build/ itself (DartConfiguration.tcl's BuildDirectory: with it, ctest
# in build-gpu/ ran the tests of a build/ left on the GPU machine, none, once one was there).
grep -rlE "$(pwd)/build(/|\$| )" build-gpu | xargs -r sed -i -E "s#$(pwd)/build(/|\$| )#$(pwd)/build-gpu\1#g"
du -sh build-gpu
