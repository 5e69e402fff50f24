// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-legalize-math))' | FileCheck %s

// The math ops neither libm nor libdevice provides become ops both targets
// lower; the others are left alone. (python/tests/test_math_ops.py runs
// every math op against numpy.)
// CHECK-LABEL: func.func @rewritten(
// CHECK-NOT: math.rsqrt
// CHECK-NOT: math.clampf
// CHECK-NOT: math.fpowi
// CHECK-NOT: math.ipowi
// CHECK-NOT: math.sincos
// CHECK-NOT: math.is
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK: arith.sitofp
// CHECK: math.powf
// CHECK: scf.for
// CHECK: arith.muli
// CHECK: math.sin
// CHECK: math.cos
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf oge
func.func @rewritten(%a: f32, %b: f32, %c: f32, %i: i32, %n: i32)
    -> (f32, f32, f32, i32, f32, f32, i1, i1, i1, i1) {
  %0 = math.rsqrt %a : f32
  %1 = math.clampf %a to [%b, %c] : f32
  %2 = math.fpowi %a, %n : f32, i32
  %3 = math.ipowi %i, %n : i32
  %4, %5 = math.sincos %a : f32
  %6 = math.isnan %a : f32
  %7 = math.isinf %a : f32
  %8 = math.isfinite %a : f32
  %9 = math.isnormal %a : f32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : f32, f32, f32, i32, f32, f32, i1, i1, i1, i1
}

// CHECK-LABEL: func.func @kept(
// CHECK: math.exp
// CHECK: math.erf
// CHECK: math.ctlz
func.func @kept(%a: f32, %i: i32) -> (f32, f32, i32) {
  %0 = math.exp %a : f32
  %1 = math.erf %a : f32
  %2 = math.ctlz %i : i32
  return %0, %1, %2 : f32, f32, i32
}
