//===- Pipelines.cpp - the --msamp-o0/o1/o2 pipelines -----------*- C++ -*-===//
//
// Each optimization level is a fixed sequence of msamp passes (the precision
// passes of the level, then the gradient statistics) plus canonicalization
// and a final invariant check. Pipeline options are the
// user-facing recipe knobs of docs/Interfaces.md 4 and are forwarded to the
// passes that read them.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/RecipeOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
/// The MS-AMP levels: the FP8 recipe (RecipeOptions.h, shared with
/// --msamp-te) plus the knobs only these levels have.
struct MSAMPPipelineOptions
    : FP8RecipeOptions<MSAMPPipelineOptions, /*DefaultAmaxHistoryLen=*/16> {
  Option<ScaleKind, EnumParser<ScaleKind>> scaleKind{
      *this, "scale-kind", llvm::cl::desc("pow2 or exact"),
      llvm::cl::init(ScaleKind::Pow2), enumValues<ScaleKind>()};
  Option<bool> warmup{*this, "warmup",
                      llvm::cl::desc("just-in-time scales while the amax "
                                     "history fills"),
                      llvm::cl::init(true)};
  Option<bool> reduceAmax{*this, "reduce-amax",
                          llvm::cl::desc("MAX-reduce delayed-scaled amaxes "
                                         "over the data-parallel group"),
                          llvm::cl::init(true)};
  Option<bool> fp8Attention{*this, "fp8-attention",
                            llvm::cl::desc("activation x activation GEMMs "
                                           "in FP8"),
                            llvm::cl::init(false)};
  Option<std::string> exclude{*this, "exclude",
                              llvm::cl::desc("regex on param names kept in "
                                             "high precision"),
                              llvm::cl::init("")};
  // O3 only: the group and the rank this program is specialized for (more
  // O3 options, e.g. the ZeRO stage, belong here).
  Option<int64_t> worldSize{*this, "world-size",
                            llvm::cl::desc("O3: ranks of the data-parallel "
                                           "group"),
                            llvm::cl::init(1)};
  Option<int64_t> rank{*this, "rank",
                       llvm::cl::desc("O3: the rank this program is "
                                      "compiled for"),
                       llvm::cl::init(0)};
  Option<int64_t> zeroStage{*this, "zero-stage",
                            llvm::cl::desc("O3: ZeRO stage, 1 (gradients "
                                           "all-reduced), 2 (reduce-"
                                           "scattered) or 3 (weights "
                                           "sharded too)"),
                            llvm::cl::init(2)};
  Option<double> bucketMb{*this, "bucket-mb",
                          llvm::cl::desc("O3: MiB of gradient payload per "
                                         "flat-shard bucket"),
                          llvm::cl::init(25.0)};
};

/// The MS-AMP levels are the first four train-step levels.
using Level = TrainStepLevel;

} // namespace

void mlir::msamp::buildTrainStepPrologue(
    OpPassManager &pm, const MSAMPSynthesizeTrainStepOptions &synth) {
  pm.addPass(createMSAMPVerifyContract());
  pm.addPass(createInlinerPass());
  pm.addPass(createMSAMPClassifyGemms());
  pm.addPass(createMSAMPSynthesizeTrainStep(synth));
  // Before any pass that could move the seed's loads and stores.
  pm.addPass(createMSAMPPhiloxRandom());
  // While the dropout is still torch-mlir's chain of generics.
  pm.addPass(createMSAMPDropoutTraining());
}

void mlir::msamp::addActivationPrecision(OpPassManager &pm,
                                         ActivationPrecision precision) {
  if (precision == ActivationPrecision::BF16)
    pm.addPass(createMSAMPBF16Activations());
}

