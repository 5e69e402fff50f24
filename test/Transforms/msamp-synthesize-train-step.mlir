// RUN: msamp-opt %s --msamp-synthesize-train-step -split-input-file | FileCheck %s
// RUN: msamp-opt %s --msamp-synthesize-train-step="optimizer=sgd lr=0.5 weight-decay=0.25" -split-input-file | FileCheck %s --check-prefix=OVERRIDE
// RUN: msamp-opt %s --msamp-synthesize-train-step=level=amp-fp16 -split-input-file | FileCheck %s --check-prefix=LEVEL
// LEVEL: msamp.level = "amp-fp16"

// A linear model y = x w^T + b with MSE loss, AdamW declared on the module:
// the graph is inlined, every gradient is all-reduced (mean), AdamW updates
// each param, and the state comes back in argument order with msamp.updates.
module attributes {msamp.optimizer = {kind = "adamw", lr = 1.0e-02 : f64}} {
  func.func @linear(%w: tensor<2x3xf32> {msamp.role = "param", msamp.name = "fc.weight", msamp.gemm_weight},
                    %b: tensor<2xf32> {msamp.role = "param", msamp.name = "fc.bias"},
                    %x: tensor<4x3xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<2xf32> {msamp.role = "grad", msamp.name = "fc.bias"},
          tensor<2x3xf32> {msamp.role = "grad", msamp.name = "fc.weight"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    %gb = arith.constant dense<1.0> : tensor<2xf32>
    %gw = arith.constant dense<2.0> : tensor<2x3xf32>
    return %l, %gb, %gw : tensor<f32>, tensor<2xf32>, tensor<2x3xf32>
  }
}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[^:]+]]: tensor<2x3xf32> {msamp.gemm_weight, msamp.init = "normal(0,0.02)", msamp.name = "fc.weight", msamp.role = "param"}
// CHECK-SAME: %[[B:[^:]+]]: tensor<2xf32> {msamp.init = "zeros", msamp.name = "fc.bias", msamp.role = "param"}
// CHECK-SAME: %[[WM:[^:]+]]: tensor<2x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg", msamp.role = "opt_state"}
// CHECK-SAME: %[[WV:[^:]+]]: tensor<2x3xf32> {msamp.init = "zeros", msamp.name = "fc.weight.exp_avg_sq", msamp.role = "opt_state"}
// CHECK-SAME: %[[BM:[^:]+]]: tensor<2xf32> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg", msamp.role = "opt_state"}
// CHECK-SAME: %[[BV:[^:]+]]: tensor<2xf32> {msamp.init = "zeros", msamp.name = "fc.bias.exp_avg_sq", msamp.role = "opt_state"}
// CHECK-SAME: %[[STEP:[^:]+]]: tensor<i64> {msamp.init = "zeros", msamp.name = "step", msamp.role = "step"}
// CHECK-SAME: %[[LR:[^:]+]]: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"}
// CHECK-SAME: %{{[^:]+}}: tensor<4x3xf32> {msamp.name = "x", msamp.role = "input"})
// CHECK-SAME: -> (tensor<f32> {msamp.role = "loss"},
// CHECK-SAME: tensor<2x3xf32> {msamp.name = "fc.weight", msamp.role = "param", msamp.updates = 0 : i64},
// CHECK-SAME: tensor<2xf32> {msamp.name = "fc.bias", msamp.role = "param", msamp.updates = 1 : i64},
// CHECK-SAME: msamp.updates = 2 : i64}, {{.*}} msamp.updates = 3 : i64}, {{.*}} msamp.updates = 4 : i64}, {{.*}} msamp.updates = 5 : i64},
// CHECK-SAME: tensor<i64> {msamp.name = "step", msamp.role = "step", msamp.updates = 6 : i64})
// CHECK-SAME: msamp.kind = "train_step", msamp.level = "O0"
// The resolved optimizer: AdamW's default weight decay 1e-2 filled in.
// CHECK-SAME: msamp.optimizer = {adam_mode = 0 : i64, beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, kind = "adamw", lr = 1.000000e-02 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 1.000000e-02 : f64}
// CHECK: %[[LOSS:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[T:.+]] = arith.addi %[[STEP]], %{{.+}} : tensor<i64>
// CHECK: %[[GW:.+]] = msamp.all_reduce mean %{{.+}} : tensor<2x3xf32>
// CHECK: %[[NW:[^,]+]], %[[NWM:[^,]+]], %[[NWV:[^ ]+]] = msamp.adam_update param %[[W]] : tensor<2x3xf32>, grad %[[GW]] : tensor<2x3xf32>, exp_avg %[[WM]] : tensor<2x3xf32>, exp_avg_sq %[[WV]] : tensor<2x3xf32>, lr %[[LR]], step %[[T]] {{{.*}}decoupled{{.*}}weight_decay = 1.000000e-02 : f64}
// CHECK: %[[GB:.+]] = msamp.all_reduce mean %{{.+}} : tensor<2xf32>
// CHECK: %[[NB:[^,]+]], %[[NBM:[^,]+]], %[[NBV:[^ ]+]] = msamp.adam_update param %[[B]] : tensor<2xf32>, grad %[[GB]]
// CHECK: return %[[LOSS]], %[[NW]], %[[NB]], %[[NWM]], %[[NWV]], %[[NBM]], %[[NBV]], %[[T]]
// CHECK-NOT: func.func @linear

