// Every verifier message of the msamp dialect, one case per chunk.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics > /dev/null

// Type constraints: a quantize must produce FP8 or FP16 storage.
func.func @quantize_to_f32(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type or 16-bit float values}}
  %q = msamp.quantize %x, %s : tensor<4xf32> to tensor<4xf32>
  return
}

// -----

// Shapes of a cast must match.
func.func @quantize_shape(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{all of {input, result} have same shape}}
  %q = "msamp.quantize"(%x, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<5xf8E4M3FN>
  return
}

// -----

// A scale is a 0-d f32 tensor, not a 1-element vector.
func.func @scale_rank(%x: tensor<4xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{operand #1 must be 0D tensor of 32-bit float values}}
  %q = "msamp.quantize"(%x, %s) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf8E4M3FN>
  return
}

// -----

// Dequantize reads low-precision storage only.
func.func @dequantize_f32(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type or 16-bit float values}}
  %d = "msamp.dequantize"(%x, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @compute_scale_format(%h: tensor<16xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{format must be f8E4M3FN, f8E5M2 or f16, got 'bf16'}}
  %r = msamp.compute_scale pow2 max %h, %s for bf16 : tensor<16xf32>
  return
}

// -----

func.func @compute_scale_margin(%h: tensor<16xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{margin must be non-negative, got -1}}
  %r = msamp.compute_scale pow2 max %h, %s for f8E4M3FN margin -1 : tensor<16xf32>
  return
}

// -----

func.func @compute_scale_empty(%h: tensor<0xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{amax history must have at least one entry}}
  %r = msamp.compute_scale pow2 max %h, %s for f8E4M3FN : tensor<0xf32>
  return
}

// -----

func.func @compute_scale_kind(%h: tensor<16xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [pow2, exact]}}
  %r = msamp.compute_scale linear max %h, %s for f8E4M3FN : tensor<16xf32>
  return
}

// -----

func.func @history_rank(%h: tensor<4x4xf32>, %a: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be 1D tensor of 32-bit float values}}
  %r = "msamp.update_amax_history"(%h, %a) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @gemm_rank(%a: tensor<4x8xf8E4M3FN>, %b: tensor<2x8x4xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{operands must both be rank 2 or both rank 3, got 2 and 3}}
  %r = msamp.gemm %a, %s, %b, %s : tensor<4x8xf8E4M3FN>, tensor<2x8x4xf8E4M3FN> -> tensor<4x4xf32>
  return
}

// -----

func.func @gemm_result_rank(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x4xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{result must have rank 2 like its operands, got 1}}
  %r = msamp.gemm %a, %s, %b, %s : tensor<4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN> -> tensor<16xf32>
  return
}

// -----

func.func @gemm_e5m2_e5m2(%a: tensor<8x4xf8E5M2>, %b: tensor<4x4xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{f8E5M2 x f8E5M2 is not supported (cuBLASLt has no such kernel); one operand must be f8E4M3FN}}
  %r = msamp.gemm %a, %s, %b, %s : tensor<8x4xf8E5M2>, tensor<4x4xf8E5M2> -> tensor<8x4xf32>
  return
}

// -----

func.func @gemm_k(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x4xf8E4M3FN>, %s: tensor<f32>) {
  // transpose_b reads b as [N, K] = [8, 4]: K = 4 does not match a's 8.
  // expected-error @+1 {{contraction dimensions differ: a has K = 8, b has K = 4}}
  %r = msamp.gemm %a, %s, %b, %s {transpose_b} : tensor<4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN> -> tensor<4x8xf32>
  return
}

// -----

func.func @gemm_batch(%a: tensor<2x4x8xf8E4M3FN>, %b: tensor<3x8x4xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{batch dimensions differ: 2 vs 3}}
  %r = msamp.gemm %a, %s, %b, %s : tensor<2x4x8xf8E4M3FN>, tensor<3x8x4xf8E4M3FN> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @gemm_result_shape(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x6xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{result shape must be [4, 6], got [4, 5]}}
  %r = msamp.gemm %a, %s, %b, %s : tensor<4x8xf8E4M3FN>, tensor<8x6xf8E4M3FN> -> tensor<4x5xf32>
  return
}

