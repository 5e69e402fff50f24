// Round trip of every msamp op: custom form, then generic form re-parsed.
// RUN: msamp-opt %s | msamp-opt | FileCheck %s
// RUN: msamp-opt %s --mlir-print-op-generic | msamp-opt | FileCheck %s

// CHECK-LABEL: func.func @casts
func.func @casts(%x: tensor<16x32xf32>, %b: tensor<8xbf16>, %s: tensor<f32>)
    -> (tensor<16x32xf8E4M3FN>, tensor<16x32xf8E5M2>, tensor<16x32xf16>,
        tensor<16x32xf32>, tensor<8xf8E4M3FN>, tensor<8xbf16>) {
  // CHECK: %[[Q:.+]] = msamp.quantize %{{.+}}, %{{.+}} : tensor<16x32xf32> to tensor<16x32xf8E4M3FN>
  %q = msamp.quantize %x, %s : tensor<16x32xf32> to tensor<16x32xf8E4M3FN>
  // CHECK: msamp.quantize %{{.+}}, %{{.+}} : tensor<16x32xf32> to tensor<16x32xf8E5M2>
  %q2 = msamp.quantize %x, %s : tensor<16x32xf32> to tensor<16x32xf8E5M2>
  // Scaled FP16 storage (MS-AMP's O1/O2 weights).
  // CHECK: msamp.quantize %{{.+}}, %{{.+}} : tensor<16x32xf32> to tensor<16x32xf16>
  %h = msamp.quantize %x, %s : tensor<16x32xf32> to tensor<16x32xf16>
  // CHECK: msamp.dequantize %[[Q]], %{{.+}} : tensor<16x32xf8E4M3FN> to tensor<16x32xf32>
  %d = msamp.dequantize %q, %s : tensor<16x32xf8E4M3FN> to tensor<16x32xf32>
  // bf16 sources and destinations.
  // CHECK: msamp.quantize %{{.+}}, %{{.+}} : tensor<8xbf16> to tensor<8xf8E4M3FN>
  %qb = msamp.quantize %b, %s : tensor<8xbf16> to tensor<8xf8E4M3FN>
  // CHECK: msamp.dequantize %{{.+}}, %{{.+}} : tensor<8xf8E4M3FN> to tensor<8xbf16>
  %db = msamp.dequantize %qb, %s : tensor<8xf8E4M3FN> to tensor<8xbf16>
  return %q, %q2, %h, %d, %qb, %db : tensor<16x32xf8E4M3FN>, tensor<16x32xf8E5M2>, tensor<16x32xf16>, tensor<16x32xf32>, tensor<8xf8E4M3FN>, tensor<8xbf16>
}

// CHECK-LABEL: func.func @scaling
func.func @scaling(%x: tensor<16x32xf32>, %h: tensor<16xf32>, %s: tensor<f32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<16xf32>) {
  // CHECK: %[[A:.+]] = msamp.amax %{{.+}} : tensor<16x32xf32>
  %a = msamp.amax %x : tensor<16x32xf32>
  // CHECK: msamp.compute_scale pow2 max %{{.+}}, %{{.+}} for f8E4M3FN : tensor<16xf32>
  %s1 = msamp.compute_scale pow2 max %h, %s for f8E4M3FN : tensor<16xf32>
  // CHECK: msamp.compute_scale exact most_recent %{{.+}}, %{{.+}} for f8E5M2 margin 1 : tensor<16xf32>
  %s2 = msamp.compute_scale exact most_recent %h, %s for f8E5M2 margin 1 : tensor<16xf32>
  // The default margin 0 is not printed.
  // CHECK: msamp.compute_scale pow2 max %{{.+}}, %{{.+}} for f16 : tensor<16xf32>
  %s3 = msamp.compute_scale pow2 max %h, %s for f16 margin 0 : tensor<16xf32>
  // CHECK: msamp.update_amax_history %{{.+}}, %[[A]] : tensor<16xf32>
  %h2 = msamp.update_amax_history %h, %a : tensor<16xf32>
  return %s1, %s2, %s3, %h2 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<16xf32>
}

