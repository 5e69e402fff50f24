// msamp-gpu-merge-scalar-kernels: a single-thread kernel moves up into the
// previous one of its block past every call and kernel it does not depend
// on (buffers traced through casts to their allocation; the runtime's
// read-only parameters, docs/RuntimeABI.md, are only read); it stays where
// it is when an op in between writes what it reads or writes, or reads
// what it writes, when a call takes a table of addresses, and when two
// function arguments (which may alias) meet.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels,msamp-gpu-merge-scalar-kernels))' | FileCheck %s
// The merged kernel's cost is recounted (msamp-gpu-cost-report).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels,msamp-gpu-merge-scalar-kernels))' --mlir-print-debuginfo | FileCheck %s --check-prefix=COST
// Single-thread kernels are two scf.parallel each, the two generated
// kernels of @kernels one: 14 kernels before the merge (30 loops), 10
// after (22).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels))' | grep -c 'scf.parallel (%arg[0-9]*) = (%c0' | FileCheck %s --check-prefix=BEFORE
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-scalar-kernels,msamp-gpu-merge-scalar-kernels))' | grep -c 'scf.parallel (%arg[0-9]*) = (%c0' | FileCheck %s --check-prefix=AFTER
// BEFORE: 30
// AFTER: 22

// CHECK-LABEL: func.func @merge(
// The step increment (after the amax call, which does not touch it) and
// the inverse of %a (after the quantize, which only reads %a as its
// scale) join the first kernel; the allocations they store to move up.
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store %{{.+}}, %[[A:.+]][] : memref<f32>
// CHECK-NEXT: memref.load %arg1[] : memref<i64>
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.store %{{.+}}, %{{.+}}[] : memref<i64>
// CHECK-NEXT: memref.load %[[A]][] : memref<f32>
// CHECK-NEXT: arith.divf
// CHECK-NEXT: memref.store %{{.+}}, %[[INV:.+]][] : memref<f32>
// CHECK-NEXT: scf.reduce
// CHECK: call @msamp_rt_amax(
// CHECK-NOT: scf.parallel
// CHECK: call @msamp_rt_quantize(
// CHECK-NOT: scf.parallel
// CHECK: call @msamp_rt_compute_scale(
// The copy of the amax depends on the amax call: a kernel after it, which
// the copy of the inverse joins from after the second amax (which writes
// only the argument %in).
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.load %{{.+}}[] : memref<f32>
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.load %[[INV]][] : memref<f32>
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce
// CHECK: call @msamp_rt_amax(%arg0, %arg0
// CHECK-NOT: scf.parallel
// CHECK: call @msamp_rt_compute_scale(
// A store into %a, which compute_scale writes: after it.
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store %{{.+}}, %[[A]][] : memref<f32>
// CHECK-NEXT: scf.reduce
// CHECK: call @msamp_rt_dequantize(
// A store into %b, which dequantize reads (its scale_inv): after it.
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store %{{.+}}, %{{.+}}[] : memref<f32>
// CHECK-NEXT: scf.reduce
// CHECK: return

// CHECK-LABEL: func.func @kernels(
// A generated kernel that writes %buf: a run that reads %buf stays after
// it; one that does not moves past the next kernel.
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store %{{.+}}, %[[S:.+]][] : memref<f32>
// CHECK-NEXT: scf.reduce
// CHECK: scf.parallel (%{{.+}}) = (%c0{{.*}}) to (%c8)
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.load %{{.+}}[%{{.+}}] : memref<8xf32>
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.load %[[S]][]
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce
// CHECK: scf.parallel (%{{.+}}) = (%c0{{.*}}) to (%c8)
// CHECK-NOT: scf.parallel
// CHECK: return

// CHECK-LABEL: func.func @table(
// A call with a table of addresses may touch any buffer.
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce
// CHECK: call @msamp_rt_adam_update_multi(
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store
// CHECK: return

// CHECK-LABEL: func.func @arguments(
// The amax writes the argument %s; the run that reads the argument %p
// (which may be the same buffer) stays after it.
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce
// CHECK: call @msamp_rt_amax(
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.load %arg0[]
// CHECK: return

// @merge's first kernel: stores %a (4 bytes), %next (8) and %inv (4), loads
// the step (8) and %a (4): 28 bytes, one FLOP (the divf).
// COST: #{{loc[0-9]+}} = loc(fused<{msamp.gpu_kernel_cost = {bytes = 28 : i64, flops = 1 : i64, op = "scalar"}}>

module {
  func.func private @msamp_rt_amax(memref<*xi8>, memref<*xi8>, i32)
  func.func private @msamp_rt_quantize(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32)
  func.func private @msamp_rt_dequantize(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32)
  func.func private @msamp_rt_compute_scale(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32)
  func.func private @msamp_rt_adam_update_multi(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32)

  func.func @merge(%in: memref<*xi8>, %step: memref<i64>, %hist: memref<*xi8>,
                   %fp8: memref<*xi8>, %out: memref<*xi8>) {
    %c0_i32 = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %c1 = arith.constant 1 : i64
    %a = memref.alloc() : memref<f32>
    memref.store %one, %a[] : memref<f32>
    %ca = memref.cast %a : memref<f32> to memref<*xf32>
    %ia = builtin.unrealized_conversion_cast %ca : memref<*xf32> to memref<*xi8>
    %m = memref.alloc() : memref<f32>
    %cm = memref.cast %m : memref<f32> to memref<*xf32>
    %im = builtin.unrealized_conversion_cast %cm : memref<*xf32> to memref<*xi8>
    call @msamp_rt_amax(%in, %im, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %next = memref.alloc() : memref<i64>
    %t = memref.load %step[] : memref<i64>
    %t1 = arith.addi %t, %c1 : i64
    memref.store %t1, %next[] : memref<i64>
    call @msamp_rt_quantize(%in, %ia, %fp8, %c0_i32, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    %inv = memref.alloc() : memref<f32>
    %s = memref.load %a[] : memref<f32>
    %r = arith.divf %one, %s : f32
    memref.store %r, %inv[] : memref<f32>
    call @msamp_rt_compute_scale(%hist, %ia, %ia, %c0_i32, %c0_i32, %c0_i32, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32) -> ()
    %m2 = memref.alloc() : memref<f32>
    %vm = memref.load %m[] : memref<f32>
    memref.store %vm, %m2[] : memref<f32>
    call @msamp_rt_amax(%in, %in, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %r2 = memref.alloc() : memref<f32>
    %vi = memref.load %inv[] : memref<f32>
    memref.store %vi, %r2[] : memref<f32>
    call @msamp_rt_compute_scale(%hist, %ia, %ia, %c0_i32, %c0_i32, %c0_i32, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32) -> ()
    memref.store %two, %a[] : memref<f32>
    %b = memref.alloc() : memref<f32>
    %cb = memref.cast %b : memref<f32> to memref<*xf32>
    %ib = builtin.unrealized_conversion_cast %cb : memref<*xf32> to memref<*xi8>
    call @msamp_rt_dequantize(%fp8, %ib, %out, %c0_i32, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    memref.store %two, %b[] : memref<f32>
    memref.dealloc %a : memref<f32>
    memref.dealloc %m : memref<f32>
    memref.dealloc %next : memref<i64>
    memref.dealloc %inv : memref<f32>
    memref.dealloc %m2 : memref<f32>
    memref.dealloc %r2 : memref<f32>
    memref.dealloc %b : memref<f32>
    return
  }

  func.func @kernels(%buf: memref<8xf32>, %x: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %one = arith.constant 1.0 : f32
    %s = memref.alloc() : memref<f32>
    memref.store %one, %s[] : memref<f32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %one, %buf[%i] : memref<8xf32>
      scf.reduce
    }
    %e = memref.alloc() : memref<f32>
    %v = memref.load %buf[%c3] : memref<8xf32>
    memref.store %v, %e[] : memref<f32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %one, %x[%i] : memref<8xf32>
      scf.reduce
    }
    %f = memref.alloc() : memref<f32>
    %w = memref.load %s[] : memref<f32>
    memref.store %w, %f[] : memref<f32>
    memref.dealloc %s : memref<f32>
    memref.dealloc %e : memref<f32>
    memref.dealloc %f : memref<f32>
    return
  }

  func.func @table(%lr: memref<*xi8>, %step: memref<*xi8>) {
    %c0_i32 = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<f32>
    memref.store %one, %a[] : memref<f32>
    %t = memref.alloca() : memref<1x15xi64>
    %ct = memref.cast %t : memref<1x15xi64> to memref<*xi64>
    %it = builtin.unrealized_conversion_cast %ct : memref<*xi64> to memref<*xi8>
    call @msamp_rt_adam_update_multi(%it, %lr, %step, %c0_i32) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32) -> ()
    %b = memref.alloc() : memref<f32>
    memref.store %one, %b[] : memref<f32>
    memref.dealloc %a : memref<f32>
    memref.dealloc %b : memref<f32>
    return
  }

  func.func @arguments(%p: memref<f32>, %s: memref<f32>, %in: memref<*xi8>) {
    %c0_i32 = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<f32>
    memref.store %one, %a[] : memref<f32>
    %cs = memref.cast %s : memref<f32> to memref<*xf32>
    %is = builtin.unrealized_conversion_cast %cs : memref<*xf32> to memref<*xi8>
    call @msamp_rt_amax(%in, %is, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %b = memref.alloc() : memref<f32>
    %v = memref.load %p[] : memref<f32>
    memref.store %v, %b[] : memref<f32>
    memref.dealloc %a : memref<f32>
    memref.dealloc %b : memref<f32>
    return
  }
}
