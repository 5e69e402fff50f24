// msamp-gpu-merge-sibling-kernels: independent all-parallel generics over
// the same loops become one generic with the outputs of both: the later
// one moves up past ops that do not touch its buffers (allocations, views
// it uses and the fills of its outputs move along), or else the earlier
// one moves down; nothing moves past an op that writes what it reads or
// writes or reads what it writes, nor when one reads what the other
// writes, nor across other loops, nor between a row reduction and another
// reduction; two function arguments may alias.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-merge-sibling-kernels))' | FileCheck %s
// The merged functions compute the same bits as the separate kernels (run
// on the CPU with and without the pass).
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-merge-sibling-kernels))' | msamp-opt --convert-linalg-to-loops --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-math-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | sed -e "s/base@ = [0-9a-fx]*//" > %t.pass
// RUN: msamp-opt %s --convert-linalg-to-loops --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-math-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | sed -e "s/base@ = [0-9a-fx]*//" > %t.ref
// RUN: diff %t.ref %t.pass
// RUN: FileCheck %s --check-prefix=EXEC < %t.pass

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0, d1) -> ()>
#id1 = affine_map<(d0) -> (d0)>
#scalar1 = affine_map<(d0) -> ()>

// (A body, for the CPU run: the pass knows the entry point by its name.)
func.func @msamp_rt_amax(%in: memref<*xi8>, %out: memref<*xi8>, %n: i32) {
  return
}

// CHECK-LABEL: func.func @clip(
// Gradient clipping: three gradients times one coefficient, with calls in
// between that read other buffers. One kernel at the first one's place,
// the coefficient read once, the later outputs' allocations moved up.
// CHECK: %[[O1:.+]] = memref.alloc() : memref<4x6xf32>
// CHECK: %[[O2:.+]] = memref.alloc() : memref<4x6xf32>
// CHECK: %[[O3:.+]] = memref.alloc() : memref<4x6xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg3, %arg1, %arg2 : memref<4x6xf32>, memref<f32>, memref<4x6xf32>, memref<4x6xf32>)
// CHECK-SAME: outs(%[[O1]], %[[O2]], %[[O3]] :
// CHECK-COUNT-3: arith.mulf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: call @msamp_rt_amax
// CHECK-NOT: linalg.generic
// CHECK: call @msamp_rt_amax
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @clip(%g1: memref<4x6xf32>, %g2: memref<4x6xf32>, %g3: memref<4x6xf32>,
                %c: memref<f32>, %x: memref<8xf32>) -> (memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) {
  %amax = memref.alloc() : memref<f32>
  %o1 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g1, %c : memref<4x6xf32>, memref<f32>) outs(%o1 : memref<4x6xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  }
  %xu = memref.cast %x : memref<8xf32> to memref<*xf32>
  %xb = builtin.unrealized_conversion_cast %xu : memref<*xf32> to memref<*xi8>
  %au = memref.cast %amax : memref<f32> to memref<*xf32>
  %ab = builtin.unrealized_conversion_cast %au : memref<*xf32> to memref<*xi8>
  %n = arith.constant 8 : i32
  call @msamp_rt_amax(%xb, %ab, %n) : (memref<*xi8>, memref<*xi8>, i32) -> ()
  %o2 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g2, %c : memref<4x6xf32>, memref<f32>) outs(%o2 : memref<4x6xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  }
  call @msamp_rt_amax(%xb, %ab, %n) : (memref<*xi8>, memref<*xi8>, i32) -> ()
  %o3 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g3, %c : memref<4x6xf32>, memref<f32>) outs(%o3 : memref<4x6xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  }
  memref.dealloc %amax : memref<f32>
  return %o1, %o2, %o3 : memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>
}

// CHECK-LABEL: func.func @down(
// The second bias add reads what the amax call in between writes (its
// output buffer): it cannot move up, the first one moves down to it.
// CHECK: call @msamp_rt_amax
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : memref<4x6xf32>, memref<4x6xf32>)
// CHECK-COUNT-2: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @down(%x: memref<4x6xf32>, %b: memref<6xf32>, %src: memref<24xf32>) -> (memref<4x6xf32>, memref<4x6xf32>) {
  %y = memref.alloc() : memref<4x6xf32>
  %o1 = memref.alloc() : memref<4x6xf32>
  %o2 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x6xf32>, memref<6xf32>) outs(%o1 : memref<4x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  %su = memref.cast %src : memref<24xf32> to memref<*xf32>
  %yu = memref.cast %y : memref<4x6xf32> to memref<*xf32>
  %sb = builtin.unrealized_conversion_cast %su : memref<*xf32> to memref<*xi8>
  %yb = builtin.unrealized_conversion_cast %yu : memref<*xf32> to memref<*xi8>
  %n = arith.constant 24 : i32
  call @msamp_rt_amax(%sb, %yb, %n) : (memref<*xi8>, memref<*xi8>, i32) -> ()
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : memref<4x6xf32>, memref<6xf32>) outs(%o2 : memref<4x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  memref.dealloc %y : memref<4x6xf32>
  return %o1, %o2 : memref<4x6xf32>, memref<4x6xf32>
}

