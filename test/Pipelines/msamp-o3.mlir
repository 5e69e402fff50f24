// --msamp-o3: O2 plus FP8 E4M3 weights (replicated) and ZeRO-sharded FP16
// master weights and optimizer states in even flat shards (issue 20); each
// rank compiles its own program (world-size=N rank=R), and the memory report
// is that rank's. At ZeRO stage 2 (the default) per rank about 1 (FP8
// weights) + (2 + 1 + 2 + 1) / N (master, m, v, reduce-scattered FP8
// gradients) bytes/param; every rank owns the same number of 16-element
// units of each flat group (the group's units are a multiple of 4 here), so
// the four ranks' reports are identical.
// RUN: %python -m msamp.graphs transformer-block -o %t.mlir
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=2 rank=1" | FileCheck %s
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=1 rank=0" --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=N1
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=4 rank=0" --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=N4R0
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=4 rank=2" --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=N4R2
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=4 rank=3" --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=N4R3
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=4 rank=3" --msamp-memory-report -o /dev/null | FileCheck %s --check-prefix=TABLE
// The overflow check reads the recorded amax of every reduce-scattered FP8
// gradient piece (found through its inverse scale), as at O2.
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=4 rank=3" --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// The manifest records the group, the rank and the sharded state.
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=4 rank=3" --msamp-emit-manifest=%t.json -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.json
// A rank outside the group is refused.
// RUN: not msamp-opt %t.mlir --msamp-o3="world-size=2 rank=5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<64x64xf8E4M3FN> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "attn.q_proj.weight", msamp.role = "param"}
// CHECK-SAME: msamp.level = "O3"
// CHECK-SAME: msamp.zero = {rank = 1 : i64, stage = 2 : i64, world_size = 2 : i64}
// CHECK: msamp.reduce_scatter sum
// The partial sums of squares of the gradient pieces, summed over ranks.
// CHECK: msamp.all_reduce sum %{{.+}} : tensor<f32>
// CHECK: msamp.all_gather

// One rank holds everything: FP8 weights plus FP16 masters cost 1 byte/param
// more than O2's FP16 weights; O3 pays off from two ranks on.
// N1: "level": "O3",
// N1-NEXT: "params": 54144,
// N1-NEXT: "world_size": 1,
// N1-NEXT: "rank": 0,
// N1-NEXT: "bytes_per_param": 7.08
// N1: "master_weights": {"dtype":"f16","bytes":106496,
// N1: "optimizer_m": {"dtype":"f8E4M3FN","bytes":54144,
// N1-NEXT: "optimizer_v": {"dtype":"f16","bytes":108288,

// Four ranks: the masters (106496 bytes), m (54144) and v (108288) of N1
// split in four equal quarters on every rank; the FP8 gradients are the
// 1/4 shard of their reduce-scatter (plus the f32 biases' group).
// N4R0: "world_size": 4,
// N4R0-NEXT: "rank": 0,
// N4R0-NEXT: "bytes_per_param": 2.57
// N4R0: "weights": {"dtype":"mixed","bytes":56832,
// N4R0-NEXT: "master_weights": {"dtype":"f16","bytes":26624,
// N4R0-NEXT: "weight_grads": {"dtype":"mixed","bytes":14208,
// N4R0-NEXT: "optimizer_m": {"dtype":"f8E4M3FN","bytes":13536,
// N4R0-NEXT: "optimizer_v": {"dtype":"f16","bytes":27072,
// N4R2: "bytes_per_param": 2.57
// N4R2: "master_weights": {"dtype":"f16","bytes":26624,
// N4R2: "optimizer_m": {"dtype":"f8E4M3FN","bytes":13536,
// N4R2-NEXT: "optimizer_v": {"dtype":"f16","bytes":27072,
// N4R3: "bytes_per_param": 2.57
// N4R3: "master_weights": {"dtype":"f16","bytes":26624,
// N4R3: "optimizer_m": {"dtype":"f8E4M3FN","bytes":13536,
// N4R3-NEXT: "optimizer_v": {"dtype":"f16","bytes":27072,

// TABLE: msamp memory report: @train_step, level O3, 54144 params, rank 3 of 4

// MANIFEST: "level": "O3",
// MANIFEST-NEXT: "world_size": 4,
// MANIFEST-NEXT: "rank": 3,
// MANIFEST: {"name":"attn.q_proj.weight","role":"param","shape":[64,64],"dtype":"f8E4M3FN","init":"normal(0,0.02)",
// MANIFEST: {"name":"mlp.fc2.weight.master","role":"master_param","shape":[9216],{{.*}}"sharded":true,"shard_offset":7168}

// OVERFLOW-NOT: grad-overflow-undetected
// OVERFLOW: Remark="global gradient norm and clipping over 5 gradients (2 FP8/f16, dequantized), 2 recorded amaxes checked for overflow"
// OVERFLOW-NOT: grad-overflow-undetected

// BAD: error: --msamp-zero-shard: rank 5 is not a rank of world-size 2
