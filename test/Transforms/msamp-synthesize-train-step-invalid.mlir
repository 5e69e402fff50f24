// RUN: msamp-opt %s --msamp-synthesize-train-step -split-input-file -verify-diagnostics
// A level or optimizer outside TrainStepLevel / OptimizerKind (RecipeEnums.td)
// is the option parser's error.
// RUN: not msamp-opt %s --msamp-synthesize-train-step=level=O4 2>&1 | FileCheck %s --check-prefix=BAD-LEVEL
// BAD-LEVEL: for the --level option: Cannot find option named 'O4'!
// RUN: not msamp-opt %s --msamp-synthesize-train-step=optimizer=lamb 2>&1 | FileCheck %s --check-prefix=BAD-OPTIMIZER
// BAD-OPTIMIZER: for the --optimizer option: Cannot find option named 'lamb'!

// expected-error @+1 {{no function with msamp.kind = "forward_backward"}}
module {
  func.func @f() { return }
}

// -----

// expected-error @+1 {{unknown optimizer kind 'lamb': expected sgd, adam or adamw}}
module attributes {msamp.optimizer = {kind = "lamb"}} {
  func.func @f(%w: tensor<2xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<2xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// adam_mode = 1 (ONNX Runtime / Hugging Face AdamW) is an AdamW variant.
// expected-error @+1 {{msamp.optimizer adam_mode = 1 (Hugging Face / ONNX Runtime AdamW) needs kind = "adamw", not "adam"}}
module attributes {msamp.optimizer = {kind = "adam", adam_mode = 1 : i64}} {
  func.func @f(%w: tensor<2xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<2xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

module {
  // expected-error @+1 {{parameter 'v' (argument 1) has no gradient result}}
  func.func @f(%w: tensor<2xf32> {msamp.role = "param", msamp.name = "w"},
               %v: tensor<2xf32> {msamp.role = "param", msamp.name = "v"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<2xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{the module already has a train_step; --msamp-synthesize-train-step expects a forward_backward graph}}
module {
  func.func @train_step() attributes {msamp.kind = "train_step"} { return }
}
