"""The Python package end to end: compile (msamp-compile), run (ctypes over
libmsamp_session), inspect.

Graphs come from msamp.graphs (no torch needed). Compiles are shared per
module (they dominate the run time) and happen concurrently. Skipped, with
the reason, when the C++ build cannot be found (ctest sets MSAMP_BUILD_DIR).
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native, checkpoint, data, graphs, inspect  # noqa: E402
from msamp.compiler import pipeline_options  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

LEVELS = ("O0", "O1", "O2")
TINY_LM = dict(dim=32, heads=2, seq=8, batch=2, ffn=64, vocab=32, layers=1)

# docs/Inputs.md 3: the smallest contract graph and its f64 losses.
EXAMPLE_INIT = {
    "fc1.weight": [[0.1, -0.2, 0.3], [0.0, 0.4, -0.1], [-0.3, 0.2, 0.1],
                   [0.5, -0.4, 0.2], [0.2, 0.1, -0.5]],
    "fc1.bias": [0.01, -0.02, 0.03, 0.0, 0.05],
    "fc2.weight": [[0.3, -0.1, 0.2, 0.4, -0.2], [-0.5, 0.2, 0.1, -0.3, 0.6]],
    "fc2.bias": [0.1, -0.1],
}
EXAMPLE_BATCH = {"x": [[1, 2, 3], [0.5, -1, 2], [-1, 0, 1], [2, 1, -1]],
                 "y": [[1, 0], [0, 1], [0.5, 0.5], [-1, 2]]}
EXAMPLE_LOSSES = [1.023226, 0.939916, 0.861571]
EXAMPLE_FC2 = [[0.27087, -0.129981, 0.229978, 0.370056, -0.229931],
               [-0.470005, 0.229943, 0.129935, -0.270031, 0.629811]]


@pytest.fixture(scope="module")
def mlp():
    g = graphs.build("mlp")
    return g, msamp.compile_all(g, LEVELS)


@pytest.fixture(scope="module")
def lm():
    g = graphs.build("transformer-lm", **TINY_LM)
    return g, msamp.compile_all(g, LEVELS)


def _example_params():
    return {k: np.array(v, np.float32) for k, v in EXAMPLE_INIT.items()}


# ---- compile ---------------------------------------------------------------

def test_pipeline_options_spelling():
    assert pipeline_options(fp8_format="hybrid", amax_history_len=1024,
                            warmup=False, fp8_attention=True, margin=None) == \
        "fp8-format=hybrid amax-history-len=1024 warmup=false fp8-attention=true"
    with pytest.raises(ValueError):
        pipeline_options(exclude="a b")


def test_compile_accepts_graph_text_and_path(tmp_path, mlp):
    g, _ = mlp
    path = tmp_path / "mlp.mlir"
    path.write_text(g.text)
    for source in (str(path), path, g.text):
        step = msamp.compile(source, "O0", out_dir=tmp_path / "out")
        assert step.level == "O0"
        assert step.params == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
        assert {"input.mlir", "manifest.json", "train_step.mlir",
                "train_step.so"} <= set(os.listdir(step.dir))


def test_compile_errors_are_clear():
    with pytest.raises(ValueError, match="opt_level must be one of O0, O1, O2, O3"):
        msamp.compile(graphs.build("mlp"), "O4")
    with pytest.raises(msamp.CompileError, match="msamp-compile failed"):
        msamp.compile("module {\n func.func @f() { return }\n}\n", "O0")


def test_compile_tells_text_from_paths(tmp_path):
    # One-line MLIR text is text, not a file name (issue 16); a name that is
    # neither an existing file nor MLIR says so.
    with pytest.raises(msamp.CompileError,
                       match="neither a forward_backward graph"):
        msamp.compile("module {}", "O0", out_dir=tmp_path / "out")
    assert (tmp_path / "out" / "input.mlir").read_text() == "module {}"
    with pytest.raises(FileNotFoundError, match="no such file, nor MLIR text"):
        msamp.compile(str(tmp_path / "missing.mlir"), "O0")


def test_compile_reports_malformed_text(tmp_path, monkeypatch):
    # The heap-corrupting input of issue 16 (docs/Robustness.md): a located
    # parse error, whatever the length of the path (relative paths of 14 to
    # 40 characters: some of them made msamp-compile abort).
    monkeypatch.chdir(tmp_path)
    # The repo's copy of the reproducer (its RUN lines are comments).
    text = (Path(__file__).resolve().parents[2] / "test" / "Tools" /
            "msamp-compile" / "redefined-block-in-region.mlir").read_text()
    line = text.splitlines().index("      ^bb0(%a: f32, %b: f32, %o: f32):") + 1
    for n in range(2, 31):
        out = "d" * n
        with pytest.raises(msamp.CompileError,
                           match=rf"(?s)exit 1\).*input.mlir:{line}:7: error: "
                                 r"redefinition of block '\^bb0'"):
            msamp.compile(text, "O0", out_dir=out)


def test_compile_for_cuda_embeds_kernels(tmp_path, mlp):
    # docs/RuntimeABI.md 13: no GPU needed to compile; opening the step
    # without the cuda backend is refused with the reason.
    g, _ = mlp
    step = msamp.compile(g, "O2", out_dir=tmp_path / "cuda", target="cuda",
                         chip="sm_89")
    kernels = os.listdir(os.path.join(step.dir, "kernels"))
    assert len(kernels) > 10 and all(k.endswith(".ptx") for k in kernels)
    ptx = open(os.path.join(step.dir, "kernels", sorted(kernels)[0])).read()
    assert ".target sm_89" in ptx and ".version 8.1" in ptx
    with pytest.raises(Exception, match="compiled for CUDA"):
        step.session()
    with pytest.raises(ValueError, match="target must be 'cpu' or 'cuda'"):
        msamp.compile(g, "O2", target="rocm")


def test_recipe_reaches_the_compiler(mlp):
    g, _ = mlp
    step = msamp.compile(g, "O1", fp8_format="e4m3", amax_history_len=4)
    gemms = step.gemms()
    assert gemms and all(x.fp8 and x.lhs == x.rhs == "f8E4M3FN" for x in gemms)
    hist = [s for s in step.state if s["name"].endswith(".amax_history")]
    assert hist and all(s["shape"] == [4] for s in hist)


# ---- GEMM precision -------------------------------------------------------------

@pytest.mark.parametrize("level", LEVELS)
def test_gemm_precisions(lm, level):
    _, steps = lm
    gemms = steps[level].gemms()
    linear = [x for x in gemms if x.kind in ("fprop", "dgrad", "wgrad")]
    attention = [x for x in gemms if x.kind.startswith("attention")]
    assert len(linear) == 7 * 3 and len(attention) == 6
    assert not any(x.fp8 for x in attention)
    if level == "O0":
        assert not any(x.fp8 for x in gemms)
        assert {x.precision for x in gemms} == {"f32 x f32 -> f32"}
        return
    for x in linear:
        assert x.fp8, x
        # MS-AMP's hybrid recipe: E4M3 forward operands, E5M2 output grads.
        want = ("f8E4M3FN", "f8E4M3FN") if x.kind == "fprop" else ("f8E5M2", "f8E4M3FN")
        assert (x.lhs, x.rhs) == want, x


def test_gemm_explanations(lm):
    _, steps = lm
    kept = [x for x in steps["O2"].gemms(explain=True) if not x.fp8]
    assert kept and all("fp8-attention=true" in x.why for x in kept)
    table = inspect.gemm_table(steps["O2"])
    assert "FP8 f8E5M2 x f8E4M3FN -> f32" in table and "attention_fwd" in table


# ---- sessions and training -----------------------------------------------------

def test_o0_reproduces_shared_example(mlp):
    _, steps = mlp
    with msamp.Session(steps["O0"]) as s:
        assert s.init(params=_example_params()) == 4
        losses = [s.step(EXAMPLE_BATCH) for _ in range(3)]
        np.testing.assert_allclose(losses, EXAMPLE_LOSSES, atol=1e-5, rtol=0)
        np.testing.assert_allclose(s.param("fc2.weight"), EXAMPLE_FC2, atol=1e-5, rtol=0)
        assert s.global_step == 3


@pytest.mark.parametrize("zero_stage", [2, 3])
def test_o3_alone_equals_o2(mlp, zero_stage):
    """O3 on a group of one owns every tensor: FP8 weights from FP16
    masters compute exactly the O2 step (docs/Design.md "O3"), at ZeRO
    stage 3 too, where each param is stored as a 1-D piece (here the whole
    param) initialized from the param-shaped values and exported in the
    param's shape."""
    g, steps = mlp
    o3 = msamp.compile(g, "O3", world_size=1, rank=0, zero_stage=zero_stage)
    assert o3.level == "O3"
    names = {s["name"]: s for s in o3.state}
    assert names["fc1.weight"]["dtype"] == "f8E4M3FN"
    assert names["fc1.weight.master"]["role"] == "master_param"
    if zero_stage == 3:
        assert names["fc1.weight"]["shape"] == [15]
        assert names["fc1.weight"]["param_shape"] == [5, 3]
    losses, weights = {}, {}
    for level, step in (("O2", steps["O2"]), ("O3", o3)):
        with msamp.Session(step) as s:
            s.init(params=_example_params())
            losses[level] = [s.step(EXAMPLE_BATCH) for _ in range(5)]
            weights[level] = msamp.state_dict(s, as_numpy=True)
    assert losses["O3"] == losses["O2"]
    assert weights["O3"].keys() == weights["O2"].keys()
    for name, value in weights["O2"].items():
        np.testing.assert_array_equal(weights["O3"][name], value, err_msg=name)


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_fp8_levels_track_shared_example(mlp, level):
    """FP8 GEMMs and FP16/FP8 state move each loss by a few E4M3 steps
    (2^-4 relative per operand): within 3% of the f64 reference."""
    _, steps = mlp
    t = msamp.Trainer(steps[level], init_params=_example_params())
    losses = t.fit(EXAMPLE_BATCH, steps=3)
    np.testing.assert_allclose(losses, EXAMPLE_LOSSES, rtol=0.03)


