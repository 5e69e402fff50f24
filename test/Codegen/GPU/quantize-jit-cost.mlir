// The cost report's entry for msamp_rt_quantize_jit (docs/GPU.md "The cost
// report"): a just-in-time cast of x[64,64] f32 to E4M3 fused into one call
// (convert-msamp-to-runtime's fuse-casts), by hand:
//  * FLOPs: 2 per element (the amax compares, the cast multiplies):
//    2 x 4096 = 8192 on the f32 unit;
//  * bytes: the input read twice (amax, then the cast) 2 x 16384, prev_scale
//    4, the codes 4096, scale 4 and scale_inv 4 = 36876; out_t, the
//    placeholder without the transpose flag, is not counted;
//  * time: max(8192 / (0.7 x 67e12), 36876 / (0.8 x 3.35e12)) + 4 us
//    = 4.01376 us.
// Three runtime calls in all (the cast, the GEMM and the loss's amax),
// against five with fuse-casts=false (amax, compute_scale, quantize); the
// 1 / scale the GEMM reads is the call's output, not host code.
// RUN: msamp-opt %s --msamp-lower-to-gpu="cost-report=%t.json" -o /dev/null
// RUN: FileCheck %s < %t.json
// RUN: %python %S/Inputs/check_gpu_cost.py %t.json | FileCheck %s --check-prefix=SUMS
// RUN: msamp-opt %s --msamp-lower-to-gpu --mlir-print-ir-before=msamp-gpu-cost-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR

// CHECK: "library_calls": 3,
// CHECK: {"name": "msamp_rt_quantize_jit", "op": "runtime", "unit": "f32", "flops": 8192, "bytes": 36876, "time_us": 4.01376},
// SUMS: gpu_cost.json: consistent
// IR: call @msamp_rt_quantize_jit(
// IR-NOT: arith.divf
// IR: call @msamp_rt_gemm(
module {
  func.func @train_step(
      %x: tensor<64x64xf32> {msamp.role = "input", msamp.name = "x"},
      %w: tensor<64x64xf8E4M3FN> {msamp.role = "input", msamp.name = "w"},
      %wsi: tensor<f32> {msamp.role = "input", msamp.name = "wsi"})
      -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O2"} {
    %one = arith.constant dense<1.0> : tensor<f32>
    %a = msamp.amax %x : tensor<64x64xf32>
    %h = tensor.expand_shape %a [] output_shape [1] : tensor<f32> into tensor<1xf32>
    %s = msamp.compute_scale pow2 most_recent %h, %one for f8E4M3FN : tensor<1xf32>
    %q = msamp.quantize %x, %s : tensor<64x64xf32> to tensor<64x64xf8E4M3FN>
    %si = arith.divf %one, %s : tensor<f32>
    %g = msamp.gemm %q, %si, %w, %wsi {transpose_b} : tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
    %loss = msamp.amax %g : tensor<64x64xf32>
    return %loss : tensor<f32>
  }
}
