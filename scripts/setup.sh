#!/usr/bin/env bash
# Installs what msamp needs on a fresh Debian 12 machine (idempotent: a second
# run checks and returns in a few seconds).
#   - Debian: LLVM/MLIR 22, clang-22 + lld, ninja, ccache, GoogleTest, OpenBLAS,
#     OpenMPI, nlohmann-json, yaml-cpp (Accelerate recipes), protobuf (ONNX
#     importer), libclang-rt-22-dev (libFuzzer), libonnx-testdata (ONNX node
#     tests), valgrind (the parser regression tests run the tools under it),
#     python3-venv (the CUDA 13 toolkit is expected in /usr/local/cuda when
#     present; it is optional).
#   - PyPI: every package of python/requirements.txt (pinned there), into one
#     virtualenv, .venv/ of the checkout, made from the `python3` on PATH
#     without system site packages; or into $MSAMP_PYTHON's environment when
#     that is set (scripts/python-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh

APT_PACKAGES=(
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  ninja-build cmake ccache libzstd-dev libedit-dev libcurl4-openssl-dev
  libgtest-dev libopenblas-dev nlohmann-json3-dev libyaml-cpp-dev
  libopenmpi-dev openmpi-bin
  libprotobuf-dev protobuf-compiler libclang-rt-22-dev libonnx-testdata
  valgrind python3-venv
)

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

if [ "$MSAMP_PYTHON" = "$MSAMP_VENV/bin/python" ] && ! "$MSAMP_PYTHON" -c "" 2>/dev/null; then
  BASE=$(command -v python3)
  echo "setup: creating the virtualenv $MSAMP_VENV from $BASE"
  rm -rf "$MSAMP_VENV"
  "$BASE" -m venv "$MSAMP_VENV"
fi
if ! "$MSAMP_PYTHON" scripts/check_python_env.py --quiet; then
  echo "setup: installing python/requirements.txt into $("$MSAMP_PYTHON" -c 'import sys; print(sys.prefix)')"
  "$MSAMP_PYTHON" -m pip install -q --disable-pip-version-check \
    -r python/requirements.txt
  "$MSAMP_PYTHON" scripts/check_python_env.py
fi
echo "setup: done (Python: $MSAMP_PYTHON)"
