// A compiled O1 train step written by hand after docs/TrainStep.md 2: the
// model of train-step-o0.mlir (fc1.weight 64x32, fc2.weight 16x64, 3072
// params, all GEMM weights), with FP16 weights + scale, FP8 GEMMs with
// delayed scaling of activations and output gradients (16-step amax
// histories), and FP8 E4M3 weight gradients reduced as FP8 payloads. Adam
// moments stay f32. Read by the verifier, memory-report and manifest tests.

module attributes {msamp.optimizer = {kind = "adamw"}} {
  func.func @train_step(
      %w1: tensor<64x32xf16> {msamp.role = "param", msamp.name = "fc1.weight", msamp.init = "normal(0,0.02)"},
      %w2: tensor<16x64xf16> {msamp.role = "param", msamp.name = "fc2.weight", msamp.init = "normal(0,0.02)"},
      %m1: tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg", msamp.init = "zeros"},
      %v1: tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg_sq", msamp.init = "zeros"},
      %m2: tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg", msamp.init = "zeros"},
      %v2: tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg_sq", msamp.init = "zeros"},
      %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
      %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
      %x: tensor<4x32xf32> {msamp.role = "input", msamp.name = "x"},
      %y: tensor<4x16xf32> {msamp.role = "target", msamp.name = "y"},
      %w1s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.weight.scale", msamp.init = "from_param"},
      %w2s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc2.weight.scale", msamp.init = "from_param"},
      %xs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.fprop.input.scale", msamp.init = "ones"},
      %xh: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc1.fprop.input.amax_history", msamp.init = "zeros"},
      %hs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc2.fprop.input.scale", msamp.init = "ones"},
      %hh: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc2.fprop.input.amax_history", msamp.init = "zeros"},
      %dps: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc2.dgrad.grad_output.scale", msamp.init = "ones"},
      %dph: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc2.dgrad.grad_output.amax_history", msamp.init = "zeros"},
      %dhs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.wgrad.grad_output.scale", msamp.init = "ones"},
      %dhh: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc1.wgrad.grad_output.amax_history", msamp.init = "zeros"})
      -> (tensor<f32> {msamp.role = "loss", msamp.name = "loss"},
          tensor<64x32xf16> {msamp.role = "param", msamp.name = "fc1.weight", msamp.updates = 0 : i64},
          tensor<16x64xf16> {msamp.role = "param", msamp.name = "fc2.weight", msamp.updates = 1 : i64},
          tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg", msamp.updates = 2 : i64},
          tensor<64x32xf32> {msamp.role = "opt_state", msamp.name = "fc1.weight.exp_avg_sq", msamp.updates = 3 : i64},
          tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg", msamp.updates = 4 : i64},
          tensor<16x64xf32> {msamp.role = "opt_state", msamp.name = "fc2.weight.exp_avg_sq", msamp.updates = 5 : i64},
          tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.updates = 6 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.weight.scale", msamp.updates = 10 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc2.weight.scale", msamp.updates = 11 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.fprop.input.scale", msamp.updates = 12 : i64},
          tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc1.fprop.input.amax_history", msamp.updates = 13 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc2.fprop.input.scale", msamp.updates = 14 : i64},
          tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc2.fprop.input.amax_history", msamp.updates = 15 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc2.dgrad.grad_output.scale", msamp.updates = 16 : i64},
          tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc2.dgrad.grad_output.amax_history", msamp.updates = 17 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "fc1.wgrad.grad_output.scale", msamp.updates = 18 : i64},
          tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "fc1.wgrad.grad_output.amax_history", msamp.updates = 19 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O1",
                  msamp.optimizer = {kind = "adamw", lr = 1.0e-03 : f64, beta1 = 0.9 : f64,
                                     beta2 = 0.999 : f64, eps = 1.0e-08 : f64,
                                     weight_decay = 1.0e-02 : f64, momentum = 0.0 : f64,
                                     nesterov = false, adam_mode = 0 : i64},
                  msamp.recipe = {fp8_format = "hybrid", scaling = "delayed", scale_kind = "pow2",
                                  amax_history_len = 16 : i64, amax_compute_algo = "max", margin = 0 : i64}} {
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant dense<1.000000e+00> : tensor<f32>
    // FP16 weights: every use reads the dequantized f32 value.
    %w1inv = arith.divf %one, %w1s : tensor<f32>
    %w1f = msamp.dequantize %w1, %w1inv : tensor<64x32xf16> to tensor<64x32xf32>
    %w2inv = arith.divf %one, %w2s : tensor<f32>
    %w2f = msamp.dequantize %w2, %w2inv : tensor<16x64xf16> to tensor<16x64xf32>

    // fc1 fprop h = x w1^T: x delayed-scaled, w1 just in time, both E4M3.
    %xa = msamp.amax %x : tensor<4x32xf32>
    %xh1 = msamp.update_amax_history %xh, %xa : tensor<16xf32>
    %xs1 = msamp.compute_scale pow2 max %xh1, %xs for f8E4M3FN : tensor<16xf32>
    %xq = msamp.quantize %x, %xs : tensor<4x32xf32> to tensor<4x32xf8E4M3FN>
    %xsi = arith.divf %one, %xs : tensor<f32>
    %w1a = msamp.amax %w1f : tensor<64x32xf32>
    %w1h = tensor.expand_shape %w1a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %w1qs = msamp.compute_scale pow2 most_recent %w1h, %one for f8E4M3FN : tensor<1xf32>
    %w1q = msamp.quantize %w1f, %w1qs : tensor<64x32xf32> to tensor<64x32xf8E4M3FN>
    %w1qsi = arith.divf %one, %w1qs : tensor<f32>
    %h = msamp.gemm %xq, %xsi, %w1q, %w1qsi {transpose_b, fast_accum}
        : tensor<4x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<4x64xf32>

    // fc2 fprop p = h w2^T.
    %ha = msamp.amax %h : tensor<4x64xf32>
    %hh1 = msamp.update_amax_history %hh, %ha : tensor<16xf32>
    %hs1 = msamp.compute_scale pow2 max %hh1, %hs for f8E4M3FN : tensor<16xf32>
    %hq = msamp.quantize %h, %hs : tensor<4x64xf32> to tensor<4x64xf8E4M3FN>
    %hsi = arith.divf %one, %hs : tensor<f32>
    %w2a = msamp.amax %w2f : tensor<16x64xf32>
    %w2h = tensor.expand_shape %w2a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %w2qs = msamp.compute_scale pow2 most_recent %w2h, %one for f8E4M3FN : tensor<1xf32>
    %w2q = msamp.quantize %w2f, %w2qs : tensor<16x64xf32> to tensor<16x64xf8E4M3FN>
    %w2qsi = arith.divf %one, %w2qs : tensor<f32>
    %p = msamp.gemm %hq, %hsi, %w2q, %w2qsi {transpose_b, fast_accum}
        : tensor<4x64xf8E4M3FN>, tensor<16x64xf8E4M3FN> -> tensor<4x16xf32>

    // loss = sum((p - y)^2) in f32.
    %dp = arith.subf %p, %y : tensor<4x16xf32>
    %sq = arith.mulf %dp, %dp : tensor<4x16xf32>
    %l0 = tensor.empty() : tensor<f32>
    %lz = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.reduce ins(%sq : tensor<4x16xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }

    // Output gradient dp, E5M2, delayed; serves fc2's wgrad and dgrad.
    %dpa = msamp.amax %dp : tensor<4x16xf32>
    %dph1 = msamp.update_amax_history %dph, %dpa : tensor<16xf32>
    %dps1 = msamp.compute_scale pow2 max %dph1, %dps for f8E5M2 : tensor<16xf32>
    %dpq = msamp.quantize %dp, %dps : tensor<4x16xf32> to tensor<4x16xf8E5M2>
    %dpsi = arith.divf %one, %dps : tensor<f32>
    // fc2 wgrad g2 = dp^T h and dgrad dh = dp w2.
    %g2 = msamp.gemm %dpq, %dpsi, %hq, %hsi {transpose_a}
        : tensor<4x16xf8E5M2>, tensor<4x64xf8E4M3FN> -> tensor<16x64xf32>
    %dh = msamp.gemm %dpq, %dpsi, %w2q, %w2qsi
        : tensor<4x16xf8E5M2>, tensor<16x64xf8E4M3FN> -> tensor<4x64xf32>
    // fc1 wgrad g1 = dh^T x.
    %dha = msamp.amax %dh : tensor<4x64xf32>
    %dhh1 = msamp.update_amax_history %dhh, %dha : tensor<16xf32>
    %dhs1 = msamp.compute_scale pow2 max %dhh1, %dhs for f8E5M2 : tensor<16xf32>
    %dhq = msamp.quantize %dh, %dhs : tensor<4x64xf32> to tensor<4x64xf8E5M2>
    %dhsi = arith.divf %one, %dhs : tensor<f32>
    %g1 = msamp.gemm %dhq, %dhsi, %xq, %xsi {transpose_a}
        : tensor<4x64xf8E5M2>, tensor<4x32xf8E4M3FN> -> tensor<64x32xf32>

    // FP8 E4M3 weight gradients with a just-in-time scale from the global
    // amax, reduced as FP8 payloads.
    %g1a = msamp.amax %g1 : tensor<64x32xf32>
    %g1ga = msamp.all_reduce max %g1a : tensor<f32>
    %g1h = tensor.expand_shape %g1ga [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %g1s = msamp.compute_scale pow2 most_recent %g1h, %one for f8E4M3FN : tensor<1xf32>
    %g1q = msamp.quantize %g1, %g1s : tensor<64x32xf32> to tensor<64x32xf8E4M3FN>
    %g1si = arith.divf %one, %g1s : tensor<f32>
    %g1r, %g1rs = msamp.all_reduce mean %g1q scale_inv %g1si : tensor<64x32xf8E4M3FN>
    %g2a = msamp.amax %g2 : tensor<16x64xf32>
    %g2ga = msamp.all_reduce max %g2a : tensor<f32>
    %g2h = tensor.expand_shape %g2ga [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %g2s = msamp.compute_scale pow2 most_recent %g2h, %one for f8E4M3FN : tensor<1xf32>
    %g2q = msamp.quantize %g2, %g2s : tensor<16x64xf32> to tensor<16x64xf8E4M3FN>
    %g2si = arith.divf %one, %g2s : tensor<f32>
    %g2r, %g2rs = msamp.all_reduce mean %g2q scale_inv %g2si : tensor<16x64xf8E4M3FN>

    %i1 = arith.constant dense<1> : tensor<i64>
    %t = arith.addi %step, %i1 : tensor<i64>
    %w1n, %w1sn, %m1n, %v1n = msamp.adam_update param %w1 scale %w1s : tensor<64x32xf16>,
        grad %g1r scale_inv %g1rs : tensor<64x32xf8E4M3FN>, exp_avg %m1 : tensor<64x32xf32>,
        exp_avg_sq %v1 : tensor<64x32xf32>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled}
    %w2n, %w2sn, %m2n, %v2n = msamp.adam_update param %w2 scale %w2s : tensor<16x64xf16>,
        grad %g2r scale_inv %g2rs : tensor<16x64xf8E4M3FN>, exp_avg %m2 : tensor<16x64xf32>,
        exp_avg_sq %v2 : tensor<16x64xf32>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 1.0e-02 : f64, decoupled}
    return %loss, %w1n, %w2n, %m1n, %v1n, %m2n, %v2n, %t, %w1sn, %w2sn,
           %xs1, %xh1, %hs1, %hh1, %dps1, %dph1, %dhs1, %dhh1
        : tensor<f32>, tensor<64x32xf16>, tensor<16x64xf16>, tensor<64x32xf32>,
          tensor<64x32xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<i64>,
          tensor<f32>, tensor<f32>, tensor<f32>, tensor<16xf32>, tensor<f32>,
          tensor<16xf32>, tensor<f32>, tensor<16xf32>, tensor<f32>, tensor<16xf32>
  }
}
