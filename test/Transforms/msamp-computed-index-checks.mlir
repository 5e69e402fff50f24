// RUN: msamp-opt %s --msamp-computed-index-checks --remarks-filter=msamp 2>&1 | FileCheck %s

// Indices the graph computes get an msamp.check_index before the op that
// reads them, naming its location, and gathered coordinates are clamped;
// a one-hot compare with a constant outside the range keeps it as the
// ignore_index. Step arguments (checked at the entry by
// --msamp-index-checks, also through reshapes and copies) and reads the
// graph clamps itself (the ONNX importer's Gather) get nothing; a buffer
// (stored position ids) is no checked input and gets a check.

// CHECK: msamp-computed-index-checks.mlir:63:15: remark: [Passed] IndexChecked | Category:msamp:computed-index-checks | Remark="index computed in the graph checked against [0, 10) here"
// CHECK: msamp-computed-index-checks.mlir:72:12: remark: [Passed] IndexChecked | Category:msamp:computed-index-checks | Remark="index computed in the graph checked against [0, 7) or -100 here"
// CHECK: msamp-computed-index-checks.mlir:84:14: remark: [Passed] IndexChecked | Category:msamp:computed-index-checks | Remark="index computed in the graph checked against [0, 10) by the check at {{.*}}msamp-computed-index-checks.mlir:63:15"
// CHECK: msamp-computed-index-checks.mlir:115:15: remark: [Passed] IndexChecked | Category:msamp:computed-index-checks | Remark="index computed in the graph checked against [0, 10) here"
// CHECK-NOT: remark
// CHECK-LABEL: func.func @train_step
// CHECK: %[[POS:.+]] = linalg.generic
// CHECK: arith.addi
// CHECK-NOT: msamp.check_index %collapsed
// CHECK: msamp.check_index %[[POS]] upper 10 at "{{.*}}msamp-computed-index-checks.mlir:63:15" : tensor<8xi64>
// CHECK: linalg.generic
// CHECK: %[[IX:.+]] = arith.index_cast
// CHECK: %[[LO:.+]] = arith.maxsi %[[IX]], %c0
// CHECK: %[[CL:.+]] = arith.minsi %[[LO]], %c9
// CHECK: tensor.extract %{{.+}}[%[[CL]], %{{.+}}] : tensor<10x3xf32>
// CHECK: msamp.check_index %{{.+}} upper 7 ignore -100 at "{{.*}}msamp-computed-index-checks.mlir:72:12"
// CHECK-NOT: msamp.check_index
// CHECK: msamp.check_index %arg3 upper 10 at "{{.*}}msamp-computed-index-checks.mlir:115:15"
// CHECK-NOT: msamp.check_index
// CHECK: return
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
  func.func @train_step(
      %w: tensor<10x3xf32> {msamp.role = "param", msamp.name = "w"},
      %ids: tensor<2x4xi64> {msamp.role = "input", msamp.name = "ids"},
      %labels: tensor<8xi64> {msamp.role = "target", msamp.name = "labels"},
      %posbuf: tensor<8xi64> {msamp.role = "buffer", msamp.name = "position_ids"})
      -> (tensor<8x3xf32>, tensor<8x7xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>)
      attributes {msamp.kind = "train_step"} {
    %flat = tensor.collapse_shape %ids [[0, 1]] : tensor<2x4xi64> into tensor<8xi64>
    %c3 = arith.constant 3 : i64
    %one64 = arith.constant 1 : i64
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %cm100 = arith.constant -100 : i64
    %ei = tensor.empty() : tensor<8xi64>
    // Computed: position ids = ids + 3, labels - 1.
    %pos = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%flat : tensor<8xi64>) outs(%ei : tensor<8xi64>) {
    ^bb0(%in: i64, %out: i64):
      %s = arith.addi %in, %c3 : i64
      linalg.yield %s : i64
    } -> tensor<8xi64>
    %lab = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%labels : tensor<8xi64>) outs(%ei : tensor<8xi64>) {
    ^bb0(%in: i64, %out: i64):
      %s = arith.subi %in, %one64 : i64
      linalg.yield %s : i64
    } -> tensor<8xi64>
    %e0 = tensor.empty() : tensor<8x3xf32>
    %gather = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pos : tensor<8xi64>) outs(%e0 : tensor<8x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %ix = arith.index_cast %in : i64 to index
      %j = linalg.index 1 : index
      %v = tensor.extract %w[%ix, %j] : tensor<10x3xf32>
      linalg.yield %v : f32
    } -> tensor<8x3xf32>
    %e1 = tensor.empty() : tensor<8x7xf32>
    %hot = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%lab : tensor<8xi64>) outs(%e1 : tensor<8x7xf32>) {
    ^bb0(%in: i64, %out: f32):
      %c = linalg.index 1 : index
      %ci = arith.index_cast %c : index to i64
      %hit = arith.cmpi eq, %ci, %in : i64
      %keep = arith.cmpi ne, %in, %cm100 : i64
      %both = arith.andi %hit, %keep : i1
      %r = arith.select %both, %one, %zero : f32
      linalg.yield %r : f32
    } -> tensor<8x7xf32>
    // The same computed tensor read again: covered by the first check.
    %again = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pos : tensor<8xi64>) outs(%e0 : tensor<8x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %ix = arith.index_cast %in : i64 to index
      %j = linalg.index 1 : index
      %v = tensor.extract %w[%ix, %j] : tensor<10x3xf32>
      linalg.yield %v : f32
    } -> tensor<8x3xf32>
    // A step argument, through a reshape: the entry point checks it.
    %direct = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%flat : tensor<8xi64>) outs(%e0 : tensor<8x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %ix = arith.index_cast %in : i64 to index
      %j = linalg.index 1 : index
      %v = tensor.extract %w[%ix, %j] : tensor<10x3xf32>
      linalg.yield %v : f32
    } -> tensor<8x3xf32>
    // The graph clamps the computed index itself (ONNX Gather): left alone.
    %clamped = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%lab : tensor<8xi64>) outs(%e0 : tensor<8x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %ix = arith.index_cast %in : i64 to index
      %c0 = arith.constant 0 : index
      %c9 = arith.constant 9 : index
      %lo = arith.maxsi %ix, %c0 : index
      %hi = arith.minsi %lo, %c9 : index
      %j = linalg.index 1 : index
      %v = tensor.extract %w[%hi, %j] : tensor<10x3xf32>
      linalg.yield %v : f32
    } -> tensor<8x3xf32>
    // A buffer (stored position ids) is no checked input: checked here.
    %stored = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%posbuf : tensor<8xi64>) outs(%e0 : tensor<8x3xf32>) {
    ^bb0(%in: i64, %out: f32):
      %ix = arith.index_cast %in : i64 to index
      %j = linalg.index 1 : index
      %v = tensor.extract %w[%ix, %j] : tensor<10x3xf32>
      linalg.yield %v : f32
    } -> tensor<8x3xf32>
    return %gather, %hot, %again, %direct, %clamped, %stored : tensor<8x3xf32>, tensor<8x7xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>
  }
}
