#!/usr/bin/env bash
# Builds the GPU kit (docs/GPU.md): a self-contained folder that validates
# and times msamp on a CUDA host with only the driver, the CUDA runtime
# libraries and Python installed.
#
#   scripts/gpu-kit.sh OUT_DIR [--quick]
#
# OUT_DIR (replaced) receives
#   bin/    msamp-run, msamp-cuda-libs, cuda_gemm_bench, cuda_runtime_bw_bench
#   lib/    libmsamp_runtime.so (the kit variant: OpenBLAS static, no MPI),
#           libmsamp_runtime_cuda.so, libmsamp_session.so, and the C++
#           runtime they were built with (libstdc++, libgcc_s)
#   tests/  the CUDA test binaries (device-free ones included)
#   steps/  precompiled train steps (msamp-compile --target cuda --chip
#           sm_90) with their PTX assembled by ptxas into cubin/ and their
#           CPU reference losses (steps.json), and the GEMM shapes to time
#   run.sh, run.py, kit.json
# Every ELF file's RUNPATH is rewritten to $ORIGIN-relative paths and
# checked: nothing may need a library outside the kit other than glibc's and
# the CUDA libraries the runtime searches for. The kit must stay < 60 MiB.
#
# --quick leaves out GPT-2-small (12 layers, d 768, vocab 50257, seq 1024),
# whose compilation and CPU reference take minutes; CI builds the quick kit.
#
# Environment: MSAMP_BUILD_DIR (default build), MSAMP_PYTHON (the project's
# Python, scripts/python-env.sh), CUDA_HOME (ptxas; default /usr/local/cuda),
# MSAMP_KIT_JOBS (build jobs, default 2), MSAMP_KIT_NO_BUILD=1 (use the
# build directory as it is).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/python-env.sh"
BUILD=$(cd "${MSAMP_BUILD_DIR:-$ROOT/build}" 2>/dev/null && pwd) || {
  echo "gpu-kit: no build directory ${MSAMP_BUILD_DIR:-$ROOT/build}; run scripts/build.sh first" >&2
  exit 1
}
QUICK=0
OUT=""
for arg in "$@"; do
  case "$arg" in
  --quick) QUICK=1 ;;
  -*) echo "gpu-kit: unknown option $arg" >&2; exit 2 ;;
  *) [ -z "$OUT" ] || { echo "gpu-kit: one OUT_DIR only" >&2; exit 2; }
     OUT=$arg ;;
  esac
done
[ -n "$OUT" ] || { echo "usage: scripts/gpu-kit.sh OUT_DIR [--quick]" >&2; exit 2; }
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[ -x "$PTXAS" ] || { echo "gpu-kit: no ptxas at $PTXAS (set CUDA_HOME)" >&2; exit 1; }
grep -q 'msamp_runtime_kit' "$BUILD/build.ninja" 2>/dev/null || {
  echo "gpu-kit: $BUILD has no CUDA backend or no static OpenBLAS (msamp_runtime_kit);" \
    "configure it with nvcc and libopenblas.a" >&2
  exit 1
}
[ -x "$MSAMP_PYTHON" ] || { echo "gpu-kit: no Python at $MSAMP_PYTHON (set MSAMP_PYTHON)" >&2; exit 1; }
ELF="$MSAMP_PYTHON $ROOT/scripts/kit_elf.py"
say() { printf 'gpu-kit: %s\n' "$*"; }

if [ "${MSAMP_KIT_NO_BUILD:-0}" != 1 ]; then
  say "building the kit's targets in $BUILD"
  cmake --build "$BUILD" -j "${MSAMP_KIT_JOBS:-2}" --target \
    msamp_runtime_kit msamp_runtime_cuda msamp_session msamp-run \
    msamp-compile msamp-cuda-libs cuda_gemm_bench cuda_runtime_bw_bench MSAMPCudaTests \
    MSAMPCudaHostTests MSAMPNcclTableTests MSAMPCudaLibrarySearchTests \
    MSAMPCudaStepTests MSAMPCudaSessionTests \
    MSAMPFakeCudaLib >/dev/null