@pytest.mark.parametrize("model", ["mlp", "lm"])
@pytest.mark.parametrize("level", LEVELS)
def test_trainer_trains_every_level(request, model, level):
    g, steps = request.getfixturevalue(model)
    vocab = getattr(g.config, "vocab", 2)
    batches = data.task_batches(g.data, 4, vocab, seed=1)
    t = msamp.Trainer(steps[level], lr=1e-2, schedule="cosine", warmup=5, seed=1)
    losses = t.fit(batches, steps=40)
    assert len(t.log) == 40 and all(np.isfinite(losses))
    # Four batches cycle: compare whole cycles, not single noisy batches.
    assert np.mean(losses[-4:]) < 0.9 * np.mean(losses[:4]), losses
    lrs = [e["lr"] for e in t.log]
    assert lrs[0] == pytest.approx(1e-2 / 5) and lrs[4] == pytest.approx(1e-2)
    assert lrs[-1] < 1e-3  # the cosine reaches ~0 at the horizon
    assert t.session.global_step == 40


def test_batch_sources(tmp_path, mlp):
    """Lists cycle, functions get the step, data files go through the
    session's reader, None means msamp-run's synthetic batches."""
    g, steps = mlp
    batches = data.task_batches(g.data, 3, 2)
    a = msamp.Trainer(steps["O0"]).fit(batches, steps=6)
    b = msamp.Trainer(steps["O0"]).fit(lambda s: batches[(s - 1) % 3], steps=6)
    from safetensors.numpy import save_file
    save_file({k: np.stack([b_[k] for b_ in batches]) for k in batches[0]},
              str(tmp_path / "data.safetensors"))
    c = msamp.Trainer(steps["O0"]).fit(str(tmp_path / "data.safetensors"), steps=6)
    assert a == b == c
    d = msamp.Trainer(steps["O0"]).fit(None, steps=2)
    assert len(d) == 2 and all(np.isfinite(d))


