// msamp-gpu-block-atomic-sums: the atomic-sum kernels of
// msamp-gpu-atomic-full-reductions (and msamp-gpu-merge-atomic-sums)
// become a gpu.launch in which each block adds its threads' partial sums in
// workgroup memory (a halving tree with barriers) and thread 0 makes one
// atomic add per accumulator. (The kernels' PTX assembles:
// test/CUDA/block-atomic-sums-ptxas.test.)
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-atomic-full-reductions{threads=256},msamp-gpu-merge-atomic-sums,msamp-gpu-block-atomic-sums))' | FileCheck %s
// RUN: not msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-block-atomic-sums{block-size=48}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: msamp-gpu-block-atomic-sums: block-size must be a power of two in 32..1024, got 48

#v = affine_map<(d0) -> (d0)>
#v0 = affine_map<(d0) -> ()>

// Two sums into one accumulator, merged: 256 threads (a block), the
// 100-element part guarded by t < 100 (-0.0 elsewhere), both parts' partial
// sums added in the thread, one workgroup buffer, 8 halving steps, one
// atomic add.
// CHECK-LABEL: func.func @chain(
// CHECK-NOT: scf.parallel
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c1{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}) workgroup(%[[S:.+]] : memref<256xf64, #gpu.address_space<workgroup>>)
// CHECK: %[[T:.+]] = arith.addi %{{.+}}, %[[TX]] : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[T]], %c100
// CHECK: %[[P1:.+]] = scf.if %[[IN]] -> (f64) {
// CHECK: scf.for %{{.+}} = %[[T]] to %c100
// CHECK: } else {
// CHECK: %[[NZ:.+]] = arith.constant -0.000000e+00 : f64
// CHECK: scf.yield %[[NZ]] : f64
// CHECK: %[[P2:.+]] = scf.for %{{.+}} = %[[T]] to %c1200
// CHECK: %[[P:.+]] = arith.addf %[[P1]], %[[P2]] : f64
// CHECK: memref.store %[[P]], %[[S]][%[[TX]]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %[[TX]], %c128
// CHECK: gpu.barrier
// CHECK-COUNT-6: gpu.barrier
// CHECK: arith.cmpi ult, %[[TX]], %c1{{[_0-9]*}} :
// CHECK-NOT: gpu.barrier
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TX]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[TOTAL:.+]] = memref.load %[[S]][%c0
// CHECK: memref.atomic_rmw addf %[[TOTAL]], %[[ACC:.+]][] : (f64, memref<f64>) -> f64
// CHECK-NOT: memref.atomic_rmw
// CHECK: gpu.terminator
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
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%q : memref<1200xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %s = arith.mulf %e, %e : f64
    %t = arith.addf %s, %o : f64
    linalg.yield %t : f64
  }
  %r = memref.load %acc[] : memref<f64>
  memref.dealloc %acc : memref<f64>
  return %r : f64
}

// 100 threads: a block of 128 (the power of two above), the 28 threads
// past the last contributing -0.0; two accumulators (f32, f64) merged into
// one kernel, one workgroup buffer each, one atomic add each.
// CHECK-LABEL: func.func @two(
// CHECK: gpu.launch {{.+}} threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128{{[_0-9]*}}, {{.+}} workgroup(%[[SF:.+]] : memref<128xf32, #gpu.address_space<workgroup>>, %[[SD:.+]] : memref<128xf64, #gpu.address_space<workgroup>>)
// CHECK: %[[IN:.+]] = arith.cmpi ult, %{{.+}}, %c100
// CHECK: %[[P:.+]]:2 = scf.if %[[IN]] -> (f32, f64) {
// CHECK: } else {
// CHECK: scf.yield %{{.+}}, %{{.+}} : f32, f64
// CHECK: memref.store %[[P]]#0, %[[SF]][%[[TX]]]
// CHECK: memref.store %[[P]]#1, %[[SD]][%[[TX]]]
// CHECK-COUNT-7: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.atomic_rmw addf %{{.+}}, %alloc[] : (f32, memref<f32>) -> f32
// CHECK: memref.atomic_rmw addf %{{.+}}, %alloc_{{.+}}[] : (f64, memref<f64>) -> f64
func.func @two(%a: memref<100xf32>, %b: memref<100xf32>) -> (f32, f64) {
  %o32 = memref.alloc() : memref<f32>
  %o64 = memref.alloc() : memref<f64>
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%a : memref<100xf32>) outs(%o32 : memref<f32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%b : memref<100xf32>) outs(%o64 : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %t = arith.addf %e, %o : f64
    linalg.yield %t : f64
  }
  %r32 = memref.load %o32[] : memref<f32>
  %r64 = memref.load %o64[] : memref<f64>
  return %r32, %r64 : f32, f64
}

// Three sums (50, 100 and 1200 elements): one kernel of the largest
// thread count (msamp-gpu-merge-atomic-sums), each smaller part guarded by
// its own; each guard yields its sum or -0.0 (which adds no bits), and the
// thread's parts are added in order.
// CHECK-LABEL: func.func @nested(
// CHECK: gpu.launch
// CHECK: %[[T:.+]] = arith.addi
// CHECK: %[[IN50:.+]] = arith.cmpi ult, %[[T]], %c50
// CHECK: %[[P50:.+]] = scf.if %[[IN50]] -> (f64) {
// CHECK: scf.for %{{.+}} = %[[T]] to %c50
// CHECK: } else {
// CHECK: arith.constant -0.000000e+00 : f64
// CHECK: %[[IN100:.+]] = arith.cmpi ult, %[[T]], %c100
// CHECK: %[[P100:.+]] = scf.if %[[IN100]] -> (f64) {
// CHECK: scf.for %{{.+}} = %[[T]] to %c100
// CHECK: } else {
// CHECK: arith.constant -0.000000e+00 : f64
// CHECK: %[[P150:.+]] = arith.addf %[[P50]], %[[P100]] : f64
// CHECK: %[[P1200:.+]] = scf.for %{{.+}} = %[[T]] to %c1200
// CHECK: arith.addf %[[P150]], %[[P1200]] : f64
// CHECK-COUNT-8: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.atomic_rmw addf
// CHECK-NOT: memref.atomic_rmw
// CHECK: gpu.terminator
func.func @nested(%a: memref<50xf32>, %b: memref<100xf32>, %c: memref<1200xf32>) -> f64 {
  %acc = memref.alloc() : memref<f64>
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%a : memref<50xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %t = arith.addf %e, %o : f64
    linalg.yield %t : f64
  }
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%b : memref<100xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %t = arith.addf %e, %o : f64
    linalg.yield %t : f64
  }
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%c : memref<1200xf32>) outs(%acc : memref<f64>) {
  ^bb0(%x: f32, %o: f64):
    %e = arith.extf %x : f32 to f64
    %t = arith.addf %e, %o : f64
    linalg.yield %t : f64
  }
  %r = memref.load %acc[] : memref<f64>
  return %r : f64
}

// Not an atomic sum: a kernel that stores is left alone.
// CHECK-LABEL: func.func @stores(
// CHECK: scf.parallel
// CHECK-NOT: gpu.launch
func.func @stores(%a: memref<100xf32>, %o: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  scf.parallel (%t) = (%c0) to (%c100) step (%c1) {
    %x = memref.load %a[%t] : memref<100xf32>
    %r = memref.atomic_rmw addf %x, %o[] : (f32, memref<f32>) -> f32
    memref.store %x, %a[%t] : memref<100xf32>
    scf.reduce
  }
  return
}
