// Executed by ../one-hot-reduction-to-scatter.mlir: the rewritten @grad
// against @reference, the one-hot reduction spelled as scalar loops (which
// the pass leaves alone), on ids with repeats, a negative and two
// out-of-range values, and gradients with -0.0, +-Inf and NaN. Prints the
// number of output elements whose bits differ, then four sums (the
// third as its bits: 0x3F800000 is 1.0).
// REWRITTEN-LABEL: func.func @grad(
// REWRITTEN: scf.for
// REWRITTEN-NOT: linalg.index
// REWRITTEN-LABEL: func.func @reference(
// EXEC: 0
// EXEC-NEXT: 2.25
// EXEC-NEXT: 0
// EXEC-NEXT: {{^1065353216$}}
// EXEC-NEXT: nan

#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>

func.func private @printI64(i64)
func.func private @printF32(f32)
func.func private @printNewline()

func.func @grad(%ids: tensor<8xi64>, %g: tensor<8x4xf32>) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
  %r = linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : tensor<8xi64>, tensor<8x4xf32>) outs(%init : tensor<5x4xf32>) {
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

func.func @reference(%ids: tensor<8xi64>, %g: tensor<8x4xf32>) -> tensor<5x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x4xf32>
  %r = scf.for %v = %c0 to %c5 step %c1 iter_args(%t = %e) -> (tensor<5x4xf32>) {
    %rv = scf.for %j = %c0 to %c4 step %c1 iter_args(%tj = %t) -> (tensor<5x4xf32>) {
      %sum = scf.for %n = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %id = tensor.extract %ids[%n] : tensor<8xi64>
        %vi = arith.index_cast %v : index to i64
        %hit = arith.cmpi eq, %vi, %id : i64
        %x = tensor.extract %g[%n, %j] : tensor<8x4xf32>
        %s = arith.select %hit, %x, %zero : f32
        %a = arith.addf %s, %acc : f32
        scf.yield %a : f32
      }
      %tn = tensor.insert %sum into %tj[%v, %j] : tensor<5x4xf32>
      scf.yield %tn : tensor<5x4xf32>
    }
    scf.yield %rv : tensor<5x4xf32>
  }
  return %r : tensor<5x4xf32>
}

func.func @main() {
  %ids = arith.constant dense<[3, -1, 3, 5, 0, 7, 3, 2]> : tensor<8xi64>
  // Row n of the gradient goes to output row ids[n]: rows 0, 2, 6 to 3
  // (column 0: 1.5 + 0.5 + 0.25 = 2.25; column 1: -0.0 three times, the
  // reduction's result +0.0; column 2: 1 + 2^-24 + 2^-24 is 1.0 in this
  // order, 1 + 2^-23 in the reverse one), row 4 to 0, row 7 to 2; rows 1,
  // 3, 5 nowhere.
  %g = arith.constant dense<[[1.5, -0.0, 1.0, 1.0],
                             [0x7FC00000, 9.0, 9.0, 9.0],
                             [0.5, -0.0, 0x33800000, 0x7FC00000],
                             [8.0, 8.0, 8.0, 0x7FC00000],
                             [-2.0, 3.0, -0.0, 1.0e-40],
                             [0x7F800000, 7.0, 7.0, 7.0],
                             [0.25, -0.0, 0x33800000, 3.0],
                             [-1.0, 0xFF800000, 4.0, -4.0]]> : tensor<8x4xf32>
  %a = func.call @grad(%ids, %g) : (tensor<8xi64>, tensor<8x4xf32>) -> tensor<5x4xf32>
  %b = func.call @reference(%ids, %g) : (tensor<8xi64>, tensor<8x4xf32>) -> tensor<5x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %diff = scf.for %v = %c0 to %c5 step %c1 iter_args(%d = %z) -> (i64) {
    %dv = scf.for %j = %c0 to %c4 step %c1 iter_args(%dj = %d) -> (i64) {
      %x = tensor.extract %a[%v, %j] : tensor<5x4xf32>
      %y = tensor.extract %b[%v, %j] : tensor<5x4xf32>
      %xb = arith.bitcast %x : f32 to i32
      %yb = arith.bitcast %y : f32 to i32
      %ne = arith.cmpi ne, %xb, %yb : i32
      %inc = arith.select %ne, %one, %z : i64
      %dn = arith.addi %dj, %inc : i64
      scf.yield %dn : i64
    }
    scf.yield %dv : i64
  }
  func.call @printI64(%diff) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %s0 = tensor.extract %a[%c3, %c0] : tensor<5x4xf32>
  func.call @printF32(%s0) : (f32) -> ()
  func.call @printNewline() : () -> ()
  // +0.0 (prints 0, a -0.0 would print -0).
  %s1 = tensor.extract %a[%c3, %c1] : tensor<5x4xf32>
  func.call @printF32(%s1) : (f32) -> ()
  func.call @printNewline() : () -> ()
  %c2 = arith.constant 2 : index
  %s2 = tensor.extract %a[%c3, %c2] : tensor<5x4xf32>
  %s2b = arith.bitcast %s2 : f32 to i32
  %s2i = arith.extsi %s2b : i32 to i64
  func.call @printI64(%s2i) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %s3 = tensor.extract %a[%c3, %c3] : tensor<5x4xf32>
  func.call @printF32(%s3) : (f32) -> ()
  func.call @printNewline() : () -> ()
  return
}
