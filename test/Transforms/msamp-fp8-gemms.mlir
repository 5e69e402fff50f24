// The shared MLP after classification and synthesis, then FP8 GEMMs.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms --cse | FileCheck %s
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms="fp8-format=e4m3 scaling=current scale-kind=exact" --cse | FileCheck %s --check-prefix=CURRENT
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms="wgrad-hp=true exclude=^fc1\." --cse --remarks-filter=msamp 2>&1 | FileCheck %s --check-prefix=PARTIAL
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms="wgrad-hp=true" -o /dev/null 2>&1 | count 0
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms="amax-history-len=4 warmup=false interval=2 amax-compute-algo=most_recent margin=1 reduce-amax=false" --cse | FileCheck %s --check-prefix=TE

// Delayed-scaling state is appended to the signature: a scale (init ones) and
// a 16-entry amax history (init zeros) per activation / output gradient.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W1:[^:]+]]: tensor<5x3xf32> {msamp.gemm_weight, {{[^}]*}}msamp.name = "fc1.weight"
// CHECK-SAME: %[[W2:[^:]+]]: tensor<2x5xf32> {msamp.gemm_weight, {{[^}]*}}msamp.name = "fc2.weight"
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "step"
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x3xf32> {msamp.name = "x", msamp.role = "input"}
// CHECK-SAME: %[[XS:[^:]+]]: tensor<f32> {msamp.init = "ones", msamp.name = "fc1.fprop.input.scale", msamp.role = "scaling_state"}
// CHECK-SAME: %[[XH:[^:]+]]: tensor<16xf32> {msamp.init = "zeros", msamp.name = "fc1.fprop.input.amax_history", msamp.role = "scaling_state"}
// CHECK-SAME: msamp.name = "fc2.fprop.input.scale"
// CHECK-SAME: msamp.name = "fc2.wgrad.grad_output.scale"
// CHECK-SAME: msamp.name = "fc1.wgrad.grad_output.amax_history"
// The new state comes back, marked with the argument it updates.
// CHECK-SAME: tensor<f32> {msamp.name = "fc1.fprop.input.scale", msamp.role = "scaling_state", msamp.updates = 16 : i64}
// CHECK-SAME: tensor<16xf32> {msamp.name = "fc1.fprop.input.amax_history", msamp.role = "scaling_state", msamp.updates = 17 : i64}
// CHECK-SAME: msamp.recipe = {amax_compute_algo = "max", amax_history_len = 16 : i64, delayed_weights = false, fp8_attention = false, fp8_format = "hybrid", interval = 1 : i64, margin = 0 : i64, reduce_amax = true, scale_kind = "pow2", scaling = "delayed", warmup = true}
//
// Weights are quantized just in time (no state): amax -> 1-entry history ->
// scale for E4M3.
// CHECK: %[[W2A:.+]] = msamp.amax %[[W2]]
// CHECK: %[[W2S:.+]] = msamp.compute_scale pow2 most_recent %{{.+}}, %{{.+}} for f8E4M3FN : tensor<1xf32>
// CHECK: %[[W2Q:.+]] = msamp.quantize %[[W2]], %[[W2S]] : tensor<2x5xf32> to tensor<2x5xf8E4M3FN>
// CHECK: %[[W1Q:.+]] = msamp.quantize %[[W1]], %{{.+}} : tensor<5x3xf32> to tensor<5x3xf8E4M3FN>
//
// The input x: delayed scaling with MS-AMP's warm-up (just-in-time while
// step <= 16), then the scale for the next step from the whole window.
// The amax is MAX-reduced over the data-parallel group (reduce-amax=true), so
// every rank keeps the same scaling state.
// CHECK: %[[XA:.+]] = msamp.amax %[[X]]
// CHECK: %[[XR:.+]] = msamp.all_reduce max %[[XA]] : tensor<f32>
// CHECK: %[[XH1:.+]] = msamp.update_amax_history %[[XH]], %[[XR]] : tensor<16xf32>
// CHECK: %[[T:.+]] = arith.addi %[[STEP]], %{{.+}} : tensor<i64>
// CHECK: %[[JIT:.+]] = msamp.compute_scale pow2 most_recent %[[XH1]], %[[XS]] for f8E4M3FN
// CHECK: %[[WARM:.+]] = arith.cmpi sle, %[[T]], %{{.+}} : tensor<i64>
// CHECK: %[[USED:.+]] = arith.select %[[WARM]], %[[JIT]], %[[XS]]
// CHECK: %[[XQ:.+]] = msamp.quantize %[[X]], %[[USED]] : tensor<4x3xf32> to tensor<4x3xf8E4M3FN>
// CHECK: %[[XSI:.+]] = arith.divf %{{.+}}, %[[USED]]
// CHECK: %[[NEXT:.+]] = msamp.compute_scale pow2 max %[[XH1]], %[[USED]] for f8E4M3FN : tensor<16xf32>
// fc1 fprop: x w1^T, forward GEMMs use fast accumulation.
// CHECK: msamp.gemm %[[XQ]], %[[XSI]], %[[W1Q]], %{{.+}} {fast_accum, {{.*}}transpose_b} : tensor<4x3xf8E4M3FN>, tensor<5x3xf8E4M3FN> -> tensor<4x5xf32>
// fc2: the output gradient is E5M2 and quantized once for wgrad and dgrad.
// CHECK: %[[DY:.+]] = msamp.quantize %{{.+}}, %{{.+}} : tensor<4x2xf32> to tensor<4x2xf8E5M2>
// CHECK: msamp.gemm %[[DY]], %[[DYS:[^,]+]], %{{.+}} {{{.*}}kind = "wgrad"{{.*}}transpose_a} : tensor<4x2xf8E5M2>, tensor<4x5xf8E4M3FN> -> tensor<2x5xf32>
// CHECK: msamp.gemm %[[DY]], %[[DYS]], %[[W2Q]], %{{.+}} {msamp.gemm = {kind = "dgrad"{{.*}}} : tensor<4x2xf8E5M2>, tensor<2x5xf8E4M3FN> -> tensor<4x5xf32>
// fc1 wgrad reuses the E4M3 quantization of x from fc1's fprop.
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %[[XQ]], %[[XSI]] {{{.*}}kind = "wgrad"{{.*}}transpose_a} : tensor<4x5xf8E5M2>, tensor<4x3xf8E4M3FN> -> tensor<5x3xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return {{.*}}%[[NEXT]], %[[XH1]]

