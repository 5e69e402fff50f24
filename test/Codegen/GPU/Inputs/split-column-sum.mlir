// One SGD step (lr 1) whose only gradient is the column sum of a [1024, 48]
// input: unittests/CUDA/CompiledStepTest.cpp SplitColumnSumMatchesCpuExactly.
module attributes {msamp.optimizer = {kind = "sgd", lr = 1.0 : f64}} {
  func.func @fwd_bwd(%w: tensor<48xf32> {msamp.role = "param", msamp.name = "w"},
                     %x: tensor<1024x48xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<48xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<48xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<48xf32>) -> tensor<48xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(r, p) -> (r, p)>, affine_map<(r, p) -> (p)>],
                         iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<1024x48xf32>) outs(%f : tensor<48xf32>) {
        ^bb0(%a: f32, %acc: f32):
          %s = arith.addf %a, %acc : f32
          linalg.yield %s : f32
    } -> tensor<48xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(p) -> (p)>, affine_map<(p) -> (p)>, affine_map<(p) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%w, %y : tensor<48xf32>, tensor<48xf32>) outs(%f0 : tensor<f32>) {
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %t = arith.addf %m, %acc : f32
          linalg.yield %t : f32
    } -> tensor<f32>
    return %l, %y : tensor<f32>, tensor<48xf32>
  }
}
