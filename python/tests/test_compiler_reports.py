"""The reports msamp-compile writes next to the manifest (docs/Interfaces.md 4):
Python reads memory_report.json and gemms.json and never runs the compiler
again; the planned peak (static buffer plan) and the measured one (session
buffers + the step's counted heap) agree.

Skipped, with the reason, when the C++ build cannot be found (ctest sets
MSAMP_BUILD_DIR).
"""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native, graphs, inspect  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

LEVELS = ("O0", "O2")
# Big enough that each buffer's 64-byte alignment slack (counted by the
# measurement, not by the plan) is noise.
MLP = dict(sizes=(64, 256, 256, 10), batch=32)
LM = dict(dim=64, heads=2, seq=16, batch=4, ffn=128, vocab=64, layers=2)


@pytest.fixture(scope="module")
def steps():
    out = {}
    for name, g in (("mlp", graphs.build("mlp", **MLP)),
                    ("lm", graphs.build("transformer-lm", **LM))):
        for level, step in msamp.compile_all(g, LEVELS).items():
            out[name, level] = step
    return out


@pytest.fixture
def no_compiler(monkeypatch):
    """Any attempt to run a tool (msamp-opt, msamp-compile) fails the test."""
    monkeypatch.setenv("MSAMP_OPT", "/nonexistent/msamp-opt")

    def refuse(*args, **kwargs):
        raise AssertionError(f"ran a subprocess: {args[0] if args else kwargs}")
    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)


def test_files_written_by_msamp_compile(steps):
    for (name, level), step in steps.items():
        report = json.loads((step.dir / "memory_report.json").read_text())
        assert list(report) == ["level", "params", "bytes_per_param",
                                "categories", "peak_bytes", "peak"]
        assert report["level"] == level
        assert set(report["categories"]) == {
            "weights", "master_weights", "weight_grads", "optimizer_m",
            "optimizer_v", "scaling_state", "other_state"}
        peak = report["peak"]
        assert report["peak_bytes"] == peak["session_bytes"] + peak["step_bytes"]
        # The session binds every state tensor: at least the state is there.
        state = sum(c["bytes"] for k, c in report["categories"].items()
                    if k != "weight_grads")
        assert peak["session_bytes"] >= state > 0
        assert peak["step_bytes"] > 0 and peak["buffers"] > 0 and peak["at"]
        gemms = json.loads((step.dir / "gemms.json").read_text())
        assert gemms["level"] == level and gemms["gemms"]


def test_python_reads_the_files_without_the_compiler(steps, no_compiler):
    step = steps["lm", "O2"]
    report = step.memory_report()
    assert report == json.loads((step.dir / "memory_report.json").read_text())
    assert step.planned_peak_bytes == report["peak_bytes"]
    kept = [g for g in step.gemms(explain=True) if not g.fp8]
    # The attention GEMMs stay in f32 at O2, and say why.
    assert kept and all(g.kind.startswith("attention") for g in kept)
    assert all("fp8-attention=true" in g.why for g in kept)
    assert all(g.why == "" for g in step.gemms() if not g.fp8)
    assert "attention_fwd" in inspect.gemm_table(step, explain=True)
    with step.session() as s:
        mem = s.memory_report()
        assert mem["grads_from"] == "compiler"
        assert mem["categories"]["weight_grads"]["bytes"] == \
            report["categories"]["weight_grads"]["bytes"]
        assert s.peak_bytes()["planned"] == report["peak_bytes"]


def test_o0_gemms_say_why(steps):
    gemms = steps["mlp", "O0"].gemms(explain=True)
    assert gemms and not any(g.fp8 for g in gemms)
    assert all(g.why == "level O0 runs every GEMM in f32" for g in gemms)


def test_directory_without_reports(steps, tmp_path):
    """A directory compiled before msamp-compile wrote the reports: a clear
    error naming the file, not a re-run of the compiler."""
    src = steps["mlp", "O0"].dir
    for name in ("manifest.json", "train_step.so", "train_step.mlir"):
        (tmp_path / name).write_bytes((src / name).read_bytes())
    old = msamp.compiler.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="memory_report.json not found"):
        old.memory_report()
    with pytest.raises(FileNotFoundError, match="gemms.json not found"):
        old.gemms()


@pytest.mark.parametrize("name", ("mlp", "lm"))
@pytest.mark.parametrize("level", LEVELS)
def test_planned_and_measured_peak_agree(steps, name, level):
    step = steps[name, level]
    with step.session() as s:
        assert s.peak_bytes()["step"] == 0  # nothing ran yet
        for k in range(3):
            s.synthetic_batch(seed=0, step=k + 1)
            s.step()
        peak = s.peak_bytes()
    plan = step.memory_report()["peak"]
    # The same buffers: the session binds exactly the step's arguments.
    assert peak["session"] == plan["session_bytes"]
    assert peak["step"] > 0
    assert peak["planned"] == pytest.approx(peak["measured"], rel=0.10), peak


# torch-mlir's export of a graph with dropout (test/Transforms/Inputs): its
# step has an rng_state ("rng.seed", 8 bytes), one of the two kinds of state
# the compiler and the session used to sort differently.
DROPOUT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "test", "Transforms", "Inputs", "dropout.mlir")


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_session_and_compiler_sort_state_alike(tmp_path, level):
    """Every category of the session's memory report (measured from its
    buffers) equals memory_report.json's, for a step with an rng_state and
    Adam moments: both apply msamp_memory_category_of."""
    step = msamp.compile(DROPOUT, level, out_dir=tmp_path / level,
                         optimizer="adamw")
    roles = {s["role"] for s in step.state}
    assert {"rng_state", "opt_state"} <= roles
    compiler = step.memory_report()["categories"]
    session = step.session().memory_report(include_grads=False)["categories"]
    assert list(session) == list(compiler)
    for cat, c in compiler.items():
        if cat == "weight_grads":
            continue  # inside the compiled step: the session cannot see them
        assert (session[cat]["dtype"], session[cat]["bytes"]) == \
            (c["dtype"], c["bytes"]), cat
    # other_state: the step counter and the seed, one i64 each.
    assert compiler["other_state"] == {"dtype": "i64", "bytes": 16,
                                       "bytes_per_param": pytest.approx(
                                           16 / step.memory_report()["params"])}
