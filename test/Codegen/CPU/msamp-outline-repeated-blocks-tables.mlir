// RUN: msamp-opt %s --split-input-file --msamp-outline-repeated-blocks="min-period=4 min-run-ops=2" | FileCheck %s

// A multi-tensor call per layer, as AdamGroupToRuntime writes it: a table
// on the host stack holds the address of a state's old value (a read-only
// to_buffer of the argument) and of its in-place destination (the writable
// to_buffer, whose address op names the argument). Both buffers of the
// argument stay in the step, so the run crosses them and each layer's
// table and call become one call of one function, which takes the two
// buffers. With the read-only buffer in the run, the writable one could
// not be crossed (a read moved after the write), and the runs it split
// each stored into a table another run allocated: none was outlined.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[H0:[a-z0-9]+]]: tensor<4xf32>, %[[H1:[a-z0-9]+]]: tensor<4xf32>, %[[H2:[a-z0-9]+]]: tensor<4xf32>
// CHECK: %[[R0:.*]] = bufferization.to_buffer %[[H0]] read_only
// CHECK: %[[B0:.*]] = bufferization.to_buffer %[[H0]] :
// CHECK: call @train_step_block_0(%[[R0]], %[[B0]]) {msamp.in_place_args = array<i64: 1, 0>}
// CHECK: %[[R1:.*]] = bufferization.to_buffer %[[H1]] read_only
// CHECK: %[[B1:.*]] = bufferization.to_buffer %[[H1]] :
// CHECK: call @train_step_block_0(%[[R1]], %[[B1]]) {msamp.in_place_args = array<i64: 1, 1>}
// CHECK: call @train_step_block_0(
// CHECK-NOT: memref.alloca
// CHECK: return
// CHECK: func.func private @train_step_block_0(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK: memref.alloca() : memref<2xi64>
// CHECK: call @rt_multi(

