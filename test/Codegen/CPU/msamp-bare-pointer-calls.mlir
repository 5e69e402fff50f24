// RUN: msamp-opt %s --msamp-bare-pointer-calls | FileCheck %s
// RUN: msamp-opt %s --msamp-bare-pointer-calls --convert-func-to-llvm \
// RUN:   --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// A block with static buffers takes one pointer per buffer; its caller
// passes the aligned pointers, and the callee rebuilds the descriptors
// (static offset included) from its types.
// CHECK-LABEL: func.func private @static_block
// CHECK-SAME: llvm.bareptr
// LLVM-LABEL: llvm.func @static_block(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: f32)
// LLVM: llvm.mlir.constant(8 : index)
func.func private @static_block(%a: memref<4x8xf32>,
    %b: memref<8xf32, strided<[1], offset: 8>>, %s: f32) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0, %c0] : memref<4x8xf32>
  %w = arith.addf %v, %s : f32
  memref.store %w, %b[%c0] : memref<8xf32, strided<[1], offset: 8>>
  return
}

// Its own temporaries it may free.
// CHECK-LABEL: func.func private @frees_own_buffer
// CHECK-SAME: llvm.bareptr
func.func private @frees_own_buffer(%a: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return
}

// A dynamic size is not in the type: the descriptor stays.
// CHECK-LABEL: func.func private @dynamic_block
// CHECK-NOT: llvm.bareptr
// CHECK-SAME: {
// LLVM-LABEL: llvm.func @dynamic_block(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
func.func private @dynamic_block(%a: memref<?xf32>) {
  return
}

// A buffer it did not allocate, freed: the bare (aligned) pointer is not
// the one to free.
// CHECK-LABEL: func.func private @frees_argument
// CHECK-NOT: llvm.bareptr
// CHECK-SAME: {
func.func private @frees_argument(%a: memref<4xf32>) {
  %v = memref.subview %a[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  memref.dealloc %v : memref<2xf32, strided<[1]>>
  return
}

// A returned buffer: its caller frees it, with the allocated pointer.
// CHECK-LABEL: func.func private @returns_buffer
// CHECK-NOT: llvm.bareptr
// CHECK-SAME: {
func.func private @returns_buffer(%a: memref<4xf32>) -> memref<4xf32> {
  %t = memref.alloc() : memref<4xf32>
  return %t : memref<4xf32>
}

// Referenced other than by a call (an indirect call cannot see the
// attribute).
// CHECK-LABEL: func.func private @address_taken
// CHECK-NOT: llvm.bareptr
// CHECK-SAME: {
func.func private @address_taken(%a: memref<4xf32>) {
  return
}

// Public: callers outside the module pass descriptors.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: llvm.bareptr
// CHECK-SAME: {
// LLVM-LABEL: llvm.func @train_step
// LLVM: llvm.call @static_block(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) : (!llvm.ptr, !llvm.ptr, f32) -> ()
func.func @train_step(%a: memref<4x8xf32>,
    %b: memref<8xf32, strided<[1], offset: 8>>, %s: f32, %d: memref<?xf32>,
    %f: memref<4xf32>) {
  call @static_block(%a, %b, %s)
      : (memref<4x8xf32>, memref<8xf32, strided<[1], offset: 8>>, f32) -> ()
  call @frees_own_buffer(%f) : (memref<4xf32>) -> ()
  call @dynamic_block(%d) : (memref<?xf32>) -> ()
  call @frees_argument(%f) : (memref<4xf32>) -> ()
  %r = call @returns_buffer(%f) : (memref<4xf32>) -> memref<4xf32>
  memref.dealloc %r : memref<4xf32>
  %fn = func.constant @address_taken : (memref<4xf32>) -> ()
  func.call_indirect %fn(%f) : (memref<4xf32>) -> ()
  return
}
