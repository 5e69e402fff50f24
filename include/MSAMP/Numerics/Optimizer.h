//===- Optimizer.h - Adam/AdamW and SGD per-element arithmetic --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The per-element optimizer updates of docs/Numerics.md 5.2, written once for
// the CPU backend (CPU/CpuKernels.cpp, blocked loops the host compiler
// vectorizes) and the CUDA backend (CUDA/optimizer/*.cu, one element per
// thread), so both compute the same bits by construction:
//
//  - every f32 operation is a detail::*Rn helper: a plain operator on the
//    host (built with -ffp-contract=off, so no product is fused into a sum),
//    the round-to-nearest intrinsic on the device (__fmul_rn and friends are
//    never contracted into an FMA, whatever the flags);
//  - the step's constants are derived in double from the integer step, as
//    PyTorch does from Python floats, and each is rounded to f32 once
//    (makeAdamConstants, makeSgdConstants). The CPU computes them on the
//    host, the CUDA kernels on the device from the step and lr in device
//    memory; every double operation is again an IEEE-rounded helper
//    (detail::d*Rn) and beta^step is powStep, exponentiation by squaring
//    in double-double, not the platform's pow (glibc and CUDA differ in the
//    last bits), so the two backends derive the same f32 constants.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_NUMERICS_OPTIMIZER_H
#define MSAMP_NUMERICS_OPTIMIZER_H

