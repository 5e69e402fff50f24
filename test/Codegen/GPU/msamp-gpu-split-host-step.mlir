// RUN: msamp-opt %s --msamp-gpu-split-host-step=max-ops=2 | FileCheck %s
// RUN: not msamp-opt %s --msamp-gpu-split-host-step=max-ops=0 2>&1 | FileCheck %s --check-prefix=BAD
// The pipeline cuts @train_step before gpu-to-llvm: more than one block
// reaches the LLVM dialect (on the CPU target's pipeline only
// msamp-split-straight-lines cuts, after the lowering).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -m msamp.graphs transformer-lm --layers 1 -o %t/lm.mlir
// RUN: msamp-opt %t/lm.mlir --msamp-o2 -o %t/step.mlir
// RUN: msamp-opt %t/step.mlir --msamp-lower-to-gpu --mlir-print-ir-after=msamp-gpu-split-host-step -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE

// BAD: error: msamp-gpu-split-host-step: max-ops must be at least 1

// A host function is cut into blocks of at most two operations plus a
// cf.br to the next, in order; values defined in an earlier block are used
// in later ones as they are (each block dominates the next). The operations
// inside a region stay where they are.
// CHECK-LABEL: func.func @step(%{{.*}}: memref<4xf32>, %{{.*}}: index)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: cf.br ^[[B1:bb[0-9]+]]
// CHECK-NEXT: ^[[B1]]:
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @f(%[[A]])
// CHECK-NEXT: cf.br ^[[B2:bb[0-9]+]]
// CHECK-NEXT: ^[[B2]]:
// CHECK-NEXT: call @f(%{{.*}})
// CHECK-NEXT: scf.for %{{.*}} = %[[C0]] to %{{.*}} step %[[C1]] {
// CHECK-NEXT: call @f(%[[A]])
// CHECK-NEXT: call @f(%[[A]])
// CHECK-NEXT: }
// CHECK-NEXT: cf.br ^[[B3:bb[0-9]+]]
// CHECK-NEXT: ^[[B3]]:
// CHECK-NEXT: call @f(%[[A]])
// CHECK-NEXT: return
func.func private @f(memref<4xf32>)
func.func @step(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  func.call @f(%a) : (memref<4xf32>) -> ()
  func.call @f(%x) : (memref<4xf32>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    func.call @f(%a) : (memref<4xf32>) -> ()
    func.call @f(%a) : (memref<4xf32>) -> ()
  }
  func.call @f(%a) : (memref<4xf32>) -> ()
  return
}

// A function of at most max-ops operations keeps its one block.
// CHECK-LABEL: func.func @short
// CHECK-NOT: cf.br
// CHECK: return
func.func @short(%x: memref<4xf32>) {
  call @f(%x) : (memref<4xf32>) -> ()
  call @f(%x) : (memref<4xf32>) -> ()
  return
}

// PIPELINE: func.func @train_step(
// PIPELINE: cf.br ^bb1
// PIPELINE: ^bb1:
// PIPELINE: gpu.launch_func
