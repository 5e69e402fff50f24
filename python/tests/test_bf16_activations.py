"""activations=bf16 (docs/Levels.md): forward activations stored in bf16,
every op computing in f32.

* Bit for bit at amp-bf16: a two-layer graph z1 = x @ w1^T, h = relu(z1 +
  b1), z2 = h @ w2^T, loss = sum(z2 * t), one SGD step at lr = 1, against a
  numpy / ml_dtypes reference that rounds (to nearest even) exactly the
  values the rule covers - the GEMM results z1, z2 and h, which feeds fc2 and
  the ReLU mask of the backward - and computes everything else in f32 (the
  AMP GEMMs round their operands as well). The data is drawn so that every
  GEMM and reduction of the reference is exact in f32 (asserted), so the
  BLAS's summation order is moot and the result must match exactly; the
  same data gives a different reference without the activation roundings,
  and a different compiled result with activations=f32.
* The FP8 levels train with it: the generator LM at O1 and O2, 50 steps,
  bf16 against f32 activations on the same seed and data. Tolerance, and
  why: bf16 keeps 8 significand bits, twice FP8 E4M3's 4, and the FP8 GEMMs
  already round every activation they read to 4 bits; measured, the mean of
  the last 5 losses moved by 0.01% (O1) and 0.07% (O2), single steps by up
  to 0.9%. The bound, 1% of the f32 run's mean, leaves a 14x margin and
  still fails on a real bug (a wrong widening or a rounded gradient or
  scale shows up as tens of percent, or as NaN).
* msamp.compile takes it as a keyword; O0 (all f32) refuses it.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

BUILD = os.environ.get("MSAMP_BUILD_DIR", os.path.join(ROOT, "build"))
MSAMP_RUN = os.path.join(BUILD, "bin", "msamp-run")

safetensors = pytest.importorskip("safetensors.numpy",
                                  reason="needs the safetensors package")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="needs ml_dtypes")
if not os.path.exists(MSAMP_RUN):
    pytest.skip(f"needs a build with msamp-run ({MSAMP_RUN} not found)",
                allow_module_level=True)

M, K, H, N = 4, 4, 4, 2

GRAPH = f"""
module attributes {{msamp.optimizer = {{kind = "sgd", lr = 1.0 : f64}}}} {{
  func.func @fwd_bwd(
      %w1: tensor<{H}x{K}xf32> {{msamp.role = "param", msamp.name = "fc1.weight"}},
      %b1: tensor<{H}xf32> {{msamp.role = "param", msamp.name = "fc1.bias"}},
      %w2: tensor<{N}x{H}xf32> {{msamp.role = "param", msamp.name = "fc2.weight"}},
      %x: tensor<{M}x{K}xf32> {{msamp.role = "input", msamp.name = "x"}},
      %t: tensor<{M}x{N}xf32> {{msamp.role = "target", msamp.name = "t"}})
      -> (tensor<f32> {{msamp.role = "loss"}},
          tensor<{H}x{K}xf32> {{msamp.role = "grad", msamp.name = "fc1.weight"}},
          tensor<{H}xf32> {{msamp.role = "grad", msamp.name = "fc1.bias"}},
          tensor<{N}x{H}xf32> {{msamp.role = "grad", msamp.name = "fc2.weight"}})
      attributes {{msamp.kind = "forward_backward"}} {{
    %zero = arith.constant 0.0 : f32
    %emh = tensor.empty() : tensor<{M}x{H}xf32>
    %fmh = linalg.fill ins(%zero : f32) outs(%emh : tensor<{M}x{H}xf32>) -> tensor<{M}x{H}xf32>
    %z1 = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                         affine_map<(m, n, k) -> (n, k)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w1 : tensor<{M}x{K}xf32>, tensor<{H}x{K}xf32>)
        outs(%fmh : tensor<{M}x{H}xf32>) -> tensor<{M}x{H}xf32>
    %h = linalg.generic {{
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                         affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}}
        ins(%z1, %b1 : tensor<{M}x{H}xf32>, tensor<{H}xf32>) outs(%emh : tensor<{M}x{H}xf32>) {{
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        %r = arith.maximumf %s, %zero : f32
        linalg.yield %r : f32
    }} -> tensor<{M}x{H}xf32>
    %emn = tensor.empty() : tensor<{M}x{N}xf32>
    %fmn = linalg.fill ins(%zero : f32) outs(%emn : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
    %z2 = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                         affine_map<(m, n, k) -> (n, k)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%h, %w2 : tensor<{M}x{H}xf32>, tensor<{N}x{H}xf32>)
        outs(%fmn : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {{
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                         affine_map<(i, j) -> ()>],
        iterator_types = ["reduction", "reduction"]}}
        ins(%z2, %t : tensor<{M}x{N}xf32>, tensor<{M}x{N}xf32>) outs(%f0 : tensor<f32>) {{
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
    }} -> tensor<f32>
    // d loss / d z2 = t + 0.0: a backward value, not the target itself.
    %dz2 = linalg.generic {{
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}}
        ins(%t : tensor<{M}x{N}xf32>) outs(%emn : tensor<{M}x{N}xf32>) {{
      ^bb0(%a: f32, %o: f32):
        %g = arith.addf %a, %zero : f32
        linalg.yield %g : f32
    }} -> tensor<{M}x{N}xf32>
    %enh = tensor.empty() : tensor<{N}x{H}xf32>
    %fnh = linalg.fill ins(%zero : f32) outs(%enh : tensor<{N}x{H}xf32>) -> tensor<{N}x{H}xf32>
    %gw2 = linalg.matmul
        indexing_maps = [affine_map<(n, k, m) -> (m, n)>,
                         affine_map<(n, k, m) -> (m, k)>,
                         affine_map<(n, k, m) -> (n, k)>]
        ins(%dz2, %h : tensor<{M}x{N}xf32>, tensor<{M}x{H}xf32>)
        outs(%fnh : tensor<{N}x{H}xf32>) -> tensor<{N}x{H}xf32>
    %dh = linalg.matmul
        ins(%dz2, %w2 : tensor<{M}x{N}xf32>, tensor<{N}x{H}xf32>)
        outs(%fmh : tensor<{M}x{H}xf32>) -> tensor<{M}x{H}xf32>
    %dz1 = linalg.generic {{
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                         affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}}
        ins(%dh, %h : tensor<{M}x{H}xf32>, tensor<{M}x{H}xf32>) outs(%emh : tensor<{M}x{H}xf32>) {{
      ^bb0(%g: f32, %a: f32, %o: f32):
        %pos = arith.cmpf ogt, %a, %zero : f32
        %r = arith.select %pos, %g, %zero : f32
        linalg.yield %r : f32
    }} -> tensor<{M}x{H}xf32>
    %eh = tensor.empty() : tensor<{H}xf32>
    %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<{H}xf32>) -> tensor<{H}xf32>
    %gb1 = linalg.reduce ins(%dz1 : tensor<{M}x{H}xf32>) outs(%fh : tensor<{H}xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {{
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }}
    %ehk = tensor.empty() : tensor<{H}x{K}xf32>
    %fhk = linalg.fill ins(%zero : f32) outs(%ehk : tensor<{H}x{K}xf32>) -> tensor<{H}x{K}xf32>
    %gw1 = linalg.matmul
        indexing_maps = [affine_map<(n, k, m) -> (m, n)>,
                         affine_map<(n, k, m) -> (m, k)>,
                         affine_map<(n, k, m) -> (n, k)>]
        ins(%dz1, %x : tensor<{M}x{H}xf32>, tensor<{M}x{K}xf32>)
        outs(%fhk : tensor<{H}x{K}xf32>) -> tensor<{H}x{K}xf32>
    return %loss, %gw1, %gb1, %gw2
        : tensor<f32>, tensor<{H}x{K}xf32>, tensor<{H}xf32>, tensor<{N}x{H}xf32>
  }}
}}
"""

PARAMS = ("fc1.weight", "fc1.bias", "fc2.weight")


def bf16(a):
    """Round to nearest even to bf16, back to f32 (torch's .to(bfloat16))."""
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def exact(r):
    """f64 values asserted to be exact in f32 (so any summation order gives
    them), as f32."""
    assert np.array_equal(r.astype(np.float32).astype(np.float64), r)
    return r.astype(np.float32)


def exact_gemm(a, b):
    return exact(a.astype(np.float64) @ b.astype(np.float64))


def reference(w1, b1, w2, x, t, round_activations):
    """The step at amp-bf16: GEMM operands rounded, f32 elementwise; with
    round_activations the covered values z1, h, z2 are stored in bf16."""
    keep = bf16 if round_activations else (lambda a: a)
    z1 = keep(exact_gemm(bf16(x), bf16(w1).T))
    h = keep(np.maximum(z1 + b1, np.float32(0)))  # f32 add, as in the step
    z2 = keep(exact_gemm(bf16(h), bf16(w2).T))
    loss = exact(np.array((z2.astype(np.float64) * t).sum()))
    gw2 = exact_gemm(bf16(t).T, bf16(h))
    dh = exact_gemm(bf16(t), bf16(w2))
    dz1 = np.where(h > 0, dh, np.float32(0)).astype(np.float32)
    gb1 = exact(dz1.astype(np.float64).sum(axis=0))
    gw1 = exact_gemm(bf16(dz1).T, bf16(x))
    return loss, {"fc1.weight": w1 - gw1, "fc1.bias": b1 - gb1,
                  "fc2.weight": w2 - gw2}


def signed(rng, shape, low, high):
    v = rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)
    return v.astype(np.float32)


