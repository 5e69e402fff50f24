// A fused projection split along its features, as torch-mlir emits GPT-2's
// `c_attn(x).split(n, dim=-1)` (this is its output for a 3 -> 6 Linear whose
// halves q and k are multiplied, tidied): the forward reads q and k as
// tensor.extract_slice views of every row ([4, 3] with row stride 6), the
// backward writes their gradients side by side with tensor.concat, which
// bufferizes into copies into strided views of one [4, 6] buffer.
//   loss = mean((sum(q * k, -1) - y)^2),  q, k = split(x @ w^T + b, 3)
module attributes {msamp.optimizer = {kind = "sgd", lr = 1.0e-01 : f64}} {
  func.func @fwd_bwd(%w: tensor<6x3xf32> {msamp.name = "c_attn.weight", msamp.role = "param"},
                     %b: tensor<6xf32> {msamp.name = "c_attn.bias", msamp.role = "param"},
                     %x: tensor<4x3xf32> {msamp.name = "x", msamp.role = "input"},
                     %y: tensor<4x1xf32> {msamp.name = "y", msamp.role = "target"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<6x3xf32> {msamp.name = "c_attn.weight", msamp.role = "grad"},
          tensor<6xf32> {msamp.name = "c_attn.bias", msamp.role = "grad"})
      attributes {msamp.kind = "forward_backward"} {
    %zero = arith.constant 0.000000e+00 : f32
    %two = arith.constant 2.000000e+00 : f32
    %batch = arith.constant 4.000000e+00 : f32
    %e36 = tensor.empty() : tensor<3x6xf32>
    %wt = linalg.transpose ins(%w : tensor<6x3xf32>) outs(%e36 : tensor<3x6xf32>) permutation = [1, 0]
    %e46 = tensor.empty() : tensor<4x6xf32>
    %f46 = linalg.fill ins(%zero : f32) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
    %xw = linalg.matmul ins(%x, %wt : tensor<4x3xf32>, tensor<3x6xf32>) outs(%f46 : tensor<4x6xf32>) -> tensor<4x6xf32>
    %z = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%b, %xw : tensor<6xf32>, tensor<4x6xf32>) outs(%e46 : tensor<4x6xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.addf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<4x6xf32>
    %q = tensor.extract_slice %z[0, 0] [4, 3] [1, 1] : tensor<4x6xf32> to tensor<4x3xf32>
    %k = tensor.extract_slice %z[0, 3] [4, 3] [1, 1] : tensor<4x6xf32> to tensor<4x3xf32>
    %e43 = tensor.empty() : tensor<4x3xf32>
    %qk = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%q, %k : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e43 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.mulf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<4x3xf32>
    %e41 = tensor.empty() : tensor<4x1xf32>
    %f41 = linalg.fill ins(%zero : f32) outs(%e41 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>], iterator_types = ["parallel", "reduction"]} ins(%qk : tensor<4x3xf32>) outs(%f41 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<4x1xf32>
    %d = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s, %y : tensor<4x1xf32>, tensor<4x1xf32>) outs(%e41 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.subf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<4x1xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %sq = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%d : tensor<4x1xf32>) outs(%f0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %p = arith.mulf %in, %in : f32
      %r = arith.addf %p, %out : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%sq : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.divf %in, %batch : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    // Backward: ds = 2 d / 4 for every row, dq = ds * k, dk = ds * q.
    %ds = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<4x1xf32>) outs(%e43 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = arith.mulf %in, %two : f32
      %r = arith.divf %t, %batch : f32
      linalg.yield %r : f32
    } -> tensor<4x3xf32>
    %dq = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%ds, %k : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e43 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.mulf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<4x3xf32>
    %dk = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%ds, %q : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e43 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.mulf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<4x3xf32>
    %dz = tensor.concat dim(1) %dq, %dk : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
    %e64 = tensor.empty() : tensor<6x4xf32>
    %dzt = linalg.transpose ins(%dz : tensor<4x6xf32>) outs(%e64 : tensor<6x4xf32>) permutation = [1, 0]
    %e63 = tensor.empty() : tensor<6x3xf32>
    %f63 = linalg.fill ins(%zero : f32) outs(%e63 : tensor<6x3xf32>) -> tensor<6x3xf32>
    %dw = linalg.matmul ins(%dzt, %x : tensor<6x4xf32>, tensor<4x3xf32>) outs(%f63 : tensor<6x3xf32>) -> tensor<6x3xf32>
    %e6 = tensor.empty() : tensor<6xf32>
    %f6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
    %db = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%dz : tensor<4x6xf32>) outs(%f6 : tensor<6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<6xf32>
    return %loss, %dw, %db : tensor<f32>, tensor<6x3xf32>, tensor<6xf32>
  }
}
