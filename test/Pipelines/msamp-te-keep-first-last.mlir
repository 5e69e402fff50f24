// --msamp-te with torchao's Float8Linear recipe as Accelerate's AO backend
// applies it (what msamp-compile --recipe maps `backend: AO` to):
// scaling=current (no scaling state at all), and the Linear layers that
// Accelerate's filter_first_and_last_linear_layers leaves as nn.Linear stay
// f32: keep-first-last keeps the first and the last Linear layer in graph
// order (all three GEMMs of each), dim-multiple=16 every layer whose weight
// has a dimension that is not a multiple of 16.
// RUN: %python -m msamp.graphs transformer-block -o %t.block.mlir
// RUN: msamp-opt %t.block.mlir --msamp-te="scaling=current keep-first-last=true" | FileCheck %s
// RUN: msamp-opt %t.block.mlir --msamp-te="scaling=current keep-first-last=true" | grep -c "msamp.gemm %" | FileCheck %s --check-prefix=NGEMM
// RUN: msamp-opt %t.block.mlir --msamp-te="scaling=current keep-first-last=true" --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %python -m msamp.graphs mlp --sizes 16,32,24,16 -o %t.mlp.mlir
// RUN: msamp-opt %t.mlp.mlir --msamp-te="dim-multiple=16" | FileCheck %s --check-prefix=ALIGN
// RUN: msamp-opt %t.mlp.mlir --msamp-te="dim-multiple=16" --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN-REMARK
// RUN: not msamp-opt %t.mlp.mlir --msamp-te="dim-multiple=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// No amax history or scale anywhere: every scale is just in time.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: scaling_state
// CHECK-SAME: scaling = "current"
// The first Linear (q_proj) and the last (head) stay linalg in f32.
// CHECK-NOT: msamp.gemm %{{.*}}layer = "attn.q_proj"
// CHECK: linalg.matmul {{.*}}kind = "fprop", layer = "attn.q_proj"
// CHECK: msamp.gemm %{{.*}}kind = "fprop", layer = "attn.k_proj"{{.*}} : tensor<32x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>
// CHECK-NOT: msamp.gemm %{{.*}}layer = "head"

// 7 Linear layers, 5 of them in FP8, 3 GEMMs each.
// NGEMM: 15

// Three GEMMs of each (fprop, dgrad, wgrad), in any order.
// REMARK-DAG: GEMM kept in high precision: its layer attn.q_proj is the first Linear layer in graph order (keep-first-last)
// REMARK-DAG: GEMM kept in high precision: its layer attn.q_proj is the first Linear layer in graph order (keep-first-last)
// REMARK-DAG: GEMM kept in high precision: its layer attn.q_proj is the first Linear layer in graph order (keep-first-last)
// REMARK-DAG: GEMM kept in high precision: its layer head is the last Linear layer in graph order (keep-first-last)
// REMARK-DAG: GEMM kept in high precision: its layer head is the last Linear layer in graph order (keep-first-last)
// REMARK-DAG: GEMM kept in high precision: its layer head is the last Linear layer in graph order (keep-first-last)

// fc1 (32x16) runs in FP8 (its fprop and wgrad; x needs no gradient), fc2
// (24x32) and fc3 (16x24) stay f32.
// ALIGN: msamp.gemm %{{.*}}kind = "fprop", layer = "fc1"
// ALIGN-NOT: msamp.gemm %{{.*}}layer = "fc2"
// ALIGN-NOT: msamp.gemm %{{.*}}layer = "fc3"
// ALIGN-REMARK-DAG: GEMM kept in high precision: the weight of its layer fc3 has a dimension that is not a multiple of dim-multiple=16
// ALIGN-REMARK-DAG: GEMM kept in high precision: the weight of its layer fc3 has a dimension that is not a multiple of dim-multiple=16
// ALIGN-REMARK-DAG: GEMM kept in high precision: the weight of its layer fc3 has a dimension that is not a multiple of dim-multiple=16
// ALIGN-REMARK-DAG: GEMM kept in high precision: the weight of its layer fc2 has a dimension that is not a multiple of dim-multiple=16
// ALIGN-REMARK-DAG: GEMM kept in high precision: the weight of its layer fc2 has a dimension that is not a multiple of dim-multiple=16
// ALIGN-REMARK-DAG: GEMM kept in high precision: the weight of its layer fc2 has a dimension that is not a multiple of dim-multiple=16
// BAD: invalid msamp-fp8-gemms option dim-multiple=-1: expected a non-negative integer
