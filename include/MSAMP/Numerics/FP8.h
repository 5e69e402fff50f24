//===- FP8.h - Bit-exact FP8 and FP16 encode/decode -------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The single definition of how msamp turns f32 values into E4M3, E5M2 and
// binary16 bit patterns and back (docs/Numerics.md section 1). The constant
// folder, the CPU runtime and the CUDA kernels all include this header, so a
// tensor quantized at compile time, on the host or on the GPU has the same
// bytes.
//
// To make that hold everywhere, encoding is integer arithmetic on the f32 bit
// pattern. It deliberately avoids libm, the current FP rounding mode, the
// compiler's _Float16 support and the hardware FP8 conversion instructions:
// each of those differs between toolchains or targets in some corner (NaN
// sign, saturation, flush-to-zero).
//
// FP8 semantics are those of the MS-AMP / Transformer Engine casts
// (static_cast<__nv_fp8_*> with __NV_SATFINITE): round to nearest even,
// subnormals kept, anything above the largest finite value (infinities
// included) saturates to +-max, NaN becomes NaN. binary16 is plain IEEE:
// overflow goes to infinity, because MS-AMP's scaled FP16 tensors rely on the
// scale, not on saturation, to stay in range.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_NUMERICS_FP8_H
#define MSAMP_NUMERICS_FP8_H

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#if defined(__CUDACC__)
#define MSAMP_HOST_DEVICE __host__ __device__
#else
#define MSAMP_HOST_DEVICE
#endif

namespace msamp::numerics {

/// Storage formats of a scaled tensor. The values are part of the runtime ABI.
enum class Format : uint8_t { E4M3 = 0, E5M2 = 1, F16 = 2 };

/// Largest finite value of each format (docs/Numerics.md 1.1).
MSAMP_HOST_DEVICE constexpr float maxFinite(Format f) {
  return f == Format::E4M3 ? 448.0f : f == Format::E5M2 ? 57344.0f : 65504.0f;
}

/// The NaN produced by encoding any NaN. 0x7F is a NaN in both FP8 formats;
/// the sign of the input NaN is dropped, as NVIDIA's conversions do.
constexpr uint8_t kE4M3CanonicalNaN = 0x7F, kE5M2CanonicalNaN = 0x7F;

namespace detail {

MSAMP_HOST_DEVICE inline uint32_t floatToBits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
#endif
}

MSAMP_HOST_DEVICE inline float bitsToFloat(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
#endif
}

constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr uint32_t kF32Inf = 0x7F800000u;
constexpr uint32_t kF32QuietNaN = 0x7FC00000u;

/// Rounds a finite, non-negative f32 (its bit pattern) to nearest even in a
/// binary format with `manBits` stored mantissa bits and exponent `bias`, and
/// returns the magnitude bits (exponent field << manBits | mantissa).
///
/// The result is not range-checked: a value that overflows the format comes
/// back as a magnitude above the largest finite code, so each caller can apply
/// its own policy (FP8 saturates, binary16 becomes Inf). The magnitude is
/// built as (biased exponent - 1) << manBits plus the rounded significand
/// *including* its implicit bit; when rounding carries out of the significand
/// the carry lands in the exponent field, which is exactly the step into the
/// next binade (and, for subnormals, into the smallest normal).
MSAMP_HOST_DEVICE inline uint32_t roundMagnitude(uint32_t absBits, int manBits,
                                                 int bias) {
  const uint32_t biasedExp = absBits >> 23;
  // f32 zeros and subnormals are below 2^-126, far under half the smallest
  // subnormal of any target format (2^-25 for binary16): they round to zero.
  if (biasedExp == 0)
    return 0;
  const uint32_t significand = (absBits & 0x7FFFFFu) | 0x800000u;
  const int exp = static_cast<int>(biasedExp) - 127;
  const int minNormalExp = 1 - bias;

  uint32_t base = 0;
  int shift = 23 - manBits;
  if (exp >= minNormalExp) {
    base = static_cast<uint32_t>(exp + bias - 1) << manBits;
  } else {
    // Subnormal target: count in units of the smallest subnormal.
    shift += minNormalExp - exp;
    // significand < 2^24, so from shift 25 on the value is under half the
    // smallest subnormal and rounds to zero; stopping here also keeps the
    // shifts below 32.
    if (shift > 24)
      return 0;
  }
  uint32_t kept = significand >> shift;
  const uint32_t dropped = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  // `base` has zeros in its low manBits bits, so kept's lowest bit is the
  // lowest bit of the final code: that is the "even" of ties-to-even.
  if (dropped > half || (dropped == half && (kept & 1u)))
    ++kept;
  return base + kept;
}

/// Exact value of a finite magnitude code (no sign, no NaN/Inf exponent).
MSAMP_HOST_DEVICE inline float decodeFiniteMagnitude(uint32_t mag, int manBits,
                                                     int bias) {
  const uint32_t expField = mag >> manBits;
  const uint32_t mantissa = mag & ((1u << manBits) - 1u);
  if (expField == 0) {
    // mantissa * 2^(1 - bias - manBits): both factors and the product are
    // exact normal f32 values, so the multiply cannot round or flush.
    const float unit =
        bitsToFloat(static_cast<uint32_t>(127 + 1 - bias - manBits) << 23);
    return static_cast<float>(mantissa) * unit;
  }
  const int f32BiasedExp = static_cast<int>(expField) - bias + 127;
  return bitsToFloat((static_cast<uint32_t>(f32BiasedExp) << 23) |
                     (mantissa << (23 - manBits)));
}

MSAMP_HOST_DEVICE inline float withSign(float magnitude, uint32_t signBit) {
  return bitsToFloat(floatToBits(magnitude) | signBit);
}

/// f32 arithmetic with one IEEE round-to-nearest-even rounding on every
/// target. On the device the _rn intrinsics keep that guarantee even under
/// --use_fast_math or -prec-div=false, which would otherwise change products
/// and quotients that feed an encode. (-ftz=true still flushes f32-subnormal
/// results to zero; kernels that must match the host bit for bit in that
/// range are built without it.)
MSAMP_HOST_DEVICE inline float mulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

MSAMP_HOST_DEVICE inline float addRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

MSAMP_HOST_DEVICE inline float divRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

} // namespace detail

