// Folders and canonicalization patterns of msamp: exact rewrites only.
// RUN: msamp-opt %s -canonicalize -split-input-file | FileCheck %s

// Constant quantize uses the shared numerics core: RNE, saturation, NaN.
// 1.0*2 = 2; 500*2 saturates to 448; -0.3*2 = -0.6 rounds to -0.625;
// 0.0009765625*2 = 2^-9 is the smallest E4M3 subnormal; NaN stays NaN (0x7F).
// CHECK-LABEL: func.func @fold_quantize
// CHECK: %[[C:.+]] = arith.constant dense<[2.000000e+00, 4.480000e+02, -6.250000e-01, 1.953130e-03, 0x7F]> : tensor<5xf8E4M3FN>
// CHECK-NOT: msamp.quantize
// CHECK: return %[[C]]
func.func @fold_quantize() -> tensor<5xf8E4M3FN> {
  %x = arith.constant dense<[1.0, 500.0, -0.3, 0.0009765625, 0x7FC00000]> : tensor<5xf32>
  %s = arith.constant dense<2.0> : tensor<f32>
  %q = msamp.quantize %x, %s : tensor<5xf32> to tensor<5xf8E4M3FN>
  return %q : tensor<5xf8E4M3FN>
}

// -----

// E5M2 saturates infinities to 57344 instead of producing Inf; 15000 lies
// below the midpoint 15360 of 14336 and 16384 and rounds down.
// CHECK-LABEL: func.func @fold_quantize_e5m2
// CHECK: arith.constant dense<[5.734400e+04, -5.734400e+04, 1.433600e+04]> : tensor<3xf8E5M2>
func.func @fold_quantize_e5m2() -> tensor<3xf8E5M2> {
  %x = arith.constant dense<[0x7F800000, -1.0e9, 15000.0]> : tensor<3xf32>
  %s = arith.constant dense<1.0> : tensor<f32>
  %q = msamp.quantize %x, %s : tensor<3xf32> to tensor<3xf8E5M2>
  return %q : tensor<3xf8E5M2>
}

// -----

// Scaled FP16 storage does not saturate: 1e5 becomes +Inf.
// CHECK-LABEL: func.func @fold_quantize_f16
// CHECK: arith.constant dense<[1.500000e+00, 0x7C00]> : tensor<2xf16>
func.func @fold_quantize_f16() -> tensor<2xf16> {
  %x = arith.constant dense<[0.75, 1.0e5]> : tensor<2xf32>
  %s = arith.constant dense<2.0> : tensor<f32>
  %q = msamp.quantize %x, %s : tensor<2xf32> to tensor<2xf16>
  return %q : tensor<2xf16>
}

// -----

// CHECK-LABEL: func.func @fold_dequantize
// CHECK: arith.constant dense<[1.120000e+02, -2.500000e-01]> : tensor<2xf32>
func.func @fold_dequantize() -> tensor<2xf32> {
  %q = arith.constant dense<[448.0, -1.0]> : tensor<2xf8E4M3FN>
  %s = arith.constant dense<0.25> : tensor<f32>
  %d = msamp.dequantize %q, %s : tensor<2xf8E4M3FN> to tensor<2xf32>
  return %d : tensor<2xf32>
}

// -----

// amax is exact and propagates NaN.
// CHECK-LABEL: func.func @fold_amax
// CHECK-DAG: arith.constant dense<3.500000e+00> : tensor<f32>
// CHECK-DAG: arith.constant dense<0x7FC00000> : tensor<f32>
func.func @fold_amax() -> (tensor<f32>, tensor<f32>) {
  %x = arith.constant dense<[1.0, -3.5, 2.0]> : tensor<3xf32>
  %a = msamp.amax %x : tensor<3xf32>
  %y = arith.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
  %b = msamp.amax %y : tensor<2xf32>
  return %a, %b : tensor<f32>, tensor<f32>
}

// -----

// docs/Numerics.md 2.1 vectors: amax 10 -> 32 (pow2, E4M3); exact 448/10 = 44.8;
// amax 0 keeps the previous scale; most_recent reads element 0.
// CHECK-LABEL: func.func @fold_compute_scale
// CHECK-DAG: %[[A:.+]] = arith.constant dense<3.200000e+01> : tensor<f32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<4.480000e+01> : tensor<f32>
// CHECK-DAG: %[[C:.+]] = arith.constant dense<7.000000e+00> : tensor<f32>
// CHECK-DAG: %[[D:.+]] = arith.constant dense<1.600000e+01> : tensor<f32>
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @fold_compute_scale() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %h = arith.constant dense<[10.0, 3.0, 0.0]> : tensor<3xf32>
  %z = arith.constant dense<0.0> : tensor<3xf32>
  %prev = arith.constant dense<7.0> : tensor<f32>
  %a = msamp.compute_scale pow2 max %h, %prev for f8E4M3FN : tensor<3xf32>
  %b = msamp.compute_scale exact max %h, %prev for f8E4M3FN : tensor<3xf32>
  %c = msamp.compute_scale pow2 max %z, %prev for f8E4M3FN : tensor<3xf32>
  %h2 = arith.constant dense<[20.0, 100.0]> : tensor<2xf32>
  %d = msamp.compute_scale pow2 most_recent %h2, %prev for f8E4M3FN margin 0 : tensor<2xf32>
  return %a, %b, %c, %d : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @fold_update_history
