// --msamp-low-precision-optimizer on hand-written O0 train steps
// (docs/TrainStep.md 2 "O2"): every Adam/AdamW first moment becomes
// f8E4M3FN and every second moment f16, each with a scale argument; the
// param's own storage does not matter (biases get low-bit state too).
// RUN: msamp-opt %s -split-input-file --remarks-filter-missed=msamp -verify-diagnostics --msamp-low-precision-optimizer | FileCheck %s

// Idempotence: a second run changes nothing.
// RUN: msamp-opt %s -split-input-file --msamp-low-precision-optimizer -o %t.once 2>/dev/null
// RUN: msamp-opt %t.once -split-input-file --msamp-low-precision-optimizer -o %t.twice 2>/dev/null
// RUN: diff %t.once %t.twice

// The three O1/O2 passes chained on one O0 step give the O2 state layout;
// msamp-opt verifies the IR (the msamp op verifiers included) after each.
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights --msamp-fp8-weight-gradients --msamp-low-precision-optimizer | FileCheck %s --check-prefix=O2
// The result parses and verifies again on its own, and the chain is
// idempotent as a whole.
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights --msamp-fp8-weight-gradients --msamp-low-precision-optimizer -o %t.o2
// RUN: msamp-opt %t.o2 --msamp-fp16-weights --msamp-fp8-weight-gradients --msamp-low-precision-optimizer -o %t.o2.twice
// RUN: diff %t.o2 %t.o2.twice

// One optimization remark per converted update, shown on request only.
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-low-precision-optimizer -o /dev/null 2>&1 | count 0
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-low-precision-optimizer --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: [Passed] low-precision-adam | Category:msamp:low-precision-optimizer | Remark="'fc1.weight.exp_avg' stored as f8E4M3FN, 'fc1.weight.exp_avg_sq' stored as f16, each with a per-tensor scale"
// REMARK: remark: [Passed] low-precision-adam | Category:msamp:low-precision-optimizer | Remark="'fc1.bias.exp_avg' stored as f8E4M3FN, 'fc1.bias.exp_avg_sq' stored as f16, each with a per-tensor scale"
// REMARK: remark: [Passed] low-precision-adam | Category:msamp:low-precision-optimizer | Remark="'fc2.weight.exp_avg' stored as f8E4M3FN, 'fc2.weight.exp_avg_sq' stored as f16, each with a per-tensor scale"

