// --msamp-zero-shard on a tied embedding (GPT-2's wte = lm_head): the token
// embedding's FP16 value is gathered by the embedding and cast to E4M3 for
// the head GEMM. Stored as E4M3, the gather would read E4M3 values where
// the O2 step reads FP16 ones (the losses differed from step 1), so it
// stays FP16 + scale on every rank (its own master: no separate one), each
// rank updating its flat piece (with the moments of that piece) and the
// group all-gathering the new FP16 values; weights that only FP8 GEMMs read
// are still stored as E4M3.
// RUN: %python -m msamp.graphs transformer-lm --dim 16 --heads 2 --seq 4 --ffn 32 \
// RUN:   --vocab 16 --layers 1 --batch 2 --tie-embeddings -o %t.mlir
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=2 rank=0" --remarks-filter=msamp \
// RUN:   -o %t.r0 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.r0
// RUN: msamp-opt %t.mlir --msamp-o3="world-size=2 rank=1" | FileCheck %s --check-prefix=R1

// REMARK: remark: [Passed] zero-fp16-weight {{.*}} Remark="'tok_emb.weight' stays FP16 on every rank: its value is read by more than FP8 GEMMs (a tied weight)"
// REMARK-NOT: zero-fp16-weight

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[TOK:arg[0-9]+]]: tensor<16x16xf16> {msamp.gemm_weight, {{.*}}msamp.name = "tok_emb.weight", msamp.role = "param"}
// CHECK-SAME: tensor<16x16xf8E4M3FN> {msamp.gemm_weight, {{.*}}msamp.name = "layers.0.attn.q_proj.weight", msamp.role = "param"}
// CHECK-SAME: msamp.name = "tok_emb.weight.scale", msamp.role = "scaling_state"}
// CHECK-NOT: msamp.name = "tok_emb.weight.master"
// The gather and the head's just-in-time cast read the FP16 value.
// CHECK: %[[REAL:[0-9]+]] = msamp.dequantize %[[TOK]], %{{.+}} : tensor<16x16xf16> to tensor<16x16xf32>
// CHECK: msamp.quantize %[[REAL]], %{{.+}} : tensor<16x16xf32> to tensor<16x16xf8E4M3FN>
// CHECK: tensor.extract %[[REAL]]
// Each rank's new FP16 piece (half of the 256 elements) is all-gathered.
// CHECK: msamp.all_gather %{{.+}} {world_size = 2 : i64} : tensor<128xf16> -> tensor<256xf16>

// R1-LABEL: func.func @train_step(
// R1-SAME: tensor<16x16xf16> {msamp.gemm_weight, {{.*}}msamp.name = "tok_emb.weight", msamp.role = "param"}
// R1-SAME: tensor<128xf16> {msamp.init = "zeros", msamp.name = "tok_emb.weight.exp_avg_sq", msamp.role = "opt_state", msamp.shard_offset = 128 : i64, msamp.sharded}
// R1: msamp.all_gather %{{.+}} {world_size = 2 : i64} : tensor<128xf16> -> tensor<256xf16>
