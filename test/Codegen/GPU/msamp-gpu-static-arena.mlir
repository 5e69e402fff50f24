// RUN: msamp-opt %s --split-input-file --msamp-gpu-static-arena | FileCheck %s
// RUN: msamp-opt %s --split-input-file --msamp-gpu-static-arena=host-memory=true | FileCheck %s --check-prefix=HOST

// Device arena: %a (4 KiB) and %b (1 KiB), which only a kernel-to-be (an
// scf.parallel) and a runtime call touch; %b is allocated after %a's last
// use, so it reuses %a's bytes: 4096 bytes. Host arena: the 0-d %s, which
// host code stores to (the kernels read it too). %kept escapes into a
// select and keeps its alloc and dealloc; every other dealloc goes. (A
// buffer only ever stored to is erased first, as the canonicalizer would.)
// CHECK-LABEL: module attributes {msamp.buffer_plan = {arena_buffers = 2 : i64, arena_bytes = 4096 : i64, arena_peak_bytes = 4096 : i64, {{.*}}host_arena_buffers = 1 : i64, host_arena_bytes = 256 : i64
// CHECK: func.func private @msamp_rt_gpu_host_arena(i64) -> !llvm.ptr
// CHECK: func.func private @msamp_rt_gpu_arena(i64) -> !llvm.ptr
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[DEVBYTES:.+]] = arith.constant 4096 : i64
// CHECK: %[[DEVPTR:.+]] = call @msamp_rt_gpu_arena(%[[DEVBYTES]]) : (i64) -> !llvm.ptr
// CHECK: %[[DEV:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4096xi8>
// CHECK: %[[HOSTBYTES:.+]] = arith.constant 256 : i64
// CHECK: call @msamp_rt_gpu_host_arena(%[[HOSTBYTES]])
// CHECK: %[[HARENA:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<256xi8>
// CHECK: %[[S:.+]] = memref.view %[[HARENA]][%{{.+}}][] : memref<256xi8> to memref<f32>
// CHECK: memref.store %{{.+}}, %[[S]][]
// CHECK: %[[A:.+]] = memref.view %[[DEV]][%{{.+}}][] : memref<4096xi8> to memref<1024xf32>
// CHECK: scf.parallel
// CHECK: memref.store %{{.+}}, %[[A]]
// CHECK: call @msamp_rt_amax(
// CHECK: %[[B:.+]] = memref.view %[[DEV]][%{{.+}}][] : memref<4096xi8> to memref<256xf32>
// CHECK: %[[KEPT:.+]] = memref.alloc() : memref<f32>
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK-NOT: memref.dealloc %[[B]]
// CHECK-NOT: memref.dealloc %[[S]]
// CHECK: memref.dealloc %[[KEPT]]
// CHECK-NEXT: return

// In host emulation the arenas are two buffers of the step, freed at its
// return.
// HOST-LABEL: func.func @train_step(
// HOST: %[[DEV:.+]] = memref.alloc() {alignment = 256 : i64} : memref<4096xi8>
// HOST: %[[HARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<256xi8>
// HOST: memref.view %[[HARENA]]
// HOST: memref.view %[[DEV]]
// HOST: memref.dealloc %[[DEV]] : memref<4096xi8>
// HOST-NEXT: memref.dealloc %[[HARENA]] : memref<256xi8>
// HOST-NEXT: return
module {
  func.func private @msamp_rt_amax(memref<*xi8>, memref<*xi8>, i32)
  func.func @train_step(%x: memref<1024xf32>, %cond: i1, %out: memref<f32>)
      attributes {msamp.kind = "train_step"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c1024 = arith.constant 1024 : index
    %i0 = arith.constant 0 : i32
    %f = arith.constant 2.0 : f32
    %s = memref.alloc() : memref<f32>
    memref.store %f, %s[] : memref<f32>
    %a = memref.alloc() : memref<1024xf32>
    scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
      %v = memref.load %x[%i] : memref<1024xf32>
      %k = memref.load %s[] : memref<f32>
      %w = arith.mulf %v, %k : f32
      memref.store %w, %a[%i] : memref<1024xf32>
      scf.reduce
    }
    %ca = memref.cast %a : memref<1024xf32> to memref<*xf32>
    %ua = builtin.unrealized_conversion_cast %ca : memref<*xf32> to memref<*xi8>
    %co = memref.cast %out : memref<f32> to memref<*xf32>
    %uo = builtin.unrealized_conversion_cast %co : memref<*xf32> to memref<*xi8>
    func.call @msamp_rt_amax(%ua, %uo, %i0) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %b = memref.alloc() : memref<256xf32>
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      memref.store %f, %b[%i] : memref<256xf32>
      scf.reduce
    }
    %cb = memref.cast %b : memref<256xf32> to memref<*xf32>
    %ub = builtin.unrealized_conversion_cast %cb : memref<*xf32> to memref<*xi8>
    func.call @msamp_rt_amax(%ub, %uo, %i0) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %kept = memref.alloc() : memref<f32>
    %pick = arith.select %cond, %kept, %out : memref<f32>
    memref.store %f, %pick[] : memref<f32>
    memref.dealloc %s : memref<f32>
    memref.dealloc %a : memref<1024xf32>
    memref.dealloc %b : memref<256xf32>
    memref.dealloc %kept : memref<f32>
    return
  }
}

