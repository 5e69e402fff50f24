//===- ParamGroups.h - per-param optimizer overrides ------------*- C++ -*-===//
//
// torch.optim param groups in the input contract (docs/Interfaces.md 1): a
// param argument may carry its group's weight decay and its group's lr as a
// multiple of the base lr (schedules and --lr scale the base lr). Verified by
// msamp-verify-contract, applied by msamp-synthesize-train-step to each
// param's optimizer op (its weight_decay attribute and lr operand), which
// every later level keeps.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_PARAMGROUPS_H
#define MSAMP_TRAINSTEP_PARAMGROUPS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

/// f64, >= 0: replaces the module optimizer's weight_decay for this param.
constexpr llvm::StringLiteral kWeightDecayAttr = "msamp.weight_decay";
/// f64, >= 0: this param's lr = lr_scale * the base lr.
constexpr llvm::StringLiteral kLrScaleAttr = "msamp.lr_scale";

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_PARAMGROUPS_H
