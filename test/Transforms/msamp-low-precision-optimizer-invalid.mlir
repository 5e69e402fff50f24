// Errors of --msamp-low-precision-optimizer. On an error the step is left
// as it was: every update is checked before any is changed.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics --msamp-low-precision-optimizer

// No train step: the pass needs the output of synthesis.
// expected-error@+1 {{msamp-low-precision-optimizer needs a compiled train step (a function with msamp.kind = "train_step"); run --msamp-synthesize-train-step first}}
module {
  func.func @forward_backward(%w: tensor<4xf32> {msamp.name = "w", msamp.role = "param"}) -> tensor<4xf32> attributes {msamp.kind = "forward_backward"} {
    return %w : tensor<4xf32>
  }
}

// -----

// Adam moments are persistent state: a first moment computed in the body
// (here zeros, as if the state were reset every step) cannot be stored in
// low precision.
func.func @train_step(
    %w: tensor<4xf32> {msamp.init = "zeros", msamp.name = "w", msamp.role = "param"},
    %v: tensor<4xf32> {msamp.init = "zeros", msamp.name = "w.exp_avg_sq", msamp.role = "opt_state"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %g: tensor<4xf32> {msamp.name = "g", msamp.role = "input"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.name = "w", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4xf32> {msamp.name = "w.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 1 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %loss = arith.constant dense<0.000000e+00> : tensor<f32>
  %m = arith.constant dense<0.000000e+00> : tensor<4xf32>
  %gr = msamp.all_reduce mean %g : tensor<4xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  // expected-error@+1 {{'exp_avg' must be an argument of @train_step (Adam moments are persistent state) to be stored in low precision}}
  %nw, %nm, %nv = msamp.adam_update param %w : tensor<4xf32>, grad %gr : tensor<4xf32>, exp_avg %m : tensor<4xf32>, exp_avg_sq %v : tensor<4xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64}
  return %loss, %nw, %nv : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// The step must return the update's new moment as the moment's update (here
// it returns the old one), or the result would keep the f32 type while the
// argument becomes f16.
func.func @train_step(
    %w: tensor<4xf32> {msamp.init = "zeros", msamp.name = "w", msamp.role = "param"},
    %m: tensor<4xf32> {msamp.init = "zeros", msamp.name = "w.exp_avg", msamp.role = "opt_state"},
    %v: tensor<4xf32> {msamp.init = "zeros", msamp.name = "w.exp_avg_sq", msamp.role = "opt_state"},
    %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
    %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
    %g: tensor<4xf32> {msamp.name = "g", msamp.role = "input"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.name = "w", msamp.role = "param", msamp.updates = 0 : i64},
        tensor<4xf32> {msamp.name = "w.exp_avg", msamp.role = "opt_state", msamp.updates = 1 : i64},
        tensor<4xf32> {msamp.name = "w.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 2 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %loss = arith.constant dense<0.000000e+00> : tensor<f32>
  %gr = msamp.all_reduce mean %g : tensor<4xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %t1 = arith.addi %step, %one : tensor<i64>
  // expected-error@+1 {{the result updating 'w.exp_avg_sq' must be the new 'exp_avg_sq' of its msamp.adam_update}}
  %nw, %nm, %nv = msamp.adam_update param %w : tensor<4xf32>, grad %gr : tensor<4xf32>, exp_avg %m : tensor<4xf32>, exp_avg_sq %v : tensor<4xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64}
  return %loss, %nw, %nm, %v : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
