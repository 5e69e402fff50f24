//===- MSAMPOps.td - msamp operations ----------------------*- tablegen -*-===//
//
// Scaled casts, amax and scaling-state ops, the scaled FP8 GEMM, data-parallel
// collectives and the optimizer updates of MS-AMP's O1/O2/O3 levels.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_DIALECT_MSAMPOPS_TD
#define MSAMP_DIALECT_MSAMPOPS_TD

include "MSAMP/Dialect/MSAMPDialect.td"
include "MSAMP/Dialect/MSAMPEnums.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// A scale, inverse scale, amax or learning rate: a 0-d f32 tensor. Buildable
// so that assembly formats need not spell it.
def MSAMP_ScalarF32 : TensorRankOf<[F32], [0]> {
  let builderCall =
      "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}
def MSAMP_StepTensor : TensorRankOf<[I64], [0]> {
  let builderCall =
      "::mlir::RankedTensorType::get({}, $_builder.getIntegerType(64))";
}
def MSAMP_AmaxHistory : TensorRankOf<[F32], [1]>;

def MSAMP_FP8Tensor : RankedTensorOf<[F8E4M3FN, F8E5M2]>;
// Storage formats of a scaled tensor: FP8 or MS-AMP's scaled FP16.
def MSAMP_LowPrecisionTensor : RankedTensorOf<[F8E4M3FN, F8E5M2, F16]>;
// Formats that real (unscaled) values are computed in.
def MSAMP_HighPrecisionTensor : RankedTensorOf<[F32, BF16, F16]>;
// Optimizer operands: f32, or a scaled low-precision storage format.
// FP8, or 16-bit for the AMP levels' autocast GEMMs (msamp-amp-gemms).
def MSAMP_GemmOperand : RankedTensorOf<[F8E4M3FN, F8E5M2, BF16, F16]>;

def MSAMP_StateTensor : RankedTensorOf<[F32, F16, F8E4M3FN, F8E5M2]>;

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

def MSAMP_QuantizeOp : MSAMP_Op<"quantize", [Pure,
    AllShapesMatch<["input", "result"]>]> {
  let summary = "scaled cast of a high-precision tensor to FP8 or FP16";
  let description = [{
    Computes `result[i] = Q(input[i] * scale)` in f32 arithmetic, where `Q`
    rounds to nearest even. For FP8 results `Q` saturates: any magnitude above
    the format's largest finite value (448 for `f8E4M3FN`, 57344 for
    `f8E5M2`), infinities included, becomes that value with its sign; NaN
    stays NaN. For `f16` results (MS-AMP's scaled FP16 weights and second
    moments) `Q` is IEEE rounding without saturation.

    Because the cast saturates, an overflow is visible only in the amax of the
    high-precision input, never in the FP8 bytes.

    ```mlir
    %q = msamp.quantize %x, %scale : tensor<16x32xf32> to tensor<16x32xf8E4M3FN>
    ```
  }];
  let arguments = (ins MSAMP_HighPrecisionTensor:$input,
                       MSAMP_ScalarF32:$scale);
  let results = (outs MSAMP_LowPrecisionTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `to` type($result)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MSAMP_DequantizeOp : MSAMP_Op<"dequantize", [Pure,
    AllShapesMatch<["input", "result"]>]> {
  let summary = "widening of a scaled low-precision tensor";
  let description = [{
    Computes `result[i] = cast(decode(input[i]) * scale_inv)`: the stored
    value is widened exactly to f32, multiplied by the inverse scale in f32 and
    then rounded to the result element type. Never folded with a preceding
    `msamp.quantize`: the round trip is lossy.

    ```mlir
    %x = msamp.dequantize %q, %scale_inv : tensor<16x32xf8E4M3FN> to tensor<16x32xf32>
    ```
  }];
  let arguments = (ins MSAMP_LowPrecisionTensor:$input,
                       MSAMP_ScalarF32:$scale_inv);
  let results = (outs MSAMP_HighPrecisionTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale_inv attr-dict `:` type($input) `to` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Scaling state
//===----------------------------------------------------------------------===//

def MSAMP_AmaxOp : MSAMP_Op<"amax", [Pure]> {
  let summary = "largest magnitude of a tensor";
  let description = [{
    Returns `max_i |input[i]|` as a 0-d f32 tensor, computed exactly. A NaN
    anywhere gives NaN and an infinity gives +Inf, so non-finite values are
    detectable after a saturating cast. An empty tensor has amax 0.

    ```mlir
    %a = msamp.amax %x : tensor<16x32xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, BF16, F16]>:$input);
  let results = (outs MSAMP_ScalarF32:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def MSAMP_ComputeScaleOp : MSAMP_Op<"compute_scale", [Pure]> {
  let summary = "scale from an amax history (MS-AMP or Transformer Engine)";
  let description = [{
    Reduces `amax_history` to one amax (`max` over all entries, or
    `most_recent` = element 0) and derives the scale that maps that amax onto
    the largest finite value `fp_max` of `format` (448 for `f8E4M3FN`, 57344
    for `f8E5M2`, 65504 for `f16`):

    * `pow2` (MS-AMP): `2^(floor(log2(fp_max / amax)) - margin)`, the largest
      power of two with `amax * scale <= fp_max` when `margin = 0`; clamped to
      `[2^-126, 2^127]`.
    * `exact` (Transformer Engine): `fp_max * 2^-margin / amax`; an infinite
      result becomes the largest finite f32.

    If the amax is 0, negative, NaN or +Inf the previous scale `prev_scale` is
    kept. (MS-AMP returns `1/prev_scale` for +Inf; msamp deliberately keeps
    the previous scale, as docs/Numerics.md recommends.)

    ```mlir
    %s = msamp.compute_scale pow2 max %hist, %prev for f8E4M3FN : tensor<16xf32>
    %t = msamp.compute_scale exact most_recent %hist, %prev for f8E5M2 margin 1 : tensor<1024xf32>
    ```
  }];
  let arguments = (ins MSAMP_ScaleKindAttr:$kind,
                       MSAMP_AmaxAlgoAttr:$algo,
                       MSAMP_AmaxHistory:$amax_history,
                       MSAMP_ScalarF32:$prev_scale,
                       TypeAttr:$format,
                       DefaultValuedAttr<I64Attr, "0">:$margin);
  let results = (outs MSAMP_ScalarF32:$result);
  let assemblyFormat = [{
    $kind $algo $amax_history `,` $prev_scale `for` $format
    (`margin` $margin^)? attr-dict `:` type($amax_history)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def MSAMP_UpdateAmaxHistoryOp : MSAMP_Op<"update_amax_history", [Pure,
    AllTypesMatch<["amax_history", "result"]>]> {
  let summary = "roll an amax history and insert the newest amax";
  let description = [{
    `result[0] = amax`, `result[i] = amax_history[i - 1]` for `0 < i < L`; the
    oldest entry falls off. With element 0 the most recent, a window of `L`
    steps is exactly MS-AMP's delayed-scaling window and Transformer Engine's
    amax history.

    ```mlir
    %h1 = msamp.update_amax_history %h0, %amax : tensor<16xf32>
    ```
  }];
  let arguments = (ins MSAMP_AmaxHistory:$amax_history,
                       MSAMP_ScalarF32:$amax);
  let results = (outs MSAMP_AmaxHistory:$result);
  let assemblyFormat = [{
    $amax_history `,` $amax attr-dict `:` type($amax_history)
  }];
  let hasFolder = 1;
}

def MSAMP_ScaleUpdateOp : MSAMP_Op<"scale_update", [Pure,
    AllTypesMatch<["amax_history", "new_history"]>]> {
  let summary = "a scaled cast's amax, history, scale and next scale at once";
  let description = [{
    The scaling bookkeeping of one cast of `input`, which msamp-fp8-gemms
    writes as separate ops (msamp-gpu-fuse-scale-updates folds them into
    this one; it lowers to the one call msamp_rt_scale_update):

    * `amax = msamp.amax %input`, MAX all-reduced over the data-parallel
      group with `reduce_amax`;
    * `new_history = msamp.update_amax_history %amax_history, amax`;
    * `jit = msamp.compute_scale kind most_recent new_history, prev_scale`;
    * `scale` = `jit` with `just_in_time`, `use_jit ? jit : prev_scale`
      with `use_jit` (MS-AMP's warm-up), else `prev_scale`;
    * `scale_inv = 1.0 / scale` (correctly rounded);
    * `next_scale = msamp.compute_scale kind algo new_history, scale`.

    ```mlir
    %h, %s, %si, %n = msamp.scale_update pow2 max %x, %hist, %prev
        use_jit %warm : tensor<i1> for f8E4M3FN reduce_amax
        : tensor<32x64xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins MSAMP_ScaleKindAttr:$kind,
                       MSAMP_AmaxAlgoAttr:$algo,
                       RankedTensorOf<[F32, BF16, F16]>:$input,
                       MSAMP_AmaxHistory:$amax_history,
                       MSAMP_ScalarF32:$prev_scale,
                       Optional<TensorRankOf<[I1], [0]>>:$use_jit,
                       TypeAttr:$format,
                       DefaultValuedAttr<I64Attr, "0">:$margin,
                       UnitAttr:$reduce_amax,
                       UnitAttr:$just_in_time);
  let results = (outs MSAMP_AmaxHistory:$new_history,
                      MSAMP_ScalarF32:$scale,
                      MSAMP_ScalarF32:$scale_inv,
                      MSAMP_ScalarF32:$next_scale);
  let assemblyFormat = [{
    $kind $algo $input `,` $amax_history `,` $prev_scale
    (`use_jit` $use_jit^ `:` type($use_jit))? `for` $format
    (`margin` $margin^)?
    (`reduce_amax` $reduce_amax^)? (`just_in_time` $just_in_time^)?
    attr-dict `:` type($input) `,` type($amax_history)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

def MSAMP_GemmOp : MSAMP_Op<"gemm", [Pure]> {
  let summary = "scaled FP8 GEMM with f32 accumulation";
  let description = [{
    `result = (a_scale_inv * b_scale_inv) * op(a) x op(b)`, where `op`
    transposes the two innermost dimensions when `transpose_a` /
    `transpose_b` is set. Products of the decoded FP8 values are accumulated
    in f32 and the result is rounded once to the result element type (f32,
    bf16 or f16). Rank-3 operands are a batch of GEMMs over the leading
    dimension.

    Operands are E4M3 or E5M2; E5M2 x E5M2 is rejected because cuBLASLt has
    no such kernel (and MS-AMP never requests it). The AMP levels' GEMMs
    have bf16 or f16 operands (with unit inverse scales): their products
    are exact in f32 as well. `fast_accum` allows
    reduced-precision accumulation on Hopper tensor cores; MS-AMP and
    Transformer Engine use it only for forward GEMMs. When a second result is
    requested it is the amax of the (unrounded f32) result.

    ```mlir
    // Linear fprop y = x w^T: x [16x32] E4M3, w [64x32] E4M3.
    %y = msamp.gemm %x, %xs, %w, %ws {transpose_b, fast_accum}
        : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xf32>
    %dw, %amax = msamp.gemm %dy, %dys, %x, %xs {transpose_a}
        : tensor<16x64xf8E5M2>, tensor<16x32xf8E4M3FN> -> tensor<64x32xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins MSAMP_GemmOperand:$a, MSAMP_ScalarF32:$a_scale_inv,
                       MSAMP_GemmOperand:$b, MSAMP_ScalarF32:$b_scale_inv,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       UnitAttr:$fast_accum);
  let results = (outs MSAMP_HighPrecisionTensor:$result,
                      Optional<MSAMP_ScalarF32>:$amax);
  let assemblyFormat = [{
    $a `,` $a_scale_inv `,` $b `,` $b_scale_inv attr-dict
    `:` type($a) `,` type($b) `->` type($result) (`,` type($amax)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def MSAMP_AllReduceOp : MSAMP_Op<"all_reduce", [
    AllTypesMatch<["input", "result"]>]> {
  let summary = "all-reduce over the data-parallel group";
  let description = [{
    Reduces `input` elementwise across all ranks of the data-parallel group;
    every rank receives the same bytes. `mean` is `sum` divided by the world
    size.

    High-precision form (f32/bf16/f16 payload): plain `sum`, `max` or `mean`.

    FP8 payload form (`scale_inv` given): every rank's payload must share one
    inverse scale (quantize with a scale derived from a `max` all-reduce of
    the amaxes). Partial sums are combined in a fixed rank order, each hop
    computing `fp8(half(a) + half(b))` with round-to-nearest-even and
    saturation, as NCCL >= 2.24 and MSCCL do; `max` compares decoded values.
    The second result is the inverse scale of the reduced payload: unchanged
    for `sum` and `max`, divided by the world size for `mean` (MS-AMP applies
    the division to the inverse scale, never to the FP8 values).

    Emitted even for a world size of 1, so one program serves any number of
    ranks. Collectives have side effects: they are never erased or merged.

    ```mlir
    %g = msamp.all_reduce mean %grad : tensor<64xf32>
    %q, %qs = msamp.all_reduce mean %gq scale_inv %gs : tensor<64x32xf8E4M3FN>
    ```
  }];
  let arguments = (ins MSAMP_ReduceKindAttr:$kind,
                       RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$input,
                       Optional<MSAMP_ScalarF32>:$scale_inv);
  let results = (outs RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$result,
                      Optional<MSAMP_ScalarF32>:$result_scale_inv);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "ReduceKind":$kind, "Value":$input)>,
    OpBuilder<(ins "ReduceKind":$kind, "Value":$input, "Value":$scaleInv)>
  ];
}

def MSAMP_ReduceOp : MSAMP_Op<"reduce", [
    AllTypesMatch<["input", "result"]>]> {
  let summary = "reduce over the data-parallel group to one owner rank";
  let description = [{
    ZeRO's gradient reduction (docs/Numerics.md 6.1): like `msamp.all_reduce`
    (same kinds, same FP8 payload form with a shared inverse scale, same
    rank-order combination, so the owner's bytes equal what an all-reduce
    would give it), but only rank `root` is guaranteed to receive the
    reduced value. On every other rank the results are unspecified and
    must not be read; those ranks still issue the op, in the same program
    order, since every rank takes part in every collective.

    ```mlir
    %g = msamp.reduce mean %grad root 1 : tensor<64xf32>
    %q, %qs = msamp.reduce mean %gq scale_inv %gs root 0 : tensor<64x32xf8E4M3FN>
    ```
  }];
  let arguments = (ins MSAMP_ReduceKindAttr:$kind,
                       RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$input,
                       Optional<MSAMP_ScalarF32>:$scale_inv,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$root);
  let results = (outs RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$result,
                      Optional<MSAMP_ScalarF32>:$result_scale_inv);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def MSAMP_BroadcastOp : MSAMP_Op<"broadcast", [
    AllTypesMatch<["input", "result"]>]> {
  let summary = "broadcast from one owner rank to the data-parallel group";
  let description = [{
    ZeRO's weight gather (docs/Numerics.md 6.1 steps 5 and 6): every rank returns
    rank `root`'s `input`, byte for byte. The inputs of the other ranks are
    only placeholders of the right type (their current copy). Used for the
    new FP8 weights, their scales, and the f32 params an owner updated.

    ```mlir
    %w = msamp.broadcast %new_w root 1 : tensor<64x32xf8E4M3FN>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2, I64]>:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$root);
  let results = (outs RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2, I64]>:$result);
  let assemblyFormat = "$input `root` $root attr-dict `:` type($input)";
}

def MSAMP_ReduceScatterOp : MSAMP_Op<"reduce_scatter"> {
  let summary = "reduce-scatter of a flat buffer over the data-parallel group";
  let description = [{
    ZeRO's gradient reduction over even flat shards (issue 20): `input` is a
    1-D buffer of `world_size` equal shards; rank r's `result` is shard r
    reduced over the group, the bytes an `msamp.all_reduce` of `input` would
    hold at [r * S, (r + 1) * S) (same rank-order combination, each FP8 hop
    `fp8(half(a) + half(b))`). The buffer concatenates many tensors (a
    bucket), each with its own inverse scale shared by all ranks, so an FP8
    payload is reduced as codes: `sum` or `max`, never `mean` (the caller
    divides each tensor's inverse scale by the world size, as MS-AMP does).
    f32 payloads take `sum`, `max` or `mean`. A step is compiled for one
    world size; the runtime refuses another.

    ```mlir
    %g = msamp.reduce_scatter sum %bucket {world_size = 2 : i64}
        : tensor<4096xf8E4M3FN> -> tensor<2048xf8E4M3FN>
    ```
  }];
  let arguments = (ins MSAMP_ReduceKindAttr:$kind,
                       RankedTensorOf<[F32, F8E4M3FN, F8E5M2]>:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs RankedTensorOf<[F32, F8E4M3FN, F8E5M2]>:$result);
  let assemblyFormat =
      "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def MSAMP_AllGatherOp : MSAMP_Op<"all_gather"> {
  let summary = "all-gather of flat shards over the data-parallel group";
  let description = [{
    ZeRO's weight gather over even flat shards (issue 20): every rank returns
    the concatenation, in rank order, of every rank's 1-D `input` (its
    shard), byte for byte.

    ```mlir
    %w = msamp.all_gather %shard {world_size = 2 : i64}
        : tensor<2048xf8E4M3FN> -> tensor<4096xf8E4M3FN>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def MSAMP_AdamUpdateOp : MSAMP_Op<"adam_update", [Pure,
    AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let summary = "one Adam/AdamW step with f32 or scaled low-precision state";
  let description = [{
    One step of Adam (L2 weight decay) or, with `decoupled`, AdamW (PyTorch
    semantics, bias-corrected), computed in f32 exactly as MS-AMP's LBAdamW
    (docs/Numerics.md 5.2):

    ```
    g = grad * grad_scale_inv            (or grad if f32)
    w = param / param_scale              (or param if f32)
    AdamW: w *= 1 - lr * weight_decay    Adam: g += weight_decay * w
    m' = beta1 * m + (1 - beta1) * g
    v' = beta2 * v + (1 - beta2) * g * g
    w -= lr / (1 - beta1^step) * m' / (sqrt(v') / sqrt(1 - beta2^step) + eps)
    ```

    With `adam_mode = 1` (only with `decoupled`) the step is ONNX Runtime's
    AdamWOptimizer mode 1, the Hugging Face `transformers` AdamW: the bias
    corrections fold into the step size, eps is added to the uncorrected
    `sqrt(v')`, and the decay is applied after the update:

    ```
    m', v' as above
    w -= (lr * sqrt(1 - beta2^step) / (1 - beta1^step)) * m' / (sqrt(v') + eps)
    w -= lr * weight_decay * w
    ```

    A missing `adam_mode` is 0 (PyTorch, above); only 0 and 1 exist.

    The precision of every operand comes from its type. An `f32` param or
    moment is updated in place. A low-precision one (`f16`, `f8E4M3FN`,
    `f8E5M2`) must come with its scale (`stored = real * scale`) and returns
    a new scale: the power of two that maps the new amax onto the format's
    largest finite value (just-in-time; the previous scale is kept when the
    amax is 0 or not finite). The weight update reads the un-requantized f32
    moments. A low-precision gradient must come with its inverse scale.
    Results are the new param, moments and their scales, in operand order;
    `step` is the step number after increment (1 for the first update).

    ```mlir
    %w, %ws, %m, %ms, %v, %vs = msamp.adam_update
        param %w0 scale %ws0 : tensor<64x32xf16>,
        grad %g scale_inv %gs : tensor<64x32xf8E4M3FN>,
        exp_avg %m0 scale %ms0 : tensor<64x32xf8E4M3FN>,
        exp_avg_sq %v0 scale %vs0 : tensor<64x32xf16>,
        lr %lr, step %step
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64,
         weight_decay = 0.01 : f64, decoupled}
    ```
  }];
  let arguments = (ins MSAMP_StateTensor:$param,
                       Optional<MSAMP_ScalarF32>:$param_scale,
                       MSAMP_StateTensor:$grad,
                       Optional<MSAMP_ScalarF32>:$grad_scale_inv,
                       MSAMP_StateTensor:$exp_avg,
                       Optional<MSAMP_ScalarF32>:$exp_avg_scale,
                       MSAMP_StateTensor:$exp_avg_sq,
                       Optional<MSAMP_ScalarF32>:$exp_avg_sq_scale,
                       MSAMP_ScalarF32:$lr,
                       MSAMP_StepTensor:$step,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                       F64Attr:$weight_decay, UnitAttr:$decoupled,
                       OptionalAttr<I64Attr>:$adam_mode);
  let results = (outs MSAMP_StateTensor:$new_param,
                      Optional<MSAMP_ScalarF32>:$new_param_scale,
                      MSAMP_StateTensor:$new_exp_avg,
                      Optional<MSAMP_ScalarF32>:$new_exp_avg_scale,
                      MSAMP_StateTensor:$new_exp_avg_sq,
                      Optional<MSAMP_ScalarF32>:$new_exp_avg_sq_scale);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def MSAMP_SGDUpdateOp : MSAMP_Op<"sgd_update", [Pure,
    AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let summary = "one SGD step (optional momentum, Nesterov, weight decay)";
  let description = [{
    PyTorch SGD, computed in f32: `g = grad (* grad_scale_inv) +
    weight_decay * w`; with momentum `b = momentum * b + g` (the buffer is
    `g` at step 1) and `g = nesterov ? g + momentum * b : b`; then
    `w -= lr * g`. A low-precision param carries its scale and gets a new
    just-in-time power-of-two scale, as in `msamp.adam_update`. The momentum
    buffer, when present, is f32.

    ```mlir
    %w, %b = msamp.sgd_update param %w0 : tensor<64xf32>,
        grad %g : tensor<64xf32>, momentum_buffer %b0 : tensor<64xf32>,
        lr %lr, step %step {momentum = 0.9 : f64, weight_decay = 0.0 : f64}
    ```
  }];
  let arguments = (ins MSAMP_StateTensor:$param,
                       Optional<MSAMP_ScalarF32>:$param_scale,
                       MSAMP_StateTensor:$grad,
                       Optional<MSAMP_ScalarF32>:$grad_scale_inv,
                       Optional<RankedTensorOf<[F32]>>:$momentum_buffer,
                       MSAMP_ScalarF32:$lr,
                       MSAMP_StepTensor:$step,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       UnitAttr:$nesterov);
  let results = (outs MSAMP_StateTensor:$new_param,
                      Optional<MSAMP_ScalarF32>:$new_param_scale,
                      Optional<RankedTensorOf<[F32]>>:$new_momentum_buffer);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def MSAMP_RandomUniformOp : MSAMP_Op<"random_uniform", [Pure]> {
  let summary = "counter-based uniform random numbers of one random op";
  let description = [{
    Uniform numbers in [`low`, `high`), one per element, from Philox4x32-10
    keyed by (`seed`, `step`, `rank`, `id`, element index) exactly as
    include/MSAMP/Numerics/Philox.h defines it: the 64-bit seed is the key,
    the counter is (row-major element index, `id`, low 32 bits of `step`,
    `rank`). `id` identifies the random op in its graph (stable: the
    op's position among the graph's random ops), `step` is the number of
    completed steps, `rank` the data-parallel rank. The numbers are a pure
    function of the operands and attributes, so a resumed step, another
    backend or a recompilation draws the same ones.

    ```mlir
    %u = msamp.random_uniform %seed, %step, %rank {id = 0 : i64,
        low = 0.0 : f64, high = 1.0 : f64} : tensor<i32> -> tensor<4x8xf64>
    ```
  }];
  let arguments = (ins MSAMP_StepTensor:$seed,
                       MSAMP_StepTensor:$step,
                       TensorRankOf<[I32, I64], [0]>:$rank,
                       I64Attr:$id,
                       F64Attr:$low,
                       F64Attr:$high);
  let results = (outs RankedTensorOf<[F64, F32]>:$result);
  let assemblyFormat = [{
    $seed `,` $step `,` $rank attr-dict `:` type($rank) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MSAMP_CheckIndexOp : MSAMP_Op<"check_index", [MemoryEffects<[MemWrite]>]> {
  let summary = "range check of an index computed in the graph";
  let description = [{
    Every element of `indices` must lie in [0, `upper`) or equal
    `ignore_index` when present (the loss's ignore_index). The first one
    that does not records the runtime's sticky error naming `site`, the
    location (FILE:LINE:COL) of the op that reads the indices, the value,
    its position and the range; the step runs on (its reads are clamped by
    `--msamp-computed-index-checks`) and the caller refuses it. The op
    writes the runtime's error state, so it is never erased or merged.
    Added by `--msamp-computed-index-checks`, lowered by
    `convert-msamp-to-runtime` to msamp_rt_check_computed_index.

    ```mlir
    msamp.check_index %pos upper 10 ignore -100 at "model.mlir:12:5" : tensor<2x4xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I64, I32]>:$indices,
                       ConfinedAttr<I64Attr, [IntPositive]>:$upper,
                       OptionalAttr<I64Attr>:$ignore_index,
                       StrAttr:$site);
  let assemblyFormat = [{
    $indices `upper` $upper (`ignore` $ignore_index^)? `at` $site attr-dict
    `:` type($indices)
  }];
}

#endif // MSAMP_DIALECT_MSAMPOPS_TD
