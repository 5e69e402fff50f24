// msamp-gpu-merge-atomic-sums: consecutive atomic full-sum kernels of
// msamp-gpu-atomic-full-reductions into one accumulator (the gradient
// norm's sums of squares) become one kernel of the larger thread count,
// each body guarded by its own; the earlier moves down past a call that
// writes the later one's input. It stays where it is when a call between
// reads the accumulator.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-kernel-costs,msamp-gpu-atomic-full-reductions{threads=256},msamp-gpu-merge-atomic-sums))' | FileCheck %s
// The merged cost is the sum of the two (one launch).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-kernel-costs,msamp-gpu-atomic-full-reductions{threads=256},msamp-gpu-merge-atomic-sums))' --mlir-print-debuginfo | FileCheck %s --check-prefix=COST
// Run on the CPU with and without the merge (integer-valued squares: the
// sums are exact in any order), the same output.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-kernel-costs,msamp-gpu-atomic-full-reductions{threads=256},msamp-gpu-merge-atomic-sums))' | msamp-opt --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so > %t.pass
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-kernel-costs,msamp-gpu-atomic-full-reductions{threads=256}))' | msamp-opt --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so > %t.ref
// RUN: diff %t.ref %t.pass
// RUN: FileCheck %s --check-prefix=EXEC < %t.pass

#v = affine_map<(d0) -> (d0)>
#v0 = affine_map<(d0) -> ()>
#m = affine_map<(d0, d1) -> (d0, d1)>
#m0 = affine_map<(d0, d1) -> ()>

// (A body, for the CPU run: the pass knows the entry point by its name.)
func.func @msamp_rt_amax(%in: memref<*xi8>, %out: memref<*xi8>, %n: i32) {
  return
}

// CHECK-LABEL: func.func @chain(
// CHECK: call @msamp_rt_amax
// CHECK: scf.parallel (%[[T:[a-z0-9_]+]]) = (%{{.+}}) to (%c256{{[_0-9]*}})
// CHECK-NEXT: %[[C100:.+]] = arith.constant 100 : index
// CHECK-NEXT: arith.cmpi ult, %[[T]], %[[C100]] : index
// CHECK-NEXT: scf.if
// CHECK: scf.for
// CHECK: memref.atomic_rmw addf
// CHECK: scf.for
// CHECK: memref.atomic_rmw addf
// CHECK-NOT: scf.parallel
// CHECK: return
// COST: msamp.gpu_kernel_cost = {bytes = 5232 : i64, flops = 2600 : i64, op = "linalg.generic"}
func.func @chain(%a: memref<100xf32>, %q: memref<1200xf32>) -> f64 {
  %acc = memref.alloc() : memref<f64>
  %start = arith.constant 0.5 : f64
  memref.store %start, %acc[] : memref<f64>
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%a : memref<100xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %s = arith.mulf %e, %e : f64
    %t = arith.addf %s, %o : f64
    linalg.yield %t : f64
  }
  %m = memref.alloc() : memref<4x300xf32>
  %mq = memref.expand_shape %q [[0, 1]] output_shape [4, 300] : memref<1200xf32> into memref<4x300xf32>
  memref.copy %mq, %m : memref<4x300xf32> to memref<4x300xf32>
  %qu = memref.cast %q : memref<1200xf32> to memref<*xf32>
  %mu = memref.cast %m : memref<4x300xf32> to memref<*xf32>
  %qb = builtin.unrealized_conversion_cast %qu : memref<*xf32> to memref<*xi8>
  %mb = builtin.unrealized_conversion_cast %mu : memref<*xf32> to memref<*xi8>
  %n = arith.constant 1200 : i32
  call @msamp_rt_amax(%qb, %mb, %n) : (memref<*xi8>, memref<*xi8>, i32) -> ()
  linalg.generic {indexing_maps = [#m, #m0], iterator_types = ["reduction", "reduction"]}
      ins(%m : memref<4x300xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %s = arith.mulf %e, %e : f64
    %t = arith.addf %s, %o : f64
    linalg.yield %t : f64
  }
  memref.dealloc %m : memref<4x300xf32>
  %r = memref.load %acc[] : memref<f64>
  memref.dealloc %acc : memref<f64>
  return %r : f64
}

// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-2: scf.parallel
func.func @kept(%a: memref<100xf32>, %b: memref<100xf32>) -> memref<f64> {
  %acc = memref.alloc() : memref<f64>
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%a : memref<100xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %t = arith.addf %e, %o : f64
    linalg.yield %t : f64
  }
  %y = memref.alloc() : memref<f32>
  %au = memref.cast %acc : memref<f64> to memref<*xf64>
  %yu = memref.cast %y : memref<f32> to memref<*xf32>
  %ab = builtin.unrealized_conversion_cast %au : memref<*xf64> to memref<*xi8>
  %yb = builtin.unrealized_conversion_cast %yu : memref<*xf32> to memref<*xi8>
  %n = arith.constant 1 : i32
  call @msamp_rt_amax(%ab, %yb, %n) : (memref<*xi8>, memref<*xi8>, i32) -> ()
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%b : memref<100xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %t = arith.addf %e, %o : f64
    linalg.yield %t : f64
  }
  memref.dealloc %y : memref<f32>
  return %acc : memref<f64>
}

func.func private @printF64(f64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %c1200 = arith.constant 1200 : index
  %a = memref.alloc() : memref<100xf32>
  %q = memref.alloc() : memref<1200xf32>
  scf.for %i = %c0 to %c100 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %a[%i] : memref<100xf32>
  }
  scf.for %i = %c0 to %c1200 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %q[%i] : memref<1200xf32>
  }
  %r = call @chain(%a, %q) : (memref<100xf32>, memref<1200xf32>) -> f64
  call @printF64(%r) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}
// EXEC: 5.75609e+08
