//===- ActivationOptions.h - the activations= pipeline option ---*- C++ -*-===//
//
// `activations=f32|bf16` (docs/Interfaces.md 3), declared once for every
// level's pipeline options (--msamp-o0..o3, --msamp-amp, --msamp-te): a
// pipeline's option struct derives from ActivationOptions<Itself> (through
// OptimizerOptions, RecipeOptions.h) and calls addActivationPrecision before
// its epilogue. O0 accepts the option's
// parsing but msamp-bf16-activations refuses its train step.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_ACTIVATIONOPTIONS_H
#define MSAMP_TRANSFORMS_ACTIVATIONOPTIONS_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::msamp {

enum class ActivationPrecision { F32, BF16 };

template <typename Derived>
struct ActivationOptions : PassPipelineOptions<Derived> {
  using Base = PassPipelineOptions<Derived>;
  typename Base::template Option<ActivationPrecision> activations{
      *this, "activations",
      llvm::cl::desc("storage type of the forward activations"),
      llvm::cl::init(ActivationPrecision::F32),
      llvm::cl::values(
          clEnumValN(ActivationPrecision::F32, "f32", "f32 (default)"),
          clEnumValN(ActivationPrecision::BF16, "bf16",
                     "bf16, computed in f32 (autocast)"))};
};

/// Adds what `precision` needs after a level's precision passes (with bf16:
/// msamp-bf16-activations).
void addActivationPrecision(OpPassManager &pm, ActivationPrecision precision);

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_ACTIVATIONOPTIONS_H
