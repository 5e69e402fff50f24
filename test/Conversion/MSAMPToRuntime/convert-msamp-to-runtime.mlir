// RUN: msamp-opt %s --convert-msamp-to-runtime -split-input-file | FileCheck %s
// RUN: msamp-opt %s --convert-elementwise-to-linalg --convert-msamp-to-runtime --one-shot-bufferize="bufferize-function-boundaries" --msamp-finalize-runtime-calls | FileCheck %s --check-prefix=FINAL
// RUN: msamp-opt %s --msamp-lower-to-llvm -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: msamp-opt %s --convert-msamp-to-runtime -split-input-file | FileCheck %s --check-prefix=DEAD

// A minimal train step: an FP8 GEMM, a high-precision GEMM, an FP8 all-reduce
// and an in-place AdamW update.
// CHECK-LABEL: func.func @train_step(
// The state results are gone; the loss is written into a trailing argument.
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x4xf32> {msamp.init = "normal(0,0.02)", msamp.name = "w"
// CHECK-SAME: %[[M:[^:]+]]: tensor<4x4xf32> {msamp.init = "zeros", msamp.name = "w.exp_avg",
// CHECK-SAME: %[[V:[^:]+]]: tensor<4x4xf32> {msamp.init = "zeros", msamp.name = "w.exp_avg_sq",
// CHECK-SAME: %[[LOSS:[^:]+]]: tensor<f32> {msamp.name = "loss", msamp.role = "loss_output"})
// CHECK-SAME: attributes {llvm.emit_c_interface
// Quantize: E4M3 (dtype 3) from f32 (dtype 0) into a fresh buffer.
// CHECK: %[[QB:.+]] = memref.alloc() : memref<4x4xf8E4M3FN>
// CHECK: call @msamp_rt_quantize__{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}, %c0_i32{{[_0-9]*}}, %c3_i32{{[_0-9]*}})
// CHECK: %[[Q:.+]] = bufferization.to_tensor %[[QB]] restrict writable
// FP8 GEMM with transpose_b (flag 2) and fast accumulation (flag 4).
// CHECK: call @msamp_rt_gemm__{{[0-9]+}}({{.*}}, %c3_i32{{[_0-9]*}}, %c3_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c6_i32{{[_0-9]*}})
// The f32 GEMM goes to the same runtime GEMM with unit scales.
// CHECK: call @msamp_rt_gemm__{{[0-9]+}}({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// The FP8 all-reduce (mean = 2) with its inverse scale.
// CHECK: call @msamp_rt_all_reduce__{{[0-9]+}}({{.*}}, %c3_i32{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}})
// AdamW writes param and moments in place: their outputs are the argument
// buffers themselves.
// CHECK-DAG: %[[WB:.+]] = bufferization.to_buffer %[[W]] : tensor<4x4xf32> to memref<4x4xf32>
// CHECK-DAG: %[[MB:.+]] = bufferization.to_buffer %[[M]] : tensor<4x4xf32> to memref<4x4xf32>
// CHECK-DAG: %[[VB:.+]] = bufferization.to_buffer %[[V]] : tensor<4x4xf32> to memref<4x4xf32>
// CHECK: call @msamp_rt_adam_update__{{[0-9]+}}(
// CHECK: bufferization.materialize_in_destination {{.*}} in restrict writable
// CHECK: return{{$}}
// Until buffer deallocation has run, calls use typed declarations (one per
// operand-type signature) tagged with their runtime symbol.
// CHECK-DAG: func.func private @msamp_rt_quantize__0(memref<*xf32>, memref<*xf32>, memref<*xf8E4M3FN>, i32, i32) attributes {msamp.runtime_symbol = "msamp_rt_quantize"}
// CHECK-DAG: func.func private @msamp_rt_gemm__0(memref<*xf8E4M3FN>, memref<*xf32>, memref<*xf8E4M3FN>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32, i32, i32, i32) attributes {msamp.runtime_symbol = "msamp_rt_gemm"}
// CHECK-DAG: func.func private @msamp_rt_gemm__1(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32, i32, i32, i32) attributes {msamp.runtime_symbol = "msamp_rt_gemm"}

// The f32 GEMM's zero init (fill of an empty) is not read by the call,
// which overwrites its output: the pass erases what it left dead, or
// bufferization would write the fill into a buffer for nobody (issue 23:
// a 403 MB fill kernel per step on the issue's LM).
// DEAD-LABEL: func.func @train_step(
// DEAD-NOT: linalg.fill
// DEAD-NOT: tensor.empty
// DEAD: return{{$}}

// After msamp-finalize-runtime-calls every call goes to the one canonical
// C-interface declaration per symbol.
// FINAL-DAG: func.func private @msamp_rt_quantize(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) attributes {llvm.emit_c_interface}
// FINAL-DAG: func.func private @msamp_rt_gemm(memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32) attributes {llvm.emit_c_interface}
// FINAL-DAG: func.func private @msamp_rt_adam_update(memref<*xi8>, {{.*}}memref<*xi8>, i32, i32, i32, i32, f64, f64, f64, f64, i32) attributes {llvm.emit_c_interface}
// FINAL-NOT: msamp.runtime_symbol

// The step's body is inside the packed entry point
// (msamp-inline-step-into-entry-point), after the index checks.
// LLVM-NOT: llvm.func @train_step(
// LLVM-NOT: llvm.func @_mlir_ciface_train_step(
// LLVM-LABEL: llvm.func @msamp_train_step_packed(%{{.+}}: !llvm.ptr)
// LLVM: llvm.call @msamp_train_step_check_inputs(
// LLVM: llvm.call @msamp_rt_quantize(
// LLVM: llvm.call @msamp_rt_gemm(
// LLVM-NOT: llvm.call @_mlir_ciface_train_step(
// LLVM-LABEL: llvm.func @msamp_train_step_abi_version() -> i64
// LLVM: llvm.mlir.constant(5 : i64)
// LLVM-LABEL: llvm.func @msamp_train_step_num_args() -> i64
// LLVM: llvm.mlir.constant(9 : i64)
module {
  func.func @train_step(
      %w: tensor<4x4xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "normal(0,0.02)"},
      %m: tensor<4x4xf32> {msamp.role = "opt_state", msamp.name = "w.exp_avg", msamp.init = "zeros"},
      %v: tensor<4x4xf32> {msamp.role = "opt_state", msamp.name = "w.exp_avg_sq", msamp.init = "zeros"},
      %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
      %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
      %x: tensor<4x4xf32> {msamp.role = "input", msamp.name = "x"},
      %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"},
      %y: tensor<4x4xf32> {msamp.role = "target", msamp.name = "y"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<4x4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64},
          tensor<4x4xf32> {msamp.role = "opt_state", msamp.name = "w.exp_avg", msamp.updates = 1 : i64},
          tensor<4x4xf32> {msamp.role = "opt_state", msamp.name = "w.exp_avg_sq", msamp.updates = 2 : i64},
          tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.updates = 3 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O1"} {
    %q = msamp.quantize %x, %s : tensor<4x4xf32> to tensor<4x4xf8E4M3FN>
    %g8 = msamp.gemm %q, %s, %q, %s {transpose_b, fast_accum} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN> -> tensor<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g32 = linalg.matmul ins(%g8, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
    %gq = msamp.quantize %g32, %s : tensor<4x4xf32> to tensor<4x4xf8E4M3FN>
    %gr, %grs = msamp.all_reduce mean %gq scale_inv %s : tensor<4x4xf8E4M3FN>
    %gd = msamp.dequantize %gr, %grs : tensor<4x4xf8E4M3FN> to tensor<4x4xf32>
    %one = arith.constant dense<1> : tensor<i64>
    %t = arith.addi %step, %one : tensor<i64>
    %w1, %m1, %v1 = msamp.adam_update param %w : tensor<4x4xf32>, grad %gd : tensor<4x4xf32>,
        exp_avg %m : tensor<4x4xf32>, exp_avg_sq %v : tensor<4x4xf32>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64, decoupled}
    %loss = msamp.amax %gd : tensor<4x4xf32>
    return %loss, %w1, %m1, %v1, %t : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<i64>
  }
}
