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