/// f32 -> E4M3 (bias 7, no infinities): RNE, |x| > 448 and +-Inf saturate to
/// +-448 (0x7E / 0xFE), NaN -> 0x7F, -0 -> 0x80.
MSAMP_HOST_DEVICE inline uint8_t encodeE4M3(float x) {
  const uint32_t bits = detail::floatToBits(x);
  const uint32_t absBits = bits & detail::kF32AbsMask;
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  if (absBits > detail::kF32Inf)
    return kE4M3CanonicalNaN;
  const uint32_t mag = detail::roundMagnitude(absBits, 3, 7);
  // 0x7F is the NaN code, so the largest finite magnitude is 0x7E; this also
  // catches +-Inf, whose exponent makes the magnitude huge.
  return static_cast<uint8_t>(sign | (mag > 0x7Eu ? 0x7Eu : mag));
}

/// f32 -> E5M2 (bias 15): RNE, |x| > 57344 and +-Inf saturate to +-57344
/// (0x7B / 0xFB) even though E5M2 can encode infinity, NaN -> 0x7F.
MSAMP_HOST_DEVICE inline uint8_t encodeE5M2(float x) {
  const uint32_t bits = detail::floatToBits(x);
  const uint32_t absBits = bits & detail::kF32AbsMask;
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  if (absBits > detail::kF32Inf)
    return kE5M2CanonicalNaN;
  const uint32_t mag = detail::roundMagnitude(absBits, 2, 15);
  return static_cast<uint8_t>(sign | (mag > 0x7Bu ? 0x7Bu : mag));
}

/// Exact E4M3 -> f32; 0x7F and 0xFF are NaN (sign kept).
MSAMP_HOST_DEVICE inline float decodeE4M3(uint8_t code) {
  const uint32_t signBit = static_cast<uint32_t>(code & 0x80u) << 24;
  const uint32_t mag = code & 0x7Fu;
  if (mag == 0x7Fu)
    return detail::bitsToFloat(signBit | detail::kF32QuietNaN);
  return detail::withSign(detail::decodeFiniteMagnitude(mag, 3, 7), signBit);
}

