//===- LossScale.h - the AMP fp16 level's dynamic loss scale ----*- C++ -*-===//
//
// torch.amp.GradScaler's state as train-step state (role "loss_scale"):
// `loss_scale` (tensor<f32>) and `loss_scale.growth_tracker` (tensor<i64>,
// good steps since the last change). msamp-amp-gemms creates both and scales
// the output-gradient operands of the fp16 GEMMs; msamp-loss-scale (after
// msamp-grad-stats) skips overflowing steps and updates the scale.
//
// Both state tensors start at zero, and a zero scale means "not yet
// initialized": the step uses init-scale then, as GradScaler creates its
// scale lazily at the first scale() call. (The manifest's initializers are
// zeros, ones, normal and from_param; a zero scale never arises otherwise,
// since a scale halved 150 times from 2^16 is still a normal f32.)
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_LOSSSCALE_H
#define MSAMP_TRANSFORMS_LOSSSCALE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

constexpr llvm::StringLiteral kLossScaleName = "loss_scale";
constexpr llvm::StringLiteral kGrowthTrackerName = "loss_scale.growth_tracker";
/// Metric result: 1.0 when the step overflowed and was skipped, else 0.0.
constexpr llvm::StringLiteral kOverflowMetricName = "loss_scale_overflow";

/// The scale this step uses (0-d f32 tensor): `state`, or `initScale` while
/// `state` is still zero.
Value buildLossScaleInUse(OpBuilder &b, Location loc, Value state,
                          double initScale);

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_LOSSSCALE_H