// The O2 layout: FP16 GEMM weights with scales, an f32 bias, FP8 m / FP16 v
// for every param, scales appended in pass order (weights, then moments)
// with their updating results.
// O2-LABEL: func.func @train_step(
// O2-SAME: %[[W1:[^ ]+]]: tensor<8x4xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc1.weight", msamp.role = "param"},
// O2-SAME: %[[B1:[^ ]+]]: tensor<8xf32> {msamp.init = "zeros", msamp.name = "fc1.bias", msamp.role = "param"},
// O2-SAME: %[[W2:[^ ]+]]: tensor<2x8xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc2.weight", msamp.role = "param"},
// O2-SAME: %[[W1M:[^ ]+]]: tensor<8x4xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc1.weight.exp_avg", msamp.role = "opt_state"},
// O2-SAME: %[[W1V:[^ ]+]]: tensor<8x4xf16> {msamp.init = "zeros", msamp.name = "fc1.weight.exp_avg_sq", msamp.role = "opt_state"},
// O2-SAME: %[[B1M:[^ ]+]]: tensor<8xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc1.bias.exp_avg", msamp.role = "opt_state"},
// O2-SAME: %[[B1V:[^ ]+]]: tensor<8xf16> {msamp.init = "zeros", msamp.name = "fc1.bias.exp_avg_sq", msamp.role = "opt_state"},
// O2-SAME: %[[W2M:[^ ]+]]: tensor<2x8xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc2.weight.exp_avg", msamp.role = "opt_state"},
// O2-SAME: %[[W2V:[^ ]+]]: tensor<2x8xf16> {msamp.init = "zeros", msamp.name = "fc2.weight.exp_avg_sq", msamp.role = "opt_state"},
// O2-SAME: %[[STEP:[^ ]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
// O2-SAME: %[[LR:[^ ]+]]: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
// O2-SAME: %[[X:[^ ]+]]: tensor<2x4xf32> {msamp.name = "x", msamp.role = "input"},
// O2-SAME: %[[T:[^ ]+]]: tensor<2x2xf32> {msamp.name = "t", msamp.role = "target"},
// O2-SAME: %[[W1S:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc1.weight.scale", msamp.role = "scaling_state"},
// O2-SAME: %[[W2S:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc2.weight.scale", msamp.role = "scaling_state"},
// O2-SAME: %[[W1MS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc1.weight.exp_avg.scale", msamp.role = "scaling_state"},
// O2-SAME: %[[W1VS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc1.weight.exp_avg_sq.scale", msamp.role = "scaling_state"},
// O2-SAME: %[[B1MS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc1.bias.exp_avg.scale", msamp.role = "scaling_state"},
// O2-SAME: %[[B1VS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc1.bias.exp_avg_sq.scale", msamp.role = "scaling_state"},
// O2-SAME: %[[W2MS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc2.weight.exp_avg.scale", msamp.role = "scaling_state"},
// O2-SAME: %[[W2VS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc2.weight.exp_avg_sq.scale", msamp.role = "scaling_state"})
// O2-SAME: -> (tensor<f32> {msamp.role = "loss"},
// O2-SAME: tensor<8x4xf16> {msamp.name = "fc1.weight", msamp.role = "param", msamp.updates = 0 : i64},
// O2-SAME: tensor<8xf32> {msamp.name = "fc1.bias", msamp.role = "param", msamp.updates = 1 : i64},
// O2-SAME: tensor<2x8xf16> {msamp.name = "fc2.weight", msamp.role = "param", msamp.updates = 2 : i64},
// O2-SAME: tensor<8x4xf8E4M3FN> {msamp.name = "fc1.weight.exp_avg", msamp.role = "opt_state", msamp.updates = 3 : i64},
// O2-SAME: tensor<8x4xf16> {msamp.name = "fc1.weight.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 4 : i64},
// O2-SAME: tensor<8xf8E4M3FN> {msamp.name = "fc1.bias.exp_avg", msamp.role = "opt_state", msamp.updates = 5 : i64},
// O2-SAME: tensor<8xf16> {msamp.name = "fc1.bias.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 6 : i64},
// O2-SAME: tensor<2x8xf8E4M3FN> {msamp.name = "fc2.weight.exp_avg", msamp.role = "opt_state", msamp.updates = 7 : i64},
// O2-SAME: tensor<2x8xf16> {msamp.name = "fc2.weight.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 8 : i64},
// O2-SAME: tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 9 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc1.weight.scale", msamp.role = "scaling_state", msamp.updates = 13 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc2.weight.scale", msamp.role = "scaling_state", msamp.updates = 14 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc1.weight.exp_avg.scale", msamp.role = "scaling_state", msamp.updates = 15 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc1.weight.exp_avg_sq.scale", msamp.role = "scaling_state", msamp.updates = 16 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc1.bias.exp_avg.scale", msamp.role = "scaling_state", msamp.updates = 17 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc1.bias.exp_avg_sq.scale", msamp.role = "scaling_state", msamp.updates = 18 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc2.weight.exp_avg.scale", msamp.role = "scaling_state", msamp.updates = 19 : i64},
// O2-SAME: tensor<f32> {msamp.name = "fc2.weight.exp_avg_sq.scale", msamp.role = "scaling_state", msamp.updates = 20 : i64})
// O2-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// O2-NEXT: %[[I1:.+]] = arith.divf %[[ONE]], %[[W1S]] : tensor<f32>
// O2-NEXT: %[[W1D:.+]] = msamp.dequantize %[[W1]], %[[I1]] : tensor<8x4xf16> to tensor<8x4xf32>
// O2-NEXT: %[[I2:.+]] = arith.divf %[[ONE]], %[[W2S]] : tensor<f32>
// O2-NEXT: %[[W2D:.+]] = msamp.dequantize %[[W2]], %[[I2]] : tensor<2x8xf16> to tensor<2x8xf32>
// O2: linalg.transpose ins(%[[W1D]] : tensor<8x4xf32>)
// O2: linalg.transpose ins(%[[W2D]] : tensor<2x8xf32>)
// The dgrad of fc2 reads the dequantized weight too.
// O2: linalg.matmul ins(%{{.+}}, %[[W2D]] : tensor<2x2xf32>, tensor<2x8xf32>)
// O2: %[[Q1:.+]], %[[Q1S:.+]] = msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} : tensor<8x4xf8E4M3FN>
// O2: %[[GB:.+]] = msamp.all_reduce mean %{{.+}} : tensor<8xf32>
// O2: %[[Q2:.+]], %[[Q2S:.+]] = msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} : tensor<2x8xf8E4M3FN>
// O2: %[[T1:.+]] = arith.addi %[[STEP]], %{{.+}} : tensor<i64>
// O2-NEXT: %[[NW1:.+]], %[[NW1S:.+]], %[[NW1M:.+]], %[[NW1MS:.+]], %[[NW1V:.+]], %[[NW1VS:.+]] = msamp.adam_update param %[[W1]] scale %[[W1S]] : tensor<8x4xf16>, grad %[[Q1]] scale_inv %[[Q1S]] : tensor<8x4xf8E4M3FN>, exp_avg %[[W1M]] scale %[[W1MS]] : tensor<8x4xf8E4M3FN>, exp_avg_sq %[[W1V]] scale %[[W1VS]] : tensor<8x4xf16>, lr %[[LR]], step %[[T1]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// O2-NEXT: %[[NB1:.+]], %[[NB1M:.+]], %[[NB1MS:.+]], %[[NB1V:.+]], %[[NB1VS:.+]] = msamp.adam_update param %[[B1]] : tensor<8xf32>, grad %[[GB]] : tensor<8xf32>, exp_avg %[[B1M]] scale %[[B1MS]] : tensor<8xf8E4M3FN>, exp_avg_sq %[[B1V]] scale %[[B1VS]] : tensor<8xf16>, lr %[[LR]], step %[[T1]]
// O2-NEXT: %[[NW2:.+]], %[[NW2S:.+]], %[[NW2M:.+]], %[[NW2MS:.+]], %[[NW2V:.+]], %[[NW2VS:.+]] = msamp.adam_update param %[[W2]] scale %[[W2S]] : tensor<2x8xf16>, grad %[[Q2]] scale_inv %[[Q2S]] : tensor<2x8xf8E4M3FN>, exp_avg %[[W2M]] scale %[[W2MS]] : tensor<2x8xf8E4M3FN>, exp_avg_sq %[[W2V]] scale %[[W2VS]] : tensor<2x8xf16>, lr %[[LR]], step %[[T1]]
// O2-NEXT: return %{{.+}}, %[[NW1]], %[[NB1]], %[[NW2]], %[[NW1M]], %[[NW1V]], %[[NB1M]], %[[NB1V]], %[[NW2M]], %[[NW2V]], %[[T1]], %[[NW1S]], %[[NW2S]], %[[NW1MS]], %[[NW1VS]], %[[NB1MS]], %[[NB1VS]], %[[NW2MS]], %[[NW2VS]] : tensor<f32>, tensor<8x4xf16>, tensor<8xf32>, tensor<2x8xf16>, tensor<8x4xf8E4M3FN>, tensor<8x4xf16>, tensor<8xf8E4M3FN>, tensor<8xf16>, tensor<2x8xf8E4M3FN>, tensor<2x8xf16>, tensor<i64>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
// O2-NOT: msamp.dequantize

