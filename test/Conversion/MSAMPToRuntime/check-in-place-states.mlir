// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-check-in-place-states))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-check-in-place-states))' --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// After bufferization: operand 1 of the call is state argument #0 itself
// (nothing to do), operand 2 a copy of argument #1 that bufferization made
// because @read still reads the old value after the call: it is copied into
// the argument at the end, after that read. The attribute is dropped.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A0:[^:]+]]: memref<4xf32>, %[[A1:[^:]+]]: memref<4xf32>
// CHECK: %[[COPY:.+]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A1]], %[[COPY]]
// CHECK: call @update(%{{.+}}, %{{.+}}, %{{.+}}) : (
// CHECK-NOT: msamp.in_place_args
// CHECK: call @read(%[[A1]])
// CHECK-NEXT: memref.copy %[[COPY]], %[[A1]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: return
// REMARK: remark: [Analysis] state-copied-back | Category:msamp:check-in-place-states | Remark="state argument #1 is written by a copy and copied back at the end of the step: it is still read after the call that updates it"
// REMARK-NOT: state argument #0
func.func private @update(memref<*xf32>, memref<*xf32>, memref<*xf32>)
func.func private @read(memref<4xf32>)
func.func @step(%a0: memref<4xf32>, %a1: memref<4xf32>, %g: memref<4xf32>) {
  %copy = memref.alloc() : memref<4xf32>
  memref.copy %a1, %copy : memref<4xf32> to memref<4xf32>
  %cg = memref.cast %g : memref<4xf32> to memref<*xf32>
  %c0 = memref.cast %a0 : memref<4xf32> to memref<*xf32>
  %c1 = memref.cast %copy : memref<4xf32> to memref<*xf32>
  call @update(%cg, %c0, %c1) {msamp.in_place_args = array<i64: 1, 0, 2, 1>} : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  call @read(%a1) : (memref<4xf32>) -> ()
  return
}

// A multi-tensor call's table entry: the op that takes the buffer's address
// carries the attribute (AdamGroupToRuntime.cpp), and a copy it names is
// copied back the same way.
// CHECK-LABEL: func.func @table(
// CHECK-SAME: %[[T0:[^:]+]]: memref<4xf32>
// CHECK: %[[TCOPY:.+]] = memref.alloc() : memref<4xf32>
// CHECK: memref.extract_aligned_pointer_as_index %{{.+}} : memref<*xf32> -> index{{$}}
// CHECK: call @update_table(
// CHECK: call @read(%[[T0]])
// CHECK-NEXT: memref.copy %[[TCOPY]], %[[T0]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT: return
// REMARK: remark: [Analysis] state-copied-back | Category:msamp:check-in-place-states | Remark="state argument #0 is written by a copy
func.func private @update_table(memref<1xindex>)
func.func @table(%a0: memref<4xf32>) {
  %copy = memref.alloc() : memref<4xf32>
  memref.copy %a0, %copy : memref<4xf32> to memref<4xf32>
  %c = memref.cast %copy : memref<4xf32> to memref<*xf32>
  %p = memref.extract_aligned_pointer_as_index %c : memref<*xf32> -> index {msamp.in_place_args = array<i64: 0, 0>}
  %t = memref.alloca() : memref<1xindex>
  %i = arith.constant 0 : index
  memref.store %p, %t[%i] : memref<1xindex>
  call @update_table(%t) : (memref<1xindex>) -> ()
  call @read(%a0) : (memref<4xf32>) -> ()
  return
}
