// msamp-gpu-graph-check: a CUDA graph replays what the step enqueued when it
// was captured, none of its host code. The step's host code may only
// enqueue (launches, stream-ordered runtime calls that do not wait, the
// arenas' bases, stores into its own stack); the first op that does more is
// recorded, with its location, as the module's msamp.cuda_graph_blocker
// ("" when there is none). Private functions are not entry points: a
// function the module defines is checked where an entry point calls it.
// RUN: msamp-opt %s --split-input-file --msamp-gpu-graph-check | FileCheck %s
//
// In --msamp-lower-to-gpu: msamp-compile --target cuda exports the blocker
// as the string msamp_train_step_graph_blocker (here its size: 1 byte, the
// terminating NUL, when it is empty) and gpu_cost.json reports it. The MLP
// example at O2 can be replayed, and so can the embedding-grad step (its
// loss, a full sum over a lookup, is an atomic-sum kernel, and its SGD
// update reads step and lr on the device); a step whose host code checks a
// computed index cannot (msamp-compile warns).
// RUN: rm -rf %t && mkdir -p %t
// RUN: msamp-compile %mlp_example --opt-level O2 --target cuda -o %t/mlp > /dev/null
// RUN: msamp-compile %S/Inputs/embedding-grad-step.mlir --opt-level O0 --target cuda -o %t/emb > /dev/null 2>&1
// RUN: llvm-nm -D -S %t/mlp/train_step.so | FileCheck %s --check-prefix=MLPSYM
// RUN: grep cuda_graph_blocker %t/mlp/gpu_cost.json | FileCheck %s --check-prefix=MLP
// RUN: llvm-nm -D -S %t/emb/train_step.so | FileCheck %s --check-prefix=MLPSYM
// RUN: grep cuda_graph_blocker %t/emb/gpu_cost.json | FileCheck %s --check-prefix=MLP
// MLPSYM: {{[0-9a-f]+}} 0000000000000001 R msamp_train_step_graph_blocker
// MLP: "cuda_graph_blocker": "",

// CHECK-LABEL: module attributes {gpu.container_module, msamp.cuda_graph_blocker = ""}
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func private @msamp_rt_amax(memref<*xi8>, memref<*xi8>, i32)
  func.func private @msamp_rt_gpu_arena(i64) -> !llvm.ptr
  func.func @step(%a: memref<4xf32>, %u: memref<*xi8>, %p: memref<?xindex>) {
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i64
    %base = call @msamp_rt_gpu_arena(%c64) : (i64) -> !llvm.ptr
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    call @msamp_rt_amax(%u, %u, %c0_i32) : (memref<*xi8>, memref<*xi8>, i32) -> ()
    // A multi-tensor Adam call's table of addresses: host stack.
    %table = memref.alloca() : memref<2xindex>
    memref.store %c1, %table[%c1] : memref<2xindex>
    return
  }
  // Not an entry point: its waits are its caller's business.
  func.func private @helper(%s: memref<f32>) -> f32 {
    %v = memref.load %s[] : memref<f32>
    return %v : f32
  }
}

// -----

// CHECK: msamp.cuda_graph_blocker = "{{.*}}msamp-gpu-graph-check.mlir:{{[0-9]+}} offset :14:5: the host waits for the device here (host code reads a kernel's result)"
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @step(%a: memref<4xf32>, %s: memref<f32>) -> f32 {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.wait [%t1]
    %v = memref.load %s[] : memref<f32>
    return %v : f32
  }
}

// -----

// A load before any launch needs no wait, but its value would be frozen
// into the graph at the capture.
// CHECK: msamp.cuda_graph_blocker = "{{.*}}: host code reads a buffer ('memref.load')"
module {
  func.func @step(%s: memref<f32>) -> f32 {
    %v = memref.load %s[] : memref<f32>
    return %v : f32
  }
}

// -----

// CHECK: msamp.cuda_graph_blocker = "{{.*}}: host code writes a buffer ('memref.store')"
module {
  func.func @step(%s: memref<f32>) {
    %c = arith.constant 1.0 : f32
    memref.store %c, %s[] : memref<f32>
    return
  }
}

// -----

// SGD reads step and lr on the device, as Adam does: nothing to block.
// CHECK: module attributes {msamp.cuda_graph_blocker = ""}
module {
  func.func private @msamp_rt_sgd_update(memref<*xi8>)
  func.func @step(%u: memref<*xi8>) {
    call @msamp_rt_sgd_update(%u) : (memref<*xi8>) -> ()
    return
  }
}

// -----

// A computed index is checked on the stream (the session reads the result
// after the step's wait): nothing to block.
// CHECK: module attributes {msamp.cuda_graph_blocker = ""}
module {
  func.func private @msamp_rt_check_computed_index(memref<*xi8>)
  func.func @step(%u: memref<*xi8>) {
    call @msamp_rt_check_computed_index(%u) : (memref<*xi8>) -> ()
    return
  }
}

// -----

// A call the runtime does not order on its stream runs on the host.
// CHECK: msamp.cuda_graph_blocker = "{{.*}}: calls @host_reads, which is not ordered on the runtime's stream"
module {
  func.func private @host_reads(memref<*xi8>)
  func.func @step(%u: memref<*xi8>) {
    call @host_reads(%u) : (memref<*xi8>) -> ()
    return
  }
}

// -----

// CHECK: msamp.cuda_graph_blocker = "{{.*}}: allocates a buffer (managed memory) in the step"
module {
  func.func @step() {
    %b = memref.alloc() : memref<4xf32>
    return
  }
}

// -----

// CHECK: msamp.cuda_graph_blocker = "{{.*}}: a loop or branch ('scf.if') runs on the host"
module {
  func.func @step(%c: i1) {
    scf.if %c {
    }
    return
  }
}

// -----

// A function the module defines (a layer, msamp-gpu-outline-layers) is
// replayed as its body is: its stores into the table its caller keeps on
// the stack are the caller's own stack (HostStack.h), nothing to block.
// CHECK: module attributes {msamp.cuda_graph_blocker = ""}
module {
  func.func @step(%v: i64) {
    %t = memref.alloca() : memref<2xi64>
    call @layer(%t, %v) : (memref<2xi64>, i64) -> ()
    return
  }
  func.func private @layer(%t: memref<2xi64>, %v: i64) {
    %c0 = arith.constant 0 : index
    memref.store %v, %t[%c0] : memref<2xi64>
    return
  }
}

// -----

// A blocker inside a called function blocks the step, at its own location.
// CHECK: msamp.cuda_graph_blocker = "{{.*}}inner.mlir:7:9: host code reads a buffer ('memref.load')"
module {
  func.func @step(%s: memref<f32>) {
    call @layer(%s) : (memref<f32>) -> ()
    return
  }
  func.func private @layer(%s: memref<f32>) {
    %v = memref.load %s[] : memref<f32> loc("inner.mlir":7:9)
    return
  }
}
