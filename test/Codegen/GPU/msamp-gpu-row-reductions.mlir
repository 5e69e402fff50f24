// msamp-gpu-row-reductions: f32 add/max reductions over contiguous rows
// become a gpu.launch with a warp per row (short rows) or a block per row
// (rows of at least block-threshold elements), lanes striding the row with
// a register accumulator from the combiner's identity, an xor-shuffle
// butterfly, and lane 0 combining the total with the output's initial
// value. Everything else stays a linalg op (the loop path).
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-row-reductions{block-threshold=4096 warps-per-block=4 block-size=128}))' | FileCheck %s
// The kernels lower to NVVM: shfl.sync.bfly (and, for a block per row,
// shared memory and bar.sync) in the PTX.
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-row-reductions{block-threshold=4096 warps-per-block=4 block-size=128}),gpu-kernel-outlining,nvvm-attach-target{chip=sm_90 features=+ptx80},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX
// RUN: not msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-row-reductions{block-size=96}))' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: block-size must be a power of two in 64..1024, got 96

// A sum over rows of 300 (LayerNorm's mean): 7 rows, 4 warps per block, 2
// blocks; the second block's last warp has no row.
// CHECK-LABEL: func.func @row_sum(
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c2{{.*}}, %{{.+}} = %c1{{.*}}, %{{.+}} = %c1{{.*}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128{{.*}}, %{{.+}} = %c1{{.*}}, %{{.+}} = %c1{{.*}})
// CHECK: %[[LANE:.+]] = arith.remui %[[T]], %c32
// CHECK: %[[WARP:.+]] = arith.divui %[[T]], %c32
// CHECK: %[[ROW:.+]] = arith.addi %{{.+}}, %[[WARP]]
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %c7
// CHECK: scf.if %[[IN]] {
// The identity of addf is -0.0.
// CHECK: %[[ID:.+]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[P:.+]] = scf.for %[[E:.+]] = %[[LANE]] to %c300{{.*}} step %c32{{.*}} iter_args(%[[A:.+]] = %[[ID]]) -> (f32) {
// CHECK: %[[X:.+]] = memref.load %arg0[%[[ROW]], %[[E]]]
// CHECK: %[[S:.+]] = arith.subf %[[X]], %cst
// CHECK: %[[N:.+]] = arith.addf %[[S]], %[[A]] : f32
// CHECK: scf.yield %[[N]]
// CHECK: %[[S16:.+]], %{{.+}} = gpu.shuffle  xor %[[P]], %c16{{.*}}, %c32{{.*}} : f32
// CHECK: %[[P16:.+]] = arith.addf %[[S16]], %[[P]] : f32
// CHECK: gpu.shuffle  xor %[[P16]], %c8
// CHECK: gpu.shuffle  xor %{{.+}}, %c4
// CHECK: gpu.shuffle  xor %{{.+}}, %c2
// CHECK: %[[S1:.+]], %{{.+}} = gpu.shuffle  xor %{{.+}}, %c1{{.*}}, %c32
// CHECK: %[[TOTAL:.+]] = arith.addf %[[S1]], %{{.+}} : f32
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[INIT:.+]] = memref.load %arg1[%[[ROW]]]
// CHECK: %[[R:.+]] = arith.addf %[[TOTAL]], %[[INIT]] : f32
// CHECK: memref.store %[[R]], %arg1[%[[ROW]]]
// CHECK: gpu.terminator
// PTX-LABEL: gpu.binary @row_sum_kernel
// PTX: shfl.sync.bfly.b32
// PTX-NOT: bar.sync
#id2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (i)>
func.func @row_sum(%x: memref<7x300xf32>, %acc: memref<7xf32>) {
  %c = arith.constant 1.5 : f32
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<7x300xf32>) outs(%acc : memref<7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.subf %a, %c : f32
    %r = arith.addf %s, %o : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Softmax's causal max: select(j <= i, maximumf(x, acc), acc) with
// linalg.index, two parallel dimensions (delinearized from the row), a
// row of 16: the mask selects the identity (-inf) instead.
// CHECK-LABEL: func.func @causal_max(
// CHECK: gpu.launch blocks({{.+}}) in ({{.+}} = %c32{{.*}}, {{.+}}) threads
// CHECK: %[[LANE:.+]] = arith.remui
// CHECK: %[[ROW:.+]] = arith.addi
// CHECK-NOT: scf.if
// CHECK: %[[I:.+]] = arith.remui %[[ROW]], %c16
// CHECK: %[[B:.+]] = arith.divui %[[ROW]], %c16
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %[[J:.+]] = %[[LANE]] to %c16{{.*}} step %c32{{.*}} iter_args(%[[A:.+]] = %[[NEGINF]]) -> (f32) {
// CHECK: %[[X:.+]] = memref.load %arg0[%[[B]], %[[I]], %[[J]]]
// CHECK: %[[C:.+]] = arith.cmpi ule, %[[J]], %[[I]]
// CHECK: %[[M:.+]] = arith.select %[[C]], %[[X]], %[[NEGINF]] : f32
// CHECK: arith.maximumf %[[M]], %[[A]] : f32
// CHECK: gpu.shuffle  xor
// CHECK: arith.maximumf
// CHECK: memref.load %arg1[%[[B]], %[[I]]]
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row3 = affine_map<(b, i, j) -> (b, i)>
func.func @causal_max(%x: memref<8x16x16xf32>, %m: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<8x16x16xf32>) outs(%m : memref<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 2 : index
    %i = linalg.index 1 : index
    %c = arith.cmpi ule, %j, %i : index
    %mx = arith.maximumf %a, %o : f32
    %r = arith.select %c, %mx, %o : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Cross-entropy over a vocabulary of 5000 (>= block-threshold): a block of
// 128 threads per row, each warp's value through workgroup memory, a
// barrier, the first warp combines the 4 warps. Two outputs of the same
// row (the max, with maxnumf's identity NaN, and a one-hot pick with a
// per-row label) are reduced together: 2 x 4 slots.
// CHECK-LABEL: func.func @vocab(
// CHECK: gpu.launch blocks(%[[ROW:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c6{{.*}}, {{.+}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128{{.*}}, {{.+}}) workgroup(%[[SH:.+]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[LANE:.+]] = arith.remui %[[T]], %c32
// CHECK: %[[WARP:.+]] = arith.divui %[[T]], %c32
// CHECK: %[[NAN:.+]] = arith.constant 0x7FC00000 : f32
// CHECK: %{{.+}}:2 = scf.for %[[E:.+]] = %[[T]] to %c5000{{.*}} step %c128{{.*}} iter_args(%{{.+}} = %[[NAN]], %{{.+}} = %{{.+}}) -> (f32, f32) {
// CHECK: memref.load %arg0[%[[ROW]], %[[E]]]
// CHECK: memref.load %arg1[%[[ROW]]]
// CHECK: arith.maxnumf
// CHECK: arith.addf
// CHECK: gpu.shuffle  xor %{{.+}}, %c16
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[SH]][%[[WARP]]]
// CHECK: %[[SLOT:.+]] = arith.addi %[[WARP]], %c4
// CHECK: memref.store %{{.+}}, %[[SH]][%[[SLOT]]]
// CHECK: gpu.barrier
// CHECK: %[[W0:.+]] = arith.cmpi eq, %[[WARP]], %c0
// CHECK: scf.if %[[W0]] {
// CHECK: %[[SRC:.+]] = arith.remui %[[LANE]], %c4
// CHECK: memref.load %[[SH]][%[[SRC]]]
// CHECK: gpu.shuffle  xor %{{.+}}, %c2{{.*}}, %c32
// CHECK-NOT: gpu.shuffle  xor %{{.+}}, %c4{{.*}}, %c32
// CHECK: gpu.shuffle  xor %{{.+}}, %c1{{.*}}, %c32
// CHECK: memref.store %{{.+}}, %arg2[%[[ROW]]]
// CHECK: memref.store %{{.+}}, %arg3[%[[ROW]]]
// PTX-LABEL: gpu.binary @vocab_kernel
// PTX: .shared .align {{[0-9]+}} .b8
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
#id2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (i)>
func.func @vocab(%x: memref<6x5000xf32>, %label: memref<6xi64>,
                 %mx: memref<6xf32>, %pick: memref<6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id2, #row2, #row2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %label : memref<6x5000xf32>, memref<6xi64>) outs(%mx, %pick : memref<6xf32>, memref<6xf32>) {
  ^bb0(%a: f32, %l: i64, %o: f32, %p: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %l : i64
    %v = arith.select %hit, %a, %zero : f32
    %m = arith.maxnumf %o, %a : f32
    %s = arith.addf %v, %p : f32
    linalg.yield %m, %s : f32, f32
  }
  return
}

// -----

// A named linalg.reduce over two contiguous trailing dimensions (a row of
// 4 x 8 = 32, delinearized) is generalized and rewritten.
// CHECK-LABEL: func.func @named_two_dims(
// CHECK: gpu.launch
// CHECK: scf.for %[[E:.+]] = %{{.+}} to %c32{{.*}} step %c32
// CHECK: %[[K:.+]] = arith.remui %[[E]], %c8
// CHECK: %[[J:.+]] = arith.divui %[[E]], %c8
// CHECK: memref.load %arg0[%{{.+}}, %[[J]], %[[K]]]
func.func @named_two_dims(%x: memref<3x4x8xf32>, %acc: memref<3xf32>) {
  linalg.reduce ins(%x : memref<3x4x8xf32>) outs(%acc : memref<3xf32>) dimensions = [1, 2]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Left on the loop path (still linalg): a column reduction (the reduced
// dimension is the input's outer one), an integer sum, a product (not add
// or max), an f64 sum, a row read with a non-unit inner stride, and a
// reduction whose output is overwritten rather than combined.
// CHECK-LABEL: func.func @negatives(
// CHECK-NOT: gpu.launch
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: gpu.launch
#id2 = affine_map<(i, j) -> (i, j)>
#tr2 = affine_map<(i, j) -> (j, i)>
#row2 = affine_map<(i, j) -> (i)>
func.func @negatives(%x: memref<64x32xf32>, %col: memref<32xf32>,
                     %xi: memref<32x64xi32>, %rowi: memref<32xi32>,
                     %y: memref<32x64xf32>, %row: memref<32xf32>,
                     %xd: memref<32x64xf64>, %rowd: memref<32xf64>,
                     %strided: memref<32x64xf32, strided<[128, 2]>>) {
  linalg.generic {indexing_maps = [#tr2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x32xf32>) outs(%col : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%xi : memref<32x64xi32>) outs(%rowi : memref<32xi32>) {
  ^bb0(%a: i32, %o: i32):
    %r = arith.addi %a, %o : i32
    linalg.yield %r : i32
  }
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<32x64xf32>) outs(%row : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%xd : memref<32x64xf64>) outs(%rowd : memref<32xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = arith.addf %a, %o : f64
    linalg.yield %r : f64
  }
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%strided : memref<32x64xf32, strided<[128, 2]>>) outs(%row : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<32x64xf32>) outs(%row : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
