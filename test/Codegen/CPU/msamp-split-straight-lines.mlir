// RUN: msamp-opt %s --msamp-split-straight-lines=max-ops=2 | FileCheck %s
// RUN: not msamp-opt %s --msamp-split-straight-lines=max-ops=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: msamp-split-straight-lines: max-ops must be at least 1

// An optnone function is cut into blocks of at most two operations plus a
// branch, in order; the constant-size allocas move to the entry block with
// their own size constants (a dynamic one stays where it was).
// CHECK-LABEL: llvm.func @entry(%{{.*}}: i64)
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[A:.*]] = llvm.alloca %[[ONE]] x f32
// CHECK-NEXT: %[[B:.*]] = llvm.alloca %[[ONE]] x i64
// CHECK-NEXT: llvm.call @f(%[[A]])
// CHECK-NEXT: llvm.call @f(%[[A]])
// CHECK-NEXT: llvm.br ^[[B1:bb[0-9]+]]
// CHECK-NEXT: ^[[B1]]:
// CHECK-NEXT: llvm.call @f(%[[A]])
// CHECK-NEXT: llvm.call @f(%[[B]])
// CHECK-NEXT: llvm.br ^[[B2:bb[0-9]+]]
// CHECK-NEXT: ^[[B2]]:
// CHECK-NEXT: %[[D:.*]] = llvm.alloca %{{.*}} x i8
// CHECK-NEXT: llvm.call @g(%[[D]], %[[B]])
// CHECK-NEXT: llvm.return
llvm.func @f(!llvm.ptr)
llvm.func @g(!llvm.ptr, !llvm.ptr)
llvm.func @entry(%n: i64) attributes {optimize_none, no_inline} {
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %a = llvm.alloca %c1 x f32 : (i64) -> !llvm.ptr
  llvm.call @f(%a) : (!llvm.ptr) -> ()
  llvm.call @f(%a) : (!llvm.ptr) -> ()
  llvm.call @f(%a) : (!llvm.ptr) -> ()
  %c2 = llvm.mlir.constant(1 : i64) : i64
  %b = llvm.alloca %c2 x i64 : (i64) -> !llvm.ptr
  llvm.call @f(%b) : (!llvm.ptr) -> ()
  %d = llvm.alloca %n x i8 : (i64) -> !llvm.ptr
  llvm.call @g(%d, %b) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

// A function that is optimized keeps its blocks (LLVM would merge them).
// CHECK-LABEL: llvm.func @optimized
// CHECK-NOT: llvm.br
// CHECK: llvm.return
llvm.func @optimized(%p: !llvm.ptr) {
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.call @f(%p) : (!llvm.ptr) -> ()
  llvm.return
}