// -----

// A buffer only ever written (a fill nothing reads) is erased with its
// stores, as the canonicalizer does, instead of taking arena bytes.
// CHECK-LABEL: module attributes {msamp.buffer_plan = {arena_buffers = 0 : i64, arena_bytes = 0 : i64
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: msamp_rt_gpu_arena
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.view
// CHECK: return
module {
  func.func @train_step() attributes {msamp.kind = "train_step"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %f = arith.constant 0.0 : f32
    %dead = memref.alloc() : memref<8xf32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %f, %dead[%i] : memref<8xf32>
      scf.reduce
    }
    memref.dealloc %dead : memref<8xf32>
    return
  }
}

// -----

// A buffer a function of the module frees keeps its alloc; one passed to a
// function that does not free it (a layer outlined before bufferization)
// goes into the arena like the buffer a runtime call reads.
// CHECK-LABEL: module attributes {msamp.buffer_plan = {arena_buffers = 2 : i64
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[KEPT:.+]] = memref.alloc() : memref<8xf32>
// CHECK: call @frees(%[[KEPT]])
// CHECK: %[[LENT:.+]] = memref.view
// CHECK: call @reads(%[[LENT]])
// CHECK-NOT: memref.dealloc
// CHECK: return
module {
  func.func private @msamp_rt_amax(memref<*xi8>, memref<*xi8>, i32)
  func.func private @frees(%b: memref<8xf32>) {
    memref.dealloc %b : memref<8xf32>
    return
  }
  func.func private @reads(%b: memref<8xf32>) {
    return
  }
  func.func @train_step(%out: memref<f32>) attributes {msamp.kind = "train_step"} {
    %i0 = arith.constant 0 : i32
    %kept = memref.alloc() : memref<8xf32>
    func.call @frees(%kept) : (memref<8xf32>) -> ()
    %lent = memref.alloc() : memref<8xf32>
    func.call @reads(%lent) : (memref<8xf32>) -> ()
    %placed = memref.alloc() : memref<8xf32>
    %c = memref.cast %placed : memref<8xf32> to memref<*xf32>
    %u = builtin.unrealized_conversion_cast %c : memref<*xf32> to memref<*xi8>
    %co = memref.cast %out : memref<f32> to memref<*xf32>
    %uo = builtin.unrealized_conversion_cast %co : memref<*xf32> to memref<*xi8>
    func.call @msamp_rt_amax(%u, %uo, %i0) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    memref.dealloc %lent : memref<8xf32>
    memref.dealloc %placed : memref<8xf32>
    return
  }
}

// -----

// A function of the module (a layer outlined before bufferization) places
// its own buffers in a frame, a new argument marked with its arena; every
// call passes a frame its caller allocates right before the call, which
// the step places in its arena like any buffer live for the call. The
// frames of two calls share memory: the calls' lifetimes do not overlap.
// CHECK-LABEL: module attributes {msamp.buffer_plan = {arena_buffers = 2 : i64, arena_bytes = 512 : i64
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME: %[[IN:[^:]+]]: memref<8xf32>, %[[FRAME:[^:]+]]: memref<512xi8> {msamp.frame = "device"})
// CHECK-NOT: memref.alloc
// CHECK: memref.view %[[FRAME]][%{{.+}}][] : memref<512xi8> to memref<8xf32>
// CHECK: memref.view %[[FRAME]][%{{.+}}][] : memref<512xi8> to memref<8xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[BASE:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<512xi8>
// CHECK: %[[F1:.+]] = memref.view %[[BASE]][%{{.+}}][] : memref<512xi8> to memref<512xi8>
// CHECK: call @layer(%{{.+}}, %[[F1]])
// CHECK: %[[F2:.+]] = memref.view %[[BASE]][%{{.+}}][] : memref<512xi8> to memref<512xi8>
// CHECK: call @layer(%{{.+}}, %[[F2]])
// CHECK-NOT: memref.alloc
module {
  func.func private @layer(%in: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %a = memref.alloc() : memref<8xf32>
    %b = memref.alloc() : memref<8xf32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %in[%i] : memref<8xf32>
      memref.store %x, %a[%i] : memref<8xf32>
      memref.store %x, %b[%i] : memref<8xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %a[%i] : memref<8xf32>
      %y = memref.load %b[%i] : memref<8xf32>
      %z = arith.addf %x, %y : f32
      memref.store %z, %in[%i] : memref<8xf32>
      scf.reduce
    }
    memref.dealloc %a : memref<8xf32>
    memref.dealloc %b : memref<8xf32>
    return
  }
  func.func @train_step(%x: memref<8xf32>) attributes {msamp.kind = "train_step"} {
    func.call @layer(%x) : (memref<8xf32>) -> ()
    func.call @layer(%x) : (memref<8xf32>) -> ()
    return
  }
}

