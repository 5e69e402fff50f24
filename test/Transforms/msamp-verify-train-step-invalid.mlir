// Every invariant --msamp-verify-train-step enforces, violated once per case,
// with the located error it gives.
// RUN: msamp-opt %s -split-input-file -verify-diagnostics --msamp-verify-train-step

// expected-error@+1 {{--msamp-verify-train-step needs a compiled train step (a function with msamp.kind = "train_step")}}
module {
  func.func @f() {
    return
  }
}

// -----

// expected-error@+1 {{the train step must be the public function @train_step, found non-public @train_step}}
func.func private @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr : tensor<f32>
}

// -----

// expected-error@+1 {{the train step must be the public function @train_step, found public @step}}
func.func @step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr : tensor<f32>
}

// -----

// expected-error@+1 {{the train step has no string attribute msamp.level}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step"} {
  return %lr : tensor<f32>
}

// -----

func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    // expected-error@+1 {{argument #1 has no msamp.role}}
    %x: tensor<4xf32> {msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr : tensor<f32>
}

// -----

func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    // expected-error@+1 {{argument #1 has no msamp.name}}
    %x: tensor<4xf32> {msamp.role = "input"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr : tensor<f32>
}

// -----

func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    // expected-error@+1 {{argument #1 has unknown msamp.role "weights"}}
    %w: tensor<4xf32> {msamp.role = "weights", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr : tensor<f32>
}

// -----

func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
    // expected-error@+1 {{argument #2 has the same msamp.name "x" as argument #1}}
    %y: tensor<4xf32> {msamp.role = "target", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr : tensor<f32>
}

// -----

func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    // expected-error@+1 {{argument 'x' has type 'tensor<?x4xf32>'; train step arguments must be statically shaped tensors}}
    %x: tensor<?x4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr : tensor<f32>
}

// -----

// An O2 first moment without its scale.
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    // expected-error@+1 {{argument 'w.exp_avg' is stored as 'f8E4M3FN' but has no scaling_state argument 'w.exp_avg.scale' of type tensor<f32>}}
    %m: tensor<4xf8E4M3FN> {msamp.role = "opt_state", msamp.name = "w.exp_avg"},
    %ms: tensor<f32> {msamp.role = "scaling_state", msamp.name = "w.exp_avg_scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O2"} {
  return %lr : tensor<f32>
}

// -----

// An FP16 weight whose "scale" is not a 0-d f32 tensor.
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    // expected-error@+1 {{argument 'w' is stored as 'f16' but has no scaling_state argument 'w.scale' of type tensor<f32>}}
    %w: tensor<4xf16> {msamp.role = "param", msamp.name = "w"},
    %ws: tensor<1xf32> {msamp.role = "scaling_state", msamp.name = "w.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  return %lr : tensor<f32>
}

// -----

// expected-error@+1 {{the train step returns nothing; result #0 must be the loss}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return
}

// -----

// expected-error@+1 {{result #0 must be the loss: msamp.role = "loss", type tensor<f32> and no msamp.updates; found role "param" and type 'tensor<4xf32>'}}
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %w : tensor<4xf32>
}

// -----

// expected-error@+1 {{result #0 must be the loss: msamp.role = "loss", type tensor<f32> and no msamp.updates; found role "loss" and type 'tensor<1xf32>'}}
func.func @train_step(
    %x: tensor<1xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<1xf32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %x : tensor<1xf32>
}

// -----

// expected-error@+1 {{result #1 has no integer msamp.updates; every result after the loss is the new value of a state argument}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %w : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{result #1 has msamp.updates = 7, out of range for 2 arguments}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.updates = 7 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %w : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{result #1 updates argument #1 ('x') of role "input", which is not persistent state}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.updates = 1 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %x : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{result #1 of type 'tensor<4xf16>' updates argument #1 ('w') of type 'tensor<4xf32>'}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf16> {msamp.role = "param", msamp.name = "w", msamp.updates = 1 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %h = arith.truncf %w : tensor<4xf32> to tensor<4xf16>
  return %lr, %h : tensor<f32>, tensor<4xf16>
}

// -----

// expected-error@+1 {{results #1 and #2 both update argument #1 ('w')}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 1 : i64},
        tensor<4xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 1 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %w, %w : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{result #1 (role "param", name "v") updates argument #1 (role "param", name "w")}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.role = "param", msamp.name = "v", msamp.updates = 1 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %w : tensor<f32>, tensor<4xf32>
}

// -----

// A metric is a named 0-d f32 value that updates nothing.
// expected-error@+1 {{result #1 has msamp.role = "metric" and must then be a named tensor<f32> without msamp.updates; found name "grad_norm", type 'tensor<4xf32>'}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4xf32> {msamp.role = "metric", msamp.name = "grad_norm"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %w : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error@+1 {{result #1 has msamp.role = "metric" and must then be a named tensor<f32> without msamp.updates; found name "grad_norm", type 'tensor<f32>' and an msamp.updates}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<f32> {msamp.role = "metric", msamp.name = "grad_norm", msamp.updates = 1 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %s : tensor<f32>, tensor<f32>
}

// -----

// expected-error@+1 {{result #1 has msamp.role = "metric" and must then be a named tensor<f32> without msamp.updates; found name "", type 'tensor<f32>'}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<f32> {msamp.role = "metric"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %lr : tensor<f32>, tensor<f32>
}

