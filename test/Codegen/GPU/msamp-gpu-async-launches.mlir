// msamp-gpu-async-launches: a block's launches are chained on one async
// token (the session's stream); the runtime's stream-ordered entry points
// (here msamp_rt_amax, and msamp_rt_check_computed_index, whose check
// runs on the stream too) and allocations run between them without a wait;
// the host waits (a blocking gpu.wait) only before its own memory access,
// a call outside the backend's stream, an op with regions, and a nested
// block's terminator, each time only if a launch or runtime call is
// pending. A public function (the step) returns without waiting: its caller
// synchronizes before it reads an output (runtime ABI 4), so the step can
// be captured as a CUDA graph. Nor does a function the module defines and
// calls (a layer, msamp-gpu-outline-layers): its call is pending work in
// the caller, and its first host access waits for what the caller left on
// the stream. gpu-to-llvm lowers the
// token to mgpuStreamCreate (the runtime hands out the backend's stream)
// and the wait to mgpuStreamSynchronize: msamp-gpu-cost-report counts the
// waits as host_syncs.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(msamp-gpu-async-launches)' | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK-NEXT: %[[T1:.+]] = gpu.launch_func async [%[[T0]]] @k::@k
// CHECK-NEXT: %[[T2:.+]] = gpu.launch_func async [%[[T1]]] @k::@k
// CHECK-NEXT: call @msamp_rt_amax(
// CHECK-NEXT: %[[T3:.+]] = gpu.launch_func async [%[[T2]]] @k::@k
// CHECK-NEXT: memref.alloc()
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK-NEXT: memref.load
// CHECK-NEXT: %[[T4:.+]] = gpu.wait async
// CHECK-NEXT: %[[T5:.+]] = gpu.launch_func async [%[[T4]]] @k::@k
// CHECK-NEXT: gpu.wait [%[[T5]]]
// CHECK-NEXT: scf.if
// CHECK-NEXT: %[[T6:.+]] = gpu.wait async
// CHECK-NEXT: %[[T7:.+]] = gpu.launch_func async [%[[T6]]] @k::@k
// CHECK-NEXT: gpu.wait [%[[T7]]]
// CHECK-NEXT: }
// CHECK-NEXT: call @helper()
// CHECK-NEXT: %[[T8:.+]] = gpu.wait async
// CHECK-NEXT: %[[T9:.+]] = gpu.launch_func async [%[[T8]]] @k::@k
// CHECK-NEXT: call @msamp_rt_check_computed_index(
// CHECK-NEXT: gpu.wait [%[[T9]]]
// CHECK-NEXT: call @helper()
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
// CHECK-NOT: gpu.launch_func @

// A stream-ordered runtime call returns before its work is done (the CUDA
// backend does not wait for device and managed buffers): it is pending work
// like a launch. A host load after it waits; allocations, launches, further
// calls and deallocations do not; nor does the public function's return.
// CHECK-LABEL: func.func @calls(
// CHECK: %[[C0:.+]] = gpu.wait async
// CHECK-NEXT: call @msamp_rt_amax(
// CHECK-NEXT: gpu.wait [%[[C0]]]
// CHECK-NEXT: memref.load
// CHECK-NEXT: %[[C1:.+]] = gpu.wait async
// CHECK-NEXT: call @msamp_rt_amax(
// CHECK-NEXT: memref.alloc()
// CHECK-NEXT: %[[C2:.+]] = gpu.launch_func async [%[[C1]]] @k::@k
// CHECK-NEXT: call @msamp_rt_amax(
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return

