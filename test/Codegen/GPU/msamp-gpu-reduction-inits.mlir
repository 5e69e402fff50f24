// msamp-gpu-reduction-inits: a copy out of a buffer that holds one constant
// (its only write a fill before the copy) becomes a fill of that constant;
// the shared buffer goes when nothing copies out of it any more. A fill
// right before a reduction into the same buffer is then folded by the
// reduction kernels: the accumulator starts from the constant (no load,
// no fill, no copy: no kernel but the reduction's). Then the functions run
// on the CPU with and without the passes, on data whose f32 sums depend on
// the order of the additions and from a start value that is not the sum's
// identity, and every result's bits must be the same.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-reduction-inits))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-reduction-inits,msamp-gpu-register-accumulators))' | FileCheck %s --check-prefix=LOOPS
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-reduction-inits,msamp-gpu-row-reductions))' | FileCheck %s --check-prefix=ROWS
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-reduction-inits,msamp-gpu-register-accumulators))' | msamp-opt --convert-linalg-to-loops --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so > %t.pass
// RUN: msamp-opt %s --convert-linalg-to-loops --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so > %t.ref
// RUN: diff %t.ref %t.pass
// RUN: FileCheck %s --check-prefix=EXEC < %t.pass

#col_in = affine_map<(c, t) -> (t, c)>
#col_out = affine_map<(c, t) -> (c)>
#row_in = affine_map<(r, e) -> (r, e)>
#row_out = affine_map<(r, e) -> (r)>

