// RUN: msamp-opt %s --msamp-math-to-libm-or-llvm | FileCheck %s

// libm where it has the function (expm1f, not exp(x) - 1), LLVM intrinsics
// for exact operations and what libm lacks; no math op is left.
// CHECK-LABEL: func.func @host(
// CHECK-NOT: math.
// CHECK-DAG: call @expm1f(
// CHECK-DAG: call @log1pf(
// CHECK-DAG: call @erff(
// CHECK-DAG: llvm.intr.copysign
// CHECK-DAG: llvm.intr.floor
// CHECK-DAG: llvm.intr.fma
// CHECK-DAG: llvm.intr.ctlz
// CHECK-DAG: llvm.intr.ctpop
// CHECK-DAG: "llvm.intr.abs"
func.func @host(%a: f32, %b: f32, %i: i32) -> (f32, f32, f32, f32, f32, f32, i32, i32, i32) {
  %0 = math.expm1 %a : f32
  %1 = math.log1p %a : f32
  %2 = math.erf %a : f32
  %3 = math.copysign %a, %b : f32
  %4 = math.floor %a : f32
  %5 = math.fma %a, %b, %a : f32
  %6 = math.ctlz %i : i32
  %7 = math.ctpop %i : i32
  %8 = math.absi %i : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f32, f32, f32, f32, f32, i32, i32, i32
}