/// Exact E5M2 -> f32; 0x7C/0xFC are +-Inf, 0x7D-0x7F and 0xFD-0xFF are NaN.
MSAMP_HOST_DEVICE inline float decodeE5M2(uint8_t code) {
  const uint32_t signBit = static_cast<uint32_t>(code & 0x80u) << 24;
  const uint32_t mag = code & 0x7Fu;
  if (mag == 0x7Cu)
    return detail::bitsToFloat(signBit | detail::kF32Inf);
  if (mag > 0x7Cu)
    return detail::bitsToFloat(signBit | detail::kF32QuietNaN);
  return detail::withSign(detail::decodeFiniteMagnitude(mag, 2, 15), signBit);
}

/// f32 -> IEEE binary16: RNE with subnormals, overflow -> +-Inf (no
/// saturation), NaN -> 0x7E00 with the sign of the input.
MSAMP_HOST_DEVICE inline uint16_t encodeF16(float x) {
  const uint32_t bits = detail::floatToBits(x);
  const uint32_t absBits = bits & detail::kF32AbsMask;
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  if (absBits > detail::kF32Inf)
    return static_cast<uint16_t>(sign | 0x7E00u);
  const uint32_t mag = detail::roundMagnitude(absBits, 10, 15);
  return static_cast<uint16_t>(sign | (mag > 0x7C00u ? 0x7C00u : mag));
}

/// Exact binary16 -> f32. NaN payloads are kept, with the quiet bit set.
MSAMP_HOST_DEVICE inline float decodeF16(uint16_t bits) {
  const uint32_t signBit = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t mag = bits & 0x7FFFu;
  if (mag >= 0x7C00u) {
    const uint32_t payload = (mag & 0x3FFu) << 13;
    return detail::bitsToFloat(
        signBit | detail::kF32Inf |
        (payload != 0 ? payload | detail::kF32QuietNaN : 0u));
  }
  return detail::withSign(detail::decodeFiniteMagnitude(mag, 10, 15), signBit);
}

/// Format dispatch. For F16 the result is the full 16-bit pattern; for the
/// FP8 formats it is the byte zero-extended.
MSAMP_HOST_DEVICE inline uint16_t encode(Format f, float x) {
  switch (f) {
  case Format::E4M3:
    return encodeE4M3(x);
  case Format::E5M2:
    return encodeE5M2(x);
  case Format::F16:
    break;
  }
  return encodeF16(x);
}

/// Format dispatch. For the FP8 formats only the low byte of `code` is read.
MSAMP_HOST_DEVICE inline float decode(Format f, uint16_t code) {
  switch (f) {
  case Format::E4M3:
    return decodeE4M3(static_cast<uint8_t>(code));
  case Format::E5M2:
    return decodeE5M2(static_cast<uint8_t>(code));
  case Format::F16:
    break;
  }
  return decodeF16(code);
}

/// The store of every MS-AMP / TE cast kernel: Q(x * scale) with the product
/// rounded once to f32 before the conversion (not fused into it), because
/// that is the value the reference kernels convert.
MSAMP_HOST_DEVICE inline uint16_t quantize(Format f, float x, float scale) {
  return encode(f, detail::mulRn(x, scale));
}

/// Exact widening, then one f32 multiply by the inverse scale (TE
/// cast_from_fp8).
MSAMP_HOST_DEVICE inline float dequantize(Format f, uint16_t code,
                                          float scaleInv) {
  return detail::mulRn(decode(f, code), scaleInv);
}

/// One hop of an FP8 all-reduce as the MSCCL fork and NCCL >= 2.24 do it
/// (docs/Numerics.md 4.4): fp8(__hadd(half(a), half(b))), saturating.
///
/// Both FP8 formats widen exactly to binary16. The binary16 add is emulated
/// by an f32 add followed by RNE to binary16; that double rounding always
/// gives the correctly rounded binary16 sum because f32 carries
/// 24 >= 2 * 11 + 2 significand bits (Figueroa, "When is double rounding
/// innocuous?", 1995). A binary16 overflow (E5M2 only) becomes Inf, which the
/// final FP8 conversion saturates, as __NV_SATFINITE does.
///
/// `f` must be E4M3 or E5M2; F16 has no 8-bit codes and yields 0x7F (NaN).
MSAMP_HOST_DEVICE inline uint8_t addViaHalf(Format f, uint8_t a, uint8_t b) {
  if (f == Format::F16)
    return 0x7F;
  const uint16_t sum = encodeF16(detail::addRn(decode(f, a), decode(f, b)));
  return static_cast<uint8_t>(encode(f, decodeF16(sum)));
}

} // namespace msamp::numerics

#endif // MSAMP_NUMERICS_FP8_H
