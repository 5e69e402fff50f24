"""The runtime's FP8 casts against ml_dtypes, on every f16 value.

msamp.numerics calls the runtime's C ABI (_mlir_ciface_msamp_rt_quantize
with hand-built memref descriptors), i.e. exactly the code compiled steps
call. ml_dtypes' casts round to nearest even like the runtime but do not
saturate (E4M3FN overflows to NaN, E5M2 to Inf), so inputs are clamped to
+-max first; with that, the bytes must be identical for all 65536 f16
patterns, NaNs compared as NaN (their payload bits may differ).
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from msamp import _native, numerics  # noqa: E402

ml_dtypes = pytest.importorskip("ml_dtypes", reason="needs ml_dtypes")
_OK, _WHY = _native.available()
needs_runtime = pytest.mark.skipif(not _OK, reason=_WHY)

ALL_F16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
ML_TYPES = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _reference(x32, name):
    f = numerics.fmt(name)
    clamped = np.where(np.isnan(x32), x32, np.clip(x32, -f.max, f.max))
    with np.errstate(invalid="ignore"):  # NaN inputs: NaN out, as wanted
        return clamped.astype(ML_TYPES[name]).view(np.uint8)


def _same(got, want, name):
    a, b = numerics.decode(got, name), numerics.decode(want, name)
    return (got == want) | (np.isnan(a) & np.isnan(b))


@needs_runtime
@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
def test_quantize_every_f16_matches_ml_dtypes(name):
    got = numerics.quantize(ALL_F16, 1.0, name)  # f16 input, widened exactly
    want = _reference(ALL_F16.astype(np.float32), name)
    same = _same(got, want, name)
    bad = np.flatnonzero(~same)
    assert bad.size == 0, (f"{bad.size} mismatches, e.g. f16 {ALL_F16[bad[:5]]}: "
                           f"runtime {got[bad[:5]]} ml_dtypes {want[bad[:5]]}")
    # The f32 path of the kernel agrees with its f16 path.
    assert np.array_equal(numerics.quantize(ALL_F16.astype(np.float32), 1.0, name), got)


@needs_runtime
@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("scale", [2.0 ** -7, 3.0, 2.0 ** 10])
def test_scaled_quantize_matches_ml_dtypes(name, scale):
    """quantize(x, s) = Q(f32(x * s)): one f32 product, then the cast."""
    x32 = ALL_F16.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        product = x32 * np.float32(scale)
    got = numerics.quantize(ALL_F16, scale, name)
    assert np.all(_same(got, _reference(product, name), name))


@needs_runtime
@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
def test_decode_and_dequantize_every_code(name):
    codes = np.arange(256, dtype=np.uint8)
    exact = codes.view(ML_TYPES[name]).astype(np.float32)
    assert np.array_equal(numerics.decode(codes, name), exact, equal_nan=True)
    assert np.array_equal(numerics.dequantize(codes, 1.0, name), exact, equal_nan=True)
    assert np.array_equal(numerics.dequantize(codes, 0.25, name),
                          exact * np.float32(0.25), equal_nan=True)


@needs_runtime
def test_f16_cast_and_amax():
    x = np.array([1.0, 65504.0, 65520.0, -1e-8, np.float32(1 / 3)], np.float32)
    got = numerics.quantize(x, 1.0, "f16")
    assert got.dtype == np.float16
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)  # IEEE: 65520 rounds to inf
    np.testing.assert_array_equal(got, want)
    assert numerics.amax(np.array([-3.0, 2.0], np.float32)) == 3.0
    assert np.isnan(numerics.amax(np.array([1.0, np.nan], np.float32)))


def test_decode_without_native_code():
    """decode is numpy only: usable on checkpoints without a build."""
    assert numerics.decode(np.array([0x7E, 0x7F, 0x01], np.uint8), "f8E4M3FN").tolist()[0] == 448.0
    assert np.isnan(numerics.decode(np.array([0x7F], np.uint8), "e4m3")[0])
    assert numerics.decode(np.array([0x7C], np.uint8), "e5m2")[0] == np.inf
    assert numerics.decode(np.array([0x3F80], np.uint16), "bf16")[0] == 1.0
    assert numerics.pow2_scale(3.0, "e4m3") == 128.0
    assert numerics.pow2_scale(0.0, "e4m3", previous=4.0) == 4.0
