"""compile_all shares the CPUs between its concurrent msamp-compile runs
(issue 19): each gets -j (jobs // compiles) code generation threads instead
of every one using every core, and the step compiled with any -j is the same
object (msamp-compile's partitions do not depend on it).

Skipped with the reason when the C++ build cannot be found (ctest sets
MSAMP_BUILD_DIR).
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native, compiler, graphs  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)


def _recording_run(monkeypatch):
    calls = []
    real = compiler._run

    def run(args, what):
        calls.append([str(a) for a in args])
        return real(args, what)

    monkeypatch.setattr(compiler, "_run", run)
    return calls


def test_compile_all_splits_jobs_between_compiles(monkeypatch):
    calls = _recording_run(monkeypatch)
    steps = msamp.compile_all(graphs.build("mlp"), ("O0", "O2"), jobs=4)
    assert sorted(steps) == ["O0", "O2"]
    compiles = [c for c in calls if "--opt-level" in c]
    assert len(compiles) == 2
    assert all(c.count("-j2") == 1 for c in compiles), compiles


def test_compile_all_gives_each_compile_one_thread_at_least(monkeypatch):
    calls = _recording_run(monkeypatch)
    msamp.compile_all(graphs.build("mlp"), ("O0", "O1", "O2"), jobs=2)
    compiles = [c for c in calls if "--opt-level" in c]
    assert len(compiles) == 3
    assert all("-j1" in c for c in compiles), compiles


def test_threads_do_not_change_the_object(tmp_path):
    g = graphs.build("mlp")
    one = msamp.compile(g, "O2", out_dir=tmp_path / "j1", threads=1)
    two = msamp.compile(g, "O2", out_dir=tmp_path / "j2", threads=2)
    assert one is not None and two is not None
    so1 = (tmp_path / "j1" / "train_step.so").read_bytes()
    so2 = (tmp_path / "j2" / "train_step.so").read_bytes()
    assert so1 == so2
