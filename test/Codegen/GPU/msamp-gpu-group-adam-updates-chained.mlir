// --msamp-gpu-group-adam-updates where an update reads another's result:
// the updates keep their order (moving one past the other would change
// which value it reads), and compatible neighbours still share a call.
//
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-group-adam-updates))' | FileCheck %s --check-prefix=ORDER


// ORDER-LABEL: func.func @chained(
// ORDER: %[[W1:.+]], %[[M1:.+]], %{{.+}} = msamp.adam_update param %arg0 {{.*}}msamp.adam_group = 0 : i64
// ORDER-NEXT: msamp.adam_update param %arg3 : tensor<8xf32>, grad %[[M1]] {{.*}}msamp.adam_group = 0 : i64
func.func @chained(%w: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>,
                   %w2: tensor<8xf32>, %lr: tensor<f32>, %step: tensor<i64>,
                   %g: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %w1, %m1, %v1 = msamp.adam_update param %w : tensor<8xf32>, grad %g : tensor<8xf32>,
      exp_avg %m : tensor<8xf32>, exp_avg_sq %v : tensor<8xf32>, lr %lr, step %step
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, decoupled}
  %w3, %m3, %v3 = msamp.adam_update param %w2 : tensor<8xf32>, grad %m1 : tensor<8xf32>,
      exp_avg %m : tensor<8xf32>, exp_avg_sq %v : tensor<8xf32>, lr %lr, step %step
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64, decoupled}
  return %w1, %w3 : tensor<8xf32>, tensor<8xf32>
}