fi

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
case "$OUT" in /|"$ROOT"|"$BUILD") echo "gpu-kit: refusing OUT_DIR=$OUT" >&2; exit 2 ;; esac
rm -rf "${OUT:?}"/*
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/tests" "$OUT/steps"

# put SRC DIR RUNPATH: copy, strip, point RUNPATH into the kit.
put() {
  local dest="$2/$(basename "$1")"
  cp "$1" "$dest"
  chmod u+w "$dest"
  strip --strip-unneeded "$dest"
  local info
  info=$($ELF show "$dest")
  if grep '^runpath ' >/dev/null <<<"$info"; then
    $ELF runpath "$dest" "$3"
  fi
}
put "$BUILD/kit-lib/libmsamp_runtime.so" "$OUT/lib" '$ORIGIN'
for lib in libmsamp_runtime_cuda.so libmsamp_session.so; do
  put "$BUILD/lib/$lib" "$OUT/lib" '$ORIGIN'
done
for exe in msamp-run msamp-cuda-libs cuda_gemm_bench cuda_runtime_bw_bench; do
  put "$BUILD/bin/$exe" "$OUT/bin" '$ORIGIN/../lib'
done
for exe in MSAMPCudaTests MSAMPCudaHostTests MSAMPNcclTableTests \
  MSAMPCudaLibrarySearchTests MSAMPCudaStepTests MSAMPCudaSessionTests; do
  put "$BUILD/unittests/CUDA/$exe" "$OUT/tests" '$ORIGIN/../lib'
done
put "$BUILD/unittests/CUDA/libMSAMPFakeCudaLib.so" "$OUT/tests" '$ORIGIN'
# The C++ runtime the kit was built with: a host's may be older.
for lib in libstdc++.so.6 libgcc_s.so.1; do
  src=$(ldd "$BUILD/bin/msamp-run" | awk -v l="$lib" '$1 == l {print $3}')
  [ -f "$src" ] || { echo "gpu-kit: cannot find $lib of msamp-run" >&2; exit 1; }
  cp -L "$src" "$OUT/lib/$lib"
done

# ---- precompiled steps -------------------------------------------------------
# name, model, level, steps, relative tolerance of the losses vs the CPU:
# O0 differs only in f32 summation order (cuBLASLt vs OpenBLAS, TF32 off)
# and libdevice vs libm; O2 can round an FP8 value on a boundary the other
# way, and the difference grows over steps.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/msamp-gpu-kit.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export MSAMP_CACHE_DIR="$TMP/cache"
PYTHONPATH="$ROOT/python" "$MSAMP_PYTHON" -m msamp.graphs transformer-lm \
  -o "$TMP/lm.mlir"
# An SGD step (SGD reads step and lr on the device: a CUDA graph too).
PYTHONPATH="$ROOT/python" "$MSAMP_PYTHON" -m msamp.graphs mlp --optimizer sgd \
  -o "$TMP/mlp-sgd.mlir"
GPT2=(--layers 12 --dim 768 --heads 12 --ffn 3072 --vocab 50257 --seq 1024 --batch 1)
STEPS=(
  "mlp-o0 $ROOT/test/Transforms/Inputs/mlp.mlir O0 5 1e-5"
  "mlp-o2 $ROOT/test/Transforms/Inputs/mlp.mlir O2 5 2e-2"
  "mlp-sgd-o2 $TMP/mlp-sgd.mlir O2 5 2e-2"
  "lm-o0 $TMP/lm.mlir O0 5 1e-5"
  "lm-o2 $TMP/lm.mlir O2 5 2e-2"
  # The step bufferized inline (--gpu-outline-tensors=false), the default
  # before issue 19's last round: both ways side by side on the device.
  "lm-o2-inline $TMP/lm.mlir O2 5 2e-2"
)
if [ "$QUICK" = 0 ]; then
  PYTHONPATH="$ROOT/python" "$MSAMP_PYTHON" -m msamp.graphs transformer-lm \
    "${GPT2[@]}" -o "$TMP/gpt2s.mlir"
  STEPS+=("gpt2s-o0 $TMP/gpt2s.mlir O0 2 1e-5" "gpt2s-o2 $TMP/gpt2s.mlir O2 2 2e-2"
    "gpt2s-o2-inline $TMP/gpt2s.mlir O2 2 2e-2")
fi
SEED=7
# The per-step losses of an msamp-run --log-json file, as a JSON list.
losses_of() {
  "$MSAMP_PYTHON" -c 'import json,sys; print(json.dumps([json.loads(l)["loss"] for l in open(sys.argv[1]) if l.strip()]))' "$1"
}
entries=()
for spec in "${STEPS[@]}"; do
  read -r name model level steps tol <<<"$spec"
  say "step $name: compiling for sm_90, assembling, CPU reference"
  dir="$OUT/steps/$name"
  flags=()
  case "$name" in *-inline) flags=(--gpu-outline-tensors=false) ;; esac
  "$BUILD/bin/msamp-compile" --target cuda --chip sm_90 --host-cpu x86-64-v3 --opt-level "$level" \
    "${flags[@]}" "$model" -o "$dir" >"$TMP/$name.compile.log" 2>&1 ||
    { cat "$TMP/$name.compile.log"; exit 1; }
  mkdir -p "$dir/cubin"
  for ptx in "$dir"/kernels/*.ptx; do
    cubin=$("$BUILD/bin/msamp-cuda-libs" --cubin-name "$ptx" 90)
    "$PTXAS" -arch=sm_90 "$ptx" -o "$dir/cubin/$cubin"
  done
  # The plugin finds a cubin by the hash of the PTX the step embeds: the
  # files must be that text byte for byte.
  "$MSAMP_PYTHON" - "$dir" <<'PY'
import glob, sys
so = open(sys.argv[1] + "/train_step.so", "rb").read()
for ptx in glob.glob(sys.argv[1] + "/kernels/*.ptx"):
    if open(ptx, "rb").read() + b"\0" not in so:
        sys.exit("gpu-kit: %s is not the PTX train_step.so embeds" % ptx)
PY
  rm -rf "$dir/kernels"
  "$BUILD/bin/msamp-run" "$model" --backend cpu --opt-level "$level" \
    --steps "$steps" --synthetic --seed "$SEED" --quiet \
    --log-json "$TMP/$name.jsonl" >"$TMP/$name.cpu.log" 2>&1 ||
    { cat "$TMP/$name.cpu.log"; exit 1; }
  timed=false
  # GPT-2-small, and the test LM at O2 both ways (its per-layer calls weigh
  # more in a small step: a pair for MSAMP_KIT_TIMING_ROUNDS).
  case "$name" in gpt2s-* | lm-o2 | lm-o2-inline) timed=true ;; esac
  # The compiler's prediction (gpu_cost.json), printed next to the timing.
  predicted=$("$MSAMP_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["predicted_ms"])' "$dir/gpu_cost.json")
  entries+=("{\"name\": \"$name\", \"level\": \"$level\", \"seed\": $SEED, \"tolerance\": $tol, \"timed\": $timed, \"predicted_ms\": $predicted, \"reference\": $(
    losses_of "$TMP/$name.jsonl")}")
done
(IFS=,; printf '[%s]\n' "${entries[*]}") | "$MSAMP_PYTHON" -m json.tool >"$OUT/steps/steps.json"

# ---- the compiled-step device tests' steps (MSAMPCudaStepTests) -------------
# The kit has no compiler: those tests run these, compiled ahead for both
# backends and named <graph's file name>-<level>-<backend>
# (unittests/CUDA/CompiledStepTest.cpp, stepFor). Their kernels are
# JIT-compiled from the PTX the step embeds.
UNIT=(
  "$ROOT/test/Transforms/Inputs/mlp.mlir O0" "$ROOT/test/Transforms/Inputs/mlp.mlir O2"
  "$TMP/lm.mlir O0" "$TMP/lm.mlir O2"
  "$ROOT/test/Codegen/GPU/Inputs/embedding-grad-step.mlir O0"
  "$ROOT/test/Codegen/GPU/Inputs/split-column-sum.mlir O0"
  "$ROOT/test/Codegen/GPU/Inputs/constant-table-step.mlir O0"
  "$ROOT/test/Tools/msamp-run/Inputs/computed-index.mlir O0"
)
for spec in "${UNIT[@]}"; do
  read -r model level <<<"$spec"
  stem=$(basename "$model" .mlir)
  for backend in cpu cuda; do
    dir="$OUT/steps/unit/$stem-$level-$backend"
    target=(--target cpu)
    [ "$backend" = cuda ] && target=(--target cuda --chip sm_90)
    say "unit-test step $stem-$level-$backend"
    "$BUILD/bin/msamp-compile" "${target[@]}" --host-cpu x86-64-v3 \
      --opt-level "$level" "$model" -o "$dir" >"$TMP/unit.log" 2>&1 ||
      { cat "$TMP/unit.log"; exit 1; }
    rm -rf "$dir/kernels"
  done
done

# ---- the multi-rank check: the test LM on 2 data-parallel ranks -------------
# On the GPU host the ranks meet through NCCL (one GPU each); the reference
# is the same 2-rank job on the CPU under Open MPI (the build's runtime
# links MPI). The steps are the replicated lm-o0/lm-o2 above (a manifest of
# world size 1 runs on any number of ranks).
MR_STEPS=3
mr_entries=()
if command -v mpirun >/dev/null 2>&1 &&
  # grep reads all of ldd's output: with pipefail, grep -q could end ldd by
  # SIGPIPE and fail the test at random.
  ldd "$BUILD/lib/libmsamp_runtime.so" | grep libmpi >/dev/null; then
  for spec in "lm-o0 O0 1e-5" "lm-o2 O2 2e-2"; do
    read -r name level tol <<<"$spec"
    say "multi-rank reference: $name on 2 ranks (mpirun, CPU)"
    OMPI_MCA_mpi_yield_when_idle=1 mpirun --allow-run-as-root --oversubscribe \
      --mca btl self,vader -np 2 "$BUILD/bin/msamp-run" "$TMP/lm.mlir" \
      --backend cpu --opt-level "$level" --steps "$MR_STEPS" --synthetic \
      --seed "$SEED" --quiet --log-json "$TMP/$name.mr.jsonl" \
      >"$TMP/$name.mr.log" 2>&1 || { cat "$TMP/$name.mr.log"; exit 1; }
    mr_entries+=("{\"step\": \"$name\", \"level\": \"$level\", \"ranks\": 2, \"seed\": $SEED, \"tolerance\": $tol, \"reference\": $(
      losses_of "$TMP/$name.mr.jsonl")}")
  done
else
  say "no mpirun with an MPI runtime here: the kit has no multi-rank reference"
fi
(IFS=,; printf '[%s]\n' "${mr_entries[*]}") | "$MSAMP_PYTHON" -m json.tool >"$OUT/steps/multi_rank.json"
# GEMM shapes to time: GPT-2-small's (M = batch x seq = 1024 tokens; the
# QKV, output, MLP up/down and vocabulary projections) and 8192^3.
printf '%s\n' '["1024x2304x768", "1024x768x768", "1024x3072x768",' \
  '"1024x768x3072", "1024x50257x768", "8192x8192x8192"]' >"$OUT/steps/gemm_shapes.json"

cp "$ROOT/scripts/gpu-kit/run.sh" "$ROOT/scripts/gpu-kit/run.py" "$OUT/"
chmod +x "$OUT/run.sh"

# ---- checks: dependencies, build paths, size --------------------------------
ALLOWED='^(libmsamp_runtime\.so|libmsamp_runtime_cuda\.so|libmsamp_session\.so|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|libcudart\.so\.[0-9]+|libcublasLt\.so\.[0-9]+)$'
glibc_min=0.0
while IFS= read -r -d '' f; do
  [ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue
  info=$($ELF show "$f")
  while read -r kind value; do
    if [ "$kind" = needed ] && ! [[ "$value" =~ $ALLOWED ]]; then
      echo "gpu-kit: ${f#$OUT/} needs $value, which neither the kit nor a CUDA host has" >&2
      exit 1
    fi
    if [ "$kind" = runpath ] && [[ "$value" != '$ORIGIN'* ]]; then
      echo "gpu-kit: ${f#$OUT/} keeps RUNPATH $value" >&2
      exit 1
    fi
  done <<<"$info"
  v=$(objdump -T "$f" | { grep -o 'GLIBC_[0-9][0-9.]*' || true; } | sed 's/GLIBC_//' | sort -V | tail -1)
  [ -z "$v" ] || glibc_min=$(printf '%s\n%s\n' "$glibc_min" "$v" | sort -V | tail -1)
done < <(find "$OUT" -type f ! -name "*.cubin" -print0)

commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$ROOT" status --porcelain 2>/dev/null)" ] || commit="$commit+dirty"
cuda_major=$(sed -n 's/^CUDAToolkit_VERSION_MAJOR:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
[ -n "$cuda_major" ] || cuda_major=$("$MSAMP_PYTHON" -c 'import re,sys; print(re.search(r"release (\d+)", sys.stdin.read()).group(1))' <<<"$("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version)")
torch_model=null
[ "$QUICK" = 1 ] || torch_model='{"layers": 12, "dim": 768, "heads": 12, "ffn": 3072, "vocab": 50257, "seq": 1024, "batch": 1}'
cat >"$OUT/kit.json" <<EOF
{"commit": "$commit", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "quick": $([ "$QUICK" = 1 ] && echo true || echo false),
 "glibc_min": "$glibc_min", "cuda_major": $cuda_major, "chip": "sm_90",
 "torch_model": $torch_model}
EOF
size=$(du -sb "$OUT" | cut -f1)
say "kit in $OUT: $((size / 1024)) KiB, needs glibc >= $glibc_min, CUDA $cuda_major"
if [ "$size" -ge $((60 * 1024 * 1024)) ]; then
  echo "gpu-kit: the kit is $size bytes, over the 60 MiB limit" >&2
  exit 1
fi
