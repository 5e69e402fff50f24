//===- OptimizerMath.h - Adam/SGD per-element arithmetic --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend's view of the optimizer arithmetic: the per-element
// updates and their constants are the numerics core's
// (MSAMP/Numerics/Optimizer.h), the same functions the CPU backend's blocked
// loops call, so the two backends compute the same bits by construction. The
// kernels are also built with --fmad=false. What is CUDA-specific here is the
// just-in-time scale of a tensor whose amax was reduced as magnitude bits.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERMATH_H
#define MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERMATH_H

#include "../common/ElementAccess.h"

#include "MSAMP/Numerics/Optimizer.h"

#include <cstdint>

namespace msamp::runtime::cuda {

using numerics::AdamConstants;
using numerics::adamElement;
using numerics::makeAdamConstants;
using numerics::makeSgdConstants;
using numerics::SgdConstants;
using numerics::sgdElement;

/// The just-in-time power-of-two scale of docs/Numerics.md 5.2 for a tensor of
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
