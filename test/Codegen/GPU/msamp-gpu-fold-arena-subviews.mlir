// msamp-gpu-fold-arena-subviews: a contiguous static slice of an arena view
// (a view of a byte buffer at a constant shift) becomes an arena view of its
// own at the shift plus its offset in bytes, and a reshape of an arena view
// the arena view of its shape; kept: a strided slice, a slice a call takes,
// and a slice of a buffer that is not an arena view.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fold-arena-subviews))' | FileCheck %s

func.func private @use(memref<4xf32, strided<[1], offset: 4>>)

// CHECK-LABEL: func.func @folded(
func.func @folded(%arena: memref<1024xi8>) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %packed = memref.view %arena[%c64][] : memref<1024xi8> to memref<16xf32>
  // Element 5 of the packed buffer: 64 + 5 x 4 bytes.
  // CHECK: %[[B84:.+]] = arith.constant 84 : index
  // CHECK: %[[ONE:.+]] = memref.view %arg0[%[[B84]]][] : memref<1024xi8> to memref<1xf32>
  // CHECK: memref.load %[[ONE]][%{{.+}}] : memref<1xf32>
  %one = memref.subview %packed[5] [1] [1] : memref<16xf32> to memref<1xf32, strided<[1], offset: 5>>
  %a = memref.load %one[%c0] : memref<1xf32, strided<[1], offset: 5>>
  // The matrix is a view of its shape at the same shift; its rows 2 and 3,
  // reshaped, a view at 64 + 8 x 4 bytes (the rows themselves are only
  // reshaped: no view of their own).
  // CHECK: %[[MATRIX:.+]] = memref.view %arg0[%{{.+}}][] : memref<1024xi8> to memref<4x4xf32>
  // CHECK: %[[B96:.+]] = arith.constant 96 : index
  // CHECK-NEXT: %[[FLAT:.+]] = memref.view %arg0[%[[B96]]][] : memref<1024xi8> to memref<8xf32>
  // CHECK: memref.load %[[FLAT]][%{{.+}}] : memref<8xf32>
  %matrix = memref.expand_shape %packed [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  %rows = memref.subview %matrix[2, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  %flat = memref.collapse_shape %rows [[0, 1]] : memref<2x4xf32, strided<[4, 1], offset: 8>> into memref<8xf32, strided<[1], offset: 8>>
  %b = memref.load %flat[%c1] : memref<8xf32, strided<[1], offset: 8>>
  // CHECK-NOT: memref.subview
  // CHECK-NOT: memref.expand_shape
  // CHECK-NOT: memref.collapse_shape
  // CHECK: memref.load %[[MATRIX]][%{{.+}}, %{{.+}}] : memref<4x4xf32>
  %c = memref.load %matrix[%c1, %c1] : memref<4x4xf32>
  return %a, %b, %c : f32, f32, f32
}

// CHECK-LABEL: func.func @kept(
func.func @kept(%arena: memref<1024xi8>, %plain: memref<16xf32>) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %packed = memref.view %arena[%c64][] : memref<1024xi8> to memref<16xf32>
  // Every other element: not contiguous.
  // CHECK: memref.subview %{{.+}}[0] [8] [2]
  %strided = memref.subview %packed[0] [8] [2] : memref<16xf32> to memref<8xf32, strided<[2]>>
  %a = memref.load %strided[%c0] : memref<8xf32, strided<[2]>>
  // A call takes the slice with its type.
  // CHECK: memref.subview %{{.+}}[4] [4] [1]
  // CHECK: call @use(
  %called = memref.subview %packed[4] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: 4>>
  call @use(%called) : (memref<4xf32, strided<[1], offset: 4>>) -> ()
  // Not an arena view.
  // CHECK: memref.subview %arg1[2] [1] [1]
  %other = memref.subview %plain[2] [1] [1] : memref<16xf32> to memref<1xf32, strided<[1], offset: 2>>
  %b = memref.load %other[%c0] : memref<1xf32, strided<[1], offset: 2>>
  return %a, %b : f32, f32
}
