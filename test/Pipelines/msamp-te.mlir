// --msamp-te on the generated transformer block (level te, the Nvidia TE row
// of MS-AMP's level table, with Transformer Engine's DelayedScaling
// defaults): every Linear GEMM in FP8 (HYBRID: E4M3 forward, E5M2 output
// gradients), attention GEMMs f32, delayed scaling with an amax history of
// 1024 reduced with max and exact scales for every quantized tensor, the
// weights included; no MS-AMP warm-up. Weights, gradients and Adam moments
// stay f32 (16 bytes per param) plus the scaling state.
// RUN: %python -m msamp.graphs transformer-block -o %t.mlir
// RUN: msamp-opt %t.mlir --msamp-te | FileCheck %s
// RUN: msamp-opt %t.mlir --msamp-te --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: msamp-opt %t.mlir --msamp-te | grep -c "msamp.gemm %" | FileCheck %s --check-prefix=NGEMM
// RUN: msamp-opt %t.mlir --msamp-te | grep -c "msamp.compute_scale exact max" | FileCheck %s --check-prefix=NSCALE
// RUN: msamp-opt %t.mlir --msamp-te="fp8-format=e4m3 amax-history-len=16 amax-compute-algo=most_recent margin=1 wgrad-hp=true" | FileCheck %s --check-prefix=OPTS

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<64x64xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "attn.q_proj.weight", msamp.role = "param"}
// CHECK-SAME: tensor<1024xf32> {msamp.init = "zeros", msamp.name = "attn.q_proj.fprop.weight.amax_history", msamp.role = "scaling_state"}
// CHECK-SAME: msamp.level = "te"
// CHECK-SAME: msamp.recipe = {amax_compute_algo = "max", amax_history_len = 1024 : i64, delayed_weights = true, fp8_attention = false, fp8_format = "hybrid", interval = 1 : i64, margin = 0 : i64, reduce_amax = true, scale_kind = "exact", scaling = "delayed", warmup = false}
// No FP16 weights, no FP8 weight gradients, f32 Adam.
// CHECK-NOT: tensor<64x64xf16>
// CHECK: msamp.gemm {{.*}}kind = "fprop"{{.*}} : tensor<32x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<32x64xf32>
// CHECK: msamp.all_reduce mean %{{.+}} : tensor<64x64xf32>
// CHECK: msamp.adam_update param %{{.+}} : tensor<64x64xf32>, grad %{{.+}} : tensor<64x64xf32>

// 7 Linear layers x 3 GEMMs.
// NGEMM: 21
// One delayed scale per quantized tensor (no just-in-time scale at all):
// 7 inputs, 7 weights, 7 output gradients, of which q/k/v share their
// input (one cast) and their dgrad/wgrad share the output gradient: 5 + 7 +
// 7 = 19 next-step scales.
// NSCALE: 19

// REPORT: "level": "te",
// REPORT: "weights": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// REPORT-NEXT: "weight_grads": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "optimizer_m": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "optimizer_v": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "scaling_state": {"dtype":"f32","bytes":77900,

// Accelerate's TE fp8_config knobs reach the pass.
// OPTS: tensor<16xf32> {msamp.init = "zeros", msamp.name = "attn.q_proj.fprop.weight.amax_history"
// OPTS: msamp.recipe = {amax_compute_algo = "most_recent", amax_history_len = 16 : i64, delayed_weights = true, fp8_attention = false, fp8_format = "e4m3", interval = 1 : i64, margin = 1 : i64
// OPTS-NOT: f8E5M2
// OPTS-NOT: msamp.gemm %{{.*}}kind = "wgrad"
// OPTS: msamp.gemm {{.*}}kind = "dgrad"{{.*}} : tensor<32x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>
// OPTS-NOT: f8E5M2
// OPTS-NOT: msamp.gemm %{{.*}}kind = "wgrad"
