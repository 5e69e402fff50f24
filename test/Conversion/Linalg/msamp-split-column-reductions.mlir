// msamp-split-column-reductions: a reduction over the rows of a buffer whose
// columns are contiguous becomes two generics, stage 1 over (c, rows of the
// chunk, columns) into [C, columns] partials, stage 2 over the C partials
// into the original accumulator. Small limits (threads=1024, min-rows=16) so
// that small buffers split. The IR is checked, and the split and unsplit
// functions are run for the CPU: every result equals the sequential loop's
// (integer terms, exact in any order; max is exact anyway), the
// accumulator's initial value kept.
// DEFINE: %{exec_lowering} = --convert-linalg-to-loops --lower-affine --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-split-column-reductions{threads=1024 min-rows=16}))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-split-column-reductions{threads=1024 min-rows=16}))' --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// The bound on the partials (C x outputs) leaves everything alone.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-split-column-reductions{threads=1024 min-rows=16 max-partials=255}))' | FileCheck %s --check-prefix=BOUND
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-split-column-reductions{threads=1024 min-rows=16}))' | msamp-opt %{exec_lowering} | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC
// RUN: msamp-opt %s %{exec_lowering} | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC
// RUN: not msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-split-column-reductions{min-rows=0}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// REMARK-DAG: Remark="1 column reductions in @bias_grad split in two stages (rows x outputs -> chunks x rows per chunk): 512 rows x 48 outputs -> 32 x 16"
// REMARK-DAG: Remark="1 column reductions in @layernorm_grad split in two stages (rows x outputs -> chunks x rows per chunk): 256 rows x 32 outputs -> 16 x 16"
// REMARK-DAG: Remark="1 column reductions in @sum_and_max split in two stages (rows x outputs -> chunks x rows per chunk): 512 rows x 48 outputs -> 32 x 16"
// REMARK-DAG: Remark="1 column reductions in @column_max split in two stages (rows x outputs -> chunks x rows per chunk): 512 rows x 48 outputs -> 32 x 16"
// REMARK-NOT: @left_alone
// BOUND-NOT: memref.expand_shape
// BAD: msamp-split-column-reductions: threads, min-rows and max-partials must be positive

// CHECK-DAG: #[[$S1IN:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$S1OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$S2OUT:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ID2:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$LNX:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$LNW:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[$LNP:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$LN2IN:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>

// A bias gradient: 512 rows, 48 columns. C: the smallest divisor of 512 with
// C >= max(ceil(1024 / 48) = 22, ceil(sqrt 512) = 23) and 512 / C >= 16: 32.
// CHECK-LABEL: func.func @bias_grad(
// CHECK-SAME: %[[X:.*]]: memref<512x48xf32>, %[[ACC:.*]]: memref<48xf32>)
// CHECK: %[[V:.*]] = memref.expand_shape %[[X]] {{\[\[}}0, 1], [2]] output_shape [32, 16, 48] : memref<512x48xf32> into memref<32x16x48xf32>
// The partials are not filled: at a chunk's first row (s, dimension 1, is
// 0) stage 1 takes the row's term instead of combining it.
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x48xf32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$S1IN]], #[[$S1OUT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[V]] : memref<32x16x48xf32>) outs(%[[P]] : memref<32x48xf32>)
// CHECK-NEXT: ^bb0(%[[IN1:.*]]: f32, %[[OUT1:.*]]: f32):
// CHECK-NEXT: %[[ADD1:.*]] = arith.addf %[[IN1]], %[[OUT1]] : f32
// CHECK-NEXT: %[[S:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[S]], %[[C0]] : index
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[FIRST]], %[[IN1]], %[[ADD1]] : f32
// CHECK-NEXT: linalg.yield %[[SEL]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$S2OUT]]], iterator_types = ["reduction", "parallel"]} ins(%[[P]] : memref<32x48xf32>) outs(%[[ACC]] : memref<48xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]]
// CHECK-NOT: linalg.reduce
// CHECK: return
func.func @bias_grad(%x: memref<512x48xf32>, %acc: memref<48xf32>) {
  linalg.reduce ins(%x : memref<512x48xf32>) outs(%acc : memref<48xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}

// A LayerNorm weight gradient as the fusion leaves it, the rows in the
// middle (parallel d0, rows d1, columns d2), a product of two inputs and a
// per-column input that does not read the rows; the accumulator first in
// the addf. 4 x 8 = 32 outputs: C >= max(32, ceil(sqrt 256) = 16) -> 32,
// but 256 / 32 = 8 < 16 rows: the largest divisor with 16 rows, 16.
// CHECK-LABEL: func.func @layernorm_grad(
// CHECK-SAME: %[[A:.*]]: memref<4x256x8xf32>, %[[B:.*]]: memref<4x256x8xf32>, %[[W:.*]]: memref<8xf32>, %[[ACC:.*]]: memref<4x8xf32>)
// CHECK-DAG: %[[AV:.*]] = memref.expand_shape %[[A]] {{\[\[}}0], [1, 2], [3]] output_shape [4, 16, 16, 8] : memref<4x256x8xf32> into memref<4x16x16x8xf32>
// CHECK-DAG: %[[BV:.*]] = memref.expand_shape %[[B]] {{\[\[}}0], [1, 2], [3]] output_shape [4, 16, 16, 8] : memref<4x256x8xf32> into memref<4x16x16x8xf32>
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x4x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$LNX]], #[[$LNX]], #[[$LNW]], #[[$LNP]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[AV]], %[[BV]], %[[W]] : memref<4x16x16x8xf32>, memref<4x16x16x8xf32>, memref<8xf32>) outs(%[[P]] : memref<16x4x8xf32>)
// CHECK: arith.mulf
// CHECK: %[[Q:.*]] = arith.mulf
// CHECK: %[[ADD:.*]] = arith.addf %{{.*}}, %[[Q]] : f32
// CHECK: %[[S:.*]] = linalg.index 2 : index
// CHECK: arith.select %{{.*}}, %[[Q]], %[[ADD]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[$LN2IN]], #[[$S1OUT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[P]] : memref<16x4x8xf32>) outs(%[[ACC]] : memref<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
#ln_in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ln_w = affine_map<(d0, d1, d2) -> (d2)>
#ln_out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @layernorm_grad(%a: memref<4x256x8xf32>, %b: memref<4x256x8xf32>, %w: memref<8xf32>, %acc: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#ln_in, #ln_in, #ln_w, #ln_out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b, %w : memref<4x256x8xf32>, memref<4x256x8xf32>, memref<8xf32>) outs(%acc : memref<4x8xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32, %o: f32):
    %p = arith.mulf %u, %v : f32
    %q = arith.mulf %p, %s : f32
    %t = arith.addf %o, %q : f32
    linalg.yield %t : f32
  }
  return
}

