// --msamp-lower-random-uniform: msamp.random_uniform becomes one
// linalg.generic of integer arithmetic, Philox4x32-10 of
// include/MSAMP/Numerics/Philox.h (ten rounds: ten products by each
// multiplier, nine key bumps by each Weyl constant), with the seed, step and
// rank read as 0-d inputs of the generic. (The numbers themselves are
// checked against an independent Philox in
// test/Tools/msamp-run/Randomness/dropout-masks.test.)
// RUN: msamp-opt %s --msamp-lower-random-uniform | FileCheck %s
// Three ops below: 3 x 10 products by M0 = 0xD2511F53 and 3 x 9 key bumps
// by W0 = 0x9E3779B9 (as i32: -1640531527), each with its own constant.
// RUN: msamp-opt %s --msamp-lower-random-uniform | grep -c "arith.constant 3528531795 : i64" | FileCheck %s --check-prefix=M0
// RUN: msamp-opt %s --msamp-lower-random-uniform | grep -c "arith.constant -1640531527 : i32" | FileCheck %s --check-prefix=W0
// M0: 30
// W0: 27

// CHECK-LABEL: func.func @draws
// CHECK-NOT: msamp.random_uniform
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf64>
// CHECK: linalg.generic {indexing_maps = [#[[S:map[0-9]*]], #[[S]], #[[S]], #[[I:map[0-9]*]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1, %arg2 : tensor<i64>, tensor<i64>, tensor<i32>) outs(%[[E]] : tensor<2x3xf64>)
// CHECK: ^bb0(%[[SEED:.*]]: i64, %[[STEP:.*]]: i64, %[[RANK:.*]]: i32, %{{.*}}: f64):
// Row-major element index, the counter's word 0; word 1 is the op id.
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.index_castui {{.*}} : index to i32
// CHECK: arith.trunci %[[STEP]] : i64 to i32
// CHECK: arith.trunci %[[SEED]] : i64 to i32
// CHECK: arith.shrui %[[SEED]]
// The top 53 of the 64 bits, times 2^-53, exact in f64.
// CHECK: arith.shrui %{{.*}}, %c11_i64
// CHECK: %[[F0:.*]] = arith.uitofp %{{.*}} : i64 to f64
// CHECK: %[[TWO53:.*]] = arith.constant 1.1102230246251565E-16 : f64
// CHECK: %[[U0:.*]] = arith.mulf %[[F0]], %[[TWO53]] : f64
// CHECK-NEXT: linalg.yield %[[U0]] : f64
//
// Another interval is scaled after the draw; f32 numbers are rounded from f64.
// CHECK: linalg.generic
// CHECK: %[[F:.*]] = arith.uitofp
// CHECK: %[[U:.*]] = arith.mulf %[[F]]
// CHECK: %[[WIDTH:.*]] = arith.constant 4.000000e+00 : f64
// CHECK: %[[SCALED:.*]] = arith.mulf %[[U]], %[[WIDTH]]
// CHECK: %[[LOW:.*]] = arith.constant -2.000000e+00 : f64
// CHECK: %[[V:.*]] = arith.addf %[[SCALED]], %[[LOW]]
// CHECK: arith.truncf %[[V]] : f64 to f32
func.func @draws(%seed: tensor<i64>, %step: tensor<i64>, %rank: tensor<i32>)
    -> (tensor<2x3xf64>, tensor<4xf32>) {
  %u = msamp.random_uniform %seed, %step, %rank {id = 5 : i64, low = 0.0 : f64, high = 1.0 : f64} : tensor<i32> -> tensor<2x3xf64>
  %v = msamp.random_uniform %seed, %step, %rank {id = 6 : i64, low = -2.0 : f64, high = 2.0 : f64} : tensor<i32> -> tensor<4xf32>
  return %u, %v : tensor<2x3xf64>, tensor<4xf32>
}

// A rank-1 draw: the element index is the loop index.
func.func @one(%seed: tensor<i64>, %step: tensor<i64>, %rank: tensor<i32>) -> tensor<8xf64> {
  %u = msamp.random_uniform %seed, %step, %rank {id = 0 : i64, low = 0.0 : f64, high = 1.0 : f64} : tensor<i32> -> tensor<8xf64>
  return %u : tensor<8xf64>
}
