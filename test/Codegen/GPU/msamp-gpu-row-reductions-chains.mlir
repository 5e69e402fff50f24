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
