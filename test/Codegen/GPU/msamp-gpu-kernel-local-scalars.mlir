// msamp-gpu-kernel-local-scalars: after the single-thread kernels are
// merged, a 0-d allocation that only one kernel stores and then loads (and
// its deallocations) becomes a value of that kernel: each load reads the
// last value stored, the allocation goes. Kept: a buffer whose first access
// in the kernel is a load (it holds a value from before), one a call takes,
// and one another kernel reads.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels,msamp-gpu-merge-scalar-kernels,msamp-gpu-kernel-local-scalars))' | FileCheck %s

// A running sum through three buffers of its own: no buffer is left, the
// kernel reads the inputs and writes the result.
// CHECK-LABEL: func.func @chain(
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: %[[X:.+]] = memref.load %arg0[]
// CHECK-NEXT: %[[Y:.+]] = memref.load %arg1[]
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: %[[Z:.+]] = memref.load %arg2[]
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[S]], %[[Z]]
// CHECK-NEXT: memref.store %[[P]], %arg3[]
// CHECK-NEXT: scf.reduce
// CHECK-NOT: memref.dealloc
// CHECK: return

// CHECK-LABEL: func.func @kept(
// CHECK: %[[READ:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[ESCAPES:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[SHARED:.+]] = memref.alloc() : memref<f32>
// CHECK: memref.load %[[READ]][]
// CHECK: memref.store %{{.+}}, %[[READ]][]
// CHECK: memref.store %{{.+}}, %[[ESCAPES]][]
// CHECK: memref.store %{{.+}}, %[[SHARED]][]
// CHECK: call @use(%[[ESCAPES]])
// CHECK: call @write(%arg0)
// CHECK: scf.parallel
// CHECK: memref.load %[[SHARED]][]
// CHECK-DAG: memref.dealloc %[[READ]]
// CHECK-DAG: memref.dealloc %[[ESCAPES]]
// CHECK-DAG: memref.dealloc %[[SHARED]]

module {
  func.func private @use(memref<f32>)
  func.func private @write(memref<f32>)

  func.func @chain(%a: memref<f32>, %b: memref<f32>, %c: memref<f32>,
                   %out: memref<f32>) {
    %s0 = memref.alloc() : memref<f32>
    %s1 = memref.alloc() : memref<f32>
    %s2 = memref.alloc() : memref<f32>
    %x = memref.load %a[] : memref<f32>
    memref.store %x, %s0[] : memref<f32>
    %p0 = memref.load %s0[] : memref<f32>
    %y = memref.load %b[] : memref<f32>
    %q0 = arith.addf %p0, %y : f32
    memref.store %q0, %s1[] : memref<f32>
    %p1 = memref.load %s1[] : memref<f32>
    %z = memref.load %c[] : memref<f32>
    %q1 = arith.mulf %p1, %z : f32
    memref.store %q1, %s2[] : memref<f32>
    %r = memref.load %s2[] : memref<f32>
    memref.store %r, %out[] : memref<f32>
    memref.dealloc %s0 : memref<f32>
    memref.dealloc %s1 : memref<f32>
    memref.dealloc %s2 : memref<f32>
    return
  }

  func.func @kept(%a: memref<f32>, %out: memref<f32>) {
    %read = memref.alloc() : memref<f32>
    %escapes = memref.alloc() : memref<f32>
    %shared = memref.alloc() : memref<f32>
    %x = memref.load %read[] : memref<f32>
    memref.store %x, %read[] : memref<f32>
    %y = memref.load %a[] : memref<f32>
    memref.store %y, %escapes[] : memref<f32>
    memref.store %y, %shared[] : memref<f32>
    func.call @use(%escapes) : (memref<f32>) -> ()
    // Writes %a, which the next kernel reads: it stays after the call.
    func.call @write(%a) : (memref<f32>) -> ()
    %w = memref.load %shared[] : memref<f32>
    %v = memref.load %a[] : memref<f32>
    %s = arith.addf %w, %v : f32
    memref.store %s, %out[] : memref<f32>
    memref.dealloc %read : memref<f32>
    memref.dealloc %escapes : memref<f32>
    memref.dealloc %shared : memref<f32>
    return
  }
}
