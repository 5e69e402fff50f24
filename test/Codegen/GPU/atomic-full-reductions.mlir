// msamp-gpu-atomic-full-reductions: a full f64 sum of f32 products over a
// transposed operand becomes 64 strided partial sums and an atomic add into
// the 0-d accumulator (whose initial 0.5 is kept). The IR is checked, and
// both versions are lowered for the CPU (scf.parallel runs sequentially,
// atomic_rmw is an LLVM atomicrmw) and run: the result equals a sequential
// reference exactly (every term is an integer).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-atomic-full-reductions{threads=64}))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-atomic-full-reductions{threads=64}))' | msamp-opt --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC
// RUN: msamp-opt %s --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @sumsq(
// CHECK-NOT: linalg.generic
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<37x53xf32> into memref<1961xf32>
// CHECK: scf.parallel (%[[T:.+]]) = (%c0) to (%c64) step (%c1)
// CHECK: %[[P:.+]] = scf.for %[[I:.+]] = %[[T]] to %c1961 step %c64 iter_args(%[[A:.+]] = %cst) -> (f64)
// The contiguous operand read in loop order at the linear index (a 1-d
// view), the transposed one at the delinearized indices.
// CHECK: %[[X:.+]] = memref.load %collapse_shape[%[[I]]] : memref<1961xf32>
// CHECK: %[[J:.+]] = arith.remui %[[I]], %c53
// CHECK: %[[R:.+]] = arith.divui %[[I]], %c53
// CHECK: %[[Y:.+]] = memref.load %arg1[
// CHECK: arith.mulf %[[X]], %[[Y]] : f32
// CHECK: scf.yield
// CHECK: memref.atomic_rmw addf %[[P]], %arg2[] : (f64, memref<f64>) -> f64
// CHECK-LABEL: func.func @main(

// EXEC: 3.21212e+07
// EXEC-NEXT: 0
#all2 = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
#s2 = affine_map<(i, j) -> ()>
func.func private @printF64(f64)
func.func private @printNewline()
func.func @sumsq(%x: memref<37x53xf32>, %y: memref<53x37xf32>, %out: memref<f64>) {
  linalg.generic {indexing_maps = [#all2, #tr, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%x, %y : memref<37x53xf32>, memref<53x37xf32>) outs(%out : memref<f64>) {
  ^bb0(%a: f32, %b: f32, %o: f64):
    %p = arith.mulf %a, %b : f32
    %e = arith.extf %p : f32 to f64
    %s = arith.addf %e, %o : f64
    linalg.yield %s : f64
  }
  return
}
func.func @main() {
  %x = memref.alloc() : memref<37x53xf32>
  %y = memref.alloc() : memref<53x37xf32>
  %out = memref.alloc() : memref<f64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c37 = arith.constant 37 : index
  %c53 = arith.constant 53 : index
  scf.for %i = %c0 to %c37 step %c1 {
    scf.for %j = %c0 to %c53 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %jj = arith.index_cast %j : index to i32
      %k = arith.muli %ii, %jj : i32
      %f = arith.sitofp %k : i32 to f32
      %g = arith.sitofp %jj : i32 to f32
      memref.store %f, %x[%i, %j] : memref<37x53xf32>
      memref.store %g, %y[%j, %i] : memref<53x37xf32>
    }
  }
  %init = arith.constant 0.5 : f64
  memref.store %init, %out[] : memref<f64>
  call @sumsq(%x, %y, %out) : (memref<37x53xf32>, memref<53x37xf32>, memref<f64>) -> ()
  %r = memref.load %out[] : memref<f64>
  // The sequential reference: every term is an integer, exact in any order.
  %ref = scf.for %i = %c0 to %c37 step %c1 iter_args(%acc = %init) -> f64 {
    %row = scf.for %j = %c0 to %c53 step %c1 iter_args(%a = %acc) -> f64 {
      %u = memref.load %x[%i, %j] : memref<37x53xf32>
      %v = memref.load %y[%j, %i] : memref<53x37xf32>
      %p = arith.mulf %u, %v : f32
      %e = arith.extf %p : f32 to f64
      %s = arith.addf %a, %e : f64
      scf.yield %s : f64
    }
    scf.yield %row : f64
  }
  call @printF64(%r) : (f64) -> ()
  call @printNewline() : () -> ()
  %d = arith.subf %r, %ref : f64
  call @printF64(%d) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}