// A column max: the combiner is maximumf in both stages.
// CHECK-LABEL: func.func @column_max(
// CHECK: memref.expand_shape {{.*}} output_shape [32, 16, 48]
// CHECK: arith.maximumf
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[IN]], %[[OUT]] : f32
func.func @column_max(%x: memref<512x48xf32>, %acc: memref<48xf32>) {
  linalg.reduce ins(%x : memref<512x48xf32>) outs(%acc : memref<48xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %m = arith.maximumf %in, %init : f32
      linalg.yield %m : f32
    }
  return
}

// Two accumulators (a column sum and a column max) split together: one
// partials buffer each, one stage 1 and one stage 2 for both.
// CHECK-LABEL: func.func @sum_and_max(
// CHECK-SAME: %[[X:.*]]: memref<512x48xf32>, %[[S:.*]]: memref<48xf32>, %[[M:.*]]: memref<48xf32>)
// CHECK: %[[V:.*]] = memref.expand_shape %[[X]]
// CHECK: %[[PS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x48xf32>
// CHECK: %[[PM:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x48xf32>
// CHECK: linalg.generic {{.*}} ins(%[[V]] : memref<32x16x48xf32>) outs(%[[PS]], %[[PM]] : memref<32x48xf32>, memref<32x48xf32>)
// CHECK: %[[SEL1:.*]] = arith.select
// CHECK: %[[SEL2:.*]] = arith.select
// CHECK: linalg.yield %[[SEL1]], %[[SEL2]] : f32, f32
// CHECK: linalg.generic {{.*}} ins(%[[PS]], %[[PM]] : memref<32x48xf32>, memref<32x48xf32>) outs(%[[S]], %[[M]] : memref<48xf32>, memref<48xf32>)
// CHECK-NEXT: ^bb0(%[[IS:.*]]: f32, %[[IM:.*]]: f32, %[[OS:.*]]: f32, %[[OM:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[IS]], %[[OS]] : f32
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[OM]], %[[IM]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]], %[[MAX]] : f32, f32
func.func @sum_and_max(%x: memref<512x48xf32>, %s: memref<48xf32>, %m: memref<48xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<512x48xf32>) outs(%s, %m : memref<48xf32>, memref<48xf32>) {
  ^bb0(%in: f32, %os: f32, %om: f32):
    %a = arith.addf %in, %os : f32
    %b = arith.maximumf %om, %in : f32
    linalg.yield %a, %b : f32, f32
  }
  return
}