// AdamW on f32 params (no --msamp-fp16-weights): the moments of the GEMM
// weight and of the bias alike become FP8 m / FP16 v with "ones" scales.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^ ]+]]: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
// CHECK-SAME: %[[B:[^ ]+]]: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias", msamp.role = "param"},
// CHECK-SAME: %[[WM:[^ ]+]]: tensor<4x3xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state"},
// CHECK-SAME: %[[WV:[^ ]+]]: tensor<4x3xf16> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state"},
// CHECK-SAME: %[[BM:[^ ]+]]: tensor<4xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg", msamp.role = "opt_state"},
// CHECK-SAME: %[[BV:[^ ]+]]: tensor<4xf16> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg_sq", msamp.role = "opt_state"},
// CHECK-SAME: %[[STEP:[^ ]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
// CHECK-SAME: %[[LR:[^ ]+]]: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
// CHECK-SAME: %[[X:[^ ]+]]: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
// CHECK-SAME: %[[T:[^ ]+]]: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"},
// CHECK-SAME: %[[WMS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc.weight.exp_avg.scale", msamp.role = "scaling_state"},
// CHECK-SAME: %[[WVS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc.weight.exp_avg_sq.scale", msamp.role = "scaling_state"},
// CHECK-SAME: %[[BMS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc.bias.exp_avg.scale", msamp.role = "scaling_state"},
// CHECK-SAME: %[[BVS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc.bias.exp_avg_sq.scale", msamp.role = "scaling_state"})
// CHECK-SAME: -> (tensor<f32> {msamp.role = "loss"},
// CHECK-SAME: tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
// CHECK-SAME: tensor<4xf32> {msamp.name = "fc.bias", msamp.role = "param", msamp.updates = 1 : i64},
// CHECK-SAME: tensor<4x3xf8E4M3FN> {msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state", msamp.updates = 2 : i64},
// CHECK-SAME: tensor<4x3xf16> {msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 3 : i64},
// CHECK-SAME: tensor<4xf8E4M3FN> {msamp.name = "fc.bias.exp_avg", msamp.role = "opt_state", msamp.updates = 4 : i64},
// CHECK-SAME: tensor<4xf16> {msamp.name = "fc.bias.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 5 : i64},
// CHECK-SAME: tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 6 : i64},
// CHECK-SAME: tensor<f32> {msamp.name = "fc.weight.exp_avg.scale", msamp.role = "scaling_state", msamp.updates = 10 : i64},
// CHECK-SAME: tensor<f32> {msamp.name = "fc.weight.exp_avg_sq.scale", msamp.role = "scaling_state", msamp.updates = 11 : i64},
// CHECK-SAME: tensor<f32> {msamp.name = "fc.bias.exp_avg.scale", msamp.role = "scaling_state", msamp.updates = 12 : i64},
// CHECK-SAME: tensor<f32> {msamp.name = "fc.bias.exp_avg_sq.scale", msamp.role = "scaling_state", msamp.updates = 13 : i64})
// Nothing but the updates reads a moment: no dequantize, no constant.
// CHECK-NOT: msamp.dequantize
// CHECK-NOT: arith.constant dense<1.000000e+00>
// CHECK: %[[GW:.+]] = msamp.all_reduce mean %{{.+}} : tensor<4x3xf32>
// CHECK-NEXT: %[[GB:.+]] = msamp.all_reduce mean %{{.+}} : tensor<4xf32>
// CHECK: %[[T1:.+]] = arith.addi %[[STEP]], %{{.+}} : tensor<i64>
// CHECK-NEXT: %[[NW:.+]], %[[NWM:.+]], %[[NWMS:.+]], %[[NWV:.+]], %[[NWVS:.+]] = msamp.adam_update param %[[W]] : tensor<4x3xf32>, grad %[[GW]] : tensor<4x3xf32>, exp_avg %[[WM]] scale %[[WMS]] : tensor<4x3xf8E4M3FN>, exp_avg_sq %[[WV]] scale %[[WVS]] : tensor<4x3xf16>, lr %[[LR]], step %[[T1]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT: %[[NB:.+]], %[[NBM:.+]], %[[NBMS:.+]], %[[NBV:.+]], %[[NBVS:.+]] = msamp.adam_update param %[[B]] : tensor<4xf32>, grad %[[GB]] : tensor<4xf32>, exp_avg %[[BM]] scale %[[BMS]] : tensor<4xf8E4M3FN>, exp_avg_sq %[[BV]] scale %[[BVS]] : tensor<4xf16>, lr %[[LR]], step %[[T1]]
// CHECK-NEXT: return %{{.+}}, %[[NW]], %[[NB]], %[[NWM]], %[[NWV]], %[[NBM]], %[[NBV]], %[[T1]], %[[NWMS]], %[[NWVS]], %[[NBMS]], %[[NBVS]] : tensor<f32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf8E4M3FN>, tensor<4x3xf16>, tensor<4xf8E4M3FN>, tensor<4xf16>, tensor<i64>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
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

