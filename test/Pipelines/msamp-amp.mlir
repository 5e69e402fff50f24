// --msamp-amp on the generated transformer block (levels amp-bf16 and
// amp-fp16, the FP16 AMP row of MS-AMP's level table): every GEMM, the six
// attention GEMMs included (autocast runs every matmul in 16 bit), is an
// msamp.gemm with bf16 (or f16) operands and an f32 result; weights,
// gradients and Adam moments stay f32: 4 + 4 + 4 + 4 = 16 bytes per param.
// RUN: %python -m msamp.graphs transformer-block -o %t.mlir
// RUN: msamp-opt %t.mlir --msamp-amp | FileCheck %s
// RUN: msamp-opt %t.mlir --msamp-amp="dtype=fp16" | FileCheck %s --check-prefix=FP16
// RUN: msamp-opt %t.mlir --msamp-amp --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: msamp-opt %t.mlir --msamp-amp | grep -c "msamp.gemm %.* : tensor<[0-9x]*xbf16>, tensor<[0-9x]*xbf16> -> tensor<[0-9x]*xf32>" | FileCheck %s --check-prefix=NGEMM
// RUN: msamp-opt %t.mlir --msamp-amp="dtype=fp16" | grep -c "msamp.gemm %.* : tensor<[0-9x]*xf16>, tensor<[0-9x]*xf16> -> tensor<[0-9x]*xf32>" | FileCheck %s --check-prefix=NGEMM
// RUN: not msamp-opt %t.mlir --msamp-amp="dtype=fp8" 2>&1 | FileCheck %s --check-prefix=BADTYPE

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<64x64xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "attn.q_proj.weight", msamp.role = "param"}
// CHECK-NOT: loss_scale
// CHECK-SAME: msamp.level = "amp-bf16"
// No GEMM is left in f32, no FP8 anywhere, and the bf16 rounding is integer
// arithmetic (round to nearest even, NaN kept quiet), not a truncf that
// would become a libcall on hosts without AVX512-BF16.
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: f8E
// CHECK-NOT: to bf16
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.addi
// CHECK: arith.bitcast %{{.+}} : i16 to bf16
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {msamp.gemm = {kind = "fprop", layer = "attn.q_proj"{{.*}}} : tensor<32x64xbf16>, tensor<64x64xbf16> -> tensor<32x64xf32>
// CHECK: msamp.gemm {{.*}}kind = "attention_fwd"{{.*}} : tensor<8x16x16xbf16>, tensor<8x16x16xbf16> -> tensor<8x16x16xf32>
// The gradients are all-reduced and applied in f32.
// CHECK: msamp.all_reduce mean %{{.+}} : tensor<64x64xf32>
// CHECK: msamp.adam_update param %{{.+}} : tensor<64x64xf32>, grad %{{.+}} : tensor<64x64xf32>

// fp16 carries GradScaler's dynamic loss scale (bf16 needs none).
// FP16: msamp.name = "loss_scale", msamp.role = "loss_scale"
// FP16-SAME: msamp.name = "loss_scale_overflow", msamp.role = "metric"
// FP16-SAME: msamp.level = "amp-fp16"
// FP16: arith.truncf %{{.+}} : f32 to f16
// FP16: msamp.gemm {{.*}} : tensor<32x64xf16>, tensor<64x64xf16> -> tensor<32x64xf32>

// 7 Linear layers x 3 GEMMs + 6 attention GEMMs.
// NGEMM: 27

// REPORT: "level": "amp-bf16",
// REPORT-NEXT: "params": 54144,
// REPORT-NEXT: "bytes_per_param": 16.0001
// REPORT: "weights": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// REPORT-NEXT: "weight_grads": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "optimizer_m": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "optimizer_v": {"dtype":"f32","bytes":216576,"bytes_per_param":4},
// REPORT-NEXT: "scaling_state": {"dtype":"none","bytes":0,"bytes_per_param":0},

// BADTYPE: for the --dtype option: 'fp8' is not one of: bf16, fp16
