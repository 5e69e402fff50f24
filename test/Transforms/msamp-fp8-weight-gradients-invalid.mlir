// Errors of --msamp-fp8-weight-gradients.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics --msamp-fp8-weight-gradients

// An unknown scale kind is an error naming it, reported before the IR is
// looked at.
// RUN: not msamp-opt %S/Inputs/o1-mlp.mlir --msamp-fp16-weights --msamp-fp8-weight-gradients='scale-kind=pow3' 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: for the --scale-kind option: Cannot find option named 'pow3'!
// RUN: not msamp-opt %s -split-input-file --msamp-fp8-weight-gradients='scale-kind=' 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: for the --scale-kind option: Cannot find option named ''!

// No train step: the pass needs the output of synthesis.
// expected-error@+1 {{msamp-fp8-weight-gradients needs a compiled train step (a function with msamp.kind = "train_step"); run --msamp-synthesize-train-step first}}
module {
  func.func @forward_backward(%g: tensor<4x3xf32> {msamp.name = "fc.weight", msamp.role = "param"}) -> tensor<4x3xf32> attributes {msamp.kind = "forward_backward"} {
    return %g : tensor<4x3xf32>
  }
}
