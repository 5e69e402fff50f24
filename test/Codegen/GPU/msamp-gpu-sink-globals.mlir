// msamp-gpu-sink-globals: a kernel that reads a constant table reads it
// from its own module (device memory), not through an argument holding the
// table's address in the host image.
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-sink-globals))' | FileCheck %s
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-sink-globals),gpu-kernel-outlining)' | FileCheck %s --check-prefix=OUTLINED

// CHECK-LABEL: func.func @table_in_kernel(
// CHECK-NOT: memref.get_global
// CHECK: gpu.launch
// CHECK: %[[G:.+]] = memref.get_global @table : memref<4xf32>
// CHECK: memref.load %[[G]]
// OUTLINED-LABEL: func.func @table_in_kernel(
// OUTLINED-NOT: memref.get_global
// OUTLINED: gpu.launch_func @table_in_kernel_kernel::@table_in_kernel_kernel {{.*}} args(%arg0 : memref<4xf32>)
// OUTLINED: gpu.module @table_in_kernel_kernel
// OUTLINED: gpu.func @table_in_kernel_kernel(%{{.+}}: memref<4xf32>) kernel
// OUTLINED: memref.get_global @table : memref<4xf32>
// OUTLINED: memref.global "private" constant @table : memref<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @table_in_kernel(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.get_global @table : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %g[%tx] : memref<4xf32>
    memref.store %v, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A read the host code uses too (here a runtime call) stays for it; the
// kernel reads its own.
// CHECK-LABEL: func.func @table_on_host_too(
// CHECK: %[[H:.+]] = memref.get_global @lut : memref<2xi32>
// CHECK: gpu.launch
// CHECK: %[[K:.+]] = memref.get_global @lut : memref<2xi32>
// CHECK: memref.load %[[K]]
// CHECK: call @host_reader(%[[H]])
memref.global "private" constant @lut : memref<2xi32> = dense<[7, 9]>
func.func private @host_reader(memref<2xi32>)
func.func @table_on_host_too(%out: memref<2xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %g = memref.get_global @lut : memref<2xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
    %v = memref.load %g[%tx] : memref<2xi32>
    memref.store %v, %out[%tx] : memref<2xi32>
    gpu.terminator
  }
  call @host_reader(%g) : (memref<2xi32>) -> ()
  return
}
