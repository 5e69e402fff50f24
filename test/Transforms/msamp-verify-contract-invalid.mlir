// Every violation of the input contract (docs/Interfaces.md 1) that
// --msamp-verify-contract reports: a located error naming what was found and
// what was expected. One case per chunk.
// RUN: msamp-opt %s -split-input-file --msamp-verify-contract -verify-diagnostics

//===----------------------------------------------------------------------===//
// Function kinds
//===----------------------------------------------------------------------===//

// No function is marked as the training graph.
// expected-error @+1 {{no function with msamp.kind = "forward_backward"; mark the joint forward+backward function with `attributes {msamp.kind = "forward_backward"}`}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A forward-only graph (what an ONNX model without gradients imports as)
// cannot be compiled into a train step: the note says so.
// expected-error @+1 {{no function with msamp.kind = "forward_backward"}}
module {
  // expected-note @+1 {{@fwd is a forward-only graph (msamp.kind = "forward"): it can be evaluated but not compiled into a train step}}
  func.func @fwd(%x: tensor<4xf32>) -> tensor<4xf32> attributes {msamp.kind = "forward"} {
    return %x : tensor<4xf32>
  }
}

// -----

// Two training graphs: the contract allows exactly one.
// expected-note @+1 {{the first one, @a, is here}}
func.func @a(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
// expected-error @+1 {{more than one function with msamp.kind = "forward_backward" (@b); the contract allows one}}
func.func @b(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// An already compiled module is not a training graph.
// expected-error @+1 {{module is already compiled: @train_step has msamp.kind = "train_step"; --msamp-verify-contract and the --msamp-o* pipelines take a training graph}}
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> attributes {msamp.kind = "train_step"} {
  return %x : tensor<4xf32>
}

// -----

// A helper named @train_step would collide with the synthesized step.
// expected-error @+1 {{a function named @train_step already exists; the compiler creates @train_step from the forward_backward function: rename this one}}
func.func private @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// A misspelled kind.
// expected-error @+1 {{no function with msamp.kind = "forward_backward"}}
module {
  // expected-error @+1 {{unknown msamp.kind "forward-backward" on @fb; expected "forward_backward" (a training graph), "forward" or "train_step"}}
  func.func @fb(%x: tensor<4xf32>) -> tensor<4xf32> attributes {msamp.kind = "forward-backward"} {
    return %x : tensor<4xf32>
  }
}

// -----

// The training function needs a body.
// expected-error @+1 {{forward_backward function @fb is only a declaration; the contract needs its body}}
func.func private @fb(tensor<4xf32>) -> tensor<f32> attributes {msamp.kind = "forward_backward"}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

// -----

// An argument without a role.
func.func @fb(
    // expected-error @+1 {{argument #0 ("w") has no msamp.role; expected one of "param", "buffer", "input", "target"}}
    %w: tensor<4xf32> {msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// An argument without a name.
func.func @fb(
    // expected-error @+1 {{argument #0 has no msamp.name; every argument needs a unique name (e.g. msamp.name = "fc1.weight")}}
    %x: tensor<4xf32> {msamp.role = "input"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// An unknown role: the allowed ones are listed.
func.func @fb(
    // expected-error @+1 {{argument #0 ("lr") has unknown msamp.role "hyperparam"; expected one of "param", "buffer", "input", "target"}}
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  return %lr : tensor<f32>
}

// -----

// A role that is not a string.
func.func @fb(
    // expected-error @+1 {{argument #0 ("x") has msamp.role = 1 : i64; expected a string, one of "param", "buffer", "input", "target"}}
    %x: tensor<4xf32> {msamp.role = 1, msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// Duplicate names: the note points at the first use.
func.func @fb(
    // expected-note @+1 {{first used by argument #0}}
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
    // expected-error @+1 {{argument #1 ("x") has the duplicate msamp.name "x"; names must be unique}}
    %y: tensor<4xf32> {msamp.role = "target", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// Params are f32 (the compiler picks their storage precision).
func.func @fb(
    // expected-error @+1 {{argument #0 ("w") (param) has type 'tensor<4xf16>'; params must be f32 tensors}}
    %w: tensor<4xf16> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf16> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf16>
}

// -----

// Buffers are f32 or integer (i64, i32, i1), not other floats.
func.func @fb(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
    %ids: tensor<4xi64> {msamp.role = "buffer", msamp.name = "position_ids"},
    %mask: tensor<4xi1> {msamp.role = "buffer", msamp.name = "mask"},
    // expected-error @+1 {{argument #3 ("stat") (buffer) has type 'tensor<4xf64>'; buffers must be f32, i64, i32 or i1 tensors}}
    %stat: tensor<4xf64> {msamp.role = "buffer", msamp.name = "stat"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Param groups: per-param optimizer settings are f64 numbers >= 0, on params.
func.func @fb(
    // expected-error @+1 {{argument #0 ("w") has msamp.weight_decay = 1.000000e-01 : f32; expected an f64 number (e.g. msamp.weight_decay = 0.0 : f64)}}
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.weight_decay = 0.1 : f32},
    // expected-error @+1 {{argument #1 ("b") has msamp.lr_scale = -5.000000e-01; expected a finite number >= 0}}
    %b: tensor<4xf32> {msamp.role = "param", msamp.name = "b", msamp.lr_scale = -0.5 : f64},
    // expected-error @+1 {{argument #2 ("x") (input) has msamp.weight_decay; only params have optimizer settings}}
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x", msamp.weight_decay = 0.0 : f64})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"},
        tensor<4xf32> {msamp.role = "grad", msamp.name = "b"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w, %b : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Buffers are f32 tensors, not scalars.
func.func @fb(
    // expected-error @+1 {{argument #0 ("count") has type 'f32'; arguments must be ranked tensors (tensor semantics)}}
    %n: f32 {msamp.role = "buffer", msamp.name = "count"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// Inputs and targets are f32, i32 or i64.
func.func @fb(
    // expected-error @+1 {{argument #0 ("tokens") (input) has type 'tensor<4xi8>'; inputs and targets must be f32, i32 or i64 tensors}}
    %t: tensor<4xi8> {msamp.role = "input", msamp.name = "tokens"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// A dynamic batch size.
func.func @fb(
    // expected-error @+1 {{argument #0 ("x") has type 'tensor<?x3xf32>' with a dynamic shape; dynamic shapes are outside the contract: export the graph with static shapes (a fixed batch size and sequence length)}}
    %x: tensor<?x3xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// An unranked argument.
func.func @fb(
    // expected-error @+1 {{argument #0 ("x") has type 'tensor<*xf32>' with an unranked shape; dynamic shapes are outside the contract}}
    %x: tensor<*xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// A dynamic shape inside the body.
func.func @fb(%x: tensor<4x3xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  // expected-error @+1 {{result #0 of 'tensor.cast' has type 'tensor<?x3xf32>' with a dynamic shape; dynamic shapes are outside the contract}}
  %d = tensor.cast %x : tensor<4x3xf32> to tensor<?x3xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// ... also in a function the graph calls (it is inlined into the step).
func.func private @helper(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result #0 of 'tensor.cast' has type 'tensor<*xf32>' with an unranked shape}}
  %d = tensor.cast %x : tensor<4x3xf32> to tensor<*xf32>
  return %x : tensor<4x3xf32>
}
func.func @fb(%x: tensor<4x3xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %h = func.call @helper(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

// -----

// No loss.
// expected-error @+1 {{forward_backward function @fb has no loss result; expected one result with msamp.role = "loss" of type tensor<f32>}}
func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
  return %w : tensor<4xf32>
}

// -----

// Two losses.
// expected-error @+1 {{more than one loss result: results #0 and #1 both have msamp.role = "loss"}}
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %l : tensor<f32>, tensor<f32>
}

// -----

// The loss is a 0-d f32 tensor (the mean), not a 1-element vector.
// expected-error @+1 {{loss result #0 has type 'tensor<1xf32>'; expected tensor<f32> (a 0-d f32 tensor: the mean loss over the batch)}}
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<1xf32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<1xf32>
  return %l : tensor<1xf32>
}

// -----

// A gradient for a param that does not exist.
// expected-error @+1 {{grad result #1 ("fc3.weight") names "fc3.weight", which matches no param argument}}
func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "fc3.weight"},
        tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w, %w : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A gradient for an input: the message says what the name is.
// expected-error @+1 {{grad result #1 ("x") names "x", which matches no param argument (argument #0 "x" has msamp.role "input")}}
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "x"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %x : tensor<f32>, tensor<4xf32>
}

// -----

// A gradient whose type is not its param's.
// expected-error @+1 {{grad result #1 ("w") has type 'tensor<2x2xf32>'; expected the type of param argument #0, 'tensor<4xf32>'}}
func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<2x2xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  %g = tensor.expand_shape %w [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %l, %g : tensor<f32>, tensor<2x2xf32>
}

// -----

// A param without a gradient (a frozen tensor is a buffer).
func.func @fb(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
    // expected-error @+1 {{param argument #1 ("b") has no gradient result; expected a result with msamp.role = "grad", msamp.name = "b" (a tensor that is not trained is a "buffer")}}
    %b: tensor<4xf32> {msamp.role = "param", msamp.name = "b"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Two gradients for one param.
// expected-error @+1 {{duplicate grad result for param "w": results #1 and #2}}
func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"},
        tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w, %w : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A grad result without a name.
// expected-error @+2 {{grad result #1 has no msamp.name; expected the name of its param}}
// expected-error @+1 {{param argument #0 ("w") has no gradient result}}
func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// A result without a role.
// expected-error @+1 {{result #1 has no msamp.role; expected one of "loss", "grad", "buffer"}}
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32>) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %x : tensor<f32>, tensor<4xf32>
}

// -----

// A result with an unknown role.
// expected-error @+1 {{result #1 ("logits") has unknown msamp.role "output"; expected one of "loss", "grad", "buffer"}}
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "output", msamp.name = "logits"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %x : tensor<f32>, tensor<4xf32>
}

// -----

// An updated buffer that names no buffer argument.
// expected-error @+1 {{buffer result #1 ("bn.running_var") names "bn.running_var", which matches no buffer argument}}
func.func @fb(%m: tensor<4xf32> {msamp.role = "buffer", msamp.name = "bn.running_mean"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "buffer", msamp.name = "bn.running_var"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %m : tensor<f32>, tensor<4xf32>
}

// -----

// An updated buffer keeps the buffer's type.
// expected-error @+1 {{buffer result #1 ("bn.running_mean") has type 'tensor<2x2xf32>'; expected the type of buffer argument #0, 'tensor<4xf32>'}}
func.func @fb(%m: tensor<4xf32> {msamp.role = "buffer", msamp.name = "bn.running_mean"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<2x2xf32> {msamp.role = "buffer", msamp.name = "bn.running_mean"})
    attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  %g = tensor.expand_shape %m [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %l, %g : tensor<f32>, tensor<2x2xf32>
}

// -----

// A dynamic result shape.
// expected-error @+1 {{result #1 ("x") has type 'tensor<?xf32>' with a dynamic shape; dynamic shapes are outside the contract}}
func.func @fb(%x: tensor<4xf32> {msamp.role = "buffer", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<?xf32> {msamp.role = "buffer", msamp.name = "x"})
    attributes {msamp.kind = "forward_backward"} {
  // expected-error @+1 {{result #0 of 'tensor.cast' has type 'tensor<?xf32>' with a dynamic shape}}
  %d = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %d : tensor<f32>, tensor<?xf32>
}

//===----------------------------------------------------------------------===//
// Dialects and calls
//===----------------------------------------------------------------------===//

// -----

// An op from a dialect outside the contract.
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  // expected-error @+1 {{'bufferization.alloc_tensor' is from dialect 'bufferization', which is outside the input contract; allowed dialects: builtin, func, linalg, tensor, arith, math, scf, shard, ml_program}}
  %t = bufferization.alloc_tensor() : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// Control flow other than cf.assert: the graph must be one block.
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  // expected-error @+1 {{'cf.br' is from dialect 'cf', which is outside the input contract}}
  cf.br ^bb1
^bb1:
  return %l : tensor<f32>
}

// -----

// The input is a training graph, not already lowered msamp IR.
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %l = arith.constant dense<1.0> : tensor<f32>
  // expected-error @+1 {{'msamp.quantize' is from dialect 'msamp', which is outside the input contract}}
  %q = msamp.quantize %x, %l : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %l : tensor<f32>
}

// -----

// A call to a function that is only declared cannot be inlined.
func.func private @external(tensor<4xf32>) -> tensor<f32>
func.func @fb(%x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  // expected-error @+1 {{calls @external, which is only declared in the module; every called function must be defined in the module (the compiler inlines it)}}
  %l = func.call @external(%x) : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Every violation is reported in one run, not only the first.
func.func @fb(
    // expected-error @+1 {{argument #0 ("x") has no msamp.role}}
    %x: tensor<4xf32> {msamp.name = "x"},
    // expected-error @+1 {{argument #1 ("y") has type 'tensor<?xf32>' with a dynamic shape}}
    %y: tensor<?xf32> {msamp.role = "target", msamp.name = "y"})
    -> (tensor<f32> {msamp.role = "loss"}) attributes {msamp.kind = "forward_backward"} {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{'vector.broadcast' is from dialect 'vector'}}
  %v = vector.broadcast %c : f32 to vector<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l : tensor<f32>
}

//===----------------------------------------------------------------------===//
// msamp.optimizer
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{msamp.optimizer must be a dictionary such as {kind = "adamw", lr = 1.0e-03 : f64}; got "adamw"}}
module attributes {msamp.optimizer = "adamw"} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A misspelled key.
// expected-error @+1 {{msamp.optimizer has unknown key "learning_rate"; known keys: kind, lr, beta1, beta2, eps, weight_decay, momentum, nesterov, adam_mode}}
module attributes {msamp.optimizer = {kind = "adamw", learning_rate = 1.0e-03 : f64}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// An optimizer the compiler does not implement.
// expected-error @+1 {{msamp.optimizer kind must be one of "sgd", "adam", "adamw"; got "lamb"}}
module attributes {msamp.optimizer = {kind = "lamb"}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A number written as a string.
// expected-error @+1 {{msamp.optimizer lr must be a number (e.g. lr = 1.0e-03 : f64); got "1e-3"}}
module attributes {msamp.optimizer = {kind = "adamw", lr = "1e-3"}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Out-of-range hyperparameters, all reported: lr and eps must be positive,
// betas in [0, 1), weight decay non-negative.
// expected-error @+5 {{msamp.optimizer lr = 0.000000e+00 : f64 is out of range; expected > 0}}
// expected-error @+4 {{msamp.optimizer beta1 = -1.000000e-01 : f64 is out of range; expected in [0, 1)}}
// expected-error @+3 {{msamp.optimizer beta2 = 1.000000e+00 : f64 is out of range; expected in [0, 1)}}
// expected-error @+2 {{msamp.optimizer eps = 0.000000e+00 : f64 is out of range; expected > 0}}
// expected-error @+1 {{msamp.optimizer weight_decay = -1.000000e-02 : f64 is out of range; expected >= 0}}
module attributes {msamp.optimizer = {kind = "adamw", lr = 0.0 : f64, beta1 = -0.1 : f64, beta2 = 1.0 : f64,
                                      eps = 0.0 : f64, weight_decay = -0.01 : f64}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// SGD momentum in [0, 1]; a negative integer learning rate is out of range.
// expected-error @+2 {{msamp.optimizer momentum = 1.500000e+00 : f64 is out of range; expected in [0, 1]}}
// expected-error @+1 {{msamp.optimizer lr = -1 : i64 is out of range; expected > 0}}
module attributes {msamp.optimizer = {kind = "sgd", lr = -1, momentum = 1.5 : f64}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// nesterov is a bool.
// expected-error @+1 {{msamp.optimizer nesterov must be a bool (true or false); got 1 : i64}}
module attributes {msamp.optimizer = {kind = "sgd", momentum = 0.9 : f64, nesterov = 1}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Nesterov momentum needs a momentum (PyTorch rejects it too).
// expected-error @+1 {{msamp.optimizer nesterov = true needs momentum > 0}}
module attributes {msamp.optimizer = {kind = "sgd", nesterov = true}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// adam_mode is 0 or 1.
// expected-error @+1 {{msamp.optimizer adam_mode must be the integer 0 (PyTorch AdamW) or 1 (Hugging Face / ONNX Runtime mode 1); got 2 : i64}}
module attributes {msamp.optimizer = {kind = "adamw", adam_mode = 2 : i64}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// ... and an integer, not a float.
// expected-error @+1 {{msamp.optimizer adam_mode must be the integer 0 (PyTorch AdamW) or 1 (Hugging Face / ONNX Runtime mode 1); got 1.000000e+00 : f64}}
module attributes {msamp.optimizer = {kind = "adamw", adam_mode = 1.0 : f64}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Hyperparameters are used in f32: lr = 1e39 would be inf, eps = 1e-50 zero,
// weight_decay = 1e39 inf (issue 16).
// expected-error @+3 {{msamp.optimizer lr = 9.9999999999999994E+38 : f64 is out of range; expected finite in f32 (at most 3.4028235e+38)}}
// expected-error @+2 {{msamp.optimizer eps = 1.000000e-50 : f64 is out of range; expected > 0 in f32 (at least 1.4e-45)}}
// expected-error @+1 {{msamp.optimizer weight_decay = 9.9999999999999994E+38 : f64 is out of range; expected finite in f32}}
module attributes {msamp.optimizer = {kind = "adamw", lr = 1.0e39 : f64, eps = 1.0e-50 : f64,
                                      weight_decay = 1.0e39 : f64}} {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A batch dimension of 0 (issue 16: it trained with loss 0).
module {
  func.func @fb(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
      // expected-error @+1 {{argument #1 ("x") has type 'tensor<0x4xf32>' with a dimension of size 0; every dimension must be at least 1 (an empty batch trains on nothing)}}
      %x: tensor<0x4xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}
