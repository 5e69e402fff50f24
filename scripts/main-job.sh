#!/usr/bin/env bash
# The README's main job: on a fresh machine, install, build, then compile and
# train a small GPT-style language model (2 layers, dim 384, 3.8M parameters)
# on a synthetic language, on the CPU backend, at O0 (f32) and O2 (FP8 GEMMs,
# FP16 weights, FP8 gradients, FP8/FP16 Adam states), printing the loss as it
# goes down and the two memory reports side by side.
#
#   scripts/main-job.sh                 # defaults: 120 steps per level
#   STEPS=300 scripts/main-job.sh
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${STEPS:-120}
OUT=${MSAMP_OUT:-out/main-job}
BUILD=${MSAMP_BUILD_DIR:-build}

scripts/setup.sh
scripts/build.sh
source scripts/python-env.sh
mkdir -p "$OUT"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"

echo "== generating the model and the data"
"$MSAMP_PYTHON" -m msamp.graphs transformer-lm --layers 2 --dim 384 --heads 6 --seq 64 \
  --batch 8 --ffn 1536 --vocab 256 --lr 3e-4 -o "$OUT/lm.mlir"
"$MSAMP_PYTHON" examples/tiny-lm/make_data.py --vocab 256 --seq 64 --batch 8 \
  --batches 64 -o "$OUT/data.safetensors"

for level in O0 O2; do
  echo "== compiling at $level"
  "$BUILD/bin/msamp-compile" "$OUT/lm.mlir" --opt-level "$level" -o "$OUT/lm-$level"
  "$BUILD/bin/msamp-opt" "$OUT/lm-$level/train_step.mlir" \
    --msamp-memory-report=format=json -o /dev/null > "$OUT/lm-$level/memory.json"
  echo "== training at $level on the CPU backend"
  "$BUILD/bin/msamp-run" "$OUT/lm-$level" --steps "$STEPS" --seed 0 \
    --data "$OUT/data.safetensors" --log-every 10 --log-json "$OUT/lm-$level/log.jsonl"
done

echo "== O3 on 4 data-parallel ranks: each rank's program and memory report"
for rank in 0 1 2 3; do
  "$BUILD/bin/msamp-opt" "$OUT/lm.mlir" --msamp-o3="world-size=4 rank=$rank" \
    --msamp-memory-report=format=json -o /dev/null > "$OUT/o3-rank$rank.json"
done

"$MSAMP_PYTHON" - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
reports = {lvl: json.load(open(f"{out}/lm-{lvl}/memory.json")) for lvl in ("O0", "O2")}
logs = {lvl: [json.loads(l) for l in open(f"{out}/lm-{lvl}/log.jsonl")] for lvl in reports}
print("\n== model state per parameter (from the compiled IR; %d params)" % reports["O0"]["params"])
print(f"{'category':<16}{'O0 dtype':>10}{'O0 B/param':>12}{'O2 dtype':>10}{'O2 B/param':>12}")
for cat in reports["O0"]["categories"]:
    a, b = reports["O0"]["categories"][cat], reports["O2"]["categories"][cat]
    print(f"{cat:<16}{a['dtype']:>10}{a['bytes_per_param']:>12.3f}{b['dtype']:>10}{b['bytes_per_param']:>12.3f}")
t0, t2 = reports["O0"]["bytes_per_param"], reports["O2"]["bytes_per_param"]
print(f"{'total':<16}{'':>10}{t0:>12.3f}{'':>10}{t2:>12.3f}   O2 = {t2 / t0:.2f} x O0")
o3 = [json.load(open(f"{out}/o3-rank{r}.json")) for r in range(4)]
per_rank = [r["bytes_per_param"] for r in o3]
print("O3, 4 ranks (FP8 weights, sharded FP16 masters and O2 states), per rank: "
      + ", ".join(f"{x:.3f}" for x in per_rank)
      + f"   max = {max(per_rank) / t0:.2f} x O0")
for lvl, log in logs.items():
    first = sum(r["loss"] for r in log[:5]) / 5
    last = sum(r["loss"] for r in log[-5:]) / 5
    print(f"{lvl}: loss {first:.3f} (first 5 steps) -> {last:.3f} (last 5 steps)")
PY
