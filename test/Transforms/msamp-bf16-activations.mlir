// msamp-bf16-activations on the MLP train step (fc1 -> bias + ReLU -> fc2 ->
// bias - y -> mean square): the forward GEMM results z1, z2 and the hidden
// activation h (it feeds fc2 and the ReLU mask of the backward) are rounded
// to bf16 after their producers; a generic consumer widens in its body, any
// other consumer reads its own widened copy (distinct msamp.bf16_widen, so
// CSE keeps them apart). The loss tail (bias - y, its square and mean), the
// backward and the optimizer stay f32.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step="level=O1" --msamp-bf16-activations | FileCheck %s
// With the FP8 GEMMs (O1): the forward GEMMs write bf16 results (the runtime
// rounds the f32 accumulation to nearest even, as the rounding generic
// would); the FP8 amax and cast of h read the bf16 h itself
// (the runtime widens it exactly); amax histories and scales stay f32, and
// so does every state argument.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-o1="activations=bf16" -o %t.o1.mlir
// RUN: FileCheck %s --check-prefix=O1 < %t.o1.mlir
// RUN: not grep 'func.func @train_step(.*xbf16>' %t.o1.mlir
// Every level's pipeline but O0 takes the option.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-te="activations=bf16" | FileCheck %s --check-prefix=LEVEL
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-amp="dtype=fp16 activations=bf16" | FileCheck %s --check-prefix=LEVEL
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-o3="world-size=2 rank=1 activations=bf16" | FileCheck %s --check-prefix=LEVEL
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-o2 | FileCheck %s --check-prefix=DEFAULT
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step="level=O0" --msamp-bf16-activations 2>&1 | FileCheck %s --check-prefix=O0
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-o0="activations=bf16" 2>&1 | FileCheck %s --check-prefix=O0
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-o2="activations=f16" 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-bf16-activations 2>&1 | FileCheck %s --check-prefix=NOSTEP

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: msamp.activations = "bf16"
// CHECK: %[[Z1:.+]] = linalg.matmul {{.*}}kind = "fprop", layer = "fc1"
// CHECK: %[[Z1B:.+]] = linalg.generic {{.*}} ins(%[[Z1]] : tensor<4x5xf32>) outs(%{{.+}} : tensor<4x5xbf16>)
// Round to nearest even in integer arithmetic, NaN kept quiet (no truncf).
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.+}} : i16 to bf16
// CHECK: %[[H:.+]] = linalg.generic {{.*}} ins(%[[Z1B]], %{{.+}} : tensor<4x5xbf16>, tensor<5xf32>) outs(%{{.+}} : tensor<4x5xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: bf16, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: arith.bitcast %{{.+}} : i32 to f32
// CHECK: arith.maximumf
// CHECK: %[[HB:.+]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x5xf32>) outs(%{{.+}} : tensor<4x5xbf16>)
// CHECK: %[[HW:.+]] = linalg.generic {{.*}} ins(%[[HB]] : tensor<4x5xbf16>) outs(%{{.+}} : tensor<4x5xf32>) attrs = {msamp.bf16_widen = [[W1:[0-9]+]] : i64}
// CHECK: %[[Z2:.+]] = linalg.matmul {{.*}}kind = "fprop", layer = "fc2"{{.*}} ins(%[[HW]], %{{.+}} : tensor<4x5xf32>, tensor<2x5xf32>)
// CHECK: %[[Z2B:.+]] = linalg.generic {{.*}} ins(%[[Z2]] : tensor<4x2xf32>) outs(%{{.+}} : tensor<4x2xbf16>)
// The loss tail: z2 + b2 - y and its mean square stay f32.
// CHECK: %[[DIFF:.+]] = linalg.generic {{.*}} ins(%[[Z2B]], %{{.+}}, %{{.+}} : tensor<4x2xbf16>, tensor<2xf32>, tensor<4x2xf32>) outs(%{{.+}} : tensor<4x2xf32>)
// CHECK: linalg.reduce ins(%[[DIFF]] : tensor<4x2xf32>)
// The backward: the fc2 wgrad reads another widened copy of h, the ReLU mask
// reads bf16 h; output gradients and weight gradients stay f32.
// CHECK: %[[HW2:.+]] = linalg.generic {{.*}} ins(%[[HB]] : tensor<4x5xbf16>) outs(%{{.+}} : tensor<4x5xf32>) attrs = {msamp.bf16_widen = [[W2:[0-9]+]] : i64}
// CHECK: linalg.matmul {{.*}}kind = "wgrad", layer = "fc2"{{.*}} ins(%{{.+}}, %[[HW2]] : tensor<4x2xf32>, tensor<4x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[HB]] : tensor<4x5xf32>, tensor<4x5xbf16>) outs(%{{.+}} : tensor<4x5xf32>)
// CHECK: arith.cmpf ogt
// CHECK-NOT: bf16
// CHECK: return

// O1-LABEL: func.func @train_step(
// A forward msamp.gemm rounds its own f32 accumulation to bf16 (no f32 output).
// O1: msamp.gemm {{.*}}kind = "fprop", layer = "fc1"{{.*}} -> tensor<4x5xbf16>
// O1: msamp.amax %[[HB:.+]] : tensor<4x5xbf16>
// O1: msamp.update_amax_history %{{.+}}, %{{.+}} : tensor<16xf32>
// O1: msamp.quantize %[[HB]], %{{.+}} : tensor<4x5xbf16> to tensor<4x5xf8E4M3FN>
// O1: msamp.gemm {{.*}}kind = "fprop", layer = "fc2"{{.*}} -> tensor<4x2xbf16>
// O1: msamp.gemm {{.*}}kind = "wgrad", layer = "fc2"{{.*}} -> tensor<2x5xf32>
// O1-NOT: msamp.bf16_widen

// LEVEL-LABEL: func.func @train_step(
// LEVEL-SAME: msamp.activations = "bf16"
// LEVEL: tensor<4x5xbf16>

// DEFAULT-NOT: bf16

// O0: error: activations=bf16 is not available at O0, the all-f32 baseline

// VALUE: for the --activations option: Cannot find option named 'f16'!

// NOSTEP: error: {{.*}}--msamp-bf16-activations
