#!/usr/bin/env bash
# Installs what msamp needs on a fresh Debian 12 machine (idempotent: a second
# run checks and returns in about a second).
#   - Debian: LLVM/MLIR 22, clang-22 + lld, ninja, ccache, GoogleTest, OpenBLAS,
#     OpenMPI, nlohmann-json, protobuf (ONNX importer), libclang-rt-22-dev
#     (libFuzzer), libonnx-testdata (ONNX node tests) (the CUDA 13 toolkit
#     is expected in /usr/local/cuda when present; it is optional).
#   - PyPI (into the `python3` on PATH): numpy, ml_dtypes, pytest, safetensors,
#     onnx (the ONNX importer's tests build their models with it).
set -euo pipefail

APT_PACKAGES=(
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  ninja-build cmake ccache libzstd-dev libedit-dev libcurl4-openssl-dev
  libgtest-dev libopenblas-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  libprotobuf-dev protobuf-compiler libclang-rt-22-dev libonnx-testdata
)
PIP_PACKAGES=(numpy ml_dtypes pytest safetensors onnx)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
fi

PY=${PYTHON:-python3}
if ! "$PY" -c "import numpy, ml_dtypes, pytest, safetensors, onnx" >/dev/null 2>&1; then
  echo "setup: installing Python packages: ${PIP_PACKAGES[*]}"
  "$PY" -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}"
fi
echo "setup: done"
