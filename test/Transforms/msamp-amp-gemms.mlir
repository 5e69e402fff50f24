// msamp-amp-gemms on the MLP train step: every GEMM reads operands rounded
// to the 16-bit type (one rounding per value, shared by the GEMMs that read
// it) and accumulates in f32 through msamp.gemm with unit inverse scales.
// With loss-scale=true (fp16) the output-gradient operands are multiplied by
// the loss scale before their rounding and their GEMMs divide it out.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=bf16" | FileCheck %s --check-prefix=BF16
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=fp16 loss-scale=true init-scale=1024" | FileCheck %s --check-prefix=SCALED
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=f8" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=bf16 loss-scale=true" 2>&1 | FileCheck %s --check-prefix=BFSCALE
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=fp16 loss-scale=true init-scale=1000" 2>&1 | FileCheck %s --check-prefix=POW2
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-amp-gemms 2>&1 | FileCheck %s --check-prefix=NOSTEP

// BF16-LABEL: func.func @train_step(
// BF16-NOT: linalg.matmul
// BF16: arith.bitcast %{{.+}} : i16 to bf16
// BF16: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// BF16: msamp.gemm %{{.+}}, %[[ONE]], %{{.+}}, %[[ONE]] {msamp.gemm = {kind = "fprop", layer = "fc1"{{.*}}transpose_b} : tensor<4x3xbf16>, tensor<5x3xbf16> -> tensor<4x5xf32>
// BF16: msamp.gemm {{.*}}kind = "wgrad", layer = "fc2"{{.*}} : tensor<4x2xbf16>, tensor<4x5xbf16> -> tensor<2x5xf32>
// BF16-NOT: linalg.matmul

// GradScaler's state: zero until the first step uses init-scale.
// SCALED-LABEL: func.func @train_step(
// SCALED-SAME: %[[SCALE:[a-z0-9]+]]: tensor<f32> {msamp.init = "zeros", msamp.name = "loss_scale", msamp.role = "loss_scale"}
// SCALED-SAME: tensor<i64> {msamp.init = "zeros", msamp.name = "loss_scale.growth_tracker", msamp.role = "loss_scale"}
// SCALED-SAME: tensor<f32> {msamp.name = "loss_scale", msamp.role = "loss_scale", msamp.updates = [[#]] : i64}
// SCALED: %[[UNSET:.+]] = arith.cmpf oeq, %[[SCALE]], %{{.+}} : tensor<f32>
// SCALED: %[[INIT:.+]] = arith.constant dense<1.024000e+03> : tensor<f32>
// SCALED: %[[USED:.+]] = arith.select %[[UNSET]], %[[INIT]], %[[SCALE]]
// SCALED: %[[INV:.+]] = arith.divf %{{.+}}, %[[USED]] : tensor<f32>
// Forward operands: unscaled.
// SCALED: msamp.gemm %{{.+}}, %[[ONE:[a-z0-9_]+]], %{{.+}}, %[[ONE]] {msamp.gemm = {kind = "fprop", layer = "fc1"{{.*}} : tensor<4x3xf16>, tensor<5x3xf16> -> tensor<4x5xf32>
// The output gradient, scaled then rounded; the GEMM multiplies by 1/scale.
// SCALED: linalg.generic {{.*}} ins(%{{.+}}, %[[USED]] : tensor<4x2xf32>, tensor<f32>) outs(%{{.+}} : tensor<4x2xf16>)
// SCALED-NEXT: ^bb0(%[[G:.+]]: f32, %[[S:.+]]: f32, %{{.+}}: f16):
// SCALED-NEXT: %[[P:.+]] = arith.mulf %[[G]], %[[S]] : f32
// SCALED-NEXT: arith.truncf %[[P]] : f32 to f16
// SCALED: msamp.gemm %[[DY:.+]], %[[INV]], %{{.+}}, %{{.+}} {msamp.gemm = {kind = "wgrad", layer = "fc2"{{.*}} : tensor<4x2xf16>, tensor<4x5xf16> -> tensor<2x5xf32>
// SCALED: msamp.gemm %[[DY]], %[[INV]], %{{.+}}, %{{.+}} {msamp.gemm = {kind = "dgrad", layer = "fc2"{{.*}} : tensor<4x2xf16>, tensor<2x5xf16> -> tensor<4x5xf32>
// Unchanged until msamp-loss-scale.
// SCALED: return {{.*}}, %[[SCALE]], %{{.+}} :

// DTYPE: for the --dtype option: Cannot find option named 'f8'!
// BFSCALE: error: msamp-amp-gemms: loss-scale=true needs dtype=fp16
// POW2: error: invalid msamp-amp-gemms option init-scale=1.000000e+03: expected a power of two
// NOSTEP: error: --msamp-amp-gemms needs a compiled train step
