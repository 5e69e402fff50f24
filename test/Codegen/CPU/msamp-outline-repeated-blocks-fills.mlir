// RUN: msamp-opt %s --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2" | FileCheck %s

// A fill of a constant into an empty tensor (a reduction's start, shared by
// every layer after CSE; six layers, as the tandem-repeat search needs) is
// cloned into the function with its constant and empty, like a constant:
// the layer's function takes only its input and weight, and the step's
// fill, read by no one any more, is erased with its constant and empty.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: arith.constant
// CHECK-NOT: tensor.empty
// CHECK-NOT: linalg.fill
// CHECK-COUNT-6: call @train_step_block_0(%{{[^,]+}}, %{{[^,)]+}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func private @train_step_block_0(
// CHECK-SAME: %{{[^:]+}}: tensor<4x8xf32>, %{{[^:]+}}: tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[EMPTY:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4xf32>)
// CHECK: linalg.reduce ins(%{{.+}} : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
module {
  func.func @train_step(%x: tensor<4x8xf32>, %w0: tensor<4x8xf32>, %w1: tensor<4x8xf32>, %w2: tensor<4x8xf32>, %w3: tensor<4x8xf32>, %w4: tensor<4x8xf32>, %w5: tensor<4x8xf32>)
      -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      attributes {msamp.kind = "train_step"} {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    %m0 = arith.mulf %x, %w0 : tensor<4x8xf32>
    %a0 = arith.addf %m0, %x : tensor<4x8xf32>
    %n0 = arith.negf %a0 : tensor<4x8xf32>
    %s0 = linalg.reduce ins(%n0 : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) { %r = arith.addf %in, %acc : f32
                              linalg.yield %r : f32 }
    %m1 = arith.mulf %x, %w1 : tensor<4x8xf32>
    %a1 = arith.addf %m1, %x : tensor<4x8xf32>
    %n1 = arith.negf %a1 : tensor<4x8xf32>
    %s1 = linalg.reduce ins(%n1 : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) { %r = arith.addf %in, %acc : f32
                              linalg.yield %r : f32 }
    %m2 = arith.mulf %x, %w2 : tensor<4x8xf32>
    %a2 = arith.addf %m2, %x : tensor<4x8xf32>
    %n2 = arith.negf %a2 : tensor<4x8xf32>
    %s2 = linalg.reduce ins(%n2 : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) { %r = arith.addf %in, %acc : f32
                              linalg.yield %r : f32 }
    %m3 = arith.mulf %x, %w3 : tensor<4x8xf32>
    %a3 = arith.addf %m3, %x : tensor<4x8xf32>
    %n3 = arith.negf %a3 : tensor<4x8xf32>
    %s3 = linalg.reduce ins(%n3 : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) { %r = arith.addf %in, %acc : f32
                              linalg.yield %r : f32 }
    %m4 = arith.mulf %x, %w4 : tensor<4x8xf32>
    %a4 = arith.addf %m4, %x : tensor<4x8xf32>
    %n4 = arith.negf %a4 : tensor<4x8xf32>
    %s4 = linalg.reduce ins(%n4 : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) { %r = arith.addf %in, %acc : f32
                              linalg.yield %r : f32 }
    %m5 = arith.mulf %x, %w5 : tensor<4x8xf32>
    %a5 = arith.addf %m5, %x : tensor<4x8xf32>
    %n5 = arith.negf %a5 : tensor<4x8xf32>
    %s5 = linalg.reduce ins(%n5 : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) { %r = arith.addf %in, %acc : f32
                              linalg.yield %r : f32 }
    return %s0, %s1, %s2, %s3, %s4, %s5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
