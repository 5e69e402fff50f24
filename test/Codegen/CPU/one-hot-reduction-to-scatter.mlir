// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-one-hot-reduction-to-scatter))' | FileCheck %s
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-one-hot-reduction-to-scatter))' --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: msamp-opt %S/Inputs/one-hot-reduction-exec.mlir --pass-pipeline='builtin.module(func.func(msamp-one-hot-reduction-to-scatter))' | FileCheck %S/Inputs/one-hot-reduction-exec.mlir --check-prefix=REWRITTEN
// RUN: msamp-opt %S/Inputs/one-hot-reduction-exec.mlir --pass-pipeline='builtin.module(func.func(msamp-one-hot-reduction-to-scatter))' | mlir-opt --one-shot-bufferize=bufferize-function-boundaries --buffer-deallocation-pipeline --convert-bufferization-to-memref --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-arith-to-llvm --convert-func-to-llvm --finalize-memref-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %S/Inputs/one-hot-reduction-exec.mlir --check-prefix=EXEC

// REMARK: remark: [Passed] one-hot-scatter | Category:msamp:one-hot-to-scatter | Remark="one-hot reduction over 6 ids into a 5-row output runs as a loop of row adds"
// REMARK: Remark="one-hot reduction over 6 ids into a 10-row output
// REMARK-NOT: remark

// The embedding gradient of the graph generators: ids compared as i64 with
// linalg.index 0, addf(select, out).
// CHECK-LABEL: func.func @embedding_grad(
// CHECK-SAME: %[[IDS:.+]]: tensor<6xi64>, %[[G:.+]]: tensor<6x4xf32>
// CHECK-NOT: linalg.index
// CHECK: %[[INIT:.+]] = linalg.fill
// CHECK: %[[R:.+]] = scf.for %[[N:.+]] = %c0 to %c6 step %c1 iter_args(%[[ACC:.+]] = %[[INIT]])
// CHECK: %[[ID:.+]] = tensor.extract %[[IDS]][%[[N]]]
// CHECK: arith.cmpi sge, %[[ID]], %c0_i64
// CHECK: arith.cmpi slt, %[[ID]], %c5_i64
// CHECK: %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: scf.if
// CHECK: %[[GS:.+]] = tensor.extract_slice %[[G]][%[[N]], 0] [1, 4] [1, 1] : tensor<6x4xf32> to tensor<4xf32>
// CHECK: %[[AS:.+]] = tensor.extract_slice %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[GS]] : tensor<4xf32>) outs(%[[AS]] : tensor<4xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK: arith.addf %[[IN]], %[[OUT]] : f32
// CHECK: tensor.insert_slice {{.*}} into %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1]
// CHECK: } else {
// CHECK: scf.yield %[[ACC]]
// CHECK: return %[[R]]
#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>
func.func @embedding_grad(%ids: tensor<6xi64>, %g: tensor<6x4xf32>) -> tensor<5x4xf32> {
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

// -----

// ONNX GatherGrad's form: 2-D ids normalized in the body (negative ids
// count from the end, then clamp), compared as index; the gradient's map is
// (ids dims, then the other output dim). The normalization is cloned into
// the loops; the compare keeps the output operand first.
// CHECK-LABEL: func.func @gather_grad(
// CHECK: scf.for %[[B:.+]] = %c0 to %c2
// CHECK: scf.for %[[S:.+]] = %c0 to %c3
// CHECK: %[[ID:.+]] = tensor.extract %{{.+}}[%[[B]], %[[S]]] : tensor<2x3xi32>
// CHECK: %[[IDX:.+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK: arith.cmpi slt, %[[IDX]]
// CHECK: arith.maxsi
// CHECK: %[[ROW:.+]] = arith.minsi
// CHECK: scf.if
// CHECK: tensor.extract_slice %{{.+}}[%[[B]], %[[S]], 0] [1, 1, 8] [1, 1, 1] : tensor<2x3x8xf32> to tensor<8xf32>
// CHECK: tensor.extract_slice %{{.+}}[%[[ROW]], 0] [1, 8] [1, 1]
// CHECK: ^bb0(%[[IN:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK: arith.addf %[[OUT]], %[[IN]] : f32
#gi = affine_map<(v, j, b, s) -> (b, s)>
#gg = affine_map<(v, j, b, s) -> (b, s, j)>
#go = affine_map<(v, j, b, s) -> (v, j)>
func.func @gather_grad(%ids: tensor<2x3xi32>, %g: tensor<2x3x8xf32>) -> tensor<10x8xf32> {
  %init = arith.constant dense<0.0> : tensor<10x8xf32>
  %r = linalg.generic {indexing_maps = [#gi, #gg, #go], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%ids, %g : tensor<2x3xi32>, tensor<2x3x8xf32>) outs(%init : tensor<10x8xf32>) {
  ^bb0(%id: i32, %x: f32, %acc: f32):
    %idx = arith.index_cast %id : i32 to index
    %c0 = arith.constant 0 : index
    %c9 = arith.constant 9 : index
    %c10 = arith.constant 10 : index
    %neg = arith.cmpi slt, %idx, %c0 : index
    %wrapped = arith.addi %idx, %c10 : index
    %w = arith.select %neg, %wrapped, %idx : index
    %lo = arith.maxsi %w, %c0 : index
    %row = arith.minsi %lo, %c9 : index
    %v = linalg.index 0 : index
    %hit = arith.cmpi eq, %row, %v : index
    %zero = arith.constant 0.0 : f32
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  } -> tensor<10x8xf32>
  return %r : tensor<10x8xf32>
}

// -----

// Not rewritten: the output does not start at +0.0 (a -0.0 start would
// survive the scatter but not the reduction's +0.0 terms), the select's
// other value is not +0.0, the gradient is computed in the body.
// CHECK-LABEL: func.func @negative_zero_init(
// CHECK: linalg.generic
// CHECK-NOT: scf.for
// CHECK-LABEL: func.func @not_zero_otherwise(
// CHECK: linalg.generic
// CHECK-NOT: scf.for
// CHECK-LABEL: func.func @computed_gradient(
// CHECK: linalg.generic
// CHECK-NOT: scf.for
#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>
func.func @negative_zero_init(%ids: tensor<6xi64>, %g: tensor<6x4xf32>) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %init = arith.constant dense<-0.0> : tensor<5x4xf32>
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
func.func @not_zero_otherwise(%ids: tensor<6xi64>, %g: tensor<6x4xf32>) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<5x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
  %r = linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : tensor<6xi64>, tensor<6x4xf32>) outs(%init : tensor<5x4xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %one : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  } -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}
func.func @computed_gradient(%ids: tensor<6xi64>, %g: tensor<6x4xf32>) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
  %r = linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : tensor<6xi64>, tensor<6x4xf32>) outs(%init : tensor<5x4xf32>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %x2 = arith.mulf %x, %x : f32
    %s = arith.select %hit, %x2, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  } -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}
