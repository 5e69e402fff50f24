// msamp-opt registers msamp and the upstream dialects a pipeline needs.
// RUN: msamp-opt --show-dialects | FileCheck %s
// CHECK-DAG: arith
// CHECK-DAG: bufferization
// CHECK-DAG: func
// CHECK-DAG: gpu
// CHECK-DAG: linalg
// CHECK-DAG: llvm
// CHECK-DAG: math
// CHECK-DAG: memref
// CHECK-DAG: ml_program
// CHECK-DAG: msamp
// CHECK-DAG: nvvm
// CHECK-DAG: scf
// CHECK-DAG: shard
// CHECK-DAG: tensor
