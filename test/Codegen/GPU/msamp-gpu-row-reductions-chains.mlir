// msamp-gpu-row-reductions' chains: a warp-per-row reduction, the later
// reductions of the same rows and the elementwise op over those rows that
// reads their results run in one kernel, one warp per row, at the last
// op's place. A result that starts from a constant (its fill folded) is
// combined in every lane after the butterfly and read from that register
// by the later ops; lane 0 still stores it. (Device semantics:
// unittests/CUDA/RowChainTest.cpp.)
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-row-reductions))' | FileCheck %s
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-row-reductions{chains=false}))' | FileCheck %s --check-prefix=OFF
// RUN: msamp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(msamp-gpu-row-reductions),gpu-kernel-outlining,nvvm-attach-target{chip=sm_90 features=+ptx80},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX

// Softmax: max, then the sum of exponentials (reads the max), then the
// normalization (reads both): one launch; the sum's loop and the
// normalization read the max and the sum from registers, not memory.
// CHECK-LABEL: func.func @softmax(
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: memref.load %[[X:alloc[_0-9]*]]
// CHECK: arith.maximumf
// CHECK: %[[MAXR:.+]] = arith.maximumf %{{.+}}, %cst{{.*}} : f32
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[MAXR]], %[[M:alloc[_0-9]*]]
// CHECK: scf.for
// CHECK-NOT: memref.load %[[M]]
// CHECK: arith.subf %{{.+}}, %[[MAXR]]
// CHECK: math.exp
// CHECK: gpu.shuffle xor
// CHECK: %[[SUMR:.+]] = arith.addf %{{.+}}, %cst{{.*}} : f32
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[SUMR]]
// CHECK: scf.for
// CHECK: arith.subf %{{.+}}, %[[MAXR]]
// CHECK: arith.divf %{{.+}}, %[[SUMR]]
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.generic
// CHECK: return
// Without chains: three kernels' worth (two launches, the normalization a
// linalg op for the loop path).
// OFF-LABEL: func.func @softmax(
// OFF: gpu.launch
// OFF: gpu.launch
// OFF: linalg.generic
// PTX-LABEL: gpu.binary @softmax_kernel
// PTX: shfl.sync.bfly.b32
#x = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
func.func @softmax() -> memref<2x8x40xf32> {
  %x = memref.alloc() : memref<2x8x40xf32>
  %p = memref.alloc() : memref<2x8x40xf32>
  %m = memref.alloc() : memref<2x8xf32>
  %s = memref.alloc() : memref<2x8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<2x8xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x8x40xf32>) outs(%m : memref<2x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<2x8xf32>)
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %m : memref<2x8x40xf32>, memref<2x8xf32>) outs(%s : memref<2x8xf32>) {
  ^bb0(%v: f32, %mv: f32, %acc: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %a = arith.addf %e, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #row, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m, %s : memref<2x8x40xf32>, memref<2x8xf32>, memref<2x8xf32>) outs(%p : memref<2x8x40xf32>) {
  ^bb0(%v: f32, %mv: f32, %sv: f32, %o: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %sv : f32
    linalg.yield %q : f32
  }
  return %p : memref<2x8x40xf32>
}

// -----

// Softmax's backward: a row sum of dp * p, then p = p * (dp - r) in place.
// The update writes the row the sum read (each lane only the elements it
// read itself): one launch.
// CHECK-LABEL: func.func @backward_in_place(
// CHECK: gpu.launch
// CHECK: %[[R:.+]] = arith.addf %{{.+}}, %cst{{.*}} : f32
// CHECK: scf.for
// CHECK: arith.subf %{{.+}}, %[[R]]
// CHECK: memref.store %{{.+}}, %[[P:alloc[_0-9]*]]
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.generic
// CHECK: return
#x2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (i)>
func.func @backward_in_place() -> memref<24x64xf32> {
  %dp = memref.alloc() : memref<24x64xf32>
  %p = memref.alloc() : memref<24x64xf32>
  %r = memref.alloc() : memref<24xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<24xf32>)
  linalg.generic {indexing_maps = [#x2, #x2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p : memref<24x64xf32>, memref<24x64xf32>) outs(%r : memref<24xf32>) {
  ^bb0(%g: f32, %pv: f32, %acc: f32):
    %t = arith.mulf %g, %pv : f32
    %a = arith.addf %t, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x2, #x2, #row2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%dp, %p, %r : memref<24x64xf32>, memref<24x64xf32>, memref<24xf32>) outs(%p : memref<24x64xf32>) {
  ^bb0(%g: f32, %pv: f32, %rv: f32, %o: f32):
    %d = arith.subf %g, %rv : f32
    %t = arith.mulf %pv, %d : f32
    linalg.yield %t : f32
  }
  return %p : memref<24x64xf32>
}

// -----

// Left apart: an output that may alias a row the reduction reads (two
// arguments), a result that does not start from a constant (the later op
// would need the value lane 0 stores), and an op in between that writes a
// buffer of the chain.
// CHECK-LABEL: func.func @aliasing_arguments(
// CHECK: gpu.launch
// CHECK: linalg.generic
// CHECK-LABEL: func.func @loaded_start(
// CHECK: gpu.launch
// CHECK: linalg.generic
// CHECK-LABEL: func.func @written_between(
// CHECK: gpu.launch
// CHECK: linalg.fill
// CHECK: linalg.generic
#x2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (i)>
func.func @aliasing_arguments(%x: memref<24x64xf32>, %y: memref<24x64xf32>) {
  %r = memref.alloc() : memref<24xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<24xf32>)
  linalg.generic {indexing_maps = [#x2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<24x64xf32>) outs(%r : memref<24xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x2, #row2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<24x64xf32>, memref<24xf32>) outs(%y : memref<24x64xf32>) {
  ^bb0(%v: f32, %rv: f32, %o: f32):
    %d = arith.divf %v, %rv : f32
    linalg.yield %d : f32
  }
  return
}
func.func @loaded_start(%r: memref<24xf32>) -> memref<24x64xf32> {
  %x = memref.alloc() : memref<24x64xf32>
  %y = memref.alloc() : memref<24x64xf32>
  linalg.generic {indexing_maps = [#x2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<24x64xf32>) outs(%r : memref<24xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#x2, #row2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<24x64xf32>, memref<24xf32>) outs(%y : memref<24x64xf32>) {
  ^bb0(%v: f32, %rv: f32, %o: f32):
    %d = arith.divf %v, %rv : f32
    linalg.yield %d : f32
  }
  return %y : memref<24x64xf32>
}
func.func @written_between() -> memref<24x64xf32> {
  %x = memref.alloc() : memref<24x64xf32>
  %y = memref.alloc() : memref<24x64xf32>
  %r = memref.alloc() : memref<24xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<24xf32>)
  linalg.generic {indexing_maps = [#x2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<24x64xf32>) outs(%r : memref<24xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  }
  linalg.fill ins(%zero : f32) outs(%x : memref<24x64xf32>)
  linalg.generic {indexing_maps = [#x2, #row2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<24x64xf32>, memref<24xf32>) outs(%y : memref<24x64xf32>) {
  ^bb0(%v: f32, %rv: f32, %o: f32):
    %d = arith.divf %v, %rv : f32
    linalg.yield %d : f32
  }
  return %y : memref<24x64xf32>
}

// -----

// Cross-entropy over long rows (>= block-threshold: a block per row): the
// row max with the target pick, the sum of exponentials and the gradient
// in one kernel. Each reduction is the block form (a butterfly per warp,
// the warps' values through workgroup memory, the first warp's
// butterfly); lane 0 of the first warp also writes a result that starts
// from a constant to a broadcast slot, which every thread reads after a
// second barrier. The loss sum between the sum and the gradient reads the
// chain's results: it moves after the kernel.
// CHECK-LABEL: func.func @cross_entropy(
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %c256{{.*}} workgroup(%[[WG:.+]] : memref<27xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: scf.if
// CHECK: memref.store %[[MAX:.+]], %[[M:alloc[_0-9]*]]
// CHECK: memref.store %[[MAX]], %[[WG]][%{{.+}}] : memref<27xf32
// CHECK: memref.store %[[T:.+]], %[[TB:alloc[_0-9]*]]
// CHECK: memref.store %[[T]], %[[WG]]
// CHECK: gpu.barrier
// CHECK: %[[MAXR:.+]] = memref.load %[[WG]][%{{.+}}] : memref<27xf32
// CHECK: scf.for
// CHECK-NOT: memref.load %[[M]]
// CHECK: arith.subf %{{.+}}, %[[MAXR]]
// CHECK: math.exp
// CHECK: gpu.barrier
// CHECK: memref.store %[[SUM:.+]], %[[S:alloc[_0-9]*]]
// CHECK: memref.store %[[SUM]], %[[WG]]
// CHECK: gpu.barrier
// CHECK: %[[SUMR:.+]] = memref.load %[[WG]]
// CHECK: scf.for
// CHECK-NOT: memref.load %[[M]]
// CHECK-NOT: memref.load %[[S]]
// CHECK: arith.subf %{{.+}}, %[[MAXR]]
// CHECK: arith.divf %{{.+}}, %[[SUMR]]
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[M]], %[[S]], %[[TB]] :
// CHECK-NOT: linalg.generic
// CHECK: return
// The loss into an argument that may alias the labels: the max and sum
// are one kernel (no broadcast of the sum, the last reduction), the loss
// and the gradient stay after it in their order.
// CHECK-LABEL: func.func @loss_argument(
// CHECK: gpu.launch {{.*}} workgroup(%{{.+}} : memref<26xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// Without chains: a block-per-row kernel each for the reductions, the
// loss and the gradient linalg ops in their places.
// OFF-LABEL: func.func @cross_entropy(
// OFF: gpu.launch {{.*}} workgroup(%{{.+}} : memref<16xf32
// OFF: gpu.launch {{.*}} workgroup(%{{.+}} : memref<8xf32
// OFF: linalg.generic {{.*}}iterator_types = ["reduction"]
// OFF: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// PTX-LABEL: gpu.binary @cross_entropy_kernel
// PTX: .shared
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
// PTX: bar.sync
// PTX: bar.sync
// PTX: bar.sync
#ce_x = affine_map<(i, j) -> (i, j)>
#ce_row = affine_map<(i, j) -> (i)>
#ce_all = affine_map<(i) -> (i)>
#ce_scalar = affine_map<(i) -> ()>
func.func @cross_entropy(%labels: memref<4xi64>) -> (memref<4x50257xf32>, memref<f32>) {
  %loss = memref.alloc() : memref<f32>
  %x = memref.alloc() : memref<4x50257xf32>
  %g = memref.alloc() : memref<4x50257xf32>
  %m = memref.alloc() : memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  %s = memref.alloc() : memref<4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<4xf32>)
  linalg.fill ins(%zero : f32) outs(%t : memref<4xf32>)
  linalg.generic {indexing_maps = [#ce_x, #ce_row, #ce_row, #ce_row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : memref<4x50257xf32>, memref<4xi64>) outs(%m, %t : memref<4xf32>, memref<4xf32>) {
  ^bb0(%v: f32, %l: i64, %macc: f32, %tacc: f32):
    %mx = arith.maximumf %v, %macc : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %l : i64
    %pick = arith.select %hit, %v, %zero : f32
    %ta = arith.addf %pick, %tacc : f32
    linalg.yield %mx, %ta : f32, f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<4xf32>)
  linalg.generic {indexing_maps = [#ce_x, #ce_row, #ce_row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<4x50257xf32>, memref<4xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%v: f32, %mv: f32, %acc: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %a = arith.addf %e, %acc : f32
    linalg.yield %a : f32
  }
  // The loss: sum over rows of m + log(s) - t, between the sum and the
  // gradient.
  linalg.fill ins(%zero : f32) outs(%loss : memref<f32>)
  linalg.generic {indexing_maps = [#ce_all, #ce_all, #ce_all, #ce_scalar], iterator_types = ["reduction"]}
      ins(%m, %s, %t : memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%loss : memref<f32>) {
  ^bb0(%mv: f32, %sv: f32, %tv: f32, %acc: f32):
    %ls = math.log %sv : f32
    %lse = arith.addf %mv, %ls : f32
    %nll = arith.subf %lse, %tv : f32
    %a = arith.addf %nll, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#ce_x, #ce_row, #ce_row, #ce_row, #ce_x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s, %labels : memref<4x50257xf32>, memref<4xf32>, memref<4xf32>, memref<4xi64>) outs(%g : memref<4x50257xf32>) {
  ^bb0(%v: f32, %mv: f32, %sv: f32, %l: i64, %o: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %sv : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %l : i64
    %oh = arith.select %hit, %one, %zero : f32
    %r = arith.subf %p, %oh : f32
    linalg.yield %r : f32
  }
  return %g, %loss : memref<4x50257xf32>, memref<f32>
}
func.func @loss_argument(%labels: memref<4xi64>, %loss: memref<f32>) -> memref<4x50257xf32> {
  %x = memref.alloc() : memref<4x50257xf32>
  %g = memref.alloc() : memref<4x50257xf32>
  %m = memref.alloc() : memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  %s = memref.alloc() : memref<4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<4xf32>)
  linalg.fill ins(%zero : f32) outs(%t : memref<4xf32>)
  linalg.generic {indexing_maps = [#ce_x, #ce_row, #ce_row, #ce_row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : memref<4x50257xf32>, memref<4xi64>) outs(%m, %t : memref<4xf32>, memref<4xf32>) {
  ^bb0(%v: f32, %l: i64, %macc: f32, %tacc: f32):
    %mx = arith.maximumf %v, %macc : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %l : i64
    %pick = arith.select %hit, %v, %zero : f32
    %ta = arith.addf %pick, %tacc : f32
    linalg.yield %mx, %ta : f32, f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<4xf32>)
  linalg.generic {indexing_maps = [#ce_x, #ce_row, #ce_row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<4x50257xf32>, memref<4xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%v: f32, %mv: f32, %acc: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %a = arith.addf %e, %acc : f32
    linalg.yield %a : f32
  }
  // The loss into an argument, which may alias the labels the gradient
  // reads: the fill moves after the kernel, so the gradient may not join.
  linalg.fill ins(%zero : f32) outs(%loss : memref<f32>)
  linalg.generic {indexing_maps = [#ce_all, #ce_all, #ce_all, #ce_scalar], iterator_types = ["reduction"]}
      ins(%m, %s, %t : memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%loss : memref<f32>) {
  ^bb0(%mv: f32, %sv: f32, %tv: f32, %acc: f32):
    %ls = math.log %sv : f32
    %lse = arith.addf %mv, %ls : f32
    %nll = arith.subf %lse, %tv : f32
    %a = arith.addf %nll, %acc : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#ce_x, #ce_row, #ce_row, #ce_row, #ce_x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s, %labels : memref<4x50257xf32>, memref<4xf32>, memref<4xf32>, memref<4xi64>) outs(%g : memref<4x50257xf32>) {
  ^bb0(%v: f32, %mv: f32, %sv: f32, %l: i64, %o: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %sv : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %ji, %l : i64
    %oh = arith.select %hit, %one, %zero : f32
    %r = arith.subf %p, %oh : f32
    linalg.yield %r : f32
  }
  return %g : memref<4x50257xf32>
}
