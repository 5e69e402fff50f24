// msamp-gpu-split-scalar-buffers: each top-level store into a 0-d
// allocation after the first starts a fresh buffer, used up to the next
// such store (casts rebuilt on it) and deallocated with the original, so
// that no store waits for the previous value's readers.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-split-scalar-buffers))' | FileCheck %s
// With the single-thread kernels and their merge: the three inverse scales
// that bufferization put into one buffer, each read by a dequantize, are
// computed by one kernel before the first dequantize (three kernels
// without the split).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-split-scalar-buffers,msamp-gpu-scalar-kernels,msamp-gpu-merge-scalar-kernels))' | FileCheck %s --check-prefix=MERGED
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels,msamp-gpu-merge-scalar-kernels))' | FileCheck %s --check-prefix=UNSPLIT

// CHECK-LABEL: func.func @inverses(
// CHECK: memref.alloc() : memref<16xf32>
// CHECK: %[[B:.+]] = memref.alloc() : memref<f32>
// CHECK-NEXT: %[[C0:.+]] = memref.cast %[[B]] :
// CHECK: memref.store %{{.+}}, %[[B]][]
// CHECK-NEXT: %[[I0:.+]] = builtin.unrealized_conversion_cast %[[C0]] :
// CHECK-NEXT: call @msamp_rt_dequantize(%{{.+}}, %[[I0]],
// CHECK: %[[B1:.+]] = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.store %{{.+}}, %[[B1]][]
// CHECK: %[[C1:.+]] = memref.cast %[[B1]] :
// CHECK-NEXT: %[[I1:.+]] = builtin.unrealized_conversion_cast %[[C1]] :
// CHECK-NEXT: call @msamp_rt_dequantize(%{{.+}}, %[[I1]],
// CHECK: %[[B2:.+]] = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.store %{{.+}}, %[[B2]][]
// CHECK: %[[C2:.+]] = memref.cast %[[B2]] :
// CHECK-NEXT: %[[I2:.+]] = builtin.unrealized_conversion_cast %[[C2]] :
// CHECK-NEXT: call @msamp_rt_dequantize(%{{.+}}, %[[I2]],
// The last value's reader: a load of the fresh buffer.
// CHECK-NEXT: memref.load %[[B2]][]
// CHECK: memref.dealloc %[[B1]] :
// CHECK-NEXT: memref.dealloc %[[B2]] :
// CHECK-NEXT: memref.dealloc %[[B]] :

// MERGED-LABEL: func.func @inverses(
// MERGED: scf.parallel
// MERGED-NEXT: scf.parallel
// MERGED-COUNT-3: arith.divf
// MERGED: scf.reduce
// MERGED-NOT: scf.parallel
// MERGED: call @msamp_rt_dequantize(
// MERGED-NOT: scf.parallel
// MERGED: call @msamp_rt_dequantize(
// MERGED-NOT: scf.parallel
// MERGED: call @msamp_rt_dequantize(
// UNSPLIT-LABEL: func.func @inverses(
// UNSPLIT: scf.parallel
// UNSPLIT: call @msamp_rt_dequantize(
// UNSPLIT: scf.parallel
// UNSPLIT: call @msamp_rt_dequantize(
// UNSPLIT: scf.parallel
// UNSPLIT: call @msamp_rt_dequantize(

// CHECK-LABEL: func.func @address_taken(
// An address taken before the last store (it may be read after it): the
// buffer is left alone.
// CHECK-COUNT-1: memref.alloc()
// CHECK-NOT: memref.alloc()
// CHECK: return

// CHECK-LABEL: func.func @address_taken_last(
// An address taken for the last value only: that value moves to a fresh
// buffer, whose address is taken.
// CHECK: %[[B:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[B1:.+]] = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.store %{{.+}}, %[[B1]][]
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[B1]] :
// CHECK: return

// CHECK-LABEL: func.func @one_store(
// CHECK-COUNT-1: memref.alloc()
// CHECK-NOT: memref.alloc()
// CHECK: return

module {
  func.func private @msamp_rt_dequantize(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32)
  func.func private @use(index)

  func.func @inverses(%s0: memref<f32>, %s1: memref<f32>, %s2: memref<f32>,
                      %w: memref<*xi8>, %r: memref<f32>) {
    %c0_i32 = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %out = memref.alloc() : memref<16xf32>
    %co = memref.cast %out : memref<16xf32> to memref<*xf32>
    %o = builtin.unrealized_conversion_cast %co : memref<*xf32> to memref<*xi8>
    %b = memref.alloc() : memref<f32>
    %cb = memref.cast %b : memref<f32> to memref<*xf32>
    %v0 = memref.load %s0[] : memref<f32>
    %i0 = arith.divf %one, %v0 : f32
    memref.store %i0, %b[] : memref<f32>
    %u0 = builtin.unrealized_conversion_cast %cb : memref<*xf32> to memref<*xi8>
    call @msamp_rt_dequantize(%w, %u0, %o, %c0_i32, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    %v1 = memref.load %s1[] : memref<f32>
    %i1 = arith.divf %one, %v1 : f32
    memref.store %i1, %b[] : memref<f32>
    %u1 = builtin.unrealized_conversion_cast %cb : memref<*xf32> to memref<*xi8>
    call @msamp_rt_dequantize(%w, %u1, %o, %c0_i32, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    %v2 = memref.load %s2[] : memref<f32>
    %i2 = arith.divf %one, %v2 : f32
    memref.store %i2, %b[] : memref<f32>
    %u2 = builtin.unrealized_conversion_cast %cb : memref<*xf32> to memref<*xi8>
    call @msamp_rt_dequantize(%w, %u2, %o, %c0_i32, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    %last = memref.load %b[] : memref<f32>
    memref.store %last, %r[] : memref<f32>
    memref.dealloc %b : memref<f32>
    memref.dealloc %out : memref<16xf32>
    return
  }

  func.func @address_taken(%x: memref<f32>) {
    %one = arith.constant 1.0 : f32
    %b = memref.alloc() : memref<f32>
    memref.store %one, %b[] : memref<f32>
    %p = memref.extract_aligned_pointer_as_index %b : memref<f32> -> index
    memref.store %one, %b[] : memref<f32>
    call @use(%p) : (index) -> ()
    memref.dealloc %b : memref<f32>
    return
  }

  func.func @address_taken_last(%x: memref<f32>) {
    %one = arith.constant 1.0 : f32
    %b = memref.alloc() : memref<f32>
    memref.store %one, %b[] : memref<f32>
    %v = memref.load %b[] : memref<f32>
    memref.store %v, %x[] : memref<f32>
    memref.store %one, %b[] : memref<f32>
    %p = memref.extract_aligned_pointer_as_index %b : memref<f32> -> index
    call @use(%p) : (index) -> ()
    memref.dealloc %b : memref<f32>
    return
  }

  func.func @one_store(%x: memref<f32>) {
    %one = arith.constant 1.0 : f32
    %b = memref.alloc() : memref<f32>
    memref.store %one, %b[] : memref<f32>
    %v = memref.load %b[] : memref<f32>
    memref.store %v, %x[] : memref<f32>
    memref.dealloc %b : memref<f32>
    return
  }
}
