// The reproducer of issue 16: the input-contract MLP with two mistakes in the
// bodies of its first linalg.generic ops (names used before, or without, a
// definition; a second ^bb0). MLIR 22's parser corrupts the heap cleaning up
// after "redefinition of block" (exit 134 for some file-name lengths).
// msamp-compile gives the located error, exits 1 and, under valgrind, touches
// no freed memory (valgrind's report lines start with "==").
// RUN: not msamp-compile %s -o %t 2>&1 | FileCheck %s
// RUN: not valgrind -q msamp-compile %s -o %t 2>&1 | FileCheck %s --implicit-check-not='=='
// CHECK: redefined-block-in-region.mlir:[[# @LINE + 71]]:7: error: redefinition of block '^bb0'
// CHECK-NEXT: ^bb0(%a: f32, %b: f32, %o: f32):
// CHECK-NEXT: {{^ +\^$}}
// CHECK-NOT: {{.}}

// Input-contract example: a one-hidden-layer MLP (3 -> 5 -> 2, ReLU, mean-squared error),
// batch 4, as a joint forward+backward function: parameters and data in, loss and one
// gradient per parameter out. Weights use the PyTorch nn.Linear layout [out, in].
// Only upstream dialects (func, linalg, tensor, arith); discardable `msamp.` attributes
// carry the training roles. The optimizer is declared on the module, not traced.
module attributes {msamp.optimizer = {kind = "adamw", lr = 1.0e-02 : f64, beta1 = 0.9 : f64,
                                      beta2 = 0.999 : f64, eps = 1.0e-08 : f64,
                                      weight_decay = 1.0e-02 : f64}} {

  // ---- forward + loss + backward: pure function, params in, (loss, grads) out ----
  func.func @fwd_bwd(
      %w1: tensor<5x3xf32> {msamp.role = "param", msamp.name = "fc1.weight"},
      %b1: tensor<5xf32>   {msamp.role = "param", msamp.name = "fc1.bias"},
      %w2: tensor<2x5xf32> {msamp.role = "param", msamp.name = "fc2.weight"},
      %b2: tensor<2xf32>   {msamp.role = "param", msamp.name = "fc2.bias"},
      %x:  tensor<4x3xf32> {msamp.role = "input", msamp.name = "x"},
      %y:  tensor<4x2xf32> {msamp.role = "target", msamp.name = "y"})
      -> (tensor<f32>     {msamp.role = "loss"},
          tensor<5x3xf32> {msamp.role = "grad", msamp.name = "fc1.weight"},
          tensor<5xf32>   {msamp.role = "grad", msamp.name = "fc1.bias"},
          tensor<2x5xf32> {msamp.role = "grad", msamp.name = "fc2.weight"},
          tensor<2xf32>   {msamp.role = "grad", msamp.name = "fc2.bias"})
      attributes {msamp.kind = "forward_backward"} {
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %inv_n = arith.constant 0.125 : f32   // 1 / (B*O) = 1/8 for mean reduction

    // fc1: z1 = x @ w1^T   (matmul with transposed-B indexing map)
    %e45 = tensor.empty() : tensor<4x5xf32>
    %f45 = linalg.fill ins(%zero : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
    %z1 = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                         affine_map<(m, n, k) -> (n, k)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w1 : tensor<4x3xf32>, tensor<5x3xf32>)
        outs(%f45 : tensor<4x5xf32>) -> tensor<4x5xf32>
    // h1 = relu(z1 + b1)
    %h1 = linalg.generic {
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                         affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%z1, %b1 : tensor<4x5xf32>, tensor<5xf32>) outs(%e45 : tensor<4x5xf32>) {
        %d = arith.subf %s, %t : f32
        %s = arith.addf %a, %b : f32
        %r = arith.maximumf %s, %zero : f32
        linalg.yield %r : f32
    } -> tensor<4x5xf32>

    // fc2: z2 = h1 @ w2^T ; out = z2 + b2
    %e42 = tensor.empty() : tensor<4x2xf32>
    %f42 = linalg.fill ins(%zero : f32) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
    %z2 = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                         affine_map<(m, n, k) -> (n, k)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%h1, %w2 : tensor<4x5xf32>, tensor<2x5xf32>)
        outs(%f42 : tensor<4x2xf32>) -> tensor<4x2xf32>
    // diff = z2 + b2 - y
    %diff = linalg.generic {
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                         affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%z2, %b2, %y : tensor<4x2xf32>, tensor<2xf32>, tensor<4x2xf32>)
        outs(%e42 : tensor<4x2xf32>) {
      ^bb0(%a: f32, %b: f32, %t: f32, %o: f32):
        %s = arith.addf %a, %b : f32
      ^bb0(%a: f32, %b: f32, %o: f32):
        linalg.yield %d : f32
    } -> tensor<4x2xf32>
    // loss = mean(diff^2)
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %sq = linalg.reduce ins(%diff : tensor<4x2xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %p = arith.mulf %in, %in : f32
        %s = arith.addf %p, %acc : f32
        linalg.yield %s : f32
      }
    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                            iterator_types = []}
        ins(%sq : tensor<f32>) outs(%e0 : tensor<f32>) {
      ^bb0(%a: f32, %o: f32):
        %m = arith.mulf %a, %inv_n : f32
        linalg.yield %m : f32
    } -> tensor<f32>

    // ---- backward ----
    // dout = 2 * diff / (B*O)
    %dout = linalg.generic {
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%diff : tensor<4x2xf32>) outs(%e42 : tensor<4x2xf32>) {
      ^bb0(%a: f32, %o: f32):
        %t = arith.mulf %a, %two : f32
        %r = arith.mulf %t, %inv_n : f32
        linalg.yield %r : f32
    } -> tensor<4x2xf32>
    // gb2 = sum_batch dout
    %e2 = tensor.empty() : tensor<2xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
    %gb2 = linalg.reduce ins(%dout : tensor<4x2xf32>) outs(%f2 : tensor<2xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    // gw2 = dout^T @ h1   (transposed-A matmul: the "weight-gradient" GEMM)
    %e25 = tensor.empty() : tensor<2x5xf32>
    %f25 = linalg.fill ins(%zero : f32) outs(%e25 : tensor<2x5xf32>) -> tensor<2x5xf32>
    %gw2 = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                         affine_map<(m, n, k) -> (k, n)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%dout, %h1 : tensor<4x2xf32>, tensor<4x5xf32>)
        outs(%f25 : tensor<2x5xf32>) -> tensor<2x5xf32>
    // dh1 = dout @ w2   (plain matmul: the "data-gradient" GEMM)
    %dh1 = linalg.matmul
        ins(%dout, %w2 : tensor<4x2xf32>, tensor<2x5xf32>)
        outs(%f45 : tensor<4x5xf32>) -> tensor<4x5xf32>
    // dz1 = dh1 * (h1 > 0)
    %dz1 = linalg.generic {
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                         affine_map<(i, j) -> (i, j)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%dh1, %h1 : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e45 : tensor<4x5xf32>) {
      ^bb0(%g: f32, %h: f32, %o: f32):
        %pos = arith.cmpf ogt, %h, %zero : f32
        %r = arith.select %pos, %g, %zero : f32
        linalg.yield %r : f32
    } -> tensor<4x5xf32>
    // gb1 = sum_batch dz1 ; gw1 = dz1^T @ x
    %e5 = tensor.empty() : tensor<5xf32>
    %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<5xf32>) -> tensor<5xf32>
    %gb1 = linalg.reduce ins(%dz1 : tensor<4x5xf32>) outs(%f5 : tensor<5xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    %e53 = tensor.empty() : tensor<5x3xf32>
    %f53 = linalg.fill ins(%zero : f32) outs(%e53 : tensor<5x3xf32>) -> tensor<5x3xf32>
    %gw1 = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                         affine_map<(m, n, k) -> (k, n)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%dz1, %x : tensor<4x5xf32>, tensor<4x3xf32>)
        outs(%f53 : tensor<5x3xf32>) -> tensor<5x3xf32>
    return %loss, %gw1, %gb1, %gw2, %gb2
        : tensor<f32>, tensor<5x3xf32>, tensor<5xf32>, tensor<2x5xf32>, tensor<2xf32>
  }

}
