// msamp-loss-scale after msamp-grad-stats on an fp16 AMP step: the
// non-finite flag of the gradients (GradScaler's found_inf) keeps every
// param and optimizer state at its old value (the step is skipped), halves
// the scale and resets the tracker; a good step counts, and the scale
// doubles after growth-interval good steps if the result is finite. The
// step counter always advances. `nonfinite` is returned as 0 (handled) and
// `loss_scale_overflow` reports the skip.
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=fp16 loss-scale=true" --msamp-grad-stats --msamp-loss-scale="growth-interval=5" | FileCheck %s
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=fp16" --msamp-grad-stats --msamp-loss-scale 2>&1 | FileCheck %s --check-prefix=NOSTATE
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-amp-gemms="dtype=fp16 loss-scale=true" --msamp-grad-stats --msamp-loss-scale="backoff-factor=2" 2>&1 | FileCheck %s --check-prefix=BACKOFF

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<5x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc1.weight"
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"}
// CHECK-SAME: %[[SCALE:[a-z0-9]+]]: tensor<f32> {msamp.init = "zeros", msamp.name = "loss_scale", msamp.role = "loss_scale"}
// CHECK-SAME: %[[TRACKER:[a-z0-9]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "loss_scale.growth_tracker", msamp.role = "loss_scale"}
// CHECK-SAME: tensor<f32> {msamp.name = "nonfinite", msamp.role = "metric"}, tensor<f32> {msamp.name = "loss_scale_overflow", msamp.role = "metric"})
// CHECK: %[[NEWW1:[a-z0-9_]+]], %{{.+}}, %{{.+}} = msamp.adam_update param %[[W1]]
// CHECK: %[[FOUND:.+]] = arith.cmpf une, %[[FLAG:.+]], %[[ZERO:.+]] : tensor<f32>
// CHECK: %[[FOUNDS:.+]] = tensor.extract %[[FOUND]][] : tensor<i1>
// CHECK: %[[KEPT:.+]] = arith.select %[[FOUNDS]], %[[W1]], %[[NEWW1]] : tensor<5x3xf32>
// CHECK: %[[UNSET:.+]] = arith.cmpf oeq, %[[SCALE]]
// CHECK: %[[USED:.+]] = arith.select %[[UNSET]], %{{.+}}, %[[SCALE]]
// CHECK: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[BACKED:.+]] = arith.mulf %[[USED]], %[[HALF]]
// CHECK: %[[GOOD:.+]] = arith.addi %[[TRACKER]], %{{.+}} : tensor<i64>
// CHECK: %[[FIVE:.+]] = arith.constant dense<5> : tensor<i64>
// CHECK: %[[DUE:.+]] = arith.cmpi sge, %[[GOOD]], %[[FIVE]]
// CHECK: %[[GROWN:.+]] = arith.mulf %[[USED]], %{{.+}}
// CHECK: %[[FINITE:.+]] = arith.cmpf olt, %[[GROWN]], %{{.+}}
// CHECK: %[[GROW:.+]] = arith.andi %[[DUE]], %[[FINITE]]
// CHECK: %[[ONGOOD:.+]] = arith.select %[[GROW]], %[[GROWN]], %[[USED]]
// CHECK: %[[NEWSCALE:.+]] = arith.select %[[FOUND]], %[[BACKED]], %[[ONGOOD]]
// CHECK: %[[TONGOOD:.+]] = arith.select %[[DUE]], %{{.+}}, %[[GOOD]]
// CHECK: %[[NEWTRACKER:.+]] = arith.select %[[FOUND]], %{{.+}}, %[[TONGOOD]]
// CHECK: %[[OVERFLOW:.+]] = arith.uitofp %[[FOUND]] : tensor<i1> to tensor<f32>
// CHECK: return %{{.+}}, %[[KEPT]], {{.*}}, %[[NEWSCALE]], %[[NEWTRACKER]], %{{.+}}, %[[ZERO2:.+]], %[[OVERFLOW]] :

// NOSTATE: error: --msamp-loss-scale needs the loss-scale state of --msamp-amp-gemms="dtype=fp16 loss-scale=true" ('loss_scale', 'loss_scale.growth_tracker') and the 'nonfinite' metric of --msamp-grad-stats
// BACKOFF: error: invalid msamp-loss-scale option backoff-factor: expected a factor in (0, 1)