// -----

func.func @gemm_high_precision(%a: tensor<4x8xf32>, %b: tensor<8x6xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type or bfloat16 type or 16-bit float values}}
  %r = "msamp.gemm"(%a, %s, %b, %s) : (tensor<4x8xf32>, tensor<f32>, tensor<8x6xf8E4M3FN>, tensor<f32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @all_reduce_fp8_no_scale(%q: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{an FP8 payload needs its inverse scale (scale_inv)}}
  %r = msamp.all_reduce sum %q : tensor<4xf8E4M3FN>
  return
}

// -----

func.func @all_reduce_scale_f32(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{scale_inv is only allowed with an FP8 payload, got element type 'f32'}}
  %r:2 = msamp.all_reduce sum %x scale_inv %s : tensor<4xf32>
  return
}

// -----

func.func @all_reduce_missing_result_scale(%q: tensor<4xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{the FP8 form returns the reduced payload's inverse scale, and only the FP8 form does}}
  %r = "msamp.all_reduce"(%q, %s) <{kind = 0 : i32}> : (tensor<4xf8E4M3FN>, tensor<f32>) -> tensor<4xf8E4M3FN>
  return
}

// -----

func.func @all_reduce_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected reduction sum, max or mean, got 'prod'}}
  %r = msamp.all_reduce prod %x : tensor<4xf32>
  return
}

// -----

func.func @reduce_fp8_no_scale(%q: tensor<4xf8E4M3FN>) {
  // expected-error @+1 {{an FP8 payload needs its inverse scale (scale_inv)}}
  %r = msamp.reduce sum %q root 0 : tensor<4xf8E4M3FN>
  return
}

// -----

func.func @reduce_scale_f32(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{scale_inv is only allowed with an FP8 payload, got element type 'f32'}}
  %r:2 = msamp.reduce sum %x scale_inv %s root 0 : tensor<4xf32>
  return
}

// -----

func.func @reduce_negative_root(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'root' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %r = msamp.reduce sum %x root -1 : tensor<4xf32>
  return
}

// -----

func.func @reduce_no_root(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 'root'}}
  %r = msamp.reduce sum %x : tensor<4xf32>
  return
}

// -----

func.func @broadcast_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %r = "msamp.broadcast"(%x) <{root = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @adam_f32_with_scale(%w: tensor<4xf32>, %s: tensor<f32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'param' is f32 and takes no scale}}
  %r:4 = msamp.adam_update param %w scale %s : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @adam_fp8_without_scale(%w: tensor<4xf32>, %m: tensor<4xf8E4M3FN>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'exp_avg' of element type 'f8E4M3FN' needs its scale}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %m : tensor<4xf8E4M3FN>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @adam_grad_without_scale(%w: tensor<4xf32>, %g: tensor<4xf8E4M3FN>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'grad' of element type 'f8E4M3FN' needs its scale}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %g : tensor<4xf8E4M3FN>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @adam_mode_unknown(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{adam_mode must be 0 (PyTorch AdamW) or 1 (Hugging Face / ONNX Runtime mode 1), got 2}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, decoupled, adam_mode = 2 : i64}
  return
}

// -----

func.func @adam_mode1_not_decoupled(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{adam_mode = 1 is an AdamW variant and needs 'decoupled'}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, adam_mode = 1 : i64}
  return
}

// -----