// With no host access after it, a call leaves no wait, in a public function
// or in one the module calls (whose caller counts the call as pending). A
// host load after a call of a defined function waits; a call of a
// declaration (@helper) is host code.
// CHECK-LABEL: func.func @call_only(
// CHECK: gpu.wait async
// CHECK-NEXT: call @msamp_rt_amax(
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @private_call_only(
// CHECK: gpu.wait async
// CHECK-NEXT: call @msamp_rt_amax(
// CHECK-NEXT: return
// CHECK-LABEL: func.func @calls_layer(
// CHECK: %[[L0:.+]] = gpu.wait async
// CHECK-NEXT: call @private_call_only(
// CHECK-NEXT: call @private_reads(
// CHECK-NEXT: gpu.wait [%[[L0]]]
// CHECK-NEXT: memref.load
// CHECK-NEXT: return
// A defined function's first host access waits: its caller may have left
// work on the stream.
// CHECK-LABEL: func.func private @private_reads(
// CHECK: %[[R0:.+]] = gpu.wait async
// CHECK-NEXT: gpu.wait [%[[R0]]]
// CHECK-NEXT: memref.load
// CHECK-NEXT: %[[R1:.+]] = gpu.wait async
// CHECK-NEXT: call @msamp_rt_amax(
// CHECK-NEXT: return
// A table the caller keeps on its stack (a memref.alloca) and a layer
// fills through an argument: the layer's stores need no wait (HostStack.h),
// while its store into the other argument, a buffer, does.
// CHECK-LABEL: func.func @fills_table(
// CHECK: memref.alloca
// CHECK-NEXT: gpu.wait async
// CHECK-NEXT: call @fill_rows(
// CHECK-LABEL: func.func private @fill_rows(
// CHECK: memref.store %{{.+}}, %arg0
// CHECK-NEXT: %[[W0:.+]] = gpu.wait async
// CHECK-NEXT: gpu.wait [%[[W0]]]
// CHECK-NEXT: memref.store %{{.+}}, %arg1
// CHECK-NEXT: return

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func private @msamp_rt_amax(memref<*xi8>, memref<*xi8>, i32)
  func.func private @msamp_rt_check_computed_index(memref<*xi8>, memref<*xi8>, i32, i64, i64, i32)
  func.func private @helper()
  func.func @step(%a: memref<4xf32>, %s: memref<f32>, %u: memref<*xi8>, %cond: i1) -> f32 {
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %c0_i64 = arith.constant 0 : i64
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    %b = memref.alloc() : memref<4xf32>
    %v = memref.load %s[] : memref<f32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>)
    scf.if %cond {
      gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>)
    }
    call @helper() : () -> ()
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>)
    call @msamp_rt_check_computed_index(%u, %u, %c0_i32, %c0_i64, %c0_i64, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32, i64, i64, i32) -> ()
    call @helper() : () -> ()
    memref.dealloc %b : memref<4xf32>
    return %v : f32
  }
  func.func @calls(%s: memref<f32>, %u: memref<*xi8>) -> f32 {
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %v = memref.load %s[] : memref<f32>
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    %b = memref.alloc() : memref<4xf32>
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>)
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    memref.dealloc %b : memref<4xf32>
    return %v : f32
  }
  func.func @call_only(%u: memref<*xi8>) {
    %c0_i32 = arith.constant 0 : i32
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    return
  }
  func.func private @private_call_only(%u: memref<*xi8>) {
    %c0_i32 = arith.constant 0 : i32
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    return
  }
  func.func @calls_layer(%s: memref<f32>, %u: memref<*xi8>) -> f32 {
    call @private_call_only(%u) : (memref<*xi8>) -> ()
    call @private_reads(%s, %u) : (memref<f32>, memref<*xi8>) -> ()
    %v = memref.load %s[] : memref<f32>
    return %v : f32
  }
  func.func private @private_reads(%s: memref<f32>, %u: memref<*xi8>) {
    %c0_i32 = arith.constant 0 : i32
    %v = memref.load %s[] : memref<f32>
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    return
  }
  func.func @fills_table(%s: memref<f32>, %v: i64) {
    %t = memref.alloca() : memref<2xi64>
    call @fill_rows(%t, %s, %v) : (memref<2xi64>, memref<f32>, i64) -> ()
    return
  }
  func.func private @fill_rows(%t: memref<2xi64>, %s: memref<f32>, %v: i64) {
    %c0 = arith.constant 0 : index
    %f = arith.constant 1.0 : f32
    memref.store %v, %t[%c0] : memref<2xi64>
    memref.store %f, %s[] : memref<f32>
    return
  }
}
