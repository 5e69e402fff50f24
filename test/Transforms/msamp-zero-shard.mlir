// --msamp-zero-shard: an O2 step of the shared MLP (fc1.weight 5x3,
// fc1.bias 5, fc2.weight 2x5, fc2.bias 2) becomes rank R's O3 step of a
// 2-rank group with even flat shards (issue 20). Two flat groups: the FP8
// GEMM weights (fc1.weight at 0, fc2.weight at 15: 25 elements, two
// 16-element units, rank 0 owns [0, 16), rank 1 [16, 25)) and the f32
// biases (7 elements, one unit, all rank 0's). Each group's collectives
// move shards of 16 elements.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-verify-contract --inline --msamp-classify-gemms --msamp-synthesize-train-step=level=O2 --msamp-fp16-weights --msamp-fp8-gemms --msamp-fp8-weight-gradients --msamp-low-precision-optimizer -o %t.o2
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=0" | FileCheck %s --check-prefixes=BOTH,R0
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1" | FileCheck %s --check-prefixes=BOTH,R1
// Idempotence: a step that is already one rank's is left alone.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1" -o %t.r1
// RUN: msamp-opt %t.r1 --msamp-zero-shard="world-size=2 rank=1" -o %t.r1.twice
// RUN: diff %t.r1 %t.r1.twice
// The remark says what the rank owns.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1" --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// Stage 1: the gradients stay all-reduced; each update reads its slice.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1 zero-stage=1" | FileCheck %s --check-prefix=STAGE1
// Buckets of at most bucket-mb MiB of gradient payload: 10 bytes puts every
// param in a bucket of its own, each with its reduce-scatter and all-gather.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1 bucket-mb=0.00001" | FileCheck %s --check-prefix=BUCKET
// A world of one owns everything: whole pieces, collectives of one.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=1 rank=0" | FileCheck %s --check-prefix=ONE
// A rank outside the group, or a stage that does not exist, is an error
// (stage 3: msamp-zero-shard-stage3.mlir).
// RUN: not msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADRANK
// RUN: not msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=0 zero-stage=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGE4
// RUN: not msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=0 bucket-mb=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUCKET0

// Every rank: FP8 E4M3 GEMM weights with their scales, f32 biases, and
// every scale (masters' and moments' included) replicated.
// BOTH-LABEL: func.func @train_step(
// BOTH-SAME: %[[W1:arg[0-9]+]]: tensor<5x3xf8E4M3FN> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc1.weight", msamp.role = "param"}
// BOTH-SAME: tensor<5xf32> {msamp.init = "zeros", msamp.name = "fc1.bias", msamp.role = "param"}
// BOTH-SAME: tensor<2x5xf8E4M3FN> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc2.weight", msamp.role = "param"}
// BOTH-SAME: %[[S1:arg[0-9]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc1.weight.scale", msamp.role = "scaling_state"}
// BOTH-SAME: tensor<f32> {msamp.init = "ones", msamp.name = "fc1.weight.exp_avg.scale", msamp.role = "scaling_state"}
// BOTH-SAME: tensor<f32> {msamp.init = "from_param", msamp.name = "fc1.weight.master.scale", msamp.role = "scaling_state"}
// Rank 0: all of fc1.weight, the first element of fc2.weight, the biases.
// R0-SAME: tensor<15xf16> {msamp.init = "from_param", msamp.name = "fc1.weight.master", msamp.role = "master_param", msamp.shard_offset = 0 : i64, msamp.sharded}
// R0-SAME: tensor<15xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc1.weight.exp_avg", msamp.role = "opt_state", msamp.shard_offset = 0 : i64, msamp.sharded}
// R0-SAME: tensor<15xf16> {msamp.init = "zeros", msamp.name = "fc1.weight.exp_avg_sq", msamp.role = "opt_state", msamp.shard_offset = 0 : i64, msamp.sharded}
// R0-SAME: tensor<5xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc1.bias.exp_avg", msamp.role = "opt_state", msamp.shard_offset = 0 : i64, msamp.sharded}
// R0-SAME: tensor<f32> {msamp.init = "from_param", msamp.name = "fc2.weight.master.scale", msamp.role = "scaling_state"}
// R0-SAME: tensor<1xf16> {msamp.init = "from_param", msamp.name = "fc2.weight.master", msamp.role = "master_param", msamp.shard_offset = 0 : i64, msamp.sharded}
// R0-SAME: tensor<2xf16> {msamp.init = "zeros", msamp.name = "fc2.bias.exp_avg_sq", msamp.role = "opt_state", msamp.shard_offset = 0 : i64, msamp.sharded}
// R0-SAME: msamp.level = "O3"
// R0-SAME: msamp.zero = {rank = 0 : i64, stage = 2 : i64, world_size = 2 : i64}
// Rank 1: the other 9 elements of fc2.weight, from its element 1.
// R1-NOT: fc1.weight.master"
// R1-NOT: fc1.bias.exp_avg"
// R1-SAME: tensor<f32> {msamp.init = "from_param", msamp.name = "fc2.weight.master.scale", msamp.role = "scaling_state"}
// R1-SAME: tensor<9xf16> {msamp.init = "from_param", msamp.name = "fc2.weight.master", msamp.role = "master_param", msamp.shard_offset = 1 : i64, msamp.sharded}
// R1-SAME: tensor<9xf8E4M3FN> {msamp.init = "zeros", msamp.name = "fc2.weight.exp_avg", msamp.role = "opt_state", msamp.shard_offset = 1 : i64, msamp.sharded}
// R1-SAME: msamp.zero = {rank = 1 : i64, stage = 2 : i64, world_size = 2 : i64}
// The FP8 GEMMs read the stored E4M3 weight and its inverse scale.
// BOTH: %[[INV1:[0-9]+]] = arith.divf %{{.+}}, %[[S1]] : tensor<f32>
// BOTH: msamp.gemm %{{.+}}, %{{.+}}, %[[W1]], %{{[0-9]+}} {fast_accum, msamp.gemm = {kind = "fprop", layer = "fc1"
// The same collectives on every rank, in the same order: one
// reduce-scatter per group (FP8 codes summed, f32 averaged) ...
// BOTH: msamp.reduce_scatter sum %{{.+}} {world_size = 2 : i64} : tensor<32xf8E4M3FN> -> tensor<16xf8E4M3FN>
// BOTH: msamp.reduce_scatter mean %{{.+}} {world_size = 2 : i64} : tensor<32xf32> -> tensor<16xf32>
// ... the f32 update of each piece this rank holds ...
// R0: msamp.adam_update param %{{.+}} : tensor<15xf32>, grad %{{.+}} scale_inv %{{.+}} : tensor<15xf8E4M3FN>, exp_avg %{{.+}} : tensor<15xf32>
// R0: msamp.adam_update param %{{.+}} : tensor<5xf32>, grad %{{.+}} : tensor<5xf32>
// R0: msamp.adam_update param %{{.+}} : tensor<1xf32>, grad %{{.+}} scale_inv %{{.+}} : tensor<1xf8E4M3FN>
// R0: msamp.adam_update param %{{.+}} : tensor<2xf32>, grad %{{.+}} : tensor<2xf32>
// R1: msamp.adam_update param %{{.+}} : tensor<9xf32>, grad %{{.+}} scale_inv %{{.+}} : tensor<9xf8E4M3FN>, exp_avg %{{.+}} : tensor<9xf32>
// BOTH-NOT: msamp.adam_update
// ... one max all-reduce of the amaxes of the 10 new scaled tensors (2
// masters, 8 moments; 0 for pieces a rank does not hold), their
// whole-tensor scales, then one of the 2 new FP8 weights' amaxes ...
// BOTH: msamp.all_reduce max %{{.+}} : tensor<10xf32>
// BOTH-COUNT-10: msamp.compute_scale pow2 most_recent
// BOTH: msamp.all_reduce max %{{.+}} : tensor<2xf32>
// BOTH-COUNT-2: msamp.compute_scale pow2 most_recent %{{.+}}, %{{.+}} for f8E4M3FN
// ... and one all-gather per group.
// BOTH: msamp.all_gather %{{.+}} {world_size = 2 : i64} : tensor<16xf8E4M3FN> -> tensor<32xf8E4M3FN>
// BOTH: msamp.all_gather %{{.+}} {world_size = 2 : i64} : tensor<16xf32> -> tensor<32xf32>
// BOTH: return

