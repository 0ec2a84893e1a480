#!/usr/bin/env bash
# Installs what is missing (Debian packages), then configures and builds gpudict
# in ./build. Used by quickstart.sh and test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-matplotlib: the experiment scripts' figures (scripts/gpudict_exp.py);
# libqhull-dev: the delaunay graph family (workloads/delaunay.cpp). Everything
# else builds and tests without them.
packages=(cmake g++ make libcli11-dev libfmt-dev libyaml-cpp-dev doctest-dev libqhull-dev python3 python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; break; fi
  done
fi
command -v nvcc >/dev/null 2>&1 || { echo "setup: nvcc not found: install the CUDA toolkit" >&2; exit 3; }

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${GPUDICT_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$jobs"
