// RUN: msamp-opt %s --msamp-gpu-dedupe-kernels | FileCheck %s
// RUN: msamp-opt %s --msamp-gpu-dedupe-kernels --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Three launches of the same scale-by-2 kernel on other buffers (as
// gpu-kernel-outlining leaves them: a module each) become launches of the
// first module's kernel; the scale by 3 (another constant) and the scale of
// another shape stay modules of their own.
// CHECK-LABEL: func.func @step(
// CHECK: gpu.launch_func @step_kernel::@step_kernel {{.*}} args(%arg0 : memref<256xf32>)
// CHECK: gpu.launch_func @step_kernel::@step_kernel {{.*}} args(%arg1 : memref<256xf32>)
// CHECK: gpu.launch_func @step_kernel_1::@step_kernel {{.*}} args(%arg0 : memref<256xf32>)
// CHECK: gpu.launch_func @step_kernel::@step_kernel {{.*}} args(%arg2 : memref<256xf32>)
// CHECK: gpu.launch_func @step_kernel_3::@step_kernel {{.*}} args(%arg3 : memref<512xf32>)
// CHECK: gpu.module @step_kernel {
// CHECK-NOT: gpu.module @step_kernel_0
// CHECK: gpu.module @step_kernel_1 {
// CHECK: arith.constant 3.0
// CHECK-NOT: gpu.module @step_kernel_2
// CHECK: gpu.module @step_kernel_3 {

// REMARK: remark: [Passed] kernels-deduplicated | Category:msamp:gpu-dedupe-kernels | Remark="5 kernels emitted as 3 (2 deduplicated: structurally identical to an earlier kernel)"

module attributes {gpu.container_module} {
  func.func @step(%a: memref<256xf32>, %b: memref<256xf32>,
                  %c: memref<256xf32>, %d: memref<512xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%a : memref<256xf32>)
    gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%b : memref<256xf32>)
    gpu.launch_func @step_kernel_1::@step_kernel blocks in (%c1, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%a : memref<256xf32>)
    gpu.launch_func @step_kernel_2::@step_kernel blocks in (%c1, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%c : memref<256xf32>)
    gpu.launch_func @step_kernel_3::@step_kernel blocks in (%c2, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%d : memref<512xf32>)
    return
  }
  gpu.module @step_kernel {
    gpu.func @step_kernel(%x: memref<256xf32>) kernel {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<256xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%i] : memref<256xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    gpu.func @step_kernel(%x: memref<256xf32>) kernel {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<256xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%i] : memref<256xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_1 {
    gpu.func @step_kernel(%x: memref<256xf32>) kernel {
      %i = gpu.thread_id x
      %three = arith.constant 3.0 : f32
      %v = memref.load %x[%i] : memref<256xf32>
      %w = arith.mulf %v, %three : f32
      memref.store %w, %x[%i] : memref<256xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_2 {
    gpu.func @step_kernel(%x: memref<256xf32>) kernel {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<256xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%i] : memref<256xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_3 {
    gpu.func @step_kernel(%x: memref<512xf32>) kernel {
      %i = gpu.block_id x
      %two = arith.constant 2.0 : f32
      %v = memref.load %x[%i] : memref<512xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%i] : memref<512xf32>
      gpu.return
    }
  }
}