// -----

// expected-error@+1 {{results #1 and #2 are both the metric "grad_norm"}}
func.func @train_step(
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<f32> {msamp.role = "metric", msamp.name = "grad_norm"},
        tensor<f32> {msamp.role = "metric", msamp.name = "grad_norm"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  return %lr, %lr, %lr : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// FP8 arithmetic: widening FP8 with arith.extf ignores its scale.
func.func @train_step(
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
    %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %q = msamp.quantize %x, %s : tensor<4xf32> to tensor<4xf8E4M3FN>
  // expected-error@+1 {{'arith.extf' op reads the FP8 value of type 'tensor<4xf8E4M3FN>' (operand #0); only msamp ops may compute with FP8 values (no FP8 arithmetic or accumulation outside msamp ops)}}
  %e = arith.extf %q : tensor<4xf8E4M3FN> to tensor<4xf32>
  %a = msamp.amax %e : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

// An FP8 value made without a scale.
func.func @train_step(
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  // expected-error@+1 {{'arith.truncf' op produces the FP8 value of type 'tensor<4xf8E5M2>' (result #0); FP8 values must come from msamp ops that carry their scale}}
  %q = arith.truncf %x : tensor<4xf32> to tensor<4xf8E5M2>
  %a = msamp.amax %x : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

// FP8 accumulation in a linalg.generic: one error for the op, none for the
// scalar FP8 arithmetic of its body.
#map = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @train_step(
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
    %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %q = msamp.quantize %x, %s : tensor<4xf32> to tensor<4xf8E4M3FN>
  %e = tensor.empty() : tensor<f8E4M3FN>
  // expected-error@+1 {{'linalg.generic' op reads the FP8 value of type 'tensor<4xf8E4M3FN>' (operand #0)}}
  %r = linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["reduction"]}
      ins(%q : tensor<4xf8E4M3FN>) outs(%e : tensor<f8E4M3FN>) {
    ^bb0(%in: f8E4M3FN, %acc: f8E4M3FN):
      %t = arith.addf %in, %acc : f8E4M3FN
      linalg.yield %t : f8E4M3FN
  } -> tensor<f8E4M3FN>
  %a = msamp.amax %x : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

// FP8 values do not cross calls: the callee could do anything with them.
func.func private @helper(tensor<4xf8E4M3FN>)
func.func @train_step(
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
    %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %q = msamp.quantize %x, %s : tensor<4xf32> to tensor<4xf8E4M3FN>
  // expected-error@+1 {{'func.call' op reads the FP8 value of type 'tensor<4xf8E4M3FN>' (operand #0)}}
  func.call @helper(%q) : (tensor<4xf8E4M3FN>) -> ()
  %a = msamp.amax %x : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

// A scaled FP16 weight read as if it held real values.
func.func @train_step(
    %w: tensor<4xf16> {msamp.role = "param", msamp.name = "w"},
    %ws: tensor<f32> {msamp.role = "scaling_state", msamp.name = "w.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  // expected-error@+1 {{'arith.extf' op reads the scaled FP16 value of type 'tensor<4xf16>' (operand #0) as a real value; use msamp.dequantize with its inverse scale, or an msamp op that takes the scale}}
  %e = arith.extf %w : tensor<4xf16> to tensor<4xf32>
  %a = msamp.amax %e : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

// The same through a reshape: data movement keeps a value scaled.
func.func @train_step(
    %w: tensor<2x2xf16> {msamp.role = "param", msamp.name = "w"},
    %ws: tensor<f32> {msamp.role = "scaling_state", msamp.name = "w.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %c = tensor.collapse_shape %w [[0, 1]] : tensor<2x2xf16> into tensor<4xf16>
  // expected-error@+1 {{'arith.extf' op reads the scaled FP16 value}}
  %e = arith.extf %c : tensor<4xf16> to tensor<4xf32>
  %a = msamp.amax %e : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

// The result of a quantization to FP16 is scaled storage too.
func.func @train_step(
    %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"},
    %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %h = msamp.quantize %x, %s : tensor<4xf32> to tensor<4xf16>
  // expected-error@+1 {{'arith.addf' op reads the scaled FP16 value of type 'tensor<4xf16>' (operand #0)}}
  %d = arith.addf %h, %h : tensor<4xf16>
  %e = arith.extf %d : tensor<4xf16> to tensor<4xf32>
  %a = msamp.amax %e : tensor<4xf32>
  return %a : tensor<f32>
}

// -----

// So is the FP16 param an optimizer op returns.
func.func @train_step(
    %w: tensor<4xf16> {msamp.role = "param", msamp.name = "w"},
    %g: tensor<4xf32> {msamp.role = "input", msamp.name = "g"},
    %step: tensor<i64> {msamp.role = "step", msamp.name = "step"},
    %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
    %ws: tensor<f32> {msamp.role = "scaling_state", msamp.name = "w.scale"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O1"} {
  %w1, %ws1 = msamp.sgd_update param %w scale %ws : tensor<4xf16>,
      grad %g : tensor<4xf32>, lr %lr, step %step
  // expected-error@+1 {{'arith.extf' op reads the scaled FP16 value of type 'tensor<4xf16>' (operand #0)}}
  %e = arith.extf %w1 : tensor<4xf16> to tensor<4xf32>
  %a = msamp.amax %e : tensor<4xf32>
  return %a : tensor<f32>
}