def draw():
    """The first seed whose data keeps every reference sum exact (asserted
    by reference()) and makes the activation roundings matter."""
    for seed in range(200):
        rng = np.random.default_rng(seed)
        w1 = signed(rng, (H, K), 0.5, 1.0)
        b1 = signed(rng, (H,), 0.5, 1.0)
        w2 = signed(rng, (N, H), 0.5, 1.0)
        x = signed(rng, (M, K), 1.0, 2.0)
        t = (rng.choice([-1.0, 1.0], (M, N)) / 32).astype(np.float32)
        try:
            rounded = reference(w1, b1, w2, x, t, True)
        except AssertionError:
            continue
        # Without the activation roundings: only the GEMM operands rounded
        # (the f32 sums are near-exact here; only the difference matters).
        z1 = bf16(x) @ bf16(w1).T
        h = np.maximum(z1 + b1, np.float32(0))
        z2 = bf16(h) @ bf16(w2).T
        if (rounded[0] != np.float32((z2.astype(np.float64) * t).sum())
                and (h > 0).sum() > M and not np.array_equal(
                    rounded[1]["fc2.weight"], w2 - bf16(t).T @ bf16(h))):
            return (w1, b1, w2, x, t), rounded
    raise AssertionError("no seed gives exact reference sums")


