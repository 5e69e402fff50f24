// RUN: msamp-opt %s --msamp-gpu-mark-fresh-arguments | FileCheck %s

// An argument is fresh when every call passes it an allocation of the
// caller that no other operand of the call reaches: %out below. Not %in
// (one call passes a step argument), not %twice (one call passes the same
// allocation as another operand, through a view), not %view (a view, not
// an allocation), not a public function's argument (called from outside
// too).
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME: %{{[^:]+}}: memref<8xf32>,
// CHECK-SAME: %{{[^:]+}}: memref<8xf32> {msamp.fresh},
// CHECK-SAME: %{{[^:]+}}: memref<8xf32>,
// CHECK-SAME: %{{[^:]+}}: memref<2x4xf32>)
// CHECK-LABEL: func.func @public_layer(
// CHECK-NOT: msamp.fresh
// CHECK-SAME: {
module {
  func.func private @layer(%in: memref<8xf32>, %out: memref<8xf32>,
                           %twice: memref<8xf32>, %view: memref<2x4xf32>) {
    return
  }
  func.func @public_layer(%out: memref<8xf32>) {
    return
  }
  func.func @train_step(%x: memref<8xf32>) attributes {msamp.kind = "train_step"} {
    %a = memref.alloc() : memref<8xf32>
    %b = memref.alloc() : memref<8xf32>
    %c = memref.alloc() : memref<8xf32>
    %cv = memref.expand_shape %c [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    func.call @layer(%x, %a, %c, %cv) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<2x4xf32>) -> ()
    %d = memref.alloc() : memref<8xf32>
    %e = memref.alloc() : memref<8xf32>
    %f = memref.alloc() : memref<8xf32>
    %fv = memref.expand_shape %f [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    func.call @layer(%b, %d, %e, %fv) : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<2x4xf32>) -> ()
    %g = memref.alloc() : memref<8xf32>
    func.call @public_layer(%g) : (memref<8xf32>) -> ()
    return
  }
}
