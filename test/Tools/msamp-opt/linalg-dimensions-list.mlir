// MLIR 22's parsers of linalg.reduce, linalg.broadcast (`dimensions = [...]`)
// and linalg.transpose (`permutation = [...]`) dereference a null attribute
// after any malformed list (a segfault; docs/Robustness.md). msamp checks
// those lists before parsing: a located error, exit 1 (`not` fails on a
// crash). Lists MLIR takes (hex, negative, empty, comments) still parse.
// RUN: msamp-opt --split-input-file --verify-diagnostics %s
// RUN: not msamp-compile %s -o %t 2>&1 | FileCheck %s
// CHECK: linalg-dimensions-list.mlir:[[# @LINE + 5]]:88: error: expected 'dimensions = [' and 64-bit integers separated by ',' and ']'
// CHECK-NOT: error

func.func @too_large(%a: tensor<4x2xf32>, %o: tensor<f32>) -> tensor<f32> {
  // expected-error @below {{expected 'dimensions = [' and 64-bit integers separated by ',' and ']'}}
  %r = linalg.reduce ins(%a : tensor<4x2xf32>) outs(%o : tensor<f32>) dimensions = [0, 9223372036854775808]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// -----

func.func @not_a_list(%a: tensor<4x2xf32>, %o: tensor<f32>) -> tensor<f32> {
  // expected-error @below {{expected 'dimensions = [' and 64-bit integers}}
  %r = linalg.reduce ins(%a : tensor<4x2xf32>) outs(%o : tensor<f32>) dimensions = 5
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// -----

func.func @unclosed(%a: tensor<4x2xf32>, %o: tensor<f32>) -> tensor<f32> {
  // At the token that should have been ',' or ']'.
  // expected-error @+2 {{expected 'dimensions = [' and 64-bit integers}}
  %r = linalg.reduce ins(%a : tensor<4x2xf32>) outs(%o : tensor<f32>) dimensions = [0, 1
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// -----

func.func @transpose(%a: tensor<4x2xf32>, %o: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{expected 'permutation = [' and 64-bit integers}}
  %r = linalg.transpose ins(%a : tensor<4x2xf32>) outs(%o : tensor<2x4xf32>) permutation = [1, z]
  return %r : tensor<2x4xf32>
}

// -----

func.func @broadcast(%a: tensor<4xf32>, %o: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @below {{expected 'dimensions = [' and 64-bit integers}}
  %r = linalg.broadcast ins(%a : tensor<4xf32>) outs(%o : tensor<4x2xf32>) dimensions = [1.5]
  return %r : tensor<4x2xf32>
}

// -----

// Accepted by the check (MLIR's own parser and verifier decide).
func.func @fine(%a: tensor<4x2xf32>, %o: tensor<f32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %r = linalg.reduce ins(%a : tensor<4x2xf32>) outs(%o : tensor<f32>) dimensions = [ 0x0 , // first
         1 ]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %p = linalg.transpose ins(%a : tensor<4x2xf32>) outs(%t : tensor<2x4xf32>) permutation = [1, 0]
  return %r : tensor<f32>
}

// -----

func.func @verifier_decides(%a: tensor<4xf32>, %o: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @below {{'linalg.broadcast' op dimension 0 is out of range. expected range: [0, 1], got: -1}}
  %r = linalg.broadcast ins(%a : tensor<4xf32>) outs(%o : tensor<4x2xf32>) dimensions = [-1]
  return %r : tensor<4x2xf32>
}
