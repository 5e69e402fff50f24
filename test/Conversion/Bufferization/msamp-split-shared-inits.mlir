// RUN: msamp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(msamp-split-shared-inits{max-uses=2}))' | FileCheck %s

// One empty, the destination of three ops and an operand of a call, with
// at most two uses per empty (max-uses=2): two groups of consecutive uses,
// each with its own empty before its first user.
// CHECK-LABEL: func @empties
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.copy ins(%[[X]] : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: %[[B:.*]] = linalg.copy ins(%[[A]] : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = call @block(%[[E1]], %[[B]])
// CHECK-NEXT: %[[D:.*]] = linalg.copy ins(%[[C]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: return %[[D]]
func.func private @block(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @empties(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = call @block(%e, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = linalg.copy ins(%c : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// A fill of an empty that initializes two reductions and is read by a third
// op: each init gets its own fill (whatever max-uses); the read keeps the
// original fill. A use inside a loop gets its clones before the loop. The
// empty then has three uses: a group of two and one of one.
// CHECK-LABEL: func @fills
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[N:.*]]: index)
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[F0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: %[[R0:.*]] = linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[F1]] : tensor<4xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: scf.for
// CHECK-NEXT: linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[F2]] : tensor<4xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.add ins(%[[R0]], %[[F0]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E2]] : tensor<4xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @fills(%x: tensor<4x8xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r0 = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%it = %r0) -> tensor<4xf32> {
    %r = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    scf.yield %r : tensor<4xf32>
  }
  %e2 = tensor.empty() : tensor<4xf32>
  %sum = linalg.add ins(%r0, %f : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  return %sum, %r1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A fill of something else than an empty (here an argument) is left shared:
// a clone would be one more write of the argument's alias set.
// CHECK-LABEL: func @fill_of_argument
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @fill_of_argument(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  %r0 = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %r1 = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Chains of in-place writes (max-chain=1, RUN line CHAIN): each op whose
// destination is the only use of the previous op's result writes into the
// same buffer; with no repeated block to end a segment, after twice
// max-chain ops the destination is a copy into a fresh empty (cuts at
// segment boundaries: msamp-split-shared-inits-segments.test).
// The fill starts the first chain, so the first sum is its second op and
// the second sum gets a copy. A result with a second use (%s3, returned)
// does not extend its chain (bufferization copies it for the later write
// anyway): %s4 starts a new one, and %s6 is its third op.
// RUN: msamp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(msamp-split-shared-inits{max-chain=1}))' | FileCheck %s --check-prefix=CHAIN
// CHAIN-LABEL: func @chain
// CHAIN-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHAIN: %[[F:.*]] = linalg.fill
// CHAIN-NEXT: %[[S1:.*]] = linalg.reduce ins(%[[X]] : tensor<8xf32>) outs(%[[F]] : tensor<f64>)
// CHAIN: %[[E1:.*]] = tensor.empty() : tensor<f64>
// CHAIN-NEXT: %[[C1:.*]] = linalg.copy ins(%[[S1]] : tensor<f64>) outs(%[[E1]] : tensor<f64>)
// CHAIN-NEXT: %[[S2:.*]] = linalg.reduce ins(%[[X]] : tensor<8xf32>) outs(%[[C1]] : tensor<f64>)
// CHAIN: %[[S3:.*]] = linalg.reduce ins(%[[X]] : tensor<8xf32>) outs(%[[S2]] : tensor<f64>)
// CHAIN: %[[S4:.*]] = linalg.reduce ins(%[[X]] : tensor<8xf32>) outs(%[[S3]] : tensor<f64>)
// CHAIN: %[[S5:.*]] = linalg.reduce ins(%[[X]] : tensor<8xf32>) outs(%[[S4]] : tensor<f64>)
// CHAIN: %[[E2:.*]] = tensor.empty() : tensor<f64>
// CHAIN-NEXT: %[[C2:.*]] = linalg.copy ins(%[[S5]] : tensor<f64>) outs(%[[E2]] : tensor<f64>)
// CHAIN-NEXT: %[[S6:.*]] = linalg.reduce ins(%[[X]] : tensor<8xf32>) outs(%[[C2]] : tensor<f64>)
// CHAIN-NOT: linalg.copy
// CHAIN: return %[[S3]], %[[S6]]
// At the default max-chain (128) this chain stays whole.
// CHECK-LABEL: func @chain
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @chain(%x: tensor<8xf32>) -> (tensor<f64>, tensor<f64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %s1 = linalg.reduce ins(%x : tensor<8xf32>) outs(%f : tensor<f64>) dimensions = [0]
    (%in: f32, %acc: f64) {
      %w = arith.extf %in : f32 to f64
      %s = arith.addf %acc, %w : f64
      linalg.yield %s : f64
    }
  %s2 = linalg.reduce ins(%x : tensor<8xf32>) outs(%s1 : tensor<f64>) dimensions = [0]
    (%in: f32, %acc: f64) {
      %w = arith.extf %in : f32 to f64
      %s = arith.addf %acc, %w : f64
      linalg.yield %s : f64
    }
  %s3 = linalg.reduce ins(%x : tensor<8xf32>) outs(%s2 : tensor<f64>) dimensions = [0]
    (%in: f32, %acc: f64) {
      %w = arith.extf %in : f32 to f64
      %s = arith.addf %acc, %w : f64
      linalg.yield %s : f64
    }
  %s4 = linalg.reduce ins(%x : tensor<8xf32>) outs(%s3 : tensor<f64>) dimensions = [0]
    (%in: f32, %acc: f64) {
      %w = arith.extf %in : f32 to f64
      %s = arith.addf %acc, %w : f64
      linalg.yield %s : f64
    }
  %s5 = linalg.reduce ins(%x : tensor<8xf32>) outs(%s4 : tensor<f64>) dimensions = [0]
    (%in: f32, %acc: f64) {
      %w = arith.extf %in : f32 to f64
      %s = arith.addf %acc, %w : f64
      linalg.yield %s : f64
    }
  %s6 = linalg.reduce ins(%x : tensor<8xf32>) outs(%s5 : tensor<f64>) dimensions = [0]
    (%in: f32, %acc: f64) {
      %w = arith.extf %in : f32 to f64
      %s = arith.addf %acc, %w : f64
      linalg.yield %s : f64
    }
  return %s3, %s6 : tensor<f64>, tensor<f64>
}
