//===- Passes.td - msamp passes ------------------------------*- tablegen -*-===//
//
// The passes of the msamp FP8 training compiler, in pipeline order. Every pass
// is usable alone in msamp-opt; the --msamp-o0/o1/o2 pipelines chain them
// (lib/Transforms/Pipelines.cpp). The compiled train step they produce is
// specified in docs/TrainStep.md.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_PASSES_TD
#define MSAMP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MSAMPVerifyContract : Pass<"msamp-verify-contract", "::mlir::ModuleOp"> {
  let summary = "check that a training graph follows the input contract";
  let description = [{
    Rejects, with a located error naming the argument, op or attribute and
    what was expected, every module that violates the input contract of
    docs/Interfaces.md 1: exactly one `msamp.kind = "forward_backward"` function;
    every argument with a `msamp.role` in {param, buffer, input, target} and a
    unique `msamp.name`; f32 params and buffers; f32 or integer inputs and
    targets; exactly one 0-d f32 loss result; one gradient per param with the
    param's name and type; static shapes everywhere; only the func, linalg,
    tensor, arith, math, scf, shard and ml_program dialects (`cf.assert` is
    dropped with a remark), ml_program only as torch-mlir's dropout seed
    (`@global_seed` loaded, advanced and stored around each uniform draw,
    include/MSAMP/Transforms/TorchRandom.h; docs/Randomness.md); a
    well-formed `msamp.optimizer` dictionary.
    A module that is already a compiled `train_step` is rejected too.
  }];
}

