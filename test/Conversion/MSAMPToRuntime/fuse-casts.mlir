// convert-msamp-to-runtime's fuse-casts (on by default): a just-in-time
// cast chain, msamp.amax -> expand_shape -> compute_scale most_recent ->
// msamp.quantize of one tensor, becomes one msamp_rt_quantize_jit call whose
// scale_inv output replaces the GEMM's `1 / scale`; chains that another op
// reads into, or whose amax is all-reduced, stay separate calls and say why
// in a remark (FusedCastToRuntime.cpp).
// RUN: msamp-opt %s --convert-msamp-to-runtime -split-input-file | FileCheck %s
// RUN: msamp-opt %s --convert-msamp-to-runtime="fuse-casts=false" -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: msamp-opt %s --convert-msamp-to-runtime --remarks-filter=msamp -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: msamp-opt %s --msamp-lower-to-llvm -split-input-file -o /dev/null

// The chain with its inverse scale: one call, (in, prev_scale, out, out_t
// dummy, scale, scale_inv, f32 = 0, E4M3 = 3, pow2 = 0, margin 0, flags 0).
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: msamp.{{[a-z_]+}} %
// CHECK-NOT: call @msamp_rt_amax
// CHECK: %[[Q:.+]] = memref.alloc() : memref<4x8xf8E4M3FN>
// CHECK: %[[S:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[I:.+]] = memref.alloc() : memref<f32>
// CHECK: call @msamp_rt_quantize_jit__{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0_i32{{[_0-9]*}}, %c3_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK-NOT: arith.divf
// CHECK-NOT: call @msamp_rt_compute_scale
// CHECK-NOT: call @msamp_rt_quantize_
// The GEMM reads the call's quantized tensor and inverse scale.
// CHECK: %[[QT:.+]] = bufferization.to_tensor %[[Q]] restrict writable
// CHECK: %[[IT:.+]] = bufferization.to_tensor %[[I]] restrict writable
// CHECK: bufferization.to_buffer %[[QT]]
// CHECK: bufferization.to_buffer %[[IT]]
// CHECK: call @msamp_rt_gemm__
// CHECK-DAG: func.func private @msamp_rt_quantize_jit__0(memref<*xf32>, memref<*xf32>, memref<*xf8E4M3FN>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32, i32, i32, i32, i32) attributes {msamp.runtime_symbol = "msamp_rt_quantize_jit"}
// OFF-LABEL: func.func @train_step(
// OFF: call @msamp_rt_amax__
// OFF: call @msamp_rt_compute_scale__
// OFF: call @msamp_rt_quantize__
// OFF-NOT: msamp_rt_quantize_jit
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %w: tensor<4x8xf8E4M3FN> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
      %wsi: tensor<f32> {msamp.role = "scaling_state", msamp.name = "w.scale_inv", msamp.init = "ones"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1.0> : tensor<f32>
    %a = msamp.amax %x : tensor<4x8xf32>
    %h = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %s = msamp.compute_scale pow2 most_recent %h, %one for f8E4M3FN : tensor<1xf32>
    %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %si = arith.divf %one, %s : tensor<f32>
    %g = msamp.gemm %q, %si, %w, %wsi {transpose_b} : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN> -> tensor<4x4xf32>
    %loss = msamp.amax %g : tensor<4x4xf32>
    return %loss : tensor<f32>
  }
}

// -----

