// --msamp-gpu-fuse-sibling-reductions: independent row reductions of one
// tensor merged into one multi-output reduction (FuseSiblingReductions.cpp).
//
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fuse-sibling-reductions))' | FileCheck %s
// The merged reduction is still a warp-per-row kernel, accumulating both.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fuse-sibling-reductions))' | msamp-opt --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(msamp-gpu-row-reductions))' | FileCheck %s --check-prefix=WARP
// Numbers: the LM's steps with this pass (host emulation) log the CPU's
// losses bit for bit (host-emulation.test).

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// Cross-entropy's row max and target logit both read the logits; the
// exp-sum reads the max and stays. The target pick (an ids input of its
// own) moves up to the max: one generic, the logits read once.
// CHECK-LABEL: func.func @cross_entropy(
// CHECK-SAME: %[[L:[^:]+]]: tensor<16x1000xf32>, %[[IDS:[^:]+]]: tensor<16xi64>
// CHECK: %[[M:.+]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[L]], %[[IDS]] : tensor<16x1000xf32>, tensor<16xi64>) outs(%{{.+}}, %{{.+}} : tensor<16xf32>, tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[ID:.+]]: i64, %[[MA:.+]]: f32, %[[TA:.+]]: f32):
// CHECK-NEXT: %[[MAX:.+]] = arith.maximumf %[[X]], %[[MA]]
// CHECK-NEXT: linalg.index 1
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: arith.cmpi eq
// CHECK-NEXT: %[[SEL:.+]] = arith.select
// CHECK-NEXT: %[[T:.+]] = arith.addf %[[SEL]], %[[TA]]
// CHECK-NEXT: linalg.yield %[[MAX]], %[[T]]
// CHECK: linalg.generic {{.*}} ins(%[[L]], %[[M]]#0 :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp
// CHECK: return %[[M]]#0, %{{.+}}, %[[M]]#1
// The exp-sum reads the merged reduction's max: with row chains
// (msamp-gpu-row-reductions-chains.mlir) it runs in the same kernel.
// WARP-LABEL: func.func @cross_entropy(
// WARP: gpu.launch
// WARP: arith.maximumf
// WARP: arith.addf
// WARP: gpu.shuffle xor
// WARP: math.exp
// WARP-NOT: gpu.launch
// WARP-LABEL: func.func @column(
func.func @cross_entropy(%l: tensor<16x1000xf32>, %ids: tensor<16xi64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %zinit = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%l : tensor<16x1000xf32>) outs(%minit : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%l, %max : tensor<16x1000xf32>, tensor<16xf32>) outs(%zinit : tensor<16xf32>) {
  ^bb0(%x: f32, %mx: f32, %acc: f32):
    %d = arith.subf %x, %mx : f32
    %ex = math.exp %d : f32
    %a = arith.addf %ex, %acc : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  %tgt = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%l, %ids : tensor<16x1000xf32>, tensor<16xi64>) outs(%zinit : tensor<16xf32>) {
  ^bb0(%x: f32, %id: i64, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %id : i64
    %v = arith.select %hit, %x, %zero : f32
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  return %max, %sum, %tgt : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// Left alone: column sums (rows are reduced: dimension 0; the column split
// owns their order), and a row reduction of the max's result (it depends
// on the earlier one).
// CHECK-LABEL: func.func @column(
// CHECK: linalg.reduce
// CHECK: linalg.reduce
// CHECK-LABEL: func.func @dependent(
// CHECK: %[[A:.+]] = linalg.generic
// CHECK: %[[B:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[A]] :
// A body that captures a value defined after the first reduction stays.
// CHECK-LABEL: func.func @captured(
// CHECK: linalg.reduce
// CHECK: arith.addf
// CHECK: linalg.generic
func.func @column(%x: tensor<64x32xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.reduce ins(%x : tensor<64x32xf32>) outs(%init : tensor<32xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %m = linalg.reduce ins(%x : tensor<64x32xf32>) outs(%init : tensor<32xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.maximumf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %s, %m : tensor<32xf32>, tensor<32xf32>
}
func.func @dependent(%x: tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %a : tensor<16x64xf32>, tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%in: f32, %mean: f32, %acc: f32):
    %d = arith.subf %in, %mean : f32
    %q = arith.mulf %d, %d : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}
func.func @captured(%x: tensor<16x64xf32>, %y: f32) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %a = linalg.reduce ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  %shift = arith.addf %y, %y : f32
  %b = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %shift : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}
