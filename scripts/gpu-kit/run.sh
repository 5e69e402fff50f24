#!/usr/bin/env bash
# The GPU kit's one command (docs/GPU.md): validates and times msamp on this
# host's GPU and writes REPORT_DIR/report.json and REPORT_DIR/report.txt.
#
#   ./run.sh REPORT_DIR
#
# Needs bash and a python3 (the host's; $MSAMP_KIT_PYTHON picks another);
# everything else is in this folder. Exit status: 0 when every check that
# could run passed (also on a host without a GPU, which the report says),
# 1 when a check failed, 2 for a bad command line.
set -euo pipefail
KIT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -ne 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 REPORT_DIR" >&2
  exit 2
fi
PY=${MSAMP_KIT_PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "run.sh: no python3 on PATH (set MSAMP_KIT_PYTHON); it writes the report" >&2
  exit 1
fi
exec "$PY" "$KIT/run.py" "$KIT" "$1"
