// --msamp-zero-shard: an O2 step of the shared MLP (fc1.weight 5x3,
// fc1.bias 5, fc2.weight 2x5, fc2.bias 2) becomes rank R's O3 step of a
// 2-rank group. Greedy partition by size: fc1.weight (15) -> rank 0,
// fc2.weight (10) -> rank 1, fc1.bias (5) -> rank 1 (10 < 15), fc2.bias
// (2) -> rank 0 (a tie goes to the first rank).
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-verify-contract --inline --msamp-classify-gemms --msamp-synthesize-train-step=level=O2 --msamp-fp16-weights --msamp-fp8-gemms --msamp-fp8-weight-gradients --msamp-low-precision-optimizer -o %t.o2
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=0" | FileCheck %s --check-prefix=R0
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1" | FileCheck %s --check-prefix=R1
// Idempotence: a step that is already one rank's is left alone.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1" -o %t.r1
// RUN: msamp-opt %t.r1 --msamp-zero-shard="world-size=2 rank=1" -o %t.r1.twice
// RUN: diff %t.r1 %t.r1.twice
// The remark says what the rank owns.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=1" --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// A world of one owns everything: the O2 state layout with FP8 weights.
// RUN: msamp-opt %t.o2 --msamp-zero-shard="world-size=1 rank=0" | FileCheck %s --check-prefix=ONE
// A rank outside the group is an error.
// RUN: not msamp-opt %t.o2 --msamp-zero-shard="world-size=2 rank=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADRANK

// Every rank: FP8 E4M3 GEMM weights with their scales, f32 biases.
// Rank 0 keeps the state of fc1.weight and fc2.bias, and fc1.weight's FP16
// master; fc1.bias and fc2.weight have no moments here.
// R0-LABEL: func.func @train_step(
// R0-SAME: %[[W1:arg[0-9]+]]: tensor<5x3xf8E4M3FN> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc1.weight", msamp.role = "param"}
// R0-SAME: tensor<5xf32> {msamp.init = "zeros", msamp.name = "fc1.bias", msamp.role = "param"}
// R0-SAME: %[[W2:arg[0-9]+]]: tensor<2x5xf8E4M3FN> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc2.weight", msamp.role = "param"}
// R0-SAME: msamp.name = "fc1.weight.exp_avg", msamp.role = "opt_state", msamp.sharded}
// R0-SAME: msamp.name = "fc1.weight.exp_avg_sq", msamp.role = "opt_state", msamp.sharded}
// R0-SAME: msamp.name = "fc2.bias.exp_avg", msamp.role = "opt_state", msamp.sharded}
// R0-SAME: msamp.name = "fc2.bias.exp_avg_sq", msamp.role = "opt_state", msamp.sharded}
// R0-SAME: %[[S1:arg[0-9]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc1.weight.scale", msamp.role = "scaling_state"}
// R0-SAME: %[[S2:arg[0-9]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc2.weight.scale", msamp.role = "scaling_state"}
// R0-SAME: %[[M1:arg[0-9]+]]: tensor<5x3xf16> {msamp.init = "from_param", msamp.name = "fc1.weight.master", msamp.role = "master_param", msamp.sharded}
// R0-SAME: %[[MS1:arg[0-9]+]]: tensor<f32> {msamp.init = "from_param", msamp.name = "fc1.weight.master.scale", msamp.role = "scaling_state", msamp.sharded}
// R0-SAME: msamp.name = "fc1.weight.master", msamp.role = "master_param", msamp.updates = 26 : i64
// R0-SAME: msamp.name = "fc1.weight.master.scale", msamp.role = "scaling_state", msamp.updates = 27 : i64
// R0-SAME: msamp.name = "fc1.weight", msamp.role = "param", msamp.updates = 0 : i64
// R0-SAME: msamp.name = "fc1.weight.scale", msamp.role = "scaling_state", msamp.updates = 12 : i64
// R0-SAME: msamp.level = "O3"
// R0-SAME: msamp.zero = {rank = 0 : i64, world_size = 2 : i64}
// R0-NOT: fc1.bias.exp_avg
// R0-NOT: fc2.weight.exp_avg
// The FP8 GEMMs read the stored E4M3 weight and its inverse scale.
// R0: %[[INV1:[0-9]+]] = arith.divf %{{.+}}, %[[S1]] : tensor<f32>
// R0: msamp.gemm %{{.+}}, %{{.+}}, %[[W1]], %{{[0-9]+}} {fast_accum, msamp.gemm = {kind = "fprop", layer = "fc1"
// Gradients go to their owners, FP8 ones with their inverse scales.
// R0: msamp.reduce mean %{{.+}} scale_inv %{{.+}} root 0 : tensor<5x3xf8E4M3FN>
// R0: msamp.adam_update param %[[M1]] scale %[[MS1]] : tensor<5x3xf16>, grad
// R0: msamp.reduce mean %{{.+}} root 1 : tensor<5xf32>
// R0: msamp.reduce mean %{{.+}} scale_inv %{{.+}} root 1 : tensor<2x5xf8E4M3FN>
// R0: msamp.reduce mean %{{.+}} root 0 : tensor<2xf32>
// R0: %[[NEW2:new_param[0-9_]*]], {{.+}} = msamp.adam_update param %{{.+}} : tensor<2xf32>
// R0-NOT: msamp.adam_update
// The new FP8 weight: the just-in-time E4M3 cast of the new master.
// R0: %[[REAL:[0-9]+]] = msamp.dequantize %new_param, %{{.+}} : tensor<5x3xf16> to tensor<5x3xf32>
// R0: %[[AMAX:[0-9]+]] = msamp.amax %[[REAL]]
// R0: %[[SCALE:[0-9]+]] = msamp.compute_scale pow2 most_recent %{{.+}}, %{{.+}} for f8E4M3FN
// R0: %[[Q:[0-9]+]] = msamp.quantize %[[REAL]], %[[SCALE]] : tensor<5x3xf32> to tensor<5x3xf8E4M3FN>
// Every param from its owner, in param order.
// R0: msamp.broadcast %[[Q]] root 0 : tensor<5x3xf8E4M3FN>
// R0: msamp.broadcast %[[SCALE]] root 0 : tensor<f32>
// R0: msamp.broadcast %{{.+}} root 1 : tensor<5xf32>
// R0: msamp.broadcast %[[W2]] root 1 : tensor<2x5xf8E4M3FN>
// R0: msamp.broadcast %[[S2]] root 1 : tensor<f32>
// R0: msamp.broadcast %[[NEW2]] root 0 : tensor<2xf32>
// R0: return

