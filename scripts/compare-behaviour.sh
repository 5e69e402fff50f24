#!/usr/bin/env bash
# Records what a behaviour-preserving refactoring must not change, for the
# benchmark LM (benchmarks/bench_train.py's and scripts/main-job.sh's model:
# 2 layers, dim 384) on the CPU backend at O0 and O2: the loss of every step,
# the SHA-256 of every tensor's data in the final checkpoint (the metadata
# holds the graph hash, which may change), and the number of `memref.copy`
# left in the O0 step after bufferization (state updated in place).
#
#   scripts/compare-behaviour.sh record before.txt   # on the old tree
#   scripts/compare-behaviour.sh record after.txt    # on the new tree
#   scripts/compare-behaviour.sh compare before.txt after.txt
#
# `compare` fails when any loss or tensor differs or the copy count grew.
# Compare records made on the same machine: the f32 sums are deterministic
# for one build and CPU, not across CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${MSAMP_BUILD_DIR:-build}
STEPS=${STEPS:-12}

record() {
  local out=$1
  source scripts/python-env.sh
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
  "$MSAMP_PYTHON" -m msamp.graphs transformer-lm --layers 2 --dim 384 --heads 6 \
    --seq 64 --batch 8 --ffn 1536 --vocab 256 --lr 3e-4 -o "$tmp/lm.mlir"
  "$MSAMP_PYTHON" examples/tiny-lm/make_data.py --vocab 256 --seq 64 --batch 8 \
    --batches 16 -o "$tmp/data.safetensors" >/dev/null
  : >"$out"
  for level in O0 O2; do
    "$BUILD/bin/msamp-compile" "$tmp/lm.mlir" --opt-level "$level" -o "$tmp/$level"
    "$BUILD/bin/msamp-run" "$tmp/$level" --steps "$STEPS" --seed 0 --quiet \
      --data "$tmp/data.safetensors" --log-json "$tmp/$level.jsonl" \
      --save "$tmp/$level.safetensors"
    "$MSAMP_PYTHON" - "$level" "$tmp/$level.jsonl" "$tmp/$level.safetensors" >>"$out" <<'PY'
import hashlib, json, struct, sys
level, log, ckpt = sys.argv[1:]
for line in open(log):
    r = json.loads(line)
    print(f"{level} loss step {r['step']} {r['loss']!r}")
with open(ckpt, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
for name in sorted(k for k in header if k != "__metadata__"):
    b, e = header[name]["data_offsets"]
    print(f"{level} tensor {name} {header[name]['dtype']} "
          f"{hashlib.sha256(data[b:e]).hexdigest()}")
PY
  done
  # The copies left in the O0 step once bufferized (as
  # test/Pipelines/cpu-lowering-lm.test inspects them).
  local copies
  copies=$("$BUILD/bin/msamp-opt" "$tmp/lm.mlir" --msamp-o0 -o - |
    "$BUILD/bin/msamp-opt" --msamp-lower-to-llvm \
      --mlir-print-ir-after=msamp-check-in-place-states -o /dev/null 2>&1 |
    grep -c 'memref.copy' || true)
  echo "O0 memref.copy $copies" >>"$out"
  echo "recorded $(wc -l <"$out") lines into $out"
}

compare() {
  local before=$1 after=$2 status=0
  if ! diff <(grep -v 'memref.copy' "$before") <(grep -v 'memref.copy' "$after"); then
    echo "FAIL: losses or checkpoint tensors differ"
    status=1
  fi
  local b a
  b=$(awk '/memref.copy/ {print $3}' "$before")
  a=$(awk '/memref.copy/ {print $3}' "$after")
  echo "O0 memref.copy: before $b, after $a"
  if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -gt "$b" ]; then
    echo "FAIL: more memref.copy than before"
    status=1
  fi
  [ $status = 0 ] && echo "OK: $(grep -c loss "$after") losses and" \
    "$(grep -c tensor "$after") tensors identical"
  return $status
}

case "${1:-}" in
record) record "$2" ;;
compare) compare "$2" "$3" ;;
*) echo "usage: $0 record FILE | compare BEFORE AFTER" >&2; exit 2 ;;
esac
