#!/usr/bin/env bash
# Lowers mlir-interop.mlir with mlir-opt, runs it with mlir-runner against
# libmsamp_runtime.so and FileChecks the output.
# Usage: run-mlir-interop.sh MLIR_OPT MLIR_RUNNER FILECHECK LLVM_LIB_DIR RUNTIME_SO INPUT
set -euo pipefail
opt=$1 runner=$2 filecheck=$3 libdir=$4 runtime=$5 input=$6
"$opt" "$input" --one-shot-bufferize=bufferize-function-boundaries \
  --expand-strided-metadata --convert-arith-to-llvm \
  --finalize-memref-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
  --reconcile-unrealized-casts |
  "$runner" -e main -entry-point-result=void \
    -shared-libs="$runtime,$libdir/libmlir_c_runner_utils.so,$libdir/libmlir_runner_utils.so" |
  "$filecheck" "$input"
