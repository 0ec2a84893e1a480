#!/usr/bin/env bash
# Copies the binaries a GPU check needs from ./build into ./.device-build (a
# few MiB, not the whole build tree), for machines that receive the working
# tree but build nothing: GPUDICT_BUILD_DIR=.device-build bash scripts/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .device-build
mkdir -p .device-build/tests/bench .device-build/examples/library
cp build/gpudict .device-build/
cp build/tests/gpudict_gpu_tests build/tests/gpudict_tests .device-build/tests/
# every benchmark tests/bench/CMakeLists.txt builds
find build/tests/bench -maxdepth 1 -type f -executable -name 'gpudict_*' -exec cp {} .device-build/tests/bench/ \;
cp build/examples/library/gpudict_host_api build/examples/library/gpudict_user_kernel .device-build/examples/library/
du -sh .device-build