// CHECK-LABEL: func.func @gemms
func.func @gemms(%x: tensor<16x32xf8E4M3FN>, %w: tensor<64x32xf8E4M3FN>,
                 %dy: tensor<16x64xf8E5M2>, %bx: tensor<2x16x32xf8E4M3FN>,
                 %by: tensor<2x32x8xf8E4M3FN>, %s: tensor<f32>)
    -> (tensor<16x64xf32>, tensor<64x32xbf16>, tensor<f32>, tensor<16x32xf32>, tensor<2x16x8xf16>) {
  // Linear fprop y = x w^T with fast accumulation.
  // CHECK: msamp.gemm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {fast_accum, transpose_b} : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xf32>
  %y = msamp.gemm %x, %s, %w, %s {transpose_b, fast_accum} : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xf32>
  // wgrad dW = dy^T x with the output amax.
  // CHECK: %{{.+}}, %{{.+}} = msamp.gemm %{{.+}} {transpose_a} : tensor<16x64xf8E5M2>, tensor<16x32xf8E4M3FN> -> tensor<64x32xbf16>, tensor<f32>
  %dw, %amax = msamp.gemm %dy, %s, %x, %s {transpose_a} : tensor<16x64xf8E5M2>, tensor<16x32xf8E4M3FN> -> tensor<64x32xbf16>, tensor<f32>
  // dgrad dx = dy w.
  // CHECK: msamp.gemm %{{.+}} : tensor<16x64xf8E5M2>, tensor<64x32xf8E4M3FN> -> tensor<16x32xf32>
  %dx = msamp.gemm %dy, %s, %w, %s : tensor<16x64xf8E5M2>, tensor<64x32xf8E4M3FN> -> tensor<16x32xf32>
  // Batched.
  // CHECK: msamp.gemm %{{.+}} : tensor<2x16x32xf8E4M3FN>, tensor<2x32x8xf8E4M3FN> -> tensor<2x16x8xf16>
  %bz = msamp.gemm %bx, %s, %by, %s : tensor<2x16x32xf8E4M3FN>, tensor<2x32x8xf8E4M3FN> -> tensor<2x16x8xf16>
  return %y, %dw, %amax, %dx, %bz : tensor<16x64xf32>, tensor<64x32xbf16>, tensor<f32>, tensor<16x32xf32>, tensor<2x16x8xf16>
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%g: tensor<64xf32>, %q: tensor<64x32xf8E4M3FN>, %s: tensor<f32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<f32>) {
  // CHECK: msamp.all_reduce sum %{{.+}} : tensor<64xf32>
  %r1 = msamp.all_reduce sum %g : tensor<64xf32>
  // CHECK: msamp.all_reduce mean %{{.+}} : tensor<64xf32>
  %r2 = msamp.all_reduce mean %g : tensor<64xf32>
  // FP8 payload with its shared inverse scale.
  // CHECK: %{{.+}}, %{{.+}} = msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} : tensor<64x32xf8E4M3FN>
  %r3, %r3s = msamp.all_reduce mean %q scale_inv %s : tensor<64x32xf8E4M3FN>
  // CHECK: msamp.all_reduce max %{{.+}} : tensor<f32>
  %m = msamp.all_reduce max %s : tensor<f32>
  return %r1, %r2, %r3, %r3s, %m : tensor<64xf32>, tensor<64xf32>, tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<f32>
}

// O3: reduce-to-owner and broadcast-from-owner (ZeRO).
// CHECK-LABEL: func.func @owner_collectives
func.func @owner_collectives(%g: tensor<64xf32>, %q: tensor<64x32xf8E4M3FN>, %s: tensor<f32>)
    -> (tensor<64xf32>, tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<64x32xf8E4M3FN>, tensor<f32>) {
  // CHECK: msamp.reduce mean %{{.+}} root 1 : tensor<64xf32>
  %r1 = msamp.reduce mean %g root 1 : tensor<64xf32>
  // CHECK: %{{.+}}, %{{.+}} = msamp.reduce mean %{{.+}} scale_inv %{{.+}} root 0 : tensor<64x32xf8E4M3FN>
  %r2, %r2s = msamp.reduce mean %q scale_inv %s root 0 : tensor<64x32xf8E4M3FN>
  // CHECK: msamp.broadcast %{{.+}} root 3 : tensor<64x32xf8E4M3FN>
  %b1 = msamp.broadcast %q root 3 : tensor<64x32xf8E4M3FN>
  // CHECK: msamp.broadcast %{{.+}} root 3 : tensor<f32>
  %b2 = msamp.broadcast %s root 3 : tensor<f32>
  return %r1, %r2, %r2s, %b1, %b2 : tensor<64xf32>, tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<64x32xf8E4M3FN>, tensor<f32>
}