// A generic may read a scalar (the AMP levels' loss scale): in the merged
// body it is an argument of its own type (msamp-compile --opt-level
// amp-fp16 --target cuda crashed here).
// CHECK-LABEL: func.func @scalar_input(
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1, %arg2 : memref<4x6xf32>, f32, memref<4x6xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %[[S:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: arith.mulf %{{.+}}, %[[S]] : f32
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @scalar_input(%x: memref<4x6xf32>, %scale: f32, %y: memref<4x6xf32>) -> (memref<4x6xf32>, memref<4x6xf32>) {
  %o1 = memref.alloc() : memref<4x6xf32>
  %o2 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %scale : memref<4x6xf32>, f32) outs(%o1 : memref<4x6xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<4x6xf32>) outs(%o2 : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  }
  return %o1, %o2 : memref<4x6xf32>, memref<4x6xf32>
}

// Left alone: the first kernel's output is read by the call that writes
// the second one's input (neither can move).
// CHECK-LABEL: func.func @kept_call(
// CHECK-COUNT-2: linalg.generic
func.func @kept_call(%x: memref<4x6xf32>) -> (memref<4x6xf32>, memref<4x6xf32>) {
  %y = memref.alloc() : memref<4x6xf32>
  %o1 = memref.alloc() : memref<4x6xf32>
  %o2 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%o1 : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  %ou = memref.cast %o1 : memref<4x6xf32> to memref<*xf32>
  %yu = memref.cast %y : memref<4x6xf32> to memref<*xf32>
  %ob = builtin.unrealized_conversion_cast %ou : memref<*xf32> to memref<*xi8>
  %yb = builtin.unrealized_conversion_cast %yu : memref<*xf32> to memref<*xi8>
  %n = arith.constant 24 : i32
  call @msamp_rt_amax(%ob, %yb, %n) : (memref<*xi8>, memref<*xi8>, i32) -> ()
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<4x6xf32>) outs(%o2 : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  memref.dealloc %y : memref<4x6xf32>
  return %o1, %o2 : memref<4x6xf32>, memref<4x6xf32>
}

// The second kernel reads (through a view) what the first one writes.
// CHECK-LABEL: func.func @kept_dependent(
// CHECK-COUNT-2: linalg.generic
func.func @kept_dependent(%x: memref<4x6xf32>) -> (memref<4x6xf32>, memref<4x6xf32>) {
  %o1 = memref.alloc() : memref<24xf32>
  %o2 = memref.alloc() : memref<4x6xf32>
  %v = memref.expand_shape %o1 [[0, 1]] output_shape [4, 6] : memref<24xf32> into memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%v : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  %w = memref.expand_shape %o1 [[0, 1]] output_shape [4, 6] : memref<24xf32> into memref<4x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (3 - d0, d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<4x6xf32>) outs(%o2 : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  return %v, %o2 : memref<4x6xf32>, memref<4x6xf32>
}

// Other loops (a transposed copy), and other iterators (a row reduction):
// not merged.
// CHECK-LABEL: func.func @kept_loops(
// CHECK-COUNT-3: linalg.generic
func.func @kept_loops(%x: memref<4x6xf32>) -> (memref<4x6xf32>, memref<6x4xf32>, memref<4xf32>) {
  %o1 = memref.alloc() : memref<4x6xf32>
  %o2 = memref.alloc() : memref<6x4xf32>
  %o3 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%o1 : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%o2 : memref<6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x6xf32>) outs(%o3 : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return %o1, %o2, %o3 : memref<4x6xf32>, memref<6x4xf32>, memref<4xf32>
}

// Column sums (the form msamp-split-column-reductions leaves: the
// reduction loop is not the operands' innermost dimension) of two
// tensors, each after the fill of its start: one kernel, the second fill
// moved up with it.
// CHECK-LABEL: func.func @sums(
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[S1:.+]] : memref<6xf32>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[S2:.+]] : memref<6xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%[[S1]], %[[S2]] : memref<6xf32>, memref<6xf32>)
// CHECK: linalg.yield
// CHECK-NOT: linalg
// CHECK: return
func.func @sums(%x: memref<4x6xf32>, %y: memref<4x6xf32>) -> (memref<6xf32>, memref<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %s1 = memref.alloc() : memref<6xf32>
  linalg.fill ins(%zero : f32) outs(%s1 : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x6xf32>) outs(%s1 : memref<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %s2 = memref.alloc() : memref<6xf32>
  linalg.fill ins(%zero : f32) outs(%s2 : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<4x6xf32>) outs(%s2 : memref<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %a : f32
    %s = arith.addf %q, %o : f32
    linalg.yield %s : f32
  }
  return %s1, %s2 : memref<6xf32>, memref<6xf32>
}

// A row reduction (a warp per row) and a column-form reduction over the
// same loops: not merged.
// CHECK-LABEL: func.func @row_and_column(
// CHECK-COUNT-2: linalg.generic
func.func @row_and_column(%x: memref<6x6xf32>) -> (memref<6xf32>, memref<6xf32>) {
  %s1 = memref.alloc() : memref<6xf32>
  %s2 = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x6xf32>) outs(%s1 : memref<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x6xf32>) outs(%s2 : memref<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return %s1, %s2 : memref<6xf32>, memref<6xf32>
}

// Function arguments may alias: the second kernel writes %arg1 while the
// first reads %arg0.
// CHECK-LABEL: func.func @kept_arguments(
// CHECK-COUNT-2: linalg.generic
func.func @kept_arguments(%x: memref<4x6xf32>, %w: memref<4x6xf32>) -> memref<4x6xf32> {
  %o1 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%o1 : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%o1 : memref<4x6xf32>) outs(%w : memref<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return %o1 : memref<4x6xf32>
}

// Executed: three kernels (one reading its output's old value, one an
// exp of a broadcast row); the second reads a buffer that a copy between
// the first two writes, so the first moves down to it, and the third
// joins them.
// CHECK-LABEL: func.func @run(
// CHECK: memref.copy %arg2
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}}, %{{.+}} : memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @run(%x: memref<4x6xf32>, %r: memref<4xf32>, %y: memref<4x6xf32>,
               %o1: memref<4x6xf32>, %o2: memref<4x6xf32>, %o3: memref<4x6xf32>) {
  // (Arguments may alias: the kernels write buffers of the step's own.)
  %acc = memref.alloc() : memref<4x6xf32>
  memref.copy %o2, %acc : memref<4x6xf32> to memref<4x6xf32>
  %tmp = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<4x6xf32>, memref<4xf32>) outs(%tmp : memref<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  %tmp2 = memref.alloc() : memref<4x6xf32>
  memref.copy %y, %tmp2 : memref<4x6xf32> to memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %tmp2 : memref<4x6xf32>, memref<4x6xf32>) outs(%acc : memref<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  }
  %tmp3 = memref.alloc() : memref<4x6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : memref<4x6xf32>, memref<4x6xf32>) outs(%tmp3 : memref<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.divf %a, %b : f32
    linalg.yield %m : f32
  }
  memref.copy %tmp, %o1 : memref<4x6xf32> to memref<4x6xf32>
  memref.copy %acc, %o2 : memref<4x6xf32> to memref<4x6xf32>
  memref.copy %tmp3, %o3 : memref<4x6xf32> to memref<4x6xf32>
  memref.dealloc %tmp : memref<4x6xf32>
  memref.dealloc %tmp2 : memref<4x6xf32>
  memref.dealloc %tmp3 : memref<4x6xf32>
  memref.dealloc %acc : memref<4x6xf32>
  return
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @fill(%m: memref<4x6xf32>, %k: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %n = arith.muli %i, %c6 : index
      %l = arith.addi %n, %j : index
      %li = arith.index_cast %l : index to i32
      %f = arith.sitofp %li : i32 to f32
      %v = arith.mulf %f, %k : f32
      %w = arith.addf %v, %k : f32
      memref.store %w, %m[%i, %j] : memref<4x6xf32>
    }
  }
  return
}

