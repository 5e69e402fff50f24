"""The project's one Python environment (scripts/python-env.sh,
cmake/MSAMPPython.cmake): the tests run in the interpreter the build was
configured with, that environment holds every pinned package itself (nothing
from system or user site packages), and lit refuses to run under any other
interpreter, so a missing install step cannot hide behind packages some other
Python happens to have.
"""

import os
import re
import subprocess
import sys
from importlib import metadata

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUIREMENTS = os.path.join(ROOT, "python", "requirements.txt")
BUILD = os.environ.get("MSAMP_BUILD_DIR", os.path.join(ROOT, "build"))
LIT = "/usr/lib/llvm-22/bin/lit"

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_python_env  # noqa: E402


def _cache_value(key):
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(re.escape(key) + r":[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                return m.group(1)
    raise KeyError(key)


def _prefix(python):
    return subprocess.run([python, "-c", "import sys; print(sys.prefix)"],
                          capture_output=True, text=True, check=True).stdout.strip()


needs_build = pytest.mark.skipif(
    not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")),
    reason="no configured build (MSAMP_BUILD_DIR)")


@needs_build
def test_tests_run_in_the_configured_interpreter():
    configured = _cache_value("Python3_EXECUTABLE")
    assert os.path.realpath(_prefix(configured)) == os.path.realpath(sys.prefix), (
        f"pytest runs in {sys.prefix}, the build was configured with {configured}")


def test_every_pinned_package_is_installed_at_its_pin():
    assert check_python_env.problems(check_python_env.read_pins(REQUIREMENTS)) == []


def test_pinned_packages_come_from_this_environment_only():
    # A package found in the base interpreter's or the user's site-packages
    # would be one the scripts did not install.
    prefix = os.path.realpath(sys.prefix)
    for name, _ in check_python_env.read_pins(REQUIREMENTS):
        where = os.path.realpath(str(metadata.distribution(name).locate_file("")))
        assert where.startswith(prefix + os.sep), f"{name} comes from {where}"
    if sys.prefix != sys.base_prefix:  # a virtualenv, as setup.sh makes
        import site
        assert not site.ENABLE_USER_SITE
        cfg = open(os.path.join(sys.prefix, "pyvenv.cfg")).read()
        assert re.search(r"include-system-site-packages\s*=\s*false", cfg), cfg


def test_requirements_are_exact_pins():
    pins = check_python_env.read_pins(REQUIREMENTS)
    names = [n.lower() for n, _ in pins]
    assert len(names) == len(set(names)), "a package pinned twice"
    for needed in ("numpy", "ml_dtypes", "pytest", "safetensors", "onnx", "torch",
                   "torch-mlir", "transformers", "timm"):
        assert needed in names


@needs_build
@pytest.mark.skipif(not os.path.exists(LIT), reason="Debian's lit not installed")
def test_lit_refuses_another_interpreter(tmp_path):
    # The interpreter this virtualenv was made from (or Debian's) is another
    # environment: lit must stop before running any test.
    other = [p for p in (getattr(sys, "_base_executable", ""), "/usr/bin/python3")
             if p and os.path.exists(p)
             and os.path.realpath(_prefix(p)) != os.path.realpath(sys.prefix)]
    assert other, "no second interpreter on this machine to check with"
    proc = subprocess.run([other[0], LIT, "-q", os.path.join(BUILD, "test", "Graphs")],
                          capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode != 0
    assert "lit runs under" in proc.stderr and "but the build was configured with" \
        in proc.stderr, proc.stderr