// REMARK: remark: [Passed] zero-partition | Category:msamp:zero-shard | Remark="rank 1 of 2 owns 9 of 32 param elements in 2 flat groups: its pieces of the FP16 masters and optimizer states (ZeRO stage 2)"

// STAGE1-NOT: msamp.reduce_scatter
// STAGE1: msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} {msamp.zero_grad} : tensor<5x3xf8E4M3FN>
// STAGE1: msamp.all_reduce mean %{{.+}} {msamp.zero_grad} : tensor<5xf32>
// STAGE1: msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} {msamp.zero_grad} : tensor<2x5xf8E4M3FN>
// STAGE1: msamp.adam_update param %{{.+}} : tensor<9xf32>, grad %{{.+}} scale_inv %{{.+}} : tensor<9xf8E4M3FN>
// STAGE1-NOT: msamp.reduce_scatter
// STAGE1: msamp.all_gather

// BUCKET: msamp.reduce_scatter sum %{{.+}} : tensor<32xf8E4M3FN> -> tensor<16xf8E4M3FN>
// BUCKET: msamp.reduce_scatter mean %{{.+}} : tensor<32xf32> -> tensor<16xf32>
// BUCKET: msamp.reduce_scatter sum %{{.+}} : tensor<32xf8E4M3FN> -> tensor<16xf8E4M3FN>
// BUCKET: msamp.reduce_scatter mean %{{.+}} : tensor<32xf32> -> tensor<16xf32>
// BUCKET-NOT: msamp.reduce_scatter
// BUCKET-COUNT-4: msamp.all_gather

// ONE: tensor<15xf16> {msamp.init = "from_param", msamp.name = "fc1.weight.master"
// ONE: tensor<10xf16> {msamp.init = "from_param", msamp.name = "fc2.weight.master"
// ONE: msamp.reduce_scatter sum %{{.+}} {world_size = 1 : i64} : tensor<32xf8E4M3FN> -> tensor<32xf8E4M3FN>
// ONE-COUNT-4: msamp.adam_update

// BADRANK: error: --msamp-zero-shard: rank 2 is not a rank of world-size 2
// BUCKET0: error: --msamp-zero-shard: bucket-mb 0.000000e+00 is not a positive number of MiB
// STAGE4: error: --msamp-zero-shard: zero-stage 4 is not a ZeRO stage; expected 1 (optimizer states and masters sharded), 2 (gradients too) or 3 (weights too)
