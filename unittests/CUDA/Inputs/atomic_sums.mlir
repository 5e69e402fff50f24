// Full sums for AtomicSumsTest.cpp, made GPU kernels at build time by
// msamp-gpu-atomic-full-reductions and msamp-gpu-block-atomic-sums (then
// the GPU pipeline's kernel lowering) and embedded (embed_gpu_kernels.py):
//  * @big: f64 sum of squares of 1,000,003 f32 (> small-sum): 125,001
//    threads of 8 accumulators, the last step masked, 489 blocks of 256;
//  * @matrix: f64 sum of squares of a contiguous 700 x 300 f32 matrix read
//    through a 1-d view: 26,250 threads, one whole step of 8, 103 blocks;
//  * @small: f32 sum of 1,000 f32 (<= small-sum): one element per thread,
//    4 blocks of 256, the last 24 threads adding -0.0.
#v = affine_map<(i) -> (i)>
#v0 = affine_map<(i) -> ()>
#m = affine_map<(i, j) -> (i, j)>
#m0 = affine_map<(i, j) -> ()>
func.func @big(%x: memref<1000003xf32>, %acc: memref<f64>) {
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%x : memref<1000003xf32>) outs(%acc : memref<f64>) {
  ^bb0(%a: f32, %o: f64):
    %e = arith.extf %a : f32 to f64
    %s = arith.mulf %e, %e : f64
    %t = arith.addf %o, %s : f64
    linalg.yield %t : f64
  }
  return
}
func.func @matrix(%x: memref<700x300xf32>, %acc: memref<f64>) {
  linalg.generic {indexing_maps = [#m, #m0], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<700x300xf32>) outs(%acc : memref<f64>) {
  ^bb0(%a: f32, %o: f64):
    %e = arith.extf %a : f32 to f64
    %s = arith.mulf %e, %e : f64
    %t = arith.addf %o, %s : f64
    linalg.yield %t : f64
  }
  return
}
func.func @small(%x: memref<1000xf32>, %acc: memref<f32>) {
  linalg.generic {indexing_maps = [#v, #v0], iterator_types = ["reduction"]}
      ins(%x : memref<1000xf32>) outs(%acc : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  return
}
