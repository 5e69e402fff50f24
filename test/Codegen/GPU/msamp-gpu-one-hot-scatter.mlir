// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-one-hot-scatter{threads=8}))' | FileCheck %s
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-one-hot-scatter{threads=8}))' --mlir-print-debuginfo | FileCheck %s --check-prefix=COST
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-one-hot-scatter{threads=8}))' --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-one-hot-scatter{threads=0}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
//
// Executed (Inputs/one-hot-scatter-exec.mlir, its EXEC lines): the scatter
// in 2 chunks of 4 and 3 rows (threads=8), in 7 chunks of one row (the
// default), each through the GPU pipeline's parallel loops and tiling
// (blocks of 3 threads: a tail in every block), and the one-hot reduction
// itself, lowered for the host: the same bits, the same printed sums.
// RUN: msamp-opt %S/Inputs/one-hot-scatter-exec.mlir --pass-pipeline='builtin.module(func.func(msamp-gpu-one-hot-scatter{threads=8},convert-linalg-to-parallel-loops,msamp-gpu-tile-parallel-loops{block-size=3}))' | FileCheck %s --check-prefix=EXECIR
// RUN: msamp-opt %S/Inputs/one-hot-scatter-exec.mlir --pass-pipeline='builtin.module(func.func(msamp-gpu-one-hot-scatter{threads=8},convert-linalg-to-parallel-loops,msamp-gpu-tile-parallel-loops{block-size=3}))' | msamp-opt --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %S/Inputs/one-hot-scatter-exec.mlir --check-prefix=EXEC
// RUN: msamp-opt %S/Inputs/one-hot-scatter-exec.mlir --pass-pipeline='builtin.module(func.func(msamp-gpu-one-hot-scatter,convert-linalg-to-parallel-loops,msamp-gpu-tile-parallel-loops{block-size=3}))' | msamp-opt --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %S/Inputs/one-hot-scatter-exec.mlir --check-prefix=EXEC
// RUN: msamp-opt %S/Inputs/one-hot-scatter-exec.mlir --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %S/Inputs/one-hot-scatter-exec.mlir --check-prefix=EXEC

// The fill's and the scatter's loops, each collapsed and tiled (block,
// thread); the scatter's threads loop over the ids.
// EXECIR-LABEL: func.func @grad(
// EXECIR-NOT: linalg.
// EXECIR: scf.parallel
// EXECIR: scf.parallel
// EXECIR: scf.parallel
// EXECIR: scf.parallel
// EXECIR: scf.for
// EXECIR: memref.load %arg0
// EXECIR: scf.if
// EXECIR-NOT: linalg.
// EXECIR-LABEL: func.func @reference(

// REMARK: remark: [Passed] one-hot-scatter | Category:msamp:gpu-one-hot-scatter | Remark="one-hot reduction over 6 ids into a 5-row output runs as 2 chunks of 3 rows x 4 threads, each scanning the ids in order"
// REMARK: remark: [Passed] one-hot-scatter | Category:msamp:gpu-one-hot-scatter | Remark="one-hot reduction over 3 ids into a 10-row output runs as 5 chunks of 2 rows x 1 threads
// REMARK: remark: [Passed] one-hot-scatter | Category:msamp:gpu-one-hot-scatter | Remark="one-hot reduction over 6 ids into a 5-row output runs as 2 chunks of 3 rows x 4 threads
// REMARK: remark: [Missed] one-hot-scatter | Category:msamp:gpu-one-hot-scatter | Reason="the output is not an allocation that a fill of +0.0 wrote last
// REMARK: remark: [Missed] one-hot-scatter
// REMARK: remark: [Missed] one-hot-scatter
// REMARK: remark: [Missed] one-hot-scatter
// REMARK-NOT: remark

// BAD: error: msamp-gpu-one-hot-scatter: threads must be positive, got 0

