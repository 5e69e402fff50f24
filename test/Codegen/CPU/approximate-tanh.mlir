// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-approximate-tanh))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-approximate-tanh))' --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-approximate-tanh))' | mlir-opt --convert-scf-to-cf --convert-math-to-llvm --convert-math-to-libm --convert-arith-to-llvm --convert-vector-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC

// f32 tanh (scalar and vector) becomes arith plus llvm.intr.fma, never a
// libm call (math.fma would become `fmaf` calls); f64 is left to libm.
// CHECK-LABEL: func.func @approx(
// CHECK-NOT: math.tanh
// CHECK-NOT: math.fma
// CHECK: llvm.intr.fma
// CHECK: arith.divf
// CHECK-LABEL: func.func @approx_vec(
// CHECK-NOT: math.tanh
// CHECK: llvm.intr.fma{{.*}}vector<16xf32>
// CHECK-LABEL: func.func @f64_untouched(
// CHECK: math.tanh %{{.*}} : f64

// REMARK-DAG: remark: [Passed] tanh-approximated | Category:msamp:approximate-tanh | Remark="1 f32 math.tanh in @approx replaced
// REMARK-DAG: Remark="1 f32 math.tanh in @approx_vec replaced
// REMARK-NOT: @f64_untouched

// Executed against libm's tanhf, which the pass no longer calls: at most 4
// ulp over a million points of [-12, 12] (saturation included) and 8 ulp
// around zero (where 1 ulp is tiny: x itself below 4e-4), then the special
// values, then every lane of the vector form bit-equal to the scalar form.
// EXEC: {{^[0-4]$}}
// EXEC-NEXT: {{^[0-8]$}}
// EXEC-NEXT: 1
// EXEC-NEXT: 1
// EXEC-NEXT: 1
// EXEC-NEXT: 1
// EXEC-NEXT: 1
// EXEC-NEXT: 1
// EXEC-NOT: {{.}}

func.func private @tanhf(f32) -> f32
func.func private @printI64(i64)
func.func private @printNewline()

func.func @approx(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}

func.func @approx_vec(%x: vector<16xf32>) -> vector<16xf32> {
  %t = math.tanh %x : vector<16xf32>
  return %t : vector<16xf32>
}

func.func @f64_untouched(%x: f64) -> f64 {
  %t = math.tanh %x : f64
  return %t : f64
}

func.func @print(%v: i64) {
  func.call @printI64(%v) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @print_bool(%b: i1) {
  %v = arith.extui %b : i1 to i64
  func.call @print(%v) : (i64) -> ()
  return
}

func.func @bits(%x: f32) -> i32 {
  %b = arith.bitcast %x : f32 to i32
  return %b : i32
}

// The largest ulp distance from libm over n points spread evenly over
// [lo, hi] (distance of the bit patterns: both results have the same sign).
func.func @max_ulp(%lo: f32, %hi: f32, %n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %n64 = arith.index_cast %n : index to i64
  %nf = arith.sitofp %n64 : i64 to f32
  %width = arith.subf %hi, %lo : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (i64) {
    %i64 = arith.index_cast %i : index to i64
    %if = arith.sitofp %i64 : i64 to f32
    %frac = arith.divf %if, %nf : f32
    %off = arith.mulf %frac, %width : f32
    %x = arith.addf %lo, %off : f32
    %a = func.call @approx(%x) : (f32) -> f32
    %b = func.call @tanhf(%x) : (f32) -> f32
    %ai = func.call @bits(%a) : (f32) -> i32
    %bi = func.call @bits(%b) : (f32) -> i32
    %a64 = arith.extsi %ai : i32 to i64
    %b64 = arith.extsi %bi : i32 to i64
    %d = arith.subi %a64, %b64 : i64
    %nd = arith.subi %zero, %d : i64
    %ad = arith.maxsi %d, %nd : i64
    %m2 = arith.maxsi %m, %ad : i64
    scf.yield %m2 : i64
  }
  return %r : i64
}

func.func @main() {
  %n = arith.constant 1000000 : index
  %lo = arith.constant -12.0 : f32
  %hi = arith.constant 12.0 : f32
  %u = func.call @max_ulp(%lo, %hi, %n) : (f32, f32, index) -> i64
  func.call @print(%u) : (i64) -> ()
  %slo = arith.constant -0.01 : f32
  %shi = arith.constant 0.01 : f32
  %u2 = func.call @max_ulp(%slo, %shi, %n) : (f32, f32, index) -> i64
  func.call @print(%u2) : (i64) -> ()

  // +-inf and large inputs saturate to exactly +-1.
  %one = arith.constant 1.0 : f32
  %mone = arith.constant -1.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %big = arith.constant 20.0 : f32
  %t_inf = func.call @approx(%inf) : (f32) -> f32
  %t_ninf = func.call @approx(%ninf) : (f32) -> f32
  %t_big = func.call @approx(%big) : (f32) -> f32
  %c1 = arith.cmpf oeq, %t_inf, %one : f32
  func.call @print_bool(%c1) : (i1) -> ()
  %c2 = arith.cmpf oeq, %t_ninf, %mone : f32
  func.call @print_bool(%c2) : (i1) -> ()
  %c3 = arith.cmpf oeq, %t_big, %one : f32
  func.call @print_bool(%c3) : (i1) -> ()
  // NaN stays NaN (the runtime's non-finite checks depend on it).
  %nan = arith.constant 0x7FC00000 : f32
  %t_nan = func.call @approx(%nan) : (f32) -> f32
  %c4 = arith.cmpf uno, %t_nan, %t_nan : f32
  func.call @print_bool(%c4) : (i1) -> ()
  // -0 keeps its sign.
  %mzero = arith.constant -0.0 : f32
  %t_mzero = func.call @approx(%mzero) : (f32) -> f32
  %zb = func.call @bits(%t_mzero) : (f32) -> i32
  %mzb = func.call @bits(%mzero) : (f32) -> i32
  %c5 = arith.cmpi eq, %zb, %mzb : i32
  func.call @print_bool(%c5) : (i1) -> ()

  // The vector form (what the loop vectorizer's lanes compute) equals the
  // scalar form lane by lane.
  %xs = arith.constant dense<[-9.0, -3.5, -1.25, -0.7, -0.3, -0.01, -0.0003, 0.0,
                              0.0002, 0.05, 0.4, 0.9, 1.6, 2.7, 5.0, 8.5]> : vector<16xf32>
  %tv = func.call @approx_vec(%xs) : (vector<16xf32>) -> vector<16xf32>
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %cs1 = arith.constant 1 : index
  %all = scf.for %i = %c0 to %c16 step %cs1 iter_args(%ok = %true) -> (i1) {
    %x = vector.extract %xs[%i] : f32 from vector<16xf32>
    %v = vector.extract %tv[%i] : f32 from vector<16xf32>
    %s = func.call @approx(%x) : (f32) -> f32
    %vb = func.call @bits(%v) : (f32) -> i32
    %sb = func.call @bits(%s) : (f32) -> i32
    %eq = arith.cmpi eq, %vb, %sb : i32
    %ok2 = arith.andi %ok, %eq : i1
    scf.yield %ok2 : i1
  }
  func.call @print_bool(%all) : (i1) -> ()
  return
}
