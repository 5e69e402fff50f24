// Integer and updated buffers, as BERT and BatchNorm have them: an i64
// position-id buffer selects rows of a learned position table (an
// embedding lookup, as torch-mlir emits it: tensor.extract at the id), an
// i1 mask buffer zeroes masked positions, and an f32 running mean is
// updated every step (result role "buffer"):
//   e[s] = mask[s] ? pos[ids[s]] : 0,  loss = mean((e + x - y)^2),
//   running_mean' = 0.9 running_mean + 0.1 mean_s(e + x)
module attributes {msamp.optimizer = {kind = "sgd", lr = 0.25 : f64}} {
  func.func @fwd_bwd(%pos: tensor<6x4xf32> {msamp.role = "param", msamp.name = "pos.weight"},
                     %ids: tensor<3xi64> {msamp.role = "buffer", msamp.name = "position_ids"},
                     %mask: tensor<3xi1> {msamp.role = "buffer", msamp.name = "mask"},
                     %rm: tensor<4xf32> {msamp.role = "buffer", msamp.name = "norm.running_mean"},
                     %x: tensor<3x4xf32> {msamp.role = "input", msamp.name = "x"},
                     %y: tensor<3x4xf32> {msamp.role = "target", msamp.name = "y"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<6x4xf32> {msamp.role = "grad", msamp.name = "pos.weight"},
          tensor<4xf32> {msamp.role = "buffer", msamp.name = "norm.running_mean"})
      attributes {msamp.kind = "forward_backward"} {
    %zero = arith.constant 0.0 : f32
    %e34 = tensor.empty() : tensor<3x4xf32>
    %h = linalg.generic {indexing_maps = [affine_map<(s, d) -> (s)>, affine_map<(s, d) -> (s)>,
                                          affine_map<(s, d) -> (s, d)>, affine_map<(s, d) -> (s, d)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%ids, %mask, %x : tensor<3xi64>, tensor<3xi1>, tensor<3x4xf32>) outs(%e34 : tensor<3x4xf32>) {
    ^bb0(%id: i64, %m: i1, %xv: f32, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %d = linalg.index 1 : index
      %p = tensor.extract %pos[%row, %d] : tensor<6x4xf32>
      %e = arith.select %m, %p, %zero : f32
      %r = arith.addf %e, %xv : f32
      linalg.yield %r : f32
    } -> tensor<3x4xf32>
    %diff = linalg.generic {indexing_maps = [affine_map<(s, d) -> (s, d)>, affine_map<(s, d) -> (s, d)>,
                                             affine_map<(s, d) -> (s, d)>],
                            iterator_types = ["parallel", "parallel"]}
        ins(%h, %y : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e34 : tensor<3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<3x4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %sq = linalg.generic {indexing_maps = [affine_map<(s, d) -> (s, d)>, affine_map<(s, d) -> ()>],
                          iterator_types = ["reduction", "reduction"]}
        ins(%diff : tensor<3x4xf32>) outs(%f0 : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %p = arith.mulf %a, %a : f32
      %r = arith.addf %p, %acc : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %n = arith.constant 12.0 : f32
    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
        ins(%sq : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.divf %a, %n : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    // dpos[v, d] = sum_s (ids[s] == v and mask[s]) * 2 diff[s, d] / 12.
    %e64 = tensor.empty() : tensor<6x4xf32>
    %f64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<6x4xf32>) -> tensor<6x4xf32>
    %two_n = arith.constant 0.1666666716 : f32
    %dpos = linalg.generic {indexing_maps = [affine_map<(v, d, s) -> (s)>, affine_map<(v, d, s) -> (s)>,
                                             affine_map<(v, d, s) -> (s, d)>, affine_map<(v, d, s) -> (v, d)>],
                            iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%ids, %mask, %diff : tensor<3xi64>, tensor<3xi1>, tensor<3x4xf32>) outs(%f64 : tensor<6x4xf32>) {
    ^bb0(%id: i64, %m: i1, %g: f32, %acc: f32):
      %v = linalg.index 0 : index
      %vi = arith.index_cast %v : index to i64
      %hit = arith.cmpi eq, %id, %vi : i64
      %use = arith.andi %hit, %m : i1
      %t = arith.mulf %g, %two_n : f32
      %c = arith.select %use, %t, %zero : f32
      %r = arith.addf %c, %acc : f32
      linalg.yield %r : f32
    } -> tensor<6x4xf32>
    // running_mean' = 0.9 running_mean + 0.1 * mean over positions of h.
    %e4 = tensor.empty() : tensor<4xf32>
    %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
    %colsum = linalg.generic {indexing_maps = [affine_map<(s, d) -> (s, d)>, affine_map<(s, d) -> (d)>],
                              iterator_types = ["reduction", "parallel"]}
        ins(%h : tensor<3x4xf32>) outs(%f4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %keep = arith.constant 0.9 : f32
    %new = arith.constant 0.0333333351 : f32
    %rm2 = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>, affine_map<(d) -> (d)>],
                           iterator_types = ["parallel"]}
        ins(%rm, %colsum : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %old = arith.mulf %a, %keep : f32
      %add = arith.mulf %b, %new : f32
      %r = arith.addf %old, %add : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    return %loss, %dpos, %rm2 : tensor<f32>, tensor<6x4xf32>, tensor<4xf32>
  }
}