// Left alone: the rows innermost (a row reduction); too few rows (< 2 x 16);
// enough outputs already (2048 >= 1024 threads); a row count with no divisor
// giving 16 rows per chunk (131 is prime); a product combiner; two
// reduction dims; a one-hot gradient (linalg.index, arith.cmpi); an
// accumulator read by the term as well.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: memref.expand_shape
// CHECK-NOT: memref.alloc
// CHECK: return
#r_in = affine_map<(d0, d1) -> (d0, d1)>
#r_out = affine_map<(d0, d1) -> (d0)>
#c_in = affine_map<(d0, d1) -> (d1, d0)>
#two_in = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
#two_out = affine_map<(d0, d1, d2) -> (d0)>
#oh_ids = affine_map<(d0, d1, d2) -> (d2)>
#oh_x = affine_map<(d0, d1, d2) -> (d2, d1)>
#oh_out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%rows: memref<48x512xf32>, %racc: memref<48xf32>,
                      %few: memref<24x48xf32>, %wide: memref<512x2048xf32>,
                      %wacc: memref<2048xf32>, %prime: memref<131x48xf32>,
                      %x: memref<512x48xf32>, %acc: memref<48xf32>,
                      %two: memref<16x32x48xf32>, %ids: memref<512xi64>,
                      %oh: memref<16x48xf32>) {
  linalg.reduce ins(%rows : memref<48x512xf32>) outs(%racc : memref<48xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%few : memref<24x48xf32>) outs(%acc : memref<48xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%wide : memref<512x2048xf32>) outs(%wacc : memref<2048xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%prime : memref<131x48xf32>) outs(%acc : memref<48xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%x : memref<512x48xf32>) outs(%acc : memref<48xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.mulf %in, %init : f32
      linalg.yield %s : f32
    }
  linalg.generic {indexing_maps = [#two_in, #two_out], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%two : memref<16x32x48xf32>) outs(%acc : memref<48xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#oh_ids, #oh_x, #oh_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %x : memref<512xi64>, memref<512x48xf32>) outs(%oh : memref<16x48xf32>) {
  ^bb0(%id: i64, %in: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %hit = arith.cmpi eq, %ii, %id : i64
    %t = arith.select %hit, %in, %zero : f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#c_in, #r_out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x48xf32>) outs(%acc : memref<48xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = arith.mulf %in, %o : f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  }
  return
}

// EXEC: 0
// EXEC-NEXT: 0
func.func private @printI64(i64)
func.func private @printNewline()
func.func @main() {
  %x = memref.alloc() : memref<512x48xf32>
  %sum = memref.alloc() : memref<48xf32>
  %max = memref.alloc() : memref<48xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  %c512 = arith.constant 512 : index
  // x[r, j] = (r * 48 + j) mod 1009 - 500: distinct integers, every partial
  // sum exact; the maximum of each column at a different row.
  %m = arith.constant 1009 : i32
  %h = arith.constant 500 : i32
  %w48 = arith.constant 48 : i32
  scf.for %r = %c0 to %c512 step %c1 {
    scf.for %j = %c0 to %c48 step %c1 {
      %ri = arith.index_cast %r : index to i32
      %ji = arith.index_cast %j : index to i32
      %k = arith.muli %ri, %w48 : i32
      %l = arith.addi %k, %ji : i32
      %n = arith.remui %l, %m : i32
      %v = arith.subi %n, %h : i32
      %f = arith.sitofp %v : i32 to f32
      memref.store %f, %x[%r, %j] : memref<512x48xf32>
    }
  }
  %init = arith.constant 0.5 : f32
  %low = arith.constant -1.0e30 : f32
  linalg.fill ins(%init : f32) outs(%sum : memref<48xf32>)
  linalg.fill ins(%low : f32) outs(%max : memref<48xf32>)
  call @bias_grad(%x, %sum) : (memref<512x48xf32>, memref<48xf32>) -> ()
  call @column_max(%x, %max) : (memref<512x48xf32>, memref<48xf32>) -> ()
  // The sequential references, counted as mismatching columns.
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %bad:2 = scf.for %j = %c0 to %c48 step %c1 iter_args(%bs = %zero, %bm = %zero) -> (i64, i64) {
    %ref:2 = scf.for %r = %c0 to %c512 step %c1 iter_args(%s = %init, %mx = %low) -> (f32, f32) {
      %v = memref.load %x[%r, %j] : memref<512x48xf32>
      %s2 = arith.addf %v, %s : f32
      %m2 = arith.maximumf %v, %mx : f32
      scf.yield %s2, %m2 : f32, f32
    }
    %gs = memref.load %sum[%j] : memref<48xf32>
    %gm = memref.load %max[%j] : memref<48xf32>
    %ds = arith.cmpf une, %gs, %ref#0 : f32
    %dm = arith.cmpf une, %gm, %ref#1 : f32
    %is = arith.select %ds, %one, %zero : i64
    %im = arith.select %dm, %one, %zero : i64
    %bs2 = arith.addi %bs, %is : i64
    %bm2 = arith.addi %bm, %im : i64
    scf.yield %bs2, %bm2 : i64, i64
  }
  call @printI64(%bad#0) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%bad#1) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
