// Input-contract graph whose one gradient is an embedding's, computed
// exactly on every target: loss = sum_{t,d} emb[ids[t], d] * w[t, d], so
// d loss / d emb = the one-hot reduction of w (the form the graph
// generators emit), with no rounded op upstream of it. One SGD step at
// lr = 1 then leaves emb - grad, whose bits depend only on the scatter's
// order of adds: a CPU step and a GPU step (msamp-gpu-one-hot-scatter) must
// save the same checkpoint bit for bit (the loss, an atomic sum on the GPU,
// may differ in its last bits). 4,099 rows x 32 features: 1,367 chunks of
// 3 rows, the last one a single row; 8 x 64 = 512 ids.
// Used by ../embedding-grad-step.test (CPU vs host emulation) and by
// unittests/CUDA/CompiledStepTest.cpp (CPU vs a GPU).
module attributes {msamp.optimizer = {kind = "sgd", lr = 1.0 : f64}} {
  func.func @fwd_bwd(
      %emb: tensor<4099x32xf32> {msamp.role = "param", msamp.name = "emb.weight"},
      %ids: tensor<8x64xi64> {msamp.role = "input", msamp.name = "ids"},
      %w: tensor<8x64x32xf32> {msamp.role = "target", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<4099x32xf32> {msamp.role = "grad", msamp.name = "emb.weight"})
      attributes {msamp.kind = "forward_backward"} {
    %zero = arith.constant 0.0 : f32
    // Forward: the gathered rows times w, summed.
    %e = tensor.empty() : tensor<f32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {
        indexing_maps = [affine_map<(b, s, d) -> (b, s)>,
                         affine_map<(b, s, d) -> (b, s, d)>,
                         affine_map<(b, s, d) -> ()>],
        iterator_types = ["reduction", "reduction", "reduction"]}
        ins(%ids, %w : tensor<8x64xi64>, tensor<8x64x32xf32>)
        outs(%z : tensor<f32>) {
      ^bb0(%id: i64, %x: f32, %acc: f32):
        %row = arith.index_cast %id : i64 to index
        %d = linalg.index 2 : index
        %v = tensor.extract %emb[%row, %d] : tensor<4099x32xf32>
        %p = arith.mulf %v, %x : f32
        %s = arith.addf %p, %acc : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    // Backward: grad[v, d] = sum_t (ids[t] == v ? w[t, d] : 0).
    %ge = tensor.empty() : tensor<4099x32xf32>
    %gz = linalg.fill ins(%zero : f32) outs(%ge : tensor<4099x32xf32>) -> tensor<4099x32xf32>
    %grad = linalg.generic {
        indexing_maps = [affine_map<(v, d, b, s) -> (b, s)>,
                         affine_map<(v, d, b, s) -> (b, s, d)>,
                         affine_map<(v, d, b, s) -> (v, d)>],
        iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%ids, %w : tensor<8x64xi64>, tensor<8x64x32xf32>)
        outs(%gz : tensor<4099x32xf32>) {
      ^bb0(%id: i64, %x: f32, %acc: f32):
        %v = linalg.index 0 : index
        %vi = arith.index_cast %v : index to i64
        %hit = arith.cmpi eq, %vi, %id : i64
        %sel = arith.select %hit, %x, %zero : f32
        %s = arith.addf %sel, %acc : f32
        linalg.yield %s : f32
    } -> tensor<4099x32xf32>
    return %loss, %grad : tensor<f32>, tensor<4099x32xf32>
  }
}
