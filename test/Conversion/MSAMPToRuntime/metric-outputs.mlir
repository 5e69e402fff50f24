// convert-msamp-to-runtime writes the loss and then every "metric" result
// (--msamp-grad-stats: grad_norm, nonfinite), in result order, into trailing
// 0-d output arguments; the packed entry point then takes the N manifest
// arguments, the loss and the M metrics (docs/RuntimeABI.md 11).
// RUN: msamp-opt %s --convert-msamp-to-runtime -split-input-file -verify-diagnostics | FileCheck %s
// RUN: msamp-opt %s --msamp-lower-to-llvm -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<4xf32> {msamp.init = "zeros", msamp.name = "w", msamp.role = "param"},
// CHECK-SAME: %[[MAX:[^:]+]]: tensor<f32> {msamp.name = "max_grad_norm", msamp.role = "hyperparam"},
// CHECK-SAME: %[[LOSS:[^:]+]]: tensor<f32> {msamp.name = "loss", msamp.role = "loss_output"},
// CHECK-SAME: %[[NORM:[^:]+]]: tensor<f32> {msamp.name = "grad_norm", msamp.role = "metric_output"},
// CHECK-SAME: %[[FLAG:[^:]+]]: tensor<f32> {msamp.name = "nonfinite", msamp.role = "metric_output"})
// CHECK-NOT: ->
// CHECK-SAME: attributes {llvm.emit_c_interface
// The metric grad_norm is the amax of the gradient (a runtime call's
// output), nonfinite is the max_grad_norm argument itself.
// CHECK: call @msamp_rt_amax__{{[0-9]+}}
// CHECK: %[[LV:.+]] = bufferization.to_tensor %{{.+}} restrict writable : memref<f32>
// CHECK: call @msamp_rt_amax__{{[0-9]+}}
// CHECK: %[[NV:.+]] = bufferization.to_tensor %{{.+}} restrict writable : memref<f32>
// CHECK: %[[LB:.+]] = bufferization.to_buffer %[[LOSS]] : tensor<f32> to memref<f32>
// CHECK: bufferization.materialize_in_destination %[[LV]] in restrict writable %[[LB]]
// CHECK: %[[NB:.+]] = bufferization.to_buffer %[[NORM]] : tensor<f32> to memref<f32>
// CHECK: bufferization.materialize_in_destination %[[NV]] in restrict writable %[[NB]]
// CHECK: %[[FB:.+]] = bufferization.to_buffer %[[FLAG]] : tensor<f32> to memref<f32>
// CHECK: bufferization.materialize_in_destination %[[MAX]] in restrict writable %[[FB]]
// CHECK-NEXT: return{{$}}

// Six manifest arguments (w, step, lr, x, y, max_grad_norm), then the loss,
// grad_norm and nonfinite outputs.
// LLVM-LABEL: llvm.func @msamp_train_step_num_args() -> i64
// LLVM: llvm.mlir.constant(9 : i64)
module {
  func.func @train_step(
      %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
      %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
      %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
      %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
      %y: tensor<4xf32> {msamp.role = "target", msamp.name = "y"},
      %max: tensor<f32> {msamp.role = "hyperparam", msamp.name = "max_grad_norm"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64},
          tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.updates = 1 : i64},
          tensor<f32> {msamp.role = "metric", msamp.name = "grad_norm"},
          tensor<f32> {msamp.role = "metric", msamp.name = "nonfinite"})
      attributes {msamp.kind = "train_step", msamp.level = "O0"} {
    %g = msamp.all_reduce mean %x : tensor<4xf32>
    %one = arith.constant dense<1> : tensor<i64>
    %t = arith.addi %step, %one : tensor<i64>
    %w1 = msamp.sgd_update param %w : tensor<4xf32>, grad %g : tensor<4xf32>,
        lr %lr, step %t {momentum = 0.0 : f64, weight_decay = 0.0 : f64}
    %loss = msamp.amax %y : tensor<4xf32>
    %norm = msamp.amax %g : tensor<4xf32>
    return %loss, %w1, %t, %norm, %max : tensor<f32>, tensor<4xf32>, tensor<i64>, tensor<f32>, tensor<f32>
  }
}

// -----

// A result that is neither the loss, a metric nor a state update has no
// place in the runtime ABI.
module {
  // expected-error@+1 {{result #1 (role "grad") is neither the loss, nor a metric, nor a state update; the runtime ABI cannot return it}}
  func.func @train_step(
      %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "x"})
      attributes {msamp.kind = "train_step", msamp.level = "O0"} {
    %loss = msamp.amax %x : tensor<4xf32>
    return %loss, %x : tensor<f32>, tensor<4xf32>
  }
}
