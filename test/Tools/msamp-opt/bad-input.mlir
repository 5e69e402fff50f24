// msamp-opt on bad input: a located diagnostic and a non-zero exit, never a crash.
// RUN: split-file %s %t
// RUN: not msamp-opt %t/malformed.mlir 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not msamp-opt %t/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not msamp-opt %t/verifier.mlir 2>&1 | FileCheck %s --check-prefix=VERIFIER
// RUN: not msamp-opt %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not msamp-opt %t/bad-type.mlir 2>&1 | FileCheck %s --check-prefix=BADTYPE

// MALFORMED: malformed.mlir:2:{{[0-9]+}}: error: expected ','
// UNKNOWN: unknown-op.mlir:2:{{[0-9]+}}: error: Dialect `foo' not found for custom op 'foo.bar'
// VERIFIER: verifier.mlir:2:{{[0-9]+}}: error: 'msamp.gemm' op contraction dimensions differ: a has K = 8, b has K = 7
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// BADTYPE: bad-type.mlir:2:{{[0-9]+}}: error: custom op 'msamp.quantize' invalid kind of type specified

//--- malformed.mlir
func.func @f(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf8E4M3FN> {
  %q = msamp.quantize %x %s : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}
//--- unknown-op.mlir
func.func @f(%x: tensor<4xf32>) {
  %y = foo.bar %x : tensor<4xf32>
  return
}
//--- verifier.mlir
func.func @f(%a: tensor<4x8xf8E4M3FN>, %b: tensor<7x4xf8E4M3FN>, %s: tensor<f32>) {
  %r = msamp.gemm %a, %s, %b, %s : tensor<4x8xf8E4M3FN>, tensor<7x4xf8E4M3FN> -> tensor<4x4xf32>
  return
}
//--- bad-type.mlir
func.func @f(%x: tensor<4xf32>, %s: tensor<f32>) {
  %q = msamp.quantize %x, %s : vector<4xf32> to tensor<4xf8E4M3FN>
  return
}
