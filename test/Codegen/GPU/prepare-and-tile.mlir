// The buffer-level passes of --msamp-lower-to-gpu.
// RUN: msamp-opt %s -split-input-file --msamp-gpu-stage-globals | FileCheck %s --check-prefix=STAGE
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-copies-to-linalg))' | FileCheck %s --check-prefix=COPY
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-parallel-loops,msamp-gpu-tile-parallel-loops{block-size=128}))' | FileCheck %s --check-prefix=TILE
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-parallel-dims-outer,convert-linalg-to-parallel-loops))' | FileCheck %s --check-prefix=OUTER

// A global read by a kernel must be in a step buffer: alloc + copy, every
// user reads the copy.
// STAGE-LABEL: func.func @globals(
// STAGE: %[[A:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// STAGE: %[[G:.+]] = memref.get_global @table : memref<4xf32>
// STAGE: memref.copy %[[G]], %[[A]]
// STAGE: linalg.copy ins(%[[A]] : memref<4xf32>)
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @globals(%out: memref<4xf32>) {
  %g = memref.get_global @table : memref<4xf32>
  linalg.copy ins(%g : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// A global read in a function the step calls (a layer outlined before
// bufferization) is the step's one staged copy: the function takes it as a
// new last argument, every call passes the copy made at the step's entry,
// and a second read of the same global in the function is the same
// argument.
// STAGE-LABEL: func.func private @layer(
// STAGE-SAME: %{{.+}}: memref<4xf32>, %[[T:.+]]: memref<4xf32>)
// STAGE-NOT: memref.get_global
// STAGE: linalg.add ins(%[[T]], %[[T]] : memref<4xf32>, memref<4xf32>)
// STAGE-LABEL: func.func @step(
// STAGE-NEXT: %[[A:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// STAGE-NEXT: %[[G:.+]] = memref.get_global @table2 : memref<4xf32>
// STAGE-NEXT: memref.copy %[[G]], %[[A]]
// STAGE-NEXT: call @layer(%{{.+}}, %[[A]])
// STAGE-NEXT: call @layer(%{{.+}}, %[[A]])
memref.global "private" constant @table2 : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func private @layer(%out: memref<4xf32>) {
  %g = memref.get_global @table2 : memref<4xf32>
  %h = memref.get_global @table2 : memref<4xf32>
  linalg.add ins(%g, %h : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>)
  return
}
func.func @step(%a: memref<4xf32>, %b: memref<4xf32>) {
  call @layer(%a) : (memref<4xf32>) -> ()
  call @layer(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// A global that only the host's index check reads (the location text of
// msamp_rt_check_computed_index) is not staged: the host reads it in place.
// STAGE-LABEL: func.func @host_only_global(
// STAGE-NOT: memref.alloc
// STAGE-NOT: memref.copy
// STAGE: call @msamp_rt_check_computed_index
memref.global "private" constant @site : memref<3xi8> = dense<[97, 58, 49]>
func.func private @msamp_rt_check_computed_index(memref<*xi8>, memref<*xi8>, i32, i64, i64, i32)
func.func @host_only_global(%ids: memref<*xi8>) {
  %i0 = arith.constant 0 : i32
  %i5 = arith.constant 5 : i32
  %n = arith.constant 10 : i64
  %z = arith.constant 0 : i64
  %g = memref.get_global @site : memref<3xi8>
  %c = memref.cast %g : memref<3xi8> to memref<*xi8>
  call @msamp_rt_check_computed_index(%ids, %c, %i5, %n, %z, %i0) : (memref<*xi8>, memref<*xi8>, i32, i64, i64, i32) -> ()
  return
}

// -----

// Ranked copies become linalg.copy (then kernels); 0-d copies stay.
// COPY-LABEL: func.func @copies(
// COPY: linalg.copy ins(%arg0 : memref<3x5xf8E4M3FN>) outs(%arg1 : memref<3x5xf8E4M3FN>)
// COPY: memref.copy %arg2, %arg3 : memref<f32> to memref<f32>
func.func @copies(%a: memref<3x5xf8E4M3FN>, %b: memref<3x5xf8E4M3FN>,
                  %s: memref<f32>, %t: memref<f32>) {
  memref.copy %a, %b : memref<3x5xf8E4M3FN> to memref<3x5xf8E4M3FN>
  memref.copy %s, %t : memref<f32> to memref<f32>
  return
}

// -----

// Every parallel nest is collapsed to one dimension (row-major; indices
// recovered with rem/div) and tiled by the block size, tails guarded by
// scf.if (no min/max bounds); the reduction dimension stays a loop.
// TILE-LABEL: func.func @tile(
// TILE: %[[N:.+]] = arith.muli %{{.+}}, %c300{{.*}} : index
// TILE: %[[S:.+]] = arith.muli %{{.+}}, %c128 : index
// TILE: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%[[N]]) step (%[[S]])
// TILE: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%[[S]]) step
// TILE: %[[L:.+]] = arith.addi %[[T]], %[[B]] : index
// TILE: %[[IN:.+]] = arith.cmpi ult, %{{.+}}, %[[N]] : index
// TILE: scf.if
// TILE: %[[J:.+]] = arith.remsi %[[L]], %c300{{.*}} : index
// TILE: %[[I:.+]] = arith.divsi %[[L]], %c300{{.*}} : index
// TILE: memref.load %arg0[%[[I]], %[[J]]]
// TILE: arith.negf
// TILE-LABEL: func.func @rows(
// TILE: %[[R:.+]] = arith.muli %c1, %c128 : index
// TILE: scf.parallel (%{{.+}}) = (%c0) to (%c7) step (%[[R]])
// TILE: scf.parallel (%{{.+}}) = ({{.+}}) to (%[[R]]) step (%c1)
// TILE: scf.if
// TILE: scf.for
// TILE: arith.addf
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @tile(%a: memref<7x300xf32>, %b: memref<7x300xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<7x300xf32>) outs(%b : memref<7x300xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}
func.func @rows(%a: memref<7x300xf32>, %r: memref<7xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<7x300xf32>) outs(%r : memref<7xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction over the outer dimension (a bias gradient) is interchanged so
// the parallel dimension comes first: one parallel loop with the reduction
// inside, instead of a host loop of parallel loops. linalg.reduce is
// generalized first. Row reductions are left alone.
// OUTER-LABEL: func.func @columns(
// OUTER: scf.parallel (%[[J:.+]]) = (%c0) to (%c300) step (%c1)
// OUTER-NEXT: scf.for %[[I:.+]] = %c0 to %c7 step %c1
// OUTER: memref.load %arg0[%[[I]], %[[J]]] : memref<7x300xf32>
// OUTER-LABEL: func.func @reduce_named(
// OUTER: scf.parallel (%[[J2:.+]]) = (%c0) to (%c300) step (%c1)
// OUTER-NEXT: scf.for %[[I2:.+]] = %c0 to %c7 step %c1
// OUTER: memref.load %arg0[%[[I2]], %[[J2]]] : memref<7x300xf32>
// OUTER-LABEL: func.func @rows_untouched(
// OUTER: scf.parallel (%{{.+}}) = (%c0) to (%c7) step (%c1)
// OUTER-NEXT: scf.for %{{.+}} = %c0 to %c300 step %c1
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row2 = affine_map<(i, j) -> (i)>
func.func @columns(%a: memref<7x300xf32>, %r: memref<300xf32>) {
  linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<7x300xf32>) outs(%r : memref<300xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @reduce_named(%a: memref<7x300xf32>, %r: memref<300xf32>) {
  linalg.reduce ins(%a : memref<7x300xf32>) outs(%r : memref<300xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}
func.func @rows_untouched(%a: memref<7x300xf32>, %r: memref<7xf32>) {
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<7x300xf32>) outs(%r : memref<7xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

