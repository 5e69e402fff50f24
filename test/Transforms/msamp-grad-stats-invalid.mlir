// Errors of --msamp-grad-stats: each names what is wrong and where.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics --msamp-grad-stats

// No train step: the pass needs the output of synthesis.
// expected-error@+1 {{msamp-grad-stats needs a compiled train step (a function with msamp.kind = "train_step"); run --msamp-synthesize-train-step first}}
module {
  func.func @forward_backward(%g: tensor<4xf32> {msamp.name = "w", msamp.role = "param"}) -> tensor<4xf32> attributes {msamp.kind = "forward_backward"} {
    return %g : tensor<4xf32>
  }
}

// -----

// The argument name is taken, by something that is not the hyperparameter.
func.func @train_step(
    // expected-error@+1 {{--msamp-grad-stats: argument 'max_grad_norm' must be the hyperparam tensor<f32> this pass adds; found role "input" and type 'tensor<4xf32>'}}
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "max_grad_norm"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %loss = msamp.amax %x : tensor<4xf32>
  return %loss : tensor<f32>
}

// -----

// Part of the statistics: the step was edited after the pass ran, or another
// tool added one of them.
// expected-error@+1 {{--msamp-grad-stats: the train step has only part of the gradient statistics (argument 'max_grad_norm': present, metric 'grad_norm': absent, metric 'nonfinite': absent); it must have all of them or none}}
func.func @train_step(
    %max: tensor<f32> {msamp.role = "hyperparam", msamp.name = "max_grad_norm"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %max : tensor<f32>
}

// -----

// The update of w takes effect (its result is read) before the gradient of
// u exists: no coefficient that depends on both can be applied to w.
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
    %u: tensor<4xf32> {msamp.role = "param", msamp.name = "u", msamp.init = "zeros"},
    %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64},
        tensor<4xf32> {msamp.role = "param", msamp.name = "u", msamp.updates = 1 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %g1 = msamp.all_reduce mean %x : tensor<4xf32>
  %w1 = msamp.sgd_update param %w : tensor<4xf32>, grad %g1 : tensor<4xf32>,
      lr %lr, step %step {momentum = 0.0 : f64, weight_decay = 0.0 : f64}
  // expected-error@+1 {{--msamp-grad-stats: reads the result of the optimizer update of 'w' before every gradient exists; the clipping coefficient depends on all gradients, so no update may take effect before the last one is computed}}
  %y = arith.mulf %w1, %x : tensor<4xf32>
  // expected-note@+1 {{the last gradient value is here}}
  %g2 = msamp.all_reduce mean %y : tensor<4xf32>
  %u1 = msamp.sgd_update param %u : tensor<4xf32>, grad %g2 : tensor<4xf32>,
      lr %lr, step %step {momentum = 0.0 : f64, weight_decay = 0.0 : f64}
  return %lr, %w1, %u1 : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