// Rank 1: the mirror image, same collectives in the same order.
// R1-LABEL: func.func @train_step(
// R1-SAME: msamp.name = "fc1.bias.exp_avg", msamp.role = "opt_state", msamp.sharded}
// R1-SAME: msamp.name = "fc2.weight.exp_avg", msamp.role = "opt_state", msamp.sharded}
// R1-SAME: tensor<2x5xf16> {msamp.init = "from_param", msamp.name = "fc2.weight.master", msamp.role = "master_param", msamp.sharded}
// R1-SAME: msamp.zero = {rank = 1 : i64, world_size = 2 : i64}
// R1-NOT: fc1.weight.exp_avg
// R1-NOT: fc1.weight.master
// R1: msamp.reduce mean %{{.+}} scale_inv %{{.+}} root 0 : tensor<5x3xf8E4M3FN>
// R1: msamp.reduce mean %{{.+}} root 1 : tensor<5xf32>
// R1: msamp.adam_update param %{{.+}} : tensor<5xf32>
// R1: msamp.reduce mean %{{.+}} scale_inv %{{.+}} root 1 : tensor<2x5xf8E4M3FN>
// R1: msamp.adam_update param %{{.+}} scale %{{.+}} : tensor<2x5xf16>
// R1: msamp.reduce mean %{{.+}} root 0 : tensor<2xf32>
// R1: msamp.broadcast %{{.+}} root 0 : tensor<5x3xf8E4M3FN>
// R1: msamp.broadcast %{{.+}} root 0 : tensor<f32>
// R1: msamp.broadcast %{{.+}} root 1 : tensor<5xf32>
// R1: msamp.broadcast %{{.+}} root 1 : tensor<2x5xf8E4M3FN>
// R1: msamp.broadcast %{{.+}} root 1 : tensor<f32>
// R1: msamp.broadcast %{{.+}} root 0 : tensor<2xf32>

// REMARK: remark: [Passed] zero-partition | Category:msamp:zero-shard | Remark="rank 1 of 2 owns 2 of 4 params (15 of 32 elements): their FP16 masters and optimizer states"

// ONE: fc1.weight.master
// ONE: fc2.weight.master
// ONE-COUNT-4: msamp.adam_update
// ONE-NOT: msamp.all_reduce mean

// BADRANK: error: --msamp-zero-shard: rank 2 is not a rank of world-size 2
