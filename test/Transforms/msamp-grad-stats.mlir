// --msamp-grad-stats (docs/TrainStep.md 2 "Gradient statistics"): the global
// L2 norm of the gradients the optimizer reads (FP8 gradients dequantized),
// summed in f64; PyTorch's clipping coefficient from the new hyperparameter
// max_grad_norm; the recorded amaxes of FP8 gradients folded in (an FP8 cast
// saturates, so only they show an overflow); the metrics grad_norm and
// nonfinite appended after the state results.
// RUN: msamp-opt %S/Inputs/train-step-o0.mlir --msamp-grad-stats | FileCheck %s --check-prefix=O0
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-grad-stats | FileCheck %s --check-prefix=O1
// RUN: msamp-opt %s -split-input-file --remarks-filter-missed=msamp -verify-diagnostics --msamp-grad-stats | FileCheck %s
//
// The result is a valid train step at every level, and a second run changes
// nothing.
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-grad-stats --msamp-verify-train-step -o %t.once
// RUN: msamp-opt %t.once --msamp-grad-stats -o %t.twice
// RUN: diff %t.once %t.twice
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir --msamp-grad-stats --msamp-verify-train-step -o /dev/null
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir --msamp-grad-stats --msamp-verify-train-step -o /dev/null
//
// The manifest lists the new input and the metrics; the memory report does
// not change (metrics and hyperparams are not state, the clipped gradient
// has the type of the one it replaces).
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-grad-stats --msamp-emit-manifest=- -o /dev/null | FileCheck %s --check-prefix=MANIFEST
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-memory-report=format=json -o /dev/null > %t.before.json
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-grad-stats --msamp-memory-report=format=json -o /dev/null > %t.after.json
// RUN: diff %t.before.json %t.after.json
//
// One remark per train step, on request.
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-grad-stats --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: [Passed] grad-stats | Category:msamp:grad-stats | Remark="global gradient norm and clipping over 2 gradients (2 FP8/f16, dequantized), 2 recorded amaxes checked for overflow"

