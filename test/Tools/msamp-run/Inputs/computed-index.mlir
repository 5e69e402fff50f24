// A contract graph that computes its index: position = input_ids + 3,
// gathered from a 10-row table (and compared one-hot in the gradient), so
// input ids of 7 and more index out of range inside the step. Used by
// computed-index-checks.test and python/tests/test_bad_steps.py.
module attributes {msamp.optimizer = {kind = "sgd", lr = 0.1 : f64}} {
  func.func @fwd_bwd(
      %emb: tensor<10x4xf32> {msamp.role = "param", msamp.name = "emb.weight"},
      %ids: tensor<2x4xi64> {msamp.role = "input", msamp.name = "input_ids"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<10x4xf32> {msamp.role = "grad", msamp.name = "emb.weight"})
      attributes {msamp.kind = "forward_backward"} {
    %c3 = arith.constant 3 : i64
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %e0 = tensor.empty() : tensor<2x4xi64>
    %pos = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%ids : tensor<2x4xi64>) outs(%e0 : tensor<2x4xi64>) {
      ^bb0(%in: i64, %o: i64):
        %s = arith.addi %in, %c3 : i64
        linalg.yield %s : i64
    } -> tensor<2x4xi64>
    %e1 = tensor.empty() : tensor<2x4x4xf32>
    %x = linalg.generic {
        indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
        iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%pos : tensor<2x4xi64>) outs(%e1 : tensor<2x4x4xf32>) {
      ^bb0(%in: i64, %o: f32):
        %ix = arith.index_cast %in : i64 to index
        %d = linalg.index 2 : index
        %v = tensor.extract %emb[%ix, %d] : tensor<10x4xf32>
        linalg.yield %v : f32
    } -> tensor<2x4x4xf32>
    %e2 = tensor.empty() : tensor<f32>
    %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {
        indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>],
        iterator_types = ["reduction", "reduction", "reduction"]}
        ins(%x : tensor<2x4x4xf32>) outs(%acc : tensor<f32>) {
      ^bb0(%in: f32, %a: f32):
        %sq = arith.mulf %in, %in : f32
        %h = arith.mulf %sq, %half : f32
        %r = arith.addf %h, %a : f32
        linalg.yield %r : f32
    } -> tensor<f32>
    %e3 = tensor.empty() : tensor<10x4xf32>
    %g0 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<10x4xf32>) -> tensor<10x4xf32>
    %grad = linalg.generic {
        indexing_maps = [affine_map<(v, d, b, t) -> (b, t)>, affine_map<(v, d, b, t) -> (b, t, d)>, affine_map<(v, d, b, t) -> (v, d)>],
        iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%pos, %x : tensor<2x4xi64>, tensor<2x4x4xf32>) outs(%g0 : tensor<10x4xf32>) {
      ^bb0(%i: i64, %xv: f32, %a: f32):
        %v = linalg.index 0 : index
        %vi = arith.index_cast %v : index to i64
        %c = arith.cmpi eq, %vi, %i : i64
        %s = arith.select %c, %xv, %zero : f32
        %r = arith.addf %s, %a : f32
        linalg.yield %r : f32
    } -> tensor<10x4xf32>
    return %loss, %grad : tensor<f32>, tensor<10x4xf32>
  }
}
