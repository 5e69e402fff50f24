// --msamp-fp8-weight-gradients on hand-written O0 train steps after
// --msamp-fp16-weights (docs/TrainStep.md 2 "O1"): the gradient of every
// scaled-FP16 weight is quantized to E4M3 with a scale from its global amax
// and all-reduced as an FP8 payload; every other gradient stays f32.
// RUN: msamp-opt %s -split-input-file --remarks-filter-missed=msamp -verify-diagnostics --msamp-fp16-weights --msamp-fp8-weight-gradients | FileCheck %s

// Transformer Engine's exact scales instead of powers of two.
// RUN: msamp-opt %s -split-input-file --msamp-fp16-weights --msamp-fp8-weight-gradients='scale-kind=exact' 2>/dev/null | FileCheck %s --check-prefix=EXACT

// Idempotence: a second run changes nothing.
// RUN: msamp-opt %s -split-input-file --msamp-fp16-weights --msamp-fp8-weight-gradients -o %t.once 2>/dev/null
// RUN: msamp-opt %t.once -split-input-file --msamp-fp8-weight-gradients -o %t.twice 2>/dev/null
// RUN: diff %t.once %t.twice

// Without scaled-FP16 weights (O0 params) no gradient is converted.
// RUN: msamp-opt %s -split-input-file --msamp-fp8-weight-gradients 2>/dev/null | FileCheck %s --check-prefix=F32

// One optimization remark per FP8 gradient, shown on request only.
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights --msamp-fp8-weight-gradients -o /dev/null 2>&1 | count 0
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights --msamp-fp8-weight-gradients --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: o1-mlp.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: [Passed] fp8-weight-gradient | Category:msamp:fp8-weight-gradients | Remark="gradient of 'fc1.weight' quantized to f8E4M3FN and all-reduced as FP8"
// REMARK: o1-mlp.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: [Passed] fp8-weight-gradient | Category:msamp:fp8-weight-gradients | Remark="gradient of 'fc2.weight' quantized to f8E4M3FN and all-reduced as FP8"
// REMARK-NOT: fc1.bias

// AdamW, one Linear layer: the weight gradient takes the O1 sequence, the
// bias gradient keeps its f32 all-reduce. No argument is added.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^ ]+]]: tensor<4x3xf16> {msamp.gemm_weight,
// CHECK-SAME: %[[B:[^ ]+]]: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias", msamp.role = "param"},
// CHECK-SAME: %[[WM:[^ ]+]]: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state"},
// CHECK-SAME: %[[WV:[^ ]+]]: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state"},
// CHECK-SAME: %[[LR:[^ ]+]]: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
// CHECK-SAME: %[[WS:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc.weight.scale", msamp.role = "scaling_state"}) -> (
// CHECK-SAME: tensor<f32> {msamp.name = "fc.weight.scale", msamp.role = "scaling_state", msamp.updates = 10 : i64}) attributes
// The constant 1 of --msamp-fp16-weights is reused.
// CHECK-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NOT: arith.constant dense<1.000000e+00>
// CHECK: %[[G:.+]] = linalg.matmul {{.*}} -> tensor<4x3xf32>
// CHECK: %[[GB:.+]] = linalg.reduce
// Shared scale from the MAX-reduced amax, a one-entry history, just in time.
// CHECK-NEXT: %[[A:.+]] = msamp.amax %[[G]] : tensor<4x3xf32>
// CHECK-NEXT: %[[GA:.+]] = msamp.all_reduce max %[[A]] : tensor<f32>
// CHECK-NEXT: %[[H:.+]] = tensor.expand_shape %[[GA]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-NEXT: %[[S:.+]] = msamp.compute_scale pow2 most_recent %[[H]], %[[ONE]] for f8E4M3FN : tensor<1xf32>
// CHECK-NEXT: %[[Q:.+]] = msamp.quantize %[[G]], %[[S]] : tensor<4x3xf32> to tensor<4x3xf8E4M3FN>
// CHECK-NEXT: %[[SI:.+]] = arith.divf %[[ONE]], %[[S]] : tensor<f32>
// CHECK-NEXT: %[[QR:.+]], %[[QS:.+]] = msamp.all_reduce mean %[[Q]] scale_inv %[[SI]] : tensor<4x3xf8E4M3FN>
// CHECK-NEXT: %[[GBR:.+]] = msamp.all_reduce mean %[[GB]] : tensor<4xf32>
// CHECK-NOT: msamp.all_reduce
// CHECK: %[[T1:.+]] = arith.addi
// CHECK-NEXT: %[[NW:.+]], %[[NS:.+]], %[[NWM:.+]], %[[NWV:.+]] = msamp.adam_update param %[[W]] scale %[[WS]] : tensor<4x3xf16>, grad %[[QR]] scale_inv %[[QS]] : tensor<4x3xf8E4M3FN>, exp_avg %[[WM]] : tensor<4x3xf32>, exp_avg_sq %[[WV]] : tensor<4x3xf32>, lr %[[LR]], step %[[T1]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT: msamp.adam_update param %[[B]] : tensor<4xf32>, grad %[[GBR]] : tensor<4xf32>, exp_avg
// CHECK-NEXT: return %{{.+}}, %[[NW]], %{{.+}}, %[[NWM]], %[[NWV]], %{{.+}}, %{{.+}}, %[[T1]], %[[NS]] :