def MSAMPClassifyGemms : Pass<"msamp-classify-gemms", "::mlir::ModuleOp"> {
  let summary = "find every GEMM and classify it by dataflow";
  let description = [{
    Finds `linalg.matmul` (any indexing maps), `linalg.batch_matmul` and
    contraction `linalg.generic`s, looking through `linalg.transpose`
    producers, and classifies each by dataflow from parameters to gradients:
    `fprop` (a parameter operand, feeds the loss), `dgrad` (a parameter
    operand, backward), `wgrad` (backward, produces a parameter's gradient),
    `attention_fwd` / `attention_bwd` (activation x activation). The result is
    a `msamp.gemm` dictionary on the op: `{kind, layer, weight?,
    operand_roles = ["activation" | "weight" | "grad_output", ...]}`, and the
    unit attribute `msamp.gemm_weight` on every parameter argument used as a
    GEMM weight.
  }];
  let statistics = [
    Statistic<"numGemms", "num-gemms", "GEMMs found">,
    Statistic<"numFprop", "num-fprop", "forward GEMMs with a weight">,
    Statistic<"numDgrad", "num-dgrad", "data-gradient GEMMs">,
    Statistic<"numWgrad", "num-wgrad", "weight-gradient GEMMs">,
    Statistic<"numAttention", "num-attention",
              "activation x activation GEMMs">
  ];
}

def MSAMPSynthesizeTrainStep
    : Pass<"msamp-synthesize-train-step", "::mlir::ModuleOp"> {
  let summary = "build the public @train_step from forward_backward and the "
                "declared optimizer";
  let description = [{
    Inlines the forward_backward function into a new public `@train_step`
    that all-reduces every gradient (mean over the data-parallel group,
    emitted even for one rank), applies the declared optimizer
    (`msamp.adam_update` / `msamp.sgd_update`) and increments the step
    counter. All persistent state (params, optimizer moments, step) is an
    argument and comes back as a result marked `msamp.updates = <argument
    index>`; the learning rate is a runtime input. The exact form is
    docs/TrainStep.md. Options override the module's `msamp.optimizer`.
  }];
  let options = [
    Option<"optimizer", "optimizer", "::mlir::msamp::OptimizerKind",
           "::mlir::msamp::OptimizerKind::Keep",
           "Override the optimizer kind: sgd, adam or adamw (empty: keep "
           "the module's)",
           "::mlir::msamp::enumValues<::mlir::msamp::OptimizerKind>()">,
    Option<"lr", "lr", "double", "-1.0",
           "Override the default learning rate (negative: keep)">,
    Option<"weightDecay", "weight-decay", "double", "-1.0",
           "Override the weight decay (negative: keep)">,
    Option<"level", "level", "::mlir::msamp::TrainStepLevel",
           "::mlir::msamp::TrainStepLevel::O0",
           "Value of the msamp.level attribute of the train step: O0, O1, "
           "O2, O3, amp-bf16, amp-fp16 or te",
           "::mlir::msamp::enumValues<::mlir::msamp::TrainStepLevel>()">
  ];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPPhiloxRandom : Pass<"msamp-philox-random", "::mlir::ModuleOp"> {
  let summary = "replace torch-mlir's seeded random numbers by the step's "
                "Philox generator";
  let description = [{
    Runs on `@train_step` right after --msamp-synthesize-train-step. Every
    random-number computation of the graph (torch-mlir's `@global_seed`
    load / advance / store and the linalg.generic drawing uniform numbers
    from it, include/MSAMP/Transforms/TorchRandom.h) becomes one
    `msamp.random_uniform` with a stable id (its position among the graph's
    random ops), keyed by a new state argument `rng.seed` (role
    "rng_state", 0-d i64, init "seed": the run's seed), the step counter and
    the data-parallel rank (an input with role "rank", added if absent). The
    ml_program seed is removed. A graph without randomness is unchanged.
    docs/Randomness.md.
  }];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect"];
}

def MSAMPDropoutTraining : Pass<"msamp-dropout-training", "::mlir::ModuleOp"> {
  let summary = "gate the step's dropout by a `training` input, so that "
                "evaluation runs without it";
  let description = [{
    Runs on `@train_step` after --msamp-philox-random. Every dropout as
    torch-mlir emits it for nn.Dropout, F.dropout, Hugging Face attention
    dropout and timm's DropPath (a `msamp.random_uniform` in [0, 1) compared
    `u < keep` in one linalg.generic, the i1 mask converted to 0/1, divided
    by the same keep) is gated by a new hyperparameter input `training`
    (tensor<f32>; the session writes 1 for a training step and 0 for an
    evaluation): the mask becomes `cmp || training == 0` and the scaled mask
    `training != 0 ? mask / keep : 1.0`. With training = 1 the step computes
    the same bits as before; with training = 0 every dropout is the
    identity, as in PyTorch's model.eval(). Other draws (rand_like,
    bernoulli, randn_like) are not dropout and stay random, as in PyTorch.
    A step without dropout is unchanged. docs/Randomness.md 3.
  }];
}

def MSAMPFP16Weights : Pass<"msamp-fp16-weights", "::mlir::ModuleOp"> {
  let summary = "store GEMM weights as FP16 with a per-tensor scale (O1/O2)";
  let description = [{
    Every parameter marked `msamp.gemm_weight` (and not excluded) is stored as
    `f16` with a power-of-two scale argument `<param>.scale` (MS-AMP's scaled
    FP16 weight). Uses read `msamp.dequantize`d f32 values; the optimizer
    update writes the new FP16 value and scale.
  }];
  let options = [
    Option<"exclude", "exclude", "std::string", "\"\"",
           "Regex on param names kept in f32">
  ];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPFP8Gemms : Pass<"msamp-fp8-gemms", "::mlir::ModuleOp"> {
  let summary = "run eligible GEMMs in FP8 with scaling state";
  let description = [{
    Rewrites every eligible GEMM of the train step into `msamp.quantize` of
    both operands plus `msamp.gemm` with f32 accumulation: Linear fprop,
    dgrad and wgrad (attention GEMMs only with `fp8-attention`). Forward
    operands are E4M3, output-gradient operands E5M2 (`fp8-format=hybrid`) or
    E4M3 (`e4m3`). Activations and output gradients use delayed scaling
    (amax history + scale as state, just-in-time during the first
    `amax-history-len` steps) unless `scaling=current`; weights are scaled
    just in time. A GEMM left in high precision gets a remark saying why.
  }];
  let options = [
    Option<"fp8Format", "fp8-format", "::mlir::msamp::FP8Format",
           "::mlir::msamp::FP8Format::Hybrid",
           "hybrid (E4M3 forward, E5M2 gradients) or e4m3",
           "::mlir::msamp::enumValues<::mlir::msamp::FP8Format>()">,
    Option<"scaling", "scaling", "::mlir::msamp::ScalingMode",
           "::mlir::msamp::ScalingMode::Delayed", "delayed or current",
           "::mlir::msamp::enumValues<::mlir::msamp::ScalingMode>()">,
    Option<"scaleKind", "scale-kind", "::mlir::msamp::ScaleKind",
           "::mlir::msamp::ScaleKind::Pow2",
           "pow2 (MS-AMP) or exact (Transformer Engine)",
           "::mlir::msamp::enumValues<::mlir::msamp::ScaleKind>()">,
    Option<"amaxHistoryLen", "amax-history-len", "int64_t", "16",
           "Length of the amax history of delayed-scaled tensors">,
    Option<"amaxComputeAlgo", "amax-compute-algo", "::mlir::msamp::AmaxAlgo",
           "::mlir::msamp::AmaxAlgo::Max", "max or most_recent",
           "::mlir::msamp::enumValues<::mlir::msamp::AmaxAlgo>()">,
    Option<"margin", "margin", "int64_t", "0", "Scale margin (powers of 2)">,
    Option<"interval", "interval", "int64_t", "1",
           "Recompute delayed scales every N steps">,
    Option<"warmup", "warmup", "bool", "true",
           "Just-in-time scales while the amax history fills (MS-AMP)">,
    Option<"reduceAmax", "reduce-amax", "bool", "true",
           "MAX-reduce delayed-scaled amaxes over the data-parallel group "
           "(Transformer Engine's reduce_amax): every rank keeps the same "
           "scaling state">,
    Option<"fp8Attention", "fp8-attention", "bool", "false",
           "Also run activation x activation GEMMs in FP8">,
    Option<"fpropHp", "fprop-hp", "bool", "false",
           "Keep forward GEMMs in high precision">,
    Option<"dgradHp", "dgrad-hp", "bool", "false",
           "Keep data-gradient GEMMs in high precision">,
    Option<"wgradHp", "wgrad-hp", "bool", "false",
           "Keep weight-gradient GEMMs in high precision">,
    Option<"exclude", "exclude", "std::string", "\"\"",
           "Regex on param names whose GEMMs stay in high precision">,
    Option<"delayedWeights", "delayed-weights", "bool", "false",
           "Delayed scaling for weights too (Transformer Engine); by default "
           "weights are scaled just in time (MS-AMP)">,
    Option<"keepFirstLast", "keep-first-last", "bool", "false",
           "Keep the first and the last Linear layer (by their forward GEMMs "
           "in graph order) in high precision (torchao through Accelerate)">,
    Option<"dimMultiple", "dim-multiple", "int64_t", "0",
           "Keep Linear layers whose weight has a dimension that is not a "
           "multiple of N in high precision (0: no such rule)">
  ];
  let statistics = [
    Statistic<"numFP8Gemms", "num-fp8-gemms", "GEMMs converted to FP8">,
    Statistic<"numHighPrecision", "num-high-precision",
              "GEMMs kept in high precision">,
    Statistic<"numDelayed", "num-delayed-tensors",
              "tensors with delayed-scaling state">
  ];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPAMPGemms : Pass<"msamp-amp-gemms", "::mlir::ModuleOp"> {
  let summary = "run GEMMs with 16-bit operands and f32 accumulation "
                "(the AMP levels)";
  let description = [{
    PyTorch autocast's GEMMs: every GEMM of the train step whose operands
    are f32 tensors (Linear fprop, dgrad, wgrad and the attention GEMMs)
    reads its operands rounded to nearest even to `dtype` (bf16 or fp16)
    and accumulates their products in f32: `msamp.gemm` with 16-bit
    operands and unit inverse scales. Every other op, the weights, the
    gradients and the optimizer states stay f32.

    A GEMM that does not match (a non-zero init, non-f32 or dynamic
    operands) stays f32 with a remark saying why.

    With `loss-scale=true` (fp16 only) the step carries
    `torch.amp.GradScaler`'s state (`loss_scale` and
    `loss_scale.growth_tracker`, role "loss_scale", LossScale.h): every
    output-gradient operand is multiplied by the scale before its fp16
    rounding and the GEMM divides it out again through its inverse scale.
    Multiplying by a power of two is exact in f32, so this is AMP's loss
    scaling, whose scaled values are f32 everywhere but at the fp16 casts;
    an fp16 overflow becomes Inf and reaches the gradients, where
    msamp-loss-scale finds it.
  }];
  let options = [
    Option<"dtype", "dtype", "::mlir::msamp::AMPDtype",
           "::mlir::msamp::AMPDtype::BF16", "bf16 or fp16",
           "::mlir::msamp::enumValues<::mlir::msamp::AMPDtype>()">,
    Option<"lossScale", "loss-scale", "bool", "false",
           "fp16: dynamic loss scaling of the output gradients">,
    Option<"initScale", "init-scale", "double", "65536.0",
           "GradScaler's init_scale (a power of two)">
  ];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPBF16Activations : Pass<"msamp-bf16-activations", "::mlir::ModuleOp"> {
  let summary = "store the forward activations of the train step in bf16 "
                "(autocast's storage, f32 arithmetic)";
  let description = [{
    Every covered activation (docs/Levels.md, "activations=bf16"): a ranked
    f32 tensor that a forward op of the train step produces from the data
    (an input or target depends on it, the loss depends on it), that is a
    forward GEMM's result or feeds a forward GEMM, and that is not a
    statistic (the result of a non-GEMM reduction, such as a norm's mean
    and variance or a softmax's max and sum, or a value computed from
    statistics alone). Values after the last forward GEMM (the loss and
    the log-softmax or difference it reduces), backward values,
    gradients, parameters, optimizer and scaling state stay f32.

    A covered value is rounded to nearest even to bf16 right after its
    producer, and that bf16 tensor is what crosses op boundaries: a
    linalg.generic consumer reads it and widens it (exactly) in its body,
    reshapes are done on the bf16 tensor, and any other consumer (a GEMM,
    an FP8 cast or amax, a reduction) reads a widened copy made right
    before it (each its own, so that CSE cannot merge them into one f32
    copy that lives from the forward to the backward). Arithmetic inside
    every op stays f32. The bf16 conversions are integer arithmetic
    (populateExpandBFloat16Patterns), as in msamp-amp-gemms.

    The train step gets `msamp.activations = "bf16"`. O0 (the all-f32
    baseline) is refused.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPLossScale : Pass<"msamp-loss-scale", "::mlir::ModuleOp"> {
  let summary = "skip overflowing steps and update the dynamic loss scale "
                "(torch.amp.GradScaler)";
  let description = [{
    After msamp-grad-stats, on a step whose GEMMs msamp-amp-gemms scaled
    with `loss_scale`: when the gradients are not finite (the `nonfinite`
    metric), every state update but the step counter and the scaler's own
    state is replaced by the old value (the step is skipped, as
    GradScaler.step skips optimizer.step), the scale is multiplied by
    `backoff-factor` and the growth tracker reset; otherwise the tracker
    counts the good step and after `growth-interval` good steps in a row
    the scale is multiplied by `growth-factor` (if that stays finite) and
    the tracker reset: GradScaler.update's rules. The overflow is handled,
    so `nonfinite` becomes 0 and a new metric `loss_scale_overflow` says
    whether the step was skipped.
  }];
  let options = [
    Option<"initScale", "init-scale", "double", "65536.0",
           "GradScaler's init_scale">,
    Option<"growthFactor", "growth-factor", "double", "2.0",
           "GradScaler's growth_factor">,
    Option<"backoffFactor", "backoff-factor", "double", "0.5",
           "GradScaler's backoff_factor">,
    Option<"growthInterval", "growth-interval", "int64_t", "2000",
           "GradScaler's growth_interval (good steps before growing)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPFP8WeightGradients
    : Pass<"msamp-fp8-weight-gradients", "::mlir::ModuleOp"> {
  let summary = "FP8 weight gradients and FP8 gradient all-reduce (O1)";
  let description = [{
    The gradient of every FP16-stored GEMM weight is quantized to E4M3 with a
    just-in-time scale from its global amax (`msamp.all_reduce max`), reduced
    as an FP8 payload with that shared scale (`msamp.all_reduce mean ...
    scale_inv`, the division by the world size applied to the inverse scale)
    and fed to the optimizer as FP8 (docs/Numerics.md 4.3-4.4).
  }];
  let options = [
    Option<"scaleKind", "scale-kind", "::mlir::msamp::ScaleKind",
           "::mlir::msamp::ScaleKind::Pow2",
           "pow2 (MS-AMP) or exact (Transformer Engine)",
           "::mlir::msamp::enumValues<::mlir::msamp::ScaleKind>()">
  ];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPLowPrecisionOptimizer
    : Pass<"msamp-low-precision-optimizer", "::mlir::ModuleOp"> {
  let summary = "FP8 first and FP16 second Adam moments with scales (O2)";
  let description = [{
    Stores every Adam/AdamW first moment as `f8E4M3FN` and second moment as
    `f16`, each with a per-tensor scale recomputed every step from the new
    amax (MS-AMP's LBAdamW, docs/Numerics.md 5.2). SGD momentum stays f32.
  }];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect"];
}

def MSAMPZeROShard : Pass<"msamp-zero-shard", "::mlir::ModuleOp"> {
  let summary = "O3: FP8 weights, ZeRO-sharded FP16 masters and optimizer "
                "states (one rank's specialization)";
  let description = [{
    Turns an O2 train step into rank `rank`'s step of an O3 group of
    `world-size` ranks (docs/Numerics.md 6.1, DeepSpeed ZeRO stages 1-2 with
    MS-AMP's FP8 payloads), with even flat shards (issue 20): the params are
    grouped by gradient and storage type, in param order, into buckets of
    at most `bucket-mb` MiB of gradient payload (a larger param is a bucket
    of its own), each bucket flattened, and every
    rank owns an equal contiguous slice of it (whole 16-element units, ranks
    differ by at most one unit; lib/TrainStep/FlatShards.cpp). A rank keeps
    its pieces of the FP16 masters `<P>.master` and of the O2 moments
    (`msamp.sharded`, `msamp.shard_offset` = the piece's offset in P); all
    scales stay replicated. GEMM weights are stored E4M3 + scale on every
    rank and read directly by the FP8 GEMMs. Gradients: stage 2 (default)
    `msamp.reduce_scatter`s each group's FP8 (or f32) payload so a rank
    keeps only its slice, stage 1 keeps the all-reduce and slices it. Each
    piece is updated in f32 (the optimizer's arithmetic on dequantized
    values), and every new low-precision tensor is quantized with the scale
    of the amax of the whole tensor, MAX-combined over the ranks in one
    `msamp.all_reduce max` (the same scale, bit for bit, as the O2 update's
    just-in-time one). The new FP8 weights (the just-in-time E4M3 cast of
    the new masters, its amax combined likewise), FP16 tied weights and f32
    params are `msamp.all_gather`ed per group. Stage 3 shards the params
    too: each param argument is the rank's 1-D piece (`msamp.sharded`,
    `msamp.shard_offset`, `msamp.param_shape`), and instead of the
    end-of-step all-gather each group is all-gathered just before its first
    reader in forward and again before its first reader in backward
    (ZeROGather.cpp). The step gets
    `msamp.zero = {world_size = N, rank = r, stage = s}` and level O3.
  }];
  let options = [
    Option<"worldSize", "world-size", "int64_t", "1",
           "ranks of the data-parallel group">,
    Option<"rank", "rank", "int64_t", "0",
           "the rank this program is specialized for">,
    Option<"zeroStage", "zero-stage", "int64_t", "2",
           "ZeRO stage: 1 (gradients all-reduced), 2 (reduce-scattered) "
           "or 3 (weights sharded too, all-gathered before their use)">,
    Option<"bucketMb", "bucket-mb", "double", "25.0",
           "MiB of gradient payload per flat group (bucket): one "
           "reduce-scatter and one all-gather each">
  ];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPGradStats : Pass<"msamp-grad-stats", "::mlir::ModuleOp"> {
  let summary = "global gradient norm, norm clipping and non-finite gradients";
  let description = [{
    Computes, before the first optimizer update of @train_step, the L2 norm
    of all gradients the updates read (all-reduced; FP8/f16 gradients
    dequantized with their inverse scale), summing squares in f64. A new
    hyperparameter argument `max_grad_norm` (tensor<f32>, <= 0: no clipping)
    clips them with PyTorch's coefficient
    `min(1, max_grad_norm / (norm + 1e-6))`: an f32 gradient is multiplied
    elementwise, an FP8/f16 gradient keeps its bytes and its inverse scale is
    multiplied (MS-AMP's ScalingTensor.mul_). Because FP8 casts saturate, the
    (max-reduced) amax recorded before each FP8 gradient's cast is folded in:
    a non-finite amax makes the norm non-finite. Two results with
    `msamp.role = "metric"` are appended: `grad_norm` (before clipping) and
    `nonfinite` (1.0 when grad_norm is Inf or NaN, else 0.0).

    ```mlir
    // before
    %w1, %m1, %v1 = msamp.adam_update param %w : tensor<4x3xf16> ...,
        grad %q scale_inv %qs : tensor<4x3xf8E4M3FN>, ...
    // after
    %d = msamp.dequantize %q, %qs : tensor<4x3xf8E4M3FN> to tensor<4x3xf32>
    %s = linalg.generic {...reduction...} ins(%d) outs(%acc : tensor<f64>)
    %s2 = linalg.generic {...} ins(%amax : tensor<f32>) outs(%s : tensor<f64>)
    %norm, %coef, %nonfinite = linalg.generic {...}
        ins(%s2, %max_grad_norm : tensor<f64>, tensor<f32>) outs(...)
    %qs2 = arith.mulf %qs, %coef : tensor<f32>
    %w1, %m1, %v1 = msamp.adam_update param %w : tensor<4x3xf16> ...,
        grad %q scale_inv %qs2 : tensor<4x3xf8E4M3FN>, ...
    return ..., %norm, %nonfinite
    ```
  }];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPIndexChecks : Pass<"msamp-index-checks", "::mlir::ModuleOp"> {
  let summary = "find the valid range of every index input of @train_step";
  let description = [{
    An integer input or target that the graph uses as an index (a token id
    gathered from an embedding table, a class compared against a one-hot
    iota, an ONNX Gather or SoftmaxCrossEntropyLoss label) reads out of
    bounds or trains on garbage when its value is outside the table. This
    pass follows each integer input/target argument of @train_step through
    reshapes and copies into the linalg.generic bodies that read it and
    derives its valid range:

    - `tensor.extract %t[..., v, ...]` with v the element (through integer
      casts, clamps and selects): [0, dim of %t);
    - `arith.cmpi eq|ne` of the element with the loop index of a dimension
      (`linalg.index d`, directly or as an iota tensor operand): [0, the
      dimension's extent);
    - `arith.cmpi eq|ne` with a constant outside that range: the loss's
      ignore_index (-100 in PyTorch), which is allowed too.

    The tightest upper bound wins. The result is the module attribute
    `msamp.index_checks`, one dictionary per checked argument:

    ```mlir
    module attributes {msamp.index_checks = [
        {arg = 9 : i64, name = "input_ids", rank = 2 : i64, type = i64,
         lower = 0 : i64, upper = 64 : i64},
        {arg = 10 : i64, name = "labels", ..., ignore_index = -100 : i64} ] }
    ```

    `msamp-emit-entry-point` turns each entry into a call of the runtime's
    `msamp_rt_check_index` before the step runs (docs/RuntimeABI.md 11.1).
    An argument whose uses show no bound is not checked.
  }];
}

def MSAMPComputedIndexChecks
    : Pass<"msamp-computed-index-checks", "::mlir::ModuleOp"> {
  let summary = "range-check the indices @train_step computes itself";
  let description = [{
    Indices that are not step inputs (RoBERTa's position ids from a
    cumulative sum over the mask, torch's gather / index_select / embedding
    on computed ids, one-hot compares) are not covered by
    `--msamp-index-checks`. For every integer tensor that a linalg.generic
    of @train_step reads as an index and that is not a step input or
    target (those are checked at the entry): a value the graph computed,
    or a buffer such as stored position ids; with the element reaching,
    through integer casts only:

    - a `tensor.extract` coordinate: valid [0, dim of the gathered tensor);
      the coordinate is also clamped to that range, so a bad value never
      reads out of bounds;
    - an `arith.cmpi eq|ne` with a loop index or iota (one-hot): valid
      [0, that extent); a compare with a constant outside it is the loss's
      ignore_index, which stays valid;

    this pass inserts `msamp.check_index` before the op that reads it, with
    the op's location (FILE:LINE:COL of the input graph) as its site. At
    run time a bad value records the runtime's sticky error naming the
    site, the value and the range, and the session refuses the step and
    restores the state (docs/Design.md "Bad data and bad updates"). Reads
    the graph already clamps or selects (the ONNX importer's Gather and
    SoftmaxCrossEntropyLoss) are left as they are. A remark per checked op
    (`--remarks-filter=msamp`).
  }];
  let dependentDialects = ["::mlir::msamp::MSAMPDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPVerifyTrainStep
    : Pass<"msamp-verify-train-step", "::mlir::ModuleOp"> {
  let summary = "final invariant check of a compiled train step";
  let description = [{
    Checks what every level must guarantee: every FP8 value is produced by an
    msamp op that carries its scale, no arithmetic other than msamp ops
    touches FP8 or scaled FP16 values (no FP8 accumulation), every argument
    has a role and name, every `msamp.updates` names a state argument of the
    same type, the loss is result 0, and every other result either updates
    state or is a 0-d f32 `metric`.
  }];
}

def MSAMPMemoryReport : Pass<"msamp-memory-report", "::mlir::ModuleOp"> {
  let summary = "print bytes per parameter of the compiled train step";
  let description = [{
    Prints, to stdout, the model-state memory of the train step computed
    from the IR alone: weights, master weights, weight gradients (one buffer
    per param, the type the optimizer reads), Adam m and v, scaling state and
    other state, in bytes and bytes per parameter, as a table or as the JSON
    of docs/Interfaces.md 4.
  }];
  let options = [
    Option<"format", "format", "::mlir::msamp::MemoryReportFormat",
           "::mlir::msamp::MemoryReportFormat::Table", "table or json",
           "::mlir::msamp::enumValues<::mlir::msamp::MemoryReportFormat>()">
  ];
}

def MSAMPWriteManifest : Pass<"msamp-write-manifest", "::mlir::ModuleOp"> {
  let summary = "write the JSON manifest of the train step's state";
  let description = [{
    Writes the JSON manifest of docs/Interfaces.md 4 for the train step: the ABI
    version, level and world size, and for every state buffer its name, role,
    shape, dtype and initializer, plus the inputs and outputs. `--msamp-emit-manifest=FILE` (registered in
    Pipelines.cpp) is the user-facing spelling of
    `--msamp-write-manifest="file=FILE"`.
  }];
  let options = [
    Option<"file", "file", "std::string", "\"-\"",
           "Output file (- for stdout)">
  ];
}

#endif // MSAMP_TRANSFORMS_PASSES_TD
