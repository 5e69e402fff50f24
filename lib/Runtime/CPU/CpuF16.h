//===- CpuF16.h - Blocks of binary16 <-> f32 conversions --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// O2 keeps the master weights and Adam's second moment in f16, so every
// optimizer step decodes and encodes two f16 tensors twice (the two-pass
// update). The numerics core's bit-level encodeF16/decodeF16 are portable and
// exact but scalar; on x86-64 the F16C instructions (vcvtph2ps, vcvtps2ph
// with round-to-nearest-even) compute the same IEEE conversions eight lanes
// at a time. They are used when the CPU has them, with one fix-up so the
// results equal the core's bit for bit:
//
//  - decode: vcvtph2ps is exact and, like decodeF16, quiets a signalling NaN
//    and keeps its payload;
//  - encode: vcvtps2ph keeps the top payload bits of a NaN, the core returns
//    the canonical sign | 0x7E00: NaN lanes are replaced. Finite values,
//    subnormals, overflow to Inf and signed zeros are IEEE RNE in both.
//
// unittests/Runtime/CastTest.cpp checks both paths (MSAMP_RT_DISABLE_F16C=1
// forces the portable one) against the core on every f16 code and on a
// sweep of f32 bit patterns.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CPU_CPUF16_H
#define MSAMP_LIB_RUNTIME_CPU_CPUF16_H

#include "MSAMP/Numerics/FP8.h"

#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define MSAMP_RT_HAVE_F16C_PATH 1
#include <immintrin.h>
#endif

namespace msamp::runtime::cpu {

/// Whether the F16C paths run: the CPU has F16C and AVX, and the
/// environment does not set MSAMP_RT_DISABLE_F16C to a non-empty value
/// other than "0" (tests use it to exercise the portable path).
inline bool useF16C() {
#ifdef MSAMP_RT_HAVE_F16C_PATH
  static const bool enabled = [] {
    const char *env = std::getenv("MSAMP_RT_DISABLE_F16C");
    if (env && *env && !(env[0] == '0' && env[1] == '\0'))
      return false;
    return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  }();
  return enabled;
#else
  return false;
#endif
}

#ifdef MSAMP_RT_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) inline void
decodeF16BlockF16C(const uint16_t *src, int64_t count, float scaleInv,
                   float *dst) {
  const __m256 s = _mm256_set1_ps(scaleInv);
  int64_t j = 0;
  for (; j + 8 <= count; j += 8) {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + j));
    _mm256_storeu_ps(dst + j, _mm256_mul_ps(_mm256_cvtph_ps(h), s));
  }
  for (; j < count; ++j)
    dst[j] = numerics::detail::mulRn(numerics::decodeF16(src[j]), scaleInv);
}

/// dst[j] = encodeF16(src[j] * scale) (one f32 multiply, then RNE).
__attribute__((target("avx,f16c"))) inline void
encodeF16BlockF16C(const float *src, int64_t count, float scale,
                   uint16_t *dst) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m128i absMask = _mm_set1_epi16(0x7FFF);
  const __m128i signMask = _mm_set1_epi16(static_cast<short>(0x8000));
  const __m128i inf = _mm_set1_epi16(0x7C00);
  const __m128i canonicalNaN = _mm_set1_epi16(0x7E00);
  int64_t j = 0;
  for (; j + 8 <= count; j += 8) {
    const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(src + j), s);
    __m128i h =
        _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // A NaN lane is one whose magnitude is above Inf's (signed 16-bit
    // compare is fine: both sides are below 0x8000).
    const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, absMask), inf);
    const __m128i fixed =
        _mm_or_si128(_mm_and_si128(h, signMask), canonicalNaN);
    h = _mm_or_si128(_mm_andnot_si128(nan, h), _mm_and_si128(nan, fixed));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + j), h);
  }
  for (; j < count; ++j)
    dst[j] = numerics::encodeF16(numerics::detail::mulRn(src[j], scale));
}
#endif

/// dst[j] = decodeF16(src[j]) * scaleInv (numerics::dequantize).
inline void decodeF16Block(const uint16_t *src, int64_t count, float scaleInv,
                           float *dst) {
#ifdef MSAMP_RT_HAVE_F16C_PATH
  if (useF16C())
    return decodeF16BlockF16C(src, count, scaleInv, dst);
#endif
  for (int64_t j = 0; j < count; ++j)
    dst[j] = numerics::dequantize(numerics::Format::F16, src[j], scaleInv);
}

/// dst[j] = encodeF16(src[j] * scale) (numerics::quantize for F16).
inline void encodeF16Block(const float *src, int64_t count, float scale,
                           uint16_t *dst) {
#ifdef MSAMP_RT_HAVE_F16C_PATH
  if (useF16C())
    return encodeF16BlockF16C(src, count, scale, dst);
#endif
  for (int64_t j = 0; j < count; ++j)
    dst[j] = numerics::quantize(numerics::Format::F16, src[j], scale);
}

} // namespace msamp::runtime::cpu

#endif // MSAMP_LIB_RUNTIME_CPU_CPUF16_H