// Exact scaling with a margin into E5M2 from bf16, no inverse scale used:
// kind 1, margin 2, bf16 = 2, E5M2 = 4; the scale_inv is a scratch output.
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_quantize_jit__{{[0-9]+}}({{.*}}, %c2_i32{{[_0-9]*}}, %c4_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK-NOT: call @msamp_rt_compute_scale
module {
  func.func @train_step(
      %x: tensor<16xbf16> {msamp.role = "input", msamp.name = "x"},
      %prev: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %a = msamp.amax %x : tensor<16xbf16>
    %h = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %s = msamp.compute_scale exact most_recent %h, %prev for f8E5M2 margin 2 : tensor<1xf32>
    %q = msamp.quantize %x, %s : tensor<16xbf16> to tensor<16xf8E5M2>
    %d = msamp.dequantize %q, %s : tensor<16xf8E5M2> to tensor<16xf32>
    %loss = msamp.amax %d : tensor<16xf32>
    return %loss : tensor<f32>
  }
}

// -----

// The inverse scale as convert-elementwise-to-linalg leaves it (both
// lowerings run it first): a 0-d linalg.generic, replaced the same way.
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_quantize_jit__
// CHECK-NOT: linalg.generic
// CHECK-NOT: arith.divf
// CHECK: call @msamp_rt_gemm__
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %w: tensor<4x8xf8E4M3FN> {msamp.role = "input", msamp.name = "w"},
      %wsi: tensor<f32> {msamp.role = "input", msamp.name = "wsi"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1.0> : tensor<f32>
    %c1 = arith.constant 1.0 : f32
    %a = msamp.amax %x : tensor<4x8xf32>
    %h = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %s = msamp.compute_scale pow2 most_recent %h, %one for f8E4M3FN : tensor<1xf32>
    %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %e = tensor.empty() : tensor<f32>
    %si = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
        ins(%s : tensor<f32>) outs(%e : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.divf %c1, %in : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %g = msamp.gemm %q, %si, %w, %wsi {transpose_b} : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN> -> tensor<4x4xf32>
    %loss = msamp.amax %g : tensor<4x4xf32>
    return %loss : tensor<f32>
  }
}

// -----

// The amax has another user (it is also the loss): the chain stays three
// calls, and the remark says why.
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_amax__
// CHECK: call @msamp_rt_compute_scale__
// CHECK: call @msamp_rt_quantize__
// CHECK-NOT: msamp_rt_quantize_jit
// REMARK: remark: [Missed] JitCastNotFused | Category:msamp:convert-msamp-to-runtime | Remark="just-in-time cast left as separate calls: its amax is also read by another op
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1.0> : tensor<f32>
    %a = msamp.amax %x : tensor<4x8xf32>
    %h = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %s = msamp.compute_scale pow2 most_recent %h, %one for f8E4M3FN : tensor<1xf32>
    %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %d = msamp.dequantize %q, %s : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>
    %b = msamp.amax %d : tensor<4x8xf32>
    %loss = arith.addf %a, %b : tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// The amax is all-reduced before the scale (FP8 weight gradients): a
// collective the call cannot contain.
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_amax__
// CHECK: call @msamp_rt_all_reduce__
// CHECK: call @msamp_rt_compute_scale__
// CHECK: call @msamp_rt_quantize__
// REMARK: remark: [Missed] JitCastNotFused | Category:msamp:convert-msamp-to-runtime | Remark="just-in-time cast left as separate calls: its amax is all-reduced over the data-parallel group
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1.0> : tensor<f32>
    %a = msamp.amax %x : tensor<4x8xf32>
    %r = msamp.all_reduce max %a : tensor<f32>
    %h = tensor.expand_shape %r [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %s = msamp.compute_scale pow2 most_recent %h, %one for f8E4M3FN : tensor<1xf32>
    %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %d = msamp.dequantize %q, %s : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>
    %loss = msamp.amax %d : tensor<4x8xf32>
    return %loss : tensor<f32>
  }
}

// -----

// The scale is read before the quantize (the call is emitted at the
// quantize), and the scale's format is not the quantize's: both stay.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: msamp_rt_quantize_jit
// CHECK: return
// REMARK: remark: [Missed] JitCastNotFused | Category:msamp:convert-msamp-to-runtime | Remark="just-in-time cast left as separate calls: its scale is read before the quantize
// REMARK: remark: [Missed] JitCastNotFused | Category:msamp:convert-msamp-to-runtime | Remark="just-in-time cast left as separate calls: the scale is computed for another format than the quantize's
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %y: tensor<4x8xf32> {msamp.role = "input", msamp.name = "y"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1.0> : tensor<f32>
    %a = msamp.amax %x : tensor<4x8xf32>
    %h = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %s = msamp.compute_scale pow2 most_recent %h, %one for f8E4M3FN : tensor<1xf32>
    %si = arith.divf %one, %s : tensor<f32>
    %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %d = msamp.dequantize %q, %si : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>
    %b = msamp.amax %y : tensor<4x8xf32>
    %hb = tensor.expand_shape %b [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %sb = msamp.compute_scale pow2 most_recent %hb, %one for f8E4M3FN : tensor<1xf32>
    %qb = msamp.quantize %y, %sb : tensor<4x8xf32> to tensor<4x8xf8E5M2>
    %db = msamp.dequantize %qb, %sb : tensor<4x8xf8E5M2> to tensor<4x8xf32>
    %sum = arith.addf %d, %db : tensor<4x8xf32>
    %loss = msamp.amax %sum : tensor<4x8xf32>
    return %loss : tensor<f32>
  }
}

// -----

// Delayed scaling (the quantize reads this step's scale state, the amax only
// feeds the history): not a just-in-time cast, no call fused, no remark.
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_amax__
// CHECK: call @msamp_rt_update_amax_history__
// CHECK: call @msamp_rt_quantize__
// CHECK: call @msamp_rt_compute_scale__
// CHECK-NOT: msamp_rt_quantize_jit
// REMARK-NOT: remark
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %sc: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"},
      %hist: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "x.amax_history", msamp.init = "zeros"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.updates = 1 : i64},
          tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "x.amax_history", msamp.updates = 2 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %a = msamp.amax %x : tensor<4x8xf32>
    %h = msamp.update_amax_history %hist, %a : tensor<16xf32>
    %q = msamp.quantize %x, %sc : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %next = msamp.compute_scale pow2 max %h, %sc for f8E4M3FN : tensor<16xf32>
    %d = msamp.dequantize %q, %sc : tensor<4x8xf8E4M3FN> to tensor<4x8xf32>
    %loss = msamp.amax %d : tensor<4x8xf32>
    return %loss, %next, %h : tensor<f32>, tensor<f32>, tensor<16xf32>
  }
}
