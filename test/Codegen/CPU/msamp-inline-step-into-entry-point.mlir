// RUN: msamp-opt %s --split-input-file --msamp-inline-step-into-entry-point | FileCheck %s

// The C interface, then the step, move into the packed entry point in place
// of their calls; their returns branch to what followed; both are erased.
// CHECK-NOT: llvm.func @train_step
// CHECK-NOT: llvm.func @_mlir_ciface_train_step
// CHECK-LABEL: llvm.func @msamp_train_step_packed(
// CHECK-SAME: %[[TABLE:[^:]*]]: !llvm.ptr)
// CHECK: %[[DESC:.*]] = llvm.load %[[TABLE]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.br ^[[CIFACE:bb[0-9]+]]
// CHECK: ^[[CIFACE]]:
// The descriptor fields the step does not read (allocated pointer, offset)
// are not extracted any more.
// CHECK: %[[STRUCT:.*]] = llvm.load %[[DESC]]
// CHECK-NOT: llvm.extractvalue
// CHECK: %[[ALIGNED:.*]] = llvm.extractvalue %[[STRUCT]][1]
// CHECK-NOT: llvm.extractvalue
// CHECK: llvm.br ^[[STEP:bb[0-9]+]]
// CHECK: ^[[STEP]]:
// CHECK: llvm.call @work(%[[ALIGNED]])
// CHECK: llvm.cond_br %{{.*}}, ^[[THEN:bb[0-9]+]], ^[[ELSE:bb[0-9]+]]
// CHECK: ^[[THEN]]:
// CHECK: llvm.br ^[[AFTERSTEP:bb[0-9]+]]
// CHECK: ^[[ELSE]]:
// CHECK: llvm.br ^[[AFTERSTEP]]
// CHECK: ^[[AFTERSTEP]]:
// CHECK: llvm.br ^[[AFTERCIFACE:bb[0-9]+]]
// CHECK: ^[[AFTERCIFACE]]:
// CHECK: llvm.call @done()
// CHECK-NEXT: llvm.return
// CHECK-NOT: llvm.call @train_step
llvm.func @work(!llvm.ptr) -> i1
llvm.func @done()
llvm.func @train_step(%alloc: !llvm.ptr, %aligned: !llvm.ptr, %offset: i64) {
  %c = llvm.call @work(%aligned) : (!llvm.ptr) -> i1
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  llvm.return
^bb2:
  llvm.return
}
llvm.func @_mlir_ciface_train_step(%desc: !llvm.ptr) {
  %s = llvm.load %desc : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %a = llvm.extractvalue %s[0] : !llvm.struct<(ptr, ptr, i64)>
  %b = llvm.extractvalue %s[1] : !llvm.struct<(ptr, ptr, i64)>
  %o = llvm.extractvalue %s[2] : !llvm.struct<(ptr, ptr, i64)>
  llvm.call @train_step(%a, %b, %o) : (!llvm.ptr, !llvm.ptr, i64) -> ()
  llvm.return
}
llvm.func @msamp_train_step_packed(%table: !llvm.ptr) {
  %d = llvm.load %table : !llvm.ptr -> !llvm.ptr
  llvm.call @_mlir_ciface_train_step(%d) : (!llvm.ptr) -> ()
  llvm.call @done() : () -> ()
  llvm.return
}

// -----

// A step that something else uses too stays a function of its own (the
// C interface, used only by the entry point, still moves).
// CHECK: llvm.func @train_step
// CHECK-NOT: llvm.func @_mlir_ciface_train_step
// CHECK-LABEL: llvm.func @msamp_train_step_packed
// CHECK: llvm.call @train_step
// CHECK-LABEL: llvm.func @other
// CHECK: llvm.call @train_step
llvm.func @train_step(%aligned: !llvm.ptr) {
  llvm.return
}
llvm.func @_mlir_ciface_train_step(%desc: !llvm.ptr) {
  llvm.call @train_step(%desc) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @msamp_train_step_packed(%table: !llvm.ptr) {
  llvm.call @_mlir_ciface_train_step(%table) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @other(%p: !llvm.ptr) {
  llvm.call @train_step(%p) : (!llvm.ptr) -> ()
  llvm.return
}