// The generators' embedding gradient (2-D ids, the gradient [b, s, d]):
// threads (chunk, j), chunk c owning rows [3c, min(3c + 3, 5)); the ids in
// order; the add in the reduction's operand order; the cost on every op's
// location: 2 x 8 threads x 6 ids + 24 adds = 120 FLOPs, bytes 48 (ids) +
// 96 (g) + 2 x min(6, 5) rows x 16.
// CHECK-LABEL: func.func @embedding_grad(
// CHECK-SAME: %[[IDS:[^:]+]]: memref<2x3xi64>, %[[G:[^:]+]]: memref<2x3x4xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<5x4xf32>
// CHECK: linalg.fill {{.*}} outs(%[[OUT]]
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[C:.+]], %[[J:.+]]) = (%{{.+}}, %{{.+}}) to (%[[C2:.+]], %[[C4:.+]]) step
// CHECK: %[[LO:.+]] = arith.muli %[[C]], %[[C3:.+]] : index
// CHECK: %[[END:.+]] = arith.addi %[[LO]], %[[C3]] : index
// CHECK: %[[HI:.+]] = arith.minui %[[END]], %[[C5:.+]] : index
// CHECK: %[[LOI:.+]] = arith.index_cast %[[LO]] : index to i64
// CHECK: %[[HII:.+]] = arith.index_cast %[[HI]] : index to i64
// CHECK: scf.for %[[B:.+]] = %{{.+}} to %[[CB:.+]] step
// CHECK: scf.for %[[S:.+]] = %{{.+}} to %[[CS:.+]] step
// CHECK: %[[ID:.+]] = memref.load %[[IDS]][%[[B]], %[[S]]] : memref<2x3xi64>
// CHECK: %[[GE:.+]] = arith.cmpi sge, %[[ID]], %[[LOI]] : i64
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[ID]], %[[HII]] : i64
// CHECK: %[[MINE:.+]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: scf.if %[[MINE]] {
// CHECK: %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[X:.+]] = memref.load %[[G]][%[[B]], %[[S]], %[[J]]]
// CHECK: %[[A:.+]] = memref.load %[[OUT]][%[[ROW]], %[[J]]]
// CHECK: %[[SUM:.+]] = arith.addf %[[X]], %[[A]] : f32
// CHECK: memref.store %[[SUM]], %[[OUT]][%[[ROW]], %[[J]]]
// CHECK: scf.reduce
// COST-LABEL: func.func @embedding_grad(
// COST: arith.muli {{.*}} loc(#[[LOC:.+]])
// COST: #[[LOC]] = loc(fused<{msamp.gpu_kernel_cost = {bytes = 304 : i64, flops = 120 : i64, op = "one_hot_scatter"}}>
#ids = affine_map<(v, j, b, s) -> (b, s)>
#g = affine_map<(v, j, b, s) -> (b, s, j)>
#out = affine_map<(v, j, b, s) -> (v, j)>
func.func @embedding_grad(%ids: memref<2x3xi64>, %g: memref<2x3x4xf32>) -> memref<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<5x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<5x4xf32>)
  linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%ids, %g : memref<2x3xi64>, memref<2x3x4xf32>) outs(%out : memref<5x4xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  }
  return %out : memref<5x4xf32>
}

// -----

