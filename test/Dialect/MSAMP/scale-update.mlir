// msamp.scale_update: its assembly round-trips, and its verifier refuses a
// format without a largest finite value, a negative margin, an empty
// history and a warm-up select on a just-in-time scale.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @round_trip(
// CHECK: msamp.scale_update pow2 max %{{.+}}, %{{.+}}, %{{.+}} use_jit %{{.+}} : tensor<i1> for f8E4M3FN reduce_amax : tensor<4x8xf32>, tensor<16xf32>
// CHECK: msamp.scale_update exact most_recent %{{.+}}, %{{.+}}, %{{.+}} for f16 margin 2 just_in_time : tensor<3xbf16>, tensor<1xf32>
func.func @round_trip(%x: tensor<4x8xf32>, %h: tensor<16xf32>, %p: tensor<f32>,
                      %w: tensor<i1>, %y: tensor<3xbf16>, %h1: tensor<1xf32>)
    -> (tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %nh, %s, %si, %n = msamp.scale_update pow2 max %x, %h, %p use_jit %w : tensor<i1> for f8E4M3FN reduce_amax : tensor<4x8xf32>, tensor<16xf32>
  %a, %b, %c, %d = msamp.scale_update exact most_recent %y, %h1, %p for f16 margin 2 just_in_time : tensor<3xbf16>, tensor<1xf32>
  return %nh, %s, %si, %n, %b : tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

func.func @bad_format(%x: tensor<4xf32>, %h: tensor<4xf32>, %p: tensor<f32>) {
  // expected-error @+1 {{format must be f8E4M3FN, f8E5M2 or f16, got 'f32'}}
  %a, %b, %c, %d = msamp.scale_update pow2 max %x, %h, %p for f32 : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @negative_margin(%x: tensor<4xf32>, %h: tensor<4xf32>, %p: tensor<f32>) {
  // expected-error @+1 {{margin must be non-negative, got -1}}
  %a, %b, %c, %d = msamp.scale_update pow2 max %x, %h, %p for f8E4M3FN margin -1 : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @empty_history(%x: tensor<4xf32>, %h: tensor<0xf32>, %p: tensor<f32>) {
  // expected-error @+1 {{amax history must have at least one entry}}
  %a, %b, %c, %d = msamp.scale_update pow2 max %x, %h, %p for f8E4M3FN : tensor<4xf32>, tensor<0xf32>
  return
}

// -----

func.func @jit_with_select(%x: tensor<4xf32>, %h: tensor<1xf32>, %p: tensor<f32>, %w: tensor<i1>) {
  // expected-error @+1 {{use_jit and just_in_time exclude each other}}
  %a, %b, %c, %d = msamp.scale_update pow2 max %x, %h, %p use_jit %w : tensor<i1> for f8E4M3FN just_in_time : tensor<4xf32>, tensor<1xf32>
  return
}
