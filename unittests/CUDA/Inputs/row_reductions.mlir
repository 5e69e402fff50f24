// Row reductions for RowReductionTest.cpp: 11 rows of N elements, three
// outputs per row (an arith.addf sum, an arith.maximumf max and an
// arith.maxnumf max), one function per row length. The build turns them into
// PTX with msamp-gpu-row-reductions (N = 50257: a block per row; the
// others: a warp per row, 8 rows per block: 2 blocks, the last 5 warps
// idle) and embeds it in the test
// (embed_gpu_kernels.py).
#x = affine_map<(r, e) -> (r, e)>
#row = affine_map<(r, e) -> (r)>
func.func @rows_1(%x: memref<11x1xf32>, %sum: memref<11xf32>,
                   %max: memref<11xf32>, %maxnum: memref<11xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<11x1xf32>) outs(%sum, %max, %maxnum : memref<11xf32>, memref<11xf32>, memref<11xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32, %n: f32):
    %s1 = arith.addf %v, %s : f32
    %m1 = arith.maximumf %v, %m : f32
    %n1 = arith.maxnumf %v, %n : f32
    linalg.yield %s1, %m1, %n1 : f32, f32, f32
  }
  return
}
func.func @rows_31(%x: memref<11x31xf32>, %sum: memref<11xf32>,
                   %max: memref<11xf32>, %maxnum: memref<11xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<11x31xf32>) outs(%sum, %max, %maxnum : memref<11xf32>, memref<11xf32>, memref<11xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32, %n: f32):
    %s1 = arith.addf %v, %s : f32
    %m1 = arith.maximumf %v, %m : f32
    %n1 = arith.maxnumf %v, %n : f32
    linalg.yield %s1, %m1, %n1 : f32, f32, f32
  }
  return
}
func.func @rows_32(%x: memref<11x32xf32>, %sum: memref<11xf32>,
                   %max: memref<11xf32>, %maxnum: memref<11xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<11x32xf32>) outs(%sum, %max, %maxnum : memref<11xf32>, memref<11xf32>, memref<11xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32, %n: f32):
    %s1 = arith.addf %v, %s : f32
    %m1 = arith.maximumf %v, %m : f32
    %n1 = arith.maxnumf %v, %n : f32
    linalg.yield %s1, %m1, %n1 : f32, f32, f32
  }
  return
}
func.func @rows_33(%x: memref<11x33xf32>, %sum: memref<11xf32>,
                   %max: memref<11xf32>, %maxnum: memref<11xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<11x33xf32>) outs(%sum, %max, %maxnum : memref<11xf32>, memref<11xf32>, memref<11xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32, %n: f32):
    %s1 = arith.addf %v, %s : f32
    %m1 = arith.maximumf %v, %m : f32
    %n1 = arith.maxnumf %v, %n : f32
    linalg.yield %s1, %m1, %n1 : f32, f32, f32
  }
  return
}
func.func @rows_1000(%x: memref<11x1000xf32>, %sum: memref<11xf32>,
                   %max: memref<11xf32>, %maxnum: memref<11xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<11x1000xf32>) outs(%sum, %max, %maxnum : memref<11xf32>, memref<11xf32>, memref<11xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32, %n: f32):
    %s1 = arith.addf %v, %s : f32
    %m1 = arith.maximumf %v, %m : f32
    %n1 = arith.maxnumf %v, %n : f32
    linalg.yield %s1, %m1, %n1 : f32, f32, f32
  }
  return
}
func.func @rows_50257(%x: memref<11x50257xf32>, %sum: memref<11xf32>,
                   %max: memref<11xf32>, %maxnum: memref<11xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<11x50257xf32>) outs(%sum, %max, %maxnum : memref<11xf32>, memref<11xf32>, memref<11xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32, %n: f32):
    %s1 = arith.addf %v, %s : f32
    %m1 = arith.maximumf %v, %m : f32
    %n1 = arith.maxnumf %v, %n : f32
    linalg.yield %s1, %m1, %n1 : f32, f32, f32
  }
  return
}
