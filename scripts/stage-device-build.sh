#!/usr/bin/env bash
# Copies the binaries a GPU check needs from ./build into ./.device-build (a
# few MiB, not the whole build tree), for machines that receive the working
# tree but build nothing: GPUDICT_BUILD_DIR=.device-build bash scripts/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .device-build
mkdir -p .device-build/tests/bench
cp build/gpudict .device-build/
cp build/tests/gpudict_gpu_tests build/tests/gpudict_tests .device-build/tests/
cp build/tests/bench/gpudict_baselines build/tests/bench/gpudict_slaballoc_bench build/tests/bench/gpudict_atomic_rate \
  build/tests/bench/gpudict_sort_tiles \
  .device-build/tests/bench/
du -sh .device-build
