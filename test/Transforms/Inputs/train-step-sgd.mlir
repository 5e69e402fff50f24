// A compiled O1 train step with SGD + momentum written by hand after
// docs/TrainStep.md 2: one Linear layer (fc.weight 8x4 stored FP16 + scale,
// fc.bias 8 in f32: 40 params), a running-mean buffer and integer labels. The
// GEMM stays in high precision here; only the weight gradient is FP8. Mixes
// element types within categories on purpose (weights f16 + f32, gradients
// f8E4M3FN + f32, other state i64 + f32). Read by the verifier,
// memory-report and manifest tests.

module attributes {msamp.optimizer = {kind = "sgd", momentum = 0.9 : f64}} {
  func.func @train_step(
      %w: tensor<8x4xf16> {msamp.role = "param", msamp.name = "fc.weight", msamp.init = "normal(0,0.02)"},
      %b: tensor<8xf32> {msamp.role = "param", msamp.name = "fc.bias", msamp.init = "zeros"},
      %rm: tensor<8xf32> {msamp.role = "buffer", msamp.name = "norm.running_mean", msamp.init = "zeros"},
      %wmb: tensor<8x4xf32> {msamp.role = "opt_state", msamp.name = "fc.weight.momentum_buffer", msamp.init = "zeros"},
      %bmb: tensor<8xf32> {msamp.role = "opt_state", msamp.name = "fc.bias.momentum_buffer", msamp.init = "zeros"},
      %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
      %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
      %x: tensor<2x4xf32> {msamp.role = "input", msamp.name = "x"},
      %labels: tensor<2xi64> {msamp.role = "target", msamp.name = "labels"},
      %ws: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc.weight.scale", msamp.init = "from_param"})
      -> (tensor<f32> {msamp.role = "loss", msamp.name = "loss"},
          tensor<8x4xf16> {msamp.role = "param", msamp.name = "fc.weight", msamp.updates = 0 : i64},
          tensor<8xf32> {msamp.role = "param", msamp.name = "fc.bias", msamp.updates = 1 : i64},
          tensor<8xf32> {msamp.role = "buffer", msamp.name = "norm.running_mean", msamp.updates = 2 : i64},
          tensor<8x4xf32> {msamp.role = "opt_state", msamp.name = "fc.weight.momentum_buffer", msamp.updates = 3 : i64},
          tensor<8xf32> {msamp.role = "opt_state", msamp.name = "fc.bias.momentum_buffer", msamp.updates = 4 : i64},
          tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.updates = 5 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc.weight.scale", msamp.updates = 9 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O1",
                  msamp.optimizer = {kind = "sgd", lr = 1.0e-03 : f64, beta1 = 0.9 : f64,
                                     beta2 = 0.999 : f64, eps = 1.0e-08 : f64,
                                     weight_decay = 0.0 : f64, momentum = 0.9 : f64,
                                     nesterov = false, adam_mode = 0 : i64}} {
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant dense<1.000000e+00> : tensor<f32>
    %winv = arith.divf %one, %ws : tensor<f32>
    %wf = msamp.dequantize %w, %winv : tensor<8x4xf16> to tensor<8x4xf32>
    // y = x w^T + b in f32; loss = sum(y) (the labels are not used).
    %e0 = tensor.empty() : tensor<4x8xf32>
    %wt = linalg.transpose ins(%wf : tensor<8x4xf32>) outs(%e0 : tensor<4x8xf32>) permutation = [1, 0]
    %e1 = tensor.empty() : tensor<2x8xf32>
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %y0 = linalg.matmul ins(%x, %wt : tensor<2x4xf32>, tensor<4x8xf32>) outs(%z1 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e1 : tensor<2x8xf32>) dimensions = [0]
    %y = arith.addf %y0, %bb : tensor<2x8xf32>
    %l0 = tensor.empty() : tensor<f32>
    %lz = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.reduce ins(%y : tensor<2x8xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    %rm1 = arith.addf %rm, %b : tensor<8xf32>
    // dloss/dy = 1: g_w = 1^T x, g_b = 2.
    %ones = arith.constant dense<1.000000e+00> : tensor<8x2xf32>
    %e2 = tensor.empty() : tensor<8x4xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %gw = linalg.matmul ins(%ones, %x : tensor<8x2xf32>, tensor<2x4xf32>) outs(%z2 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %gb = arith.constant dense<2.000000e+00> : tensor<8xf32>
    // FP8 weight gradient of the FP16 weight; the bias gradient stays f32.
    %gwa = msamp.amax %gw : tensor<8x4xf32>
    %gwga = msamp.all_reduce max %gwa : tensor<f32>
    %gwh = tensor.expand_shape %gwga [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %gws = msamp.compute_scale pow2 most_recent %gwh, %one for f8E4M3FN : tensor<1xf32>
    %gwq = msamp.quantize %gw, %gws : tensor<8x4xf32> to tensor<8x4xf8E4M3FN>
    %gwsi = arith.divf %one, %gws : tensor<f32>
    %gwr, %gwrs = msamp.all_reduce mean %gwq scale_inv %gwsi : tensor<8x4xf8E4M3FN>
    %gbr = msamp.all_reduce mean %gb : tensor<8xf32>
    %i1 = arith.constant dense<1> : tensor<i64>
    %t = arith.addi %step, %i1 : tensor<i64>
    %wn, %wsn, %wmbn = msamp.sgd_update param %w scale %ws : tensor<8x4xf16>,
        grad %gwr scale_inv %gwrs : tensor<8x4xf8E4M3FN>,
        momentum_buffer %wmb : tensor<8x4xf32>, lr %lr, step %t {momentum = 0.9 : f64}
    %bn, %bmbn = msamp.sgd_update param %b : tensor<8xf32>, grad %gbr : tensor<8xf32>,
        momentum_buffer %bmb : tensor<8xf32>, lr %lr, step %t {momentum = 0.9 : f64}
    return %loss, %wn, %bn, %rm1, %wmbn, %bmbn, %t, %wsn
        : tensor<f32>, tensor<8x4xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8x4xf32>,
          tensor<8xf32>, tensor<i64>, tensor<f32>
  }
}
