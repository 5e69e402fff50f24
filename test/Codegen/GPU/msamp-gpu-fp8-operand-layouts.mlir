// msamp-gpu-fp8-operand-layouts: an FP8 GEMM operand that cuBLASLt needs
// in the other layout (a with transpose_a, b without transpose_b) and that
// is a quantize's codes as [rows, cols] is read from one linalg.transpose of
// them with the flag flipped; convert-msamp-to-runtime then lets the
// quantize's call write both layouts (msamp_rt_quantize_transpose, or
// msamp_rt_quantize_jit with flag 1) and no transpose is left. Operands it
// cannot serve keep the GEMM's pack and say why in a remark.
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fp8-operand-layouts))' -split-input-file | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fp8-operand-layouts))' --remarks-filter=msamp -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: msamp-opt %s --pass-pipeline='builtin.module(func.func(msamp-gpu-fp8-operand-layouts),convert-msamp-to-runtime)' -split-input-file | FileCheck %s --check-prefix=CALLS

// A linear layer's three GEMMs: fprop (TN already) untouched; the wgrad's
// dY (a, transpose_a) and x (b, no transpose_b) and the dgrad's weight (b)
// transposed, x's transpose made once for the wgrad and a second wgrad.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[X:.+]] = msamp.quantize %{{.+}} : tensor<32x16xf32> to tensor<32x16xf8E4M3FN>
// CHECK-NEXT: %[[XE:.+]] = tensor.empty() : tensor<16x32xf8E4M3FN>
// CHECK-NEXT: %[[XT:.+]] = linalg.transpose ins(%[[X]] : tensor<32x16xf8E4M3FN>) outs(%[[XE]] : tensor<16x32xf8E4M3FN>) permutation = [1, 0]
// CHECK: %[[W:.+]] = msamp.quantize %{{.+}} : tensor<48x16xf32> to tensor<48x16xf8E4M3FN>
// CHECK-NEXT: tensor.empty() : tensor<16x48xf8E4M3FN>
// CHECK-NEXT: %[[WT:.+]] = linalg.transpose ins(%[[W]] :
// CHECK: msamp.gemm %[[X]], %{{.+}}, %[[W]], %{{.+}} {transpose_b}
// CHECK: %[[DY:.+]] = msamp.quantize %{{.+}} : tensor<32x48xf32> to tensor<32x48xf8E5M2>
// CHECK-NEXT: tensor.empty() : tensor<48x32xf8E5M2>
// CHECK-NEXT: %[[DYT:.+]] = linalg.transpose ins(%[[DY]] :
// CHECK: msamp.gemm %[[DYT]], %{{.+}}, %[[XT]], %{{.+}} {transpose_b} : tensor<48x32xf8E5M2>, tensor<16x32xf8E4M3FN> -> tensor<48x16xf32>
// CHECK: msamp.gemm %[[DY]], %{{.+}}, %[[WT]], %{{.+}} {transpose_b} : tensor<32x48xf8E5M2>, tensor<16x48xf8E4M3FN> -> tensor<32x16xf32>
// CHECK: msamp.gemm %[[DYT]], %{{.+}}, %[[XT]], %{{.+}} {transpose_b} : tensor<48x32xf8E5M2>, tensor<16x32xf8E4M3FN> -> tensor<48x16xf32>
// CHECK-NOT: linalg.transpose
// The weight is a just-in-time cast: msamp_rt_quantize_jit writes its
// transposed layout (flag 1); x and dY are delayed casts:
// msamp_rt_quantize_transpose (f32 = 0, E4M3 = 3, E5M2 = 4). Nothing is
// left to transpose, and every GEMM runs TN.
// CALLS-LABEL: func.func @train_step(
// CALLS-NOT: linalg.transpose
// CALLS: call @msamp_rt_quantize_transpose__{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0_i32{{[_0-9]*}}, %c3_i32{{[_0-9]*}})
// CALLS: call @msamp_rt_quantize_jit__{{[0-9]+}}({{.*}}, %c1_i32{{[_0-9]*}})
// CALLS: call @msamp_rt_gemm__{{[0-9]+}}({{.*}}, %c2_i32{{[_0-9]*}})
// CALLS: call @msamp_rt_quantize_transpose__{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0_i32{{[_0-9]*}}, %c4_i32{{[_0-9]*}})
// CALLS-NOT: linalg.transpose
// CALLS-NOT: call @msamp_rt_quantize__
// CALLS-COUNT-3: call @msamp_rt_gemm__{{[0-9]+}}({{.*}}, %c2_i32{{[_0-9]*}})
// CALLS-NOT: call @msamp_rt_gemm
// CALLS: func.func private @msamp_rt_quantize_transpose__0(memref<*xf32>, memref<*xf32>, memref<*xf8E4M3FN>, memref<*xf8E4M3FN>, i32, i32) attributes {msamp.runtime_symbol = "msamp_rt_quantize_transpose"}
module {
  func.func @train_step(
      %x: tensor<32x16xf32> {msamp.role = "input", msamp.name = "x"},
      %xs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"},
      %w: tensor<48x16xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
      %dy: tensor<32x48xf32> {msamp.role = "input", msamp.name = "dy"},
      %gs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "dy.scale", msamp.init = "ones"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1.0> : tensor<f32>
    %xq = msamp.quantize %x, %xs : tensor<32x16xf32> to tensor<32x16xf8E4M3FN>
    %a = msamp.amax %w : tensor<48x16xf32>
    %h = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %ws = msamp.compute_scale pow2 most_recent %h, %one for f8E4M3FN : tensor<1xf32>
    %wq = msamp.quantize %w, %ws : tensor<48x16xf32> to tensor<48x16xf8E4M3FN>
    %wsi = arith.divf %one, %ws : tensor<f32>
    %xsi = arith.divf %one, %xs : tensor<f32>
    %y = msamp.gemm %xq, %xsi, %wq, %wsi {transpose_b} : tensor<32x16xf8E4M3FN>, tensor<48x16xf8E4M3FN> -> tensor<32x48xf32>
    %dyq = msamp.quantize %dy, %gs : tensor<32x48xf32> to tensor<32x48xf8E5M2>
    %gsi = arith.divf %one, %gs : tensor<f32>
    %dw = msamp.gemm %dyq, %gsi, %xq, %xsi {transpose_a} : tensor<32x48xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<48x16xf32>
    %dx = msamp.gemm %dyq, %gsi, %wq, %wsi : tensor<32x48xf8E5M2>, tensor<48x16xf8E4M3FN> -> tensor<32x16xf32>
    %dw2 = msamp.gemm %dyq, %gsi, %xq, %xsi {transpose_a} : tensor<32x48xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<48x16xf32>
    %l0 = msamp.amax %y : tensor<32x48xf32>
    %l1 = msamp.amax %dw : tensor<48x16xf32>
    %l2 = msamp.amax %dx : tensor<32x16xf32>
    %l3 = msamp.amax %dw2 : tensor<48x16xf32>
    %s0 = arith.addf %l0, %l1 : tensor<f32>
    %s1 = arith.addf %l2, %l3 : tensor<f32>
    %loss = arith.addf %s0, %s1 : tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Through a view: the rank-3 quantize's codes collapsed to [rows, cols]
// keeping the last dimension are what out_t holds.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[Q:.+]] = msamp.quantize %{{.+}} : tensor<2x16x16xf32> to tensor<2x16x16xf8E4M3FN>
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[Q]] {{\[}}[0, 1], [2]]
// CHECK-NEXT: tensor.empty() : tensor<16x32xf8E4M3FN>
// CHECK-NEXT: %[[CT:.+]] = linalg.transpose ins(%[[C]] :
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %[[CT]], %{{.+}} {transpose_a, transpose_b}
// g, an input of the step, keeps its pack (the first REMARK line of the
// last case).
// CALLS-LABEL: func.func @train_step(
// CALLS-NOT: linalg.transpose
// CALLS: call @msamp_rt_quantize_transpose__{{[0-9]+}}(
// CALLS-NOT: linalg.transpose
// CALLS: call @msamp_rt_gemm__
module {
  func.func @train_step(
      %x: tensor<2x16x16xf32> {msamp.role = "input", msamp.name = "x"},
      %xs: tensor<f32> {msamp.role = "scaling_state", msamp.name = "x.scale", msamp.init = "ones"},
      %g: tensor<32x16xf8E5M2> {msamp.role = "input", msamp.name = "g"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %q = msamp.quantize %x, %xs : tensor<2x16x16xf32> to tensor<2x16x16xf8E4M3FN>
    %c = tensor.collapse_shape %q [[0, 1], [2]] : tensor<2x16x16xf8E4M3FN> into tensor<32x16xf8E4M3FN>
    %dw = msamp.gemm %g, %xs, %c, %xs {transpose_a} : tensor<32x16xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>
    %loss = msamp.amax %dw : tensor<16x16xf32>
    return %loss : tensor<f32>
  }
}

// -----

// Left to the pack, each with its remark: an FP8 operand that is a function
// argument (no quantize to write it), a view that does not keep the last
// dimension, a batched GEMM, a quantize's codes whose K = 40 msamp_rt_gemm
// pads to 48 anyway (that copy transposes too: the LM head's case). A high-precision GEMM takes any layout.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: linalg.transpose
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {transpose_a}
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {transpose_a}
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {transpose_a, transpose_b}
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {transpose_a}
// CHECK: msamp.gemm %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {transpose_a, transpose_b}
// CHECK-NOT: linalg.transpose
// REMARK: remark: [Missed] FP8OperandPacked | Category:msamp:gpu-fp8-operand-layouts | Remark="the GEMM's FP8 operand a is needed transposed and stays packed by msamp_rt_gemm: it is not the codes of an msamp.quantize
// REMARK: remark: [Missed] FP8OperandPacked | Category:msamp:gpu-fp8-operand-layouts | Remark="the GEMM's FP8 operand a is needed transposed and stays packed by msamp_rt_gemm: it is not the codes of an msamp.quantize
// REMARK: remark: [Missed] FP8OperandPacked | Category:msamp:gpu-fp8-operand-layouts | Remark="the GEMM's FP8 operand b is needed transposed and stays packed by msamp_rt_gemm: it is not the codes of an msamp.quantize
// REMARK: remark: [Missed] FP8OperandPacked | Category:msamp:gpu-fp8-operand-layouts | Remark="the GEMM's FP8 operand a is needed transposed and stays packed by msamp_rt_gemm: it is not the codes of an msamp.quantize
// REMARK: remark: [Missed] FP8OperandPacked | Category:msamp:gpu-fp8-operand-layouts | Remark="the GEMM's FP8 operand b is needed transposed and stays packed by msamp_rt_gemm: it is not the codes of an msamp.quantize
// REMARK: remark: [Missed] FP8OperandPacked | Category:msamp:gpu-fp8-operand-layouts | Remark="the GEMM's FP8 operand a is needed transposed and stays packed by msamp_rt_gemm: a batched GEMM
// REMARK: remark: [Missed] FP8OperandPacked | Category:msamp:gpu-fp8-operand-layouts | Remark="the GEMM's FP8 operand a is needed transposed and stays packed by msamp_rt_gemm: a dimension is no multiple of 16, so msamp_rt_gemm pads it anyway
// REMARK-NOT: FP8OperandPacked
module {
  func.func @train_step(
      %g: tensor<32x16xf8E5M2> {msamp.role = "input", msamp.name = "g"},
      %w: tensor<32x16xf8E4M3FN> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
      %x: tensor<4x8x16xf32> {msamp.role = "input", msamp.name = "x"},
      %x2: tensor<16x2x16xf32> {msamp.role = "input", msamp.name = "x2"},
      %b: tensor<4x8x8xf8E4M3FN> {msamp.role = "input", msamp.name = "b"},
      %h: tensor<32x16xbf16> {msamp.role = "input", msamp.name = "h"},
      %x40: tensor<40x32xf32> {msamp.role = "input", msamp.name = "x40"},
      %w40: tensor<16x40xf8E4M3FN> {msamp.role = "input", msamp.name = "w40"},
      %s: tensor<f32> {msamp.role = "scaling_state", msamp.name = "s", msamp.init = "ones"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %dw = msamp.gemm %g, %s, %w, %s {transpose_a} : tensor<32x16xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>
    %q = msamp.quantize %x2, %s : tensor<16x2x16xf32> to tensor<16x2x16xf8E4M3FN>
    %c = tensor.collapse_shape %q [[0], [1, 2]] : tensor<16x2x16xf8E4M3FN> into tensor<16x32xf8E4M3FN>
    %r = msamp.gemm %c, %s, %c, %s {transpose_a} : tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN> -> tensor<32x32xf32>
    %bq = msamp.quantize %x, %s : tensor<4x8x16xf32> to tensor<4x8x16xf8E4M3FN>
    %bb = msamp.gemm %bq, %s, %b, %s {transpose_a, transpose_b} : tensor<4x8x16xf8E4M3FN>, tensor<4x8x8xf8E4M3FN> -> tensor<4x16x8xf32>
    %hp = msamp.gemm %h, %s, %h, %s {transpose_a} : tensor<32x16xbf16>, tensor<32x16xbf16> -> tensor<16x16xf32>
    %pq = msamp.quantize %x40, %s : tensor<40x32xf32> to tensor<40x32xf8E4M3FN>
    %pg = msamp.gemm %pq, %s, %w40, %s {transpose_a, transpose_b} : tensor<40x32xf8E4M3FN>, tensor<16x40xf8E4M3FN> -> tensor<32x16xf32>
    %l0 = msamp.amax %dw : tensor<16x16xf32>
    %l1 = msamp.amax %r : tensor<32x32xf32>
    %l2 = msamp.amax %bb : tensor<4x16x8xf32>
    %l3 = msamp.amax %hp : tensor<16x16xf32>
    %s0 = arith.addf %l0, %l1 : tensor<f32>
    %l4 = msamp.amax %pg : tensor<32x16xf32>
    %s1 = arith.addf %l2, %l3 : tensor<f32>
    %s2 = arith.addf %s0, %s1 : tensor<f32>
    %loss = arith.addf %s2, %l4 : tensor<f32>
    return %loss : tensor<f32>
  }
}