void mlir::msamp::buildTrainStepEpilogue(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> afterStats) {
  // After every pass that changes how gradients are stored: the norm and
  // the overflow check read the gradients exactly as the updates do.
  pm.addPass(createMSAMPGradStats());
  if (afterStats)
    afterStats(pm);

  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // On the final graph, so that the ranges are those of the reads that run.
  pm.addPass(createMSAMPIndexChecks());
  pm.addPass(createMSAMPComputedIndexChecks());
  pm.addPass(createMSAMPVerifyTrainStep());
}

namespace {
void buildPipeline(OpPassManager &pm, const MSAMPPipelineOptions &opts,
                   Level level) {
  buildTrainStepPrologue(pm, opts.synthesize(level));

  if (level != Level::O0) {
    MSAMPFP16WeightsOptions weights;
    weights.exclude = opts.exclude;
    pm.addPass(createMSAMPFP16Weights(weights));

    MSAMPFP8GemmsOptions gemms = opts.fp8Gemms();
    gemms.scaleKind = opts.scaleKind;
    gemms.warmup = opts.warmup;
    gemms.reduceAmax = opts.reduceAmax;
    gemms.fp8Attention = opts.fp8Attention;
    gemms.exclude = opts.exclude;
    pm.addPass(createMSAMPFP8Gemms(gemms));

    MSAMPFP8WeightGradientsOptions grads;
    grads.scaleKind = opts.scaleKind;
    pm.addPass(createMSAMPFP8WeightGradients(grads));
  }
  if (level == Level::O2 || level == Level::O3)
    pm.addPass(createMSAMPLowPrecisionOptimizer());
  if (level == Level::O3) {
    MSAMPZeROShardOptions zero;
    zero.worldSize = opts.worldSize;
    zero.rank = opts.rank;
    zero.zeroStage = opts.zeroStage;
    zero.bucketMb = opts.bucketMb;
    pm.addPass(createMSAMPZeROShard(zero));
  }
  addActivationPrecision(pm, opts.activations);
  buildTrainStepEpilogue(pm);
}
} // namespace

void mlir::msamp::registerMSAMPPipelines() {
  PassPipelineRegistration<MSAMPPipelineOptions>(
      "msamp-o0",
      "f32 baseline: contract check and train-step synthesis, no FP8",
      [](OpPassManager &pm, const MSAMPPipelineOptions &opts) {
        buildPipeline(pm, opts, Level::O0);
      });
  PassPipelineRegistration<MSAMPPipelineOptions>(
      "msamp-o1",
      "MS-AMP O1: FP8 GEMMs, FP16 weights, FP8 weight gradients and "
      "gradient all-reduce",
      [](OpPassManager &pm, const MSAMPPipelineOptions &opts) {
        buildPipeline(pm, opts, Level::O1);
      });
  PassPipelineRegistration<MSAMPPipelineOptions>(
      "msamp-o2", "MS-AMP O2: O1 plus FP8 first and FP16 second Adam moments",
      [](OpPassManager &pm, const MSAMPPipelineOptions &opts) {
        buildPipeline(pm, opts, Level::O2);
      });
  PassPipelineRegistration<MSAMPPipelineOptions>(
      "msamp-o3",
      "MS-AMP O3: O2 plus FP8 weights and ZeRO-sharded FP16 master weights "
      "and optimizer states; one program per rank "
      "(world-size=N rank=R)",
      [](OpPassManager &pm, const MSAMPPipelineOptions &opts) {
        buildPipeline(pm, opts, Level::O3);
      });
  // --msamp-emit-manifest=FILE: the value is a file name, not an option list.
  registerPassPipeline(
      "msamp-emit-manifest",
      "write the train step's JSON manifest to FILE "
      "(--msamp-emit-manifest=FILE)",
      [](OpPassManager &pm, StringRef file,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (file.empty())
          return errorHandler("--msamp-emit-manifest needs a file name: "
                              "--msamp-emit-manifest=FILE");
        MSAMPWriteManifestOptions options;
        options.file = file.str();
        pm.addPass(createMSAMPWriteManifest(options));
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)>) {});
}
