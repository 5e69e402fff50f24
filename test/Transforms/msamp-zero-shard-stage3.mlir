// --msamp-zero-shard zero-stage=3: the shared MLP's O2 step (fc1.weight
// 5x3, fc1.bias 5, fc2.weight 2x5, fc2.bias 2) becomes rank R's step of a
// 2-rank group whose params are sharded like the masters
// (msamp-zero-shard.mlir has the groups: FP8 weights, rank 0 owns [0, 16)
// of 25 elements, rank 1 [16, 25); f32 biases, all rank 0's). Each param
// argument is the rank's 1-D piece, with the param's shape; each group is
// all-gathered just before its first reader in forward and, if backward
// reads it (fc2's dgrad GEMM; fc1 has no dgrad, the biases no reader), just
// before its first reader there; nothing is gathered at the end.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-verify-contract --inline --msamp-classify-gemms --msamp-synthesize-train-step=level=O2 --msamp-fp16-weights --msamp-fp8-gemms --msamp-fp8-weight-gradients --msamp-low-precision-optimizer -o %t.o2
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=0 zero-stage=3" | FileCheck %s --check-prefixes=BOTH,R0
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1 zero-stage=3" | FileCheck %s --check-prefixes=BOTH,R1
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1 zero-stage=3" --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// R0: func.func @train_step(%arg0: tensor<15xf8E4M3FN> {{{.*}}msamp.name = "fc1.weight", msamp.param_shape = array<i64: 5, 3>, msamp.role = "param", msamp.shard_offset = 0 : i64, msamp.sharded}, %arg1: tensor<5xf32> {{{.*}}msamp.name = "fc1.bias", msamp.param_shape = array<i64: 5>, {{.*}}msamp.sharded}, %arg2: tensor<1xf8E4M3FN> {{{.*}}msamp.name = "fc2.weight", msamp.param_shape = array<i64: 2, 5>, msamp.role = "param", msamp.shard_offset = 0 : i64, msamp.sharded}, %arg3: tensor<2xf32> {{{.*}}msamp.name = "fc2.bias"
// R1: func.func @train_step(%arg0: tensor<0xf8E4M3FN> {{{.*}}msamp.name = "fc1.weight", msamp.param_shape = array<i64: 5, 3>, {{.*}}msamp.sharded}, %arg1: tensor<0xf32> {{{.*}}msamp.name = "fc1.bias", {{.*}}%arg2: tensor<9xf8E4M3FN> {{{.*}}msamp.name = "fc2.weight", msamp.param_shape = array<i64: 2, 5>, msamp.role = "param", msamp.shard_offset = 1 : i64, msamp.sharded}, %arg3: tensor<0xf32>
// BOTH-SAME: msamp.zero = {rank = {{[01]}} : i64, stage = 3 : i64, world_size = 2 : i64}

// Forward: the FP8 weights, gathered before fc1's GEMM; rank 0 sends its
// pieces of both weights, rank 1 its piece of fc2.weight.
// R0: tensor.insert_slice %arg0 into %{{.*}}[0] [15] [1] : tensor<15xf8E4M3FN> into tensor<16xf8E4M3FN>
// R0: tensor.insert_slice %arg2 into %{{.*}}[15] [1] [1] : tensor<1xf8E4M3FN> into tensor<16xf8E4M3FN>
// R1: tensor.insert_slice %arg2 into %{{.*}}[0] [9] [1] : tensor<9xf8E4M3FN> into tensor<16xf8E4M3FN>
// BOTH: %[[W:.*]] = msamp.all_gather %{{.*}} {world_size = 2 : i64} : tensor<16xf8E4M3FN> -> tensor<32xf8E4M3FN>
// BOTH: %[[FC1:.*]] = tensor.extract_slice %[[W]][0] [15] [1]
// BOTH: %[[FC1W:.*]] = tensor.expand_shape %[[FC1]] {{.*}} into tensor<5x3xf8E4M3FN>
// BOTH: msamp.gemm %{{.*}}, %{{.*}}, %[[FC1W]], %{{.*}} {fast_accum, msamp.gemm = {kind = "fprop", layer = "fc1"
// The biases, before the first bias add.
// BOTH: msamp.all_gather %{{.*}} {world_size = 2 : i64} : tensor<16xf32> -> tensor<32xf32>
// BOTH: msamp.gemm {{.*}}kind = "fprop", layer = "fc2"
// Backward: the FP8 weights again, before fc2's dgrad.
// BOTH: msamp.gemm {{.*}}kind = "wgrad", layer = "fc2"
// BOTH: msamp.all_gather %{{.*}} {world_size = 2 : i64} : tensor<16xf8E4M3FN> -> tensor<32xf8E4M3FN>
// BOTH: msamp.gemm {{.*}}kind = "dgrad", layer = "fc2"
// Gradients reduce-scattered as at stage 2; no gather after them.
// BOTH: msamp.reduce_scatter sum
// BOTH: msamp.reduce_scatter mean
// BOTH-NOT: msamp.all_gather
// Rank 1 holds none of fc1's params: their pieces are returned unchanged.
// R1: return %{{[0-9]+}}, %arg0, %arg1, %{{[0-9]+}}, %arg3,

// REMARK: rank 1 of 2 owns 9 of 32 param elements in 2 flat groups: its pieces of the FP16 masters and optimizer states, and of the weights, all-gathered 3 times per step before their use (ZeRO stage 3)
