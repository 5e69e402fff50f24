// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-check-in-place-states))' -verify-diagnostics

func.func private @update(memref<*xf32>)
func.func @bad_operand(%a0: memref<4xf32>) {
  %c0 = memref.cast %a0 : memref<4xf32> to memref<*xf32>
  // expected-error @below {{msamp.in_place_args names operand 3 and argument 0, which do not exist}}
  call @update(%c0) {msamp.in_place_args = array<i64: 3, 0>} : (memref<*xf32>) -> ()
  return
}
