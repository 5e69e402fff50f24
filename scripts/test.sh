#!/usr/bin/env bash
# The README's test command: set up, build, and run every test through ctest
# (lit + FileCheck, GoogleTest, pytest). Prints ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${MSAMP_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