// Current scaling, E4M3 everywhere, Transformer Engine's exact scales: no
// scaling state at all.
// CURRENT-LABEL: func.func @train_step(
// CURRENT-NOT: scaling_state
// CURRENT: msamp.compute_scale exact most_recent
// CURRENT-NOT: f8E5M2
// CURRENT-NOT: msamp.update_amax_history
// CURRENT: return

// wgrad-hp keeps both wgrads, exclude=^fc1\. keeps fc1's fprop: each gets a
// remark saying why (with --remarks-filter=msamp; a plain run prints
// nothing); fc2's fprop and dgrad still run in FP8.
// PARTIAL-DAG: mlp.mlir:31:11: remark: [Missed] GemmKeptInHighPrecision | Category:msamp:fp8-gemms | Remark="GEMM kept in high precision: its weight 'fc1.weight' matches exclude=^fc1\."
// PARTIAL-DAG: mlp.mlir:109:12: remark: [Missed] GemmKeptInHighPrecision | Category:msamp:fp8-gemms | Remark="GEMM kept in high precision: wgrad-hp=true keeps weight-gradient GEMMs in high precision"
// PARTIAL-DAG: mlp.mlir:116:12: remark: [Passed] GemmInFP8 | Category:msamp:fp8-gemms | Remark="dgrad GEMM of fc2 in FP8: f8E5M2 x f8E4M3FN"
// PARTIAL-LABEL: func.func @train_step(
// PARTIAL: linalg.matmul
// PARTIAL: msamp.gemm {{.*}}kind = "fprop", layer = "fc2"
// PARTIAL: msamp.gemm {{.*}}kind = "dgrad"

// Transformer Engine style: no warm-up, 4-entry history, most_recent, margin
// 1, scales recomputed every 2 steps.
// TE-LABEL: func.func @train_step(
// TE-SAME: tensor<4xf32> {msamp.init = "zeros", msamp.name = "fc1.fprop.input.amax_history"
// TE-NOT: arith.cmpi sle
// reduce-amax=false: the local amax goes straight into the history.
// TE: %[[A:.+]] = msamp.amax %{{.+}} : tensor<4x3xf32>
// TE-NEXT: %[[H:.+]] = msamp.update_amax_history %{{.+}}, %[[A]]
// TE: msamp.quantize %{{.+}}, %[[S:[^ ]+]] : tensor<4x3xf32>
// TE: %[[N:.+]] = msamp.compute_scale pow2 most_recent %[[H]], %[[S]] for f8E4M3FN margin 1 : tensor<4xf32>
// TE: %[[REM:.+]] = arith.remsi
// TE: %[[DUE:.+]] = arith.cmpi eq, %[[REM]]
// TE: arith.select %[[DUE]], %[[N]], %[[S]]
