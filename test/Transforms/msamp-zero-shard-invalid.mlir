// --msamp-zero-shard refuses steps it cannot shard, with located errors.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics --msamp-zero-shard="world-size=2 rank=0"

// A gradient that does not come from a msamp.all_reduce mean cannot be
// reduced to its owner.
module {
  func.func @train_step(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
                        %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
                        %t: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
                        %g: tensor<4xf32> {msamp.role = "input", msamp.name = "g"})
      -> (tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    // expected-error @+1 {{--msamp-zero-shard: the gradient of param 'w' is not a msamp.all_reduce mean read by its update alone; O3 reduce-scatters it}}
    %w1 = msamp.sgd_update param %w : tensor<4xf32>, grad %g : tensor<4xf32>, lr %lr, step %t {momentum = 0.0 : f64, weight_decay = 0.0 : f64}
    return %w1 : tensor<4xf32>
  }
}

// -----

// A param without an optimizer update.
module {
  func.func @train_step(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"})
      -> tensor<4xf32> attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    // expected-error @-2 {{--msamp-zero-shard: param 'w' has no optimizer update; O3 shards updates}}
    return %w : tensor<4xf32>
  }
}
