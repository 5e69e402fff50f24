// msamp-reorder-reduction-loops: a buffer reduction whose output is
// contiguous along a parallel dimension gets that dimension as its innermost
// loop, after the reduction loops (kept in their order, so every output
// element sums its terms in the same order); an input read with a stride
// along it is first copied into a transposed buffer.
// RUN: msamp-opt %s --msamp-reorder-reduction-loops -split-input-file | FileCheck %s

// Q K^T: the key is read along d2 with a stride, so it is transposed
// (the reuse is 64 reads per element); the product then keeps four
// 16-lane accumulators of an output row in registers across the reduction
// loop: per lane the same mulf then addf, in the same order.
// CHECK-LABEL: func.func @qk(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x64x32xf32>, %[[B:[^:]+]]: memref<4x64x32xf32>, %[[C:[^:]+]]: memref<4x64x64xf32>)
// CHECK: %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x32x64xf32>
// CHECK: linalg.transpose ins(%[[B]] : memref<4x64x32xf32>) outs(%[[T]] : memref<4x32x64xf32>) permutation = [0, 2, 1]
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK-COUNT-4: vector.load %[[C]][%[[I]], %[[J]], %{{.+}}] : memref<4x64x64xf32>, vector<16xf32>
// CHECK: %[[R:.+]]:4 = scf.for %[[K:.+]] = %{{.+}} to %c32{{.*}} step %{{.+}} iter_args(%[[ACC:[^ ]+]] = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK: %[[X:.+]] = memref.load %[[A]][%[[I]], %[[J]], %[[K]]] : memref<4x64x32xf32>
// CHECK: %[[XB:.+]] = vector.broadcast %[[X]] : f32 to vector<16xf32>
// CHECK: %[[Y:.+]] = vector.load %[[T]][%[[I]], %[[K]], %{{.+}}] : memref<4x32x64xf32>, vector<16xf32>
// CHECK: %[[M:.+]] = arith.mulf %[[XB]], %[[Y]] : vector<16xf32>
// CHECK: arith.addf %[[ACC]], %[[M]] : vector<16xf32>
// CHECK: scf.yield
// CHECK-COUNT-4: vector.store %[[R]]#{{[0-3]}}, %[[C]][%[[I]], %[[J]], %{{.+}}] : memref<4x64x64xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
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

// P V with a row of 24 (not a multiple of 16 lanes): both operands are
// already contiguous along d2, so only the loops move and the loop
// vectorizer is left to handle the innermost one.
// CHECK-DAG: #[[P:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[V:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[O:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @pv(
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {indexing_maps = [#[[P]], #[[V]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%arg0, %arg1 : memref<4x64x64xf32>, memref<4x64x24xf32>)
func.func @pv(%a: memref<4x64x64xf32>, %b: memref<4x64x24xf32>, %c: memref<4x64x24xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<4x64x64xf32>, memref<4x64x24xf32>) outs(%c : memref<4x64x24xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An input that is (a view of) the output: reordered, but not kept in
// registers (the scalar loops read the partial sums stored so far).
// CHECK-LABEL: func.func @aliased(
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]
func.func @aliased(%a: memref<16x16xf32>, %c: memref<16x16xf32>) {
  %v = memref.subview %c[0, 0] [16, 16] [1, 1] : memref<16x16xf32> to memref<16x16xf32, strided<[16, 1]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %v : memref<16x16xf32>, memref<16x16xf32, strided<[16, 1]>>) outs(%c : memref<16x16xf32>) {
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
