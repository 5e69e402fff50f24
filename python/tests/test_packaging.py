"""`pip install ./python` gives a working package that finds the C++ build.

The package is installed (pip --target, no dependencies: numpy and
safetensors are already here) from a copy of python/ placed in a fake
checkout whose build/ is a link to the real build. The installed copy is then
imported with nothing of the source tree on sys.path and no MSAMP_BUILD_DIR,
so it must find the tools and libraries through the checkout pip recorded in
direct_url.json - the path a user gets after `pip install ./python`.
The copy keeps the real source tree free of setuptools' build/ and
egg-info directories.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PYTHON_DIR)

from msamp import _native  # noqa: E402

_OK, _WHY = _native.available()


@pytest.mark.skipif(not _OK, reason=_WHY)
def test_pip_install_finds_the_build(tmp_path):
    build = _native.find_library_dir().parent
    repo = tmp_path / "repo"
    shutil.copytree(PYTHON_DIR, repo / "python",
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                  "*.egg-info"))
    (repo / "CMakeLists.txt").write_text("# stands for the msamp checkout\n")
    os.symlink(build, repo / "build")
    target = tmp_path / "site"
    args = [sys.executable, "-m", "pip", "install", "-q", "--no-deps",
            "--disable-pip-version-check", "--target", str(target), str(repo / "python")]
    if importlib.util.find_spec("wheel") and importlib.util.find_spec("setuptools"):
        args.insert(4, "--no-build-isolation")  # no download needed
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / "msamp" / "graphs" / "__init__.py").is_file()

    script = textwrap.dedent("""
        import numpy as np
        import msamp
        from msamp import _native, graphs
        assert msamp.__file__.startswith(%r), msamp.__file__
        print("libs", _native.find_library_dir())
        step = msamp.compile(graphs.build("mlp"), "O0")
        with step.session() as s:
            loss = s.step({"x": np.ones((4, 3)), "y": np.zeros((4, 2))})
        print("loss", loss)
    """) % str(target)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MSAMP_BUILD_DIR", "MSAMP_COMPILE", "MSAMP_OPT")}
    env["PYTHONPATH"] = str(target)
    # Not from the repository root: the source tree must not be importable.
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"libs {repo / 'build' / 'lib'}" in proc.stdout
    assert "loss " in proc.stdout
