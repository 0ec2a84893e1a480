#!/usr/bin/env bash
# On a machine with a CUDA GPU: build (unless ./build already holds a build),
# run the GPU tests, every example verified on the GPU, the baseline
# benchmark and the sorted-array benchmark workload; logs go to $OUT (or
# ./gpu-check-logs) and a summary is printed last. Exit 0 only when every
# part passed (1 otherwise, 3 when the build failed).
#   bash scripts/gpu-check.sh              # everything
#   bash scripts/gpu-check.sh --sanitize   # also the GPU tests under compute-sanitizer memcheck and racecheck
#                                          # (GPUDICT_SANITIZE_TESTS='pattern,...' limits them: doctest test-case filters;
#                                          #  commas separate filters, so match a comma in a name with ?)
#   bash scripts/gpu-check.sh --quick      # skip the large benchmarks
# GPUDICT_TESTS='pattern,...' runs only those GPU test cases (doctest filters,
# as for GPUDICT_SANITIZE_TESTS).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/gpu-check-logs}"
mkdir -p "$out"
sanitize=0; quick=0
for a in "$@"; do
  case "$a" in
    --sanitize) sanitize=1 ;;
    --quick) quick=1 ;;
    *) echo "usage: $0 [--sanitize] [--quick]" >&2; exit 2 ;;
  esac
done
# GPUDICT_BUILD_DIR: a folder holding gpudict, tests/gpudict_gpu_tests,
# tests/bench/gpudict_baselines and examples/library/gpudict_* as the build
# lays them out (default ./build).
bdir="${GPUDICT_BUILD_DIR:-build}"
[ -x "$bdir/gpudict" ] || { bash scripts/setup.sh && bdir=build; } || exit 3
bin=$bdir/gpudict
export GPUDICT_BINARY="$PWD/$bin"  # the tests that run the binary use this copy
summary=()
failed=0  # parts that did not pass
# record RC LINE: one part's outcome (a non-zero RC counts it as failed) and its summary line.
record() { [ "$1" -eq 0 ] || failed=$((failed + 1)); summary+=("$2"); }

$bin info | tee "$out/info.txt"

# This script is for machines with a GPU: no device is a failure, not a skip.
GPUDICT_REQUIRE_GPU=1 $bdir/tests/gpudict_gpu_tests --force-colors=false --test-case="${GPUDICT_TESTS:-*}" \
  >"$out/gpu-tests.log" 2>&1
rc=$?
record $rc "gpu tests: exit $rc; $(grep -E '^\[doctest\] (test cases|assertions)' "$out/gpu-tests.log" | tr '\n' ' ')"

# The library examples (examples/library): programs that use gpudict as a library.
for example in gpudict_host_api gpudict_user_kernel; do
  exe=$bdir/examples/library/$example
  if [ -x "$exe" ]; then
    $exe >"$out/$example.txt" 2>&1
    rc=$?
    record $rc "library example $example: exit $rc; $(tail -1 "$out/$example.txt")"
  else
    record 1 "library example $example: not built ($exe)"
  fi
done

# Every example on every structure this build has (`gpudict info` lists
# them); an example a structure cannot run (exit 2: an operation or snapshots
# it does not support) counts as skipped, anything else non-zero as a failure.
fails=0; n=0; skipped=0
: >"$out/examples.csv"; : >"$out/examples.err"
built=$($bin info 2>/dev/null | sed -n 's/^structures: //p' | tr ',' '\n' | grep -v planned | tr -d ' ' | tr '\n' ' ')
[ -n "$built" ] || built="sorted-array lsm"
# Each example twice: at its own widths and with 64-bit keys and values.
for widths in "" "--key-type u64 --value-type u64"; do
for structure in $built; do
  for ex in examples/*.yaml; do
    case "$ex" in examples/bench-*) continue ;; esac
    what="$structure $ex${widths:+ $widths}"
    $bin $structure "$ex" $widths --format csv >>"$out/examples.csv" 2>"$out/example.err.tmp"
    rc=$?
    # Skipped: an operation, width or snapshot the structure lacks (exit 2),
    # or keys that are no graph's edges (a vertex id past --max-vertices, exit 3).
    if { [ $rc -eq 2 ] && grep -qE 'does not support|for a single key only|over a whole vertex block only|are not supported by' "$out/example.err.tmp"; } ||
       { [ $rc -eq 3 ] && grep -q 'beyond max_vertices' "$out/example.err.tmp"; }; then
      skipped=$((skipped + 1)); echo "skipped: $what: $(head -1 "$out/example.err.tmp")" >>"$out/examples.err"
      continue
    fi
    n=$((n + 1))
    cat "$out/example.err.tmp" >>"$out/examples.err"
    if [ $rc -ne 0 ]; then
      fails=$((fails + 1)); echo "FAILED (exit $rc): $what" >>"$out/examples.err"
    fi
  done
done
done
# The slab hash's other modes on the workload written for hash tables.
if echo " $built " | grep -q ' slabhash '; then
  for mode in multimap set; do
    for widths in "" "--key-type u64 --value-type u64"; do
      n=$((n + 1))
      if ! $bin slabhash examples/hash-quickstart.yaml --mode $mode $widths --format csv >>"$out/examples.csv" 2>>"$out/examples.err"; then
        fails=$((fails + 1)); echo "FAILED: slabhash --mode $mode examples/hash-quickstart.yaml $widths" >>"$out/examples.err"
      fi
    done
  done
fi
rm -f "$out/example.err.tmp"
record $fails "examples verified on the GPU ($(echo $built | tr ' ' ',')): $((n - fails)) of $n ($skipped skipped: unsupported operations)"

if [ $sanitize -eq 1 ]; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $bdir/tests/gpudict_gpu_tests --force-colors=false \
      --test-case="${GPUDICT_SANITIZE_TESTS:-*}" \
      >"$out/sanitizer-$tool.log" 2>&1
    rc=$?
    record $rc "compute-sanitizer $tool: exit $rc ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -1))"
  done
fi

if [ $quick -eq 0 ]; then
  $bdir/tests/bench/gpudict_baselines >"$out/baselines.txt" 2>&1
  rc=$?
  record $rc "baselines: exit $rc"
  $bin sorted-array examples/bench-sorted-array.yaml --no-verify --repeat 3 >"$out/bench-sorted-array.txt" 2>&1
  rc=$?
  record $rc "bench-sorted-array: exit $rc"
fi

echo
echo "==== baselines"; cat "$out/baselines.txt" 2>/dev/null
echo "==== bench-sorted-array"; cat "$out/bench-sorted-array.txt" 2>/dev/null
dev=$(grep -m1 '^device 0' "$out/info.txt" 2>/dev/null | cut -c1-120)
echo "==== summary (${dev:-no device})"
printf '%s\n' "${summary[@]}"
if [ $failed -eq 0 ]; then
  echo "gpu-check: every part passed"
else
  echo "gpu-check: $failed part(s) FAILED"
  exit 1
fi
