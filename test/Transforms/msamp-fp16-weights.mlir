// --msamp-fp16-weights on hand-written O0 train steps (docs/TrainStep.md 2):
// GEMM weights become scaled f16 state, everything else is left alone.
// RUN: msamp-opt %s -split-input-file --remarks-filter-missed=msamp -verify-diagnostics --msamp-fp16-weights | FileCheck %s

// Idempotence: running the pass on its own output changes nothing.
// RUN: msamp-opt %s -split-input-file --msamp-fp16-weights -o %t.once
// RUN: msamp-opt %t.once -split-input-file --msamp-fp16-weights -o %t.twice
// RUN: diff %t.once %t.twice

// exclude: a GEMM weight matching the regex stays f32, with a remark
// (missed, shown on request) saying why.
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights='exclude=^fc2\.' --remarks-filter=msamp 2>%t.excl | FileCheck %s --check-prefix=EXCL
// RUN: FileCheck %s --check-prefix=EXCL-REMARK < %t.excl

// One optimization remark per converted weight, shown on request only.
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights -o /dev/null 2>&1 | count 0
// RUN: msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// REMARK: o1-mlp.mlir:8:7: remark: [Passed] fp16-weight | Category:msamp:fp16-weights | Remark="GEMM weight 'fc1.weight' stored as scaled f16 with scale argument 'fc1.weight.scale'"
// REMARK: o1-mlp.mlir:10:7: remark: [Passed] fp16-weight | Category:msamp:fp16-weights | Remark="GEMM weight 'fc2.weight' stored as scaled f16 with scale argument 'fc2.weight.scale'"

// EXCL-REMARK: o1-mlp.mlir:10:7: remark: [Missed] fp16-weight-excluded | Category:msamp:fp16-weights | Reason="it matches exclude regex '^fc2\.'", Remark="GEMM weight 'fc2.weight' kept in f32"
// EXCL-REMARK: o1-mlp.mlir:8:7: remark: [Passed] fp16-weight | {{.*}}'fc1.weight'
// EXCL-REMARK-NOT: remark

// fc1.weight is converted; fc2.weight (excluded) and fc1.bias (no GEMM
// weight) keep f32 storage, no scale and their f32 updates.
// EXCL-LABEL: func.func @train_step(
// EXCL-SAME: %[[W1:[^ ]+]]: tensor<8x4xf16> {{[^}]*}}msamp.name = "fc1.weight"
// EXCL-SAME: %{{.+}}: tensor<8xf32> {{[^}]*}}msamp.name = "fc1.bias"
// EXCL-SAME: %[[W2:[^ ]+]]: tensor<2x8xf32> {msamp.gemm_weight, {{[^}]*}}msamp.name = "fc2.weight"
// EXCL-SAME: %[[S1:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc1.weight.scale", msamp.role = "scaling_state"})
// EXCL-NOT: fc2.weight.scale
// EXCL-SAME: -> (
// EXCL-SAME: tensor<2x8xf32> {msamp.name = "fc2.weight", msamp.role = "param", msamp.updates = 2 : i64}
// EXCL-SAME: tensor<f32> {msamp.name = "fc1.weight.scale", msamp.role = "scaling_state", msamp.updates = 13 : i64})
// EXCL: msamp.dequantize %[[W1]]
// EXCL-NOT: msamp.dequantize
// EXCL: linalg.transpose ins(%[[W2]] : tensor<2x8xf32>)
// EXCL: msamp.adam_update param %[[W1]] scale %[[S1]] : tensor<8x4xf16>
// EXCL: msamp.adam_update param %{{.+}} : tensor<8xf32>
// EXCL: msamp.adam_update param %[[W2]] : tensor<2x8xf32>

