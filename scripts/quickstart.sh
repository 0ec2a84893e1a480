#!/usr/bin/env bash
# README command 1: install what is missing, build, run examples/quickstart.yaml
# (on the GPU when there is one, otherwise on the CPU reference with a notice).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/gpudict sorted-array examples/quickstart.yaml "$@"