def test_bad_batches_are_refused(mlp):
    _, steps = mlp
    with steps["O0"].session() as s:
        with pytest.raises(ValueError, match="shape"):
            s.step({"x": np.zeros((2, 3)), "y": np.zeros((4, 2))})
        with pytest.raises(KeyError, match="lacks y"):
            s.step({"x": np.zeros((4, 3))})
        with pytest.raises(KeyError, match="not an input"):
            s.set_input("fc1.weight", np.zeros((5, 3)))


def test_step_before_init_says_so(mlp):
    _, steps = mlp
    with steps["O0"].session(init=False) as s:
        with pytest.raises(msamp.SessionError, match="not initialized"):
            s.step(EXAMPLE_BATCH)
        s.init()
        assert np.isfinite(s.step(EXAMPLE_BATCH))


def test_eval_does_not_change_state(mlp):
    _, steps = mlp
    with steps["O2"].session() as s:
        before = s.state_dict()
        loss = s.eval(EXAMPLE_BATCH)
        after = s.state_dict()
        assert s.global_step == 0 and np.isfinite(loss)
        assert all(np.array_equal(before[k], after[k]) for k in before)


def test_state_dict_save_load_round_trip(tmp_path, mlp):
    g, steps = mlp
    batches = data.task_batches(g.data, 4, 2, seed=2)
    t = msamp.Trainer(steps["O2"], seed=3)
    t.fit(batches, steps=3)
    ck = tmp_path / "ck.safetensors"
    t.save(ck)
    saved = t.state_dict()
    later = t.fit(batches, steps=4)
    # Storage dtypes at O2: FP16 GEMM weights, FP8 E4M3 first moments
    # (raw bytes), FP16 second moments, f32 scaling state.
    assert saved["fc1.weight"].dtype == np.float16
    assert saved["fc1.weight.exp_avg"].dtype == np.uint8
    assert saved["fc1.weight.exp_avg_sq"].dtype == np.float16
    assert saved["fc1.fprop.input.amax_history"].dtype == np.float32
    assert int(saved["step"]) == 3
    # The checkpoint is msamp-run's safetensors file, names = state names.
    on_disk, meta = checkpoint.read(ck)
    assert meta["level"] == "O2" and meta["step"] == "3"
    assert set(on_disk) == set(saved)
    for name, value in saved.items():
        assert np.array_equal(on_disk[name], value), name

    with msamp.Session(steps["O2"]) as s:
        s.load(ck)
        restored = s.state_dict()
        for name, value in saved.items():
            assert np.array_equal(value, restored[name]), name
        # Dequantized weights are the runtime's own param values.
        for name in ("fc1.weight", "fc2.weight", "fc1.bias"):
            np.testing.assert_array_equal(inspect.dequantize(restored, name),
                                          s.param(name))
        # Same state, same batches -> the same losses, bit for bit.
        again = msamp.Trainer(s).fit(batches, steps=4)
        assert again == later
    with msamp.Session(steps["O1"]) as other:
        with pytest.raises(msamp.SessionError, match="INCOMPATIBLE_CHECKPOINT"):
            other.load(ck)


