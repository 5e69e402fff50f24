//===- Scaling.h - FP8 scaling factors and amax history ---------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The scale-update arithmetic of the two recipes msamp implements
// (docs/Numerics.md section 2): MS-AMP's power-of-two scale and Transformer
// Engine's exact fp_max / amax scale, plus the amax-history bookkeeping that
// delayed scaling needs. Like FP8.h it is header-only and usable from CUDA, so
// the compiler's folder, the CPU backend and the GPU scale-update kernel agree
// on every bit.
//
// Conventions shared by the whole project:
//  * a scale multiplies the real value to get the stored value
//    (stored = Q(real * scale)), scale_inv = 1 / scale undoes it;
//  * history[0] is the most recent amax, history[len - 1] the oldest.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_NUMERICS_SCALING_H
#define MSAMP_NUMERICS_SCALING_H

#include "MSAMP/Numerics/FP8.h"

namespace msamp::numerics {

/// How a scale is derived from an amax: MS-AMP rounds it down to a power of
/// two, Transformer Engine uses the exact quotient.
enum class ScaleKind : uint8_t { Pow2 = 0, Exact = 1 };

/// How an amax history is reduced to one amax (TE's amax_compute_algo).
enum class AmaxAlgo : uint8_t { Max = 0, MostRecent = 1 };

namespace detail {

/// Exact 2^e as an f32: a normal for e in [-126, 127], a subnormal down to
/// 2^-149, 0 below and +Inf above. Built from bits so no libm is involved.
MSAMP_HOST_DEVICE inline float exp2i(long long e) {
  if (e > 127)
    return bitsToFloat(kF32Inf);
  if (e >= -126)
    return bitsToFloat(static_cast<uint32_t>(e + 127) << 23);
  if (e >= -149)
    return bitsToFloat(1u << (e + 149));
  return 0.0f;
}

/// Splits a finite x > 0 into 2^exp * sig / 2^23 with sig in [2^23, 2^24),
/// normalizing subnormals.
MSAMP_HOST_DEVICE inline void splitPositive(float x, int &exp, uint32_t &sig) {
  const uint32_t bits = floatToBits(x) & kF32AbsMask;
  sig = bits & 0x7FFFFFu;
  if ((bits >> 23) != 0) {
    exp = static_cast<int>(bits >> 23) - 127;
    sig |= 0x800000u;
    return;
  }
  exp = -126;
  while (!(sig & 0x800000u)) {
    sig <<= 1;
    --exp;
  }
}

/// floor(log2(a / b)) of the exact quotient of finite a, b > 0, from the
/// exponents and significands alone.
///
/// Whenever the f32 quotient fl(a / b) is a normal number this equals
/// floor(log2(fl(a / b))), i.e. MS-AMP's f32 computation with an exact log2:
/// rounding could only change the floor by carrying fl(a / b) up to a power
/// of two, which needs sig(b) / sig(a) in (1, 1 + 2^-24], and two distinct
/// 24-bit significands are at least 2^-23 apart. Unlike the division it stays
/// exact where fl(a / b) would overflow or underflow, so a margin applied
/// afterwards still means what it says.
MSAMP_HOST_DEVICE inline int floorLog2Quotient(float a, float b) {
  int expA, expB;
  uint32_t sigA, sigB;
  splitPositive(a, expA, sigA);
  splitPositive(b, expB, sigB);
  return expA - expB - (sigA < sigB ? 1 : 0);
}

MSAMP_HOST_DEVICE inline bool isNaN(float x) {
  return (floatToBits(x) & kF32AbsMask) > kF32Inf;
}

MSAMP_HOST_DEVICE inline bool isInf(float x) {
  return (floatToBits(x) & kF32AbsMask) == kF32Inf;
}

} // namespace detail

/// MS-AMP's compute_scaling_factor (docs/Numerics.md 2.1): for a finite amax >
/// 0, scale = 2^(floor(log2(fpMax / amax)) - margin), the largest power of two
/// with amax * scale <= fpMax when margin is 0.
///
/// MS-AMP takes an f32 log2 of the f32 quotient, and log2f(31.999998) rounds
/// to 5.0: for amax one or two ulps above fpMax * 2^-k it returns 2^k, twice
/// the scale that fits, and amax * scale saturates. Here floor(log2(.)) is
/// exact and is read from the operands' bits (detail::floorLog2Quotient):
/// equal to the exponent of the f32 quotient whenever that is a normal
/// number, with no division or libm call, so host and device agree bit for
/// bit.
///
/// amax == 0, negative or NaN keeps prevScale (there is nothing to scale by).
/// amax == +Inf also keeps prevScale. MS-AMP returns 1 / prevScale there,
/// because its sign flip for a negative exponent runs after the fallback; that
/// is harmless only when prevScale == 1, so we follow docs/Numerics.md's
/// recommendation instead of copying the quirk.
///
/// Where MS-AMP would produce an Inf scale (tiny amax: 2^e overflows) the
/// scale is clamped to 2^127, and where the power of two would underflow it is
/// clamped to 2^-126, so that scale and scale_inv = 1 / scale are both finite
/// normal numbers. fpMax must be finite and positive; otherwise prevScale is
/// kept.
MSAMP_HOST_DEVICE inline float computeScalePow2(float amax, float prevScale,
                                                float fpMax, int margin) {
  if (!(amax > 0.0f) || detail::isInf(amax))
    return prevScale;
  if (!(fpMax > 0.0f) || detail::isInf(fpMax))
    return prevScale;
  long long exp = detail::floorLog2Quotient(fpMax, amax);
  exp -= margin;
  if (exp > 127)
    exp = 127;
  if (exp < -126)
    exp = -126;
  return detail::exp2i(exp);
}

/// Transformer Engine's delayed-scaling scale (docs/Numerics.md 2.2):
/// (fpMax * 2^-margin) / amax for a finite amax > 0, else prevScale; an
/// infinite quotient becomes FLT_MAX. Not rounded to a power of two.
MSAMP_HOST_DEVICE inline float computeScaleExact(float amax, float prevScale,
                                                 float fpMax, int margin) {
  if (!(amax > 0.0f) || detail::isInf(amax))
    return prevScale;
  const float scaledMax =
      detail::mulRn(fpMax, detail::exp2i(-static_cast<long long>(margin)));
  const float scale = detail::divRn(scaledMax, amax);
  if (detail::isInf(scale))
    return detail::bitsToFloat(0x7F7FFFFFu); // FLT_MAX, keeping the sign bit 0
  return scale;
}

MSAMP_HOST_DEVICE inline float computeScale(ScaleKind k, float amax,
                                            float prevScale, float fpMax,
                                            int margin) {
  return k == ScaleKind::Exact
             ? computeScaleExact(amax, prevScale, fpMax, margin)
             : computeScalePow2(amax, prevScale, fpMax, margin);
}

/// Reduces an amax history (history[0] most recent) to the amax a scale is
/// computed from. Max: the maximum over all `len` entries, NaN if any entry is
/// NaN so that the scale computation keeps the previous scale instead of
/// silently ignoring a bad step. MostRecent: history[0]. len <= 0 gives 0.
MSAMP_HOST_DEVICE inline float reduceAmaxHistory(const float *history, int len,
                                                 AmaxAlgo algo) {
  if (len <= 0)
    return 0.0f;
  if (algo == AmaxAlgo::MostRecent)
    return history[0];
  float result = history[0];
  for (int i = 0; i < len; ++i) {
    if (detail::isNaN(history[i]))
      return history[i];
    if (history[i] > result)
      result = history[i];
  }
  return result;
}

/// Rolls a history by one step and inserts the newest amax:
/// out[0] = newAmax, out[i] = in[i - 1] for 1 <= i < len; in[len - 1] falls
/// off. `in` and `out` may be the same array (the copy runs from the oldest
/// slot down); other partial overlaps are not supported.
MSAMP_HOST_DEVICE inline void updateAmaxHistory(const float *in, float *out,
                                                int len, float newAmax) {
  if (len <= 0)
    return;
  for (int i = len - 1; i >= 1; --i)
    out[i] = in[i - 1];
  out[0] = newAmax;
}

/// max |x_i| over n elements. NaN anywhere gives NaN (a canonical quiet NaN),
/// +-Inf gives +Inf, n <= 0 gives 0. Magnitudes are compared as integers
/// (valid for non-negative IEEE values), so the result is independent of how
/// a compiler treats NaN in floating-point max.
MSAMP_HOST_DEVICE inline float amax(const float *x, long long n) {
  uint32_t largest = 0;
  for (long long i = 0; i < n; ++i) {
    const uint32_t mag = detail::floatToBits(x[i]) & detail::kF32AbsMask;
    if (mag > detail::kF32Inf)
      return detail::bitsToFloat(detail::kF32QuietNaN);
    if (mag > largest)
      largest = mag;
  }
  return detail::bitsToFloat(largest);
}

/// One hop of an FP8 max reduction (amax all-reduce): the code with the
/// larger decoded value; a NaN operand wins (`a` when both are), ties keep
/// `a`. `f` must be E4M3 or E5M2.
MSAMP_HOST_DEVICE inline uint8_t maxOfCodes(Format f, uint8_t a, uint8_t b) {
  const float x = decode(f, a);
  const float y = decode(f, b);
  if (detail::isNaN(x))
    return a;
  if (detail::isNaN(y))
    return b;
  return y > x ? b : a;
}

} // namespace msamp::numerics

#endif // MSAMP_NUMERICS_SCALING_H