module {
  func.func private @rt_multi(memref<*xi64>)
  func.func @train_step(%h0: tensor<4xf32>, %h1: tensor<4xf32>,
                        %h2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      attributes {msamp.kind = "train_step"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index

    %r0 = bufferization.to_buffer %h0 read_only : tensor<4xf32> to memref<4xf32>
    %rc0 = memref.cast %r0 : memref<4xf32> to memref<*xf32>
    %ra0 = memref.extract_aligned_pointer_as_index %rc0 : memref<*xf32> -> index
    %ri0 = arith.index_cast %ra0 : index to i64
    %b0 = bufferization.to_buffer %h0 : tensor<4xf32> to memref<4xf32>
    %bc0 = memref.cast %b0 : memref<4xf32> to memref<*xf32>
    %ba0 = memref.extract_aligned_pointer_as_index %bc0 : memref<*xf32> -> index {msamp.in_place_args = array<i64: 0, 0>}
    %bi0 = arith.index_cast %ba0 : index to i64
    %t0 = memref.alloca() : memref<2xi64>
    memref.store %ri0, %t0[%c0] : memref<2xi64>
    memref.store %bi0, %t0[%c1] : memref<2xi64>
    %tc0 = memref.cast %t0 : memref<2xi64> to memref<*xi64>
    func.call @rt_multi(%tc0) : (memref<*xi64>) -> ()
    %n0 = bufferization.to_tensor %b0 restrict writable : memref<4xf32> to tensor<4xf32>

    %r1 = bufferization.to_buffer %h1 read_only : tensor<4xf32> to memref<4xf32>
    %rc1 = memref.cast %r1 : memref<4xf32> to memref<*xf32>
    %ra1 = memref.extract_aligned_pointer_as_index %rc1 : memref<*xf32> -> index
    %ri1 = arith.index_cast %ra1 : index to i64
    %b1 = bufferization.to_buffer %h1 : tensor<4xf32> to memref<4xf32>
    %bc1 = memref.cast %b1 : memref<4xf32> to memref<*xf32>
    %ba1 = memref.extract_aligned_pointer_as_index %bc1 : memref<*xf32> -> index {msamp.in_place_args = array<i64: 0, 1>}
    %bi1 = arith.index_cast %ba1 : index to i64
    %t1 = memref.alloca() : memref<2xi64>
    memref.store %ri1, %t1[%c0] : memref<2xi64>
    memref.store %bi1, %t1[%c1] : memref<2xi64>
    %tc1 = memref.cast %t1 : memref<2xi64> to memref<*xi64>
    func.call @rt_multi(%tc1) : (memref<*xi64>) -> ()
    %n1 = bufferization.to_tensor %b1 restrict writable : memref<4xf32> to tensor<4xf32>

    %r2 = bufferization.to_buffer %h2 read_only : tensor<4xf32> to memref<4xf32>
    %rc2 = memref.cast %r2 : memref<4xf32> to memref<*xf32>
    %ra2 = memref.extract_aligned_pointer_as_index %rc2 : memref<*xf32> -> index
    %ri2 = arith.index_cast %ra2 : index to i64
    %b2 = bufferization.to_buffer %h2 : tensor<4xf32> to memref<4xf32>
    %bc2 = memref.cast %b2 : memref<4xf32> to memref<*xf32>
    %ba2 = memref.extract_aligned_pointer_as_index %bc2 : memref<*xf32> -> index {msamp.in_place_args = array<i64: 0, 2>}
    %bi2 = arith.index_cast %ba2 : index to i64
    %t2 = memref.alloca() : memref<2xi64>
    memref.store %ri2, %t2[%c0] : memref<2xi64>
    memref.store %bi2, %t2[%c1] : memref<2xi64>
    %tc2 = memref.cast %t2 : memref<2xi64> to memref<*xi64>
    func.call @rt_multi(%tc2) : (memref<*xi64>) -> ()
    %n2 = bufferization.to_tensor %b2 restrict writable : memref<4xf32> to tensor<4xf32>
    return %n0, %n1, %n2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// A chain of equal ops (a gradient norm's per-tensor checks, a few per
// layer) is found as copies of min-period ops, a number of layers per copy
// that depends on the depth (its primitive period is 1): it stays inline.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: call
// CHECK-COUNT-12: arith.addf
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: func.func private

module {
  func.func @train_step(%x: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32>
      attributes {msamp.kind = "train_step"} {
    %a1 = arith.addf %acc, %x : tensor<4xf32>
    %a2 = arith.addf %a1, %x : tensor<4xf32>
    %a3 = arith.addf %a2, %x : tensor<4xf32>
    %a4 = arith.addf %a3, %x : tensor<4xf32>
    %a5 = arith.addf %a4, %x : tensor<4xf32>
    %a6 = arith.addf %a5, %x : tensor<4xf32>
    %a7 = arith.addf %a6, %x : tensor<4xf32>
    %a8 = arith.addf %a7, %x : tensor<4xf32>
    %a9 = arith.addf %a8, %x : tensor<4xf32>
    %a10 = arith.addf %a9, %x : tensor<4xf32>
    %a11 = arith.addf %a10, %x : tensor<4xf32>
    %a12 = arith.addf %a11, %x : tensor<4xf32>
    return %a12 : tensor<4xf32>
  }
}

// -----

// The element of a 0-d tensor that the step reads after a copy (an amax
// gathered with the other layers' into one tensor, O3) is rebuilt after
// the call on the tensor the function returns: returned as a scalar, a GPU
// step's host code would read it (a wait for the device in the step).
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[T0:.*]] = call @train_step_block_0(
// CHECK-NEXT: %[[E0:.*]] = tensor.extract %[[T0]][] : tensor<f32>
// CHECK: %[[T1:.*]] = call @train_step_block_0(
// CHECK-NEXT: %[[E1:.*]] = tensor.extract %[[T1]][] : tensor<f32>
// CHECK: tensor.from_elements %[[E0]], %[[E1]], %{{.*}} : tensor<6xf32>
// CHECK: func.func private @train_step_block_0({{.*}}) -> tensor<f32>

module {
  func.func @train_step(%x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %x3: tensor<4xf32>, %x4: tensor<4xf32>, %x5: tensor<4xf32>) -> tensor<6xf32>
      attributes {msamp.kind = "train_step"} {
    %n0 = arith.negf %x0 : tensor<4xf32>
    %a0 = arith.mulf %n0, %n0 : tensor<4xf32>
    %b0 = arith.addf %a0, %n0 : tensor<4xf32>
    %m0 = msamp.amax %b0 : tensor<4xf32>
    %e0 = tensor.extract %m0[] : tensor<f32>
    %n1 = arith.negf %x1 : tensor<4xf32>
    %a1 = arith.mulf %n1, %n1 : tensor<4xf32>
    %b1 = arith.addf %a1, %n1 : tensor<4xf32>
    %m1 = msamp.amax %b1 : tensor<4xf32>
    %e1 = tensor.extract %m1[] : tensor<f32>
    %n2 = arith.negf %x2 : tensor<4xf32>
    %a2 = arith.mulf %n2, %n2 : tensor<4xf32>
    %b2 = arith.addf %a2, %n2 : tensor<4xf32>
    %m2 = msamp.amax %b2 : tensor<4xf32>
    %e2 = tensor.extract %m2[] : tensor<f32>
    %n3 = arith.negf %x3 : tensor<4xf32>
    %a3 = arith.mulf %n3, %n3 : tensor<4xf32>
    %b3 = arith.addf %a3, %n3 : tensor<4xf32>
    %m3 = msamp.amax %b3 : tensor<4xf32>
    %e3 = tensor.extract %m3[] : tensor<f32>
    %n4 = arith.negf %x4 : tensor<4xf32>
    %a4 = arith.mulf %n4, %n4 : tensor<4xf32>
    %b4 = arith.addf %a4, %n4 : tensor<4xf32>
    %m4 = msamp.amax %b4 : tensor<4xf32>
    %e4 = tensor.extract %m4[] : tensor<f32>
    %n5 = arith.negf %x5 : tensor<4xf32>
    %a5 = arith.mulf %n5, %n5 : tensor<4xf32>
    %b5 = arith.addf %a5, %n5 : tensor<4xf32>
    %m5 = msamp.amax %b5 : tensor<4xf32>
    %e5 = tensor.extract %m5[] : tensor<f32>
    %all = tensor.from_elements %e0, %e1, %e2, %e3, %e4, %e5 : tensor<6xf32>
    return %all : tensor<6xf32>
  }
}
