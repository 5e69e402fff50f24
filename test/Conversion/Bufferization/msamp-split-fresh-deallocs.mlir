// RUN: msamp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(msamp-split-fresh-deallocs))' | FileCheck %s

// Distinct allocations freed under true and nothing retained: one dealloc
// per buffer, in order.
// CHECK-LABEL: func @fresh
// CHECK-SAME: (%[[C:.*]]: i1)
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf16>
// CHECK: %[[D:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[TRUE]])
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<8xf16>) if (%[[TRUE]])
// CHECK-NEXT: bufferization.dealloc (%[[D]] : memref<f32>) if (%[[TRUE]])
// CHECK-NEXT: return
func.func @fresh(%c: i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf16>
  %d = memref.alloc() : memref<f32>
  bufferization.dealloc (%a, %b, %d : memref<4xf32>, memref<8xf16>, memref<f32>) if (%true, %true, %true)
  return
}

// -----

// Left to buffer-deallocation-simplification: a condition that is not the
// constant true, an argument (it may alias anything), the same allocation
// twice, a retained value.
// CHECK-LABEL: func @kept
// CHECK-COUNT-4: bufferization.dealloc ({{[^)]*}}, {{[^)]*}})
// CHECK-NOT: bufferization.dealloc
func.func @kept(%c: i1, %arg: memref<4xf32>) -> memref<4xf32> {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>) if (%true, %c)
  %d = memref.alloc() : memref<4xf32>
  %e = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%d, %arg : memref<4xf32>, memref<4xf32>) if (%true, %true)
  %f = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%f, %f : memref<4xf32>, memref<4xf32>) if (%true, %true)
  %g = memref.alloc() : memref<4xf32>
  %h = memref.alloc() : memref<4xf32>
  %r = bufferization.dealloc (%g, %h : memref<4xf32>, memref<4xf32>) if (%true, %true) retain (%e : memref<4xf32>)
  return %e : memref<4xf32>
}
