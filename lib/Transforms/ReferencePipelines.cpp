//===- ReferencePipelines.cpp - --msamp-amp and --msamp-te ----------------===//
//
// The two reference rows of MS-AMP's level table, as pipelines of the same
// passes as the MS-AMP levels (docs/Levels.md):
//
//  * --msamp-amp="dtype=bf16|fp16" (levels amp-bf16, amp-fp16): PyTorch
//    autocast. GEMMs read 16-bit operands and accumulate in f32
//    (msamp-amp-gemms); weights, gradients, the gradient all-reduce and the
//    Adam states stay f32: 16 bytes of model state per parameter.
//  * --msamp-te (level te): Transformer Engine's DelayedScaling defaults:
//    HYBRID formats, amax history 1024 reduced with max, margin 0, exact
//    (not power-of-two) scales, no just-in-time warm-up (TE starts from
//    scale 1), and delayed scaling for every quantized tensor, weights
//    included. Everything else is f32 as in the AMP row; the scaling state
//    comes on top of its 16 bytes per parameter.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/RecipeOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct AMPPipelineOptions : OptimizerOptions<AMPPipelineOptions> {
  Option<AMPDtype, EnumParser<AMPDtype>> dtype{
      *this, "dtype", llvm::cl::desc("GEMM operand type: bf16 or fp16"),
      llvm::cl::init(AMPDtype::BF16), enumValues<AMPDtype>()};
  Option<LossScaleMode, EnumParser<LossScaleMode>> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("auto (fp16: dynamic, bf16: none), dynamic or none"),
      llvm::cl::init(LossScaleMode::Auto), enumValues<LossScaleMode>()};
  // torch.amp.GradScaler's defaults.
  Option<double> initScale{*this, "init-scale",
                           llvm::cl::desc("initial loss scale"),
                           llvm::cl::init(65536.0)};
  Option<double> growthFactor{*this, "growth-factor",
                              llvm::cl::desc("loss scale growth factor"),
                              llvm::cl::init(2.0)};
  Option<double> backoffFactor{*this, "backoff-factor",
                               llvm::cl::desc("loss scale backoff factor"),
                               llvm::cl::init(0.5)};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("good steps before the loss scale grows"),
      llvm::cl::init(2000)};
};

/// Transformer Engine's DelayedScaling knobs (the ones Accelerate's TE
/// fp8_config sets), with TE's defaults: the FP8 recipe of the MS-AMP levels
/// (RecipeOptions.h) with a 1024-step amax history, and the Linear-layer
/// filters of torchao's Float8Linear (Accelerate's AO backend,
/// docs/Levels.md).
struct TEPipelineOptions
    : FP8RecipeOptions<TEPipelineOptions, /*DefaultAmaxHistoryLen=*/1024> {
  Option<bool> keepFirstLast{
      *this, "keep-first-last",
      llvm::cl::desc("the first and last Linear layers in high precision"),
      llvm::cl::init(false)};
  Option<int64_t> dimMultiple{
      *this, "dim-multiple",
      llvm::cl::desc("Linear layers with a weight dimension that is not a "
                     "multiple of N in high precision (0: none)"),
      llvm::cl::init(0)};
};
} // namespace

void mlir::msamp::registerMSAMPReferencePipelines() {
  PassPipelineRegistration<AMPPipelineOptions>(
      "msamp-amp",
      "levels amp-bf16 / amp-fp16: autocast GEMMs (16-bit operands, f32 "
      "accumulation), f32 weights, gradients and Adam states",
      [](OpPassManager &pm, const AMPPipelineOptions &opts) {
        buildTrainStepPrologue(pm,
                               opts.synthesize(opts.dtype == AMPDtype::FP16
                                                   ? TrainStepLevel::AMPFP16
                                                   : TrainStepLevel::AMPBF16));
        // "auto": GradScaler with fp16, nothing with bf16 (f32's range), as
        // PyTorch recipes use them; dynamic with bf16 reaches the pass,
        // which rejects it.
        bool scaled = opts.lossScale == LossScaleMode::Dynamic ||
                      (opts.lossScale == LossScaleMode::Auto &&
                       opts.dtype == AMPDtype::FP16);
        MSAMPAMPGemmsOptions gemms;
        gemms.dtype = opts.dtype;
        gemms.lossScale = scaled;
        gemms.initScale = opts.initScale;
        pm.addPass(createMSAMPAMPGemms(gemms));
        MSAMPLossScaleOptions scaler;
        scaler.initScale = opts.initScale;
        scaler.growthFactor = opts.growthFactor;
        scaler.backoffFactor = opts.backoffFactor;
        scaler.growthInterval = opts.growthInterval;
        addActivationPrecision(pm, opts.activations);
        buildTrainStepEpilogue(pm, [&](OpPassManager &pm) {
          if (scaled)
            pm.addPass(createMSAMPLossScale(scaler));
        });
      });
  PassPipelineRegistration<TEPipelineOptions>(
      "msamp-te",
      "level te: Transformer Engine's DelayedScaling (FP8 GEMMs, delayed "
      "scaling of every operand, exact scales), f32 weights, gradients and "
      "Adam states",
      [](OpPassManager &pm, const TEPipelineOptions &opts) {
        buildTrainStepPrologue(pm, opts.synthesize(TrainStepLevel::TE));
        MSAMPFP8GemmsOptions gemms = opts.fp8Gemms();
        gemms.scaleKind = ScaleKind::Exact;
        gemms.warmup = false;
        gemms.reduceAmax = true;
        gemms.delayedWeights = true;
        gemms.keepFirstLast = opts.keepFirstLast;
        gemms.dimMultiple = opts.dimMultiple;
        pm.addPass(createMSAMPFP8Gemms(gemms));
        addActivationPrecision(pm, opts.activations);
        buildTrainStepEpilogue(pm);
      });
}