#include "MSAMP/Numerics/FP8.h"

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace msamp::numerics {

namespace detail {

MSAMP_HOST_DEVICE inline float subRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

MSAMP_HOST_DEVICE inline float sqrtRn(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

// Double operations with one IEEE round-to-nearest each: a named function
// per operation, so no host compiler contracts a product into a sum, and
// the _rn intrinsics on the device.
MSAMP_HOST_DEVICE inline double dAddRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

MSAMP_HOST_DEVICE inline double dSubRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

MSAMP_HOST_DEVICE inline double dMulRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

MSAMP_HOST_DEVICE inline double dDivRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

MSAMP_HOST_DEVICE inline double dSqrtRn(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

/// a * b + c with one rounding (IEEE fused multiply-add on both targets).
MSAMP_HOST_DEVICE inline double dFmaRn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// A double-double: hi + lo with |lo| <= ulp(hi) / 2.
struct DoubleDouble {
  double hi, lo;
};

/// a * b in double-double (Dekker's product through an exact FMA), about
/// 100 bits of precision.
MSAMP_HOST_DEVICE inline DoubleDouble ddMul(DoubleDouble a, DoubleDouble b) {
  const double p = dMulRn(a.hi, b.hi);
  double e = dFmaRn(a.hi, b.hi, -p);
  e = dAddRn(e, dAddRn(dMulRn(a.hi, b.lo), dMulRn(a.lo, b.hi)));
  const double s = dAddRn(p, e);
  return {s, dSubRn(e, dSubRn(s, p))};
}

} // namespace detail

/// base^step for step >= 0: exponentiation by squaring in double-double,
/// rounded to double once. Deterministic IEEE operations only, so host and
/// device agree bit for bit; it differs from a correctly rounded pow in the
/// last bit at most, which no f32 constant of makeAdamConstants resolves
/// (NumericsOptimizerTest checks that against std::pow).
MSAMP_HOST_DEVICE inline double powStep(double base, int64_t step) {
  detail::DoubleDouble result{1.0, 0.0}, power{base, 0.0};
  for (int64_t n = step; n > 0; n >>= 1) {
    if (n & 1)
      result = detail::ddMul(result, power);
    if (n > 1)
      power = detail::ddMul(power, power);
  }
  return detail::dAddRn(result.hi, result.lo);
}

/// f32 constants of one Adam step, each rounded once from double.
struct AdamConstants {
  float beta1, oneMinusBeta1, beta2, oneMinusBeta2, eps;
  float stepSize;      ///< lr / (1 - beta1^step); mode 1: lr sqrt(bc2) / bc1
  float bc2Sqrt;       ///< sqrt(1 - beta2^step)
  float decayFactor;   ///< AdamW: 1 - lr * weight_decay
  float weightDecay;   ///< Adam (L2)
  float lrWeightDecay; ///< mode 1: lr * weight_decay
  bool hasWeightDecay, decoupled, mode1;
};

/// f32 constants of one SGD step.
struct SgdConstants {
  float lr, momentum, weightDecay;
  bool hasWeightDecay, hasBuffer, firstStep, nesterov;
};

/// Bias corrections in double from the integer step (`step` >= 1); lr is
/// the f32 value the step reads. Mode 1 (ONNX Runtime's AdamW mode 1 =
/// Hugging Face AdamW) folds both corrections into the step size. The same
/// function on the host (CPU backend) and in the CUDA kernels.
MSAMP_HOST_DEVICE inline AdamConstants
makeAdamConstants(float lrF32, int64_t step, double beta1, double beta2,
                  double eps, double weightDecay, bool decoupled, bool mode1) {
  using namespace detail;
  const double lr = lrF32;
  const double bc1 = dSubRn(1.0, powStep(beta1, step));
  const double bc2 = dSubRn(1.0, powStep(beta2, step));
  const double bc2Sqrt = dSqrtRn(bc2);
  AdamConstants c;
  c.beta1 = static_cast<float>(beta1);
  c.oneMinusBeta1 = static_cast<float>(dSubRn(1.0, beta1));
  c.beta2 = static_cast<float>(beta2);
  c.oneMinusBeta2 = static_cast<float>(dSubRn(1.0, beta2));
  c.eps = static_cast<float>(eps);
  c.stepSize = static_cast<float>(mode1 ? dDivRn(dMulRn(lr, bc2Sqrt), bc1)
                                        : dDivRn(lr, bc1));
  c.bc2Sqrt = static_cast<float>(bc2Sqrt);
  const double lrWeightDecay = dMulRn(lr, weightDecay);
  c.decayFactor = static_cast<float>(dSubRn(1.0, lrWeightDecay));
  c.weightDecay = static_cast<float>(weightDecay);
  c.lrWeightDecay = static_cast<float>(lrWeightDecay);
  c.hasWeightDecay = weightDecay != 0.0;
  c.decoupled = decoupled;
  c.mode1 = mode1;
  return c;
}

/// The same function on the host (CPU backend) and in the CUDA kernels,
/// which read lr and step from device memory.
MSAMP_HOST_DEVICE inline SgdConstants
makeSgdConstants(float lr, int64_t step, double momentum, double weightDecay,
                 bool hasBuffer, bool nesterov) {
  SgdConstants c;
  c.lr = lr;
  c.momentum = static_cast<float>(momentum);
  c.weightDecay = static_cast<float>(weightDecay);
  c.hasWeightDecay = weightDecay != 0.0;
  c.hasBuffer = hasBuffer;
  c.firstStep = step == 1;
  c.nesterov = nesterov;
  return c;
}

/// One element of Adam/AdamW (PyTorch order), or of AdamW mode 1 (Hugging
/// Face order: eps is added to the uncorrected sqrt(v'), the decay follows
/// the update): `w`, `m`, `v` hold the decoded old values on entry and the
/// new f32 values on exit; `g` is the decoded gradient.
MSAMP_HOST_DEVICE inline void adamElement(const AdamConstants &c, float g,
                                          float &w, float &m, float &v) {
  using namespace detail;
  if (c.hasWeightDecay && !c.mode1) {
    if (c.decoupled)
      w = mulRn(w, c.decayFactor);
    else
      g = addRn(g, mulRn(c.weightDecay, w));
  }
  const float mNew = addRn(mulRn(c.beta1, m), mulRn(c.oneMinusBeta1, g));
  const float vNew =
      addRn(mulRn(c.beta2, v), mulRn(mulRn(c.oneMinusBeta2, g), g));
  if (c.mode1) {
    const float denom = addRn(sqrtRn(vNew), c.eps);
    w = subRn(w, divRn(mulRn(c.stepSize, mNew), denom));
    if (c.hasWeightDecay)
      w = subRn(w, mulRn(c.lrWeightDecay, w));
  } else {
    const float denom = addRn(divRn(sqrtRn(vNew), c.bc2Sqrt), c.eps);
    w = subRn(w, divRn(mulRn(c.stepSize, mNew), denom));
  }
  m = mNew;
  v = vNew;
}

/// One element of PyTorch SGD (dampening 0). `w` and `b` (the momentum
/// buffer, ignored without one) hold the old values on entry and the new
/// ones on exit.
MSAMP_HOST_DEVICE inline void sgdElement(const SgdConstants &c, float g,
                                         float &w, float &b) {
  using namespace detail;
  if (c.hasWeightDecay)
    g = addRn(g, mulRn(c.weightDecay, w));
  if (c.hasBuffer) {
    const float bNew = c.firstStep ? g : addRn(mulRn(c.momentum, b), g);
    b = bNew;
    g = c.nesterov ? addRn(g, mulRn(c.momentum, bNew)) : bNew;
  }
  w = subRn(w, mulRn(c.lr, g));
}

} // namespace msamp::numerics

#endif // MSAMP_NUMERICS_OPTIMIZER_H
