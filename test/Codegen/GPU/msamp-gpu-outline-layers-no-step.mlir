// msamp-gpu-outline-layers on input it does not apply to leaves it as it is,
// without an error: a module without a train step, and a step of more than
// one block (host control flow, which the outliner's runs cannot span).
// RUN: msamp-opt %s --split-input-file --msamp-gpu-outline-layers | FileCheck %s

// CHECK-LABEL: func.func @not_a_step(
// CHECK: memref.view %{{.+}}[%c0][]
// CHECK-NOT: call
func.func @not_a_step(%base: memref<64xi8>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %v = memref.view %base[%c0][] : memref<64xi8> to memref<4xf32>
  return %v : memref<4xf32>
}

// -----

// CHECK-LABEL: func.func @train_step(
// CHECK: cf.br ^bb1
// CHECK: memref.view %{{.+}}[%c0][]
// CHECK-NOT: func.func private
func.func @train_step(%base: memref<64xi8>, %x: f32) attributes {msamp.kind = "train_step"} {
  cf.br ^bb1
^bb1:
  %c0 = arith.constant 0 : index
  %v = memref.view %base[%c0][] : memref<64xi8> to memref<f32>
  memref.store %x, %v[] : memref<f32>
  return
}