// EXACT-LABEL: func.func @train_step(
// EXACT: msamp.compute_scale exact most_recent %{{.+}}, %{{.+}} for f8E4M3FN : tensor<1xf32>
// EXACT-NOT: msamp.compute_scale pow2

// F32-LABEL: func.func @train_step(
// F32-NOT: f8E4M3FN
// F32: msamp.all_reduce mean %{{.+}} : tensor<4x3xf32>
// F32-NOT: f8E4M3FN
// F32: return
func.func @train_step(
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %b: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias", msamp.role = "param"},
    %wm: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state"},
    %wv: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state"},
    %bm: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg", msamp.role = "opt_state"},
    %bv: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg_sq", msamp.role = "opt_state"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %x: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
    %t: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4xf32> {msamp.name = "fc.bias", msamp.role = "param", msamp.updates = 1 : i64},
        tensor<4x3xf32> {msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state", msamp.updates = 2 : i64},
        tensor<4x3xf32> {msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 3 : i64},
        tensor<4xf32> {msamp.name = "fc.bias.exp_avg", msamp.role = "opt_state", msamp.updates = 4 : i64},
        tensor<4xf32> {msamp.name = "fc.bias.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 5 : i64},
        tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 6 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  // y = x fc.weight^T + fc.bias, loss 1/2 sum((y - t)^2), dy = y - t.
  %zero = arith.constant 0.000000e+00 : f32
  %e24 = tensor.empty() : tensor<2x4xf32>
  %z24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %xw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%z24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %bb = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e24 : tensor<2x4xf32>) dimensions = [0]
  %y = arith.addf %xw, %bb : tensor<2x4xf32>
  %dy = arith.subf %y, %t : tensor<2x4xf32>
  %sq = arith.mulf %dy, %dy : tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%sq : tensor<2x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %loss = arith.mulf %sum, %half : tensor<f32>
  // wgrad dW = dy^T x; the bias gradient is the column sums of dy.
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gw = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>] ins(%dy, %x : tensor<2x4xf32>, tensor<2x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %gb = linalg.reduce { arith.addf } ins(%dy : tensor<2x4xf32>) outs(%z4 : tensor<4xf32>) dimensions = [0]
  %gwr = msamp.all_reduce mean %gw : tensor<4x3xf32>
  %gbr = msamp.all_reduce mean %gb : tensor<4xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  %nw, %nwm, %nwv = msamp.adam_update param %w : tensor<4x3xf32>, grad %gwr : tensor<4x3xf32>, exp_avg %wm : tensor<4x3xf32>, exp_avg_sq %wv : tensor<4x3xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
  %nb, %nbm, %nbv = msamp.adam_update param %b : tensor<4xf32>, grad %gbr : tensor<4xf32>, exp_avg %bm : tensor<4xf32>, exp_avg_sq %bv : tensor<4xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
  return %loss, %nw, %nb, %nwm, %nwv, %nbm, %nbv, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
}


// -----

// SGD with momentum: the FP8 gradient and its inverse scale feed
// msamp.sgd_update.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^ ]+]]: tensor<4x3xf16> {msamp.gemm_weight,
// CHECK-SAME: %[[MB:[^ ]+]]: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state"},
// CHECK-SAME: %[[WS:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc.weight.scale", msamp.role = "scaling_state"}) -> (
// CHECK: %[[G:.+]] = linalg.matmul {{.*}} -> tensor<4x3xf32>
// CHECK-NEXT: %[[A:.+]] = msamp.amax %[[G]] : tensor<4x3xf32>
// CHECK-NEXT: %[[GA:.+]] = msamp.all_reduce max %[[A]] : tensor<f32>
// CHECK-NEXT: %[[H:.+]] = tensor.expand_shape %[[GA]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-NEXT: %[[S:.+]] = msamp.compute_scale pow2 most_recent %[[H]], %{{.+}} for f8E4M3FN : tensor<1xf32>
// CHECK-NEXT: %[[Q:.+]] = msamp.quantize %[[G]], %[[S]] : tensor<4x3xf32> to tensor<4x3xf8E4M3FN>
// CHECK-NEXT: %[[SI:.+]] = arith.divf %{{.+}}, %[[S]] : tensor<f32>
// CHECK-NEXT: %[[QR:.+]], %[[QS:.+]] = msamp.all_reduce mean %[[Q]] scale_inv %[[SI]] : tensor<4x3xf8E4M3FN>
// CHECK: msamp.sgd_update param %[[W]] scale %[[WS]] : tensor<4x3xf16>, grad %[[QR]] scale_inv %[[QS]] : tensor<4x3xf8E4M3FN>, momentum_buffer %[[MB]] : tensor<4x3xf32>, lr %{{.+}}, step %{{.+}} {momentum = 9.000000e-01 : f64}

// F32-LABEL: func.func @train_step(
// F32-NOT: f8E4M3FN
// F32: msamp.sgd_update param %{{.+}} : tensor<4x3xf32>, grad %{{.+}} : tensor<4x3xf32>
func.func @train_step(
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %wb: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %x: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
    %t: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4x3xf32> {msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state", msamp.updates = 1 : i64},
        tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 2 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  // y = x fc.weight^T, loss 1/2 sum((y - t)^2), dy = y - t, dW = dy^T x.
  %zero = arith.constant 0.000000e+00 : f32
  %e24 = tensor.empty() : tensor<2x4xf32>
  %z24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%z24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %dy = arith.subf %y, %t : tensor<2x4xf32>
  %sq = arith.mulf %dy, %dy : tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%sq : tensor<2x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %loss = arith.mulf %sum, %half : tensor<f32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gw = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>] ins(%dy, %x : tensor<2x4xf32>, tensor<2x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gwr = msamp.all_reduce mean %gw : tensor<4x3xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  %nw, %nwb = msamp.sgd_update param %w : tensor<4x3xf32>, grad %gwr : tensor<4x3xf32>, momentum_buffer %wb : tensor<4x3xf32>, lr %lr, step %t1 {momentum = 9.000000e-01 : f64}
  return %loss, %nw, %nwb, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<i64>
}


// -----

// A gradient that is summed rather than averaged is not the synthesized
// form: it stays f32, with a (missed) remark saying why.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: f8E4M3FN
// CHECK: %[[GR:.+]] = msamp.all_reduce sum %{{.+}} : tensor<4x3xf32>
// CHECK-NOT: f8E4M3FN
// CHECK: msamp.sgd_update param %{{.+}} scale %{{.+}} : tensor<4x3xf16>, grad %[[GR]] : tensor<4x3xf32>
func.func @train_step(
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %wb: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %x: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
    %t: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4x3xf32> {msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state", msamp.updates = 1 : i64},
        tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 2 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  // y = x fc.weight^T, loss 1/2 sum((y - t)^2), dy = y - t, dW = dy^T x.
  %zero = arith.constant 0.000000e+00 : f32
  %e24 = tensor.empty() : tensor<2x4xf32>
  %z24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%z24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %dy = arith.subf %y, %t : tensor<2x4xf32>
  %sq = arith.mulf %dy, %dy : tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%sq : tensor<2x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %loss = arith.mulf %sum, %half : tensor<f32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gw = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>] ins(%dy, %x : tensor<2x4xf32>, tensor<2x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gwr = msamp.all_reduce sum %gw : tensor<4x3xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  // expected-remark@+1 {{Reason="it is not an f32 msamp.all_reduce mean", Remark="gradient of scaled-FP16 'fc.weight' kept in high precision"}}
  %nw, %nwb = msamp.sgd_update param %w : tensor<4x3xf32>, grad %gwr : tensor<4x3xf32>, momentum_buffer %wb : tensor<4x3xf32>, lr %lr, step %t1 {momentum = 9.000000e-01 : f64}
  return %loss, %nw, %nwb, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<i64>
}


// -----

// Another reader of the averaged f32 gradient (here an amax added to the
// loss) reads the FP8-reduced gradient widened: the collective is replaced,
// not duplicated.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[QR:.+]], %[[QS:.+]] = msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} : tensor<4x3xf8E4M3FN>
// CHECK-NEXT: %[[GD:.+]] = msamp.dequantize %[[QR]], %[[QS]] : tensor<4x3xf8E4M3FN> to tensor<4x3xf32>
// CHECK-NEXT: msamp.amax %[[GD]] : tensor<4x3xf32>
// CHECK-NOT: msamp.all_reduce mean
// CHECK: msamp.sgd_update param %{{.+}} scale %{{.+}} : tensor<4x3xf16>, grad %[[QR]] scale_inv %[[QS]] : tensor<4x3xf8E4M3FN>
func.func @train_step(
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %wb: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %x: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
    %t: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4x3xf32> {msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state", msamp.updates = 1 : i64},
        tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 2 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  // y = x fc.weight^T, loss 1/2 sum((y - t)^2), dy = y - t, dW = dy^T x.
  %zero = arith.constant 0.000000e+00 : f32
  %e24 = tensor.empty() : tensor<2x4xf32>
  %z24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%z24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %dy = arith.subf %y, %t : tensor<2x4xf32>
  %sq = arith.mulf %dy, %dy : tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce { arith.addf } ins(%sq : tensor<2x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %loss = arith.mulf %sum, %half : tensor<f32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gw = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>] ins(%dy, %x : tensor<2x4xf32>, tensor<2x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gwr = msamp.all_reduce mean %gw : tensor<4x3xf32>
  %gmax = msamp.amax %gwr : tensor<4x3xf32>
  %loss2 = arith.addf %loss, %gmax : tensor<f32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  %nw, %nwb = msamp.sgd_update param %w : tensor<4x3xf32>, grad %gwr : tensor<4x3xf32>, momentum_buffer %wb : tensor<4x3xf32>, lr %lr, step %t1 {momentum = 9.000000e-01 : f64}
  return %loss2, %nw, %nwb, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<i64>
}

