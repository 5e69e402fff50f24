#!/usr/bin/env bash
# Configures and builds msamp into ./build (or $MSAMP_BUILD_DIR) with clang-22,
# lld and ccache, linking the MLIR tools against libMLIR.so.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MSAMP_BUILD_DIR:-build}
CUDA_ARGS=()
if [ -x /usr/local/cuda/bin/nvcc ]; then
  CUDA_ARGS+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld -DMLIR_LINK_MLIR_DYLIB=ON \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    "${CUDA_ARGS[@]}"
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
