"""The reference rows of MS-AMP's level table as levels: amp-bf16, amp-fp16
and te (docs/Levels.md).

The AMP GEMMs are checked bit for bit against a numpy / ml_dtypes reference:
a one-layer graph y = x @ w^T with loss sum(t * y) has the fprop GEMM
round(x) @ round(w)^T in its loss and the wgrad GEMM round(t)^T @ round(x) as
the gradient of w, which one SGD step at lr = 1 subtracts from w. The
operands are drawn so that every product and every sum of the reference is
exact in f32 (asserted below), so the result does not depend on the BLAS's
summation order and must equal the reference exactly; the same graph with
unrounded operands gives a different loss and gradient, so a missing or
wrong rounding (truncation instead of round-to-nearest-even) fails.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

BUILD = os.environ.get("MSAMP_BUILD_DIR",
                       os.path.join(os.path.dirname(os.path.dirname(HERE)), "build"))
MSAMP_RUN = os.path.join(BUILD, "bin", "msamp-run")
MSAMP_OPT = os.path.join(BUILD, "bin", "msamp-opt")

safetensors = pytest.importorskip("safetensors.numpy",
                                  reason="needs the safetensors package")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="needs ml_dtypes")
if not os.path.exists(MSAMP_RUN):
    pytest.skip(f"needs a build with msamp-run ({MSAMP_RUN} not found)",
                allow_module_level=True)

GRAPH = """
module attributes {{msamp.optimizer = {{kind = "sgd", lr = 1.0 : f64}}}} {{
  func.func @fwd_bwd(
      %w: tensor<{N}x{K}xf32> {{msamp.role = "param", msamp.name = "fc.weight"}},
      %x: tensor<{M}x{K}xf32> {{msamp.role = "input", msamp.name = "x"}},
      %t: tensor<{M}x{N}xf32> {{msamp.role = "target", msamp.name = "t"}})
      -> (tensor<f32> {{msamp.role = "loss"}},
          tensor<{N}x{K}xf32> {{msamp.role = "grad", msamp.name = "fc.weight"}})
      attributes {{msamp.kind = "forward_backward"}} {{
    %zero = arith.constant 0.0 : f32
    %emn = tensor.empty() : tensor<{M}x{N}xf32>
    %fmn = linalg.fill ins(%zero : f32) outs(%emn : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
    %y = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                         affine_map<(m, n, k) -> (n, k)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w : tensor<{M}x{K}xf32>, tensor<{N}x{K}xf32>)
        outs(%fmn : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {{
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                         affine_map<(i, j) -> ()>],
        iterator_types = ["reduction", "reduction"]}}
        ins(%y, %t : tensor<{M}x{N}xf32>, tensor<{M}x{N}xf32>) outs(%f0 : tensor<f32>) {{
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
    }} -> tensor<f32>
    // The backward seed d loss / d y = t + 0.0: a backward value (the output
    // gradient of the wgrad GEMM), not the graph input t itself. (x + 0.0 is
    // exact, and unlike x * 1.0 not folded away: -0.0 + 0.0 is +0.0.)
    %seed = arith.constant 0.0 : f32
    %dy = linalg.generic {{
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}}
        ins(%t : tensor<{M}x{N}xf32>) outs(%emn : tensor<{M}x{N}xf32>) {{
      ^bb0(%a: f32, %o: f32):
        %g = arith.addf %a, %seed : f32
        linalg.yield %g : f32
    }} -> tensor<{M}x{N}xf32>
    %enk = tensor.empty() : tensor<{N}x{K}xf32>
    %fnk = linalg.fill ins(%zero : f32) outs(%enk : tensor<{N}x{K}xf32>) -> tensor<{N}x{K}xf32>
    %dw = linalg.matmul
        indexing_maps = [affine_map<(n, k, m) -> (m, n)>,
                         affine_map<(n, k, m) -> (m, k)>,
                         affine_map<(n, k, m) -> (n, k)>]
        ins(%dy, %x : tensor<{M}x{N}xf32>, tensor<{M}x{K}xf32>)
        outs(%fnk : tensor<{N}x{K}xf32>) -> tensor<{N}x{K}xf32>
    return %loss, %dw : tensor<f32>, tensor<{N}x{K}xf32>
  }}
}}
"""


def signed(rng, shape, low, high):
    """Values in +-[low, high), f32 with all 24 significand bits random."""
    v = rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)
    return v.astype(np.float32)


def exact_in_f32(values):
    values = np.asarray(values, np.float64)
    return np.array_equal(values.astype(np.float32).astype(np.float64), values)


def run_level(tmp_path, level, w, x, t, *extra):
    (N, K), (M, _) = w.shape, x.shape
    tmp_path.mkdir(exist_ok=True)
    graph = tmp_path / "graph.mlir"
    graph.write_text(GRAPH.format(M=M, N=N, K=K))
    safetensors.save_file({"fc.weight": w}, str(tmp_path / "init.safetensors"))
    safetensors.save_file({"x": x[None], "t": t[None]},
                          str(tmp_path / "data.safetensors"))
    env = dict(os.environ, MSAMP_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([MSAMP_RUN, str(graph), "--opt-level", level, "--steps", "1",
                    "--lr", "1.0", "--init", str(tmp_path / "init.safetensors"),
                    "--data", str(tmp_path / "data.safetensors"), "--quiet",
                    "--log-json", str(tmp_path / "log.jsonl"),
                    "--save", str(tmp_path / "ck.safetensors"), *extra],
                   check=True, env=env)
    ck = safetensors.load_file(str(tmp_path / "ck.safetensors"))
    log = json.loads((tmp_path / "log.jsonl").read_text().splitlines()[0])
    return np.float32(log["loss"]), ck["fc.weight"]


# (dtype, M, N, K, |w| range): sizes small enough that every sum is exact in
# f32 (fp16 operands have 11 significand bits, so its GEMMs stay smaller).
CASES = {
    "amp-bf16": (ml_dtypes.bfloat16, 4, 2, 4, (0.5, 1.0)),
    "amp-fp16": (np.float16, 2, 1, 2, (0.5, 1.0)),
}


@pytest.mark.parametrize("level", sorted(CASES))
def test_amp_gemms_bit_exact(tmp_path, level):
    half, M, N, K, wrange = CASES[level]
    rng = np.random.default_rng(7)
    w = signed(rng, (N, K), *wrange)
    x = signed(rng, (M, K), 1.0, 2.0)
    # Output gradients +-2^-5: exact in both 16-bit types (and far from
    # amp-fp16's loss-scale overflow), so the sums stay exact.
    t = (rng.choice([-1.0, 1.0], (M, N)) / 32).astype(np.float32)

    def rounded(a):
        return a.astype(half).astype(np.float64)

    y = rounded(x) @ rounded(w).T
    loss = float((y * rounded(t)).sum())
    dw = rounded(t).T @ rounded(x)
    # Preconditions: the reference is exact, so summation order is moot ...
    assert exact_in_f32(y) and exact_in_f32([loss]) and exact_in_f32(dw)
    # ... and rounding the operands matters for this data.
    unrounded = float(((x.astype(np.float64) @ w.astype(np.float64).T) * t).sum())
    assert np.float32(unrounded) != np.float32(loss)
    assert not np.array_equal(np.float32(t.T.astype(np.float64) @ x), np.float32(dw))

    got_loss, got_w = run_level(tmp_path, level, w, x, t)
    assert got_loss == np.float32(loss), (got_loss, loss)
    # SGD at lr = 1: one f32 subtraction of the exact gradient.
    np.testing.assert_array_equal(got_w, w - dw.astype(np.float32))
    # The same step in f32 (O0) differs: the level, not the data, rounds.
    f32_loss, f32_w = run_level(tmp_path / "o0", "O0", w, x, t)
    assert f32_loss != got_loss
    assert not np.array_equal(f32_w, got_w)


def test_amp_bf16_rounds_to_nearest_even(tmp_path):
    """Ties: 1 + 2^-8 lies halfway between two bf16 values; RNE picks the
    even 1.0, 1 + 3 * 2^-8 rounds up to 1 + 2^-6 (truncation: 1 + 2^-7)."""
    w = np.array([[1.0, 1.0]], np.float32)
    x = np.array([[1 + 2.0**-8, 1 + 3 * 2.0**-8]], np.float32)
    t = np.ones((1, 1), np.float32)
    got_loss, _ = run_level(tmp_path, "amp-bf16", w, x, t)
    assert got_loss == np.float32(1.0 + (1 + 2.0**-6))


def memory_report(tmp_path, level):
    from msamp import graphs
    g = graphs.build("mlp", sizes=(64, 64, 16), batch=4)
    path = tmp_path / "mlp.mlir"
    path.write_text(g.text)
    out = subprocess.run([MSAMP_OPT, str(path), PIPELINES[level],
                          "--msamp-memory-report=format=json", "-o", "/dev/null"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


PIPELINES = {"amp-bf16": "--msamp-amp=dtype=bf16",
             "amp-fp16": "--msamp-amp=dtype=fp16", "te": "--msamp-te"}


@pytest.mark.parametrize("level", sorted(PIPELINES))
def test_memory_report_per_level(tmp_path, level):
    """MS-AMP's table: FP16 AMP and TE keep f32 weights, weight gradients and
    Adam m and v (16 bytes per parameter); TE adds its scaling state."""
    report = memory_report(tmp_path, level)
    assert report["level"] == level
    cats = report["categories"]
    for name in ("weights", "weight_grads", "optimizer_m", "optimizer_v"):
        assert cats[name]["dtype"] == "f32", name
        assert cats[name]["bytes_per_param"] == 4, name
    assert cats["master_weights"]["bytes"] == 0
    params = report["params"]
    if level == "te":
        # Delayed scaling of every quantized tensor, weights included: the
        # MLP's two layers quantize their input and weight (fprop) and their
        # output gradient (wgrad; fc2's dgrad reuses the same cast), each with
        # an amax history of 1024 and a scale.
        assert cats["scaling_state"]["bytes"] == 6 * (1024 + 1) * 4
    else:
        assert cats["scaling_state"]["bytes"] == 0
    state = sum(c["bytes"] for n, c in cats.items() if n != "other_state")
    assert state == 16 * params + cats["scaling_state"]["bytes"]


@pytest.mark.parametrize("level", ["amp-bf16", "amp-fp16", "te"])
def test_python_compiles_and_trains_reference_levels(tmp_path, level):
    import msamp
    from msamp import graphs
    g = graphs.build("transformer-lm", dim=32, heads=2, seq=8, batch=2, ffn=64,
                     vocab=32, layers=1)
    step = msamp.compile(g, level, out_dir=tmp_path / "out")
    assert step.level == level
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["level"] == level
    gemms = step.gemms()
    if level == "te":
        linear = [x for x in gemms if x.kind in ("fprop", "dgrad", "wgrad")]
        assert linear and all(x.fp8 for x in linear)
        # Weights are delayed-scaled too: a scale and history per weight cast.
        names = {s["name"] for s in step.state}
        assert any(n.endswith(".fprop.weight.amax_history") for n in names)
        assert all(s["shape"] == [1024] for s in step.state
                   if s["name"].endswith(".amax_history"))
    else:
        half = "bf16" if level == "amp-bf16" else "f16"
        # autocast: every GEMM, the attention ones included, reads 16 bits.
        assert gemms and all((x.lhs, x.rhs, x.out) == (half, half, "f32")
                             and not x.fp8 for x in gemms), gemms
    losses = msamp.Trainer(step).fit(steps=3)
    assert np.all(np.isfinite(losses))


def test_amp_fp16_loss_scaler_follows_grad_scaler(tmp_path):
    """amp-fp16's dynamic loss scale against torch.amp.GradScaler's update
    rule (torch._amp_update_scale_, the kernel GradScaler.update runs) with
    growth_interval 3. In the graph above the output gradient of the wgrad
    GEMM is t: t * scale overflows fp16 (|t| * 65536 >= 65520 rounds to Inf)
    exactly when max|t| >= 1 at scale 2^16, so with max|t| in [1, 2) every
    step at 2^16 overflows and is skipped (w unchanged, scale halved), and
    three good steps at 2^15 grow it back."""
    import msamp
    torch = pytest.importorskip("torch")  # installed in CI (requirements.txt)
    M, N, K = 4, 2, 4
    rng = np.random.default_rng(11)
    w = signed(rng, (N, K), 0.5, 1.0)
    x = signed(rng, (M, K), 1.0, 2.0)
    t = (rng.choice([-1.0, 1.0], (M, N)) / 32).astype(np.float32)
    t[0, 0] = 1.5  # the largest output gradient: overflows at 2^16 only
    step = msamp.compile(GRAPH.format(M=M, N=N, K=K), "amp-fp16",
                         out_dir=tmp_path / "out", growth_interval=3)
    roles = {s["name"]: s["role"] for s in step.state}
    assert roles["loss_scale"] == roles["loss_scale.growth_tracker"] == "loss_scale"

    scale = torch.tensor([65536.0])
    tracker = torch.tensor([0], dtype=torch.int32)
    skipped = []
    with msamp.Session(step) as s:
        s.init(params={"fc.weight": w})
        for n in range(1, 10):
            before = s.param("fc.weight")
            s.step({"x": x, "t": t}, lr=0.01)
            after = s.param("fc.weight")
            found_inf = np.abs(t).max() * scale.item() >= 65520
            torch._amp_update_scale_(scale, tracker,
                                     torch.tensor([float(found_inf)]), 2.0, 0.5, 3)
            state = s.state_dict(roles=("loss_scale",))
            assert state["loss_scale"].item() == scale.item(), n
            assert state["loss_scale.growth_tracker"].item() == tracker.item(), n
            # A skipped step leaves the weights alone; a good one moves them.
            assert np.array_equal(before, after) == found_inf, n
            skipped.append(bool(found_inf))
        assert s.global_step == 9
    # Overflow at 2^16 on steps 1 and 5 and 9; three good steps in between.
    assert skipped == [True, False, False, False] * 2 + [True]
