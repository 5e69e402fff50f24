#!/usr/bin/env python3
"""Generate unittests/Numerics/Inputs/fp8_reference.bin.

The table is an independent oracle for msamp's saturating FP8 casts
(include/MSAMP/Numerics/FP8.h: encodeE4M3 / encodeE5M2). The codes come from
ml_dtypes' float8_e4m3fn / float8_e5m2 conversions, which round to nearest
even but do NOT saturate (448 < |x| becomes NaN in E4M3FN, Inf in E5M2). The
MS-AMP / Transformer Engine casts saturate (docs/Numerics.md 1.2), so every finite
input is first clamped to [-max, max] and +-Inf is mapped to +-max; NaN stays
NaN. Clamping before rounding is the same as rounding then saturating, because
max is itself representable.

Regenerate (needs numpy and ml_dtypes from PyPI), from the repository root:

    .venv/bin/python scripts/gen_fp8_reference.py

which writes unittests/Numerics/Inputs/fp8_reference.bin (or pass another
output path as the only argument). The output depends only on this script, so
running it twice gives the identical file.

Inputs, in this order:

1. f16: every binary16 bit pattern 0..65535, widened exactly to f32.
2. boundary: hand-picked f32 values, stored in the file because the list is
   built here: +-0, +-Inf, NaNs, f32 extremes, and for each FP8 format every
   finite value, its f32 neighbours, every midpoint between adjacent values
   (including the midpoint above max towards the next, unrepresentable, step)
   and the midpoints' f32 neighbours, all with both signs. Sorted by bit
   pattern, no duplicates.
3. generated: a splitmix64 stream (SEED below) that C++ replays
   (unittests/Numerics/ReferenceTableTest.cpp), one 64-bit draw per input:
   a. NUM_RANDOM_BITS inputs whose f32 bit pattern is draw >> 32;
   b. NUM_UNIFORM inputs uniform on [-2*448, 2*448]: i = draw % (2R+1) - R,
      x = i * 2^-13 with R = 7340032 = 896 * 2^13;
   c. NUM_UNIFORM inputs uniform on [-2*57344, 2*57344]: the same i,
      x = i * 2^-6 (R = 114688 * 2^6).
   |i| < 2^23, so x is exact in f32; grid steps of 2^-13 and 2^-6 hit many
   exact ties. The header carries a 64-bit FNV-1a hash of the generated
   inputs' bit patterns (4 little-endian bytes each) so a C++/Python generator
   mismatch is reported as such, not as rounding failures.

File format, all little-endian:

    offset  type      field
    0       char[8]   magic "MSAMPFP8"
    8       u32       version (1)
    12      u32       num_f16 (65536)
    16      u32       num_boundary (B)
    20      u32       num_random_bits
    24      u32       num_uniform_e4m3
    28      u32       num_uniform_e5m2
    32      u64       seed
    40      u64       FNV-1a 64 of the generated inputs
    48      u8[2*65536]  f16 section: (e4m3 code, e5m2 code) per bit pattern
    ...     u32[B]       boundary inputs (f32 bit patterns)
    ...     u8[2*B]      boundary section codes, (e4m3, e5m2) pairs
    ...     u8[2*G]      generated section codes, (e4m3, e5m2) pairs,
                         G = num_random_bits + num_uniform_e4m3 + num_uniform_e5m2

For NaN inputs ml_dtypes keeps the sign and picks 0x7F/0xFF (E4M3) or
0x7E/0xFE (E5M2), while msamp always returns 0x7F; consumers compare NaN
results by "both are NaN".
"""

import struct
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

MAGIC = b"MSAMPFP8"
VERSION = 1
SEED = 0x4D53414D50465038  # "MSAMPFP8" in ASCII
NUM_RANDOM_BITS = 32768
NUM_UNIFORM = 16384
UNIFORM_RANGE = 7340032  # R: 2 * max * 2^shift for both formats
UNIFORM_SHIFT = {"e4m3": 13, "e5m2": 6}

MASK64 = (1 << 64) - 1

FORMATS = {
    # name: (ml_dtypes type, max finite, the next step above max)
    "e4m3": (ml_dtypes.float8_e4m3fn, 448.0, 480.0),
    "e5m2": (ml_dtypes.float8_e5m2, 57344.0, 65536.0),
}


