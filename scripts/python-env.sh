# Sourced by the scripts: names the project's one Python interpreter.
#   MSAMP_PYTHON   an interpreter of your own environment (it must hold the
#                  packages of python/requirements.txt; setup.sh installs
#                  missing ones into it). Default: .venv/bin/python of the
#                  checkout, made by scripts/setup.sh.
# Every script, CMake (-DPython3_EXECUTABLE), lit's %python, pytest and the
# benchmarks use this interpreter and no other.
MSAMP_ROOT=${MSAMP_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
MSAMP_VENV=${MSAMP_VENV:-$MSAMP_ROOT/.venv}
MSAMP_PYTHON=${MSAMP_PYTHON:-$MSAMP_VENV/bin/python}
export MSAMP_PYTHON
# Nothing from the caller's environment may leak into the project's Python.
unset PYTHONHOME PYTHONUSERBASE
