// msamp-gpu-check-kernel-buffers: kernels take their buffers as bare
// pointers, so a launch of a buffer whose layout is not static (here a
// dynamic size, then a dynamic offset) is an error at the launch that names
// the kernel, the argument and its type; static buffers pass.
// RUN: msamp-opt %s --msamp-gpu-check-kernel-buffers -split-input-file -verify-diagnostics

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%a: memref<?xf32>, %n: index) kernel { gpu.return }
  }
  func.func @dynamic_size(%a: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{kernel @k takes buffer argument 0 of type 'memref<?xf32>', whose shape, strides or offset are not static}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>, %n : index)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%s: memref<4xf32>, %a: memref<4xf32, strided<[1], offset: ?>>) kernel { gpu.return }
  }
  func.func @dynamic_offset(%s: memref<4xf32>, %a: memref<4xf32, strided<[1], offset: ?>>) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{kernel @k takes buffer argument 1 of type 'memref<4xf32, strided<[1], offset: ?>>'}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%s : memref<4xf32>, %a : memref<4xf32, strided<[1], offset: ?>>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%s: memref<4x8xf32>, %v: memref<8xf32, strided<[1], offset: 16>>, %z: memref<f32>) kernel { gpu.return }
  }
  func.func @static(%s: memref<4x8xf32>, %v: memref<8xf32, strided<[1], offset: 16>>, %z: memref<f32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%s : memref<4x8xf32>, %v : memref<8xf32, strided<[1], offset: 16>>, %z : memref<f32>)
    return
  }
}
