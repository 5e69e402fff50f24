// --msamp-o2: O1 plus MS-AMP's low-bit Adam states, FP8 E4M3 first moment
// and FP16 second moment with per-tensor scales, for every param (biases and
// norms too): about 2 + 1 + 1 + 2 = 6 bytes per param.
// RUN: %python -m msamp.graphs transformer-block -o %t.mlir
// RUN: msamp-opt %t.mlir --msamp-o2 | FileCheck %s
// RUN: msamp-opt %t.mlir --msamp-o2 --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2 --msamp-memory-report -o /dev/null | FileCheck %s --check-prefix=TABLE

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<64xf8E4M3FN> {msamp.init = "zeros", msamp.name = "ln1.weight.exp_avg", msamp.role = "opt_state"}
// CHECK-SAME: tensor<64x64xf8E4M3FN> {msamp.init = "zeros", msamp.name = "attn.q_proj.weight.exp_avg", msamp.role = "opt_state"}
// CHECK-SAME: tensor<64x64xf16> {msamp.init = "zeros", msamp.name = "attn.q_proj.weight.exp_avg_sq", msamp.role = "opt_state"}
// CHECK-SAME: {msamp.init = "ones", msamp.name = "attn.q_proj.weight.exp_avg.scale", msamp.role = "scaling_state"}
// CHECK-SAME: msamp.level = "O2"
// CHECK: msamp.adam_update param %{{.+}} scale %{{.+}} : tensor<64x64xf16>, grad %{{.+}} scale_inv %{{.+}} : tensor<64x64xf8E4M3FN>, exp_avg %{{.+}} scale %{{.+}} : tensor<64x64xf8E4M3FN>, exp_avg_sq %{{.+}} scale %{{.+}} : tensor<64x64xf16>

// REPORT: "level": "O2",
// REPORT-NEXT: "params": 54144,
// REPORT-NEXT: "bytes_per_param": 6.10
// REPORT: "optimizer_m": {"dtype":"f8E4M3FN","bytes":54144,"bytes_per_param":1},
// REPORT-NEXT: "optimizer_v": {"dtype":"f16","bytes":108288,"bytes_per_param":2},

// TABLE: msamp memory report: @train_step, level O2, 32 params
// TABLE: optimizer_m     f8E4M3FN
// TABLE: optimizer_v     f16
