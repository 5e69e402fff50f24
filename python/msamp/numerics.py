"""The runtime's FP8 numerics from Python, and exact decoding in numpy.

:func:`quantize` / :func:`dequantize` / :func:`amax` call the runtime's C ABI
(``_mlir_ciface_msamp_rt_*`` in msamp_runtime.h) with hand-built MLIR memref
descriptors, so what they return is bit for bit what a compiled step computes
- that is what the ml_dtypes cross-check in the tests relies on. ``decode``
is a pure-numpy table lookup (FP8 has 256 codes), used to read raw FP8/bf16
state without the native libraries.
"""

import ctypes
from dataclasses import dataclass

import numpy as np

from . import _native


def _code(mlir):
    """The runtime's msamp_rt_dtype code of an MLIR element type, as the
    loaded library numbers them (msamp_rt_dtype_name)."""
    return _native.libraries().dtype_codes[mlir]


@dataclass(frozen=True)
class Format:
    """A storage format: largest finite value, smallest subnormal (values
    below half of it flush to zero); ``code`` is the runtime's dtype code."""

    name: str
    mlir: str
    max: float
    min_subnormal: float

    @property
    def code(self):
        return _code(self.mlir)


FORMATS = {
    "e4m3": Format("e4m3", "f8E4M3FN", 448.0, 2.0 ** -9),
    "e5m2": Format("e5m2", "f8E5M2", 57344.0, 2.0 ** -16),
    "f16": Format("f16", "f16", 65504.0, 2.0 ** -24),
}
_BY_MLIR = {f.mlir: f for f in FORMATS.values()}


def fmt(name):
    """A Format from "e4m3"/"e5m2"/"f16" or the MLIR spelling."""
    if isinstance(name, Format):
        return name
    found = FORMATS.get(name) or _BY_MLIR.get(name)
    if found is None:
        raise ValueError(f"unknown format {name!r} (expected one of "
                         f"{', '.join(FORMATS)} or {', '.join(_BY_MLIR)})")
    return found


# ---------------------------------------------------------------------------
# Exact decoding (no native code).
# ---------------------------------------------------------------------------

def _fp8_table(exp_bits, man_bits, bias, e4m3fn):
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    sub = m / 2.0 ** man_bits * 2.0 ** (1 - bias)
    norm = (1 + m / 2.0 ** man_bits) * 2.0 ** (e - bias)
    value = sign * np.where(e == 0, sub, norm)
    top = (1 << exp_bits) - 1
    if e4m3fn:  # no infinities; S.1111.111 is NaN
        value[(e == top) & (m == (1 << man_bits) - 1)] = np.nan
    else:       # IEEE-like: all-ones exponent is Inf (m == 0) or NaN
        value[(e == top) & (m == 0)] = sign[(e == top) & (m == 0)] * np.inf
        value[(e == top) & (m != 0)] = np.nan
    return value.astype(np.float32)


_TABLES = {"f8E4M3FN": _fp8_table(4, 3, 7, True), "f8E5M2": _fp8_table(5, 2, 15, False)}


