#!/usr/bin/env bash
# The README's test command: set up, build, and run every test through ctest
# (lit + FileCheck, GoogleTest, pytest) with the project's one Python
# environment (scripts/python-env.sh). Prints ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
unset PYTHONPATH
ctest --test-dir "${MSAMP_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