// A 1-D output (no other dims: one thread per chunk, each chunk two
// rows), the ids normalized in the body (ONNX GatherGrad: negative ids
// count from the end) and compared as index, the gradient input first and
// the add accumulator first: the normalization is cloned into the loop, the
// bounds stay index, the add keeps its operand order. Between the fill and
// the reduction, writes to other buffers and reads of the output (a load, a
// copy out of it) do not hide the fill. Cost: 5 threads x 3 ids x 2 + 3
// adds = 33 FLOPs; bytes 12 (ids) + 12 (g) + 2 x 3 rows x 4.
// COST-LABEL: func.func @gather_grad_1d(
// COST: arith.muli {{.*}} loc(#[[LOC:.+]])
// COST: #[[LOC]] = loc(fused<{msamp.gpu_kernel_cost = {bytes = 48 : i64, flops = 33 : i64, op = "one_hot_scatter"}}>
// CHECK-LABEL: func.func @gather_grad_1d(
// CHECK-SAME: %[[G:[^:]+]]: memref<3xf32>, %[[IDS:[^:]+]]: memref<3xi32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<10xf32>
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: linalg.fill
// CHECK: memref.load %[[OUT]]
// CHECK: linalg.copy ins(%[[OUT]]
// CHECK: scf.parallel (%[[C:.+]]) =
// CHECK: %[[LO:.+]] = arith.muli %[[C]]
// CHECK: %[[HI:.+]] = arith.minui
// CHECK-NOT: arith.index_cast
// CHECK: scf.for %[[N:.+]] =
// CHECK: %[[ID:.+]] = memref.load %[[IDS]][%[[N]]] : memref<3xi32>
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[ID]]
// CHECK: %[[WRAP:.+]] = arith.addi %[[ID]]
// CHECK: %[[SEL:.+]] = arith.select %[[NEG]], %[[WRAP]], %[[ID]] : i32
// CHECK: %[[ROW:.+]] = arith.index_cast %[[SEL]] : i32 to index
// CHECK: arith.cmpi sge, %[[ROW]], %[[LO]] : index
// CHECK: arith.cmpi slt, %[[ROW]], %[[HI]] : index
// CHECK: scf.if
// CHECK: %[[X:.+]] = memref.load %[[G]][%[[N]]]
// CHECK: %[[A:.+]] = memref.load %[[OUT]][%[[ROW]]]
// CHECK: arith.addf %[[A]], %[[X]] : f32
func.func @gather_grad_1d(%g: memref<3xf32>, %ids: memref<3xi32>, %other: memref<2xf32>) -> (memref<10xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %out = memref.alloc() : memref<10xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<10xf32>)
  memref.store %zero, %other[%c0] : memref<2xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<4xf32>)
  %read = memref.load %out[%c0] : memref<10xf32>
  %copy = memref.alloc() : memref<10xf32>
  linalg.copy ins(%out : memref<10xf32>) outs(%copy : memref<10xf32>)
  linalg.generic {indexing_maps = [affine_map<(v, n) -> (n)>, affine_map<(v, n) -> (n)>, affine_map<(v, n) -> (v)>], iterator_types = ["parallel", "reduction"]}
      ins(%g, %ids : memref<3xf32>, memref<3xi32>) outs(%out : memref<10xf32>) {
  ^bb0(%x: f32, %id: i32, %acc: f32):
    %c0_i32 = arith.constant 0 : i32
    %c10_i32 = arith.constant 10 : i32
    %neg = arith.cmpi slt, %id, %c0_i32 : i32
    %wrap = arith.addi %id, %c10_i32 : i32
    %norm = arith.select %neg, %wrap, %id : i32
    %row = arith.index_cast %norm : i32 to index
    %v = linalg.index 0 : index
    %hit = arith.cmpi eq, %row, %v : index
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  }
  memref.dealloc %tmp : memref<4xf32>
  memref.dealloc %copy : memref<10xf32>
  return %out, %read : memref<10xf32>, f32
}

// -----

// The compared dim is the output's last (out[j, v]): threads (chunk, j),
// the row index in the last place of the output's indices.
// CHECK-LABEL: func.func @row_dim_last(
// CHECK-SAME: %[[IDS:[^:]+]]: memref<6xi64>, %[[G:[^:]+]]: memref<6x4xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<4x5xf32>
// CHECK: scf.parallel (%[[C:.+]], %[[J:.+]]) =
// CHECK: scf.for %[[N:.+]] =
// CHECK: %[[ID:.+]] = memref.load %[[IDS]][%[[N]]]
// CHECK: scf.if
// CHECK: %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: memref.load %[[G]][%[[N]], %[[J]]]
// CHECK: memref.load %[[OUT]][%[[J]], %[[ROW]]]
// CHECK: memref.store {{.*}}, %[[OUT]][%[[J]], %[[ROW]]]
func.func @row_dim_last(%ids: memref<6xi64>, %g: memref<6x4xf32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<4x5xf32>)
  linalg.generic {indexing_maps = [affine_map<(j, v, n) -> (n)>, affine_map<(j, v, n) -> (n, j)>, affine_map<(j, v, n) -> (j, v)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : memref<6xi64>, memref<6x4xf32>) outs(%out : memref<4x5xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  }
  return %out : memref<4x5xf32>
}

