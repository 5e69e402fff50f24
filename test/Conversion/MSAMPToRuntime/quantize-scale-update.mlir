// convert-msamp-to-runtime, msamp_rt_quantize_scale_update: a delayed-scaling
// msamp.scale_update and the msamp.quantize of its input with the scale it
// chose (and the codes' transpose, if a GEMM wants that layout) become one
// msamp_rt_quantize_scale_update call at the quantize, so that the device
// reads the input once (ScaleUpdateToRuntime.cpp, RuntimeABI.md 3.15). A
// just-in-time update, a quantize of another tensor and a pair with a
// reader of the update's results in between keep their own calls.
// RUN: msamp-opt %s --convert-msamp-to-runtime -split-input-file | FileCheck %s
// RUN: msamp-opt %s --msamp-lower-to-llvm -split-input-file -o /dev/null

// MS-AMP's warm-up select and the all-reduced amax: flags 3 (reduce_amax,
// select_jit); (in, history, prev, use_jit, out, out_t dummy, history out,
// scale, scale_inv, next scale, f32 = 0, E4M3 = 3, pow2 = 0, max = 0,
// E4M3 = 3, margin 0, flags 3). The rolled history and the next scale are
// written in place into their states (arguments 6 and 9).
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: call @msamp_rt_scale_update
// CHECK: %[[Q:.+]] = memref.alloc() : memref<4x8xf8E4M3FN>
// CHECK: call @msamp_rt_quantize_scale_update__{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0_i32{{[_0-9]*}}, %c3_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c3_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c3_i32{{[_0-9]*}}) {msamp.in_place_args = array<i64: 6, {{[0-9]+}}, 9, {{[0-9]+}}>}
// CHECK-NOT: call @msamp_rt_quantize_
// CHECK-NOT: call @msamp_rt_scale_update
// CHECK: %[[QT:.+]] = bufferization.to_tensor %[[Q]] restrict writable
// CHECK: call @msamp_rt_gemm__
// CHECK-DAG: func.func private @msamp_rt_quantize_scale_update__0(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi1>, memref<*xf8E4M3FN>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32, i32, i32, i32, i32, i32, i32) attributes {msamp.runtime_symbol = "msamp_rt_quantize_scale_update"}
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %w: tensor<4x8xf8E4M3FN> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
      %wsi: tensor<f32> {msamp.role = "scaling_state", msamp.name = "w.scale_inv", msamp.init = "ones"},
      %hist: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "x.amax_history", msamp.init = "zeros"},
      %prev: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"},
      %warm: tensor<i1> {msamp.role = "input", msamp.name = "warm"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<16xf32> {msamp.updates = 3 : i64},
          tensor<f32> {msamp.updates = 4 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %h, %s, %si, %n = msamp.scale_update pow2 max %x, %hist, %prev use_jit %warm : tensor<i1> for f8E4M3FN reduce_amax : tensor<4x8xf32>, tensor<16xf32>
    %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %g = msamp.gemm %q, %si, %w, %wsi {transpose_b} : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN> -> tensor<4x4xf32>
    %loss = msamp.amax %g : tensor<4x4xf32>
    return %loss, %h, %n : tensor<f32>, tensor<16xf32>, tensor<f32>
  }
}

// -----

