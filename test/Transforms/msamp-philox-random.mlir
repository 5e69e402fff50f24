// --msamp-philox-random on torch-mlir's own output (Inputs/dropout.mlir:
// msamp.export of `d1(w + x) + F.dropout(lin(x), 0.5)` with nn.Dropout(0.25)):
// each seeded draw becomes msamp.random_uniform with its id in program order,
// keyed by the new rng.seed state, the step counter and the rank; the
// ml_program seed and its LCG are gone.
// RUN: msamp-opt %S/Inputs/dropout.mlir --msamp-verify-contract \
// RUN:   --msamp-synthesize-train-step --msamp-philox-random | FileCheck %s
//
// CHECK-NOT: ml_program
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"}
// CHECK-SAME: %[[SEED:[a-z0-9]+]]: tensor<i64> {msamp.init = "seed", msamp.name = "rng.seed", msamp.role = "rng_state"}
// CHECK-SAME: %[[RANK:[a-z0-9]+]]: tensor<i32> {msamp.name = "rank", msamp.role = "rank"}
// CHECK-NOT: tensor.insert
// CHECK: %[[U0:.*]] = msamp.random_uniform %[[SEED]], %[[STEP]], %[[RANK]] {high = 1.000000e+00 : f64, id = 0 : i64, low = 0.000000e+00 : f64} : tensor<i32> -> tensor<4x64xf64>
// CHECK: arith.cmpf olt
// CHECK: %[[U1:.*]] = msamp.random_uniform %[[SEED]], %[[STEP]], %[[RANK]] {high = 1.000000e+00 : f64, id = 1 : i64, low = 0.000000e+00 : f64} : tensor<i32> -> tensor<4x64xf64>
// CHECK-NOT: msamp.random_uniform
// The seed is state that no step changes: it has no result.
// CHECK-NOT: "rng.seed"
// CHECK: return
//
// A graph without randomness is left as it was: no rng.seed, no rank.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-synthesize-train-step \
// RUN:   --msamp-philox-random | FileCheck %s --check-prefix=NONE
// NONE-LABEL: func.func @train_step(
// NONE-NOT: rng
// NONE-NOT: "rank"
// NONE: return
//
// The whole --msamp-o2 pipeline keeps the draws through the FP8 passes.
// RUN: msamp-opt %S/Inputs/dropout.mlir --msamp-o2 | FileCheck %s --check-prefix=O2
// O2: msamp.random_uniform {{.*}}id = 0
// O2: msamp.random_uniform {{.*}}id = 1
