// --msamp-gpu-group-adam-updates and the conversion of its groups
// (AdamGroupToRuntime.cpp): three adjacent Adam updates, A (f32 [8]),
// B (O2's GEMM weight: f16 + scale, FP8 gradient, E4M3 m, f16 v, [4,4]) and
// C (f32 [16]). A and C can share a call, B cannot: C moves up next to A,
// both get group 0, B none.
//
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-group-adam-updates))' | FileCheck %s --check-prefix=GROUP
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-group-adam-updates),convert-msamp-to-runtime)' | FileCheck %s --check-prefix=CALL
// RUN: msamp-opt %s --msamp-lower-to-gpu="cost-report=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=COST < %t.json
// RUN: %python %S/Inputs/check_gpu_cost.py %t.json | FileCheck %s --check-prefix=SUMS
// An update that reads another's result: msamp-gpu-group-adam-updates-chained.mlir.

// GROUP-LABEL: func.func @train_step(
// GROUP: msamp.adam_update param %[[A:[^ ]+]] : tensor<8xf32>{{.*}}msamp.adam_group = 0 : i64
// GROUP-NEXT: msamp.adam_update param %[[C:[^ ]+]] : tensor<16xf32>{{.*}}msamp.adam_group = 0 : i64
// GROUP-NEXT: msamp.adam_update param %{{[^ ]+}} scale
// GROUP-NOT: msamp.adam_group
// GROUP: return

// One call for A and C, with a table of two rows: numel, then 14 addresses
// (0 for the absent scales of f32 tensors); their states written in place
// (the to_buffer of the argument, writable, is what the table holds); B's
// own call.
// CALL-LABEL: func.func @train_step(
// CALL-NOT: memref.alloc() : memref<{{[0-9]+}}x
// CALL: %[[T:.+]] = memref.alloca() : memref<2x15xi64>
// CALL: memref.store %c8_i64, %[[T]][%[[I0:c0[_0-9]*]], %[[I0]]]
// CALL: %[[P:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<*xf32> -> index
// CALL: %[[PI:.+]] = arith.index_cast %[[P]] : index to i64
// CALL: memref.store %[[PI]], %[[T]][%[[I0]], %[[I1:c1[_0-9]*]]]
// CALL: memref.store %c0_i64, %[[T]][%[[I0]], %c2{{[_0-9]*}}]
// An in-place output's address: the op that takes it names the argument for
// msamp-check-in-place-states (A's param is argument 0).
// CALL: memref.extract_aligned_pointer_as_index %{{.+}} : memref<*xf32> -> index {msamp.in_place_args = array<i64: 0, 0>}
// CALL: memref.store %c16_i64, %[[T]][%[[I1]], %[[I0]]]
// CALL: %[[TU:.+]] = memref.cast %[[T]] : memref<2x15xi64> to memref<*xi64>
// CALL: call @msamp_rt_adam_update_multi__{{[0-9]+}}(%[[TU]], %{{.+}}, %{{.+}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %cst{{[_0-9]*}}, %cst{{[_0-9]*}}, %cst{{[_0-9]*}}, %cst{{[_0-9]*}}, %c1_i32{{[_0-9]*}})
// CALL: call @msamp_rt_adam_update__{{[0-9]+}}(
// CALL-NOT: call @msamp_rt_adam_update
// CALL: return

// The group's cost is the sum of the single updates it stands for: per row
// every buffer, a 4-byte dummy per absent scale (7), lr (4) and step (8):
// A 7 x 32 + 28 + 12 = 264, C 7 x 64 + 28 + 12 = 488, together 752 bytes
// and 16 x (8 + 16) = 384 FLOPs, one call; B alone: 216 bytes, 256 FLOPs.
// COST: "library_calls": 3,
// COST: {"name": "msamp_rt_adam_update_multi", "op": "runtime", "unit": "f32", "flops": 384, "bytes": 752,
// COST: {"name": "msamp_rt_adam_update", "op": "runtime", "unit": "f32", "flops": 256, "bytes": 216,
// SUMS: gpu_cost.json: consistent

