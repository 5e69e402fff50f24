// Executed by ../msamp-gpu-one-hot-scatter.mlir: @grad (a fill of +0.0 and
// the one-hot reduction, which the pass makes a scatter kernel) against
// @reference, the one-hot reduction spelled as scalar loops (which the pass
// leaves alone), on 10 ids into a 7-row table: 6 (the last row) three
// times, 0 twice, 3 and 4 once, and -1, 7 (the row count) and 100, which
// match no row. The gradient has -0.0, +-Inf and NaN. Prints the number of
// output elements whose bits differ from the reference, then four sums
// (the third as its bits: 0x3F800000 is 1.0), the count of output
// elements that are exactly +0.0 (the 3 rows no id names, and row 6's
// column of -0.0 terms: 13) and that of the NaNs left in the row after the
// output (4: nothing written out of bounds).
// EXEC: 0
// EXEC-NEXT: 2.25
// EXEC-NEXT: 0
// EXEC-NEXT: {{^1065353216$}}
// EXEC-NEXT: 5
// EXEC-NEXT: 13
// EXEC-NEXT: 4

#ids = affine_map<(v, j, n) -> (n)>
#g = affine_map<(v, j, n) -> (n, j)>
#out = affine_map<(v, j, n) -> (v, j)>

memref.global "private" constant @ids : memref<10xi64> =
    dense<[6, 0, 3, -1, 6, 7, 0, 4, 100, 6]>
// Row n of the gradient goes to output row ids[n]: rows 0, 4, 9 to 6
// (column 0: 1.5 + 0.5 + 0.25 = 2.25; column 1: -0.0 three times, the
// reduction's result +0.0; column 2: 1 + 2^-24 + 2^-24 is 1.0 in this
// order, 1 + 2^-23 in the reverse one), rows 1 and 6 to 0 (column 0:
// 2 + 3 = 5), row 2 to 3, row 7 to 4; rows 3, 5, 8 nowhere (NaN, Inf).
memref.global "private" constant @g : memref<10x4xf32> =
    dense<[[1.5, -0.0, 1.0, 1.0],
           [2.0, -0.0, 9.0, 9.0],
           [8.0, 8.0, 8.0, 0x7FC00000],
           [0x7FC00000, 9.0, 9.0, 9.0],
           [0.5, -0.0, 0x33800000, 2.0],
           [0x7F800000, 7.0, 7.0, 7.0],
           [3.0, 1.0e-40, -0.0, 1.0],
           [-1.0, 0xFF800000, 4.0, -4.0],
           [0x7FC00000, 0x7F800000, 1.0, 1.0],
           [0.25, -0.0, 0x33800000, 3.0]]>

func.func private @printI64(i64)
func.func private @printF32(f32)
func.func private @printNewline()

// The output is rows 0-6 of an 8-row buffer of NaNs: row 7, which id 7
// would name, must keep them (nothing is written out of bounds).
func.func @grad(%ids: memref<10xi64>, %g: memref<10x4xf32>) -> memref<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %big = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%nan : f32) outs(%big : memref<8x4xf32>)
  %out = memref.subview %big[0, 0] [7, 4] [1, 1] : memref<8x4xf32> to memref<7x4xf32, strided<[4, 1]>>
  linalg.fill ins(%zero : f32) outs(%out : memref<7x4xf32, strided<[4, 1]>>)
  linalg.generic {indexing_maps = [#ids, #g, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %g : memref<10xi64>, memref<10x4xf32>) outs(%out : memref<7x4xf32, strided<[4, 1]>>) {
  ^bb0(%id: i64, %x: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %vi, %id : i64
    %s = arith.select %hit, %x, %zero : f32
    %a = arith.addf %s, %acc : f32
    linalg.yield %a : f32
  }
  return %big : memref<8x4xf32>
}

func.func @reference(%ids: memref<10xi64>, %g: memref<10x4xf32>, %out: memref<7x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  scf.for %v = %c0 to %c7 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %sum = scf.for %n = %c0 to %c10 step %c1 iter_args(%acc = %zero) -> (f32) {
        %id = memref.load %ids[%n] : memref<10xi64>
        %vi = arith.index_cast %v : index to i64
        %hit = arith.cmpi eq, %vi, %id : i64
        %x = memref.load %g[%n, %j] : memref<10x4xf32>
        %s = arith.select %hit, %x, %zero : f32
        %a = arith.addf %s, %acc : f32
        scf.yield %a : f32
      }
      memref.store %sum, %out[%v, %j] : memref<7x4xf32>
    }
  }
  return
}

