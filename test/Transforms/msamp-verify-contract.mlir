// Graphs that follow the input contract pass --msamp-verify-contract
// unchanged; the only edit the pass makes is dropping cf.assert, with a
// remark.
//
// The shared MLP example comes back byte-for-byte identical:
// RUN: msamp-opt %S/Inputs/mlp.mlir > %t.ref.mlir
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-verify-contract > %t.out.mlir
// RUN: diff %t.ref.mlir %t.out.mlir
//
// The graphs below use every part of the contract:
// RUN: msamp-opt %s -split-input-file --msamp-verify-contract -verify-diagnostics | FileCheck %s

// A classifier with i64 class indices as targets, an updated buffer (a
// running statistic), a called helper, scf and math ops, a runtime assertion
// and an SGD optimizer with Nesterov momentum (integers accepted as numbers).
module attributes {msamp.optimizer = {kind = "sgd", lr = 1 : i64, momentum = 0.9 : f64,
                                      nesterov = true, weight_decay = 0.0 : f32}} {
  func.func private @scale(%t: tensor<4x3xf32>, %s: f32) -> tensor<4x3xf32> {
    %e = tensor.empty() : tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%t : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
      ^bb0(%a: f32, %o: f32):
        %m = arith.mulf %a, %s : f32
        linalg.yield %m : f32
    } -> tensor<4x3xf32>
    return %r : tensor<4x3xf32>
  }

  func.func @step(
      %w: tensor<3xf32>     {msamp.role = "param", msamp.name = "head.weight"},
      %stat: tensor<3xf32>  {msamp.role = "buffer", msamp.name = "norm.running_mean"},
      %x: tensor<4x3xf32>   {msamp.role = "input", msamp.name = "x"},
      %y: tensor<4xi64>     {msamp.role = "target", msamp.name = "labels"},
      %mask: tensor<4xi32>  {msamp.role = "input", msamp.name = "mask"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<3xf32> {msamp.role = "grad", msamp.name = "head.weight"},
          tensor<3xf32> {msamp.role = "buffer", msamp.name = "norm.running_mean"})
      attributes {msamp.kind = "forward_backward"} {
    %c = arith.constant 0.5 : f32
    %true = arith.constant true
    // expected-remark @+1 {{dropping cf.assert: runtime assertions are not part of the compiled step}}
    cf.assert %true, "labels in range"
    %xs = func.call @scale(%x, %c) : (tensor<4x3xf32>, f32) -> tensor<4x3xf32>
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%xs : tensor<4x3xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %ex = math.exp %in : f32
        %s = arith.addf %ex, %acc : f32
        linalg.yield %s : f32
      }
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %loss = scf.for %i = %c0 to %c2 step %c1 iter_args(%l = %sum) -> (tensor<f32>) {
      scf.yield %l : tensor<f32>
    }
    return %loss, %w, %stat : tensor<f32>, tensor<3xf32>, tensor<3xf32>
  }
}

// CHECK-LABEL: func.func private @scale
// CHECK-LABEL: func.func @step
// CHECK-NOT:     cf.assert
// CHECK:         call @scale
// CHECK:         scf.for

// -----

// Collectives (shard) and torch-mlir's RNG seed (ml_program: @global_seed
// loaded, advanced and stored; the draws are in
// msamp-verify-contract-random-invalid.mlir) are part of the contract;
// a missing msamp.optimizer means AdamW with the defaults; Adam with
// adam_mode 1 is accepted.
module {
  shard.grid @grid0(shape = 2)
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %g = shard.all_reduce %w on @grid0 grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %t = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c0 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %g : tensor<f32>, tensor<4xf32>
  }
}

// CHECK-LABEL: shard.grid @grid0
// CHECK:       ml_program.global private mutable @global_seed
// CHECK:       shard.all_reduce

// -----

module attributes {msamp.optimizer = {kind = "adam", lr = 3.0e-04 : f64, beta1 = 0.0 : f64,
                                      beta2 = 0.95 : f64, eps = 1.0e-06 : f64,
                                      weight_decay = 0.0 : f64, adam_mode = 1 : i64}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// CHECK-LABEL: module attributes {msamp.optimizer = {adam_mode = 1 : i64
// CHECK:       func.func @fb
