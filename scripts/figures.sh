#!/usr/bin/env bash
# Reproduces the papers' tables and figures on a GPU machine and gathers them
# where the results documents show them:
#
#   bash scripts/figures.sh [--quick] ITEM...
#
# ITEM is STRUCTURE or STRUCTURE:FIGURE, FIGURE being what the structure's
# script takes as --figure (--table for lsm); STRUCTURE alone runs all of it:
#   lsm       scripts/lsm_tables.py       2, 3, 4, cleanup, snapshot
#   btree     scripts/btree_figures.py    table3, 2, 3, 4, 5, public
#   slabhash  scripts/slabhash_figures.py 4, 5, 6, 7, alloc
#   mvbtree   scripts/mvbtree_figures.py  4.2, table4.1, 4.4, table4.2
#   graph     scripts/graph_figures.py    updates, build, incremental, vertex-delete, triangles, load-factor
# --quick runs smaller sizes (minutes in all, not the papers' sizes; the
# tables say which). Raw runs (workloads, JSON Lines) go to
# ${FIGURES_RAW:-figures-out}/STRUCTURE; each item's CSV, PNG and SVG and
# its Markdown tables (figures-FIGURE.md) are copied to
# ${FIGURES_DEST:-docs/figures}/STRUCTURE/. $FIGURES_ARGS is added to every
# script's arguments (e.g. '--repeat 5'). The binary: $GPUDICT_BINARY, else
# build/gpudict; slabhash's alloc item runs tests/bench/gpudict_slaballoc_bench
# from the same build when it is there.
# Without matplotlib the CSVs are still written; scripts/plot_csv.py draws
# them later.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
items=()
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "figures.sh: unknown option '$a' (--quick, --help)" >&2; exit 2 ;;
    *) items+=("$a") ;;
  esac
done
if [ ${#items[@]} -eq 0 ]; then
  echo "figures.sh: name what to run, e.g. 'bash scripts/figures.sh --quick mvbtree:4.2 graph' (--help)" >&2
  exit 2
fi

script_of() {
  case "$1" in
    lsm) echo lsm_tables ;;
    btree) echo btree_figures ;;
    slabhash) echo slabhash_figures ;;
    mvbtree) echo mvbtree_figures ;;
    graph) echo graph_figures ;;
    *) return 1 ;;
  esac
}

# The sizes of --quick, per script.
quick_args() {
  case "$1" in
    lsm) echo "--max-log2-n 22 --query-log2-n 20 --batch-logs 16,18,20" ;;
    btree) echo "--max-log2-n 22 --query-log2-n 22 --fig3-batches 16,18,20 --public-logs 20,22" ;;
    slabhash) echo "--fig4-log2-n 20 --max-log2-n 22 --fig7-log2-n 20" ;;
    mvbtree) echo "--fig42-min-log2 18 --max-log2-n 22 --t41-initial 1048576 --t42-initial 4194304 --concurrent-batch-log2 20 --sweep-batch-log2 18 --sweep-batches 2" ;;
    graph) echo "--scale 18 --batch-logs 16,18,20 --batches 2 --inc-scale 18 --inc-log2-edges 22 --vd-scale 20 --vd-log2-edges 22 --vd-batch-logs 16,18,20 --tri-scale 18 --tri-log2-edges 21 --tri-insert-log2 19 --lf-scale 18 --lf-degrees 8,16 --load-factors 0.5,1,2,5" ;;
  esac
}

python=python3
if ! python3 -c "import matplotlib" 2>/dev/null && [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  python=/usr/bin/python3
fi

raw_root=${FIGURES_RAW:-figures-out}
status=0
for item in "${items[@]}"; do
  structure=${item%%:*}
  figure=""
  [ "$item" != "$structure" ] && figure=${item#*:}
  if ! script=$(script_of "$structure"); then
    echo "figures.sh: unknown structure '$structure' (lsm, btree, slabhash, mvbtree, graph)" >&2
    exit 2
  fi
  raw="$raw_root/$structure"
  dest="${FIGURES_DEST:-docs/figures}/$structure"
  mkdir -p "$raw" "$dest"
  args=()
  if [ -n "$figure" ]; then
    if [ "$structure" = lsm ]; then args+=(--table "$figure"); else args+=(--figure "$figure"); fi
  fi
  if [ $quick -eq 1 ]; then
    read -r -a extra <<< "$(quick_args "$structure")"
    args+=("${extra[@]}")
  fi
  # SlabAlloc's own benchmark, where the build beside the binary has it.
  if [ "$structure" = slabhash ] && { [ -z "$figure" ] || [ "$figure" = alloc ]; }; then
    bin=${GPUDICT_BINARY:-build/gpudict}
    bench="$(dirname "$bin")/tests/bench/gpudict_slaballoc_bench"
    [ -x "$bench" ] && args+=(--alloc-bench "$bench")
  fi
  if [ -n "${FIGURES_ARGS:-}" ]; then
    read -r -a extra <<< "$FIGURES_ARGS"
    args+=("${extra[@]}")
  fi
  echo "== $structure ${figure:-(all)}: $python scripts/$script.py ${args[*]} --out $raw" >&2
  start=$(date +%s)
  if ! "$python" "scripts/$script.py" "${args[@]}" --out "$raw"; then
    echo "figures.sh: $structure ${figure:-(all)} failed" >&2
    status=1
    continue
  fi
  echo "== $structure ${figure:-(all)}: $(( $(date +%s) - start )) s" >&2
  # The tables and figures this item wrote (newer than its start), not the raw runs.
  find "$raw" -maxdepth 1 -type f \( -name '*.csv' -o -name '*.png' -o -name '*.svg' \) \
       ! -name '*.batches.csv' -newermt "@$(( start - 1 ))" -exec cp {} "$dest/" \;
  for md in figures.md tables.md; do
    if [ -f "$raw/$md" ] && [ "$(stat -c %Y "$raw/$md")" -ge "$start" ]; then cp "$raw/$md" "$dest/figures-${figure:-all}.md"; fi
  done
done
exit $status
