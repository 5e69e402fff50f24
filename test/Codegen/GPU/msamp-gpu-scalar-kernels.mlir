// msamp-gpu-scalar-kernels: each run of host 0-d arithmetic between kernels
// and runtime calls becomes a kernel of one block of one thread (a nested
// 1 x 1 scf.parallel), so the host never reads device memory there and
// msamp-gpu-async-launches places no wait. Allocations, views and pure ops
// on host values stay before the kernel; a call, a kernel or a deallocation
// ends a run; a run whose value host code uses afterwards stays on the host
// (with a remark).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels))' 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// Each kernel's cost travels on its location (msamp-gpu-cost-report).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels))' --mlir-print-debuginfo 2>/dev/null | FileCheck %s --check-prefix=COST

// CHECK-LABEL: func.func @scale(
// The inverse scale and the step increment: one kernel; the allocation and
// the view between them stay before it.
// CHECK: %[[INV:.+]] = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: %[[NEXT:.+]] = memref.alloc() : memref<i64>
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[O:.+]] = arith.constant 1 : index
// CHECK-NEXT: scf.parallel (%{{.+}}) = (%[[Z]]) to (%[[O]]) step (%[[O]]) {
// CHECK-NEXT: scf.parallel (%{{.+}}) = (%[[Z]]) to (%[[O]]) step (%[[O]]) {
// CHECK-NEXT: memref.load %arg0[] : memref<f32>
// CHECK-NEXT: arith.divf
// CHECK-NEXT: memref.store %{{.+}}, %[[INV]][]
// CHECK-NEXT: memref.load %arg1[] : memref<i64>
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.store %{{.+}}, %[[NEXT]][]
// CHECK: call @msamp_rt_amax(
// After the call: the 0-d copies. One of a constant global becomes a store
// of its value (a kernel cannot read the host image), one of a buffer a
// load and a store; a copy of a mutable global stays a host copy and ends
// the run.
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store %[[ONE]], %arg2[]
// CHECK-NEXT: %[[V:.+]] = memref.load %[[INV]][]
// CHECK-NEXT: memref.store %[[V]], %arg3[]
// CHECK: memref.copy %{{.+}}, %arg2 : memref<f32> to memref<f32>
// CHECK-NOT: scf.parallel
// CHECK: memref.dealloc
// CHECK: return

// CHECK-LABEL: func.func @branch(
// A branch on a loaded flag (skip the update when non-finite) runs in the
// kernel: predication, not a host decision.
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.load %arg0[] : memref<i1>
// CHECK-NEXT: scf.if
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.load %arg1[]
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK: return

// CHECK-LABEL: func.func @bounds(
// Index arithmetic the next kernel's bounds use stays on the host (it
// touches no memory); the store moves into a kernel before that kernel.
// CHECK: %[[N:.+]] = arith.muli
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store
// CHECK: scf.parallel (%{{.+}}) = (%c0) to (%[[N]]) step (%c1)
// CHECK: return

// CHECK-LABEL: func.func @sink(
// A load of an allocation that a call wrote, used only later (O3 gathers
// every amax after the last call), moves down to its user when nothing in
// between may write that buffer, and joins its kernel; %b is written again
// by the third call, so its load stays on the host (a remark).
// CHECK: call @msamp_rt_amax(%arg0, %[[A:.+]], %{{.+}})
// CHECK-NEXT: call @msamp_rt_amax(%arg0, %[[B:.+]], %{{.+}})
// CHECK-NEXT: %[[VB:.+]] = memref.load %{{.+}}[] : memref<f32>
// CHECK-NEXT: call @msamp_rt_amax(%arg0, %[[B]], %{{.+}})
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: %[[VA:.+]] = memref.load %{{.+}}[] : memref<f32>
// CHECK-NEXT: memref.store %[[VA]], %arg1[%c0]
// CHECK-NEXT: memref.store %[[VB]], %arg1[%c1]

// CHECK-LABEL: func.func @escapes(
// A loaded value the host passes on stays a host load (the host waits for
// the stream before it): no kernel.
// CHECK-NOT: scf.parallel
// CHECK: memref.load
// CHECK-NEXT: arith.addf
// CHECK-NEXT: call @use(
// REMARK: remark: msamp-gpu-scalar-kernels: host code uses this value, so its run stays on the host
// REMARK: remark: msamp-gpu-scalar-kernels: host code uses this value, so its run stays on the host
// REMARK-NOT: remark