// Three reductions whose accumulators bufferization copied from filled
// buffers, one per shape (a column sum, as a bias gradient is, and two
// row sums, as LayerNorm's mean and variance are).
// CHECK-LABEL: func.func @shared_start(
// CHECK-SAME: %[[G:.+]]: memref<96x5xf32>)
// CHECK: %[[START:.+]] = arith.constant 2.500000e-01 : f32
// The 5-element buffer is reused as the last reduction's accumulator: its
// fill stays; the 96-element one goes, with its fill and dealloc.
// CHECK-NEXT: %[[Z5:.+]] = memref.alloc() : memref<5xf32>
// CHECK-NEXT: linalg.fill ins(%[[START]] : f32) outs(%[[Z5]] : memref<5xf32>)
// CHECK-NEXT: %[[COL:.+]] = memref.alloc() : memref<5xf32>
// CHECK-NEXT: linalg.fill ins(%[[START]] : f32) outs(%[[COL]] : memref<5xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[G]] : memref<96x5xf32>) outs(%[[COL]] : memref<5xf32>)
// CHECK: %[[ROW:.+]] = memref.alloc() : memref<96xf32>
// CHECK-NEXT: linalg.fill ins(%[[START]] : f32) outs(%[[ROW]] : memref<96xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[G]] : memref<96x5xf32>) outs(%[[ROW]] : memref<96xf32>)
// CHECK: %[[SQ:.+]] = memref.alloc() : memref<96xf32>
// CHECK-NEXT: linalg.fill ins(%[[START]] : f32) outs(%[[SQ]] : memref<96xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[G]] : memref<96x5xf32>) outs(%[[SQ]] : memref<96xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[G]] : memref<96x5xf32>) outs(%[[Z5]] : memref<5xf32>)
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: memref.dealloc %[[Z5]]
// CHECK-NOT: memref.dealloc
// CHECK: return
//
// The loop path: each accumulator starts from 0.25, no load of the
// output, no fill.
// LOOPS-LABEL: func.func @shared_start(
// LOOPS-NOT: linalg.fill
// LOOPS: scf.parallel
// LOOPS: %[[S0:.+]] = arith.constant 2.500000e-01 : f32
// LOOPS-NEXT: scf.for %{{.+}} iter_args(%{{.+}} = %[[S0]]) -> (f32)
// LOOPS: scf.parallel
// LOOPS: %[[S1:.+]] = arith.constant 2.500000e-01 : f32
// LOOPS-NEXT: scf.for %{{.+}} iter_args(%{{.+}} = %[[S1]]) -> (f32)
// LOOPS: scf.parallel
// LOOPS: %[[S2:.+]] = arith.constant 2.500000e-01 : f32
// LOOPS-NEXT: scf.for %{{.+}} iter_args(%{{.+}} = %[[S2]]) -> (f32)
// LOOPS: scf.parallel
// LOOPS: %[[S3:.+]] = arith.constant 2.500000e-01 : f32
// LOOPS-NEXT: scf.for %{{.+}} iter_args(%{{.+}} = %[[S3]]) -> (f32)
// LOOPS-NOT: linalg.fill
// LOOPS: return
//
// A warp per row: 0.25 + the row's total, without loading the output
// (the two row sums of %g run in one kernel, a chain: every lane
// combines, lane 0 stores); the column sums are no row reductions and
// keep their fills.
// ROWS-LABEL: func.func @shared_start(
// ROWS: gpu.launch
// ROWS: %[[S:.+]] = arith.constant 2.500000e-01 : f32
// ROWS-NEXT: %[[T:.+]] = arith.addf %{{.+}}, %[[S]] : f32
// ROWS: arith.cmpi eq
// ROWS-NEXT: scf.if
// ROWS-NEXT: memref.store %[[T]], %alloc
// ROWS: return
func.func @shared_start(%g: memref<96x5xf32>) {
  %start = arith.constant 0.25 : f32
  %z5 = memref.alloc() : memref<5xf32>
  linalg.fill ins(%start : f32) outs(%z5 : memref<5xf32>)
  %z96 = memref.alloc() : memref<96xf32>
  linalg.fill ins(%start : f32) outs(%z96 : memref<96xf32>)
  %col = memref.alloc() : memref<5xf32>
  linalg.copy ins(%z5 : memref<5xf32>) outs(%col : memref<5xf32>)
  linalg.generic {indexing_maps = [#col_in, #col_out], iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<96x5xf32>) outs(%col : memref<5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  %row = memref.alloc() : memref<96xf32>
  linalg.copy ins(%z96 : memref<96xf32>) outs(%row : memref<96xf32>)
  linalg.generic {indexing_maps = [#row_in, #row_out], iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<96x5xf32>) outs(%row : memref<96xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  %sq = memref.alloc() : memref<96xf32>
  linalg.copy ins(%z96 : memref<96xf32>) outs(%sq : memref<96xf32>)
  linalg.generic {indexing_maps = [#row_in, #row_out], iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<96x5xf32>) outs(%sq : memref<96xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#col_in, #col_out], iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<96x5xf32>) outs(%z5 : memref<5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  }
  memref.dealloc %z96 : memref<96xf32>
  func.call @print(%z5) : (memref<5xf32>) -> ()
  func.call @print(%col) : (memref<5xf32>) -> ()
  %row5 = memref.subview %row[0] [5] [1] : memref<96xf32> to memref<5xf32, strided<[1]>>
  %sq5 = memref.subview %sq[91] [5] [1] : memref<96xf32> to memref<5xf32, strided<[1], offset: 91>>
  %row5c = memref.cast %row5 : memref<5xf32, strided<[1]>> to memref<5xf32, strided<[?], offset: ?>>
  %sq5c = memref.cast %sq5 : memref<5xf32, strided<[1], offset: 91>> to memref<5xf32, strided<[?], offset: ?>>
  func.call @printStrided(%row5c) : (memref<5xf32, strided<[?], offset: ?>>) -> ()
  func.call @printStrided(%sq5c) : (memref<5xf32, strided<[?], offset: ?>>) -> ()
  memref.dealloc %z5 : memref<5xf32>
  return
}

// What must stay. A source with a second writer (its copy reads 0.25 + 1):
// the copy stays. A fill after the copy (the copy reads what was there
// before, here nothing defined: %b is not printed): the copy stays. An accumulator read between its fill and the
// reduction: the fill stays and the reduction loads it.
// CHECK-LABEL: func.func @kept(
// CHECK: linalg.copy ins(%[[TWICE:[^ ]+]] : memref<5xf32>)
// CHECK: linalg.copy ins(%[[LATE:[^ ]+]] : memref<5xf32>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[LATE]] : memref<5xf32>)
// CHECK: %[[READ:.+]] = memref.alloc() : memref<5xf32>
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[READ]] : memref<5xf32>)
// CHECK-NEXT: memref.load %[[READ]]
// LOOPS-LABEL: func.func @kept(
// LOOPS: %[[READ:.+]] = memref.alloc() : memref<5xf32>
// LOOPS-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[READ]] : memref<5xf32>)
// LOOPS: scf.parallel
// LOOPS: %[[INIT:.+]] = memref.load %[[READ]]
// LOOPS: iter_args(%{{.+}} = %[[INIT]]) -> (f32)
func.func @kept(%g: memref<96x5xf32>) {
  %c0 = arith.constant 0 : index
  %start = arith.constant 0.25 : f32
  %one = arith.constant 1.0 : f32
  %twice = memref.alloc() : memref<5xf32>
  linalg.fill ins(%start : f32) outs(%twice : memref<5xf32>)
  linalg.generic {indexing_maps = [affine_map<(c) -> (c)>], iterator_types = ["parallel"]}
      outs(%twice : memref<5xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %one : f32
    linalg.yield %s : f32
  }
  %a = memref.alloc() : memref<5xf32>
  linalg.copy ins(%twice : memref<5xf32>) outs(%a : memref<5xf32>)
  %late = memref.alloc() : memref<5xf32>
  %b = memref.alloc() : memref<5xf32>
  linalg.copy ins(%late : memref<5xf32>) outs(%b : memref<5xf32>)
  linalg.fill ins(%start : f32) outs(%late : memref<5xf32>)
  %z = memref.alloc() : memref<5xf32>
  linalg.fill ins(%start : f32) outs(%z : memref<5xf32>)
  %read = memref.alloc() : memref<5xf32>
  linalg.copy ins(%z : memref<5xf32>) outs(%read : memref<5xf32>)
  %peek = memref.load %read[%c0] : memref<5xf32>
  linalg.generic {indexing_maps = [#col_in, #col_out], iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<96x5xf32>) outs(%read : memref<5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  memref.store %peek, %late[%c0] : memref<5xf32>
  func.call @print(%a) : (memref<5xf32>) -> ()
  func.call @print(%late) : (memref<5xf32>) -> ()
  func.call @print(%read) : (memref<5xf32>) -> ()
  return
}

func.func private @printI64(i64)
func.func private @printNewline()
func.func @print(%m: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %v = memref.load %m[%i] : memref<5xf32>
    %bits = arith.bitcast %v : f32 to i32
    %wide = arith.extsi %bits : i32 to i64
    func.call @printI64(%wide) : (i64) -> ()
    func.call @printNewline() : () -> ()
  }
  return
}
func.func @printStrided(%m: memref<5xf32, strided<[?], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %v = memref.load %m[%i] : memref<5xf32, strided<[?], offset: ?>>
    %bits = arith.bitcast %v : f32 to i32
    %wide = arith.extsi %bits : i32 to i64
    func.call @printI64(%wide) : (i64) -> ()
    func.call @printNewline() : () -> ()
  }
  return
}
// Values of very different magnitudes: an f32 sum in another order, or
// from another start, has other bits.
func.func @value(%i: index) -> f32 {
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %big = arith.constant 1.0e4 : f32
  %one = arith.constant 1.0 : f32
  %r = arith.remui %i, %c3 : index
  %isBig = arith.cmpi eq, %r, %c0 : index
  %scale = arith.select %isBig, %big, %one : f32
  %k = arith.muli %i, %c7 : index
  %k1 = arith.addi %k, %c3 : index
  %ki = arith.index_cast %k1 : index to i64
  %kf = arith.sitofp %ki : i64 to f32
  %inv = arith.divf %one, %kf : f32
  %v = arith.mulf %inv, %scale : f32
  return %v : f32
}
// EXEC-COUNT-35: {{^-?[0-9]+$}}
// EXEC-NOT: {{.}}
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c96 = arith.constant 96 : index
  %g = memref.alloc() : memref<96x5xf32>
  scf.for %t = %c0 to %c96 step %c1 {
    scf.for %c = %c0 to %c5 step %c1 {
      %n = arith.muli %t, %c5 : index
      %i = arith.addi %n, %c : index
      %v = func.call @value(%i) : (index) -> f32
      memref.store %v, %g[%t, %c] : memref<96x5xf32>
    }
  }
  func.call @shared_start(%g) : (memref<96x5xf32>) -> ()
  func.call @kept(%g) : (memref<96x5xf32>) -> ()
  return
}