// CHECK-LABEL: func.func @optimizers
func.func @optimizers(%w16: tensor<64x32xf16>, %g8: tensor<64x32xf8E4M3FN>,
                      %m8: tensor<64x32xf8E4M3FN>, %v16: tensor<64x32xf16>,
                      %w: tensor<64xf32>, %g: tensor<64xf32>, %m: tensor<64xf32>,
                      %v: tensor<64xf32>, %s: tensor<f32>, %lr: tensor<f32>,
                      %step: tensor<i64>) {
  // O2: FP16 weight, FP8 grad, FP8 m and FP16 v, all scaled.
  // CHECK: msamp.adam_update param %{{.+}} scale %{{.+}} : tensor<64x32xf16>, grad %{{.+}} scale_inv %{{.+}} : tensor<64x32xf8E4M3FN>, exp_avg %{{.+}} scale %{{.+}} : tensor<64x32xf8E4M3FN>, exp_avg_sq %{{.+}} scale %{{.+}} : tensor<64x32xf16>, lr %{{.+}}, step %{{.+}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
  %a:6 = msamp.adam_update param %w16 scale %s : tensor<64x32xf16>,
      grad %g8 scale_inv %s : tensor<64x32xf8E4M3FN>,
      exp_avg %m8 scale %s : tensor<64x32xf8E4M3FN>,
      exp_avg_sq %v16 scale %s : tensor<64x32xf16>,
      lr %lr, step %step
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64, decoupled}
  // O0: everything f32, three results.
  // CHECK: = msamp.adam_update param %{{.+}} : tensor<64xf32>, grad %{{.+}} : tensor<64xf32>, exp_avg %{{.+}} : tensor<64xf32>, exp_avg_sq %{{.+}} : tensor<64xf32>, lr
  %b:3 = msamp.adam_update param %w : tensor<64xf32>, grad %g : tensor<64xf32>,
      exp_avg %m : tensor<64xf32>, exp_avg_sq %v : tensor<64xf32>, lr %lr, step %step
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
  // ONNX Runtime's AdamW mode 1 (Hugging Face order).
  // CHECK: msamp.adam_update {{.*}} {adam_mode = 1 : i64, beta1 = 9.000000e-01 : f64, {{.*}}, decoupled, {{.*}}}
  %hf:3 = msamp.adam_update param %w : tensor<64xf32>, grad %g : tensor<64xf32>,
      exp_avg %m : tensor<64xf32>, exp_avg_sq %v : tensor<64xf32>, lr %lr, step %step
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64, decoupled, adam_mode = 1 : i64}
  // CHECK: msamp.sgd_update param %{{.+}} : tensor<64xf32>, grad %{{.+}} : tensor<64xf32>, momentum_buffer %{{.+}} : tensor<64xf32>, lr %{{.+}}, step %{{.+}} {momentum = 9.000000e-01 : f64, nesterov}{{$}}
  %c:2 = msamp.sgd_update param %w : tensor<64xf32>, grad %g : tensor<64xf32>,
      momentum_buffer %m : tensor<64xf32>, lr %lr, step %step {momentum = 0.9 : f64, nesterov}
  // CHECK: msamp.sgd_update param %{{.+}} scale %{{.+}} : tensor<64x32xf16>, grad %{{.+}} scale_inv %{{.+}} : tensor<64x32xf8E4M3FN>, lr %{{[^ ]+}}, step %{{[^ ]+}}{{$}}
  %d:2 = msamp.sgd_update param %w16 scale %s : tensor<64x32xf16>,
      grad %g8 scale_inv %s : tensor<64x32xf8E4M3FN>, lr %lr, step %step
  return
}
