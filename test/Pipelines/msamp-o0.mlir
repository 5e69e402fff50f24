// --msamp-o0: the f32 baseline. Train-step synthesis only: every GEMM stays a
// linalg op in f32, no FP8 type anywhere, 16 bytes of model state per param.
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o0 | FileCheck %s
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o0 --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: %python -m msamp.graphs transformer-block -o %t.block.mlir
// RUN: msamp-opt %t.block.mlir --msamp-o0 | FileCheck %s --check-prefix=BLOCK --implicit-check-not=f8E4M3FN --implicit-check-not=f8E5M2

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: msamp.kind = "train_step", msamp.level = "O0"
// CHECK-NOT: f8E
// CHECK-NOT: f16
// CHECK-COUNT-5: linalg.matmul
// CHECK-COUNT-4: msamp.all_reduce mean %{{.+}} : tensor<{{[0-9x]+}}xf32>
// CHECK-NOT: msamp.gemm %
// CHECK: return

// REPORT: "level": "O0",
// REPORT-NEXT: "params": 32,
// REPORT-NEXT: "bytes_per_param": 16.25,
// REPORT: "weights": {"dtype":"f32","bytes":128,"bytes_per_param":4},
// REPORT-NEXT: "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// REPORT-NEXT: "weight_grads": {"dtype":"f32","bytes":128,"bytes_per_param":4},
// REPORT-NEXT: "optimizer_m": {"dtype":"f32","bytes":128,"bytes_per_param":4},
// REPORT-NEXT: "optimizer_v": {"dtype":"f32","bytes":128,"bytes_per_param":4},
// REPORT-NEXT: "scaling_state": {"dtype":"none","bytes":0,"bytes_per_param":0},
// REPORT-NEXT: "other_state": {"dtype":"i64","bytes":8,"bytes_per_param":0.25}

// The transformer block: 21 Linear GEMMs and 6 attention batch GEMMs, all f32.
// BLOCK-LABEL: func.func @train_step(
// BLOCK-COUNT-21: linalg.matmul
// BLOCK-NOT: msamp.gemm %
