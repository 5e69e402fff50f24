// --msamp-gpu-fuse-scale-updates: each FP8 cast's scaling bookkeeping as one
// msamp.scale_update (FuseScaleUpdates.cpp), on arith ops on 0-d tensors and
// on the 0-d linalg.generic ops convert-elementwise-to-linalg makes of them
// (what the GPU pipeline has at that point); then its lowering to one
// msamp_rt_scale_update call per cast in a real O2 step.
//
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fuse-scale-updates))' | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops,canonicalize,msamp-gpu-fuse-scale-updates))' | FileCheck %s --check-prefix=GENERIC
// RUN: msamp-opt %S/../../Transforms/Inputs/mlp.mlir --msamp-o2 | msamp-opt --pass-pipeline='builtin.module(func.func(convert-elementwise-to-linalg,msamp-gpu-fuse-scale-updates),convert-msamp-to-runtime)' -o %t.calls.mlir
// RUN: FileCheck %s --check-prefix=CALL < %t.calls.mlir
// RUN: msamp-opt %S/../../Transforms/Inputs/mlp.mlir --msamp-o2 | msamp-opt --msamp-lower-to-gpu="cost-report=%t.cost.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=COST < %t.cost.json
// RUN: %python %S/Inputs/check_gpu_cost.py %t.cost.json | FileCheck %s --check-prefix=SUMS
// RUN: grep -cE 'call @msamp_rt_quantize_scale_update.*, %c3_i32[_0-9]*\) \{msamp.in_place_args = array<i64: 6, [0-9]+, 9, [0-9]+>\}' %t.calls.mlir | FileCheck %s --check-prefix=DELAYED
// RUN: grep -cE 'call @msamp_rt_scale_update.*, %c5_i32[_0-9]*\) :' %t.calls.mlir | FileCheck %s --check-prefix=JIT

// Delayed scaling with MS-AMP's warm-up and the amax all-reduced: amax,
// all_reduce, history, the two compute_scale, the select and the inverse
// become one op at the select; the quantize reads its scale, the results
// its history, inverse and next scale.
// CHECK-LABEL: func.func @delayed(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>, %[[H:[^:]+]]: tensor<16xf32>, %[[P:[^:]+]]: tensor<f32>, %[[C:[^:]+]]: tensor<i1>
// CHECK-NOT: msamp.amax
// CHECK: %[[NH:[^,]+]], %[[S:[^,]+]], %[[SI:[^,]+]], %[[N:[^ ]+]] = msamp.scale_update pow2 max %[[X]], %[[H]], %[[P]] use_jit %[[C]] : tensor<i1> for f8E4M3FN reduce_amax : tensor<4x8xf32>, tensor<16xf32>
// CHECK-NEXT: %[[Q:.+]] = msamp.quantize %[[X]], %[[S]]
// CHECK-NOT: msamp.amax
// CHECK-NOT: msamp.all_reduce
// CHECK-NOT: msamp.update_amax_history
// CHECK-NOT: msamp.compute_scale
// CHECK-NOT: arith.divf
// CHECK: return %[[Q]], %[[SI]], %[[NH]], %[[N]]
// GENERIC-LABEL: func.func @delayed(
// GENERIC-SAME: %[[C:[^:]+]]: tensor<i1>)
// GENERIC-NOT: msamp.amax
// GENERIC: %[[NH:[^,]+]], %[[S:[^,]+]], %[[SI:[^,]+]], %[[N:[^ ]+]] = msamp.scale_update pow2 max %{{.+}}, %{{.+}}, %{{.+}} use_jit %[[C]] : tensor<i1> for f8E4M3FN reduce_amax
// GENERIC-NEXT: %[[Q:.+]] = msamp.quantize %{{.+}}, %[[S]]
// GENERIC-NOT: arith.divf
// GENERIC-NOT: arith.select
// GENERIC: return %[[Q]], %[[SI]], %[[NH]], %[[N]]
func.func @delayed(%x: tensor<4x8xf32>, %h: tensor<16xf32>, %p: tensor<f32>,
                   %c: tensor<i1>)
    -> (tensor<4x8xf8E4M3FN>, tensor<f32>, tensor<16xf32>, tensor<f32>) {
  %a = msamp.amax %x : tensor<4x8xf32>
  %r = msamp.all_reduce max %a : tensor<f32>
  %h1 = msamp.update_amax_history %h, %r : tensor<16xf32>
  %j = msamp.compute_scale pow2 most_recent %h1, %p for f8E4M3FN : tensor<16xf32>
  %s = arith.select %c, %j, %p : tensor<i1>, tensor<f32>
  %q = msamp.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  %one = arith.constant dense<1.0> : tensor<f32>
  %i = arith.divf %one, %s : tensor<f32>
  %n = msamp.compute_scale pow2 max %h1, %s for f8E4M3FN : tensor<16xf32>
  return %q, %i, %h1, %n
      : tensor<4x8xf8E4M3FN>, tensor<f32>, tensor<16xf32>, tensor<f32>
}

