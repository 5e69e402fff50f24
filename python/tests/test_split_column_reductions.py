"""Column reductions over many rows run in two stages (issue #23).

msamp-split-column-reductions splits a reduction over R rows of a [R, P]
buffer into C chunks of S = R / C rows: stage 1 reduces each chunk into
[C, P] partials, stage 2 the C partials into the result, in chunk order. It
runs in both lowerings, so this checks it on the CPU:

* the CPU lowering's remark names the split (C x S = R, C >= 2), so the
  graphs below do take the two-stage path;
* the step's result equals a numpy float32 emulation of exactly that
  order bit for bit (sequential sums within each chunk, then over the
  chunks): a wrong chunk view would sum other elements, a wrong order other
  roundings;
* and it stays within the f32 bound of that order against numpy's f64
  result, |error| <= (S + C) eps sum |x|, tighter than the sequential
  sum's R eps sum |x|.

The reduction y is read back through a one-param graph: the loss is
sum(w * y) and its gradient (returned by the graph) y, so one SGD step with
lr 1 from w = 0 leaves w = -y exactly.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

# name: (rows, columns, body, init); body over %a (x) and %b (z), %acc.
CASES = {
    # a bias gradient: 4096 tokens, C a power of two
    "bias_grad": (4096, 48, "%s = arith.addf %a, %acc : f32", "0.0"),
    # a LayerNorm weight gradient, sum of x * z; 3072 = 3 x 2^10 rows
    "layernorm_grad": (3072, 100, "%m = arith.mulf %a, %b : f32\n"
                       "          %s = arith.addf %acc, %m : f32", "0.0"),
    # a column max (exact in any order), init -inf
    "column_max": (4096, 48, "%s = arith.maximumf %a, %acc : f32", "0xFF800000"),
}


def graph(rows, cols, body, init):
    x, y = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}xf32>"
    return f'''module attributes {{msamp.optimizer = {{kind = "sgd", lr = 1.0 : f64}}}} {{
  func.func @fwd_bwd(%w: {y} {{msamp.role = "param", msamp.name = "w"}},
                     %x: {x} {{msamp.role = "input", msamp.name = "x"}},
                     %z: {x} {{msamp.role = "input", msamp.name = "z"}})
      -> (tensor<f32> {{msamp.role = "loss"}}, {y} {{msamp.role = "grad", msamp.name = "w"}})
      attributes {{msamp.kind = "forward_backward"}} {{
    %i = arith.constant {init} : f32
    %z0 = arith.constant 0.0 : f32
    %e = tensor.empty() : {y}
    %f = linalg.fill ins(%i : f32) outs(%e : {y}) -> {y}
    %y = linalg.generic {{indexing_maps = [affine_map<(r, p) -> (r, p)>,
                                          affine_map<(r, p) -> (r, p)>,
                                          affine_map<(r, p) -> (p)>],
                         iterator_types = ["reduction", "parallel"]}}
        ins(%x, %z : {x}, {x}) outs(%f : {y}) {{
        ^bb0(%a: f32, %b: f32, %acc: f32):
          {body}
          linalg.yield %s : f32
    }} -> {y}
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%z0 : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {{indexing_maps = [affine_map<(p) -> (p)>, affine_map<(p) -> (p)>,
                                          affine_map<(p) -> ()>],
                         iterator_types = ["reduction"]}}
        ins(%w, %y : {y}, {y}) outs(%f0 : tensor<f32>) {{
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %t = arith.addf %m, %acc : f32
          linalg.yield %t : f32
    }} -> tensor<f32>
    return %l, %y : tensor<f32>, {y}
  }}
}}
'''


def _chunks(text, rows, cols, tmp_path):
    """C from the CPU lowering's remark for the [rows, cols] reduction."""
    opt = str(_native.find_tool("msamp-opt"))
    src = tmp_path / "g.mlir"
    src.write_text(text)
    o0 = subprocess.run([opt, "--msamp-o0", str(src)], check=True,
                        capture_output=True, text=True).stdout
    remarks = subprocess.run(
        [opt, "--msamp-lower-to-llvm", "--remarks-filter=msamp", "-o", os.devnull],
        input=o0, check=True, capture_output=True, text=True).stderr
    found = re.findall(rf"{rows} rows x {cols} outputs -> (\d+) x (\d+)", remarks)
    assert len(found) == 1, remarks
    chunks, per_chunk = map(int, found[0])
    assert chunks >= 2 and chunks * per_chunk == rows, found
    return chunks


def _two_stage(terms, init, chunks, combine):
    """The pass's order in float32: each chunk's terms in order from its
    first, then init and the partials in chunk order."""
    rows, cols = terms.shape
    if combine == "add":
        seq = lambda v, axis: np.add.accumulate(v, axis=axis, dtype=np.float32)  # noqa: E731
    else:
        seq = lambda v, axis: np.maximum.accumulate(v, axis=axis)  # noqa: E731
    parts = seq(terms.reshape(chunks, rows // chunks, cols), 1)[:, -1, :]
    return seq(np.concatenate([init[None, :], parts]), 0)[-1]


@pytest.mark.parametrize("name", sorted(CASES))
def test_two_stage_column_reduction(name, tmp_path):
    rows, cols, body, init_text = CASES[name]
    text = graph(rows, cols, body, init_text)
    chunks = _chunks(text, rows, cols, tmp_path)

    rng = np.random.default_rng(23)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    z = rng.standard_normal((rows, cols)).astype(np.float32)
    step = msamp.compile(text, "O0", out_dir=tmp_path / "step")
    with step.session() as session:
        session.init(params={"w": np.zeros(cols, np.float32)})
        session.step({"x": x, "z": z})
        got = -session.param("w")

    if name == "column_max":
        init = np.full(cols, -np.inf, np.float32)
        np.testing.assert_array_equal(got, x.max(axis=0))
        np.testing.assert_array_equal(got, _two_stage(x, init, chunks, "max"))
        return
    terms = x * z if "mulf" in body else x
    init = np.zeros(cols, np.float32)
    np.testing.assert_array_equal(got, _two_stage(terms, init, chunks, "add"))
    want = terms.astype(np.float64).sum(axis=0)
    bound = np.abs(terms).astype(np.float64).sum(axis=0)
    err = np.abs(got.astype(np.float64) - want)
    eps = np.finfo(np.float32).eps
    assert np.all(err <= (rows // chunks + chunks) * eps * bound), (
        name, float(np.max(err / bound)))
    # The sequential order rounds differently somewhere: the test tells
    # the two orders apart.
    sequential = np.add.accumulate(terms, axis=0, dtype=np.float32)[-1]
    assert np.any(sequential != got)