// The first kernel of @scale: one f32 FLOP (the divf; the step's addi is an
// integer op); it loads scale (4 bytes) and step (8) and stores the inverse
// (4) and the new step (8): 24 bytes. The next ones store 12 and read and
// write 9 bytes (@branch: i1 flag, f32 read, f32 written), 4 (@bounds) and
// 12 (@sink: a read, the 2 x f32 output written).
// COST: #{{loc[0-9]+}} = loc(fused<{msamp.gpu_kernel_cost = {bytes = 24 : i64, flops = 1 : i64, op = "scalar"}}>
// COST-NEXT: #{{loc[0-9]+}} = loc(fused<{msamp.gpu_kernel_cost = {bytes = 12 : i64, flops = 0 : i64, op = "scalar"}}>
// COST-NEXT: #{{loc[0-9]+}} = loc(fused<{msamp.gpu_kernel_cost = {bytes = 9 : i64, flops = 0 : i64, op = "scalar"}}>
// COST-NEXT: #{{loc[0-9]+}} = loc(fused<{msamp.gpu_kernel_cost = {bytes = 4 : i64, flops = 0 : i64, op = "scalar"}}>
// COST-NEXT: #{{loc[0-9]+}} = loc(fused<{msamp.gpu_kernel_cost = {bytes = 12 : i64, flops = 0 : i64, op = "scalar"}}>
// COST-NOT: gpu_kernel_cost

module {
  memref.global "private" constant @one : memref<f32> = dense<1.0>
  memref.global "private" @mutable : memref<f32> = dense<2.0>
  func.func private @msamp_rt_amax(memref<*xi8>, memref<*xi8>, i32)
  func.func private @use(f32)

  func.func @scale(%scale: memref<f32>, %step: memref<i64>, %a: memref<f32>,
                   %b: memref<f32>, %u: memref<*xi8>) {
    %one = arith.constant 1.0 : f32
    %c1 = arith.constant 1 : i64
    %c0_i32 = arith.constant 0 : i32
    %s = memref.load %scale[] : memref<f32>
    %inv = memref.alloc() : memref<f32>
    %r = arith.divf %one, %s : f32
    %view = memref.expand_shape %inv [] output_shape [1] : memref<f32> into memref<1xf32>
    memref.store %r, %inv[] : memref<f32>
    %t = memref.load %step[] : memref<i64>
    %next = memref.alloc() : memref<i64>
    %t1 = arith.addi %t, %c1 : i64
    memref.store %t1, %next[] : memref<i64>
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %g = memref.get_global @one : memref<f32>
    memref.copy %g, %a : memref<f32> to memref<f32>
    memref.copy %inv, %b : memref<f32> to memref<f32>
    %m = memref.get_global @mutable : memref<f32>
    memref.copy %m, %a : memref<f32> to memref<f32>
    memref.dealloc %inv : memref<f32>
    memref.dealloc %next : memref<i64>
    return
  }

  func.func @branch(%nonfinite: memref<i1>, %new: memref<f32>, %param: memref<f32>) {
    %flag = memref.load %nonfinite[] : memref<i1>
    scf.if %flag {
    } else {
      %v = memref.load %new[] : memref<f32>
      memref.store %v, %param[] : memref<f32>
    }
    return
  }

  func.func @bounds(%out: memref<f32>, %buf: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %n = arith.muli %c4, %c4 : index
    memref.store %zero, %out[] : memref<f32>
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.store %zero, %buf[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }

  func.func @sink(%u: memref<*xi8>, %out: memref<2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %a = memref.alloc() : memref<f32>
    %b = memref.alloc() : memref<f32>
    %ca = memref.cast %a : memref<f32> to memref<*xf32>
    %ia = builtin.unrealized_conversion_cast %ca : memref<*xf32> to memref<*xi8>
    %cb = memref.cast %b : memref<f32> to memref<*xf32>
    %ib = builtin.unrealized_conversion_cast %cb : memref<*xf32> to memref<*xi8>
    call @msamp_rt_amax(%u, %ia, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %va = memref.load %a[] : memref<f32>
    call @msamp_rt_amax(%u, %ib, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %vb = memref.load %b[] : memref<f32>
    call @msamp_rt_amax(%u, %ib, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    memref.store %va, %out[%c0] : memref<2xf32>
    memref.store %vb, %out[%c1] : memref<2xf32>
    memref.dealloc %a : memref<f32>
    memref.dealloc %b : memref<f32>
    return
  }

  func.func @escapes(%x: memref<f32>) {
    %one = arith.constant 1.0 : f32
    %v = memref.load %x[] : memref<f32>
    %w = arith.addf %v, %one : f32
    call @use(%w) : (f32) -> ()
    return
  }
}