// Delayed scaling without warm-up, amax not all-reduced, exact scale with a
// margin: the op takes the next scale's place; the cast uses the state, so
// its inverse (before the op) stays.
// CHECK-LABEL: func.func @no_warmup(
// CHECK-SAME: %[[X:[^:]+]]: tensor<8xbf16>, %[[H:[^:]+]]: tensor<4xf32>, %[[P:[^:]+]]: tensor<f32>
// CHECK: msamp.quantize %[[X]], %[[P]]
// CHECK: arith.divf %{{.+}}, %[[P]]
// CHECK-NEXT: %[[NH:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[N:[^ ]+]] = msamp.scale_update exact most_recent %[[X]], %[[H]], %[[P]] for f8E5M2 margin 1 : tensor<8xbf16>, tensor<4xf32>
// CHECK-NEXT: return %{{.+}}, %{{.+}}, %[[NH]], %[[N]]
func.func @no_warmup(%x: tensor<8xbf16>, %h: tensor<4xf32>, %p: tensor<f32>)
    -> (tensor<8xf8E5M2>, tensor<f32>, tensor<4xf32>, tensor<f32>) {
  %a = msamp.amax %x : tensor<8xbf16>
  %h1 = msamp.update_amax_history %h, %a : tensor<4xf32>
  %q = msamp.quantize %x, %p : tensor<8xbf16> to tensor<8xf8E5M2>
  %one = arith.constant dense<1.0> : tensor<f32>
  %i = arith.divf %one, %p : tensor<f32>
  %n = msamp.compute_scale exact most_recent %h1, %p for f8E5M2 margin 1 : tensor<4xf32>
  return %q, %i, %h1, %n
      : tensor<8xf8E5M2>, tensor<f32>, tensor<4xf32>, tensor<f32>
}

