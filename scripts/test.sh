#!/usr/bin/env bash
# README command 2 (and CI): install what is missing, build, run the whole test
# suite. GPU tests report "Skipped" when the machine has no CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure
