// msamp-gpu-atomic-full-reductions: a full f64 sum of f32 products over a
// transposed operand becomes 64 strided partial sums and an atomic add into
// the 0-d accumulator (whose initial 0.5 is kept). The IR is checked, and
// both versions are lowered for the CPU (scf.parallel runs sequentially,
// atomic_rmw is an LLVM atomicrmw) and run: the result equals a sequential
// reference exactly (every term is an integer). A sum over a lookup (an
// embedding's gathered rows: the loss of Inputs/embedding-grad-step.mlir)
// reads its loop indices with linalg.index: each becomes the element's
// delinearized index in that dimension, so it runs on the device too
// instead of as a host loop (which blocked the step's CUDA graph). Its
// value, 0.5 + sum_{i,j} (7i mod 10) j (j mod 3) + i = 255780.5, is exact
// in any order; the second line of each pair is the difference from the
// sequential reference.
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
// CHECK-LABEL: func.func @gathersum(
// CHECK-NOT: linalg.
// CHECK: %[[W:.+]] = memref.collapse_shape %arg1
// CHECK: scf.parallel (%[[T:.+]]) = (%c0) to (%c64) step (%c1)
// CHECK: scf.for %[[I:.+]] = %[[T]] to %c1961 step %c64 iter_args(
// CHECK: %[[J:.+]] = arith.remui %[[I]], %c53
// CHECK: %[[R:.+]] = arith.divui %[[I]], %c53
// CHECK: %[[ROW:.+]] = arith.remui %[[R]], %c37
// CHECK: %[[ID:.+]] = memref.load %arg0[
// CHECK: memref.load %[[W]][%[[I]]]
// CHECK: %[[IX:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: memref.load %arg2[%[[IX]], %[[J]]]
// CHECK: arith.index_cast %[[ROW]] : index to i64
// CHECK: memref.atomic_rmw addf
// CHECK-LABEL: func.func @main(

// EXEC: 3.21212e+07
// EXEC-NEXT: 0
// EXEC-NEXT: 255780
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
// sum_{i,j} tab[ids[i], j] * w[i, j] + i: the row gathered, the column
// and i read with linalg.index.
func.func @gathersum(%ids: memref<37xi64>, %w: memref<37x53xf32>, %tab: memref<10x53xf32>, %out: memref<f64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, #all2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%ids, %w : memref<37xi64>, memref<37x53xf32>) outs(%out : memref<f64>) {
  ^bb0(%id: i64, %x: f32, %o: f64):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %g = memref.load %tab[%row, %j] : memref<10x53xf32>
    %v = arith.mulf %g, %x : f32
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %t = arith.addf %v, %fi : f32
    %e = arith.extf %t : f32 to f64
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

  // ids[i] = (7 i) mod 10, tab[r, j] = r * j; the reference as loops.
  %ids = memref.alloc() : memref<37xi64>
  %tab = memref.alloc() : memref<10x53xf32>
  %c10 = arith.constant 10 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c0 to %c37 step %c1 {
    %m = arith.muli %i, %c7 : index
    %q = arith.remui %m, %c10 : index
    %ri = arith.index_cast %q : index to i64
    memref.store %ri, %ids[%i] : memref<37xi64>
  }
  scf.for %q = %c0 to %c10 step %c1 {
    scf.for %j = %c0 to %c53 step %c1 {
      %k = arith.muli %q, %j : index
      %ki = arith.index_cast %k : index to i64
      %f = arith.sitofp %ki : i64 to f32
      memref.store %f, %tab[%q, %j] : memref<10x53xf32>
    }
  }
  // w[i, j] = j mod 3.
  %y2 = memref.alloc() : memref<37x53xf32>
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c37 step %c1 {
    scf.for %j = %c0 to %c53 step %c1 {
      %k = arith.remui %j, %c3 : index
      %ki = arith.index_cast %k : index to i64
      %f = arith.sitofp %ki : i64 to f32
      memref.store %f, %y2[%i, %j] : memref<37x53xf32>
    }
  }
  %out2 = memref.alloc() : memref<f64>
  memref.store %init, %out2[] : memref<f64>
  call @gathersum(%ids, %y2, %tab, %out2) : (memref<37xi64>, memref<37x53xf32>, memref<10x53xf32>, memref<f64>) -> ()
  %r2 = memref.load %out2[] : memref<f64>
  %ref2 = scf.for %i = %c0 to %c37 step %c1 iter_args(%acc = %init) -> f64 {
    %id = memref.load %ids[%i] : memref<37xi64>
    %row = arith.index_cast %id : i64 to index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %inner = scf.for %j = %c0 to %c53 step %c1 iter_args(%a = %acc) -> f64 {
      %g = memref.load %tab[%row, %j] : memref<10x53xf32>
      %wv = memref.load %y2[%i, %j] : memref<37x53xf32>
      %v = arith.mulf %g, %wv : f32
      %t = arith.addf %v, %fi : f32
      %e = arith.extf %t : f32 to f64
      %s = arith.addf %a, %e : f64
      scf.yield %s : f64
    }
    scf.yield %inner : f64
  }
  call @printF64(%r2) : (f64) -> ()
  call @printNewline() : () -> ()
  %d2 = arith.subf %r2, %ref2 : f64
  call @printF64(%d2) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}
