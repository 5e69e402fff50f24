// --msamp-verify-train-step accepts the hand-written train steps of every
// level (docs/TrainStep.md 2) and never changes the IR.
// RUN: msamp-opt %S/Inputs/train-step-o0.mlir -o %t.o0.ref
// RUN: msamp-opt %S/Inputs/train-step-o0.mlir --msamp-verify-train-step -o %t.o0
// RUN: diff %t.o0.ref %t.o0
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir -o %t.o1.ref
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-verify-train-step -o %t.o1
// RUN: diff %t.o1.ref %t.o1
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir -o %t.o2.ref
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir --msamp-verify-train-step -o %t.o2
// RUN: diff %t.o2.ref %t.o2
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir -o %t.sgd.ref
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir --msamp-verify-train-step -o %t.sgd
// RUN: diff %t.sgd.ref %t.sgd
//
// The cases below: what may legitimately touch FP8 and scaled FP16 values.
// RUN: msamp-opt %s -split-input-file --msamp-verify-train-step | FileCheck %s

// FP8 values may be reshaped, transposed, sliced and re-inserted (pure data
// movement: the scale still applies) before an msamp op reads them.
// CHECK-LABEL: func.func @train_step
// CHECK: linalg.transpose
// CHECK: msamp.gemm
func.func @train_step(
    %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
    %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.fprop.input.scale", msamp.init = "ones"})
    -> (tensor<f32> {msamp.role = "loss", msamp.name = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  %c = tensor.collapse_shape %q [[0, 1]] : tensor<4x8xf8E4M3FN> into tensor<32xf8E4M3FN>
  %e = tensor.expand_shape %c [[0, 1]] output_shape [8, 4] : tensor<32xf8E4M3FN> into tensor<8x4xf8E4M3FN>
  %t0 = tensor.empty() : tensor<4x8xf8E4M3FN>
  %t = linalg.transpose ins(%e : tensor<8x4xf8E4M3FN>) outs(%t0 : tensor<4x8xf8E4M3FN>) permutation = [1, 0]
  %sl = tensor.extract_slice %t[0, 0] [2, 8] [1, 1] : tensor<4x8xf8E4M3FN> to tensor<2x8xf8E4M3FN>
  %in = tensor.insert_slice %sl into %t[2, 0] [2, 8] [1, 1] : tensor<2x8xf8E4M3FN> into tensor<4x8xf8E4M3FN>
  %y = msamp.gemm %in, %s, %q, %s {transpose_b} : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN> -> tensor<4x4xf32>
  %a = msamp.amax %y : tensor<4x4xf32>
  return %a : tensor<f32>
}

// -----

// A scaled FP16 weight may be reshaped and must then be dequantized; the
// dequantized f32 value is an ordinary real value. An f16 value without a
// scale (here a plain f16 GEMM output) is ordinary too.
// CHECK-LABEL: func.func @train_step
// CHECK: msamp.dequantize
func.func @train_step(
    %w: tensor<4x8xf16> {msamp.role = "param", msamp.name = "fc1.weight", msamp.init = "normal(0,0.02)"},
    %ws: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.weight.scale", msamp.init = "from_param"})
    -> (tensor<f32> {msamp.role = "loss", msamp.name = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %c = tensor.collapse_shape %w [[0, 1]] : tensor<4x8xf16> into tensor<32xf16>
  %d = msamp.dequantize %c, %ws : tensor<32xf16> to tensor<32xf32>
  %sq = arith.mulf %d, %d : tensor<32xf32>
  %e = tensor.expand_shape %sq [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  %q = msamp.quantize %e, %ws : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  %y = msamp.gemm %q, %ws, %q, %ws {transpose_b} : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN> -> tensor<4x4xf16>
  %yf = arith.extf %y : tensor<4x4xf16> to tensor<4x4xf32>
  %a = msamp.amax %yf : tensor<4x4xf32>
  return %a : tensor<f32>
}

// -----

// Results after the state results may be metrics (--msamp-grad-stats): named
// 0-d f32 values the runtime reads after the step, updating nothing.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<f32> {msamp.name = "grad_norm", msamp.role = "metric"}
// CHECK-SAME: tensor<f32> {msamp.name = "nonfinite", msamp.role = "metric"}
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
    %max: tensor<f32> {msamp.role = "hyperparam", msamp.name = "max_grad_norm"})
    -> (tensor<f32> {msamp.role = "loss", msamp.name = "loss"},
        tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64},
        tensor<f32> {msamp.role = "metric", msamp.name = "grad_norm"},
        tensor<f32> {msamp.role = "metric", msamp.name = "nonfinite"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %max, %w, %max, %max : tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<f32>
}
