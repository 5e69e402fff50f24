#!/usr/bin/env bash
# One-command self-test of the CUDA backend, for users with an sm_89/sm_90
# GPU (docs/RuntimeABI.md, "CUDA backend"):
#
#   scripts/gpu-selftest.sh
#
#  1. configures (if needed) and builds only what the CUDA backend needs:
#     libmsamp_runtime, its CUDA plugin, the CUDA tests and the GEMM
#     benchmark;
#  2. runs the CUDA tests (the GPU tests against the CPU reference, plus the
#     device-free table/planner/arithmetic tests), the compiler's GPU target
#     end to end (MSAMPCudaStepTests: whole train steps compiled with
#     msamp-compile --target cuda, generated PTX kernels, against the CPU)
#     and the PTX assembly checks, and prints one table row per test with
#     its result and time;
#  3. on a GPU, runs benchmarks/cuda_gemm_bench.cu: FP8 (fast and split
#     accumulation) and BF16 cuBLASLt GEMMs of the same shapes, in the same
#     run, through the runtime ABI, in TFLOP/s.
#
# Without a usable GPU it says so, lists the skipped tests and exits 0.
# Exits 1 if any test fails.
#
# Environment:
#   MSAMP_BUILD_DIR          build directory (default: build)
#   MSAMP_SELFTEST_JOBS      parallel build jobs (default: nproc)
#   MSAMP_SELFTEST_NO_BUILD  1: use the existing build as is
#   MSAMP_SELFTEST_SHAPES    GEMM shapes, e.g. 4096x4096x4096,8192x8192x8192
#   MSAMP_SELFTEST_ITERS     timed iterations per GEMM (default 20)
#   MSAMP_CUDA_DEVICE        which GPU the backend uses (default 0)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${MSAMP_BUILD_DIR:-build}
JOBS=${MSAMP_SELFTEST_JOBS:-$(nproc)}
NVCC=${CUDACXX:-/usr/local/cuda/bin/nvcc}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/msamp-gpu-selftest.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

say() { printf '%s\n' "$*"; }

# ---- 1. build -------------------------------------------------------------
if [ "${MSAMP_SELFTEST_NO_BUILD:-0}" != 1 ]; then
  if [ ! -x "$NVCC" ]; then
    say "gpu-selftest: no nvcc at $NVCC (set CUDACXX); the CUDA backend cannot be built"
    exit 1
  fi
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    say "== configuring $BUILD_DIR"
    cmake -G Ninja -S . -B "$BUILD_DIR" \
      -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DLLVM_USE_LINKER=lld -DMLIR_LINK_MLIR_DYLIB=ON \
      -DCMAKE_CUDA_COMPILER="$NVCC" >"$OUT/configure.log" 2>&1 ||
      { cat "$OUT/configure.log"; exit 1; }
  fi
  if ! grep -q 'msamp_runtime_cuda' "$BUILD_DIR/build.ninja"; then
    say "gpu-selftest: $BUILD_DIR was configured without CUDA (MSAMP_HAVE_CUDA is OFF);"
    say "  reconfigure with -DCMAKE_CUDA_COMPILER=$NVCC"
    exit 1
  fi
  say "== building the CUDA backend, the compiler, the tests and the GEMM benchmark"
  build_start=$(date +%s)
  cmake --build "$BUILD_DIR" -j "$JOBS" --target \
    msamp_runtime msamp_runtime_cuda MSAMPCudaTests MSAMPCudaHostTests \
    MSAMPNcclTableTests MSAMPCudaStepTests msamp-compile msamp-run msamp-opt \
    cuda_gemm_bench \
    >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  say "   built in $(( $(date +%s) - build_start )) s"
fi

TESTS_DIR="$BUILD_DIR/unittests/CUDA"
BENCH="$BUILD_DIR/bin/cuda_gemm_bench"
for exe in "$TESTS_DIR/MSAMPCudaTests" "$TESTS_DIR/MSAMPCudaHostTests" \
           "$TESTS_DIR/MSAMPNcclTableTests" "$TESTS_DIR/MSAMPCudaStepTests" \
           "$BENCH"; do
  [ -x "$exe" ] || { say "gpu-selftest: $exe is missing; build first"; exit 1; }
done

# ---- 2. device ------------------------------------------------------------
say "== device"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total \
    --format=csv,noheader 2>/dev/null | sed 's/^/   /' || true
else
  say "   nvidia-smi not found"
fi

