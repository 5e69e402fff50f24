// --msamp-lower-to-gpu on a step whose kernel reads a ranked constant (a
// 4-entry table): msamp-gpu-stage-globals copies it into a step buffer with
// a kernel, and that kernel reads the table from its own module
// (msamp-gpu-sink-globals), a device global in the PTX, not from the host
// image of train_step.so.
// RUN: msamp-opt %s --msamp-lower-to-gpu --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTLINED
// RUN: msamp-opt %s --msamp-lower-to-gpu | FileCheck %s --check-prefix=PTX

// OUTLINED: memref.global "private" constant @[[T:[A-Za-z_0-9]+]] : memref<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// OUTLINED: func.func @train_step(
// OUTLINED-NOT: memref.get_global
// OUTLINED: gpu.launch_func @[[COPY:train_step_kernel]]::@train_step_kernel {{.*}} args(%c4 : index, %{{.+}} : memref<4xf32>)
// OUTLINED-NOT: memref.get_global
// OUTLINED: gpu.module @[[COPY]] {
// OUTLINED: memref.get_global @[[T]] : memref<4xf32>
// OUTLINED: memref.global "private" constant @[[T]] : memref<4xf32>
// OUTLINED: gpu.module

// The table is in the copy kernel's PTX as an initialized global.
// PTX: gpu.binary @train_step_kernel
// PTX-SAME: .global .align 64 .b8 __constant_4xf32[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>
module {
  func.func @train_step(
      %x: tensor<8x4xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O0"} {
    %zero = arith.constant 0.0 : f32
    %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #col, #all], iterator_types = ["reduction", "reduction"]}
        ins(%x, %table : tensor<8x4xf32>, tensor<4xf32>) outs(%z0 : tensor<f32>) {
    ^bb0(%a: f32, %t: f32, %acc: f32):
      %p = arith.mulf %a, %t : f32
      %s = arith.addf %p, %acc : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