// -----

// The output does not start at +0.0 (a fill of 1.0; +0.0 matters for the
// bits: see OneHotReduction.h): left alone, with a missed remark.
// CHECK-LABEL: func.func @nonzero_init(
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>
func.func @nonzero_init(%ids: memref<6xi64>, %g: memref<6x4xf32>) -> memref<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %out = memref.alloc() : memref<5x4xf32>
  linalg.fill ins(%one : f32) outs(%out : memref<5x4xf32>)
  linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : memref<6xi64>, memref<6x4xf32>) outs(%out : memref<5x4xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  }
  return %out : memref<5x4xf32>
}

// -----

// Something writes the output between the fill and the reduction, through
// a view made before the fill: the +0.0 start is not proven, the
// reduction stays.
// CHECK-LABEL: func.func @written_after_fill(
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>
func.func @written_after_fill(%ids: memref<6xi64>, %g: memref<6x4xf32>) -> memref<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %x0 = arith.constant -0.0 : f32
  %out = memref.alloc() : memref<5x4xf32>
  %row = memref.subview %out[1, 0] [1, 4] [1, 1] : memref<5x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  linalg.fill ins(%zero : f32) outs(%out : memref<5x4xf32>)
  memref.store %x0, %row[%c0] : memref<4xf32, strided<[1], offset: 4>>
  linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : memref<6xi64>, memref<6x4xf32>) outs(%out : memref<5x4xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  }
  return %out : memref<5x4xf32>
}

// -----

// The output is a function argument, which another argument may alias: a
// write through it could come between; the reduction stays.
// CHECK-LABEL: func.func @argument_output(
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>
func.func @argument_output(%ids: memref<6xi64>, %g: memref<6x4xf32>, %out: memref<5x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<5x4xf32>)
  linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : memref<6xi64>, memref<6x4xf32>) outs(%out : memref<5x4xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// The gradient is another part of the output's allocation: the scatter
// would read rows it has already written; the reduction stays.
// CHECK-LABEL: func.func @gradient_in_output_allocation(
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>
func.func @gradient_in_output_allocation(%ids: memref<6xi64>) -> memref<11x4xf32> {
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<11x4xf32>
  %out = memref.subview %buf[0, 0] [5, 4] [1, 1] : memref<11x4xf32> to memref<5x4xf32, strided<[4, 1]>>
  %g = memref.subview %buf[5, 0] [6, 4] [1, 1] : memref<11x4xf32> to memref<6x4xf32, strided<[4, 1], offset: 20>>
  linalg.fill ins(%zero : f32) outs(%out : memref<5x4xf32, strided<[4, 1]>>)
  linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : memref<6xi64>, memref<6x4xf32, strided<[4, 1], offset: 20>>) outs(%out : memref<5x4xf32, strided<[4, 1]>>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  }
  return %buf : memref<11x4xf32>
}

// -----

// On tensors (the CPU's msamp-one-hot-reduction-to-scatter's form): not
// this pass's, no remark.
// CHECK-LABEL: func.func @on_tensors(
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>
func.func @on_tensors(%ids: tensor<6xi64>, %g: tensor<6x4xf32>) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
  %r = linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : tensor<6xi64>, tensor<6x4xf32>) outs(%init : tensor<5x4xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  } -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}
