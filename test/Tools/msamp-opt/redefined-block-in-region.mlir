// Malformed input that makes MLIR 22's own parser write to freed memory while
// it cleans up (docs/Robustness.md): a name used in one region (%x in the
// first linalg.generic) is resolved by a definition in a later region that
// then fails to parse. msamp-opt must give the located parse error, exit 1
// (`not` fails on a crash) and, under valgrind, touch no freed memory (every
// valgrind report line starts with "==").
// RUN: not msamp-opt %s 2>&1 | FileCheck %s --check-prefix=BLOCKARG
// RUN: not valgrind -q msamp-opt %s 2>&1 | FileCheck %s --check-prefix=BLOCKARG --implicit-check-not='=='

// Each case separately, errors checked in place (exit 0 when they match),
// under valgrind.
// RUN: valgrind -q --error-exitcode=99 msamp-opt --split-input-file --verify-diagnostics %s 2>&1 | FileCheck %s --check-prefix=SPLIT --allow-empty --implicit-check-not='=='

func.func @block_argument(%t: tensor<f32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []}
      outs(%t : tensor<f32>) {
    linalg.yield %x : f32
  } -> tensor<f32>
  %1 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []}
      outs(%t : tensor<f32>) {
  ^bb0(%x: f32):
    linalg.yield %x : f32
  // BLOCKARG: redefined-block-in-region.mlir:[[@LINE+3]]:3: error: redefinition of block '^bb0'
  // BLOCKARG-NOT: error
  // expected-error @below {{redefinition of block '^bb0'}}
  ^bb0:
  } -> tensor<f32>
  return
}

// -----

// The name is an op result in the failing region, the use in the function,
// before it; another error than a redefined block.
func.func @op_result(%t: tensor<f32>) -> f32 {
  %z = arith.addf %y, %y : f32
  %1 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []}
      outs(%t : tensor<f32>) {
  ^bb0(%o: f32):
    %y = arith.addf %o, %o : f32
    linalg.yield %y : f32
  ^bb1:
    // expected-error @below {{invalid SSA name}}
    %
  } -> tensor<f32>
  return %z : f32
}

// -----

// Chunks that parse still run normally.
// SPLIT-NOT: error
func.func @fine(%a: f32) -> f32 {
  return %a : f32
}