// ---- At O0 the gradients are f32 and scaled elementwise. ----
// O0-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// O0-DAG: #[[TO0D:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// O0-DAG: #[[SCALAR:map[0-9]*]] = affine_map<() -> ()>
// The argument is appended (no msamp.updates index moves), the metrics
// follow the state results.
// O0-LABEL: func.func @train_step(
// O0-SAME: %[[MAX:[^:]+]]: tensor<f32> {msamp.name = "max_grad_norm", msamp.role = "hyperparam"})
// O0-SAME: tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 6 : i64},
// O0-SAME: tensor<f32> {msamp.name = "grad_norm", msamp.role = "metric"},
// O0-SAME: tensor<f32> {msamp.name = "nonfinite", msamp.role = "metric"})
// O0: %[[G1:.+]] = msamp.all_reduce mean %{{.+}} : tensor<64x32xf32>
// O0: %[[G2:.+]] = msamp.all_reduce mean %{{.+}} : tensor<16x64xf32>
// Sum of squares in f64, one gradient after the other in update order.
// O0-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// O0-NEXT: %[[E:.+]] = tensor.empty() : tensor<f64>
// O0-NEXT: %[[ACC0:.+]] = linalg.fill ins(%[[ZERO]] : f64) outs(%[[E]] : tensor<f64>) -> tensor<f64>
// O0-NEXT: %[[ACC1:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[TO0D]]], iterator_types = ["reduction", "reduction"]} ins(%[[G1]] : tensor<64x32xf32>) outs(%[[ACC0]] : tensor<f64>) {
// O0-NEXT: ^bb0(%[[X:.+]]: f32, %[[A:.+]]: f64):
// O0-NEXT: %[[W:.+]] = arith.extf %[[X]] : f32 to f64
// O0-NEXT: %[[SQ:.+]] = arith.mulf %[[W]], %[[W]] : f64
// O0-NEXT: %[[SUM:.+]] = arith.addf %[[A]], %[[SQ]] : f64
// O0-NEXT: linalg.yield %[[SUM]] : f64
// O0: %[[ACC2:.+]] = linalg.generic {{.*}} ins(%[[G2]] : tensor<16x64xf32>) outs(%[[ACC1]] : tensor<f64>)
// norm = sqrt(sum), coef = max > 0 ? min(max / (norm + 1e-6), 1) : 1,
// nonfinite = |norm| < inf ? 0 : 1.
// O0-DAG: %[[C0:.+]] = arith.constant 0.000000e+00 : f32
// O0-DAG: %[[C1:.+]] = arith.constant 1.000000e+00 : f32
// O0-DAG: %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// O0-DAG: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// O0: %[[STATS:.+]]:3 = linalg.generic {indexing_maps = [#[[SCALAR]], #[[SCALAR]], #[[SCALAR]], #[[SCALAR]], #[[SCALAR]]], iterator_types = []} ins(%[[ACC2]], %[[MAX]] : tensor<f64>, tensor<f32>)
// O0-NEXT: ^bb0(%[[S:[^:]+]]: f64, %[[M:[^:]+]]: f32,
// O0-NEXT: %[[ROOT:.+]] = math.sqrt %[[S]] : f64
// O0-NEXT: %[[NORM:.+]] = arith.truncf %[[ROOT]] : f64 to f32
// O0-NEXT: %[[DEN:.+]] = arith.addf %[[NORM]], %[[EPS]] : f32
// O0-NEXT: %[[Q:.+]] = arith.divf %[[M]], %[[DEN]] : f32
// O0-NEXT: %[[CLAMP:.+]] = arith.minimumf %[[Q]], %[[C1]] : f32
// O0-NEXT: %[[ON:.+]] = arith.cmpf ogt, %[[M]], %[[C0]] : f32
// O0-NEXT: %[[COEF:.+]] = arith.select %[[ON]], %[[CLAMP]], %[[C1]] : f32
// O0-NEXT: %[[ABS:.+]] = math.absf %[[NORM]] : f32
// O0-NEXT: %[[FIN:.+]] = arith.cmpf olt, %[[ABS]], %[[INF]] : f32
// O0-NEXT: %[[FLAG:.+]] = arith.select %[[FIN]], %[[C0]], %[[C1]] : f32
// O0-NEXT: linalg.yield %[[NORM]], %[[COEF]], %[[FLAG]] : f32, f32, f32
// The f32 gradients are multiplied by the coefficient.
// O0: %[[G1C:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[TO0D]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[G1]], %[[STATS]]#1 : tensor<64x32xf32>, tensor<f32>)
// O0-NEXT: ^bb0(%[[GV:[^:]+]]: f32, %[[CV:[^:]+]]: f32,
// O0-NEXT: %[[P:.+]] = arith.mulf %[[GV]], %[[CV]] : f32
// O0-NEXT: linalg.yield %[[P]] : f32
// O0: %[[G2C:.+]] = linalg.generic {{.*}} ins(%[[G2]], %[[STATS]]#1 : tensor<16x64xf32>, tensor<f32>)
// O0: msamp.adam_update param %{{.+}} : tensor<64x32xf32>, grad %[[G1C]] : tensor<64x32xf32>,
// O0-NEXT: msamp.adam_update param %{{.+}} : tensor<16x64xf32>, grad %[[G2C]] : tensor<16x64xf32>,
// O0-NEXT: return {{.*}}, %[[STATS]]#0, %[[STATS]]#2 : {{.*}}, tensor<i64>, tensor<f32>, tensor<f32>

