// msamp-reorder-reduction-loops: a buffer reduction whose output is
// contiguous along a parallel dimension gets that dimension as its innermost
// loop, after the reduction loops (kept in their order, so every output
// element sums its terms in the same order); an input read with a stride
// along it is first copied into a transposed buffer.
// RUN: msamp-opt %s --msamp-reorder-reduction-loops -split-input-file | FileCheck %s

// Q K^T: the key is read along d3 with a stride, so it is transposed
// (the reuse is 64 reads per element).
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[KT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[O:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @qk(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x64x32xf32>, %[[B:[^:]+]]: memref<4x64x32xf32>, %[[C:[^:]+]]: memref<4x64x64xf32>)
// CHECK: %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x32x64xf32>
// CHECK: linalg.transpose ins(%[[B]] : memref<4x64x32xf32>) outs(%[[T]] : memref<4x32x64xf32>) permutation = [0, 2, 1]
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[T]] : memref<4x64x32xf32>, memref<4x32x64xf32>) outs(%[[C]] : memref<4x64x64xf32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %[[Z:.+]]: f32):
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: arith.addf %[[Z]], %[[M]] : f32
func.func @qk(%a: memref<4x64x32xf32>, %b: memref<4x64x32xf32>, %c: memref<4x64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<4x64x32xf32>, memref<4x64x32xf32>) outs(%c : memref<4x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// P V: both operands are already contiguous along d2; only the loops move.
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[KT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[O:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @pv(
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%arg0, %arg1 : memref<4x64x64xf32>, memref<4x64x32xf32>)
func.func @pv(%a: memref<4x64x64xf32>, %b: memref<4x64x32xf32>, %c: memref<4x64x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<4x64x64xf32>, memref<4x64x32xf32>) outs(%c : memref<4x64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row sum reads every element once: a transposed copy would not pay, so
// the op is left alone. A column sum already has its parallel loop
// innermost. A sum into a scalar has no parallel loop.
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT: memref.alloc
// CHECK: linalg.reduce ins(%{{.+}} : memref<16x32xf32>) outs(%{{.+}} : memref<16xf32>) dimensions = [1]
// CHECK: linalg.reduce ins(%{{.+}} : memref<16x32xf32>) outs(%{{.+}} : memref<32xf32>) dimensions = [0]
// CHECK: iterator_types = ["reduction", "reduction"]
func.func @untouched(%a: memref<16x32xf32>, %r: memref<16xf32>, %c: memref<32xf32>, %s: memref<f32>) {
  linalg.reduce ins(%a : memref<16x32xf32>) outs(%r : memref<16xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  linalg.reduce ins(%a : memref<16x32xf32>) outs(%c : memref<32xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%a : memref<16x32xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  }
  return
}