// AdamW, one Linear layer: fc.weight (a GEMM weight) becomes f16 with a
// from_param scale argument and result; fc.bias stays f32.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^ ]+]]: tensor<4x3xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
// CHECK-SAME: %[[B:[^ ]+]]: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias", msamp.role = "param"},
// CHECK-SAME: %[[WM:[^ ]+]]: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state"},
// CHECK-SAME: %[[WV:[^ ]+]]: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state"},
// CHECK-SAME: %[[BM:[^ ]+]]: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg", msamp.role = "opt_state"},
// CHECK-SAME: %[[BV:[^ ]+]]: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg_sq", msamp.role = "opt_state"},
// CHECK-SAME: %[[STEP:[^ ]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
// CHECK-SAME: %[[LR:[^ ]+]]: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
// CHECK-SAME: %[[X:[^ ]+]]: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
// CHECK-SAME: %[[T:[^ ]+]]: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"},
// CHECK-SAME: %[[S:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc.weight.scale", msamp.role = "scaling_state"})
// CHECK-SAME: -> (tensor<f32> {msamp.role = "loss"},
// CHECK-SAME: tensor<4x3xf16> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
// CHECK-SAME: tensor<4xf32> {msamp.name = "fc.bias", msamp.role = "param", msamp.updates = 1 : i64},
// CHECK-SAME: tensor<4x3xf32> {msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state", msamp.updates = 2 : i64},
// CHECK-SAME: tensor<4x3xf32> {msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 3 : i64},
// CHECK-SAME: tensor<4xf32> {msamp.name = "fc.bias.exp_avg", msamp.role = "opt_state", msamp.updates = 4 : i64},
// CHECK-SAME: tensor<4xf32> {msamp.name = "fc.bias.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 5 : i64},
// CHECK-SAME: tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 6 : i64},
// CHECK-SAME: tensor<f32> {msamp.name = "fc.weight.scale", msamp.role = "scaling_state", msamp.updates = 10 : i64})
// CHECK-SAME: attributes {msamp.kind = "train_step", msamp.level = "O0"} {
// The weight is read dequantized, before anything else.
// CHECK-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[INV:.+]] = arith.divf %[[ONE]], %[[S]] : tensor<f32>
// CHECK-NEXT: %[[WD:.+]] = msamp.dequantize %[[W]], %[[INV]] : tensor<4x3xf16> to tensor<4x3xf32>
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %[[WD]] : tensor<2x3xf32>, tensor<4x3xf32>)
// CHECK: linalg.broadcast ins(%[[B]] : tensor<4xf32>)
// CHECK: %[[GW:.+]] = msamp.all_reduce mean %{{.+}} : tensor<4x3xf32>
// CHECK: %[[GB:.+]] = msamp.all_reduce mean %{{.+}} : tensor<4xf32>
// CHECK: %[[T1:.+]] = arith.addi %[[STEP]], %{{.+}} : tensor<i64>
// The update reads and writes the scaled f16 weight: one more result.
// CHECK-NEXT: %[[NW:.+]], %[[NS:.+]], %[[NWM:.+]], %[[NWV:.+]] = msamp.adam_update param %[[W]] scale %[[S]] : tensor<4x3xf16>, grad %[[GW]] : tensor<4x3xf32>, exp_avg %[[WM]] : tensor<4x3xf32>, exp_avg_sq %[[WV]] : tensor<4x3xf32>, lr %[[LR]], step %[[T1]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT: %[[NB:.+]], %[[NBM:.+]], %[[NBV:.+]] = msamp.adam_update param %[[B]] : tensor<4xf32>, grad %[[GB]] : tensor<4xf32>, exp_avg %[[BM]] : tensor<4xf32>, exp_avg_sq %[[BV]] : tensor<4xf32>, lr %[[LR]], step %[[T1]]
// CHECK-NEXT: return %{{.+}}, %[[NW]], %[[NB]], %[[NWM]], %[[NWV]], %[[NBM]], %[[NBV]], %[[T1]], %[[NS]] : tensor<f32>, tensor<4x3xf16>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>
// CHECK-NOT: msamp.dequantize
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

// SGD with momentum: the weight update gets the scale, the momentum buffer
// stays f32.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^ ]+]]: tensor<4x3xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
// CHECK-SAME: %[[MB:[^ ]+]]: tensor<4x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state"},
// CHECK-SAME: %[[S:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc.weight.scale", msamp.role = "scaling_state"})
// CHECK-SAME: -> (tensor<f32> {msamp.role = "loss"},
// CHECK-SAME: tensor<4x3xf16> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
// CHECK-SAME: tensor<4x3xf32> {msamp.name = "fc.weight.momentum_buffer", msamp.role = "opt_state", msamp.updates = 1 : i64},
// CHECK-SAME: tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 2 : i64},
// CHECK-SAME: tensor<f32> {msamp.name = "fc.weight.scale", msamp.role = "scaling_state", msamp.updates = 6 : i64})
// CHECK-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[INV:.+]] = arith.divf %[[ONE]], %[[S]] : tensor<f32>
// CHECK-NEXT: %[[WD:.+]] = msamp.dequantize %[[W]], %[[INV]] : tensor<4x3xf16> to tensor<4x3xf32>
// CHECK: linalg.matmul {{.*}} ins(%{{.+}}, %[[WD]] : tensor<2x3xf32>, tensor<4x3xf32>)
// CHECK: %[[GW:.+]] = msamp.all_reduce mean %{{.+}} : tensor<4x3xf32>
// CHECK: %[[NW:.+]], %[[NS:.+]], %[[NMB:.+]] = msamp.sgd_update param %[[W]] scale %[[S]] : tensor<4x3xf16>, grad %[[GW]] : tensor<4x3xf32>, momentum_buffer %[[MB]] : tensor<4x3xf32>, lr %{{.+}}, step %{{.+}} {momentum = 9.000000e-01 : f64}
// CHECK-NEXT: return %{{.+}}, %[[NW]], %[[NMB]], %{{.+}}, %[[NS]] : tensor<f32>, tensor<4x3xf16>, tensor<4x3xf32>, tensor<i64>, tensor<f32>
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

