// One SGD step (lr 1) whose gradient reads a ranked constant table in a
// kernel: w's gradient is x * table, so w becomes w - x * table. On the GPU
// the table is a global of the kernel's module (msamp-gpu-sink-globals):
// unittests/CUDA/CompiledStepTest.cpp AConstantTableIsReadFromDeviceMemory.
module attributes {msamp.optimizer = {kind = "sgd", lr = 1.0 : f64}} {
  func.func @fwd_bwd(%w: tensor<8xf32> {msamp.role = "param", msamp.name = "w"},
                     %x: tensor<8xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<8xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %z = arith.constant 0.0 : f32
    %table = arith.constant dense<[0.5, -1.0, 2.0, 0.25, -3.0, 1.5, 4.0, -0.125]> : tensor<8xf32>
    %e = tensor.empty() : tensor<8xf32>
    %g = linalg.generic {indexing_maps = [affine_map<(p) -> (p)>, affine_map<(p) -> (p)>, affine_map<(p) -> (p)>],
                         iterator_types = ["parallel"]}
        ins(%x, %table : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
        ^bb0(%a: f32, %t: f32, %o: f32):
          %m = arith.mulf %a, %t : f32
          linalg.yield %m : f32
    } -> tensor<8xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(p) -> (p)>, affine_map<(p) -> (p)>, affine_map<(p) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%f0 : tensor<f32>) {
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %t = arith.addf %m, %acc : f32
          linalg.yield %t : f32
    } -> tensor<f32>
    return %l, %g : tensor<f32>, tensor<8xf32>
  }
}