// -----

// msamp_rt_check_computed_index is stream-ordered (its indices are checked
// on the device, RuntimeABI.md 3.11.1): the kernel-computed indices it
// checks stay in the device arena with the amax operand, and there is no
// host arena. (A call that is not stream-ordered would put them in the
// pinned host arena: the host reads its operands.)
// CHECK-LABEL: module attributes {msamp.buffer_plan = {arena_buffers = 2 : i64, arena_bytes = 256 : i64, {{.*}}host_arena_buffers = 0 : i64, host_arena_bytes = 0 : i64
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: msamp_rt_gpu_host_arena
// CHECK: %[[ARENA:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<256xi8>
// CHECK: %[[IDS:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<256xi8> to memref<8xi64>
// CHECK: scf.parallel
// CHECK: memref.store %{{.+}}, %[[IDS]]
// CHECK: call @msamp_rt_check_computed_index(
module {
  func.func private @msamp_rt_amax(memref<*xi8>, memref<*xi8>, i32)
  func.func private @msamp_rt_check_computed_index(memref<*xi8>, memref<*xi8>, i32, i64, i64, i32)
  func.func @train_step(%out: memref<f32>, %site: memref<*xi8>) attributes {msamp.kind = "train_step"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %i0 = arith.constant 0 : i32
    %i5 = arith.constant 5 : i32
    %n = arith.constant 10 : i64
    %z = arith.constant 0 : i64
    %v = arith.constant 3 : i64
    %ids = memref.alloc() : memref<8xi64>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %v, %ids[%i] : memref<8xi64>
      scf.reduce
    }
    %ci = memref.cast %ids : memref<8xi64> to memref<*xi64>
    %ui = builtin.unrealized_conversion_cast %ci : memref<*xi64> to memref<*xi8>
    func.call @msamp_rt_check_computed_index(%ui, %site, %i5, %n, %z, %i0) : (memref<*xi8>, memref<*xi8>, i32, i64, i64, i32) -> ()
    %x = memref.alloc() : memref<8xf32>
    %f = arith.constant 1.0 : f32
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %f, %x[%i] : memref<8xf32>
      scf.reduce
    }
    %cx = memref.cast %x : memref<8xf32> to memref<*xf32>
    %ux = builtin.unrealized_conversion_cast %cx : memref<*xf32> to memref<*xi8>
    %co = memref.cast %out : memref<f32> to memref<*xf32>
    %uo = builtin.unrealized_conversion_cast %co : memref<*xf32> to memref<*xi8>
    func.call @msamp_rt_amax(%ux, %uo, %i0) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    memref.dealloc %ids : memref<8xi64>
    memref.dealloc %x : memref<8xf32>
    return
  }
}

// -----

// A callee buffer host code reads (a 0-d value the layer's host code loads)
// goes into a second frame, marked "host", which the step places in its
// pinned host arena; the kernel-only buffer stays in the device frame.
// CHECK-LABEL: module attributes {msamp.buffer_plan = {arena_buffers = 1 : i64, {{.*}}host_arena_buffers = 1 : i64
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME: %{{[^:]+}}: memref<256xi8> {msamp.frame = "device"}, %{{[^:]+}}: memref<256xi8> {msamp.frame = "host"})
// CHECK-LABEL: func.func @train_step(
// CHECK: call @msamp_rt_gpu_arena(
// CHECK: call @msamp_rt_gpu_host_arena(
// CHECK: call @layer(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
module {
  func.func private @layer(%in: memref<8xf32>, %out: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %a = memref.alloc() : memref<8xf32>
    %h = memref.alloc() : memref<f32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %in[%i] : memref<8xf32>
      memref.store %x, %a[%i] : memref<8xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
      %x = memref.load %a[%c0] : memref<8xf32>
      memref.store %x, %h[] : memref<f32>
      scf.reduce
    }
    %v = memref.load %h[] : memref<f32>
    memref.store %v, %out[] : memref<f32>
    memref.dealloc %a : memref<8xf32>
    memref.dealloc %h : memref<f32>
    return
  }
  func.func @train_step(%x: memref<8xf32>, %o: memref<f32>) attributes {msamp.kind = "train_step"} {
    func.call @layer(%x, %o) : (memref<8xf32>, memref<f32>) -> ()
    return
  }
}
