// RUN: msamp-opt %s --split-input-file --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2" | FileCheck %s

// In-place state updates as convert-msamp-to-runtime writes them (an amax
// history: the call writes operand 1, the buffer of argument 4 + k, and the
// layer reads the new value back through to_tensor): each layer becomes
// one call. The writable to_buffer of the argument stays in the step, the
// call takes the buffer, and the call carries msamp.in_place_args naming
// its own operand (2: the third value the layer reads) and the argument, so
// msamp-check-in-place-states checks the same buffer after bufferization.
// The function's copy of the runtime call has no attribute (which argument
// it writes differs per call). The shared tensor.empty is not an argument:
// each function makes its own. The final writes of the new states
// (materialize_in_destination) stay in the step, where bufferization sees
// that the value already is the argument's buffer.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32>, %[[W0:[a-z0-9]+]]: tensor<4xf32>, %[[W1:[a-z0-9]+]]: tensor<4xf32>, %[[W2:[a-z0-9]+]]: tensor<4xf32>, %[[H0:[a-z0-9]+]]: tensor<4xf32>, %[[H1:[a-z0-9]+]]: tensor<4xf32>, %[[H2:[a-z0-9]+]]: tensor<4xf32>
// CHECK-NOT: tensor.empty
// CHECK: %[[B0:.*]] = bufferization.to_buffer %[[H0]] :
// CHECK: %[[L0:.*]]:2 = call @train_step_block_0(%[[X]], %[[W0]], %[[B0]]) {msamp.in_place_args = array<i64: 2, 4>} : (tensor<4xf32>, tensor<4xf32>, memref<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[B1:.*]] = bufferization.to_buffer %[[H1]] :
// CHECK: %[[L1:.*]]:2 = call @train_step_block_0(%[[L0]]#1, %[[W1]], %[[B1]]) {msamp.in_place_args = array<i64: 2, 5>}
// CHECK: %[[B2:.*]] = bufferization.to_buffer %[[H2]] :
// CHECK: %[[L2:.*]]:2 = call @train_step_block_0(%[[L1]]#1, %[[W2]], %[[B2]]) {msamp.in_place_args = array<i64: 2, 6>}
// CHECK: %[[D0:.*]] = bufferization.to_buffer %[[H0]] :
// CHECK: bufferization.materialize_in_destination %[[L0]]#0 in restrict writable %[[D0]]
// CHECK: return %[[L2]]#1
// CHECK: func.func private @train_step_block_0(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %[[B:.*]]: memref<4xf32>)
// CHECK: tensor.empty() : tensor<4xf32>
// CHECK: %[[C:.*]] = memref.cast %[[B]]
// CHECK: call @rt_update(%{{.*}}, %[[C]]) : (memref<*xf32>, memref<*xf32>) -> ()
// CHECK: bufferization.to_tensor %[[B]] restrict writable
// CHECK-NOT: msamp.in_place_args
// CHECK: return

