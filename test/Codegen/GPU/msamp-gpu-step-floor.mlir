// msamp-gpu-step-floor: the tensor-level bytes behind gpu_cost.json's
// floor_ms. In this step, h = x * w and e = exp(h) are forward values (the
// loss depends on them); only e is also read by an op the loss does not
// depend on (the update), through a reshape that names e's storage, so
// kept_bytes is e's 16 bytes, once. h (read only by the forward), the
// arguments, the empty tensors and the returned loss are not kept.
// RUN: msamp-opt %s --msamp-gpu-step-floor | FileCheck %s

// CHECK: func.func @train_step
// CHECK-SAME: msamp.gpu_step_floor = {input_bytes = 16 : i64, kept_bytes = 16 : i64, state_bytes = 24 : i64}
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
    %step: tensor<i64> {msamp.role = "step", msamp.name = "step"},
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
        tensor<i64> {msamp.role = "step", msamp.name = "step"})
    attributes {msamp.kind = "train_step"} {
  %e4 = tensor.empty() : tensor<4xf32>
  %h = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %e = linalg.exp ins(%h : tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %loss = linalg.reduce ins(%e : tensor<4xf32>) outs(%zero : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  %e22 = tensor.expand_shape %e [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %g = tensor.collapse_shape %e22 [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %w2 = linalg.sub ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  return %loss, %w2, %step : tensor<f32>, tensor<4xf32>, tensor<i64>
}
