"""The fused just-in-time cast (msamp_rt_quantize_jit) on the CPU backend,
bit for bit against ml_dtypes and an independent restatement of the scale
rule (docs/Numerics.md 2.1, 2.2), and against the three separate entry points
it replaces (amax, compute_scale most_recent, quantize).

The scale rule is restated here from the exponents (math.frexp, exact on f32
values) rather than from np.log2, whose rounding the runtime avoids; the
casts come from ml_dtypes after clamping to +-max (ml_dtypes overflows to
NaN/Inf where the runtime saturates, docs/Numerics.md), f16 from numpy.
"""

import math
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from msamp import _native, numerics  # noqa: E402
from scaling_reference import amax as _amax  # noqa: E402
from scaling_reference import codes as _codes  # noqa: E402
from scaling_reference import same_codes as _same  # noqa: E402
from scaling_reference import scale as _scale  # noqa: E402

ml_dtypes = pytest.importorskip("ml_dtypes", reason="needs ml_dtypes")
_OK, _WHY = _native.available()
needs_runtime = pytest.mark.skipif(not _OK, reason=_WHY)

def _inputs():
    rng = np.random.default_rng(23)
    normal = rng.standard_normal((48, 40)).astype(np.float32) * 3.0
    with_zeros = normal.copy()
    with_zeros[rng.random(normal.shape) < 0.2] = 0.0
    with_zeros[0, 0] = -0.0
    # f32 subnormals and the smallest normals: the scale is clamped to 2^127.
    denormal = (rng.standard_normal((16, 24)) * 1e-39).astype(np.float32)
    tiny_normal = (rng.standard_normal((16, 24)) * 1e-36).astype(np.float32)
    large = (rng.standard_normal((8, 64)) * 1e30).astype(np.float32)
    with_inf = normal.copy()
    with_inf[3, 5] = -np.inf
    with_nan = normal.copy()
    with_nan[7, 1] = np.nan
    return {"normal": normal, "zeros": with_zeros, "all_zero": np.zeros((8, 16), np.float32),
            "denormal": denormal, "tiny_normal": tiny_normal, "large": large,
            "inf": with_inf, "nan": with_nan, "rank3": normal.reshape(4, 12, 40),
            "empty": np.zeros((0, 8), np.float32)}


INPUTS = _inputs()


@needs_runtime
@pytest.mark.parametrize("case", sorted(INPUTS))
@pytest.mark.parametrize("name", ["e4m3", "e5m2", "f16"])
@pytest.mark.parametrize("kind,margin", [("pow2", 0), ("pow2", 2), ("exact", 0), ("exact", 1)])
def test_matches_ml_dtypes_and_the_scale_rule(case, name, kind, margin):
    x = INPUTS[case]
    previous = 0.5
    codes, scale, scale_inv = numerics.quantize_jit(x, name, kind, margin, previous)
    want_scale = _scale(_amax(x), name, kind, margin, previous)
    assert np.float32(scale).tobytes() == want_scale.tobytes(), (scale, want_scale)
    assert np.float32(scale_inv).tobytes() == (np.float32(1) / want_scale).tobytes()
    assert _same(codes, _codes(x, want_scale, name), name)
    # Identical to the separate entry points: amax, then quantize with the
    # scale (compute_scale's rule, restated above, checked equal).
    assert _same(codes, numerics.quantize(x, scale, name), name)


@needs_runtime
def test_no_usable_amax_keeps_the_previous_scale():
    for case, previous in (("all_zero", 4.0), ("inf", 0.25), ("nan", 2.0), ("empty", 8.0)):
        _, scale, scale_inv = numerics.quantize_jit(INPUTS[case], "e4m3", previous=previous)
        assert (scale, scale_inv) == (previous, 1.0 / previous), case
    # Inf saturates to +-448 at the kept scale; NaN stays NaN.
    codes, _, _ = numerics.quantize_jit(INPUTS["inf"], "e4m3", previous=0.25)
    assert numerics.decode(codes, "e4m3")[3, 5] == -448.0
    codes, _, _ = numerics.quantize_jit(INPUTS["nan"], "e4m3")
    assert np.isnan(numerics.decode(codes, "e4m3")[7, 1])


@needs_runtime
def test_pow2_scale_puts_the_amax_just_below_max():
    x = INPUTS["normal"]
    codes, scale, _ = numerics.quantize_jit(x, "e4m3")
    assert scale == 2.0 ** math.floor(math.log2(448.0 / _amax(x)))
    top = np.max(np.abs(numerics.decode(codes, "e4m3")))
    assert 224.0 <= top <= 448.0


@needs_runtime
@pytest.mark.parametrize("case", ["normal", "zeros", "rank3", "nan"])
@pytest.mark.parametrize("name", ["e4m3", "f16"])
def test_transposed_layout_holds_the_same_codes(case, name):
    x = INPUTS[case]
    codes, scale, _, codes_t = numerics.quantize_jit(x, name, transpose=True)
    plain, plain_scale, _ = numerics.quantize_jit(x, name)
    assert scale == plain_scale
    bits = np.uint16 if name == "f16" else np.uint8
    assert np.array_equal(codes.view(bits), plain.view(bits))
    cols = x.shape[-1]
    assert np.array_equal(codes_t.view(bits), codes.view(bits).reshape(-1, cols).T)


@needs_runtime
def test_f16_input_is_widened_exactly():
    x = INPUTS["normal"].astype(np.float16)
    codes, scale, _ = numerics.quantize_jit(x, "e4m3")
    assert scale == _scale(_amax(x.astype(np.float32)), "e4m3", "pow2", 0, 1.0)
    assert _same(codes, _codes(x.astype(np.float32), scale, "e4m3"), "e4m3")


@needs_runtime
def test_bad_arguments_are_refused(monkeypatch):
    monkeypatch.setitem(numerics._SCALE_KINDS, "bad", 7)
    with pytest.raises(RuntimeError, match="kind 7 is neither 0"):
        numerics.quantize_jit(INPUTS["normal"], "e4m3", kind="bad")
