"""Tests of the contract-graph generators (python/msamp/graphs).

Chain of evidence: the numpy f64 reference's gradients match central finite
differences; the generated MLIR, executed by upstream mlir-opt + mlir-runner,
matches the reference (loss and every gradient to 1e-4 relative); the mlp with
the shared example's values reproduces its first-step loss. MLIR tests skip with
a message when LLVM 22's mlir-runner is not installed. Runs in ~10 s on one
idle core (the 8-layer LM run is 7 of them), ~25 s while C++ builds share it.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from msamp import graphs  # noqa: E402
from msamp.graphs import reference, run_mlir  # noqa: E402
from msamp.graphs.__main__ import main as cli_main  # noqa: E402

SHARED_EXAMPLE = (Path(__file__).resolve().parents[3] / "shared" / "examples"
                  / "mlp_fwd_bwd.mlir")

TINY = dict(dim=16, heads=2, seq=4, batch=2, ffn=32, vocab=16)
CASES = {
    "mlp": dict(model="mlp"),
    "mlp-deep": dict(model="mlp", sizes=(3, 7, 6, 2), batch=5),
    "transformer-block": dict(model="transformer-block", **TINY),
    "transformer-lm": dict(model="transformer-lm", layers=2, **TINY),
    # GPT-2's tied head: the gradient sums the gather's and the GEMM's.
    "transformer-lm-tied": dict(model="transformer-lm", layers=1, tie_embeddings=True,
                                **TINY),
    # Default sizes (dim 64, 4 heads, seq 16, ffn 256, vocab 64): still ~1 s each.
    "transformer-block-default": dict(model="transformer-block"),
    "transformer-lm-default": dict(model="transformer-lm"),
}

# The reference example's initial values (docs/Inputs.md 3).
EXAMPLE_VALUES = {
    "fc1.weight": [[0.1, -0.2, 0.3], [0.0, 0.4, -0.1], [-0.3, 0.2, 0.1],
                   [0.5, -0.4, 0.2], [0.2, 0.1, -0.5]],
    "fc1.bias": [0.01, -0.02, 0.03, 0.0, 0.05],
    "fc2.weight": [[0.3, -0.1, 0.2, 0.4, -0.2], [-0.5, 0.2, 0.1, -0.3, 0.6]],
    "fc2.bias": [0.1, -0.1],
    "x": [[1, 2, 3], [0.5, -1, 2], [-1, 0, 1], [2, 1, -1]],
    "y": [[1, 0], [0, 1], [0.5, 0.5], [-1, 2]],
}
EXAMPLE_FIRST_LOSS = 1.023226

RTOL = 1e-4


def _build(case):
    kw = dict(CASES[case])
    return graphs.build(kw.pop("model"), **kw)


def assert_grads_close(got, want, rtol=RTOL):
    """Per tensor: max |got - want| <= rtol * scale, scale = max |want|.

    Gradients that are zero in exact arithmetic (the key-projection bias: a
    per-query-row shift of the scores does not change the softmax) carry only
    f32 noise; their scale is floored at 1e-3 of the largest gradient.
    """
    assert set(got) == set(want)
    floor = 1e-3 * max(float(np.abs(w).max()) for w in want.values())
    for name, w in want.items():
        g = np.asarray(got[name])
        assert g.shape == w.shape, name
        scale = max(float(np.abs(w).max()), floor)
        err = float(np.abs(g - w).max()) / scale
        assert err <= rtol, f"{name}: relative error {err:.3g} > {rtol}"


@pytest.fixture(scope="module")
def mlir_tools():
    if not run_mlir.tools_available():
        pytest.skip(f"LLVM 22 mlir-opt / mlir-runner / runner libraries not found "
                    f"under {run_mlir.LLVM_BIN} and {run_mlir.LLVM_LIB} "
                    f"(set MSAMP_LLVM_BIN / MSAMP_LLVM_LIB)")


# ---------------------------------------------------------------- reference ----

@pytest.mark.parametrize("case", CASES)
def test_reference_matches_finite_differences(case):
    g = _build(case)
    values = graphs.init_values(g.args, seed=1)
    errors = reference.finite_difference_check(g, values, seed=2)
    bad = {k: e for k, e in errors.items() if e > 1e-6}
    assert not bad, f"analytic vs finite-difference gradients differ: {bad}"


def test_reference_reproduces_shared_example_loss():
    g = graphs.build("mlp")
    loss, _ = reference.loss_and_grads(g, {k: np.array(v) for k, v in
                                           EXAMPLE_VALUES.items()})
    assert abs(loss - EXAMPLE_FIRST_LOSS) < 1e-6


def test_key_bias_gradient_is_structurally_zero():
    g = _build("transformer-block")
    _, grads = reference.loss_and_grads(g, graphs.init_values(g.args, seed=1))
    assert np.abs(grads["attn.k_proj.bias"]).max() < 1e-12
    assert np.abs(grads["attn.q_proj.bias"]).max() > 1e-4


# ---------------------------------------------------------------- MLIR runs ----

@pytest.mark.parametrize("case", CASES)
def test_mlir_matches_reference(case, mlir_tools):
    g = _build(case)
    values = graphs.init_values(g.args, seed=1)
    loss, grads = reference.loss_and_grads(g, values)
    result = run_mlir.run(g.text, values)
    assert abs(result.loss - loss) <= RTOL * abs(loss)
    assert_grads_close(result.grads, grads)


def test_mlir_matches_reference_8_layer_lm(mlir_tools):
    g = graphs.build("transformer-lm", layers=8)
    values = graphs.init_values(g.args, seed=1)
    loss, grads = reference.loss_and_grads(g, values)
    result = run_mlir.run(g.text, values)
    assert abs(result.loss - loss) <= RTOL * abs(loss)
    assert_grads_close(result.grads, grads)


def test_mlp_reproduces_shared_example_first_step(mlir_tools):
    values = {k: np.array(v) for k, v in EXAMPLE_VALUES.items()}
    result = run_mlir.run(graphs.build("mlp").text, values)
    assert abs(result.loss - EXAMPLE_FIRST_LOSS) < 1e-5
    _, want = reference.loss_and_grads(graphs.build("mlp"), values)
    assert_grads_close(result.grads, want)
    if SHARED_EXAMPLE.exists():
        # Same values through the hand-written example: the same printed numbers.
        example = run_mlir.run(SHARED_EXAMPLE.read_text(), values)
        assert example.loss == result.loss
        for name, grad in example.grads.items():
            np.testing.assert_array_equal(grad, result.grads[name])


def test_op_counts_match_mlir_opt(mlir_tools, tmp_path):
    g = _build("transformer-lm")
    path = tmp_path / "lm.mlir"
    path.write_text(g.text)
    proc = subprocess.run([run_mlir.MLIR_OPT, str(path), "--verify-each",
                           "--print-op-stats", "-o", "/dev/null"],
                          capture_output=True, text=True, check=True)
    counted = {m.group(1): int(m.group(2))
               for m in re.finditer(r"^\s*([\w.]+)\s*,\s*(\d+)$", proc.stderr, re.M)}
    assert counted == dict(g.op_counts)


# ---------------------------------------------------------------- structure ----

@pytest.mark.parametrize("case", CASES)
def test_contract_structure(case):
    g = _build(case)
    sig = run_mlir.parse_signature(g.text)
    names = [a.name for a in sig.args]
    assert len(set(names)) == len(names)
    params = [a for a in sig.args if a.role == "param"]
    assert [a.name for a in params] == [p.name for p in g.params]
    assert {a.role for a in sig.args} == {"param", "input", "target"}
    assert sig.results[0].role == "loss" and sig.results[0].type_text == "tensor<f32>"
    assert [(r.role, r.name, r.type_text) for r in sig.results[1:]] == \
        [("grad", p.name, p.type_text) for p in params]
    assert 'msamp.kind = "forward_backward"' in g.text
    assert re.search(r'module attributes \{msamp.optimizer = \{kind = "adamw", lr = ',
                     g.text)
    dialects = {op.split(".")[0] for op in g.op_counts}
    assert dialects <= {"builtin", "func", "linalg", "tensor", "arith", "math"}


def _generic_bodies(text):
    """(iterator_types line, n inputs, set of body op names) per linalg.generic."""
    for chunk in text.split("= linalg.generic {")[1:]:
        header, body = chunk.split("^bb0", 1)
        body = body.split("linalg.yield", 1)[0]
        ins = re.search(r"ins\(([^:]*):", header)
        n_ins = len(ins.group(1).split(",")) if ins else 0
        yield header, n_ins, set(re.findall(r"= ([a-z]+\.[a-z_]+)", body))


@pytest.mark.parametrize("case", CASES)
def test_only_gemms_are_contractions(case):
    """No generic is a multiply-accumulate reduction over two tensors: linalg
    would see a contraction (ContractionOpInterface) and a GEMM classifier might
    take a LayerNorm weight gradient for a weight-gradient GEMM."""
    for header, n_ins, ops in _generic_bodies(_build(case).text):
        if '"reduction"' in header and n_ins >= 2:
            assert ops != {"arith.mulf", "arith.addf"}, header


def test_transformer_uses_expected_ops():
    g = _build("transformer-lm")
    ops = g.op_counts
    assert ops["linalg.batch_matmul"] == 6 * 2          # 2 fwd + 4 bwd per layer
    assert ops["linalg.matmul"] == 18 * 2 + 3           # 6 linears x 3; the head x 3
    assert ops["math.tanh"] == 2 * 2 and ops["tensor.extract"] == 1
    assert "-inf" not in g.text and "0xFF800000" not in g.text


def test_transformer_lm_8_layers_is_large():
    g = graphs.build("transformer-lm", layers=8)
    assert g.total_ops > 4000 and g.top_level_ops > 1000
    assert len(g.params) == 2 + 16 * 8 + 3


@pytest.mark.parametrize("kind,fields", [
    ("sgd", 'kind = "sgd", lr = 0.5 : f64, momentum = 0.0 : f64, '
            'weight_decay = 0.0 : f64, nesterov = false'),
    ("adam", 'kind = "adam", lr = 0.5 : f64, beta1 = 0.9 : f64, beta2 = 0.999 : f64, '
             'eps = 1.0e-08 : f64, weight_decay = 0.0 : f64'),
])
def test_optimizer_attribute(kind, fields):
    g = graphs.build("mlp", optimizer=kind, lr=0.5)
    assert f"msamp.optimizer = {{{fields}}}" in g.text


def test_default_mlp_matches_shared_example_signature():
    sig = run_mlir.parse_signature(graphs.build("mlp").text)
    assert [a.name for a in sig.args] == list(EXAMPLE_VALUES)
    if SHARED_EXAMPLE.exists():
        assert run_mlir.parse_signature(SHARED_EXAMPLE.read_text()) == sig


# ---------------------------------------------------------------- CLI ----

@pytest.mark.parametrize("argv,message", [
    (["mlp", "--sizes", "3,0,2"], "must be positive"),
    (["mlp", "--sizes", "3"], "at least two widths"),
    (["mlp", "--batch", "-1"], "must be positive"),
    (["transformer-block", "--dim", "10", "--heads", "4"], "not divisible by --heads"),
    (["transformer-block", "--layers", "2"], "--layers does not apply"),
    (["transformer-block", "--tie-embeddings"], "--tie-embeddings does not apply"),
    (["transformer-lm", "--seq", "0"], "--seq must be positive"),
    (["transformer-lm", "--lr", "nan"], "--lr must be a finite positive"),
])
def test_cli_rejects_bad_values(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli_main(argv + ["-o", str(tmp_path / "out.mlir")])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.mlir").exists()


def test_cli_writes_graph_and_stats(capsys, tmp_path):
    out = tmp_path / "lm.mlir"
    assert cli_main(["transformer-lm", "--layers", "1", "--dim", "32", "--stats",
                     "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "model: transformer-lm" in err and "linalg.batch_matmul" in err
    assert out.read_text() == graphs.build("transformer-lm", layers=1, dim=32).text
