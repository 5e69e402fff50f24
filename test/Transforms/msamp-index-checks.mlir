// RUN: msamp-opt %s --split-input-file --msamp-index-checks | FileCheck %s

// The forms the generators, the ONNX importer and torch-mlir emit: a gather
// (tensor.extract through index_cast, after a reshape), a one-hot compare
// with a loop index, an ONNX-style clamped gather with a negative-index
// select, a compare with a torch arange (iota tensor), and the loss's
// ignore_index (an equality compare with a constant outside the range).
// Float inputs and integer inputs used only in arithmetic are not checked.

// CHECK-LABEL: module attributes {msamp.index_checks = [
// CHECK-SAME: {arg = 1 : i64, lower = 0 : i64, name = "ids", rank = 2 : i64, type = i64, upper = 10 : i64}
// CHECK-SAME: {arg = 2 : i64, ignore_index = -100 : i64, lower = 0 : i64, name = "labels", rank = 1 : i64, type = i64, upper = 7 : i64}
// CHECK-SAME: {arg = 3 : i64, lower = 0 : i64, name = "onnx_ids", rank = 1 : i64, type = i32, upper = 5 : i64}
// CHECK-SAME: {arg = 4 : i64, lower = 0 : i64, name = "torch_target", rank = 1 : i64, type = i64, upper = 6 : i64}]}
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
  func.func @train_step(
      %w: tensor<10x3xf32> {msamp.role = "param", msamp.name = "w"},
      %ids: tensor<2x4xi64> {msamp.role = "input", msamp.name = "ids"},
      %labels: tensor<8xi64> {msamp.role = "target", msamp.name = "labels"},
      %onnx_ids: tensor<8xi32> {msamp.role = "input", msamp.name = "onnx_ids"},
      %torch_target: tensor<8xi64> {msamp.role = "target", msamp.name = "torch_target"},
      %count: tensor<8xi64> {msamp.role = "input", msamp.name = "count"},
      %x: tensor<8xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<8x3xf32>, tensor<8x7xf32>, tensor<8xf32>, tensor<8x6xi1>, tensor<8xi64>)
      attributes {msamp.kind = "train_step"} {
    %flat = tensor.collapse_shape %ids [[0, 1]] : tensor<2x4xi64> into tensor<8xi64>
    %e0 = tensor.empty() : tensor<8x3xf32>
    %gather = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%flat : tensor<8xi64>) outs(%e0 : tensor<8x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %ix = arith.index_cast %in : i64 to index
      %j = linalg.index 1 : index
      %v = tensor.extract %w[%ix, %j] : tensor<10x3xf32>
      linalg.yield %v : f32
    } -> tensor<8x3xf32>
    %e1 = tensor.empty() : tensor<8x7xf32>
    %cm100 = arith.constant -100 : i64
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %hot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%labels : tensor<8xi64>) outs(%e1 : tensor<8x7xf32>) {
    ^bb0(%in: i64, %out: f32):
      %c = linalg.index 1 : index
      %ci = arith.index_cast %c : index to i64
      %hit = arith.cmpi eq, %ci, %in : i64
      %keep = arith.cmpi ne, %in, %cm100 : i64
      %both = arith.andi %hit, %keep : i1
      %r = arith.select %both, %one, %zero : f32
      linalg.yield %r : f32
    } -> tensor<8x7xf32>
    %e2 = tensor.empty() : tensor<8xf32>
    %table = arith.constant dense<1.0> : tensor<5xf32>
    %onnx = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%onnx_ids : tensor<8xi32>) outs(%e2 : tensor<8xf32>) {
    ^bb0(%in: i32, %out: f32):
      %idx = arith.index_cast %in : i32 to index
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %neg = arith.cmpi slt, %idx, %c0 : index
      %wrapped = arith.addi %idx, %c5 : index
      %sel = arith.select %neg, %wrapped, %idx : index
      %lo = arith.maxsi %sel, %c0 : index
      %hi = arith.minsi %lo, %c4 : index
      %v = tensor.extract %table[%hi] : tensor<5xf32>
      linalg.yield %v : f32
    } -> tensor<8xf32>
    %e3 = tensor.empty() : tensor<6xi64>
    %arange = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]}
        outs(%e3 : tensor<6xi64>) {
    ^bb0(%out: i64):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      linalg.yield %ii : i64
    } -> tensor<6xi64>
    %e4 = tensor.empty() : tensor<8x6xi1>
    %eq = linalg.generic {indexing_maps = [#row, affine_map<(d0, d1) -> (d1)>, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%torch_target, %arange : tensor<8xi64>, tensor<6xi64>) outs(%e4 : tensor<8x6xi1>) {
    ^bb0(%t: i64, %a: i64, %out: i1):
      %h = arith.cmpi eq, %t, %a : i64
      linalg.yield %h : i1
    } -> tensor<8x6xi1>
    %e5 = tensor.empty() : tensor<8xi64>
    %doubled = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%count : tensor<8xi64>) outs(%e5 : tensor<8xi64>) {
    ^bb0(%in: i64, %out: i64):
      %d = arith.addi %in, %in : i64
      linalg.yield %d : i64
    } -> tensor<8xi64>
    return %gather, %hot, %onnx, %eq, %doubled : tensor<8x3xf32>, tensor<8x7xf32>, tensor<8xf32>, tensor<8x6xi1>, tensor<8xi64>
  }
}

// -----

// Copies keep the bound: a transpose of the ids is gathered with.
// CHECK-LABEL: module attributes {msamp.index_checks = [{arg = 1 : i64, lower = 0 : i64, name = "ids", rank = 2 : i64, type = i64, upper = 4 : i64}]}
#t = affine_map<(d0, d1) -> (d1, d0)>
#i = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @train_step(
      %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
      %ids: tensor<2x3xi64> {msamp.role = "input", msamp.name = "ids"})
      -> tensor<3x2xf32> attributes {msamp.kind = "train_step"} {
    %e = tensor.empty() : tensor<3x2xi64>
    %tr = linalg.generic {indexing_maps = [#t, #i], iterator_types = ["parallel", "parallel"]}
        ins(%ids : tensor<2x3xi64>) outs(%e : tensor<3x2xi64>) {
    ^bb0(%in: i64, %out: i64):
      linalg.yield %in : i64
    } -> tensor<3x2xi64>
    %f = tensor.empty() : tensor<3x2xf32>
    %g = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel", "parallel"]}
        ins(%tr : tensor<3x2xi64>) outs(%f : tensor<3x2xf32>) {
    ^bb0(%in: i64, %out: f32):
      %ix = arith.index_cast %in : i64 to index
      %v = tensor.extract %w[%ix] : tensor<4xf32>
      linalg.yield %v : f32
    } -> tensor<3x2xf32>
    return %g : tensor<3x2xf32>
  }
}

// -----

// No index input: no attribute.
// CHECK-LABEL: module {
// CHECK-NOT: msamp.index_checks
module {
  func.func @train_step(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
      -> tensor<4xf32> attributes {msamp.kind = "train_step"} {
    return %x : tensor<4xf32>
  }
}
