// --msamp-gpu-fuse-producers: multi-use elementwise producers recomputed in
// each consumer, when that moves fewer bytes (FuseProducers.cpp).
//
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fuse-producers))' | FileCheck %s
// Numbers: the LM's steps with this pass (host emulation) log the CPU's
// losses bit for bit (host-emulation.test).

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Softmax forward: exp(s - max) is read by the row sum (a linalg.reduce)
// and by the division. Before: it is written once (16 KB) and read twice;
// after, both consumers read s (16 KB each) and the max: no exp kernel.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[S:.+]]: tensor<64x64xf32>
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[S]] : tensor<64x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} outs(%{{.+}} : tensor<64x64xf32>)
// The sum: a generic reduction that computes the exponential itself.
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[S]], %[[MAX]] : tensor<64x64xf32>, tensor<64xf32>)
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[S]], %[[MAX]], %[[SUM]] : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.divf
// CHECK: return %[[P]]
func.func @softmax(%s: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<64x64xf32>) outs(%minit : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %e1 = tensor.empty() : tensor<64x64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%s, %max : tensor<64x64xf32>, tensor<64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<64x64xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.reduce ins(%exp : tensor<64x64xf32>) outs(%sinit : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<64x64xf32>, tensor<64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %sm: f32, %o: f32):
    %q = arith.divf %in, %sm : f32
    linalg.yield %q : f32
  } -> tensor<64x64xf32>
  return %p : tensor<64x64xf32>
}

// Softmax backward's row dot: dp * p has one use, a linalg.reduce, which
// upstream elementwise fusion does not take; the product is recomputed in
// the sum (reads dp and p: 32 KB, against 48 KB + 16 KB).
// CHECK-LABEL: func.func @rowdot(
// CHECK-SAME: %[[DP:[^:]+]]: tensor<64x64xf32>, %[[PR:[^:]+]]: tensor<64x64xf32>
// CHECK: %[[DOT:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[DP]], %[[PR]] : tensor<64x64xf32>, tensor<64x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: return %[[DOT]]
func.func @rowdot(%dp: tensor<64x64xf32>, %pr: tensor<64x64xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64x64xf32>
  %prod = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%dp, %pr : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %e0 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %dot = linalg.reduce ins(%prod : tensor<64x64xf32>) outs(%init : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %dot : tensor<64xf32>
}

// Left alone: more bytes. a * b read by three consumers that read neither a
// nor b: before 2 x 16 KB + 16 KB written + 3 x 16 KB read = 96 KB, after
// 3 x 32 KB = 96 KB: no gain.
// CHECK-LABEL: func.func @no_gain(
// CHECK: %[[AB:.+]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-COUNT-3: ins(%[[AB]] :
func.func @no_gain(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %e1 = tensor.empty() : tensor<64x64xf32>
  %ab = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<64x64xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ab : tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<64x64xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ab : tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = math.absf %x : f32
    linalg.yield %n : f32
  } -> tensor<64x64xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ab : tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = math.exp %x : f32
    linalg.yield %n : f32
  } -> tensor<64x64xf32>
  return %r0, %r1, %r2 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// Left alone: a use that is not a linalg consumer (the function's result
// must be written anyway), and a consumer that broadcasts the producer
// over a larger loop nest (it would recompute each element 64 times).
// CHECK-LABEL: func.func @kept(
// CHECK: %[[E:.+]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: ins(%[[E]] :
// CHECK: return %[[E]]
// CHECK-LABEL: func.func @broadcast(
// CHECK: %[[E2:.+]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: ins(%[[E2]], %{{.+}} :
// CHECK: ins(%[[E2]], %{{.+}} :
func.func @kept(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %e1 = tensor.empty() : tensor<64x64xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<64x64xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%e : tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<64x64xf32>
  return %e, %t : tensor<64x64xf32>, tensor<64x64xf32>
}
func.func @broadcast(%x: tensor<64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %e0 = tensor.empty() : tensor<64xf32>
  %e1 = tensor.empty() : tensor<64x64xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e0 : tensor<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %a = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%e, %y : tensor<64xf32>, tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %w: f32, %o: f32):
    %v = arith.mulf %in, %w : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  %b = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%e, %y : tensor<64xf32>, tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %w: f32, %o: f32):
    %v = arith.addf %in, %w : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  return %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
}

// Left alone: a column reduction (over the rows, dimension 0). The column
// split (msamp-split-column-reductions) fixes its summation order on both
// targets; with a per-row operand fused in, it would not split it on the
// GPU, which would then sum in another order than the CPU.
// CHECK-LABEL: func.func @column(
// CHECK: %[[XH:.+]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: linalg.reduce ins(%[[XH]] : tensor<64x32xf32>) {{.*}} dimensions = [0]
func.func @column(%x: tensor<64x32xf32>, %r: tensor<64xf32>) -> (tensor<64x32xf32>, tensor<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64x32xf32>
  %xh = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<64x32xf32>, tensor<64xf32>) outs(%e1 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64x32xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%xh : tensor<64x32xf32>) outs(%e1 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64x32xf32>
  %e0 = tensor.empty() : tensor<32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32xf32>) -> tensor<32xf32>
  %sum = linalg.reduce ins(%xh : tensor<64x32xf32>) outs(%init : tensor<32xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %neg, %sum : tensor<64x32xf32>, tensor<32xf32>
}

// A row statistic's finishing arithmetic (at most four arith ops or square
// roots) is recomputed through a broadcast: LayerNorm's mean in its
// variance (a row reduction that reads a row of %x in loop order) and in
// the normalization, its rstd in the normalization; neither is a kernel
// of its own any more.
// CHECK-LABEL: func.func @row_values(
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.subf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: math.sqrt
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @row_values(%x: tensor<8x16xf32>, %sum: tensor<8xf32>) -> tensor<8x16xf32> {
  %e8 = tensor.empty() : tensor<8xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %c = arith.constant 0.0625 : f32
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %mean = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%sum : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %var = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : tensor<8x16xf32>, tensor<8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %q = arith.mulf %d, %d : f32
    %s = arith.addf %q, %o : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %rstd = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.mulf %in, %c : f32
    %a = arith.addf %v, %eps : f32
    %r = math.sqrt %a : f32
    %i = arith.divf %one, %r : f32
    linalg.yield %i : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %rstd : tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %m: f32, %r: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %n = arith.mulf %d, %r : f32
    linalg.yield %n : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// Not into a contraction, whose operands each miss a loop (no operand read
// in loop order): the row value stays a kernel, the GEMM a GEMM.
// CHECK-LABEL: func.func @row_value_contraction(
// CHECK: %[[S:.+]] = linalg.generic
// CHECK: ins(%arg0, %[[S]], %arg2 :
func.func @row_value_contraction(%a: tensor<8x16xf32>, %s: tensor<8xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %e8 = tensor.empty() : tensor<8xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %c = arith.constant 0.5 : f32
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %scaled, %b : tensor<8x16xf32>, tensor<8xf32>, tensor<16x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %w: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %n = arith.mulf %m, %w : f32
    %t = arith.addf %n, %o : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}
