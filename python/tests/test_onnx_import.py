"""Numeric checks of msamp-translate --import-onnx.

The imported graphs are executed with upstream mlir-opt + mlir-runner
(msamp.graphs.run_mlir: no msamp code between the IR and the numbers) and
compared with numpy: an analytic reference for the MSE MLP, float64 central
differences for the classifier, so a wrong gradient formula in an ORT
gradient-op lowering cannot hide behind a matching mistake in a hand-written
backward. The O0 build of the imported graph goes through msamp-compile,
and through msamp-run when that tool is built.

Skipped visibly when the onnx package, the built tools or the MLIR runner are
missing. The build directory comes from MSAMP_BUILD_DIR (ctest sets it).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts", "onnx"))

onnx = pytest.importorskip("onnx")
import onnx_models as models  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "scripts", "onnx"))
from conformance import run_mlir  # noqa: E402  (run_mlir.py loaded by path)

BUILD = os.environ.get("MSAMP_BUILD_DIR", os.path.join(REPO, "build"))
TRANSLATE = os.path.join(BUILD, "bin", "msamp-translate")


def _tool(name):
    path = os.path.join(BUILD, "bin", name)
    return path if os.path.exists(path) else None


pytestmark = [
    pytest.mark.skipif(not os.path.exists(TRANSLATE),
                       reason=f"msamp-translate not built in {BUILD}"),
    pytest.mark.skipif(not run_mlir.tools_available(),
                       reason="mlir-opt / mlir-runner not installed"),
]


def _import(tmp_path, name, *flags):
    onnx_path = tmp_path / f"{name}.onnx"
    models.save(name, str(onnx_path))
    out = tmp_path / f"{name}.mlir"
    subprocess.run([TRANSLATE, "--import-onnx", str(onnx_path), "-o", str(out),
                    *flags], check=True, capture_output=True, text=True)
    return out.read_text()


def _mlp_reference(p, x, t):
    z1 = x @ p["fc1.weight"].T + p["fc1.bias"]
    h1 = np.maximum(z1, 0)
    y = h1 @ p["fc2.weight"].T + p["fc2.bias"]
    d = y - t
    loss = np.mean(d * d)
    dy = 2 * d / d.size
    dh1 = dy @ p["fc2.weight"]
    dz1 = dh1 * (z1 > 0)
    return loss, {"fc2.weight": dy.T @ h1, "fc2.bias": dy.sum(0),
                  "fc1.weight": dz1.T @ x, "fc1.bias": dz1.sum(0)}


@pytest.mark.parametrize("name", ["mlp_train_ort", "mlp_train_init"])
def test_mlp_training_graph_matches_numpy(tmp_path, name):
    text = _import(tmp_path, name, "--dim", "batch=4")
    p = {k: v.astype(np.float64) for k, v in models.mlp_params().items()}
    feeds = models.mlp_feeds()
    values = {**models.mlp_params(), **feeds}
    got = run_mlir.run(text, values)
    loss, grads = _mlp_reference(p, feeds["x"].astype(np.float64),
                                 feeds["target"].astype(np.float64))
    assert got.loss == pytest.approx(loss, rel=1e-4)
    assert sorted(got.grads) == sorted(grads)
    for k, g in grads.items():
        np.testing.assert_allclose(got.grads[k], g, rtol=1e-4, atol=1e-5, err_msg=k)


def test_ort_artifact_matches_numpy(tmp_path):
    """The committed ONNX Runtime export (scripts/onnx/make_ort_fixture.py)."""
    fixture = os.path.join(REPO, "test", "Tools", "msamp-translate", "Inputs",
                           "ort_mlp", "training_model.onnx")
    weights = tmp_path / "w.safetensors"
    models.save_weights(str(weights), models.mlp_params())
    out = tmp_path / "ort.mlir"
    subprocess.run([TRANSLATE, "--import-onnx", fixture, "--weights-in", str(weights),
                    "-o", str(out)], check=True, capture_output=True, text=True)
    feeds = models.mlp_feeds()
    got = run_mlir.run(out.read_text(), {**models.mlp_params(), **feeds})
    p = {k: v.astype(np.float64) for k, v in models.mlp_params().items()}
    loss, grads = _mlp_reference(p, feeds["x"].astype(np.float64),
                                 feeds["target"].astype(np.float64))
    assert got.loss == pytest.approx(loss, rel=1e-4)
    for k, g in grads.items():
        np.testing.assert_allclose(got.grads[k], g, rtol=1e-4, atol=1e-5, err_msg=k)


def _erf(x):
    from math import erf
    return np.vectorize(erf)(x)


def _cls_loss(p, x, labels):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    xn = (x - mu) / np.sqrt(var + 1e-5) * p["ln.weight"] + p["ln.bias"]
    z1 = xn @ p["fc1.weight"].T
    h1 = 0.5 * z1 * (1 + _erf(z1 / np.sqrt(2)))
    logits = h1 @ p["fc2.weight"].T
    m = logits.max(1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(1, keepdims=True))
    return -logp[np.arange(len(labels)), labels].mean()


def test_classifier_gradient_ops_match_finite_differences(tmp_path):
    text = _import(tmp_path, "cls_train_ort")
    params = models.cls_params()
    feeds = models.cls_feeds()
    got = run_mlir.run(text, {**params, **feeds})
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    x = feeds["x"].astype(np.float64)
    assert got.loss == pytest.approx(_cls_loss(p64, x, feeds["labels"]), rel=1e-4)
    eps = 1e-6
    for name, value in p64.items():
        fd = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            hi, lo = dict(p64), dict(p64)
            hi[name] = value.copy()
            lo[name] = value.copy()
            hi[name][idx] += eps
            lo[name][idx] -= eps
            fd[idx] = (_cls_loss(hi, x, feeds["labels"]) -
                       _cls_loss(lo, x, feeds["labels"])) / (2 * eps)
        np.testing.assert_allclose(got.grads[name], fd, rtol=2e-3, atol=2e-5,
                                   err_msg=name)


def test_forward_graph_matches_numpy(tmp_path):
    text = _import(tmp_path, "mlp_forward", "--dim", "batch=4")
    assert 'msamp.kind = "forward"' in text
    # run_mlir drives forward_backward functions; the forward graph has the
    # same calling convention, so relabel it for the runner.
    text = text.replace('msamp.kind = "forward"', 'msamp.kind = "forward_backward"')
    feeds = models.mlp_feeds()
    got = run_mlir.run(text, {"x": feeds["x"]})
    p = models.mlp_params()
    h1 = np.maximum(feeds["x"] @ p["fc1.weight"].T + p["fc1.bias"], 0)
    y = h1 @ p["fc2.weight"].T + p["fc2.bias"]
    np.testing.assert_allclose(got.outputs[0], y, rtol=1e-4, atol=1e-5)


def test_ort_fused_ops_match_numpy(tmp_path):
    """BiasGelu, BiasGeluGrad_dX and GatherGrad (ONNX Runtime's fused and
    gradient ops of the torch transformer export) against numpy in float64:
    the Gelu derivative by central differences of the Gelu itself, the
    embedding gradient by an explicit np.add.at scatter."""
    text = _import(tmp_path, "ort_fused_ops")
    text = text.replace('msamp.kind = "forward"', 'msamp.kind = "forward_backward"')
    feeds = models.ort_fused_ops_feeds()
    got = run_mlir.run(text, feeds)
    x = feeds["a"].astype(np.float64) + feeds["bias"].astype(np.float64)

    def gelu(v):
        return 0.5 * v * (1.0 + _erf(v / np.sqrt(2.0)))

    np.testing.assert_allclose(got.outputs[0], gelu(x), rtol=1e-4, atol=1e-5)
    h = 1e-5
    dgelu = (gelu(x + h) - gelu(x - h)) / (2 * h)
    np.testing.assert_allclose(got.outputs[1], feeds["dy"] * dgelu,
                               rtol=1e-4, atol=1e-5)
    table = np.zeros((7, 5))
    ids = np.where(feeds["ids"] < 0, feeds["ids"] + 7, feeds["ids"])
    np.add.at(table, ids.reshape(-1), feeds["dz"].reshape(-1, 5))
    np.testing.assert_allclose(got.outputs[2], table, rtol=1e-5, atol=1e-6)


def test_weights_out_round_trip(tmp_path):
    weights = tmp_path / "w.safetensors"
    _import(tmp_path, "mlp_train_init", "--weights-out", str(weights))
    got = models.load_safetensors(str(weights))
    for k, v in models.mlp_params().items():
        np.testing.assert_array_equal(got[k], v)


@pytest.mark.skipif(_tool("msamp-compile") is None, reason="msamp-compile not built")
def test_imported_mlp_compiles_at_o0(tmp_path):
    _import(tmp_path, "mlp_train_init")
    out = tmp_path / "compiled"
    proc = subprocess.run([_tool("msamp-compile"), str(tmp_path / "mlp_train_init.mlir"),
                           "--opt-level", "O0", "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (out / "train_step.so").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    names = {s["name"] for s in manifest["state"]}
    assert {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"} <= names


@pytest.mark.skipif(_tool("msamp-run") is None, reason="msamp-run not built")
def test_imported_mlp_trains_with_msamp_run(tmp_path):
    """Import -> --weights-out -> msamp-run --init at O0: the first step's
    loss is numpy's loss of the ONNX initializers, and training reduces it."""
    weights = tmp_path / "w.safetensors"
    _import(tmp_path, "mlp_train_init", "--weights-out", str(weights))
    feeds = models.mlp_feeds()
    data = tmp_path / "data.safetensors"
    models.save_weights(str(data), {k: v[None] for k, v in feeds.items()})
    log = tmp_path / "log.jsonl"
    proc = subprocess.run([_tool("msamp-run"), str(tmp_path / "mlp_train_init.mlir"),
                           "--opt-level", "O0", "--steps", "20", "--lr", "0.01",
                           "--data", str(data), "--init", str(weights),
                           "--log-json", str(log), "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    steps = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert len(steps) == 20
    p = {k: v.astype(np.float64) for k, v in models.mlp_params().items()}
    loss, _ = _mlp_reference(p, feeds["x"].astype(np.float64),
                             feeds["target"].astype(np.float64))
    assert steps[0]["loss"] == pytest.approx(loss, rel=1e-5)
    assert steps[-1]["loss"] < 0.5 * steps[0]["loss"]