func.func @main() {
  %ids = memref.get_global @ids : memref<10xi64>
  %g = memref.get_global @g : memref<10x4xf32>
  %b = memref.alloc() : memref<7x4xf32>
  // Garbage in the reference's output first, as in @grad's.
  %nan = arith.constant 0x7FC00000 : f32
  linalg.fill ins(%nan : f32) outs(%b : memref<7x4xf32>)
  %big = func.call @grad(%ids, %g) : (memref<10xi64>, memref<10x4xf32>) -> memref<8x4xf32>
  %a = memref.subview %big[0, 0] [7, 4] [1, 1] : memref<8x4xf32> to memref<7x4xf32, strided<[4, 1]>>
  func.call @reference(%ids, %g, %b) : (memref<10xi64>, memref<10x4xf32>, memref<7x4xf32>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %zi = arith.constant 0 : i32
  %diff, %zeros = scf.for %v = %c0 to %c7 step %c1 iter_args(%d = %z, %e = %z) -> (i64, i64) {
    %dv, %ev = scf.for %j = %c0 to %c4 step %c1 iter_args(%dj = %d, %ej = %e) -> (i64, i64) {
      %x = memref.load %a[%v, %j] : memref<7x4xf32, strided<[4, 1]>>
      %y = memref.load %b[%v, %j] : memref<7x4xf32>
      %xb = arith.bitcast %x : f32 to i32
      %yb = arith.bitcast %y : f32 to i32
      %ne = arith.cmpi ne, %xb, %yb : i32
      %inc = arith.select %ne, %one, %z : i64
      %dn = arith.addi %dj, %inc : i64
      %isz = arith.cmpi eq, %xb, %zi : i32
      %zinc = arith.select %isz, %one, %z : i64
      %en = arith.addi %ej, %zinc : i64
      scf.yield %dn, %en : i64, i64
    }
    scf.yield %dv, %ev : i64, i64
  }
  func.call @printI64(%diff) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %s0 = memref.load %a[%c6, %c0] : memref<7x4xf32, strided<[4, 1]>>
  func.call @printF32(%s0) : (f32) -> ()
  func.call @printNewline() : () -> ()
  // +0.0 (prints 0, a -0.0 would print -0).
  %s1 = memref.load %a[%c6, %c1] : memref<7x4xf32, strided<[4, 1]>>
  func.call @printF32(%s1) : (f32) -> ()
  func.call @printNewline() : () -> ()
  %s2 = memref.load %a[%c6, %c2] : memref<7x4xf32, strided<[4, 1]>>
  %s2b = arith.bitcast %s2 : f32 to i32
  %s2i = arith.extsi %s2b : i32 to i64
  func.call @printI64(%s2i) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %s3 = memref.load %a[%c0, %c0] : memref<7x4xf32, strided<[4, 1]>>
  func.call @printF32(%s3) : (f32) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%zeros) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %nanBits = arith.bitcast %nan : f32 to i32
  %kept = scf.for %j = %c0 to %c4 step %c1 iter_args(%k = %z) -> (i64) {
    %x = memref.load %big[%c7, %j] : memref<8x4xf32>
    %xb = arith.bitcast %x : f32 to i32
    %same = arith.cmpi eq, %xb, %nanBits : i32
    %inc = arith.select %same, %one, %z : i64
    %kn = arith.addi %k, %inc : i64
    scf.yield %kn : i64
  }
  func.call @printI64(%kept) : (i64) -> ()
  func.call @printNewline() : () -> ()
  memref.dealloc %big : memref<8x4xf32>
  memref.dealloc %b : memref<7x4xf32>
  return
}