module {
  func.func @train_step(
      %wa: tensor<8xf32> {msamp.role = "param", msamp.name = "a", msamp.init = "zeros"},
      %ma: tensor<8xf32> {msamp.role = "opt_state", msamp.name = "a.exp_avg", msamp.init = "zeros"},
      %va: tensor<8xf32> {msamp.role = "opt_state", msamp.name = "a.exp_avg_sq", msamp.init = "zeros"},
      %wb: tensor<4x4xf16> {msamp.role = "param", msamp.name = "b", msamp.init = "zeros"},
      %wbs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "b.scale", msamp.init = "ones"},
      %mb: tensor<4x4xf8E4M3FN> {msamp.role = "opt_state", msamp.name = "b.exp_avg", msamp.init = "zeros"},
      %mbs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "b.exp_avg.scale", msamp.init = "ones"},
      %vb: tensor<4x4xf16> {msamp.role = "opt_state", msamp.name = "b.exp_avg_sq", msamp.init = "zeros"},
      %vbs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "b.exp_avg_sq.scale", msamp.init = "ones"},
      %wc: tensor<16xf32> {msamp.role = "param", msamp.name = "c", msamp.init = "zeros"},
      %mc: tensor<16xf32> {msamp.role = "opt_state", msamp.name = "c.exp_avg", msamp.init = "zeros"},
      %vc: tensor<16xf32> {msamp.role = "opt_state", msamp.name = "c.exp_avg_sq", msamp.init = "zeros"},
      %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
      %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
      %ga: tensor<8xf32> {msamp.role = "input", msamp.name = "ga"},
      %gb: tensor<4x4xf8E4M3FN> {msamp.role = "input", msamp.name = "gb"},
      %gbs: tensor<f32> {msamp.role = "input", msamp.name = "gb.scale_inv"},
      %gc: tensor<16xf32> {msamp.role = "input", msamp.name = "gc"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<8xf32> {msamp.role = "param", msamp.name = "a", msamp.updates = 0 : i64},
          tensor<8xf32> {msamp.role = "opt_state", msamp.name = "a.exp_avg", msamp.updates = 1 : i64},
          tensor<8xf32> {msamp.role = "opt_state", msamp.name = "a.exp_avg_sq", msamp.updates = 2 : i64},
          tensor<4x4xf16> {msamp.role = "param", msamp.name = "b", msamp.updates = 3 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "b.scale", msamp.updates = 4 : i64},
          tensor<4x4xf8E4M3FN> {msamp.role = "opt_state", msamp.name = "b.exp_avg", msamp.updates = 5 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "b.exp_avg.scale", msamp.updates = 6 : i64},
          tensor<4x4xf16> {msamp.role = "opt_state", msamp.name = "b.exp_avg_sq", msamp.updates = 7 : i64},
          tensor<f32> {msamp.role = "scaling_state", msamp.name = "b.exp_avg_sq.scale", msamp.updates = 8 : i64},
          tensor<16xf32> {msamp.role = "param", msamp.name = "c", msamp.updates = 9 : i64},
          tensor<16xf32> {msamp.role = "opt_state", msamp.name = "c.exp_avg", msamp.updates = 10 : i64},
          tensor<16xf32> {msamp.role = "opt_state", msamp.name = "c.exp_avg_sq", msamp.updates = 11 : i64},
          tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.updates = 12 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1> : tensor<i64>
    %t = arith.addi %step, %one : tensor<i64>
    %loss = msamp.amax %ga : tensor<8xf32>
    %wa1, %ma1, %va1 = msamp.adam_update param %wa : tensor<8xf32>, grad %ga : tensor<8xf32>,
        exp_avg %ma : tensor<8xf32>, exp_avg_sq %va : tensor<8xf32>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64, decoupled}
    %wb1, %wbs1, %mb1, %mbs1, %vb1, %vbs1 = msamp.adam_update param %wb scale %wbs : tensor<4x4xf16>,
        grad %gb scale_inv %gbs : tensor<4x4xf8E4M3FN>, exp_avg %mb scale %mbs : tensor<4x4xf8E4M3FN>,
        exp_avg_sq %vb scale %vbs : tensor<4x4xf16>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64, decoupled}
    %wc1, %mc1, %vc1 = msamp.adam_update param %wc : tensor<16xf32>, grad %gc : tensor<16xf32>,
        exp_avg %mc : tensor<16xf32>, exp_avg_sq %vc : tensor<16xf32>, lr %lr, step %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64, decoupled}
    return %loss, %wa1, %ma1, %va1, %wb1, %wbs1, %mb1, %mbs1, %vb1, %vbs1, %wc1, %mc1, %vc1, %t
        : tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf16>, tensor<f32>,
          tensor<4x4xf8E4M3FN>, tensor<f32>, tensor<4x4xf16>, tensor<f32>, tensor<16xf32>,
          tensor<16xf32>, tensor<16xf32>, tensor<i64>
  }
}

