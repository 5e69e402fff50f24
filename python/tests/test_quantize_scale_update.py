"""A delayed-scaling cast and its bookkeeping in one call
(msamp_rt_quantize_scale_update, docs/RuntimeABI.md 3.15) on the CPU
backend, the reference the CUDA backend's single-pass form is tested
against (unittests/CUDA/ScaleUpdateTest.cpp): bit for bit against an
independent restatement here (the amax of docs/RuntimeABI.md 3.3, the
history roll, the scale rules of docs/Numerics.md 2.1 and 2.2 from exact
exponents, the warm-up select, ml_dtypes' casts) and against the separate
entry points it replaces in the compiled step (msamp_rt_quantize and
msamp_rt_quantize_transpose with the scale chosen).
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

def _history_amax(history, algo):
    if algo == "most_recent":
        return float(history[0])
    if np.isnan(history).any():
        return math.nan
    return float(np.max(history))


def _inputs():
    rng = np.random.default_rng(15)
    normal = rng.standard_normal((48, 40)).astype(np.float32) * 3.0
    with_inf = normal.copy()
    with_inf[3, 5] = -np.inf
    with_nan = normal.copy()
    with_nan[7, 1] = np.nan
    return {"normal": normal, "all_zero": np.zeros((8, 16), np.float32),
            "large": (rng.standard_normal((8, 64)) * 1e30).astype(np.float32),
            "tiny": (rng.standard_normal((16, 24)) * 1e-39).astype(np.float32),
            "inf": with_inf, "nan": with_nan,
            "rank3": normal.reshape(4, 12, 40),
            "f16": normal.astype(np.float16),
            "empty": np.zeros((0, 8), np.float32)}


INPUTS = _inputs()
HISTORY = np.array([3.0, 500.0, 0.0, 7.5], np.float32)


@needs_runtime
@pytest.mark.parametrize("case", sorted(INPUTS))
@pytest.mark.parametrize("name", ["e4m3", "e5m2", "f16"])
@pytest.mark.parametrize("kind,algo,margin",
                         [("pow2", "max", 0), ("pow2", "most_recent", 1),
                          ("exact", "max", 0), ("exact", "most_recent", 2)])
@pytest.mark.parametrize("use_jit", [None, False, True])
def test_matches_an_independent_reference(case, name, kind, algo, margin,
                                          use_jit):
    x = INPUTS[case]
    previous = 0.5
    codes, hist, scale, scale_inv, next_scale = numerics.quantize_scale_update(
        x, HISTORY, previous, name, kind, algo, margin, use_jit)
    x32 = x.astype(np.float32)
    amax = _amax(x32)
    want_hist = np.concatenate([[np.float32(amax)], HISTORY[:-1]]).astype(
        np.float32)
    assert want_hist.tobytes() == hist.tobytes()
    jit = _scale(amax, name, kind, margin, previous)
    want_scale = jit if use_jit else np.float32(previous)
    assert np.float32(scale).tobytes() == want_scale.tobytes()
    assert np.float32(scale_inv).tobytes() == (np.float32(1) / want_scale).tobytes()
    want_next = _scale(_history_amax(want_hist, algo), name, kind, margin,
                       want_scale)
    assert np.float32(next_scale).tobytes() == want_next.tobytes()
    assert _same(codes, _codes(x32, want_scale, name), name)


@needs_runtime
@pytest.mark.parametrize("case", ["normal", "nan", "rank3", "f16", "empty"])
@pytest.mark.parametrize("use_jit", [False, True])
def test_both_layouts_are_the_separate_calls(case, use_jit):
    x = INPUTS[case]
    codes, _, scale, _, _, codes_t = numerics.quantize_scale_update(
        x, HISTORY, 2.0, "e5m2", use_jit=use_jit, transpose=True)
    want, want_t = numerics.quantize_transpose(x, scale, "e5m2")
    assert np.array_equal(codes, want)
    assert np.array_equal(codes_t, want_t)
    assert np.array_equal(codes, numerics.quantize(x, scale, "e5m2"))


@needs_runtime
def test_format_of_the_scale_may_differ_from_the_codes():
    # The scales use fp_max of format_dtype; the codes are out_dtype's.
    x = INPUTS["normal"]
    codes, _, scale, _, _ = numerics.quantize_scale_update(
        x, HISTORY, 1.0, "f16", use_jit=True, fmt_name="e4m3")
    assert scale == _scale(_amax(x), "e4m3", "pow2", 0, 1.0)
    assert _same(codes, _codes(x, scale, "f16"), "f16")


@needs_runtime
def test_just_in_time_and_unknown_flags_are_refused():
    rt = _native.libraries().runtime
    x = INPUTS["normal"]
    f = numerics.fmt("e4m3")
    hist = HISTORY.copy()
    bufs = [x, hist, np.array(1.0, np.float32), np.array(0, np.uint8),
            np.empty(x.shape, np.uint8), np.empty((), np.uint8),
            np.empty_like(hist)] + [np.zeros((), np.float32) for _ in range(3)]
    refs = [numerics._MemRef(b) for b in bufs]
    for flags in (0x4, 0x10):
        rt.msamp_rt_clear_error()
        rt._mlir_ciface_msamp_rt_quantize_scale_update(
            *(r.ptr for r in refs), numerics._code("f32"), f.code, 0, 0,
            f.code, 0, flags)
        assert rt.msamp_rt_get_last_error() != 0
        assert b"flags" in rt.msamp_rt_get_last_error_message()
        rt.msamp_rt_clear_error()
