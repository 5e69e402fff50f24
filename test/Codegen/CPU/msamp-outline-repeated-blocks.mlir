// RUN: msamp-opt %s --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2" | FileCheck %s
// RUN: msamp-opt %s --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2" --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: msamp-opt %s --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2 on-buffers=true" | FileCheck %s --check-prefix=BUFFERS

// Four layers of 8 ops, each reading the previous layer's output and its
// own weight; the fourth differs in its data flow after the state update
// (it reads %w3 where the others read their input): it stays inline. Each
// layer updates its state argument in place (the writable to_buffer of the
// argument and the call that takes it): only the to_buffer stays in the
// step; nothing else in the layer reads the argument, so the layer's run
// crosses it and the call takes the buffer. One function, three calls. The
// constant is cloned into the function; the reshape whose result is used
// after the layer is rebuilt after the call (a returned view would be
// copied into its out-parameter).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32>, %[[W0:[a-z0-9]+]]: tensor<4xf32>, %[[W1:[a-z0-9]+]]: tensor<4xf32>, %[[W2:[a-z0-9]+]]: tensor<4xf32>, %[[W3:[a-z0-9]+]]: tensor<4xf32>, %[[S0:[a-z0-9]+]]: tensor<4xf32>, %[[S1:[a-z0-9]+]]: tensor<4xf32>, %[[S2:[a-z0-9]+]]: tensor<4xf32>
// The state's buffer stays in the step; the update moves into the layer's
// function, which takes the buffer: a whole layer is one call.
// CHECK: %[[B0:.*]] = bufferization.to_buffer %[[S0]]
// CHECK: %[[L0:.*]]:2 = call @train_step_block_0(%[[X]], %[[W0]], %[[B0]]) : (tensor<4xf32>, tensor<4xf32>, memref<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[R0:.*]] = tensor.expand_shape %[[L0]]#0
// CHECK: %[[B1:.*]] = bufferization.to_buffer %[[S1]]
// CHECK: %[[L1:.*]]:2 = call @train_step_block_0(%[[L0]]#1, %[[W1]], %[[B1]])
// CHECK: %[[B2:.*]] = bufferization.to_buffer %[[S2]]
// CHECK: %[[L2:.*]]:2 = call @train_step_block_0(%[[L1]]#1, %[[W2]], %[[B2]])
// CHECK-NOT: call @train_step_block
// CHECK: call @update(
// CHECK: arith.subf %{{.*}}, %[[W3]]
// CHECK: return %[[L2]]#1, %[[R0]]
// CHECK: func.func private @train_step_block_0(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %[[B:.*]]: memref<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: arith.constant dense<2.000000e+00>
// CHECK: call @update(%[[B]])
// CHECK-NOT: func.func private @train_step_block_1

// REMARK: remark: [Passed] blocks-outlined | Category:msamp:outline-repeated-blocks | Remark="3 repeated blocks of @train_step (21 ops) outlined as calls of 1 functions (2 calls deduplicated: structurally identical to an earlier block)"

// On buffers nothing stays in the step: a whole layer, state update
// included, is one call (the fourth layer differs: inline).
// BUFFERS-LABEL: func.func @train_step(
// BUFFERS-SAME: %[[S0:arg5]]: tensor<4xf32>, %[[S1:arg6]]: tensor<4xf32>, %[[S2:arg7]]: tensor<4xf32>, %[[S3:arg8]]: tensor<4xf32>
// BUFFERS: call @train_step_buffer_block_0(%{{.*}}, %{{.*}}, %[[S0]])
// BUFFERS: call @train_step_buffer_block_0(%{{.*}}, %{{.*}}, %[[S1]])
// BUFFERS: call @train_step_buffer_block_0(%{{.*}}, %{{.*}}, %[[S2]])
// BUFFERS-NOT: call @train_step_buffer_block
// BUFFERS: bufferization.to_buffer %[[S3]]

module {
  func.func private @update(memref<4xf32>)
  func.func @train_step(%x: tensor<4xf32>, %w0: tensor<4xf32>,
                        %w1: tensor<4xf32>, %w2: tensor<4xf32>,
                        %w3: tensor<4xf32>, %s0: tensor<4xf32>,
                        %s1: tensor<4xf32>, %s2: tensor<4xf32>,
                        %s3: tensor<4xf32>)
      -> (tensor<4xf32>, tensor<2x2xf32>)
      attributes {msamp.kind = "train_step"} {
    %two = arith.constant dense<2.0> : tensor<4xf32>
    %a0 = arith.addf %x, %w0 : tensor<4xf32>
    %m0 = arith.mulf %a0, %a0 : tensor<4xf32>
    %c0 = arith.addf %m0, %two : tensor<4xf32>
    %r0 = tensor.expand_shape %c0 [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
    %b0 = bufferization.to_buffer %s0 : tensor<4xf32> to memref<4xf32>
    func.call @update(%b0) : (memref<4xf32>) -> ()
    %d0 = arith.subf %c0, %x : tensor<4xf32>
    %y0 = arith.mulf %d0, %w0 : tensor<4xf32>

    %a1 = arith.addf %y0, %w1 : tensor<4xf32>
    %m1 = arith.mulf %a1, %a1 : tensor<4xf32>
    %c1 = arith.addf %m1, %two : tensor<4xf32>
    %r1 = tensor.expand_shape %c1 [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
    %b1 = bufferization.to_buffer %s1 : tensor<4xf32> to memref<4xf32>
    func.call @update(%b1) : (memref<4xf32>) -> ()
    %d1 = arith.subf %c1, %y0 : tensor<4xf32>
    %y1 = arith.mulf %d1, %w1 : tensor<4xf32>

    %a2 = arith.addf %y1, %w2 : tensor<4xf32>
    %m2 = arith.mulf %a2, %a2 : tensor<4xf32>
    %c2 = arith.addf %m2, %two : tensor<4xf32>
    %r2 = tensor.expand_shape %c2 [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
    %b2 = bufferization.to_buffer %s2 : tensor<4xf32> to memref<4xf32>
    func.call @update(%b2) : (memref<4xf32>) -> ()
    %d2 = arith.subf %c2, %y1 : tensor<4xf32>
    %y2 = arith.mulf %d2, %w2 : tensor<4xf32>

    %a3 = arith.addf %y2, %w3 : tensor<4xf32>
    %m3 = arith.mulf %a3, %a3 : tensor<4xf32>
    %c3 = arith.addf %m3, %two : tensor<4xf32>
    %r3 = tensor.expand_shape %c3 [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
    %b3 = bufferization.to_buffer %s3 : tensor<4xf32> to memref<4xf32>
    func.call @update(%b3) : (memref<4xf32>) -> ()
    %d3 = arith.subf %c3, %w3 : tensor<4xf32>
    %y3 = arith.mulf %d3, %w3 : tensor<4xf32>
    return %y2, %r0 : tensor<4xf32>, tensor<2x2xf32>
  }
}
