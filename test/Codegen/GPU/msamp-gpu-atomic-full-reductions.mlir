// msamp-gpu-atomic-full-reductions on a sum of more than small-sum elements
// (issue 23, "Full sums at bandwidth"): T = min(ceil(N / unroll), threads)
// threads, each with `unroll` accumulators whose loads are issued together,
// a contiguous input read through a 1-d view at the linear index (no
// div/rem), a transposed one at delinearized indices, the last partial step
// masked. Every function runs on the CPU (scf.parallel sequential,
// atomic_rmw an LLVM atomicrmw) against a sequential reference: every term
// is an integer, so any order gives the same sum (printed difference 0).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-atomic-full-reductions{threads=64 unroll=4 small-sum=100}))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-atomic-full-reductions{threads=64 unroll=4 small-sum=100}))' | msamp-opt --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC
// A sum of at most small-sum elements keeps the one-loop form (stride T).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-atomic-full-reductions{threads=64 unroll=4 small-sum=2000}))' | FileCheck %s --check-prefix=SMALL

// 37 x 53 = 1961 elements, T = 64, unroll 4: steps of 256 up to 1792, then
// the rest: elements 1792 + t and 1856 + t for every thread, 1920 + t
// masked (t < 41), 1984 + t for none.
// CHECK-LABEL: func.func @sumsq(
// CHECK-NOT: linalg.generic
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<37x53xf32> into memref<1961xf32>
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%c64{{.*}}) step
// CHECK: %[[LOOP:.+]]:4 = scf.for %[[I:.+]] = %[[T]] to %c1792 step %c256 iter_args(%[[A0:.+]] = %cst, %[[A1:.+]] = %cst, %[[A2:.+]] = %cst, %[[A3:.+]] = %cst) -> (f64, f64, f64, f64)
// CHECK: %[[I1:.+]] = arith.addi %[[I]], %c64
// CHECK: %[[I2:.+]] = arith.addi %[[I]], %c128
// CHECK: %[[I3:.+]] = arith.addi %[[I]], %c192
// The four elements' loads come before any arithmetic: the contiguous
// operand at the linear index, the transposed one at delinearized indices.
// CHECK: memref.load %[[FLAT]][%[[I]]]
// CHECK: arith.remui %[[I]], %c53
// CHECK: memref.load %arg1[
// CHECK: memref.load %[[FLAT]][%[[I1]]]
// CHECK: memref.load %arg1[
// CHECK: memref.load %[[FLAT]][%[[I2]]]
// CHECK: memref.load %arg1[
// CHECK: memref.load %[[FLAT]][%[[I3]]]
// CHECK: memref.load %arg1[
// CHECK-NOT: memref.load
// CHECK: arith.mulf
// CHECK: scf.yield %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : f64, f64, f64, f64
// CHECK: %[[R0:.+]] = arith.addi %[[T]], %c1792
// CHECK: %[[R2:.+]] = arith.addi %[[R0]], %c128
// CHECK: %[[M:.+]] = arith.cmpi ult, %[[R2]], %c1961
// CHECK: %[[C:.+]] = arith.minui %[[R2]], %c1960
// CHECK: memref.load %[[FLAT]][%[[C]]]
// CHECK: %[[S:.+]] = arith.addf %{{.+}}, %[[LOOP]]#2 : f64
// CHECK: arith.select %[[M]], %[[S]], %[[LOOP]]#2 : f64
// CHECK: %[[P01:.+]] = arith.addf %{{.+}}, %{{.+}} : f64
// CHECK: %[[P23:.+]] = arith.addf %{{.+}}, %[[LOOP]]#3 : f64
// CHECK: %[[P:.+]] = arith.addf %[[P01]], %[[P23]] : f64
// CHECK: memref.atomic_rmw addf %[[P]], %arg2[] : (f64, memref<f64>) -> f64

// 201 elements, T = ceil(201 / 4) = 51: no full step, one step of four
// elements, the last (153 + t) masked.
// CHECK-LABEL: func.func @vec(
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%c51{{.*}}) step
// CHECK-NOT: scf.for
// CHECK: arith.minui
// CHECK: memref.load %arg0[%[[T]]]
// CHECK: memref.atomic_rmw addf

// SMALL-LABEL: func.func @sumsq(
// SMALL: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%c64{{.*}}) step
// SMALL: scf.for %[[I:.+]] = %[[T]] to %c1961 step %c64{{.*}} iter_args(%{{.+}} = %cst) -> (f64)
// SMALL: memref.load %{{.+}}[%[[I]]] : memref<1961xf32>
// SMALL: arith.remui %[[I]], %c53
// SMALL: memref.atomic_rmw addf
// SMALL-LABEL: func.func @vec(
// SMALL-NOT: arith.remui
// SMALL: memref.atomic_rmw addf

// EXEC: 3.21212e+07
// EXEC-NEXT: 0
// EXEC-NEXT: 20100.5
// EXEC-NEXT: 0
#all2 = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
#s2 = affine_map<(i, j) -> ()>
#v = affine_map<(i) -> (i)>
#s1 = affine_map<(i) -> ()>
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
func.func @vec(%x: memref<201xf32>, %out: memref<f64>) {
  linalg.generic {indexing_maps = [#v, #s1], iterator_types = ["reduction"]}
      ins(%x : memref<201xf32>) outs(%out : memref<f64>) {
  ^bb0(%a: f32, %o: f64):
    %e = arith.extf %a : f32 to f64
    %s = arith.addf %o, %e : f64
    linalg.yield %s : f64
  }
  return
}
func.func @main() {
  %x = memref.alloc() : memref<37x53xf32>
  %y = memref.alloc() : memref<53x37xf32>
  %v = memref.alloc() : memref<201xf32>
  %out = memref.alloc() : memref<f64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c37 = arith.constant 37 : index
  %c53 = arith.constant 53 : index
  %c201 = arith.constant 201 : index
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
  scf.for %i = %c0 to %c201 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %v[%i] : memref<201xf32>
  }
  %init = arith.constant 0.5 : f64
  memref.store %init, %out[] : memref<f64>
  call @sumsq(%x, %y, %out) : (memref<37x53xf32>, memref<53x37xf32>, memref<f64>) -> ()
  %r = memref.load %out[] : memref<f64>
  // The sequential reference: every term is an integer, exact in any order.
  %ref = scf.for %i = %c0 to %c37 step %c1 iter_args(%acc = %init) -> f64 {
    %row = scf.for %j = %c0 to %c53 step %c1 iter_args(%a = %acc) -> f64 {
      %u = memref.load %x[%i, %j] : memref<37x53xf32>
      %w = memref.load %y[%j, %i] : memref<53x37xf32>
      %p = arith.mulf %u, %w : f32
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
  memref.store %init, %out[] : memref<f64>
  call @vec(%v, %out) : (memref<201xf32>, memref<f64>) -> ()
  %rv = memref.load %out[] : memref<f64>
  %refv = scf.for %i = %c0 to %c201 step %c1 iter_args(%acc = %init) -> f64 {
    %u = memref.load %v[%i] : memref<201xf32>
    %e = arith.extf %u : f32 to f64
    %s = arith.addf %acc, %e : f64
    scf.yield %s : f64
  }
  call @printF64(%rv) : (f64) -> ()
  call @printNewline() : () -> ()
  %dv = arith.subf %rv, %refv : f64
  call @printF64(%dv) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}
