// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-strided-copies-to-loops))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-strided-copies-to-loops),finalize-memref-to-llvm)' | FileCheck %s --check-prefix=LLVM

// A copy into a strided view (the right half of every row: the concat of
// two gradients) becomes loads and stores, outermost dimension first.
// CHECK-LABEL: func.func @into_view(
// CHECK-SAME: %[[SRC:[^:]+]]: memref<4x3xf32>, %[[DST:[^:]+]]: memref<4x6xf32>
// CHECK: %[[VIEW:.+]] = memref.subview %[[DST]]
// CHECK-NOT: memref.copy
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[V:.+]] = memref.load %[[SRC]][%[[I]], %[[J]]]
// CHECK: memref.store %[[V]], %[[VIEW]][%[[I]], %[[J]]]
func.func @into_view(%src: memref<4x3xf32>, %dst: memref<4x6xf32>) {
  %view = memref.subview %dst[0, 3] [4, 3] [1, 1] : memref<4x6xf32> to memref<4x3xf32, strided<[6, 1], offset: 3>>
  memref.copy %src, %view : memref<4x3xf32> to memref<4x3xf32, strided<[6, 1], offset: 3>>
  return
}

// Out of a strided view (the split of a fused projection), with a dynamic
// size: the loop bound is the view's dim.
// CHECK-LABEL: func.func @from_view(
// CHECK-NOT: memref.copy
// CHECK: memref.dim
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
func.func @from_view(%src: memref<?x6xf32>, %dst: memref<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %src, %c0 : memref<?x6xf32>
  %view = memref.subview %src[0, 0] [%n, 3] [1, 1] : memref<?x6xf32> to memref<?x3xf32, strided<[6, 1]>>
  memref.copy %view, %dst : memref<?x3xf32, strided<[6, 1]>> to memref<?x3xf32>
  return
}

// Contiguous copies (a whole buffer, leading rows of one) stay memcpy.
// CHECK-LABEL: func.func @contiguous(
// CHECK: memref.copy
// CHECK: memref.copy
// CHECK-NOT: scf.for
// No copy of this file calls MLIR's memrefCopy once lowered.
// LLVM-NOT: memrefCopy
// LLVM-LABEL: func.func @contiguous(
// LLVM-NOT: memrefCopy
// LLVM: "llvm.intr.memcpy"
// LLVM-NOT: memrefCopy
func.func @contiguous(%a: memref<4x6xf32>, %b: memref<4x6xf32>, %c: memref<2x6xf32>) {
  memref.copy %a, %b : memref<4x6xf32> to memref<4x6xf32>
  %rows = memref.subview %a[2, 0] [2, 6] [1, 1] : memref<4x6xf32> to memref<2x6xf32, strided<[6, 1], offset: 12>>
  memref.copy %rows, %c : memref<2x6xf32, strided<[6, 1], offset: 12>> to memref<2x6xf32>
  return
}
