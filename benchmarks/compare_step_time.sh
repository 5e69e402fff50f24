#!/bin/bash
# A/B step time of two builds on one compiled graph, for noisy shared hosts:
#
#   benchmarks/compare_step_time.sh GRAPH.mlir LEVEL N BUILD_A BUILD_B [OUTDIR]
#
# Compiles GRAPH at LEVEL with each build's msamp-compile, then N times runs
# the four combinations {A, B} msamp-compile x {A, B} msamp-run round-robin
# (so that the load of the moment hits all four alike) and prints each
# combination's median step time in ms, (t(--steps 12) - t(--steps 2)) / 10
# (startup excluded), with the N samples. Both builds must share a runtime
# ABI (the train_step.so of one is run by the other's msamp-run).
set -euo pipefail
GRAPH=$1 LEVEL=$2 N=$3 A=$4 B=$5
OUT=${6:-$(mktemp -d)}
for s in A B; do
  d=${!s}
  "$d/bin/msamp-compile" "$GRAPH" --opt-level "$LEVEL" -o "$OUT/$s-$LEVEL" >/dev/null
done
t() { # run-binary step-dir steps -> ms
  local s; s=$(date +%s%N)
  "$1" "$2" --steps "$3" --synthetic --quiet --seed 1
  echo $(( ($(date +%s%N) - s) / 1000000 ))
}
declare -A r
for _ in $(seq "$N"); do
  for so in A B; do
    for run in A B; do
      d=${!run}
      r[$so$run]+="$(( ($(t "$d/bin/msamp-run" "$OUT/$so-$LEVEL" 12) - $(t "$d/bin/msamp-run" "$OUT/$so-$LEVEL" 2)) / 10 )) "
    done
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
for k in AA BA AB BB; do
  # shellcheck disable=SC2086
  echo "$LEVEL compile=${k:0:1} run=${k:1:1}: median $(median ${r[$k]}) ms/step (samples: ${r[$k]})"
done