func.func @adam_shape(%w: tensor<4xf32>, %v: tensor<5xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'exp_avg_sq' has type 'tensor<5xf32>' but 'param' has type 'tensor<4xf32>'}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %v : tensor<5xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @adam_result_type(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{result for 'exp_avg' must have type 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %r:3 = "msamp.adam_update"(%w, %w, %w, %w, %lr, %t) <{beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, operandSegmentSizes = array<i32: 1, 0, 1, 0, 1, 0, 1, 0, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 1, 0, 1, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>)
  return
}

// -----

func.func @adam_result_scale(%w: tensor<4xf16>, %s: tensor<f32>, %lr: tensor<f32>, %g: tensor<4xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{result for 'param' must return a new scale exactly when 'param' has one}}
  %r:3 = "msamp.adam_update"(%w, %s, %g, %g, %g, %lr, %t) <{beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 1, 0, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 1, 0, 1, 0>}> : (tensor<4xf16>, tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_beta1(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{beta1 must be in [0, 1), got 1}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 1.0 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @adam_beta2(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{beta2 must be in [0, 1), got -0.5}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = -0.5 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @adam_eps(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{eps must be positive, got 0}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 0.0 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @adam_weight_decay(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{weight_decay must be non-negative, got -0.1}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = -0.1 : f64}
  return
}

// -----

func.func @adam_missing_attr(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{requires attribute 'eps'}}
  %r:3 = msamp.adam_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      exp_avg %w : tensor<4xf32>, exp_avg_sq %w : tensor<4xf32>, lr %lr, step %t
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, weight_decay = 0.0 : f64}
  return
}

// -----

func.func @sgd_momentum_range(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{momentum must be in [0, 1], got 1.5}}
  %r:2 = msamp.sgd_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      momentum_buffer %w : tensor<4xf32>, lr %lr, step %t {momentum = 1.5 : f64}
  return
}

// -----

func.func @sgd_weight_decay(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{weight_decay must be non-negative, got -1}}
  %r = msamp.sgd_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      lr %lr, step %t {weight_decay = -1.0 : f64}
  return
}

// -----

func.func @sgd_nesterov(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{nesterov requires a non-zero momentum}}
  %r = msamp.sgd_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      lr %lr, step %t {nesterov}
  return
}

// -----

func.func @sgd_momentum_without_buffer(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{a non-zero momentum needs a momentum_buffer}}
  %r = msamp.sgd_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      lr %lr, step %t {momentum = 0.9 : f64}
  return
}

// -----

func.func @sgd_buffer_without_momentum(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{a momentum_buffer needs a non-zero momentum}}
  %r:2 = msamp.sgd_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      momentum_buffer %w : tensor<4xf32>, lr %lr, step %t
  return
}

// -----

func.func @sgd_buffer_shape(%w: tensor<4xf32>, %b: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'momentum_buffer' has type 'tensor<8xf32>' but 'param' has type 'tensor<4xf32>'}}
  %r:2 = msamp.sgd_update param %w : tensor<4xf32>, grad %w : tensor<4xf32>,
      momentum_buffer %b : tensor<8xf32>, lr %lr, step %t {momentum = 0.9 : f64}
  return
}

// -----

func.func @sgd_fp16_without_scale(%w: tensor<4xf16>, %g: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'param' of element type 'f16' needs its scale}}
  %r = msamp.sgd_update param %w : tensor<4xf16>, grad %g : tensor<4xf32>, lr %lr, step %t
  return
}

// -----

func.func @sgd_result_type(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{result for 'param' must have type 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %r = "msamp.sgd_update"(%w, %w, %lr, %t) <{operandSegmentSizes = array<i32: 1, 0, 1, 0, 0, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf16>
  return
}

// -----

func.func @sgd_result_scale(%w: tensor<4xf16>, %s: tensor<f32>, %g: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{result for 'param' must return a new scale exactly when 'param' has one}}
  %r = "msamp.sgd_update"(%w, %s, %g, %lr, %t) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4xf16>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf16>
  return
}

// -----

func.func @sgd_missing_buffer_result(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{must return the updated momentum_buffer}}
  %r = "msamp.sgd_update"(%w, %w, %w, %lr, %t) <{momentum = 0.9 : f64, operandSegmentSizes = array<i32: 1, 0, 1, 0, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

func.func @sgd_extra_buffer_result(%w: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{returns a momentum_buffer it was not given}}
  %r:2 = "msamp.sgd_update"(%w, %w, %lr, %t) <{operandSegmentSizes = array<i32: 1, 0, 1, 0, 0, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}