class SplitMix64:
    """Vigna's splitmix64; the same constants are in ReferenceTableTest.cpp."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def f32_bits(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def generated_inputs():
    rng = SplitMix64(SEED)
    bits = [rng.next() >> 32 for _ in range(NUM_RANDOM_BITS)]
    values = []
    for name in ("e4m3", "e5m2"):
        scale = 2.0 ** -UNIFORM_SHIFT[name]
        for _ in range(NUM_UNIFORM):
            i = rng.next() % (2 * UNIFORM_RANGE + 1) - UNIFORM_RANGE
            values.append(i * scale)  # exact in float64 and in float32
    uniform = np.array(values, dtype=np.float64).astype(np.float32)
    assert np.all(uniform.astype(np.float64) == np.array(values))
    return np.concatenate([np.array(bits, dtype=np.uint32), uniform.view(np.uint32)])


def finite_values(dtype):
    """All non-negative finite values of an FP8 dtype, ascending."""
    vals = np.arange(256, dtype=np.uint16).astype(np.uint8).view(dtype)
    vals = vals.astype(np.float64)
    vals = vals[np.isfinite(vals) & (vals >= 0)]
    return np.unique(vals)


def boundary_inputs():
    up = np.float32(np.inf)
    down = np.float32(-np.inf)
    points = [0.0, 1.0, float(np.float32(1e30)), np.inf, 2.0**-126, 2.0**-149]
    points.append(float(np.finfo(np.float32).max))
    for dtype, max_value, next_step in FORMATS.values():
        vals = list(finite_values(dtype))
        assert vals[-1] == max_value
        points += [2 * max_value]
        ladder = vals + [next_step]
        for lo, hi in zip(ladder, ladder[1:]):
            points.append(lo)
            points.append((lo + hi) / 2)  # exact: few significant bits
        points.append(next_step)
    core = np.array(points, dtype=np.float64).astype(np.float32)
    assert np.all(core.astype(np.float64) == np.array(points, dtype=np.float64))
    core = core[core > 0]
    with np.errstate(over="ignore"):  # nextafter(FLT_MAX, +Inf) is +Inf, wanted
        above = np.nextafter(core, up)
    neighbours = np.concatenate([core, above, np.nextafter(core, down)])
    both_signs = np.concatenate([neighbours, -neighbours, np.float32([0.0, -0.0])])
    bits = f32_bits(both_signs)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF], dtype=np.uint32)
    tiny = np.array([0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF], dtype=np.uint32)
    return np.unique(np.concatenate([bits, nans, tiny]))


def reference_codes(input_bits):
    """(N, 2) uint8 array of (e4m3, e5m2) saturating RNE codes."""
    x = input_bits.astype(np.uint32).view(np.float32)
    columns = []
    for dtype, max_value, _ in FORMATS.values():
        clamped = np.where(np.isnan(x), x, np.clip(x, -max_value, max_value))
        # Signalling-NaN inputs raise numpy's "invalid" flag; they still map
        # to NaN codes, which is all that is compared for NaN inputs.
        with np.errstate(invalid="ignore"):
            columns.append(clamped.astype(dtype).view(np.uint8))
    return np.stack(columns, axis=1)


def build():
    f16_inputs = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    f16_bits = f16_inputs.astype(np.float32).view(np.uint32)
    boundary = boundary_inputs()
    generated = generated_inputs()
    header = struct.pack(
        "<8sIIIIIIQQ",
        MAGIC,
        VERSION,
        len(f16_bits),
        len(boundary),
        NUM_RANDOM_BITS,
        NUM_UNIFORM,
        NUM_UNIFORM,
        SEED,
        fnv1a64(generated.astype("<u4").tobytes()),
    )
    assert len(header) == 48
    return b"".join(
        [
            header,
            reference_codes(f16_bits).tobytes(),
            boundary.astype("<u4").tobytes(),
            reference_codes(boundary).tobytes(),
            reference_codes(generated).tobytes(),
        ]
    )


def main(argv):
    root = Path(__file__).resolve().parent.parent
    default = root / "unittests" / "Numerics" / "Inputs" / "fp8_reference.bin"
    out = Path(argv[1]) if len(argv) > 1 else default
    out.parent.mkdir(parents=True, exist_ok=True)
    data = build()
    out.write_bytes(data)
    print(f"wrote {out} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