def decode(raw, dtype):
    """f32 values of raw storage: FP8 bytes (uint8), bf16 bits (uint16), or
    f16/f32 arrays. Exact: every such value is an f32."""
    dtype = fmt(dtype).mlir if dtype in FORMATS else dtype
    if dtype in _TABLES:
        return _TABLES[dtype][np.asarray(raw, np.uint8)]
    if dtype == "bf16":
        return (np.asarray(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
    if dtype in ("f16", "f32"):
        return np.asarray(raw).astype(np.float32)
    raise ValueError(f"cannot decode dtype {dtype!r}")


# ---------------------------------------------------------------------------
# The runtime's kernels.
# ---------------------------------------------------------------------------

_DESCRIPTORS = {}


def _descriptor_type(rank):
    """The ranked memref descriptor struct for ``rank`` (MLIR's layout)."""
    if rank not in _DESCRIPTORS:
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {
            "_fields_": [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                         ("offset", ctypes.c_int64),
                         ("sizes", ctypes.c_int64 * max(rank, 1)),
                         ("strides", ctypes.c_int64 * max(rank, 1))]})
    return _DESCRIPTORS[rank]


class _MemRef:
    """An unranked memref over a C-contiguous numpy array; keeps the array
    and descriptor alive as long as itself."""

    def __init__(self, array):
        if not array.flags.c_contiguous:
            raise ValueError("arrays passed to the runtime must be C-contiguous")
        self.array = array
        rank = array.ndim
        desc = _descriptor_type(rank)()
        desc.allocated = desc.aligned = array.ctypes.data
        desc.offset = 0
        stride = 1
        for i in reversed(range(rank)):
            desc.sizes[i] = array.shape[i]
            desc.strides[i] = stride
            stride *= array.shape[i]
        self.desc = desc
        self.umr = _native.UnrankedMemRef(rank, ctypes.cast(ctypes.byref(desc),
                                                            ctypes.c_void_p))

    @property
    def ptr(self):
        return ctypes.byref(self.umr)


def _runtime():
    return _native.libraries().runtime


def _check_runtime(rt, what):
    if rt.msamp_rt_get_last_error() != 0:
        message = rt.msamp_rt_get_last_error_message().decode()
        rt.msamp_rt_clear_error()
        raise RuntimeError(f"{what}: {message}")


def _input(x):
    """(array, runtime dtype code) for f32 or f16 inputs."""
    x = np.asarray(x)
    if x.dtype == np.float16:
        return np.ascontiguousarray(x), _native_f16()
    return np.ascontiguousarray(x, np.float32), _code("f32")


def _native_f16():
    return FORMATS["f16"].code


def quantize(x, scale=1.0, to="e4m3"):
    """The runtime's scaled cast: ``Q(x * scale)`` with x f32 (or f16,
    widened exactly), one f32 product, round-to-nearest-even, saturating to
    +-max for FP8 (NaN stays NaN), IEEE (overflow to Inf) for f16.

    Returns raw bytes (uint8) for FP8, a float16 array for f16.
    """
    f = fmt(to)
    array, in_code = _input(x)
    out = np.empty(array.shape, np.float16 if f.name == "f16" else np.uint8)
    s = np.array(scale, np.float32)
    rt = _runtime()
    rt.msamp_rt_clear_error()
    a, sc, o = _MemRef(array), _MemRef(s), _MemRef(out)
    rt._mlir_ciface_msamp_rt_quantize(a.ptr, sc.ptr, o.ptr, in_code, f.code)
    _check_runtime(rt, "msamp_rt_quantize")
    return out


def _code_buffers(array, f, transpose):
    """The codes of a scaled cast of ``array`` to format ``f`` (its shape),
    and their transposed layout: ``array`` viewed as [rows, last dim], so
    [last dim, rows] (a 0-d placeholder unless ``transpose``)."""
    code_type = np.float16 if f.name == "f16" else np.uint8
    cols = array.shape[-1] if array.ndim else 1
    rows = array.size // cols if cols else 0
    return (np.empty(array.shape, code_type),
            np.empty((cols, rows) if transpose else (), code_type))


def quantize_transpose(x, scale=1.0, to="e4m3"):
    """The runtime's scaled cast into both operand layouts
    (msamp_rt_quantize_transpose): ``(codes, codes_t)``, ``codes`` as
    :func:`quantize` writes them and ``codes_t`` the same codes of ``x``
    viewed as [rows, last dim], transposed ([last dim, rows])."""
    f = fmt(to)
    array, in_code = _input(x)
    out, out_t = _code_buffers(array, f, transpose=True)
    s = np.array(scale, np.float32)
    rt = _runtime()
    rt.msamp_rt_clear_error()
    refs = [_MemRef(a) for a in (array, s, out, out_t)]
    rt._mlir_ciface_msamp_rt_quantize_transpose(*(r.ptr for r in refs),
                                                in_code, f.code)
    _check_runtime(rt, "msamp_rt_quantize_transpose")
    return out, out_t


def dequantize(raw, scale_inv=1.0, dtype="e4m3"):
    """The runtime's widening: ``decode(raw) * scale_inv`` as f32."""
    f = fmt(dtype)
    array = np.ascontiguousarray(raw, np.float16 if f.name == "f16" else np.uint8)
    out = np.empty(array.shape, np.float32)
    s = np.array(scale_inv, np.float32)
    rt = _runtime()
    rt.msamp_rt_clear_error()
    a, sc, o = _MemRef(array), _MemRef(s), _MemRef(out)
    rt._mlir_ciface_msamp_rt_dequantize(a.ptr, sc.ptr, o.ptr, f.code, _code("f32"))
    _check_runtime(rt, "msamp_rt_dequantize")
    return out


def amax(x):
    """The runtime's max |x| (NaN if any NaN), as a Python float."""
    array, in_code = _input(x)
    out = np.zeros((), np.float32)
    rt = _runtime()
    rt.msamp_rt_clear_error()
    a, o = _MemRef(array), _MemRef(out)
    rt._mlir_ciface_msamp_rt_amax(a.ptr, o.ptr, in_code)
    _check_runtime(rt, "msamp_rt_amax")
    return float(out)


_SCALE_KINDS = {"pow2": 0, "exact": 1}


def quantize_jit(x, to="e4m3", kind="pow2", margin=0, previous=1.0,
                 transpose=False):
    """The runtime's fused just-in-time cast (msamp_rt_quantize_jit): the
    amax of ``x``, the scale compute_scale derives from it (``previous`` when
    the amax is 0, NaN or Inf), ``Q(x * scale)`` and ``1 / scale``, in one
    call. Returns ``(codes, scale, scale_inv)``, and with ``transpose`` also
    the codes of ``x`` viewed as [rows, last dim], transposed."""
    f = fmt(to)
    array, in_code = _input(x)
    out, out_t = _code_buffers(array, f, transpose)
    prev = np.array(previous, np.float32)
    scale, scale_inv = np.zeros((), np.float32), np.zeros((), np.float32)
    rt = _runtime()
    rt.msamp_rt_clear_error()
    refs = [_MemRef(a) for a in (array, prev, out, out_t, scale, scale_inv)]
    rt._mlir_ciface_msamp_rt_quantize_jit(*(r.ptr for r in refs), in_code, f.code,
                                          _SCALE_KINDS[kind], margin,
                                          1 if transpose else 0)
    _check_runtime(rt, "msamp_rt_quantize_jit")
    result = (out, float(scale), float(scale_inv))
    return result + (out_t,) if transpose else result


_AMAX_ALGOS = {"max": 0, "most_recent": 1}


def quantize_scale_update(x, history, previous, to="e4m3", kind="pow2",
                          algo="max", margin=0, use_jit=None, transpose=False,
                          fmt_name=None):
    """The runtime's delayed-scaling cast with its bookkeeping
    (msamp_rt_quantize_scale_update, docs/RuntimeABI.md 3.15): the amax of
    ``x`` rolled into ``history``, the scale (``previous``, or with
    ``use_jit`` set the just-in-time one of the amax), ``Q(x * scale)``,
    ``1 / scale`` and the next scale (``algo`` over the rolled history).
    ``use_jit`` None passes no warm-up select. ``fmt_name`` is the format
    whose largest value the scales use (default ``to``). Returns
    ``(codes, new_history, scale, scale_inv, next_scale)`` and with
    ``transpose`` also the codes of ``x`` as [rows, last dim], transposed."""
    f = fmt(to)
    array, in_code = _input(x)
    out, out_t = _code_buffers(array, f, transpose)
    hist = np.ascontiguousarray(history, np.float32).copy()
    new_hist = np.empty_like(hist)
    prev = np.array(previous, np.float32)
    flag = np.array(1 if use_jit else 0, np.uint8)
    scale, scale_inv, next_scale = (np.zeros((), np.float32) for _ in range(3))
    flags = 0x1  # all-reduced: a group of one returns its input
    if use_jit is not None:
        flags |= 0x2
    if transpose:
        flags |= 0x8
    rt = _runtime()
    rt.msamp_rt_clear_error()
    refs = [_MemRef(a) for a in (array, hist, prev, flag, out, out_t, new_hist,
                                 scale, scale_inv, next_scale)]
    rt._mlir_ciface_msamp_rt_quantize_scale_update(
        *(r.ptr for r in refs), in_code, f.code, _SCALE_KINDS[kind],
        _AMAX_ALGOS[algo], fmt(fmt_name or to).code, margin, flags)
    _check_runtime(rt, "msamp_rt_quantize_scale_update")
    result = (out, new_hist, float(scale), float(scale_inv), float(next_scale))
    return result + (out_t,) if transpose else result


def pow2_scale(amax_value, to="e4m3", margin=0, previous=1.0):
    """MS-AMP's scale 2^(floor(log2(fp_max / amax)) - margin), clamped to
    [2^-126, 2^127]; ``previous`` when amax is 0 or not finite (docs/Numerics.md 2.1).
    A numpy restatement for inspection; the runtime's is authoritative."""
    a = float(amax_value)
    if not np.isfinite(a) or a <= 0:
        return float(previous)
    e = np.floor(np.log2(fmt(to).max / a)) - margin
    return float(2.0 ** np.clip(e, -126, 127))