module {
  func.func private @rt_update(memref<*xf32>, memref<*xf32>)
  func.func @train_step(%x: tensor<4xf32>, %w0: tensor<4xf32>,
                        %w1: tensor<4xf32>, %w2: tensor<4xf32>,
                        %h0: tensor<4xf32>, %h1: tensor<4xf32>,
                        %h2: tensor<4xf32>) -> tensor<4xf32>
      attributes {msamp.kind = "train_step"} {
    %e = tensor.empty() : tensor<4xf32>
    %a0 = arith.mulf %x, %w0 : tensor<4xf32>
    %r0 = bufferization.to_buffer %a0 read_only : tensor<4xf32> to memref<4xf32>
    %rc0 = memref.cast %r0 : memref<4xf32> to memref<*xf32>
    %b0 = bufferization.to_buffer %h0 : tensor<4xf32> to memref<4xf32>
    %bc0 = memref.cast %b0 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc0, %bc0) {msamp.in_place_args = array<i64: 1, 4>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n0 = bufferization.to_tensor %b0 restrict writable : memref<4xf32> to tensor<4xf32>
    %y0 = linalg.add ins(%a0, %n0 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>

    %a1 = arith.mulf %y0, %w1 : tensor<4xf32>
    %r1 = bufferization.to_buffer %a1 read_only : tensor<4xf32> to memref<4xf32>
    %rc1 = memref.cast %r1 : memref<4xf32> to memref<*xf32>
    %b1 = bufferization.to_buffer %h1 : tensor<4xf32> to memref<4xf32>
    %bc1 = memref.cast %b1 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc1, %bc1) {msamp.in_place_args = array<i64: 1, 5>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n1 = bufferization.to_tensor %b1 restrict writable : memref<4xf32> to tensor<4xf32>
    %y1 = linalg.add ins(%a1, %n1 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>

    %a2 = arith.mulf %y1, %w2 : tensor<4xf32>
    %r2 = bufferization.to_buffer %a2 read_only : tensor<4xf32> to memref<4xf32>
    %rc2 = memref.cast %r2 : memref<4xf32> to memref<*xf32>
    %b2 = bufferization.to_buffer %h2 : tensor<4xf32> to memref<4xf32>
    %bc2 = memref.cast %b2 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc2, %bc2) {msamp.in_place_args = array<i64: 1, 6>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n2 = bufferization.to_tensor %b2 restrict writable : memref<4xf32> to tensor<4xf32>
    %y2 = linalg.add ins(%a2, %n2 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>

    %d0 = bufferization.to_buffer %h0 : tensor<4xf32> to memref<4xf32>
    bufferization.materialize_in_destination %n0 in restrict writable %d0 : (tensor<4xf32>, memref<4xf32>) -> ()
    return %y2 : tensor<4xf32>
  }
}

// -----

// A layer that also reads its state argument as a tensor before the
// writable to_buffer cannot cross it: the read would move after the write,
// and bufferization would update a copy. The run is cut there, the halves
// would hand buffers to each other, and the layers stay inline.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: call @train_step_block
// CHECK: return
// CHECK-NOT: func.func private @train_step_block

module {
  func.func private @rt_update(memref<*xf32>, memref<*xf32>)
  func.func @train_step(%x: tensor<4xf32>, %h0: tensor<4xf32>,
                        %h1: tensor<4xf32>, %h2: tensor<4xf32>)
      -> tensor<4xf32> attributes {msamp.kind = "train_step"} {
    %a0 = arith.mulf %x, %h0 : tensor<4xf32>
    %r0 = bufferization.to_buffer %a0 read_only : tensor<4xf32> to memref<4xf32>
    %rc0 = memref.cast %r0 : memref<4xf32> to memref<*xf32>
    %b0 = bufferization.to_buffer %h0 : tensor<4xf32> to memref<4xf32>
    %bc0 = memref.cast %b0 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc0, %bc0) {msamp.in_place_args = array<i64: 1, 1>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n0 = bufferization.to_tensor %b0 restrict writable : memref<4xf32> to tensor<4xf32>
    %y0 = arith.addf %a0, %n0 : tensor<4xf32>

    %a1 = arith.mulf %y0, %h1 : tensor<4xf32>
    %r1 = bufferization.to_buffer %a1 read_only : tensor<4xf32> to memref<4xf32>
    %rc1 = memref.cast %r1 : memref<4xf32> to memref<*xf32>
    %b1 = bufferization.to_buffer %h1 : tensor<4xf32> to memref<4xf32>
    %bc1 = memref.cast %b1 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc1, %bc1) {msamp.in_place_args = array<i64: 1, 2>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n1 = bufferization.to_tensor %b1 restrict writable : memref<4xf32> to tensor<4xf32>
    %y1 = arith.addf %a1, %n1 : tensor<4xf32>

    %a2 = arith.mulf %y1, %h2 : tensor<4xf32>
    %r2 = bufferization.to_buffer %a2 read_only : tensor<4xf32> to memref<4xf32>
    %rc2 = memref.cast %r2 : memref<4xf32> to memref<*xf32>
    %b2 = bufferization.to_buffer %h2 : tensor<4xf32> to memref<4xf32>
    %bc2 = memref.cast %b2 : memref<4xf32> to memref<*xf32>
    func.call @rt_update(%rc2, %bc2) {msamp.in_place_args = array<i64: 1, 3>} : (memref<*xf32>, memref<*xf32>) -> ()
    %n2 = bufferization.to_tensor %b2 restrict writable : memref<4xf32> to tensor<4xf32>
    %y2 = arith.addf %a2, %n2 : tensor<4xf32>
    return %y2 : tensor<4xf32>
  }
}

