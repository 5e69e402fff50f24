// msamp-gpu-register-accumulators: reductions left to the loop path carry
// their accumulators through the reduction loops as iter_args (one load
// before, one store after) instead of a load and a store per element. The
// IR is checked; then the functions are run on the CPU with and without
// the pass, on data whose f32 sums depend on the order of the additions,
// and every result's bits must be the same.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-register-accumulators))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-register-accumulators))' | msamp-opt --convert-linalg-to-loops --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so > %t.pass
// RUN: msamp-opt %s --convert-linalg-to-loops --convert-scf-to-cf --lower-affine --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so > %t.ref
// RUN: diff %t.ref %t.pass
// RUN: FileCheck %s --check-prefix=EXEC < %t.pass

// A column sum (bias gradient): the reduced dimension is the input's outer
// one. The output element is loaded once before the reduction loop and
// stored once after it.
// CHECK-LABEL: func.func @column_sum(
// CHECK: scf.parallel (%[[P:.+]]) =
// CHECK: %[[C:.+]] = affine.apply #map(%[[P]])
// CHECK: %[[INIT:.+]] = memref.load %arg1[%[[C]]]
// CHECK: %[[SUM:.+]] = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK: %[[TI:.+]] = affine.apply #map(%[[T]])
// CHECK: %[[X:.+]] = memref.load %arg0[%[[TI]], %[[C]]]
// CHECK: %[[N:.+]] = arith.addf %[[X]], %[[A]] : f32
// CHECK: scf.yield %[[N]] : f32
// CHECK: memref.store %[[SUM]], %arg1[%[[C]]]
#col_in = affine_map<(c, t) -> (t, c)>
#col_out = affine_map<(c, t) -> (c)>
func.func @column_sum(%g: memref<96x5xf32>, %db: memref<5xf32>) {
  linalg.generic {indexing_maps = [#col_in, #col_out], iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<96x5xf32>) outs(%db : memref<5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// Two reduction dimensions and two outputs (a sum and a masked max): both
// accumulators are carried through both loops.
// CHECK-LABEL: func.func @two_dims_two_outputs(
// CHECK: scf.parallel (%[[P:.+]]) =
// CHECK: %[[C:.+]] = affine.apply #map(%[[P]])
// CHECK-DAG: %[[S0:.+]] = memref.load %arg1[%[[C]]]
// CHECK-DAG: %[[M0:.+]] = memref.load %arg2[%[[C]]]
// CHECK: %[[OUTER:.+]]:2 = scf.for %{{.+}} iter_args(%{{.+}} = %[[S0]], %{{.+}} = %[[M0]]) -> (f32, f32) {
// CHECK: %[[INNER:.+]]:2 = scf.for %{{.+}} iter_args(
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: scf.yield %[[INNER]]#0, %[[INNER]]#1
// CHECK-DAG: memref.store %[[OUTER]]#0, %arg1[%[[C]]]
// CHECK-DAG: memref.store %[[OUTER]]#1, %arg2[%[[C]]]
#three = affine_map<(c, a, b) -> (a, b, c)>
#three_out = affine_map<(c, a, b) -> (c)>
func.func @two_dims_two_outputs(%g: memref<6x16x5xf32>, %sum: memref<5xf32>,
                                %mx: memref<5xf32>) {
  linalg.generic {indexing_maps = [#three, #three_out, #three_out], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%g : memref<6x16x5xf32>) outs(%sum, %mx : memref<5xf32>, memref<5xf32>) {
  ^bb0(%x: f32, %o: f32, %m: f32):
    %b = linalg.index 2 : index
    %c = linalg.index 0 : index
    %keep = arith.cmpi uge, %b, %c : index
    %s = arith.addf %x, %o : f32
    %mm = arith.maximumf %x, %m : f32
    %r = arith.select %keep, %mm, %m : f32
    linalg.yield %s, %r : f32, f32
  }
  return
}

// The output is a view of the input's buffer: it could be read through
// the input, so its load and store stay in the loop.
// CHECK-LABEL: func.func @aliased(
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.load
// CHECK: memref.store
#al_in = affine_map<(c, t) -> (t, c)>
#al_out = affine_map<(c, t) -> (c)>
func.func @aliased(%buf: memref<8x4xf32>) {
  %in = memref.subview %buf[0, 0] [7, 4] [1, 1] : memref<8x4xf32> to memref<7x4xf32, strided<[4, 1]>>
  %out = memref.subview %buf[7, 0] [1, 4] [1, 1] : memref<8x4xf32> to memref<4xf32, strided<[1], offset: 28>>
  linalg.generic {indexing_maps = [#al_in, #al_out], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<7x4xf32, strided<[4, 1]>>) outs(%out : memref<4xf32, strided<[1], offset: 28>>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// EXEC-COUNT-15: {{^-?[0-9]+$}}
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
// Values of very different magnitudes: an f32 sum in another order has
// other bits.
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
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %c96 = arith.constant 96 : index
  %c480 = arith.constant 480 : index
  %start = arith.constant 0.25 : f32
  %g = memref.alloc() : memref<96x5xf32>
  %g3 = memref.alloc() : memref<6x16x5xf32>
  scf.for %t = %c0 to %c96 step %c1 {
    scf.for %c = %c0 to %c5 step %c1 {
      %n = arith.muli %t, %c5 : index
      %i = arith.addi %n, %c : index
      %v = func.call @value(%i) : (index) -> f32
      memref.store %v, %g[%t, %c] : memref<96x5xf32>
      %a = arith.divui %t, %c16 : index
      %b = arith.remui %t, %c16 : index
      memref.store %v, %g3[%a, %b, %c] : memref<6x16x5xf32>
    }
  }
  %db = memref.alloc() : memref<5xf32>
  %sum = memref.alloc() : memref<5xf32>
  %mx = memref.alloc() : memref<5xf32>
  linalg.fill ins(%start : f32) outs(%db : memref<5xf32>)
  linalg.fill ins(%start : f32) outs(%sum : memref<5xf32>)
  linalg.fill ins(%start : f32) outs(%mx : memref<5xf32>)
  func.call @column_sum(%g, %db) : (memref<96x5xf32>, memref<5xf32>) -> ()
  func.call @two_dims_two_outputs(%g3, %sum, %mx) : (memref<6x16x5xf32>, memref<5xf32>, memref<5xf32>) -> ()
  func.call @print(%db) : (memref<5xf32>) -> ()
  func.call @print(%sum) : (memref<5xf32>) -> ()
  func.call @print(%mx) : (memref<5xf32>) -> ()
  return
}
