// --msamp-gpu-fuse-permutes: a linalg.transpose next to an elementwise
// generic is computed by that generic (FusePermutes.cpp, issue 23).
//
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fuse-permutes))' | FileCheck %s
// Numbers: the LM's steps with this pass (host emulation) log the CPU's
// losses bit for bit (host-emulation.test).

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#heads = affine_map<(d0, d1, d2, d3) -> (d2, d3)>

// Attention's Q: bias-add, then the heads' permute for the batched GEMM.
// The bias-add writes the permuted layout itself; no transpose remains.
// CHECK-DAG: #[[PERM:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @bias_then_permute(
// CHECK-SAME: %[[X:.+]]: tensor<2x4x3x8xf32>, %[[B:.+]]: tensor<3x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: %[[Q:.+]] = linalg.generic {indexing_maps = [#[[PERM]], #[[BIAS]], #[[ID]]], {{.*}} ins(%[[X]], %[[B]] : tensor<2x4x3x8xf32>, tensor<3x8xf32>) outs(%{{.+}} : tensor<2x3x4x8xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.transpose
// CHECK: return %[[Q]]
func.func @bias_then_permute(%x: tensor<2x4x3x8xf32>, %bias: tensor<3x8xf32>)
    -> tensor<2x3x4x8xf32> {
  %e = tensor.empty() : tensor<2x4x3x8xf32>
  %q = linalg.generic {indexing_maps = [#id, #heads, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %bias : tensor<2x4x3x8xf32>, tensor<3x8xf32>)
      outs(%e : tensor<2x4x3x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x4x3x8xf32>
  %e2 = tensor.empty() : tensor<2x3x4x8xf32>
  %t = linalg.transpose ins(%q : tensor<2x4x3x8xf32>)
      outs(%e2 : tensor<2x3x4x8xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x3x4x8xf32>
}

// A permute read by two elementwise generics: each reads the transpose's
// input through the permuted map (a copy of a pure read per consumer).
// CHECK-LABEL: func.func @permute_then_elementwise(
// CHECK-SAME: %[[Y:.+]]: tensor<2x3x4x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[PERM]], #[[ID]]], {{.*}} ins(%[[Y]] : tensor<2x3x4x8xf32>) outs(%{{.+}} : tensor<2x4x3x8xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#[[PERM]], #[[ID]]], {{.*}} ins(%[[Y]] : tensor<2x3x4x8xf32>) outs(%{{.+}} : tensor<2x4x3x8xf32>)
// CHECK: arith.mulf
// CHECK-NOT: linalg.transpose
func.func @permute_then_elementwise(%y: tensor<2x3x4x8xf32>)
    -> (tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>) {
  %e = tensor.empty() : tensor<2x4x3x8xf32>
  %t = linalg.transpose ins(%y : tensor<2x3x4x8xf32>)
      outs(%e : tensor<2x4x3x8xf32>) permutation = [0, 2, 1, 3]
  %a = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x4x3x8xf32>) outs(%e : tensor<2x4x3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4x3x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x4x3x8xf32>) outs(%e : tensor<2x4x3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4x3x8xf32>
  return %a, %b : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>
}

// Between two library calls (here: function arguments and a collapse for
// the next batched GEMM) the permute has no elementwise neighbour: it
// stays, as does one whose producer has another use (both layouts live).
// CHECK-LABEL: func.func @stays(
// CHECK: linalg.transpose
// CHECK: tensor.collapse_shape
// CHECK: linalg.transpose
func.func @stays(%y: tensor<2x3x4x8xf32>, %x: tensor<2x4x3x8xf32>)
    -> (tensor<8x24xf32>, tensor<2x3x4x8xf32>, tensor<2x4x3x8xf32>) {
  %e = tensor.empty() : tensor<2x4x3x8xf32>
  %t = linalg.transpose ins(%y : tensor<2x3x4x8xf32>)
      outs(%e : tensor<2x4x3x8xf32>) permutation = [0, 2, 1, 3]
  %c = tensor.collapse_shape %t [[0, 1], [2, 3]]
      : tensor<2x4x3x8xf32> into tensor<8x24xf32>
  %n = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x3x8xf32>) outs(%e : tensor<2x4x3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4x3x8xf32>
  %e2 = tensor.empty() : tensor<2x3x4x8xf32>
  %t2 = linalg.transpose ins(%n : tensor<2x4x3x8xf32>)
      outs(%e2 : tensor<2x3x4x8xf32>) permutation = [0, 2, 1, 3]
  return %c, %t2, %n : tensor<8x24xf32>, tensor<2x3x4x8xf32>, tensor<2x4x3x8xf32>
}

// A permute read by a contraction (a GEMM, still a generic on tensors)
// stays: msamp-normalize-contractions makes the GEMM a library call again
// and would materialize the permute anew.
// CHECK-LABEL: func.func @into_contraction_stays(
// CHECK: %[[T:.+]] = linalg.transpose
// CHECK: linalg.generic {{.*}}"reduction"{{.*}} ins(%[[T]],
#a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @into_contraction_stays(%y: tensor<2x4x3x8xf32>,
                                  %w: tensor<2x3x8x5xf32>)
    -> tensor<2x3x4x5xf32> {
  %e = tensor.empty() : tensor<2x3x4x8xf32>
  %t = linalg.transpose ins(%y : tensor<2x4x3x8xf32>)
      outs(%e : tensor<2x3x4x8xf32>) permutation = [0, 2, 1, 3]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x3x4x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %m = linalg.generic {indexing_maps = [#a, #b, #c],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%t, %w : tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>)
      outs(%f : tensor<2x3x4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %r = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %r : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x5xf32>
  return %m : tensor<2x3x4x5xf32>
}

// A consumer that reads the permute twice stays as it is (each fusion
// replaces its consumer: one operand at a time would leave the other).
// CHECK-LABEL: func.func @read_twice_stays(
// CHECK: %[[T:.+]] = linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%[[T]], %[[T]] :
func.func @read_twice_stays(%y: tensor<2x3x4x8xf32>) -> tensor<2x4x3x8xf32> {
  %e = tensor.empty() : tensor<2x4x3x8xf32>
  %t = linalg.transpose ins(%y : tensor<2x3x4x8xf32>)
      outs(%e : tensor<2x4x3x8xf32>) permutation = [0, 2, 1, 3]
  %m = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t, %t : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>)
      outs(%e : tensor<2x4x3x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<2x4x3x8xf32>
  return %m : tensor<2x4x3x8xf32>
}