def run_step(tmp_path, level, options, params, x, t):
    tmp_path.mkdir(exist_ok=True)
    graph = tmp_path / "graph.mlir"
    graph.write_text(GRAPH)
    safetensors.save_file(dict(zip(PARAMS, params)),
                          str(tmp_path / "init.safetensors"))
    safetensors.save_file({"x": x[None], "t": t[None]},
                          str(tmp_path / "data.safetensors"))
    env = dict(os.environ, MSAMP_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([MSAMP_RUN, str(graph), "--opt-level", level,
                    "--pipeline-options", options, "--steps", "1",
                    "--lr", "1.0", "--init", str(tmp_path / "init.safetensors"),
                    "--data", str(tmp_path / "data.safetensors"), "--quiet",
                    "--log-json", str(tmp_path / "log.jsonl"),
                    "--save", str(tmp_path / "ck.safetensors")],
                   check=True, env=env)
    ck = safetensors.load_file(str(tmp_path / "ck.safetensors"))
    log = json.loads((tmp_path / "log.jsonl").read_text().splitlines()[0])
    return np.float32(log["loss"]), ck


def test_bf16_activations_bit_exact(tmp_path):
    (w1, b1, w2, x, t), (loss, updated) = draw()
    got_loss, got = run_step(tmp_path / "bf16", "amp-bf16",
                             "activations=bf16", (w1, b1, w2), x, t)
    assert got_loss == loss, (got_loss, loss)
    for name in PARAMS:
        np.testing.assert_array_equal(got[name], updated[name], err_msg=name)
    # The option, not the data, rounds: f32 activations give another step.
    f32_loss, f32 = run_step(tmp_path / "f32", "amp-bf16", "activations=f32",
                             (w1, b1, w2), x, t)
    assert f32_loss != got_loss
    assert not np.array_equal(f32["fc2.weight"], got["fc2.weight"])


def test_compile_keyword(tmp_path):
    """msamp.compile(..., activations="bf16"): the forward GEMMs write their
    results in bf16 (the covered GEMM outputs), the backward ones in f32."""
    from msamp import compiler
    step = compiler.compile(GRAPH, "amp-bf16", out_dir=tmp_path / "c",
                            activations="bf16")
    outs = {(g.kind, g.layer): g.out for g in step.gemms()}
    assert outs[("fprop", "fc1")] == outs[("fprop", "fc2")] == "bf16", outs
    assert outs[("wgrad", "fc1")] == outs[("dgrad", "fc2")] == "f32", outs
    f32 = compiler.compile(GRAPH, "amp-bf16", out_dir=tmp_path / "f")
    assert {g.out for g in f32.gemms()} == {"f32"}


def test_o0_refuses_bf16_activations(tmp_path):
    from msamp import compiler
    with pytest.raises(compiler.CompileError, match="activations"):
        compiler.compile(GRAPH, "O0", out_dir=tmp_path / "o0",
                         activations="bf16")


@pytest.fixture(scope="module")
def lm_losses(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lm")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
               MSAMP_CACHE_DIR=str(tmp / "cache"))
    graph, data = tmp / "lm.mlir", tmp / "data.safetensors"
    subprocess.run([sys.executable, "-m", "msamp.graphs", "transformer-lm",
                    "--layers", "2", "--dim", "64", "--heads", "4", "--seq", "32",
                    "--batch", "8", "--ffn", "256", "--vocab", "64", "--lr", "3e-3",
                    "-o", str(graph)], check=True, env=env)
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "examples", "tiny-lm", "make_data.py"),
                    "--vocab", "64", "--seq", "32", "--batch", "8", "--batches", "32",
                    "-o", str(data)], check=True, env=env, capture_output=True)
    result = {}
    for level in ("O1", "O2"):
        for activations in ("f32", "bf16"):
            log = tmp / f"{level}-{activations}.jsonl"
            subprocess.run([MSAMP_RUN, str(graph), "--opt-level", level,
                            "--pipeline-options", f"activations={activations}",
                            "--steps", "50", "--seed", "0", "--data", str(data),
                            "--quiet", "--log-json", str(log)],
                           check=True, env=env)
            result[level, activations] = [
                json.loads(line)["loss"] for line in log.read_text().splitlines()]
    return result


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_fp8_level_trains_with_bf16_activations(lm_losses, level):
    f32, bf16_run = lm_losses[level, "f32"], lm_losses[level, "bf16"]
    assert len(bf16_run) == 50 and all(np.isfinite(bf16_run))
    tail_f32, tail_bf16 = sum(f32[-5:]) / 5, sum(bf16_run[-5:]) / 5
    assert tail_bf16 < 0.5 * bf16_run[0]  # it learns (4.16 -> ~0.78)
    assert abs(tail_bf16 - tail_f32) / tail_f32 <= 0.01, (tail_bf16, tail_f32)
    # The option took effect: the activations' rounding changes the losses.
    assert bf16_run != f32
