"""An independent restatement of the FP8 scaling rules that the runtime's
casts are tested against (test_quantize_jit.py, test_quantize_scale_update.py):
the amax of docs/RuntimeABI.md 3.3, the scale rules of docs/Numerics.md 2.1
and 2.2, and the casts.

The scale is derived from exact exponents (math.frexp, exact on f32 values)
rather than from np.log2, whose rounding the runtime avoids. The casts come
from ml_dtypes after clamping to +-max (ml_dtypes overflows to NaN/Inf where
the runtime saturates, docs/Numerics.md), f16 from numpy; ml_dtypes is
imported on first use, so that a test module can skip without it.
"""

import math

import numpy as np

from msamp import numerics

FLT_MAX = np.finfo(np.float32).max


def amax(x32):
    """max |x|: NaN if any element is NaN, 0 for an empty tensor."""
    if np.isnan(x32).any():
        return math.nan
    return float(np.max(np.abs(x32))) if x32.size else 0.0


def floor_log2_quotient(a, b):
    """floor(log2(a / b)) of the exact quotient of two positive floats."""
    ma, ea = math.frexp(a)
    mb, eb = math.frexp(b)
    return ea - eb - (1 if ma < mb else 0)


def scale(amax_value, name, kind, margin, previous):
    """compute_scale of one amax (0, NaN, +Inf keep ``previous``)."""
    if not (amax_value > 0) or math.isinf(amax_value):
        return np.float32(previous)
    fp_max = numerics.fmt(name).max
    if kind == "pow2":
        e = min(max(floor_log2_quotient(fp_max, amax_value) - margin, -126),
                127)
        return np.float32(2.0 ** e)
    with np.errstate(over="ignore"):
        s = np.float32(fp_max * 2.0 ** -margin) / np.float32(amax_value)
    return np.float32(FLT_MAX) if np.isinf(s) else s


def codes(x32, scale_value, name):
    """The codes of x * scale in format ``name`` (uint8 for FP8, f16)."""
    import ml_dtypes

    types = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
             "f16": np.float16}
    with np.errstate(over="ignore", invalid="ignore"):
        y = x32 * np.float32(scale_value)
        if name != "f16":
            m = numerics.fmt(name).max
            y = np.where(np.isnan(y), y, np.clip(y, -m, m))
        out = y.astype(types[name])
    return out if name == "f16" else out.view(np.uint8)


def same_codes(got, want, name):
    """Equal codes, any NaN code matching any other."""
    if name == "f16":
        return np.array_equal(got, want, equal_nan=True)
    a, b = numerics.decode(got, name), numerics.decode(want, name)
    return bool(np.all((got == want) | (np.isnan(a) & np.isnan(b))))