// SGD with momentum: momentum buffers stay f32 and nothing changes; one
// remark for the whole step, not one per buffer.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[WB:[^ ]+]]: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state"},
// CHECK-SAME: %[[BB:[^ ]+]]: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias.momentum_buffer", msamp.role = "opt_state"},
// CHECK-NOT: scaling_state
// CHECK: msamp.sgd_update param %{{.+}} : tensor<4x3xf32>, grad %{{.+}} : tensor<4x3xf32>, momentum_buffer %[[WB]] : tensor<4x3xf32>
// CHECK: msamp.sgd_update param %{{.+}} : tensor<4xf32>, grad %{{.+}} : tensor<4xf32>, momentum_buffer %[[BB]] : tensor<4xf32>
func.func @train_step(
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %b: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias", msamp.role = "param"},
    %wb: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state"},
    %bb0: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias.momentum_buffer", msamp.role = "opt_state"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %x: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
    %t: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4xf32> {msamp.name = "fc.bias", msamp.role = "param", msamp.updates = 1 : i64},
        tensor<4x3xf32> {msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state", msamp.updates = 2 : i64},
        tensor<4xf32> {msamp.name = "fc.bias.momentum_buffer", msamp.role = "opt_state", msamp.updates = 3 : i64},
        tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 4 : i64})
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
  // expected-remark@+1 {{Reason="low-precision optimizer state applies to Adam/AdamW only", Remark="SGD momentum buffers stay f32"}}
  %nw, %nwb = msamp.sgd_update param %w : tensor<4x3xf32>, grad %gwr : tensor<4x3xf32>, momentum_buffer %wb : tensor<4x3xf32>, lr %lr, step %t1 {momentum = 9.000000e-01 : f64, nesterov}
  %nb, %nbb = msamp.sgd_update param %b : tensor<4xf32>, grad %gbr : tensor<4xf32>, momentum_buffer %bb0 : tensor<4xf32>, lr %lr, step %t1 {momentum = 9.000000e-01 : f64, nesterov}
  return %loss, %nw, %nb, %nwb, %nbb, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<i64>
}

