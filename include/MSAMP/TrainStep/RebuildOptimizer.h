//===- RebuildOptimizer.h - optimizer ops with operands replaced -*- C++
//-*-===//
//
// The transforms that change how a param, its gradient or its moments are
// stored (--msamp-fp16-weights, --msamp-fp8-weight-gradients,
// --msamp-low-precision-optimizer) give the optimizer op a tensor with a
// scale where it had none. The ops' operand and result segments change with
// it, so the op is built anew; this is the one place that spells out the
// builders of msamp.adam_update and msamp.sgd_update with all their operands.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_REBUILDOPTIMIZER_H
#define MSAMP_TRAINSTEP_REBUILDOPTIMIZER_H

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::msamp {

/// A tensor operand of an optimizer op and its scale (the inverse scale for
/// a gradient), null when the tensor is stored in f32.
struct ScaledOperand {
  Value value;
  Value scale;
};

/// The operand groups to replace; each set one replaces the op's tensor and
/// its scale together (a null scale drops the op's).
struct OptimizerOverrides {
  std::optional<ScaledOperand> param;
  std::optional<ScaledOperand> grad;
  /// msamp.adam_update's moments (none on msamp.sgd_update).
  std::optional<ScaledOperand> expAvg;
  std::optional<ScaledOperand> expAvgSq;
};

/// Builds, in front of `op` (msamp.adam_update or msamp.sgd_update), the
/// same update with `overrides` applied: every other operand, the
/// hyperparameters and the discardable attributes are `op`'s. The result
/// types follow the operands, as the ops require (a scaled tensor returns
/// its new scale). `op` is left as it is: the caller maps its results.
Operation *rebuildOptimizerOp(OpBuilder &b, Operation *op,
                              const OptimizerOverrides &overrides);

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_REBUILDOPTIMIZER_H
