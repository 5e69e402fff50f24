#!/usr/bin/env bash
# The static device arena's figures (docs/GPU.md "Static device arena") for
# issue 22's LM at O2, compiled with --target cuda by one or two compilers:
#   benchmarks/gpu-arena.sh OUTDIR LAYERS [BEFORE_MSAMP_COMPILE]
# prints, per compiler, gpu_cost.json's managed_allocations, the arenas'
# sizes and buffers, the plan's lower bound and predicted_ms, and the
# memory report's step bytes (every buffer up to its dealloc). No GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh
out=$1 layers=$2 before=${3:-}
mkdir -p "$out"
PYTHONPATH=python "$MSAMP_PYTHON" -m msamp.graphs transformer-lm --layers "$layers" \
  --dim 768 --heads 12 --seq 1024 --batch 8 --ffn 3072 --vocab 50257 \
  -o "$out/lm$layers.mlir"
run() { # NAME COMPILER
  local dir="$out/lm$layers-$1"
  rm -rf "$dir"
  /usr/bin/time -f "%e s wall" "$2" "$out/lm$layers.mlir" --opt-level O2 \
    --target cuda -o "$dir" > /dev/null
  "$MSAMP_PYTHON" - "$1" "$dir" <<'PY'
import json, sys
name, d = sys.argv[1], sys.argv[2]
c = json.load(open(d + "/gpu_cost.json"))
r = json.load(open(d + "/memory_report.json")).get("peak", {})
keys = ["kernels", "library_calls", "host_syncs", "managed_allocations",
        "arena_bytes", "arena_peak_bytes", "arena_buffers",
        "host_arena_bytes", "host_arena_buffers", "predicted_ms"]
print(name, {k: c.get(k, "-") for k in keys},
      {"plan_buffers": r.get("buffers", "-"),
       "step_bytes": r.get("step_bytes", "-")})
PY
}
if [ -n "$before" ]; then run before "$before"; fi
run after build/bin/msamp-compile
