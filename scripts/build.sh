#!/usr/bin/env bash
# Configures and builds msamp into ./build (or $MSAMP_BUILD_DIR) with clang-22,
# lld and ccache, linking the MLIR tools against libMLIR.so. The project's
# Python (scripts/python-env.sh) is passed to CMake, which checks its packages
# and hands it to lit and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh
BUILD_DIR=${MSAMP_BUILD_DIR:-build}
# Paths below the checkout reach ccache relative, so that another clone (CI's
# fresh one) or worktree hits the objects this one compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
CUDA_ARGS=()
if [ -x /usr/local/cuda/bin/nvcc ]; then
  CUDA_ARGS+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
configured_python=""
if [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
  configured_python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")
fi
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld -DMLIR_LINK_MLIR_DYLIB=ON \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DPython3_EXECUTABLE="$MSAMP_PYTHON" \
    "${CUDA_ARGS[@]}"
elif [ "$configured_python" != "$MSAMP_PYTHON" ]; then
  # The build was configured with another interpreter: reconfigure, so that
  # lit and pytest never run with one the scripts did not set up.
  cmake -S . -B "$BUILD_DIR" -DPython3_EXECUTABLE="$MSAMP_PYTHON"
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