// Pass options override the declaration: SGD without momentum has no state.
// OVERRIDE-LABEL: func.func @train_step(
// OVERRIDE-NOT: exp_avg
// OVERRIDE-SAME: msamp.optimizer = {{{.*}}kind = "sgd", lr = 5.000000e-01 : f64{{.*}}weight_decay = 2.500000e-01 : f64}
// OVERRIDE: msamp.sgd_update param %{{.+}} : tensor<2x3xf32>, grad %{{.+}} : tensor<2x3xf32>, lr %{{.+}}, step %{{.+}} {weight_decay = 2.500000e-01 : f64}

// -----

// SGD with Nesterov momentum: one momentum buffer per param; a buffer and its
// update returned by the graph are threaded through; a 1-d ".weight" that is
// not a GEMM weight (a norm scale) is initialized to ones.
module attributes {msamp.optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64, nesterov = true}} {
  func.func @norm(%g: tensor<8xf32> {msamp.role = "param", msamp.name = "ln.weight"},
                  %stat: tensor<8xf32> {msamp.role = "buffer", msamp.name = "ln.running_mean"},
                  %t: tensor<4xi64> {msamp.role = "target", msamp.name = "labels"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<8xf32> {msamp.role = "grad", msamp.name = "ln.weight"},
          tensor<8xf32> {msamp.role = "buffer", msamp.name = "ln.running_mean"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    return %l, %g, %stat : tensor<f32>, tensor<8xf32>, tensor<8xf32>
  }
}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[G:[^:]+]]: tensor<8xf32> {msamp.init = "ones", msamp.name = "ln.weight", msamp.role = "param"}
// CHECK-SAME: %[[S:[^:]+]]: tensor<8xf32> {msamp.init = "zeros", msamp.name = "ln.running_mean", msamp.role = "buffer"}
// CHECK-SAME: %[[MB:[^:]+]]: tensor<8xf32> {msamp.init = "zeros", msamp.name = "ln.weight.momentum_buffer", msamp.role = "opt_state"}
// CHECK-SAME: tensor<4xi64> {msamp.name = "labels", msamp.role = "target"}
// CHECK-SAME: {msamp.name = "ln.running_mean", msamp.role = "buffer", msamp.updates = 1 : i64}
// CHECK: %{{.+}}, %[[NMB:[^ ]+]] = msamp.sgd_update param %[[G]] : tensor<8xf32>, grad %{{.+}} : tensor<8xf32>, momentum_buffer %[[MB]] : tensor<8xf32>, lr %{{.+}}, step %{{.+}} {momentum = 9.000000e-01 : f64, nesterov}
// CHECK: return %{{.+}}, %{{.+}}, %[[S]], %[[NMB]], %{{.+}}

// -----

// A graph that is itself named @train_step is replaced by the step.
module {
  func.func @train_step(%w: tensor<2xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<2xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<2xf32>
  }
}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: msamp.kind = "train_step"
// CHECK-NOT: func.func

// -----

// Param groups (torch.optim): the weight decays 0.1 at the base lr, the bias
// has no decay at half the base lr (its lr operand is lr * 0.5); a param
// without the attributes keeps the module optimizer's.
module attributes {msamp.optimizer = {kind = "adamw", lr = 1.0e-02 : f64, weight_decay = 1.0e-02 : f64}} {
  func.func @groups(%w: tensor<2x3xf32> {msamp.role = "param", msamp.name = "fc.weight", msamp.weight_decay = 0.1 : f64, msamp.lr_scale = 1.0 : f64},
                    %b: tensor<2xf32> {msamp.role = "param", msamp.name = "fc.bias", msamp.weight_decay = 0.0 : f64, msamp.lr_scale = 0.5 : f64},
                    %g: tensor<2xf32> {msamp.role = "param", msamp.name = "ln.weight"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<2x3xf32> {msamp.role = "grad", msamp.name = "fc.weight"},
          tensor<2xf32> {msamp.role = "grad", msamp.name = "fc.bias"},
          tensor<2xf32> {msamp.role = "grad", msamp.name = "ln.weight"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    return %l, %w, %b, %g : tensor<f32>, tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>
  }
}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[LR:[^:]+]]: tensor<f32> {msamp.name = "lr", msamp.role = "hyperparam"}
// CHECK: msamp.adam_update param %{{.+}} : tensor<2x3xf32>, {{.*}} lr %[[LR]], step %{{.+}} {{{.*}}weight_decay = 1.000000e-01 : f64}
// CHECK: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[LRB:.+]] = arith.mulf %[[LR]], %[[HALF]] : tensor<f32>
// CHECK: msamp.adam_update param %{{.+}} : tensor<2xf32>, {{.*}} lr %[[LRB]], step %{{.+}} {{{.*}}weight_decay = 0.000000e+00 : f64}
// CHECK: msamp.adam_update param %{{.+}} : tensor<2xf32>, {{.*}} lr %[[LR]], step %{{.+}} {{{.*}}weight_decay = 1.000000e-02 : f64}
