//===- OptimizerMath.h - Adam/SGD per-element arithmetic --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The per-element Adam/AdamW and SGD updates of the CUDA backend, written
// once as MSAMP_HOST_DEVICE functions so that the host unit tests can run
// them against the CPU backend without a GPU. The order of operations and
// every rounding are the CPU backend's (CPU/CpuKernels.cpp adamBlock,
// sgdBlock; NUMERICS.md 5.2), with each f32 operation spelled as a
// round-to-nearest intrinsic: the kernels are also built with --fmad=false,
// but an explicit __fmul_rn/__fadd_rn cannot be contracted into an FMA under
// any flag, and an FMA would round differently from the CPU's separate
// product and sum (-ffp-contract=off there).
//
// The constants are derived on the host, in double, from the integer step
// and the f32 lr exactly as the CPU backend does (makeAdamConstants is that
// code), and each is rounded to f32 once.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERMATH_H
#define MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERMATH_H

#include "../common/ElementAccess.h"

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace msamp::runtime::cuda {

/// f32 constants of one Adam step, each rounded once from double.
struct AdamConstants {
  float beta1, oneMinusBeta1, beta2, oneMinusBeta2, eps;
  float stepSize;      ///< lr / (1 - beta1^step)
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

#if !defined(__CUDA_ARCH__)
/// The CPU backend's derivation (adamUpdate in CPU/CpuKernels.cpp): bias
/// corrections in double from the integer step, each constant rounded once.
inline AdamConstants makeAdamConstants(float lrF32, int64_t step, double beta1,
                                       double beta2, double eps,
                                       double weightDecay, bool decoupled,
                                       bool mode1 = false) {
  const double lr = lrF32;
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  AdamConstants c;
  c.beta1 = static_cast<float>(beta1);
  c.oneMinusBeta1 = static_cast<float>(1.0 - beta1);
  c.beta2 = static_cast<float>(beta2);
  c.oneMinusBeta2 = static_cast<float>(1.0 - beta2);
  c.eps = static_cast<float>(eps);
  c.stepSize = static_cast<float>(mode1 ? lr * std::sqrt(bc2) / bc1 : lr / bc1);
  c.bc2Sqrt = static_cast<float>(std::sqrt(bc2));
  c.decayFactor = static_cast<float>(1.0 - lr * weightDecay);
  c.weightDecay = static_cast<float>(weightDecay);
  c.lrWeightDecay = static_cast<float>(lr * weightDecay);
  c.hasWeightDecay = weightDecay != 0.0;
  c.decoupled = decoupled;
  c.mode1 = mode1;
  return c;
}

inline SgdConstants makeSgdConstants(float lr, int64_t step, double momentum,
                                     double weightDecay, bool hasBuffer,
                                     bool nesterov) {
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
#endif

/// One element of Adam/AdamW (NUMERICS 5.2, PyTorch order), or of ONNX
/// Runtime's AdamW mode 1 (Hugging Face order, `c.mode1`): `w`, `m`, `v`
/// hold the decoded old values on entry and the new f32 values on exit; `g`
/// is the decoded gradient.
MSAMP_HOST_DEVICE inline void adamElement(const AdamConstants &c, float g,
                                          float &w, float &m, float &v) {
  if (c.hasWeightDecay && !c.mode1) {
    if (c.decoupled)
      w = nd::mulRn(w, c.decayFactor);
    else
      g = nd::addRn(g, nd::mulRn(c.weightDecay, w));
  }
  const float mNew =
      nd::addRn(nd::mulRn(c.beta1, m), nd::mulRn(c.oneMinusBeta1, g));
  const float vNew = nd::addRn(nd::mulRn(c.beta2, v),
                               nd::mulRn(nd::mulRn(c.oneMinusBeta2, g), g));
  if (c.mode1) {
    const float denom = nd::addRn(sqrtRn(vNew), c.eps);
    w = subRn(w, nd::divRn(nd::mulRn(c.stepSize, mNew), denom));
    if (c.hasWeightDecay)
      w = subRn(w, nd::mulRn(c.lrWeightDecay, w));
  } else {
    const float denom = nd::addRn(nd::divRn(sqrtRn(vNew), c.bc2Sqrt), c.eps);
    w = subRn(w, nd::divRn(nd::mulRn(c.stepSize, mNew), denom));
  }
  m = mNew;
  v = vNew;
}

/// One element of PyTorch SGD (dampening 0). `w` and `b` (the momentum
/// buffer, ignored without one) hold the old values on entry and the new
/// ones on exit.
MSAMP_HOST_DEVICE inline void sgdElement(const SgdConstants &c, float g,
                                         float &w, float &b) {
  if (c.hasWeightDecay)
    g = nd::addRn(g, nd::mulRn(c.weightDecay, w));
  if (c.hasBuffer) {
    const float bNew = c.firstStep ? g : nd::addRn(nd::mulRn(c.momentum, b), g);
    b = bNew;
    g = c.nesterov ? nd::addRn(g, nd::mulRn(c.momentum, bNew)) : bNew;
  }
  w = subRn(w, nd::mulRn(c.lr, g));
}

/// The just-in-time power-of-two scale of NUMERICS 5.2 for a tensor of
/// `dtype` whose new values have magnitude bits `amaxBits` (the integer max
/// of magnitudeBits): the old scale survives an amax of 0 or a non-finite
/// one. Same as the CPU's StateTensor::chooseScale.
MSAMP_HOST_DEVICE inline float chooseScale(uint32_t amaxBits, float oldScale,
                                           int32_t dtype) {
  return numerics::computeScalePow2(amaxFromBits(amaxBits), oldScale,
                                    numerics::maxFinite(formatOf(dtype)),
                                    /*margin=*/0);
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERMATH_H
