// RUN: msamp-opt %s --msamp-optnone-entry-points | FileCheck %s

// Public straight-line functions (the step and its wrappers) are compiled
// without optimization and never inlined.
// CHECK-LABEL: llvm.func @train_step
// CHECK-SAME: no_inline
// CHECK-SAME: optimize_none
llvm.func @train_step(%a: !llvm.ptr, %n: i64) {
  llvm.call @train_step_block_0(%a, %n) : (!llvm.ptr, i64) -> ()
  llvm.br ^bb1
^bb1:
  llvm.call @train_step_block_0(%a, %n) : (!llvm.ptr, i64) -> ()
  llvm.return
}

// Branches that join again are no loop.
// CHECK-LABEL: llvm.func @_mlir_ciface_train_step
// CHECK-SAME: no_inline
// CHECK-SAME: optimize_none
llvm.func @_mlir_ciface_train_step(%a: !llvm.ptr, %c: i1) {
  %n = llvm.mlir.constant(4 : i64) : i64
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  llvm.br ^bb3
^bb2:
  llvm.br ^bb3
^bb3:
  llvm.call @train_step(%a, %n) : (!llvm.ptr, i64) -> ()
  llvm.return
}

// A public function with a loop keeps -O3.
// CHECK-LABEL: llvm.func @msamp_train_step_check_inputs
// CHECK-NOT: optimize_none
// CHECK-SAME: {
llvm.func @msamp_train_step_check_inputs(%a: !llvm.ptr, %n: i64) -> i32 {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^loop(%zero : i64)
^loop(%i: i64):
  %next = llvm.add %i, %one : i64
  %done = llvm.icmp "eq" %next, %n : i64
  llvm.cond_br %done, ^exit, ^loop(%next : i64)
^exit:
  %r = llvm.mlir.constant(0 : i32) : i32
  llvm.return %r : i32
}

// Private functions (the outlined blocks and loop nests) keep -O3.
// CHECK-LABEL: llvm.func internal @train_step_block_0
// CHECK-NOT: optimize_none
// CHECK-SAME: {
llvm.func internal @train_step_block_0(%a: !llvm.ptr, %n: i64) attributes {no_inline} {
  llvm.return
}

// Declarations are left alone.
// CHECK-LABEL: llvm.func @msamp_rt_gemm
// CHECK-NOT: optimize_none
llvm.func @msamp_rt_gemm(!llvm.ptr)