def test_log_json_matches_msamp_run_format(tmp_path, mlp):
    _, steps = mlp
    t = msamp.Trainer(steps["O0"])
    t.fit(EXAMPLE_BATCH, steps=2)
    t.write_log_json(tmp_path / "log.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [set(x) for x in lines] == [{"step", "loss", "lr", "nonfinite"}] * 2
    assert [x["step"] for x in lines] == [1, 2]


# ---- memory ---------------------------------------------------------------------

def test_memory_report(lm):
    """Per-parameter bytes of the level table (README): 16 at O0 (f32 weight,
    grad, m, v); at O2 FP8 m (1 B) and FP16 v (2 B) for every param. The
    session's measured state and the compiler's report agree exactly."""
    _, steps = lm
    reports = {lv: steps[lv].session().memory_report() for lv in LEVELS}
    n = reports["O0"]["params"]
    assert n == sum(int(np.prod(s["shape"])) for s in steps["O0"].state
                    if s["role"] == "param")
    o0, o2 = reports["O0"]["categories"], reports["O2"]["categories"]
    for cat in ("weights", "weight_grads", "optimizer_m", "optimizer_v"):
        assert o0[cat] == {"dtype": "f32", "bytes": 4 * n, "bytes_per_param": 4.0}
    assert o2["optimizer_m"]["dtype"] == "f8E4M3FN" and o2["optimizer_m"]["bytes"] == n
    assert o2["optimizer_v"]["dtype"] == "f16" and o2["optimizer_v"]["bytes"] == 2 * n
    assert o2["weights"]["dtype"] == "mixed" and o2["weights"]["bytes"] < 3 * n
    assert reports["O2"]["grads_from"] == "compiler"
    assert reports["O0"]["bytes_per_param"] > reports["O1"]["bytes_per_param"] \
        > reports["O2"]["bytes_per_param"]
    for lv in LEVELS:
        compiler = steps[lv].memory_report()
        for cat, c in compiler["categories"].items():
            got = reports[lv]["categories"][cat]
            assert (got["dtype"], got["bytes"]) == (c["dtype"], c["bytes"]), (lv, cat)
        assert reports[lv]["bytes_per_param"] == pytest.approx(compiler["bytes_per_param"])


# ---- inspection -----------------------------------------------------------------

def test_scales_and_amax_histories(lm):
    g, steps = lm
    t = msamp.Trainer(steps["O2"])
    t.fit(data.task_batches(g.data, 2, TINY_LM["vocab"]), steps=5)
    scales = inspect.scales(t)
    hist = inspect.amax_histories(t)
    fprop = "layers.0.mlp.fc1.fprop.input"
    assert fprop in hist and hist[fprop].shape == (16,)
    # Five steps recorded, newest first; the rest of the window still zero.
    assert np.all(hist[fprop][:5] > 0) and np.all(hist[fprop][5:] == 0)
    # Power-of-two scales (MS-AMP's recipe).
    for name, s in scales.items():
        assert s > 0 and np.log2(s) == int(np.log2(s)), name
    rows = {r["tensor"]: r for r in inspect.scaling_table(t)}
    assert rows[fprop]["format"] == "e4m3"
    assert rows["layers.0.mlp.fc1.wgrad.grad_output"]["format"] == "e5m2"
    assert rows["head.weight.exp_avg_sq"]["format"] == "f16"
    assert rows[fprop]["headroom"] > 0.5
    # A checkpoint read without the session gives the same answers.
    assert inspect.scales(t.state_dict()) == scales


def test_cast_counts():
    x = np.array([0.0, 1.0, -500.0, 449.0, 2.0 ** -11, -(2.0 ** -10),
                  2.0 ** -10 * 1.01, 448.0], np.float32)
    # E4M3: max 448, smallest subnormal 2^-9 (half of it ties to 0).
    assert inspect.cast_counts(x, 1.0, "e4m3") == {"overflow": 2, "underflow": 2,
                                                   "total": 8}
    assert inspect.cast_counts(x, 0.5, "e4m3")["overflow"] == 0
    assert inspect.cast_counts(x, 1.0, "e5m2") == {"overflow": 0, "underflow": 0,
                                                   "total": 8}


def test_weight_cast_counts(mlp):
    _, steps = mlp
    with steps["O1"].session() as s:
        counts = inspect.weight_cast_counts(s)
        assert set(counts) == {"fc1.weight", "fc2.weight"}
        for c in counts.values():
            assert c["overflow"] == 0 and c["total"] > 0


def test_native_errors_name_the_places(monkeypatch, tmp_path):
    monkeypatch.setenv("MSAMP_BUILD_DIR", str(tmp_path))
    monkeypatch.delenv("MSAMP_COMPILE", raising=False)
    with pytest.raises(msamp.NativeNotFoundError) as e:
        _native.find_tool("msamp-compile")
    assert str(tmp_path / "bin") in str(e.value) and "MSAMP_BUILD_DIR" in str(e.value)
    with pytest.raises(msamp.NativeNotFoundError, match="libmsamp_runtime.so"):
        _native.find_library_dir()


# ---- the host's allocator --------------------------------------------------
_MALLOPT_PROBE = """
import ctypes, sys
sys.path.insert(0, {root!r})
from msamp import _native
from msamp.session import Session
Session({step!r}).close()
print(_native._FREED_MEMORY_KEPT)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_sessions_keep_freed_memory(mlp):
    """Opening a session sets glibc's thresholds once (a step's temporaries
    stay in the heap: 175 -> 92 ms/step on the benchmark LM from Python);
    MSAMP_KEEP_FREED_MEMORY=0 leaves malloc alone. Fresh interpreters: the
    setting is process-wide and applied once."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _MALLOPT_PROBE.format(root=root, step=str(mlp[1]["O0"].dir))
    env = dict(os.environ)
    env.pop("MSAMP_KEEP_FREED_MEMORY", None)
    kept = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                          capture_output=True, check=True).stdout.split()
    assert kept == ["True"]
    env["MSAMP_KEEP_FREED_MEMORY"] = "0"
    left = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                          capture_output=True, check=True).stdout.split()
    assert left == ["False"]
    assert _native.keep_freed_memory() is True  # idempotent in this process