// CHECK: arith.constant dense<[5.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
func.func @fold_update_history() -> tensor<3xf32> {
  %h = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a = arith.constant dense<5.0> : tensor<f32>
  %r = msamp.update_amax_history %h, %a : tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// quantize(dequantize(q, 1/4), 4) is the identity on q: folded.
// CHECK-LABEL: func.func @quantize_of_dequantize
// CHECK-SAME: (%[[Q:.+]]: tensor<8xf8E4M3FN>)
// CHECK-NOT: msamp.
// CHECK: return %[[Q]]
func.func @quantize_of_dequantize(%q: tensor<8xf8E4M3FN>) -> tensor<8xf8E4M3FN> {
  %sinv = arith.constant dense<0.25> : tensor<f32>
  %s = arith.constant dense<4.0> : tensor<f32>
  %d = msamp.dequantize %q, %sinv : tensor<8xf8E4M3FN> to tensor<8xf32>
  %r = msamp.quantize %d, %s : tensor<8xf32> to tensor<8xf8E4M3FN>
  return %r : tensor<8xf8E4M3FN>
}

// -----

// Scales that are not exact reciprocals (3 * 0.25 != 1) must not fold.
// CHECK-LABEL: func.func @quantize_of_dequantize_not_reciprocal
// CHECK: msamp.dequantize
// CHECK: msamp.quantize
func.func @quantize_of_dequantize_not_reciprocal(%q: tensor<8xf8E4M3FN>) -> tensor<8xf8E4M3FN> {
  %sinv = arith.constant dense<0.25> : tensor<f32>
  %s = arith.constant dense<3.0> : tensor<f32>
  %d = msamp.dequantize %q, %sinv : tensor<8xf8E4M3FN> to tensor<8xf32>
  %r = msamp.quantize %d, %s : tensor<8xf32> to tensor<8xf8E4M3FN>
  return %r : tensor<8xf8E4M3FN>
}

// -----

// A change of format (E4M3 -> E5M2) is a real conversion: not folded.
// CHECK-LABEL: func.func @quantize_of_dequantize_other_format
// CHECK: msamp.dequantize
// CHECK: msamp.quantize
func.func @quantize_of_dequantize_other_format(%q: tensor<8xf8E4M3FN>) -> tensor<8xf8E5M2> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %d = msamp.dequantize %q, %one : tensor<8xf8E4M3FN> to tensor<8xf32>
  %r = msamp.quantize %d, %one : tensor<8xf32> to tensor<8xf8E5M2>
  return %r : tensor<8xf8E5M2>
}

// -----

// dequantize(quantize(x)) is lossy and is never folded to x.
// CHECK-LABEL: func.func @dequantize_of_quantize
// CHECK: %[[Q:.+]] = msamp.quantize
// CHECK: %[[D:.+]] = msamp.dequantize %[[Q]]
// CHECK: return %[[D]]
func.func @dequantize_of_quantize(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %q = msamp.quantize %x, %one : tensor<8xf32> to tensor<8xf8E4M3FN>
  %d = msamp.dequantize %q, %one : tensor<8xf8E4M3FN> to tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

// Collectives have side effects: an unused all_reduce is kept.
// CHECK-LABEL: func.func @keep_all_reduce
// CHECK: msamp.all_reduce sum
func.func @keep_all_reduce(%x: tensor<8xf32>) {
  %r = msamp.all_reduce sum %x : tensor<8xf32>
  return
}

// -----

// So are an unused reduce-to-owner (the other ranks' side of it) and
// broadcast.
// CHECK-LABEL: func.func @keep_owner_collectives
// CHECK: msamp.reduce mean
// CHECK: msamp.broadcast
func.func @keep_owner_collectives(%x: tensor<8xf32>) {
  %r = msamp.reduce mean %x root 1 : tensor<8xf32>
  %b = msamp.broadcast %x root 0 : tensor<8xf32>
  return
}

// -----

// Pure ops with unused results are erased.
// CHECK-LABEL: func.func @erase_dead_amax
// CHECK-NOT: msamp.amax
func.func @erase_dead_amax(%x: tensor<8xf32>) {
  %a = msamp.amax %x : tensor<8xf32>
  return
}