// A weight that is already scaled f16 (an earlier run) is left as it is and
// its dequantize is not duplicated; the f32 GEMM weight next to it is
// converted, reusing the existing constant 1.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W1:[^ ]+]]: tensor<4x3xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "a.weight", msamp.role = "param"},
// CHECK-SAME: %[[W2:[^ ]+]]: tensor<4x3xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "b.weight", msamp.role = "param"},
// CHECK-SAME: %[[S1:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "a.weight.scale", msamp.role = "scaling_state"},
// CHECK-SAME: %[[S2:[^ ]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "b.weight.scale", msamp.role = "scaling_state"})
// CHECK-SAME: tensor<f32> {msamp.name = "a.weight.scale", msamp.role = "scaling_state", msamp.updates = 6 : i64},
// CHECK-SAME: tensor<f32> {msamp.name = "b.weight.scale", msamp.role = "scaling_state", msamp.updates = 7 : i64})
// CHECK-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NOT: arith.constant dense<1.000000e+00>
// CHECK-DAG: %[[INV1:.+]] = arith.divf %[[ONE]], %[[S1]] : tensor<f32>
// CHECK-DAG: msamp.dequantize %[[W1]], %[[INV1]] : tensor<4x3xf16> to tensor<4x3xf32>
// CHECK-DAG: %[[INV2:.+]] = arith.divf %[[ONE]], %[[S2]] : tensor<f32>
// CHECK-DAG: msamp.dequantize %[[W2]], %[[INV2]] : tensor<4x3xf16> to tensor<4x3xf32>
// CHECK-NOT: msamp.dequantize
// CHECK: msamp.sgd_update param %[[W1]] scale %[[S1]] : tensor<4x3xf16>
// CHECK: msamp.sgd_update param %[[W2]] scale %[[S2]] : tensor<4x3xf16>
func.func @train_step(
    %w1: tensor<4x3xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "a.weight", msamp.role = "param"},
    %w2: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "b.weight", msamp.role = "param"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %x: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"},
    %t: tensor<2x4xf32> {msamp.name = "t", msamp.role = "target"},
    %s1: tensor<f32> {msamp.init = "from_param", msamp.name = "a.weight.scale", msamp.role = "scaling_state"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf16> {msamp.name = "a.weight", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4x3xf32> {msamp.name = "b.weight", msamp.role = "param", msamp.updates = 1 : i64},
        tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 2 : i64},
        tensor<f32> {msamp.name = "a.weight.scale", msamp.role = "scaling_state", msamp.updates = 6 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %cone = arith.constant dense<1.000000e+00> : tensor<f32>
  %inv1 = arith.divf %cone, %s1 : tensor<f32>
  %w1d = msamp.dequantize %w1, %inv1 : tensor<4x3xf16> to tensor<4x3xf32>
  // y = x (a.weight + b.weight)^T, loss 1/2 sum((y - t)^2), both gradients
  // dy^T x.
  %zero = arith.constant 0.000000e+00 : f32
  %e24 = tensor.empty() : tensor<2x4xf32>
  %z24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w1d : tensor<2x3xf32>, tensor<4x3xf32>) outs(%z24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w2 : tensor<2x3xf32>, tensor<4x3xf32>) outs(%y1 : tensor<2x4xf32>) -> tensor<2x4xf32>
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
  %g1r = msamp.all_reduce mean %gw : tensor<4x3xf32>
  %g2r = msamp.all_reduce mean %gw : tensor<4x3xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  %nw1, %ns1 = msamp.sgd_update param %w1 scale %s1 : tensor<4x3xf16>, grad %g1r : tensor<4x3xf32>, lr %lr, step %t1
  %nw2 = msamp.sgd_update param %w2 : tensor<4x3xf32>, grad %g2r : tensor<4x3xf32>, lr %lr, step %t1
  return %loss, %nw1, %nw2, %t1, %ns1 : tensor<f32>, tensor<4x3xf16>, tensor<4x3xf32>, tensor<i64>, tensor<f32>
}

// -----

// A reader of the updated weight other than the return (here an amax added
// to the loss) reads it dequantized with the inverse of the new scale; the
// step still returns the stored f16 value.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[NW:.+]], %[[NS:.+]], %[[NMB:.+]] = msamp.sgd_update param
// CHECK-NEXT: %[[INV:.+]] = arith.divf %[[ONE]], %[[NS]] : tensor<f32>
// CHECK-NEXT: %[[NWD:.+]] = msamp.dequantize %[[NW]], %[[INV]] : tensor<4x3xf16> to tensor<4x3xf32>
// CHECK-NEXT: msamp.amax %[[NWD]] : tensor<4x3xf32>
// CHECK: return %{{.+}}, %[[NW]], %[[NMB]], %{{.+}}, %[[NS]] : tensor<f32>, tensor<4x3xf16>,
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
  // A reader of the new weight (e.g. a weight-norm log).
  %wmax = msamp.amax %nw : tensor<4x3xf32>
  %loss2 = arith.addf %loss, %wmax : tensor<f32>
  return %loss2, %nw, %nwb, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<i64>
}