// ---- At O1 the FP8 gradients are dequantized for the norm, their amaxes
// folded in, and the inverse scale (not the bytes) carries the coefficient.
// O1-LABEL: func.func @train_step(
// O1-SAME: %[[MAX:[^:]+]]: tensor<f32> {msamp.name = "max_grad_norm", msamp.role = "hyperparam"})
// O1-SAME: tensor<16xf32> {msamp.name = "fc1.wgrad.grad_output.amax_history", msamp.role = "scaling_state", msamp.updates = 19 : i64},
// O1-SAME: tensor<f32> {msamp.name = "grad_norm", msamp.role = "metric"},
// O1-SAME: tensor<f32> {msamp.name = "nonfinite", msamp.role = "metric"})
// The amax recorded before each FP8 cast: the max-reduced one that sets the
// scale.
// O1: %[[A1:.+]] = msamp.all_reduce max %{{.+}} : tensor<f32>
// O1: %[[Q1:.+]], %[[QS1:.+]] = msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} : tensor<64x32xf8E4M3FN>
// O1: %[[A2:.+]] = msamp.all_reduce max %{{.+}} : tensor<f32>
// O1: %[[Q2:.+]], %[[QS2:.+]] = msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} : tensor<16x64xf8E4M3FN>
// O1: %[[D1:.+]] = msamp.dequantize %[[Q1]], %[[QS1]] : tensor<64x32xf8E4M3FN> to tensor<64x32xf32>
// O1-NEXT: %[[S1:.+]] = linalg.generic {{.*}} ins(%[[D1]] : tensor<64x32xf32>) outs(%{{.+}} : tensor<f64>)
// O1: %[[D2:.+]] = msamp.dequantize %[[Q2]], %[[QS2]] : tensor<16x64xf8E4M3FN> to tensor<16x64xf32>
// O1-NEXT: %[[S2:.+]] = linalg.generic {{.*}} ins(%[[D2]] : tensor<16x64xf32>) outs(%[[S1]] : tensor<f64>)
// A finite amax leaves the sum alone; a non-finite one (+Inf, NaN) is added.
// O1: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// O1-NEXT: %[[S3:.+]] = linalg.generic {indexing_maps = [#[[SCALAR:map[0-9]*]], #[[SCALAR]]], iterator_types = []} ins(%[[A1]] : tensor<f32>) outs(%[[S2]] : tensor<f64>)
// O1-NEXT: ^bb0(%[[AV:.+]]: f32, %[[ACC:.+]]: f64):
// O1-NEXT: %[[ABS:.+]] = math.absf %[[AV]] : f32
// O1-NEXT: %[[FIN:.+]] = arith.cmpf olt, %[[ABS]], %[[INF]] : f32
// O1-NEXT: %[[WIDE:.+]] = arith.extf %[[ABS]] : f32 to f64
// O1-NEXT: %[[BAD:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// O1-NEXT: %[[R:.+]] = arith.select %[[FIN]], %[[ACC]], %[[BAD]] : f64
// O1-NEXT: linalg.yield %[[R]] : f64
// O1: %[[S4:.+]] = linalg.generic {{.*}} ins(%[[A2]] : tensor<f32>) outs(%[[S3]] : tensor<f64>)
// O1: %[[STATS:.+]]:3 = linalg.generic {{.*}} ins(%[[S4]], %[[MAX]] : tensor<f64>, tensor<f32>)
// O1: %[[QS1C:.+]] = arith.mulf %[[QS1]], %[[STATS]]#1 : tensor<f32>
// O1-NEXT: %[[QS2C:.+]] = arith.mulf %[[QS2]], %[[STATS]]#1 : tensor<f32>
// O1: msamp.adam_update param %{{.+}} scale %{{.+}} : tensor<64x32xf16>, grad %[[Q1]] scale_inv %[[QS1C]] : tensor<64x32xf8E4M3FN>,
// O1-NEXT: msamp.adam_update param %{{.+}} scale %{{.+}} : tensor<16x64xf16>, grad %[[Q2]] scale_inv %[[QS2C]] : tensor<16x64xf8E4M3FN>,
// O1-NEXT: return {{.*}}, %[[STATS]]#0, %[[STATS]]#2 :

// MANIFEST: "inputs": [
// MANIFEST: {"name":"max_grad_norm","role":"hyperparam","shape":[],"dtype":"f32","index":20}
// MANIFEST: "outputs": [
// MANIFEST: {"name":"grad_norm","role":"metric","shape":[],"dtype":"f32","index":18},
// MANIFEST-NEXT: {"name":"nonfinite","role":"metric","shape":[],"dtype":"f32","index":19}
// MANIFEST-NEXT: ]