// The codes also read transposed: the call writes both layouts (flags 11 =
// reduce_amax | select_jit | transpose) and the transpose is gone.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[Q:.+]] = memref.alloc() : memref<4x8xf8E5M2>
// CHECK: %[[T:.+]] = memref.alloc() : memref<8x4xf8E5M2>
// CHECK: call @msamp_rt_quantize_scale_update__{{[0-9]+}}({{.*}}, %c11_i32{{[_0-9]*}})
// CHECK-NOT: linalg.transpose
// CHECK-NOT: call @msamp_rt_quantize_transpose
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %hist: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "x.amax_history", msamp.init = "zeros"},
      %prev: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"},
      %warm: tensor<i1> {msamp.role = "input", msamp.name = "warm"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<8x4xf8E5M2> {msamp.role = "metric", msamp.name = "t"},
          tensor<4x8xf8E5M2> {msamp.role = "metric", msamp.name = "q"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %h, %s, %si, %n = msamp.scale_update pow2 max %x, %hist, %prev use_jit %warm : tensor<i1> for f8E5M2 reduce_amax : tensor<4x8xf32>, tensor<16xf32>
    %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E5M2>
    %e = tensor.empty() : tensor<8x4xf8E5M2>
    %t = linalg.transpose ins(%q : tensor<4x8xf8E5M2>) outs(%e : tensor<8x4xf8E5M2>) permutation = [1, 0]
    return %si, %t, %q : tensor<f32>, tensor<8x4xf8E5M2>, tensor<4x8xf8E5M2>
  }
}

// -----

// Left alone: a just-in-time update (its scale needs the amax first), and
// an update whose scale is read between it and the quantize.
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_scale_update__
// CHECK: call @msamp_rt_quantize__
// CHECK: call @msamp_rt_scale_update__
// CHECK: arith.addf
// CHECK: call @msamp_rt_quantize__
// CHECK-NOT: msamp_rt_quantize_scale_update
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %y: tensor<4x8xf32> {msamp.role = "input", msamp.name = "y"},
      %hist: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "y.amax_history", msamp.init = "zeros"},
      %prev: tensor<f32> {msamp.role = "scaling_state", msamp.name = "y.scale", msamp.init = "ones"},
      %warm: tensor<i1> {msamp.role = "input", msamp.name = "warm"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4x8xf8E4M3FN> {msamp.role = "metric", msamp.name = "a"},
          tensor<4x8xf8E4M3FN> {msamp.role = "metric", msamp.name = "b"}, tensor<f32> {msamp.role = "metric", msamp.name = "c"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %e = tensor.empty() : tensor<1xf32>
    %one = arith.constant dense<1.0> : tensor<f32>
    %h0, %s0, %si0, %n0 = msamp.scale_update pow2 most_recent %x, %e, %one for f8E4M3FN reduce_amax just_in_time : tensor<4x8xf32>, tensor<1xf32>
    %q0 = msamp.quantize %x, %s0 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    %h, %s, %si, %n = msamp.scale_update pow2 max %y, %hist, %prev use_jit %warm : tensor<i1> for f8E4M3FN : tensor<4x8xf32>, tensor<16xf32>
    %twice = arith.addf %s, %s : tensor<f32>
    %q = msamp.quantize %y, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    return %si0, %q0, %q, %twice : tensor<f32>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<f32>
  }
}

// -----

// No warm-up select: the cast uses the state %prev itself, which the call
// then overwrites with the next scale. The quantize's read of %prev is the
// call's own (the cast kernel reads it before the update writes it), so the
// history and the next scale are still written in place (arguments 6 and
// 9 of the call are the states %hist and %prev): flags 0.
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_quantize_scale_update__{{[0-9]+}}({{.*}}, %c0_i32{{[_0-9]*}}) {msamp.in_place_args = array<i64: 6, 1, 9, 2>}
// CHECK-NOT: call @msamp_rt_scale_update
module {
  func.func @train_step(
      %x: tensor<4x8xf32> {msamp.role = "input", msamp.name = "x"},
      %hist: tensor<16xf32> {msamp.role = "scaling_state", msamp.name = "x.amax_history", msamp.init = "zeros"},
      %prev: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4x8xf8E4M3FN> {msamp.role = "metric", msamp.name = "q"},
          tensor<16xf32> {msamp.updates = 1 : i64},
          tensor<f32> {msamp.updates = 2 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %h, %s, %si, %n = msamp.scale_update pow2 max %x, %hist, %prev for f8E4M3FN : tensor<4x8xf32>, tensor<16xf32>
    %q = msamp.quantize %x, %prev : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    return %si, %q, %h, %n : tensor<f32>, tensor<4x8xf8E4M3FN>, tensor<16xf32>, tensor<f32>
  }
}
