//===- RecipeOptions.h - pipeline options shared by the levels --*- C++ -*-===//
//
// The pipeline options more than one level accepts, each declared once
// (docs/Interfaces.md 3 is the normative list of spellings):
//
//   ActivationOptions   activations=f32|bf16 (ActivationOptions.h)
//   OptimizerOptions    + optimizer=, lr=, weight-decay= (every level)
//   FP8RecipeOptions    + the FP8 recipe of the FP8 levels: fp8-format,
//                       scaling, amax-history-len, amax-compute-algo,
//                       margin, interval, fprop-hp, dgrad-hp, wgrad-hp
//                       (--msamp-o0..o3 and --msamp-te)
//
// A pipeline's option struct derives from the mixin it needs with itself as
// `Derived` and declares only its own options. Enum-valued options take
// their spellings from RecipeEnums.td through enumValues<E>() and parse with
// EnumParser<E> (RecipeEnums.h).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_RECIPEOPTIONS_H
#define MSAMP_TRANSFORMS_RECIPEOPTIONS_H

#include "MSAMP/Transforms/ActivationOptions.h"
#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/RecipeEnums.h"

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::msamp {

/// The optimizer overrides every level accepts (and activations=).
template <typename Derived>
struct OptimizerOptions : ActivationOptions<Derived> {
  using Base = PassPipelineOptions<Derived>;
  typename Base::template Option<OptimizerKind, EnumParser<OptimizerKind>>
      optimizer{
          *this, "optimizer", llvm::cl::desc("override the optimizer kind"),
          llvm::cl::init(OptimizerKind::Keep), enumValues<OptimizerKind>()};
  typename Base::template Option<double> lr{
      *this, "lr", llvm::cl::desc("override the default learning rate"),
      llvm::cl::init(-1.0)};
  typename Base::template Option<double> weightDecay{
      *this, "weight-decay", llvm::cl::desc("override the weight decay"),
      llvm::cl::init(-1.0)};

  /// The train-step synthesis of level `level` with these overrides.
  MSAMPSynthesizeTrainStepOptions synthesize(TrainStepLevel level) const {
    MSAMPSynthesizeTrainStepOptions synth;
    synth.optimizer = optimizer;
    synth.lr = lr;
    synth.weightDecay = weightDecay;
    synth.level = level;
    return synth;
  }
};

/// The FP8 recipe both the MS-AMP levels and --msamp-te take; the levels
/// differ only in the default amax history (MS-AMP's 16, Transformer
/// Engine's 1024).
template <typename Derived, int64_t DefaultAmaxHistoryLen>
struct FP8RecipeOptions : OptimizerOptions<Derived> {
  using Base = PassPipelineOptions<Derived>;
  typename Base::template Option<FP8Format, EnumParser<FP8Format>> fp8Format{
      *this, "fp8-format", llvm::cl::desc("hybrid or e4m3"),
      llvm::cl::init(FP8Format::Hybrid), enumValues<FP8Format>()};
  typename Base::template Option<ScalingMode, EnumParser<ScalingMode>> scaling{
      *this, "scaling", llvm::cl::desc("delayed or current"),
      llvm::cl::init(ScalingMode::Delayed), enumValues<ScalingMode>()};
  typename Base::template Option<int64_t> amaxHistoryLen{
      *this, "amax-history-len", llvm::cl::desc("amax history length"),
      llvm::cl::init(DefaultAmaxHistoryLen)};
  typename Base::template Option<AmaxAlgo, EnumParser<AmaxAlgo>>
      amaxComputeAlgo{*this, "amax-compute-algo",
                      llvm::cl::desc("max or most_recent"),
                      llvm::cl::init(AmaxAlgo::Max), enumValues<AmaxAlgo>()};
  typename Base::template Option<int64_t> margin{
      *this, "margin", llvm::cl::desc("scale margin"), llvm::cl::init(0)};
  typename Base::template Option<int64_t> interval{
      *this, "interval", llvm::cl::desc("recompute delayed scales every N"),
      llvm::cl::init(1)};
  typename Base::template Option<bool> fpropHp{
      *this, "fprop-hp", llvm::cl::desc("forward GEMMs in high precision"),
      llvm::cl::init(false)};
  typename Base::template Option<bool> dgradHp{
      *this, "dgrad-hp",
      llvm::cl::desc("data-gradient GEMMs in high precision"),
      llvm::cl::init(false)};
  typename Base::template Option<bool> wgradHp{
      *this, "wgrad-hp",
      llvm::cl::desc("weight-gradient GEMMs in high precision"),
      llvm::cl::init(false)};

  /// --msamp-fp8-gemms with this recipe; the level sets the rest.
  MSAMPFP8GemmsOptions fp8Gemms() const {
    MSAMPFP8GemmsOptions gemms;
    gemms.fp8Format = fp8Format;
    gemms.scaling = scaling;
    gemms.amaxHistoryLen = amaxHistoryLen;
    gemms.amaxComputeAlgo = amaxComputeAlgo;
    gemms.margin = margin;
    gemms.interval = interval;
    gemms.fpropHp = fpropHp;
    gemms.dgradHp = dgradHp;
    gemms.wgradHp = wgradHp;
    return gemms;
  }
};

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_RECIPEOPTIONS_H
