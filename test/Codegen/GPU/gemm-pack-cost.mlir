// The cost report's GEMM packs and msamp_rt_quantize_transpose (docs/GPU.md
// "The cost report", "Both FP8 layouts from one cast (issue 23)"), by hand.
// x[48,32] f32 is quantized to E4M3 with a delayed scale and read by two
// FP8 GEMMs:
//  * %dw = dy^T x (wgrad): x is needed with K = 48 innermost, so
//    msamp-gpu-fp8-operand-layouts has the quantize write x^T [32, 48]
//    (msamp_rt_quantize_transpose: 1536 FLOPs; bytes 6144 in + 4 scale +
//    1536 codes + 1536 transposed codes = 9220; 4.00344 us). dy, an input
//    of the step, has no quantize to write its transpose: msamp_rt_gemm
//    packs it, [48, 40] -> [40, 48] padded to [48, 48] (M = 40 is no
//    multiple of 16): 1920 + 2304 = 4224 bytes, 4.00158 us.
//  * %y = x w^T (fprop): x in place; w [24, 32] is TN already, but N = 24
//    pads to 32: a pack [24, 32] -> [32, 32], 768 + 1024 = 1792 bytes,
//    4.00067 us.
// Two pack launches (three without the transposed codes), in `bytes` and
// `predicted_ms`, neither kernels nor library calls.
// RUN: msamp-opt %s --msamp-lower-to-gpu="cost-report=%t.json" -o /dev/null
// RUN: FileCheck %s < %t.json
// RUN: %python %S/Inputs/check_gpu_cost.py %t.json | FileCheck %s --check-prefix=SUMS
// RUN: msamp-opt %s --msamp-lower-to-gpu --mlir-print-ir-before=msamp-gpu-cost-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR

// CHECK: "library_calls": 5,
// CHECK: {"name": "msamp_rt_quantize_transpose", "op": "runtime", "unit": "f32", "flops": 1536, "bytes": 9220, "time_us": 4.00344},
// CHECK: "gemm_pack_launches": 2,
// CHECK-NEXT: "gemm_packs": [
// CHECK-NEXT: {"name": "msamp_rt_gemm pack a", "op": "gemm_pack", "unit": "f32", "flops": 0, "bytes": 4224, "time_us": 4.00158},
// CHECK-NEXT: {"name": "msamp_rt_gemm pack b", "op": "gemm_pack", "unit": "f32", "flops": 0, "bytes": 1792, "time_us": 4.00067}
// CHECK-NEXT: ]
// SUMS: gpu_cost.json: consistent
// The wgrad reads x^T with transpose_b (flags 2), dy with transpose_a (1).
// IR: call @msamp_rt_quantize_transpose(
// IR-NOT: linalg.transpose
// IR: call @msamp_rt_gemm({{.*}}, %c3_i32{{[_0-9]*}})
// IR: call @msamp_rt_gemm({{.*}}, %c2_i32{{[_0-9]*}})
module {
  func.func @train_step(
      %x: tensor<48x32xf32> {msamp.role = "input", msamp.name = "x"},
      %xs: tensor<f32> {msamp.role = "input", msamp.name = "xs"},
      %dy: tensor<48x40xf8E5M2> {msamp.role = "input", msamp.name = "dy"},
      %w: tensor<24x32xf8E4M3FN> {msamp.role = "input", msamp.name = "w"},
      %si: tensor<f32> {msamp.role = "input", msamp.name = "si"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %xq = msamp.quantize %x, %xs : tensor<48x32xf32> to tensor<48x32xf8E4M3FN>
    %dw = msamp.gemm %dy, %si, %xq, %si {transpose_a} : tensor<48x40xf8E5M2>, tensor<48x32xf8E4M3FN> -> tensor<40x32xf32>
    %y = msamp.gemm %xq, %si, %w, %si {transpose_b} : tensor<48x32xf8E4M3FN>, tensor<24x32xf8E4M3FN> -> tensor<48x24xf32>
    %a = msamp.amax %dw : tensor<40x32xf32>
    %b = msamp.amax %y : tensor<48x24xf32>
    %loss = arith.addf %a, %b : tensor<f32>
    return %loss : tensor<f32>
  }
}
