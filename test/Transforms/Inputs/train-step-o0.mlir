// A compiled O0 train step written by hand after docs/TrainStep.md 2: a
// two-layer linear model whose only params are GEMM weights (fc1.weight
// 64x32, fc2.weight 16x64: 3072 params), AdamW, everything f32. The tests of
// the verifier, the memory report and the manifest read it; it is not a test
// itself (lit skips Inputs/).

module attributes {msamp.optimizer = {kind = "adamw"}} {
  func.func @train_step(
      %w1: tensor<64x32xf32> {msamp.role = "param", msamp.name = "fc1.weight", msamp.init = "normal(0,0.02)"},
      %w2: tensor<16x64xf32> {msamp.role = "param", msamp.name = "fc2.weight", msamp.init = "normal(0,0.02)"},
      %m1: tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg", msamp.init = "zeros"},
      %v1: tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg_sq", msamp.init = "zeros"},
      %m2: tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg", msamp.init = "zeros"},
      %v2: tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg_sq", msamp.init = "zeros"},
      %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
      %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
      %x: tensor<4x32xf32> {msamp.role = "input", msamp.name = "x"},
      %y: tensor<4x16xf32> {msamp.role = "target", msamp.name = "y"})
      -> (tensor<f32> {msamp.role = "loss", msamp.name = "loss"},
          tensor<64x32xf32> {msamp.role = "param", msamp.name = "fc1.weight", msamp.updates = 0 : i64},
          tensor<16x64xf32> {msamp.role = "param", msamp.name = "fc2.weight", msamp.updates = 1 : i64},
          tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg", msamp.updates = 2 : i64},
          tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg_sq", msamp.updates = 3 : i64},
          tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg", msamp.updates = 4 : i64},
          tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg_sq", msamp.updates = 5 : i64},
          tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.updates = 6 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O0",
                  msamp.optimizer = {kind = "adamw", lr = 1.0e-03 : f64, beta1 = 0.9 : f64,
                                     beta2 = 0.999 : f64, eps = 1.0e-08 : f64,
                                     weight_decay = 1.0e-02 : f64, momentum = 0.0 : f64,
                                     nesterov = false, adam_mode = 0 : i64}} {
    %zero = arith.constant 0.000000e+00 : f32
    // Inlined forward_backward: p = (x w1^T) w2^T, loss = sum((p - y)^2).
    %e0 = tensor.empty() : tensor<32x64xf32>
    %w1t = linalg.transpose ins(%w1 : tensor<64x32xf32>) outs(%e0 : tensor<32x64xf32>) permutation = [1, 0]
    %e1 = tensor.empty() : tensor<4x64xf32>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x64xf32>) -> tensor<4x64xf32>
    %h = linalg.matmul ins(%x, %w1t : tensor<4x32xf32>, tensor<32x64xf32>) outs(%z1 : tensor<4x64xf32>) -> tensor<4x64xf32>
    %e2 = tensor.empty() : tensor<64x16xf32>
    %w2t = linalg.transpose ins(%w2 : tensor<16x64xf32>) outs(%e2 : tensor<64x16xf32>) permutation = [1, 0]
    %e3 = tensor.empty() : tensor<4x16xf32>
    %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %p = linalg.matmul ins(%h, %w2t : tensor<4x64xf32>, tensor<64x16xf32>) outs(%z3 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %dp = arith.subf %p, %y : tensor<4x16xf32>
    %sq = arith.mulf %dp, %dp : tensor<4x16xf32>
    %l0 = tensor.empty() : tensor<f32>
    %lz = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.reduce ins(%sq : tensor<4x16xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    // Backward (the factor 2 of the loss is left out): wgrad and dgrad GEMMs.
    %e4 = tensor.empty() : tensor<16x4xf32>
    %dpt = linalg.transpose ins(%dp : tensor<4x16xf32>) outs(%e4 : tensor<16x4xf32>) permutation = [1, 0]
    %e5 = tensor.empty() : tensor<16x64xf32>
    %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %g2 = linalg.matmul ins(%dpt, %h : tensor<16x4xf32>, tensor<4x64xf32>) outs(%z5 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %dh = linalg.matmul ins(%dp, %w2 : tensor<4x16xf32>, tensor<16x64xf32>) outs(%z1 : tensor<4x64xf32>) -> tensor<4x64xf32>
    %e6 = tensor.empty() : tensor<64x4xf32>
    %dht = linalg.transpose ins(%dh : tensor<4x64xf32>) outs(%e6 : tensor<64x4xf32>) permutation = [1, 0]
    %e7 = tensor.empty() : tensor<64x32xf32>
    %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<64x32xf32>) -> tensor<64x32xf32>
    %g1 = linalg.matmul ins(%dht, %x : tensor<64x4xf32>, tensor<4x32xf32>) outs(%z7 : tensor<64x32xf32>) -> tensor<64x32xf32>
    // Synthesized: gradient all-reduce, step increment, AdamW.
    %g1r = msamp.all_reduce mean %g1 : tensor<64x32xf32>
    %g2r = msamp.all_reduce mean %g2 : tensor<16x64xf32>
    %one = arith.constant dense<1> : tensor<i64>
    %t = arith.addi %step, %one : tensor<i64>
    %w1n, %m1n, %v1n = msamp.adam_update param %w1 : tensor<64x32xf32>,
        grad %g1r : tensor<64x32xf32>, exp_avg %m1 : tensor<64x32xf32>,
        exp_avg_sq %v1 : tensor<64x32xf32>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled}
    %w2n, %m2n, %v2n = msamp.adam_update param %w2 : tensor<16x64xf32>,
        grad %g2r : tensor<16x64xf32>, exp_avg %m2 : tensor<16x64xf32>,
        exp_avg_sq %v2 : tensor<16x64xf32>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled}
    return %loss, %w1n, %w2n, %m1n, %v1n, %m2n, %v2n, %t
        : tensor<f32>, tensor<64x32xf32>, tensor<16x64xf32>, tensor<64x32xf32>,
          tensor<64x32xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<i64>
  }
}