func.func @main() {
  %x = memref.alloc() : memref<4x6xf32>
  %y = memref.alloc() : memref<4x6xf32>
  %o1 = memref.alloc() : memref<4x6xf32>
  %o2 = memref.alloc() : memref<4x6xf32>
  %o3 = memref.alloc() : memref<4x6xf32>
  %r = memref.alloc() : memref<4xf32>
  %k1 = arith.constant 0.1 : f32
  %k2 = arith.constant 0.37 : f32
  %k3 = arith.constant 1.3 : f32
  call @fill(%x, %k1) : (memref<4x6xf32>, f32) -> ()
  call @fill(%y, %k2) : (memref<4x6xf32>, f32) -> ()
  call @fill(%o2, %k3) : (memref<4x6xf32>, f32) -> ()
  call @fill(%o3, %k2) : (memref<4x6xf32>, f32) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %v = arith.mulf %f, %k3 : f32
    memref.store %v, %r[%i] : memref<4xf32>
  }
  call @run(%x, %r, %y, %o1, %o2, %o3) : (memref<4x6xf32>, memref<4xf32>, memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> ()
  %u1 = memref.cast %o1 : memref<4x6xf32> to memref<*xf32>
  %u2 = memref.cast %o2 : memref<4x6xf32> to memref<*xf32>
  %u3 = memref.cast %o3 : memref<4x6xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  %s1, %s2 = call @sums(%x, %y) : (memref<4x6xf32>, memref<4x6xf32>) -> (memref<6xf32>, memref<6xf32>)
  %v1 = memref.cast %s1 : memref<6xf32> to memref<*xf32>
  %v2 = memref.cast %s2 : memref<6xf32> to memref<*xf32>
  call @printMemrefF32(%v1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%v2) : (memref<*xf32>) -> ()
  return
}
// EXEC-COUNT-3: Unranked Memref rank = 2 offset = 0 sizes = [4, 6] strides = [6, 1] data =
// EXEC-COUNT-2: Unranked Memref rank = 1 offset = 0 sizes = [6] strides = [1] data =
