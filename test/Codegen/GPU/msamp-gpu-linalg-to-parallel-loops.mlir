// msamp-gpu-linalg-to-parallel-loops: convert-linalg-to-parallel-loops'
// rewrite (linalg ops on buffers as scf.parallel over their parallel
// dimensions, reductions as scf.for inside), driven without region
// simplification, which made the upstream pass grow faster than the GPU
// step (issue 19). After canonicalize and cse the IR is the upstream
// pass's, op for op.
// RUN: msamp-opt %s --pass-pipeline="builtin.module(func.func(convert-linalg-to-parallel-loops,canonicalize,cse))" -o %t.upstream.mlir
// RUN: msamp-opt %s --pass-pipeline="builtin.module(func.func(msamp-gpu-linalg-to-parallel-loops,canonicalize,cse))" -o %t.ours.mlir
// RUN: diff %t.upstream.mlir %t.ours.mlir
// RUN: msamp-opt %s --pass-pipeline="builtin.module(func.func(msamp-gpu-linalg-to-parallel-loops))" | FileCheck %s
// A linalg op on tensors (not bufferized) is left as it is, as upstream.
// RUN: msamp-opt %S/Inputs/linalg-on-tensors.mlir --pass-pipeline="builtin.module(func.func(msamp-gpu-linalg-to-parallel-loops))" | FileCheck %s --check-prefix=TENSOR
// TENSOR: linalg.generic
// TENSOR-NOT: scf.parallel

// CHECK-LABEL: func.func @step(
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = ({{.+}}) to (%c4, %c8)
// CHECK: math.exp
// CHECK: scf.parallel (%[[I:.+]]) = ({{.+}}) to (%c4
// CHECK-NEXT: scf.for
// CHECK: arith.addf
// CHECK: %[[DIM:.+]] = memref.dim %arg3
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = ({{.+}}) to (%[[DIM]], %c8
// CHECK: arith.negf
// CHECK-NOT: linalg.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %s: memref<4xf32>, %d: memref<?x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : memref<?x8xf32>) outs(%d : memref<?x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}
