// --msamp-o1 on the generated transformer block (MS-AMP's O1): every Linear
// GEMM (fprop, dgrad, wgrad) runs in FP8 with E4M3 forward operands and E5M2
// output gradients, attention GEMMs stay f32 (fp8-attention=false), GEMM
// weights are stored FP16 + scale, their gradients FP8 E4M3 reduced as FP8
// payloads, Adam moments stay f32: about 2 + 1 + 4 + 4 = 11 bytes per param.
// RUN: %python -m msamp.graphs transformer-block -o %t.mlir
// RUN: msamp-opt %t.mlir --msamp-o1 | FileCheck %s
// RUN: msamp-opt %t.mlir --msamp-o1 --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: msamp-opt %t.mlir --msamp-o1="fp8-attention=true" | FileCheck %s --check-prefix=ATTN
// RUN: msamp-opt %t.mlir --msamp-o1 --msamp-emit-manifest=%t.json -o /dev/null
// RUN: %python -c "import json; d = json.load(open('%t.json')); print(d['level'], len([s for s in d['state'] if s['dtype'] == 'f16' and s['role'] == 'param']))" | FileCheck %s --check-prefix=MANIFEST

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<64x64xf16> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "attn.q_proj.weight", msamp.role = "param"}
// CHECK-SAME: tensor<64xf32> {msamp.init = "zeros", msamp.name = "attn.q_proj.bias", msamp.role = "param"}
// CHECK-SAME: {msamp.init = "from_param", msamp.name = "attn.q_proj.weight.scale", msamp.role = "scaling_state"}
// CHECK-SAME: msamp.level = "O1"
// No Linear GEMM is left in f32; the six attention GEMMs are.
// CHECK-NOT: linalg.matmul
// CHECK-COUNT-6: linalg.batch_matmul
// CHECK-NOT: linalg.matmul
// Weight gradients: FP8 with a shared scale from the global amax.
// CHECK: msamp.all_reduce max
// CHECK: msamp.all_reduce mean %{{.+}} scale_inv %{{.+}} : tensor<{{[0-9x]+}}xf8E4M3FN>
// CHECK: msamp.adam_update param %{{.+}} scale %{{.+}} : tensor<{{[0-9x]+}}xf16>, grad %{{.+}} scale_inv %{{.+}} : tensor<{{[0-9x]+}}xf8E4M3FN>, exp_avg %{{.+}} : tensor<{{[0-9x]+}}xf32>

// 21 Linear GEMMs with their operand formats.
// RUN: msamp-opt %t.mlir --msamp-o1 | grep -c "msamp.gemm %" | FileCheck %s --check-prefix=NGEMM
// NGEMM: 21
// RUN: msamp-opt %t.mlir --msamp-o1 | grep "msamp.gemm %" | grep -c "xf8E5M2>, tensor<[0-9x]*xf8E4M3FN> ->" | FileCheck %s --check-prefix=NBACKWARD
// RUN: msamp-opt %t.mlir --msamp-o1 | grep "msamp.gemm %" | grep -c "fast_accum" | FileCheck %s --check-prefix=NFORWARD
// 7 Linear layers: 7 forward GEMMs (fast accumulation) and 14 backward GEMMs
// with an E5M2 output gradient.
// NFORWARD: 7
// NBACKWARD: 14

// REPORT: "level": "O1",
// REPORT-NEXT: "params": 54144,
// REPORT-NEXT: "bytes_per_param": 11.09
// REPORT: "weights": {"dtype":"mixed","bytes":110080,
// REPORT-NEXT: "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// REPORT-NEXT: "weight_grads": {"dtype":"mixed","bytes":56832,
// REPORT-NEXT: "optimizer_m": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "optimizer_v": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "scaling_state": {"dtype":"f32",

// With fp8-attention=true the attention GEMMs run in FP8 too.
// ATTN-LABEL: func.func @train_step(
// ATTN-NOT: linalg.batch_matmul
// ATTN: msamp.gemm {{.*}}kind = "attention_fwd"

// MANIFEST: O1 7
