// --msamp-dropout-training on torch-mlir's own output (Inputs/dropout-kinds.mlir:
// nn.Dropout(0.3) on x, timm DropPath(0.2) on lin(x), and torch.rand_like):
// each dropout's compare and scale read the new hyperparam `training`; with
// training = 0 the mask is all true and the scaled mask exactly 1.0. The
// rand_like draw is no dropout (PyTorch draws it in eval mode too): untouched.
// RUN: msamp-opt %S/Inputs/dropout-kinds.mlir --msamp-verify-contract \
// RUN:   --msamp-synthesize-train-step --msamp-philox-random \
// RUN:   --msamp-dropout-training | FileCheck %s
//
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<f32> {msamp.name = "training", msamp.role = "hyperparam"})
//
// nn.Dropout(0.3): u < 0.7 unless evaluating; 0/1 divided by 0.7, or 1.0.
// CHECK: %[[U0:.*]] = msamp.random_uniform {{.*}}id = 0
// CHECK: %[[M0:.*]] = linalg.generic {{.*}} ins(%[[U0]], %{{.*}}, %[[T]] : tensor<4x8xf64>, tensor<f64>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN0:.*]]: f64, %[[KEEP0:.*]]: f64, %[[FLAG0:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT:   %[[CMP0:.*]] = arith.cmpf olt, %[[IN0]], %[[KEEP0]] : f64
// CHECK-NEXT:   %[[ZERO0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[ON0:.*]] = arith.cmpf une, %[[FLAG0]], %[[ZERO0]] : f32
// CHECK-NEXT:   %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:   %[[SEL0:.*]] = arith.select %[[ON0]], %[[CMP0]], %[[TRUE]] : i1
// CHECK-NEXT:   linalg.yield %[[SEL0]] : i1
// CHECK: %[[F0:.*]] = linalg.generic {{.*}} ins(%[[M0]] : tensor<4x8xi1>)
// CHECK: linalg.generic {{.*}} ins(%[[F0]], %[[T]] : tensor<4x8xf32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN1:.*]]: f32, %[[FLAG1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[K1:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT:   %[[DIV1:.*]] = arith.divf %[[IN1]], %[[K1]] : f32
// CHECK-NEXT:   %[[ZERO1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[ON1:.*]] = arith.cmpf une, %[[FLAG1]], %[[ZERO1]] : f32
// CHECK-NEXT:   %[[ONE1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[SEL1:.*]] = arith.select %[[ON1]], %[[DIV1]], %[[ONE1]] : f32
// CHECK-NEXT:   linalg.yield %[[SEL1]] : f32
//
// DropPath(0.2): one number per sample, gated the same way.
// CHECK: %[[U1:.*]] = msamp.random_uniform {{.*}}id = 1{{.*}} -> tensor<4x1xf64>
// CHECK: linalg.generic {{.*}} ins(%[[U1]], %{{.*}}, %[[T]] : tensor<4x1xf64>, tensor<f64>, tensor<f32>)
// CHECK: arith.select
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<4x1xf32>, tensor<f32>)
// CHECK: arith.divf
// CHECK: arith.select
//
// rand_like: the draw's user does not read `training`.
// CHECK: %[[U2:.*]] = msamp.random_uniform {{.*}}id = 2
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[U2]] : tensor<4x8xf32>)
// CHECK-NOT: %[[T]]
// CHECK: return
//
// The whole --msamp-o0 pipeline keeps the gates (canonicalization folds
// nothing of them).
// RUN: msamp-opt %S/Inputs/dropout-kinds.mlir --msamp-o0 2>/dev/null | FileCheck %s --check-prefix=O0
// O0-COUNT-4: arith.cmpf une
// O0-NOT: arith.cmpf une
//
// A graph without dropout (no draws; or torch-mlir's Inputs/mlp.mlir) gains
// no input.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-synthesize-train-step \
// RUN:   --msamp-philox-random --msamp-dropout-training | FileCheck %s --check-prefix=NONE
// NONE-LABEL: func.func @train_step(
// NONE-NOT: "training"
// NONE: return
//
// A graph that already has an argument named "training" (here the input x
// renamed) is an error at that argument, not a second input of that name.
// RUN: sed 's/msamp.name = "x"/msamp.name = "training"/' %S/Inputs/dropout-kinds.mlir \
// RUN:   | not msamp-opt --msamp-verify-contract --msamp-synthesize-train-step \
// RUN:     --msamp-philox-random --msamp-dropout-training 2>&1 | FileCheck %s --check-prefix=CLASH
// CLASH: error: --msamp-dropout-training: @train_step already has an argument named 'training', the input this pass adds to gate dropout; rename it
