"""The scaled cast into both operand layouts (msamp_rt_quantize_transpose,
docs/RuntimeABI.md 3.14) on the CPU backend, the reference the CUDA kernel
is tested against (unittests/CUDA/QuantizeTransposeTest.cpp): its codes are
msamp_rt_quantize's bit for bit (and ml_dtypes' for finite values), and its
transposed output holds the same codes with the last dimension outermost.
Shapes that are no multiple of a 32 x 32 or 64 x 64 tile, one row, one
column, rank 3, empty; f32 and f16 inputs; E4M3, E5M2 and f16 outputs; a
scale that saturates; bad descriptors are refused with a message.
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

ML_TYPES = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
SHAPES = [(301, 997), (64, 64), (65, 63), (1, 77), (77, 1), (3, 33, 65),
          (0, 16), (16, 0)]


def _data(shape, seed, specials=True):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 12, n))).astype(
        np.float32)
    if specials and n >= 8:
        x[:4] = [np.inf, -np.inf, np.nan, 1e-42]
        rng.shuffle(x)
    return x.reshape(shape)


def _bits(codes):
    return codes.view(np.uint16 if codes.dtype == np.float16 else np.uint8)


@needs_runtime
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["e4m3", "e5m2", "f16"])
@pytest.mark.parametrize("scale", [1.0, 0.375, 4096.0])
def test_both_layouts_are_the_quantize_codes(shape, name, scale):
    x = _data(shape, seed=len(shape) * 1000 + shape[-1])
    codes, codes_t = numerics.quantize_transpose(x, scale, name)
    plain = numerics.quantize(x, scale, name)
    assert codes.shape == x.shape
    cols = x.shape[-1]
    rows = x.size // cols if cols else 0
    assert codes_t.shape == (cols, rows)
    assert np.array_equal(_bits(codes), _bits(plain))
    assert np.array_equal(_bits(codes_t), _bits(plain).reshape(rows, cols).T)


@needs_runtime
@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
def test_codes_match_ml_dtypes(name):
    # Finite values inside the format's range: a plain round to nearest even.
    x = _data((129, 95), seed=7, specials=False)
    fp_max = numerics.fmt(name).max
    x = np.clip(x, -fp_max, fp_max)
    codes, codes_t = numerics.quantize_transpose(x, 1.0, name)
    expected = x.astype(ML_TYPES[name]).view(np.uint8)
    assert np.array_equal(codes, expected)
    assert np.array_equal(codes_t, expected.T)


@needs_runtime
def test_f16_input_is_widened_exactly():
    x = _data((37, 41), seed=3).astype(np.float16)
    codes, codes_t = numerics.quantize_transpose(x, 2.0, "e4m3")
    expected = numerics.quantize(x.astype(np.float32), 2.0, "e4m3")
    assert np.array_equal(codes, expected)
    assert np.array_equal(codes_t, expected.T)


def _call(x, out, out_t, in_code=None, out_code=None):
    rt = numerics._runtime()
    rt.msamp_rt_clear_error()
    s = np.array(1.0, np.float32)
    refs = [numerics._MemRef(a) for a in (x, s, out, out_t)]
    rt._mlir_ciface_msamp_rt_quantize_transpose(
        *(r.ptr for r in refs),
        numerics._code("f32") if in_code is None else in_code,
        numerics.fmt("e4m3").code if out_code is None else out_code)
    return rt


@needs_runtime
@pytest.mark.parametrize("bad_t", [(4, 6), (6, 4, 1), (24,)], ids=str)
def test_wrong_transposed_shape_is_refused(bad_t):
    x = np.ones((4, 6), np.float32)
    rt = _call(x, np.zeros((4, 6), np.uint8), np.zeros(bad_t, np.uint8))
    assert rt.msamp_rt_get_last_error() != 0
    assert b"out_t must be [6, 4]" in rt.msamp_rt_get_last_error_message()


@needs_runtime
def test_rank0_input_and_bad_dtype_are_refused():
    rt = _call(np.ones((), np.float32), np.zeros((), np.uint8),
               np.zeros((1, 1), np.uint8))
    assert b"rank >= 1" in rt.msamp_rt_get_last_error_message()
    x = np.ones((2, 2), np.float32)
    rt = _call(x, np.zeros((2, 2), np.uint8), np.zeros((2, 2), np.uint8),
               out_code=numerics._code("f32"))
    assert b"output dtype" in rt.msamp_rt_get_last_error_message()