# ---- 3. tests -------------------------------------------------------------
say "== tests"
status=0
for exe in MSAMPNcclTableTests MSAMPCudaHostTests MSAMPCudaTests \
           MSAMPCudaStepTests; do
  "$TESTS_DIR/$exe" --gtest_output="json:$OUT/$exe.json" \
    >"$OUT/$exe.log" 2>&1 || status=1
  if [ ! -s "$OUT/$exe.json" ]; then
    say "gpu-selftest: $exe did not run to completion:"
    tail -30 "$OUT/$exe.log"
    exit 1
  fi
done

python3 - "$OUT" <<'EOF'
import json, sys, os
out = sys.argv[1]
rows, counts, skipped, reasons = [], {"PASS": 0, "FAIL": 0, "SKIP": 0}, [], set()
for exe in ("MSAMPNcclTableTests", "MSAMPCudaHostTests", "MSAMPCudaTests",
            "MSAMPCudaStepTests"):
    with open(os.path.join(out, exe + ".json")) as f:
        report = json.load(f)
    for suite in report.get("testsuites", []):
        for test in suite.get("testsuite", []):
            name = suite["name"] + "." + test["name"]
            if test.get("failures"):
                result = "FAIL"
            elif test.get("result") == "SKIPPED":
                result = "SKIP"
                skipped.append(name)
            else:
                result = "PASS"
            counts[result] += 1
            ms = float(test.get("time", "0s").rstrip("s")) * 1000.0
            rows.append((exe, name, result, ms))
width = max(len(r[1]) for r in rows)
print(f"   {'binary':<20} {'test':<{width}} {'result':<6} {'ms':>9}")
for exe, name, result, ms in rows:
    print(f"   {exe:<20} {name:<{width}} {result:<6} {ms:9.1f}")
print(f"   gtest: {counts['PASS']} passed, {counts['FAIL']} failed, "
      f"{counts['SKIP']} skipped")
# gtest's JSON has no skip message; the log has it.
for exe in ("MSAMPCudaTests",):
    with open(os.path.join(out, exe + ".log")) as f:
        for line in f:
            if line.startswith("no CUDA device ("):
                reasons.add(line.strip())
for r in sorted(reasons):
    print(f"   skip reason: {r}")
with open(os.path.join(out, "skipped.txt"), "w") as f:
    f.write("\n".join(skipped))
with open(os.path.join(out, "counts.txt"), "w") as f:
    f.write(f"{counts['PASS']} {counts['FAIL']} {counts['SKIP']}\n")
EOF

# PTX assembly for sm_89/sm_90 and the runtime's library dependencies
# (lit; needs no GPU).
LIT=${LLVM_EXTERNAL_LIT:-/usr/lib/llvm-22/bin/lit}
if [ -x "$LIT" ] && [ -f "$BUILD_DIR/test/lit.site.cfg.py" ]; then
  if "$LIT" -q "$BUILD_DIR/test/CUDA" >"$OUT/lit.log" 2>&1; then
    say "   lit test/CUDA (ptxas sm_89/sm_90 of the runtime's and the compiler's kernels, runtime dependencies): PASS"
  else
    say "   lit test/CUDA: FAIL"
    cat "$OUT/lit.log"
    status=1
  fi
fi

read -r passed failed skipped <"$OUT/counts.txt"
[ "$failed" = 0 ] || status=1

# ---- 4. benchmark -----------------------------------------------------------
if grep -q '^\[  SKIPPED \] CudaCast' "$OUT/MSAMPCudaTests.log"; then
  say "== no usable CUDA device: the GPU tests were skipped and the GEMM"
  say "   benchmark is not run; the device-free tests ran. Skipped:"
  sed 's/^/   - /' "$OUT/skipped.txt"
  echo
  if [ "$status" = 0 ]; then
    say "gpu-selftest: OK without a GPU ($passed passed, $skipped skipped)"
    exit 0
  fi
  say "gpu-selftest: FAILED ($failed failed)"
  exit 1
fi

say "== FP8 vs BF16 GEMM (cuBLASLt through msamp_rt_gemm, same run)"
BENCH_ARGS=(--iters "${MSAMP_SELFTEST_ITERS:-20}")
[ -n "${MSAMP_SELFTEST_SHAPES:-}" ] && BENCH_ARGS+=(--shapes "$MSAMP_SELFTEST_SHAPES")
if "$BENCH" "${BENCH_ARGS[@]}" >"$OUT/bench.log" 2>&1; then
  grep -v '^RESULT' "$OUT/bench.log" | sed 's/^/   /'
else
  sed 's/^/   /' "$OUT/bench.log"
  say "   benchmark FAILED"
  status=1
fi

if [ "$status" = 0 ]; then
  say "gpu-selftest: OK ($passed passed, $failed failed, $skipped skipped)"
else
  say "gpu-selftest: FAILED ($passed passed, $failed failed, $skipped skipped)"
fi
exit "$status"