// A just-in-time cast whose amax is all-reduced (an FP8 weight gradient):
// one just_in_time op with a one-entry history at the compute_scale (a
// tensor.empty: rolling one entry reads none of it).
// CHECK-LABEL: func.func @reduced_jit(
// CHECK-SAME: %[[G:[^:]+]]: tensor<8x4xf32>
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<1xf32>
// CHECK-NEXT: %{{[^,]+}}, %[[S:[^,]+]], %[[SI:[^,]+]], %{{[^ ]+}} = msamp.scale_update pow2 most_recent %[[G]], %[[EMPTY]], %[[ONE]] for f8E4M3FN reduce_amax just_in_time : tensor<8x4xf32>, tensor<1xf32>
// CHECK-NEXT: %[[Q:.+]] = msamp.quantize %[[G]], %[[S]]
// CHECK-NOT: arith.divf
// CHECK: return %[[Q]], %[[SI]]
func.func @reduced_jit(%g: tensor<8x4xf32>)
    -> (tensor<8x4xf8E4M3FN>, tensor<f32>) {
  %a = msamp.amax %g : tensor<8x4xf32>
  %r = msamp.all_reduce max %a : tensor<f32>
  %e = tensor.expand_shape %r [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %s = msamp.compute_scale pow2 most_recent %e, %one for f8E4M3FN : tensor<1xf32>
  %q = msamp.quantize %g, %s : tensor<8x4xf32> to tensor<8x4xf8E4M3FN>
  %i = arith.divf %one, %s : tensor<f32>
  return %q, %i : tensor<8x4xf8E4M3FN>, tensor<f32>
}

// An amax also read after the fused op (the gradient statistics read the
// weight gradients' amaxes) is read from the rolled history's newest entry.
// CHECK-LABEL: func.func @amax_read_later(
// CHECK: %[[NH:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[N:[^ ]+]] = msamp.scale_update pow2 max
// CHECK-NEXT: %[[E:.+]] = tensor.extract_slice %[[NH]][0] [1] [1] : tensor<4xf32> to tensor<1xf32>
// CHECK-NEXT: %[[A:.+]] = tensor.collapse_shape %[[E]] [] : tensor<1xf32> into tensor<f32>
// CHECK-NEXT: return %[[A]], %[[NH]], %[[N]]
func.func @amax_read_later(%x: tensor<4xf32>, %h: tensor<4xf32>, %p: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<f32>) {
  %a = msamp.amax %x : tensor<4xf32>
  %h1 = msamp.update_amax_history %h, %a : tensor<4xf32>
  %n = msamp.compute_scale pow2 max %h1, %p for f8E4M3FN : tensor<4xf32>
  return %a, %h1, %n : tensor<f32>, tensor<4xf32>, tensor<f32>
}

// Left alone: an amax read before the fused op would be, a just-in-time
// cast whose amax is not all-reduced (convert-msamp-to-runtime's fuse-casts
// makes it one msamp_rt_quantize_jit), an amax reduced with another kind
// than max.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: msamp.scale_update
// CHECK: msamp.update_amax_history
// CHECK: msamp.compute_scale pow2 max
// CHECK: msamp.compute_scale pow2 most_recent
// CHECK: msamp.update_amax_history
// CHECK: msamp.compute_scale pow2 max
// CHECK-NOT: msamp.scale_update
// CHECK: return
func.func @kept(%x: tensor<4xf32>, %h: tensor<4xf32>, %p: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>,
        tensor<f32>) {
  %a = msamp.amax %x : tensor<4xf32>
  %early = arith.addf %a, %a : tensor<f32>
  %h1 = msamp.update_amax_history %h, %a : tensor<4xf32>
  %n = msamp.compute_scale pow2 max %h1, %p for f8E4M3FN : tensor<4xf32>
  %b = msamp.amax %x : tensor<4xf32>
  %e = tensor.expand_shape %b [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %s = msamp.compute_scale pow2 most_recent %e, %p for f8E4M3FN : tensor<1xf32>
  %c = msamp.amax %x : tensor<4xf32>
  %m = msamp.all_reduce mean %c : tensor<f32>
  %h2 = msamp.update_amax_history %h, %m : tensor<4xf32>
  %n2 = msamp.compute_scale pow2 max %h2, %p for f8E4M3FN : tensor<4xf32>
  return %early, %h1, %n, %s, %h2, %n2 : tensor<f32>, tensor<4xf32>,
      tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f32>
}

// The O2 MLP's four delayed casts (flags 3: reduce_amax, select_jit; the
// history, operand 4, and the next scale, operand 7, written in place into
// their state arguments) and
// two all-reduced weight-gradient casts (flags 5: reduce_amax,
// just_in_time), each one call; the gradient statistics read those two
// amaxes from the rolled one-entry histories. No amax, history or scale
// call is left (its two weights' just-in-time casts are
// msamp_rt_quantize_jit).
// CALL-LABEL: func.func @train_step(
// CALL-NOT: msamp_rt_amax
// CALL-NOT: msamp_rt_update_amax_history
// CALL-NOT: msamp_rt_compute_scale
// CALL: call @msamp_rt_scale_update
// CALL-NOT: msamp_rt_amax
// CALL-NOT: msamp_rt_update_amax_history
// CALL-NOT: msamp_rt_compute_scale
// CALL: return
// DELAYED: 4
// JIT: 2

// The 4 delayed casts' updates are lowered with their quantizes, one
// msamp_rt_quantize_scale_update each (ScaleUpdateToRuntime.cpp), history
// and next scale still in place (arguments 6 and 9). The cost report
// charges it two f32 FLOPs per input element (amax and cast) and every
// operand's bytes once: the first one, the input x [4,3] f32 (48 bytes),
// its history [16] in and out (64 + 64), the previous scale, scale,
// inverse and next scale (4 x 4), the use_jit byte (1), the E4M3 codes
// (12) and the 0-d f32 placeholder of the transposed codes no GEMM reads
// here (4): 209 bytes, where the two calls were 193 + 64.
// COST: {"name": "msamp_rt_quantize_scale_update", "op": "runtime", "unit": "f32", "flops": 24, "bytes": 209,
// SUMS: gpu_cost.json: consistent

// One amax read by two histories (not what msamp-fp8-gemms writes): the
// first chain is fused, the second keeps its ops and reads the amax from
// the first one's rolled history.
// CHECK-LABEL: func.func @shared_amax(
// CHECK: %[[NH:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}} = msamp.scale_update pow2 max
// CHECK-NEXT: %[[E:.+]] = tensor.extract_slice %[[NH]][0] [1] [1]
// CHECK-NEXT: %[[A:.+]] = tensor.collapse_shape %[[E]]
// CHECK-NOT: msamp.scale_update
// CHECK: msamp.update_amax_history %{{.+}}, %[[A]]
// CHECK-NEXT: msamp.compute_scale pow2 max
// CHECK-NOT: msamp.scale_update
// CHECK: return
func.func @shared_amax(%x: tensor<4xf32>, %h: tensor<4xf32>, %p: tensor<f32>)
    -> (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>) {
  %a = msamp.amax %x : tensor<4xf32>
  %h1 = msamp.update_amax_history %h, %a : tensor<4xf32>
  %n = msamp.compute_scale pow2 max %h1, %p for f8E4M3FN : tensor<4xf32>
  %h2 = msamp.update_amax_history %h, %a : tensor<4xf32>
  %n2 = msamp.compute_scale pow2 max %h2, %p for f8E4M3FN : tensor<4xf32>
  return %h1, %n, %h2, %n2 : tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>
}

