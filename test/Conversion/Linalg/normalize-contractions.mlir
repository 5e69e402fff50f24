// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-normalize-contractions))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-normalize-contractions))' --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-normalize-contractions))' | msamp-opt --pass-pipeline='builtin.module(func.func(msamp-normalize-contractions))' | FileCheck %s --check-prefix=IDEMPOTENT

// REMARK: Remark="1 contractions in @attention_scores rewritten as one (batched) GEMM each, 0 operands made contiguous by a transpose; 0 multiply-accumulate reductions left as loop nests"
// REMARK: Remark="1 contractions in @attention_context rewritten as one (batched) GEMM each, 2 operands made contiguous by a transpose; 0 multiply-accumulate reductions left as loop nests"
// REMARK: Remark="1 contractions in @projection rewritten as one (batched) GEMM each, 0 operands made contiguous by a transpose; 0 multiply-accumulate reductions left as loop nests"
// REMARK: Remark="1 contractions in @bf16_scores rewritten
// REMARK: Remark="0 contractions in @left_alone rewritten as one (batched) GEMM each, 0 operands made contiguous by a transpose; 1 multiply-accumulate reductions left as loop nests (the first because it accumulates into a non-zero init)"

// The maps of the new GEMMs: (batch, m, n, k) and (m, n, k).
// CHECK-DAG: #[[$A:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$BT:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$C:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$A2:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$BT2:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C2:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// Attention's scores after elementwise fusion folded the head reshapes in:
// out[b, h, i, j] = sum_d q[b, h, i, d] * k[b, h, j, d], 4 parallel + 1
// reduction dims. Both operands and the result are stored [b, h, ...], so
// the two batch dims collapse into one (8 = 2 x 4) with no copy, and k is
// the transposed operand: one batched GEMM, q x k^T.
// CHECK-LABEL: func.func @attention_scores(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK-DAG: %[[QC:.*]] = tensor.collapse_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
// CHECK-DAG: %[[KC:.*]] = tensor.collapse_shape %[[K]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x16x16xf32>)
// CHECK: %[[GEMM:.*]] = linalg.generic {indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[QC]], %[[KC]] : tensor<8x16x8xf32>, tensor<8x16x8xf32>) outs(%[[ZERO]] : tensor<8x16x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[GEMM]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 4, 16, 16]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[OUT]]
// The result of the pass is a GEMM the matcher accepts: nothing left to do.
// IDEMPOTENT-LABEL: func.func @attention_scores(
// IDEMPOTENT-COUNT-1: linalg.generic
// IDEMPOTENT-NOT: linalg.generic
// IDEMPOTENT-LABEL: func.func @attention_context(
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
func.func @attention_scores(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %0 = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%init : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// The context product reading v and writing the result in the [b, s, h, d]
// layout the fusion leaves when it also folds the head permutes in:
// out[b, i, h, e] = sum_j p[b, h, i, j] * v[b, j, h, e]. v's batch dim h sits
// between its matrix dims, so it is made contiguous by one transpose to
// [b, h, j, e]; the result is computed as [b*h, i, e] and transposed back.
// CHECK-LABEL: func.func @attention_context(
// CHECK-SAME: %[[P:.*]]: tensor<2x4x16x16xf32>, %[[V:.*]]: tensor<2x16x4x8xf32>
// CHECK: %[[VT:.*]] = linalg.transpose ins(%[[V]] : tensor<2x16x4x8xf32>) outs(%{{.*}} : tensor<2x4x16x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[VC:.*]] = tensor.collapse_shape %[[VT]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
// CHECK: %[[GEMM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[VC]] : tensor<8x16x16xf32>, tensor<8x16x8xf32>) outs(%{{.*}} : tensor<8x16x8xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[GEMM]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 4, 16, 8]
// CHECK: %[[OUT:.*]] = linalg.transpose ins(%[[E]] : tensor<2x4x16x8xf32>) outs(%{{.*}} : tensor<2x16x4x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: return %[[OUT]]
#p = affine_map<(b, i, h, e, j) -> (b, h, i, j)>
#v = affine_map<(b, i, h, e, j) -> (b, j, h, e)>
#o = affine_map<(b, i, h, e, j) -> (b, i, h, e)>
func.func @attention_context(%p: tensor<2x4x16x16xf32>, %v: tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x16x4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32>
  %0 = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x16x4x8xf32>) outs(%init : tensor<2x16x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x4x8xf32>
  return %0 : tensor<2x16x4x8xf32>
}

// A projection whose weight the fusion viewed as [heads, head_dim, dim]:
// out[b, s, h, e] = sum_d x[b, s, d] * w[h, e, d]. No batch dim, two M and
// two N dims: a plain GEMM [b*s, d] x [h*e, d]^T, no copy.
// CHECK-LABEL: func.func @projection(
// CHECK-NOT: linalg.transpose
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x16x64xf32> into tensor<32x64xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<4x16x64xf32> into tensor<64x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$A2]], #[[$BT2]], #[[$C2]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [2, 16, 4, 16]
// CHECK-NOT: linalg.transpose
// CHECK: return
#x = affine_map<(b, s, h, e, d) -> (b, s, d)>
#w = affine_map<(b, s, h, e, d) -> (h, e, d)>
#y = affine_map<(b, s, h, e, d) -> (b, s, h, e)>
func.func @projection(%x: tensor<2x16x64xf32>, %w: tensor<4x16x64xf32>) -> tensor<2x16x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x16x4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16x4x16xf32>) -> tensor<2x16x4x16xf32>
  %0 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x16x64xf32>, tensor<4x16x64xf32>) outs(%init : tensor<2x16x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x4x16xf32>
  return %0 : tensor<2x16x4x16xf32>
}

// bf16 operands with an f32 accumulator (the AMP levels' form): the body,
// casts included, travels unchanged into the batched GEMM.
// CHECK-LABEL: func.func @bf16_scores(
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x16x8xbf16>, tensor<8x16x8xbf16>) outs(%{{.*}} : tensor<8x16x16xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]]
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[B]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[AF]], %[[BF]]
// CHECK-NEXT: arith.addf %[[ACC]], %[[P]]
func.func @bf16_scores(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x16x8xbf16>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %0 = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>) outs(%init : tensor<2x4x16x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %x = arith.extf %a : bf16 to f32
    %y = arith.extf %b : bf16 to f32
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// Left alone: an accumulation into a non-zero init (it would need an
// epilogue add), a max-plus "contraction", and a GEMM the matcher already
// accepts.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @left_alone(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %init: tensor<2x4x16x16xf32>, %a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<4x5xf32>) {
  %0 = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%init : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x16xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16x16xf32>
  %zinit = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %1 = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%zinit : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x16xf32>
  %e2 = tensor.empty() : tensor<4x5xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0, %1, %2 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<4x5xf32>
}
