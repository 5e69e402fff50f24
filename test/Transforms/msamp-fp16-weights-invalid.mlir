// Errors of --msamp-fp16-weights.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics --msamp-fp16-weights

// An invalid exclude regex is an error that names the regex.
// RUN: not msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights='exclude=fc(1' 2>&1 | FileCheck %s --check-prefix=REGEX
// REGEX: error: invalid exclude regex 'fc(1' for --msamp-fp16-weights: parentheses not balanced

// No train step: the pass needs the output of synthesis.
// expected-error@+1 {{msamp-fp16-weights needs a compiled train step (a function with msamp.kind = "train_step"); run --msamp-synthesize-train-step first}}
module {
  func.func @forward_backward(%w: tensor<4x3xf32> {msamp.gemm_weight, msamp.name = "fc.weight", msamp.role = "param"}) -> tensor<4x3xf32> attributes {msamp.kind = "forward_backward"} {
    return %w : tensor<4x3xf32>
  }
}

// -----

// A GEMM weight that no optimizer op updates cannot be given a scale that
// the step keeps up to date.
func.func @train_step(
    // expected-error@+1 {{GEMM weight 'fc.weight' is not the param of any msamp.adam_update or msamp.sgd_update; cannot store it as scaled FP16}}
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %x: tensor<2x3xf32> {msamp.name = "x", msamp.role = "input"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %zero = arith.constant 0.000000e+00 : f32
  %e24 = tensor.empty() : tensor<2x4xf32>
  %z24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%z24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%y : tensor<2x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
  return %loss : tensor<f32>
}

// -----

// The step must return the optimizer's new weight as the weight's update:
// here it returns something else, which could not become f16.
func.func @train_step(
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %g: tensor<4x3xf32> {msamp.name = "g", msamp.role = "input"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %loss = arith.constant dense<0.000000e+00> : tensor<f32>
  %gr = msamp.all_reduce mean %g : tensor<4x3xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  // expected-error@+1 {{the result updating GEMM weight 'fc.weight' must be the new param of its optimizer op}}
  %nw = msamp.sgd_update param %w : tensor<4x3xf32>, grad %gr : tensor<4x3xf32>, lr %lr, step %t1
  return %loss, %gr : tensor<f32>, tensor<4x3xf32>
}

// -----

// A weight updated twice has no single new value and scale.
func.func @train_step(
    %w: tensor<4x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %g: tensor<4x3xf32> {msamp.name = "g", msamp.role = "input"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %loss = arith.constant dense<0.000000e+00> : tensor<f32>
  %gr = msamp.all_reduce mean %g : tensor<4x3xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  // expected-note@+1 {{the other update is here}}
  %nw = msamp.sgd_update param %w : tensor<4x3xf32>, grad %gr : tensor<4x3xf32>, lr %lr, step %t1
  // expected-error@+1 {{GEMM weight 'fc.weight' is updated by more than one optimizer op}}
  %nw2 = msamp.sgd_update param %w : tensor<4x3xf32>, grad %gr : tensor<4x3xf32>, lr %lr, step %t1
  return %loss, %nw : tensor<f32>, tensor<4x3xf32>
}
