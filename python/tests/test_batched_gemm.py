"""Contractions in any layout run as one (batched) library GEMM (issue #23).

Each case is an einsum-like contraction with batch dims, several M/N dims or
operands in permuted layouts, the forms linalg-fuse-elementwise-ops leaves
(attention's (b, h) batch dims). msamp-normalize-contractions rewrites each
into one msamp_rt_gemm call (checked on the IR that the CPU lowering
produces), and the step's result must equal numpy's f64 einsum of the same
f32 inputs within f32 accumulation error: a wrong collapse, transpose or
orientation would move values to other positions.

The contraction y is read back through a one-param graph: the loss is
sum(w * y) and its gradient (returned by the graph) y, so one SGD step with
lr 1 from w = 0 leaves w = -y exactly.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

ROOT = Path(__file__).resolve().parents[2]
SIZES = {"b": 2, "h": 3, "i": 5, "j": 4, "d": 6, "e": 7, "c": 3}

# spec, and whether the pass must copy an operand (False: views only).
CASES = {
    # attention scores, stored [b, h, ...] as after the head permutes: views
    "scores": "bhid,bhjd->bhij",
    # attention context reading v and writing y in [b, s, h, d]: two copies
    "context": "bhij,bjhe->bihe",
    # a projection with the weight viewed [heads, head_dim, dim]
    "projection": "bid,hed->bihe",
    # batch dims in the middle, in different orders, K first in lhs
    "scattered": "dbic,cjbd->jcbi",
    # the transposed result orientation: y[b, j, i] (B^T A^T)
    "transposed_out": "bid,bjd->bji",
}


def _maps(spec):
    (lhs, rhs), out = spec.split("->")[0].split(","), spec.split("->")[1]
    loops = list(out) + [c for c in dict.fromkeys(lhs + rhs) if c not in out]
    dims = {c: f"d{n}" for n, c in enumerate(loops)}
    domain = "(" + ", ".join(dims[c] for c in loops) + ")"
    maps = [f"affine_map<{domain} -> ({', '.join(dims[c] for c in t)})>"
            for t in (lhs, rhs, out)]
    iterators = ", ".join('"parallel"' if c in out else '"reduction"' for c in loops)
    return lhs, rhs, out, maps, iterators


def _type(term):
    return "tensor<" + "x".join(str(SIZES[c]) for c in term) + "xf32>"


def graph(spec):
    lhs, rhs, out, maps, iterators = _maps(spec)
    flat = int(np.prod([SIZES[c] for c in out]))
    yt, ft = _type(out), f"tensor<{flat}xf32>"
    collapse = "[[" + ", ".join(str(n) for n in range(len(out))) + "]]"
    return f'''module attributes {{msamp.optimizer = {{kind = "sgd", lr = 1.0 : f64}}}} {{
  func.func @fwd_bwd(%w: {ft} {{msamp.role = "param", msamp.name = "w"}},
                     %a: {_type(lhs)} {{msamp.role = "input", msamp.name = "a"}},
                     %b: {_type(rhs)} {{msamp.role = "input", msamp.name = "b"}})
      -> (tensor<f32> {{msamp.role = "loss"}}, {ft} {{msamp.role = "grad", msamp.name = "w"}})
      attributes {{msamp.kind = "forward_backward"}} {{
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : {yt}
    %f = linalg.fill ins(%z : f32) outs(%e : {yt}) -> {yt}
    %y = linalg.generic {{indexing_maps = [{", ".join(maps)}],
                         iterator_types = [{iterators}]}}
        ins(%a, %b : {_type(lhs)}, {_type(rhs)}) outs(%f : {yt}) {{
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %s = arith.addf %acc, %m : f32
          linalg.yield %s : f32
    }} -> {yt}
    %yf = tensor.collapse_shape %y {collapse} : {yt} into {ft}
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                          affine_map<(i) -> ()>],
                         iterator_types = ["reduction"]}}
        ins(%w, %yf : {ft}, {ft}) outs(%f0 : tensor<f32>) {{
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %t = arith.addf %m, %acc : f32
          linalg.yield %t : f32
    }} -> tensor<f32>
    return %l, %yf : tensor<f32>, {ft}
  }}
}}
'''


def _contractions_after_lowering(text, tmp_path):
    """The counts of scripts/count_contractions.py on the CPU lowering."""
    opt = str(_native.find_tool("msamp-opt"))
    src = tmp_path / "g.mlir"
    src.write_text(text)
    o0 = subprocess.run([opt, "--msamp-o0", str(src)], check=True,
                        capture_output=True, text=True).stdout
    after = subprocess.run(
        [opt, "--msamp-lower-to-llvm",
         "--mlir-print-ir-after=convert-msamp-to-runtime", "-o", os.devnull],
        input=o0, check=True, capture_output=True, text=True).stderr
    (tmp_path / "after.mlir").write_text(after)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "count_contractions.py"),
                          str(tmp_path / "after.mlir")],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_contraction_is_one_gemm_equal_to_numpy(name, tmp_path):
    spec = CASES[name]
    lhs, rhs, out, _, _ = _maps(spec)
    text = graph(spec)

    counts = _contractions_after_lowering(text, tmp_path)
    assert counts["gemm_calls"] == 1, counts
    # Only the loss's dot product (no parallel dim) is left as a loop.
    left = [c for c in counts["loop_shapes"] if "parallel" in c["iterators"]]
    assert left == [], counts

    rng = np.random.default_rng(23)
    a = rng.standard_normal([SIZES[c] for c in lhs]).astype(np.float32)
    b = rng.standard_normal([SIZES[c] for c in rhs]).astype(np.float32)
    want = np.einsum(spec, a.astype(np.float64), b.astype(np.float64)).reshape(-1)
    bound = np.einsum(spec, np.abs(a).astype(np.float64),
                      np.abs(b).astype(np.float64)).reshape(-1)

    step = msamp.compile(text, "O0", out_dir=tmp_path / "step")
    with step.session() as session:
        session.init(params={"w": np.zeros(want.size, np.float32)})
        session.step({"a": a, "b": b})
        got = -session.param("w").astype(np.float64)
    # f32 accumulation of K products: |error| <= K * eps * sum |a||b|.
    k = int(np.prod([SIZES[c] for c in set(lhs) & set(rhs) - set(out)]))
    err = np.abs(got - want)
    assert np.all(err <= (k + 1) * np.finfo(np.float32).eps * bound + 1e-30), (
        name, float(np.max(err / np.maximum(bound, 1e-30))))
    # And not trivially: the values are where numpy has them.
    assert np.corrcoef(got, want)[0, 1] > 0.999999