// -----

// A moment read by something other than its update (here the old and the
// new fc.weight.exp_avg, each through an amax added to the loss) is read
// dequantized with the inverse of its scale; the step still returns the
// stored FP8 value.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[WM:[^ ]+]]: tensor<4x3xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state"},
// CHECK-SAME: %[[WMS:[^ ]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc.weight.exp_avg.scale", msamp.role = "scaling_state"},
// CHECK-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[INV:.+]] = arith.divf %[[ONE]], %[[WMS]] : tensor<f32>
// CHECK-NEXT: %[[MD:.+]] = msamp.dequantize %[[WM]], %[[INV]] : tensor<4x3xf8E4M3FN> to tensor<4x3xf32>
// CHECK: msamp.amax %[[MD]] : tensor<4x3xf32>
// CHECK: %[[NW:.+]], %[[NWM:.+]], %[[NWMS:.+]], %[[NWV:.+]], %[[NWVS:.+]] = msamp.adam_update param %{{.+}} : tensor<4x3xf32>, grad %{{.+}} : tensor<4x3xf32>, exp_avg %[[WM]] scale %[[WMS]] : tensor<4x3xf8E4M3FN>
// CHECK-NEXT: %[[NINV:.+]] = arith.divf %[[ONE]], %[[NWMS]] : tensor<f32>
// CHECK-NEXT: %[[NMD:.+]] = msamp.dequantize %[[NWM]], %[[NINV]] : tensor<4x3xf8E4M3FN> to tensor<4x3xf32>
// CHECK: msamp.amax %[[NMD]] : tensor<4x3xf32>
// CHECK: return %{{.+}}, %[[NW]], %{{.+}}, %[[NWM]], %[[NWV]], %{{.+}}, %{{.+}}, %{{.+}}, %[[NWMS]], %[[NWVS]], %{{.+}}, %{{.+}} : tensor<f32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf8E4M3FN>, tensor<4x3xf16>,
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
  %mmax = msamp.amax %wm : tensor<4x3xf32>
  %loss2 = arith.addf %loss, %mmax : tensor<f32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  %nw, %nwm, %nwv = msamp.adam_update param %w : tensor<4x3xf32>, grad %gwr : tensor<4x3xf32>, exp_avg %wm : tensor<4x3xf32>, exp_avg_sq %wv : tensor<4x3xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
  %nb, %nbm, %nbv = msamp.adam_update param %b : tensor<4xf32>, grad %gbr : tensor<4xf32>, exp_avg %bm : tensor<4xf32>, exp_avg_sq %bv : tensor<4xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
  %nmmax = msamp.amax %nwm : tensor<4x3xf32>
  %loss3 = arith.addf %loss2, %nmmax : tensor<f32>
  return %loss3, %nw, %nb, %nwm, %nwv, %nbm, %nbv, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
}