// Synthesis interleaves each gradient's all-reduce with its update. The
// updates move after the clipping (in order); the collectives stay where
// they are. SGD with momentum reads the clipped gradient too; a gradient
// read by two updates is clipped once.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[G1:.+]] = msamp.all_reduce mean %{{.+}} : tensor<4xf32>
// CHECK-NEXT: %[[G2:.+]] = msamp.all_reduce mean %{{.+}} : tensor<8xf32>
// CHECK: %[[STATS:.+]]:3 = linalg.generic
// CHECK: %[[G1C:.+]] = linalg.generic {{.*}} ins(%[[G1]], %[[STATS]]#1 : tensor<4xf32>, tensor<f32>)
// CHECK: %[[G2C:.+]] = linalg.generic {{.*}} ins(%[[G2]], %[[STATS]]#1 : tensor<8xf32>, tensor<f32>)
// CHECK-NOT: linalg.generic
// CHECK: msamp.sgd_update param %{{.+}} : tensor<4xf32>, grad %[[G1C]] : tensor<4xf32>, momentum_buffer
// CHECK-NEXT: msamp.sgd_update param %{{.+}} : tensor<8xf32>, grad %[[G2C]] : tensor<8xf32>, momentum_buffer
// CHECK-NEXT: msamp.sgd_update param %{{.+}} : tensor<8xf32>, grad %[[G2C]] : tensor<8xf32>, momentum_buffer
// CHECK: return
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
    %u: tensor<8xf32> {msamp.role = "param", msamp.name = "u", msamp.init = "zeros"},
    %v: tensor<8xf32> {msamp.role = "param", msamp.name = "v", msamp.init = "zeros"},
    %wb: tensor<4xf32> {msamp.role = "opt_state", msamp.name = "w.momentum_buffer", msamp.init = "zeros"},
    %ub: tensor<8xf32> {msamp.role = "opt_state", msamp.name = "u.momentum_buffer", msamp.init = "zeros"},
    %vb: tensor<8xf32> {msamp.role = "opt_state", msamp.name = "v.momentum_buffer", msamp.init = "zeros"},
    %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
    %y: tensor<8xf32> {msamp.role = "input", msamp.name = "y"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64},
        tensor<8xf32> {msamp.role = "param", msamp.name = "u", msamp.updates = 1 : i64},
        tensor<8xf32> {msamp.role = "param", msamp.name = "v", msamp.updates = 2 : i64},
        tensor<4xf32> {msamp.role = "opt_state", msamp.name = "w.momentum_buffer", msamp.updates = 3 : i64},
        tensor<8xf32> {msamp.role = "opt_state", msamp.name = "u.momentum_buffer", msamp.updates = 4 : i64},
        tensor<8xf32> {msamp.role = "opt_state", msamp.name = "v.momentum_buffer", msamp.updates = 5 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %one = arith.constant dense<1> : tensor<i64>
  %t = arith.addi %step, %one : tensor<i64>
  %g1 = msamp.all_reduce mean %x : tensor<4xf32>
  %w1, %wb1 = msamp.sgd_update param %w : tensor<4xf32>, grad %g1 : tensor<4xf32>,
      momentum_buffer %wb : tensor<4xf32>, lr %lr, step %t {momentum = 0.9 : f64, weight_decay = 0.0 : f64}
  %g2 = msamp.all_reduce mean %y : tensor<8xf32>
  %u1, %ub1 = msamp.sgd_update param %u : tensor<8xf32>, grad %g2 : tensor<8xf32>,
      momentum_buffer %ub : tensor<8xf32>, lr %lr, step %t {momentum = 0.9 : f64, weight_decay = 0.0 : f64}
  %v1, %vb1 = msamp.sgd_update param %v : tensor<8xf32>, grad %g2 : tensor<8xf32>,
      momentum_buffer %vb : tensor<8xf32>, lr %lr, step %t {momentum = 0.9 : f64, weight_decay = 0.0 : f64}
  %loss = msamp.amax %x : tensor<4xf32>
  return %loss, %w1, %u1, %v1, %wb1, %ub1, %vb1
      : tensor<f32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// An FP8 gradient without a recorded amax (not the form of
// --msamp-fp8-weight-gradients) is still dequantized and clipped; a remark
// says that a saturated overflow would go unnoticed.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[D:.+]] = msamp.dequantize %[[Q:[^,]+]], %[[QS:[^ ]+]] : tensor<4xf8E4M3FN> to tensor<4xf32>
// CHECK: %[[STATS:.+]]:3 = linalg.generic
// CHECK: %[[QSC:.+]] = arith.mulf %[[QS]], %[[STATS]]#1 : tensor<f32>
// CHECK: msamp.sgd_update param %{{.+}} : tensor<4xf32>, grad %[[Q]] scale_inv %[[QSC]] : tensor<4xf8E4M3FN>
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %q: tensor<4xf8E4M3FN> {msamp.role = "input", msamp.name = "q"},
    %qs: tensor<f32> {msamp.role = "input", msamp.name = "qs"},
    %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  // expected-remark@+1 {{[Missed] grad-overflow-undetected | Category:msamp:grad-stats | Reason="an overflow saturated by that cast cannot be detected; only NaN and Inf in its bytes are", Remark="no amax recorded before the cast of the f8E4M3FN gradient of 'w'"}}
  %w1 = msamp.sgd_update param %w : tensor<4xf32>, grad %q scale_inv %qs : tensor<4xf8E4M3FN>,
      lr %lr, step %step {momentum = 0.0 : f64, weight_decay = 0.0 : f64}
  return %lr, %w1 : tensor<f32>, tensor<4xf32>
}

// -----

// A step without updates (nothing to clip) still gets the argument and the
// metrics, so that every compiled step has the same interface: the norm of
// no gradient is 0.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[MAX:[^:]+]]: tensor<f32> {msamp.name = "max_grad_norm", msamp.role = "hyperparam"})
// CHECK-SAME: -> (tensor<f32> {msamp.role = "loss"}, tensor<f32> {msamp.name = "grad_norm", msamp.role = "metric"}, tensor<f32> {msamp.name = "nonfinite", msamp.role = "metric"})
// CHECK: %[[ZERO:.+]] = linalg.fill
// CHECK: %[[STATS:.+]]:3 = linalg.generic {{.*}} ins(%[[ZERO]], %[[MAX]] : tensor<f64>, tensor<f32>)
// CHECK: return %{{.+}}, %[[STATS]]#0, %[[STATS]]#2 : tensor<f32>, tensor<f32>, tensor<f32>
func.func @train_step(
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %loss = msamp.amax %x : tensor<4xf32>
  return %loss : tensor<f32>
}
