// A hand-written O0 train step (docs/TrainStep.md 2) of a two-layer MLP,
// y = (x fc1.weight^T + fc1.bias) fc2.weight^T, with loss 1/4 sum((y - t)^2)
// and AdamW. fc1.weight and fc2.weight are GEMM weights (msamp.gemm_weight,
// as msamp-classify-gemms leaves it); fc1.bias is not. Used by the O1/O2
// pass tests in test/Transforms.
module attributes {msamp.optimizer = {adam_mode = 0 : i64, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, kind = "adamw", lr = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 1.000000e-02 : f64}} {
  func.func @train_step(
      %w1: tensor<8x4xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc1.weight", msamp.role = "param"},
      %b1: tensor<8xf32> {msamp.init = "zeros", msamp.name = "fc1.bias", msamp.role = "param"},
      %w2: tensor<2x8xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc2.weight", msamp.role = "param"},
      %w1m: tensor<8x4xf32> {msamp.init = "zeros", msamp.name = "fc1.weight.exp_avg", msamp.role = "opt_state"},
      %w1v: tensor<8x4xf32> {msamp.init = "zeros", msamp.name = "fc1.weight.exp_avg_sq", msamp.role = "opt_state"},
      %b1m: tensor<8xf32> {msamp.init = "zeros", msamp.name = "fc1.bias.exp_avg", msamp.role = "opt_state"},
      %b1v: tensor<8xf32> {msamp.init = "zeros", msamp.name = "fc1.bias.exp_avg_sq", msamp.role = "opt_state"},
      %w2m: tensor<2x8xf32> {msamp.init = "zeros", msamp.name = "fc2.weight.exp_avg", msamp.role = "opt_state"},
      %w2v: tensor<2x8xf32> {msamp.init = "zeros", msamp.name = "fc2.weight.exp_avg_sq", msamp.role = "opt_state"},
      %step: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"},
      %lr: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"},
      %x: tensor<2x4xf32> {msamp.name = "x", msamp.role = "input"},
      %t: tensor<2x2xf32> {msamp.name = "t", msamp.role = "target"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<8x4xf32> {msamp.name = "fc1.weight", msamp.role = "param", msamp.updates = 0 : i64},
          tensor<8xf32> {msamp.name = "fc1.bias", msamp.role = "param", msamp.updates = 1 : i64},
          tensor<2x8xf32> {msamp.name = "fc2.weight", msamp.role = "param", msamp.updates = 2 : i64},
          tensor<8x4xf32> {msamp.name = "fc1.weight.exp_avg", msamp.role = "opt_state", msamp.updates = 3 : i64},
          tensor<8x4xf32> {msamp.name = "fc1.weight.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 4 : i64},
          tensor<8xf32> {msamp.name = "fc1.bias.exp_avg", msamp.role = "opt_state", msamp.updates = 5 : i64},
          tensor<8xf32> {msamp.name = "fc1.bias.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 6 : i64},
          tensor<2x8xf32> {msamp.name = "fc2.weight.exp_avg", msamp.role = "opt_state", msamp.updates = 7 : i64},
          tensor<2x8xf32> {msamp.name = "fc2.weight.exp_avg_sq", msamp.role = "opt_state", msamp.updates = 8 : i64},
          tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 9 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O0", msamp.optimizer = {adam_mode = 0 : i64, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, kind = "adamw", lr = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 1.000000e-02 : f64}} {
    %zero = arith.constant 0.000000e+00 : f32
    // Forward: h = x fc1.weight^T + fc1.bias (fprop fc1).
    %e48 = tensor.empty() : tensor<4x8xf32>
    %w1t = linalg.transpose ins(%w1 : tensor<8x4xf32>) outs(%e48 : tensor<4x8xf32>) permutation = [1, 0]
    %e28 = tensor.empty() : tensor<2x8xf32>
    %z28 = linalg.fill ins(%zero : f32) outs(%e28 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %h0 = linalg.matmul ins(%x, %w1t : tensor<2x4xf32>, tensor<4x8xf32>) outs(%z28 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %bb = linalg.broadcast ins(%b1 : tensor<8xf32>) outs(%e28 : tensor<2x8xf32>) dimensions = [0]
    %h = arith.addf %h0, %bb : tensor<2x8xf32>
    // y = h fc2.weight^T (fprop fc2).
    %e82 = tensor.empty() : tensor<8x2xf32>
    %w2t = linalg.transpose ins(%w2 : tensor<2x8xf32>) outs(%e82 : tensor<8x2xf32>) permutation = [1, 0]
    %e22 = tensor.empty() : tensor<2x2xf32>
    %z22 = linalg.fill ins(%zero : f32) outs(%e22 : tensor<2x2xf32>) -> tensor<2x2xf32>
    %y = linalg.matmul ins(%h, %w2t : tensor<2x8xf32>, tensor<8x2xf32>) outs(%z22 : tensor<2x2xf32>) -> tensor<2x2xf32>
    // Loss 1/4 sum((y - t)^2); dL/dy = (y - t) / 2.
    %d = arith.subf %y, %t : tensor<2x2xf32>
    %d2 = arith.mulf %d, %d : tensor<2x2xf32>
    %e0 = tensor.empty() : tensor<f32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%d2 : tensor<2x2xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    %quarter = arith.constant dense<2.500000e-01> : tensor<f32>
    %loss = arith.mulf %sum, %quarter : tensor<f32>
    %half = arith.constant dense<5.000000e-01> : tensor<2x2xf32>
    %dy = arith.mulf %d, %half : tensor<2x2xf32>
    // Backward: dgrad fc2 (dh = dy fc2.weight), wgrad fc2 (dy^T h).
    %dh = linalg.matmul ins(%dy, %w2 : tensor<2x2xf32>, tensor<2x8xf32>) outs(%z28 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %dyt = linalg.transpose ins(%dy : tensor<2x2xf32>) outs(%e22 : tensor<2x2xf32>) permutation = [1, 0]
    %g2 = linalg.matmul ins(%dyt, %h : tensor<2x2xf32>, tensor<2x8xf32>) outs(%z28 : tensor<2x8xf32>) -> tensor<2x8xf32>
    // wgrad fc1 (dh^T x) and the bias gradient (column sums of dh).
    %e84 = tensor.empty() : tensor<8x4xf32>
    %z84 = linalg.fill ins(%zero : f32) outs(%e84 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %dht = linalg.transpose ins(%dh : tensor<2x8xf32>) outs(%e82 : tensor<8x2xf32>) permutation = [1, 0]
    %g1 = linalg.matmul ins(%dht, %x : tensor<8x2xf32>, tensor<2x4xf32>) outs(%z84 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e8 = tensor.empty() : tensor<8xf32>
    %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
    %gb = linalg.reduce ins(%dh : tensor<2x8xf32>) outs(%z8 : tensor<8xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    // Synthesized: all-reduce every gradient, step += 1, AdamW per param.
    %g1r = msamp.all_reduce mean %g1 : tensor<8x4xf32>
    %gbr = msamp.all_reduce mean %gb : tensor<8xf32>
    %g2r = msamp.all_reduce mean %g2 : tensor<2x8xf32>
    %one = arith.constant dense<1> : tensor<i64>
    %t1 = arith.addi %step, %one : tensor<i64>
    %nw1, %nw1m, %nw1v = msamp.adam_update param %w1 : tensor<8x4xf32>, grad %g1r : tensor<8x4xf32>, exp_avg %w1m : tensor<8x4xf32>, exp_avg_sq %w1v : tensor<8x4xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
    %nb1, %nb1m, %nb1v = msamp.adam_update param %b1 : tensor<8xf32>, grad %gbr : tensor<8xf32>, exp_avg %b1m : tensor<8xf32>, exp_avg_sq %b1v : tensor<8xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
    %nw2, %nw2m, %nw2v = msamp.adam_update param %w2 : tensor<2x8xf32>, grad %g2r : tensor<2x8xf32>, exp_avg %w2m : tensor<2x8xf32>, exp_avg_sq %w2v : tensor<2x8xf32>, lr %lr, step %t1 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
    return %loss, %nw1, %nb1, %nw2, %nw1m, %nw1v, %nb1m, %nb1v, %nw2m, %nw2v, %t1 : tensor<f32>, tensor<8x4xf32>, tensor<8xf32>, tensor<2x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<i64>
  }
}
