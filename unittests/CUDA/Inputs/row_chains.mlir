// Row chains for RowChainTest.cpp (msamp-gpu-row-reductions' chains: a
// row reduction, the later reductions of the same rows and the elementwise
// op that reads their results, in one warp-per-row kernel), shaped like
// attention's causal softmax over 3 x 37 rows of 37 (111 rows: the last
// block's last warp has no row; 37 elements: lanes 0-4 take two each).
// Every buffer is the function's own, as in a compiled step (a fill folds
// into the kernel only for a buffer nothing outside sees, and arguments
// may alias each other, which would keep the ops apart); the kernel takes
// them as parameters and the test passes its own. Constants are defined
// in the bodies so that the kernels take no scalar parameters. The build
// lowers them to PTX and embeds them in the test (embed_gpu_kernels.py).
#x3 = affine_map<(b, i, j) -> (b, i, j)>
#row3 = affine_map<(b, i, j) -> (b, i)>

// softmax_fwd: m = max over the causal row (j <= i), s = sum of
// exp((x - m) * 0.125) over it, p = exp((x - m) * 0.125) / s on it and 0
// off it. m and s start from fills of constants (-inf, 0) and reach p in
// registers. Kernel parameters: x, m, s, p.
func.func @softmax_fwd() {
  %x = memref.alloc() : memref<3x37x37xf32>
  %p = memref.alloc() : memref<3x37x37xf32>
  %m = memref.alloc() : memref<3x37xf32>
  %s = memref.alloc() : memref<3x37xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<3x37xf32>)
  linalg.generic {indexing_maps = [#x3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<3x37x37xf32>) outs(%m : memref<3x37xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %j = linalg.index 2 : index
    %i = linalg.index 1 : index
    %on = arith.cmpi ule, %j, %i : index
    %mx = arith.maximumf %v, %acc : f32
    %r = arith.select %on, %mx, %acc : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<3x37xf32>)
  linalg.generic {indexing_maps = [#x3, #row3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %m : memref<3x37x37xf32>, memref<3x37xf32>) outs(%s : memref<3x37xf32>) {
  ^bb0(%v: f32, %mv: f32, %acc: f32):
    %c = arith.constant 0.125 : f32
    %z = arith.constant 0.0 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %d = arith.subf %v, %mv : f32
    %sc = arith.mulf %d, %c : f32
    %e = math.exp %sc : f32
    %on = arith.cmpi ule, %j, %i : index
    %t = arith.select %on, %e, %z : f32
    %a = arith.addf %t, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x3, #row3, #row3, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m, %s : memref<3x37x37xf32>, memref<3x37xf32>, memref<3x37xf32>) outs(%p : memref<3x37x37xf32>) {
  ^bb0(%v: f32, %mv: f32, %sv: f32, %o: f32):
    %c = arith.constant 0.125 : f32
    %z = arith.constant 0.0 : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %d = arith.subf %v, %mv : f32
    %sc = arith.mulf %d, %c : f32
    %e = math.exp %sc : f32
    %on = arith.cmpi ule, %j, %i : index
    %t = arith.select %on, %e, %z : f32
    %q = arith.divf %t, %sv : f32
    linalg.yield %q : f32
  }
  return
}

// softmax_bwd: r = sum of dp * p over the row, then p = p * (dp - r) *
// 0.125 in place (the output is the row the reduction read). Kernel
// parameters: dp, p, r.
func.func @softmax_bwd() {
  %dp = memref.alloc() : memref<3x37x37xf32>
  %p = memref.alloc() : memref<3x37x37xf32>
  %r = memref.alloc() : memref<3x37xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<3x37xf32>)
  linalg.generic {indexing_maps = [#x3, #x3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dp, %p : memref<3x37x37xf32>, memref<3x37x37xf32>) outs(%r : memref<3x37xf32>) {
  ^bb0(%g: f32, %pv: f32, %acc: f32):
    %t = arith.mulf %g, %pv : f32
    %a = arith.addf %t, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x3, #x3, #row3, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dp, %p, %r : memref<3x37x37xf32>, memref<3x37x37xf32>, memref<3x37xf32>) outs(%p : memref<3x37x37xf32>) {
  ^bb0(%g: f32, %pv: f32, %rv: f32, %o: f32):
    %c = arith.constant 0.125 : f32
    %d = arith.subf %g, %rv : f32
    %t = arith.mulf %pv, %d : f32
    %q = arith.mulf %t, %c : f32
    linalg.yield %q : f32
  }
  return
}

// cross_entropy: rows of 50,257 (a vocabulary; >= block-threshold: a block
// of 256 threads per row, 196 full strides and 81 elements in the last).
// m = max of the row with t = the label's logit (one generic, two
// outputs), s = sum of exp(x - m), then the loss sum over the rows (reads
// m, s and t: it moves after the kernel), and g = exp(x - m) / s - onehot.
// m, t and s start from fills (-inf, 0, 0); m and s reach g through
// workgroup memory. Kernel parameters (in the order of first use): x,
// labels, m, t, s, g.
#xr = affine_map<(i, j) -> (i, j)>
#rr = affine_map<(i, j) -> (i)>
#all = affine_map<(i) -> (i)>
#none = affine_map<(i) -> ()>
func.func @cross_entropy() {
  %x = memref.alloc() : memref<5x50257xf32>
  %labels = memref.alloc() : memref<5xi64>
  %g = memref.alloc() : memref<5x50257xf32>
  %m = memref.alloc() : memref<5xf32>
  %t = memref.alloc() : memref<5xf32>
  %s = memref.alloc() : memref<5xf32>
  %loss = memref.alloc() : memref<f32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<5xf32>)
  linalg.fill ins(%zero : f32) outs(%t : memref<5xf32>)
  linalg.generic {indexing_maps = [#xr, #rr, #rr, #rr], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : memref<5x50257xf32>, memref<5xi64>) outs(%m, %t : memref<5xf32>, memref<5xf32>) {
  ^bb0(%v: f32, %l: i64, %macc: f32, %tacc: f32):
    %z = arith.constant 0.0 : f32
    %mx = arith.maximumf %v, %macc : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %l : i64
    %pick = arith.select %hit, %v, %z : f32
    %ta = arith.addf %pick, %tacc : f32
    linalg.yield %mx, %ta : f32, f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<5xf32>)
  linalg.generic {indexing_maps = [#xr, #rr, #rr], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<5x50257xf32>, memref<5xf32>) outs(%s : memref<5xf32>) {
  ^bb0(%v: f32, %mv: f32, %acc: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %a = arith.addf %e, %acc : f32
    linalg.yield %a : f32
  }
  linalg.fill ins(%zero : f32) outs(%loss : memref<f32>)
  linalg.generic {indexing_maps = [#all, #all, #all, #none], iterator_types = ["reduction"]}
      ins(%m, %s, %t : memref<5xf32>, memref<5xf32>, memref<5xf32>) outs(%loss : memref<f32>) {
  ^bb0(%mv: f32, %sv: f32, %tv: f32, %acc: f32):
    %ls = math.log %sv : f32
    %lse = arith.addf %mv, %ls : f32
    %nll = arith.subf %lse, %tv : f32
    %a = arith.addf %nll, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#xr, #rr, #rr, #rr, #xr], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s, %labels : memref<5x50257xf32>, memref<5xf32>, memref<5xf32>, memref<5xi64>) outs(%g : memref<5x50257xf32>) {
  ^bb0(%v: f32, %mv: f32, %sv: f32, %l: i64, %o: f32):
    %one = arith.constant 1.0 : f32
    %z = arith.constant 0.0 : f32
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %sv : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %l : i64
    %oh = arith.select %hit, %one, %z : f32
    %r = arith.subf %p, %oh : f32
    linalg.yield %r : f32
  }
  return
}
