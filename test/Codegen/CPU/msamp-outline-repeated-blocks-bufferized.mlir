// RUN: msamp-opt %s --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --msamp-check-in-place-states | FileCheck %s
// RUN: msamp-opt %s --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --msamp-check-in-place-states --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Through bufferization: the outlined calls keep msamp.in_place_args, and
// msamp-check-in-place-states checks the buffer each call is given. State 0
// is read again after its update (by the last op): bufferization updates a
// copy, which the check copies back into the argument at the end; states 1
// and 2 are updated in their own buffers.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[H0:[a-z0-9]+]]: memref<4xf32>, %[[H1:[a-z0-9]+]]: memref<4xf32>, %[[H2:[a-z0-9]+]]: memref<4xf32>)
// CHECK: memref.copy %[[H0]], %[[COPY:[a-z0-9_]+]] :
// CHECK: call @train_step_block_0(%{{.*}}, %[[COPY]])
// CHECK: call @train_step_block_0(%{{.*}}, %[[H1]])
// CHECK: call @train_step_block_0(%{{.*}}, %[[H2]])
// CHECK-NOT: msamp.in_place_args
// CHECK: memref.copy %[[COPY]], %[[H0]] :
// CHECK-NEXT: return
// CHECK: func.func private @train_step_block_0(%{{.*}}: memref<4xf32>, %[[B:[a-z0-9]+]]: memref<4xf32>)
// CHECK: %[[C:.*]] = memref.cast %[[B]]
// CHECK: call @rt_update(%{{.*}}, %[[C]]) : (memref<*xf32>, memref<*xf32>) -> ()
// REMARK: remark: [Passed] blocks-outlined | Category:msamp:outline-repeated-blocks | Remark="3 repeated blocks of @train_step (21 ops) outlined as calls of 1 functions
// REMARK: remark: [Analysis] state-copied-back | Category:msamp:check-in-place-states | Remark="state argument #1 is written by a copy and copied back at the end of the step: it is still read after the call that updates it"
// REMARK-NOT: state-copied-back

module {
  func.func private @rt_update(memref<*xf32>, memref<*xf32>)
  func.func @train_step(%x: tensor<4xf32>, %h0: tensor<4xf32>,
                        %h1: tensor<4xf32>, %h2: tensor<4xf32>)
      -> tensor<4xf32> attributes {msamp.kind = "train_step"} {
    %e = tensor.empty() : tensor<4xf32>
    %a0 = linalg.mul ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %r0 = bufferization.to_buffer %a0 read_only : tensor<4xf32> to memref<4xf32>
    %rc0 = memref.cast %r0 : memref<4xf32> to memref<*xf32>
    %b0 = bufferization.to_buffer %h0 : tensor<4xf32> to memref<4xf32>
    %bc0 = memref.cast %b0 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc0, %bc0) {msamp.in_place_args = array<i64: 1, 1>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n0 = bufferization.to_tensor %b0 restrict writable : memref<4xf32> to tensor<4xf32>
    %y0 = linalg.add ins(%a0, %n0 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>

    %a1 = linalg.mul ins(%y0, %y0 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %r1 = bufferization.to_buffer %a1 read_only : tensor<4xf32> to memref<4xf32>
    %rc1 = memref.cast %r1 : memref<4xf32> to memref<*xf32>
    %b1 = bufferization.to_buffer %h1 : tensor<4xf32> to memref<4xf32>
    %bc1 = memref.cast %b1 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc1, %bc1) {msamp.in_place_args = array<i64: 1, 2>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n1 = bufferization.to_tensor %b1 restrict writable : memref<4xf32> to tensor<4xf32>
    %y1 = linalg.add ins(%a1, %n1 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>

    %a2 = linalg.mul ins(%y1, %y1 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %r2 = bufferization.to_buffer %a2 read_only : tensor<4xf32> to memref<4xf32>
    %rc2 = memref.cast %r2 : memref<4xf32> to memref<*xf32>
    %b2 = bufferization.to_buffer %h2 : tensor<4xf32> to memref<4xf32>
    %bc2 = memref.cast %b2 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc2, %bc2) {msamp.in_place_args = array<i64: 1, 3>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n2 = bufferization.to_tensor %b2 restrict writable : memref<4xf32> to tensor<4xf32>
    %y2 = linalg.add ins(%a2, %n2 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %z = linalg.add ins(%y2, %h0 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    return %z : tensor<4xf32>
  }
}
