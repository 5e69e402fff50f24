// --msamp-lower-to-gpu="cost-report=FILE" (msamp-compile --target cuda writes
// OUTDIR/gpu_cost.json the same way): every kernel launch and runtime call
// of one step with its FLOPs, bytes and the model's time, and the totals
// (docs/GPU.md "The cost report"). Expected figures, by hand:
//  * kernel 1 (single-thread, msamp-gpu-scalar-kernels, op "scalar"): the
//    three 0-d copies of the constant 1.0 the GEMM takes as scales, stored,
//    and the runs that depend on no kernel or call before them, merged into
//    it (msamp-gpu-merge-scalar-kernels): the 0-d fill of the loss (4
//    bytes), two constant copies for the all-reduce (8), the step increment
//    (load 8 bytes, store 8) and five constant copies for the SGD update
//    (20): no f32 FLOPs (an integer add), 12 + 4 + 8 + 36 = 60 bytes;
//  * kernel 2, relu + exp + row sum fused (8x64 -> 8): 512 iterations x 3
//    FLOPs (maximumf, exp, addf) = 1536; bytes 8x64x4 read + the 8 sums read
//    and written (2 x 32) = 2112 (the sums start from the fill's 0.0, which
//    is no kernel: msamp-gpu-reduction-inits; the op's cost still counts
//    its output as read);
//  * kernel 3, the loss (a full sum of 8, atomic partial sums): 8 FLOPs,
//    32 + 2 x 4 = 40 bytes;
//  * kernel 4 (scalar): step and loss copied into the outputs, each read and
//    written: 2 x 8 + 2 x 4 = 24 bytes (after the loss and the SGD update);
//  * the f32 GEMM x[8,300] x w[300,64]: 2 x 8 x 64 x 300 = 307200 FLOPs on
//    the f32 unit (no TF32); bytes x 9600 + w 76800 + out 2048 + the three
//    0-d scale/amax operands 12 = 88460; time max(307200 / (0.7 x 67e12),
//    88460 / (0.8 x 3.35e12)) + 4 us = 4.03301 us;
//  * sgd: 8 FLOPs x 19200 = 153600;
//  * floor: state w + step = 76808 bytes, inputs x + lr = 9604, nothing kept
//    for backward (no op reads a forward value outside the forward);
//    max(307200 / 67e12, (2 x 76808 + 9604) / 3.35e12) = 4.87224e-05 ms.
// Host synchronizations: none. msamp-gpu-async-launches placed no wait (the
// host code between kernels and runtime calls is kernels now, and the
// step's return leaves the wait to its caller), and no runtime call waits
// on a compiled step's buffers: the SGD update reads step and lr on the
// device, as Adam does. So the step can be a CUDA graph (cuda_graph_blocker
// empty, msamp-gpu-graph-check).
// Managed allocations: none. The step's 15 buffers are views of the static
// device arena (msamp-gpu-static-arena): the GEMM's 8x64 output, the 8 row
// sums, the all-reduced 300x64 gradient (76,800 bytes, reusing the other
// two's bytes, dead by then), and in 9 slots of 256 bytes (the merged
// kernel writes more of them at once than the separate ones did) the loss, the
// new step and ten 0-d copies of the constant 1.0 that the runtime calls
// take as scales. Nothing is in the pinned host arena: the host code
// touches no buffer.
// check_gpu_cost.py recomputes every time and total from the entries.
//
// RUN: msamp-opt %s --msamp-lower-to-gpu="cost-report=%t.json" -o %t.mlir
// RUN: FileCheck %s < %t.json
// RUN: %python %S/Inputs/check_gpu_cost.py %t.json | FileCheck %s --check-prefix=SUMS
// The cost travels on the kernels' locations and is removed afterwards.
// RUN: msamp-opt %t.mlir --mlir-print-debuginfo | FileCheck %s --check-prefix=STRIPPED
// A launch the kernel-cost pass did not tag (here: the outlined step
// printed without locations) is refused, not guessed.
// RUN: msamp-opt %s --msamp-lower-to-gpu --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2> %t.outlined.mlir
// RUN: not msamp-opt %t.outlined.mlir --msamp-gpu-cost-report 2>&1 | FileCheck %s --check-prefix=NOCOST
//
// The FP8 GEMMs of the O2 MLP run on the FP8 unit; their share of the time
// is fp8_gemm_share.
// Its host_syncs are also the object's: no stream synchronization call
// site (its 0-d arithmetic runs as single-thread kernels, and the step
// returns without waiting: the session synchronizes after it), and no
// runtime call waits, so it can be replayed as a CUDA graph: the two weights' casts are one
// msamp_rt_quantize_jit each (fuse-casts) instead of amax, compute_scale and
// quantize, and the 4 Adam updates are 2 msamp_rt_adam_update_multi calls,
// one per dtype group (msamp-gpu-group-adam-updates), which read step and
// lr on the device; the table of buffer addresses each one takes is host
// stack memory, written without waiting for the stream.
// RUN: msamp-compile %mlp_example --opt-level O2 --target cuda --emit-llvm -o %t.mlp > /dev/null
// RUN: FileCheck %s --check-prefix=MLP < %t.mlp/gpu_cost.json
// RUN: %python %S/Inputs/check_gpu_cost.py %t.mlp/gpu_cost.json %t.mlp/train_step.ll | FileCheck %s --check-prefix=SUMS

// CHECK: "model": {"fp8_tflops": 1979, "bf16_tflops": 989, "f32_tflops": 67, "compute_efficiency": 0.7, "memory_tb_per_s": 3.35, "memory_efficiency": 0.8, "launch_us": 4},
// CHECK-NEXT: "kernels": 4,
// CHECK-NEXT: "distinct_kernels": 4,
// CHECK-NEXT: "library_calls": 3,
// CHECK-NEXT: "host_syncs": 0,
// CHECK-NEXT: "managed_allocations": 0,
// CHECK-NEXT: "cuda_graph_blocker": "",
// CHECK-NEXT: "arena_bytes": 79104,
// CHECK-NEXT: "arena_peak_bytes": 79104,
// CHECK-NEXT: "arena_buffers": 15,
// CHECK-NEXT: "host_arena_bytes": 0,
// CHECK-NEXT: "host_arena_buffers": 0,
// CHECK-NEXT: "flops": 462344,
// CHECK-NEXT: "bytes": 474736,
// CHECK-NEXT: "predicted_ms": 0.0281771,
// CHECK-NEXT: "floor_ms": 4.87224e-05,
// CHECK-NEXT: "fp8_gemm_share": 0,
// CHECK-NEXT: "floor": {"gemm_ms": 4.58507e-06, "memory_ms": 4.87224e-05, "minimal_bytes": 163220, "state_bytes": 76808, "kept_for_backward_bytes": 0, "input_bytes": 9604},
// CHECK-NEXT: "launches": [
// CHECK-NEXT: {"name": "train_step_kernel::train_step_kernel", "op": "scalar", "unit": "f32", "flops": 0, "bytes": 60, "time_us": 4.00002},
// CHECK-NEXT: {"name": "train_step_kernel_0::train_step_kernel", "op": "linalg.generic", "unit": "f32", "flops": 1536, "bytes": 2112, "time_us": 4.00079},
// CHECK-NEXT: {"name": "train_step_kernel_1::train_step_kernel", "op": "linalg.generic", "unit": "f32", "flops": 8, "bytes": 40, "time_us": 4.00001},
// CHECK-NEXT: {"name": "train_step_kernel_2::train_step_kernel", "op": "scalar", "unit": "f32", "flops": 0, "bytes": 24, "time_us": 4.00001}
// CHECK-NEXT: ],
// CHECK-NEXT: "calls": [
// CHECK-NEXT: {"name": "msamp_rt_gemm", "op": "gemm", "unit": "f32", "flops": 307200, "bytes": 88460, "time_us": 4.03301},
// CHECK-NEXT: {"name": "msamp_rt_all_reduce", "op": "runtime", "unit": "f32", "flops": 0, "bytes": 153608, "time_us": 4.05732},
// CHECK-NEXT: {"name": "msamp_rt_sgd_update", "op": "runtime", "unit": "f32", "flops": 153600, "bytes": 230432, "time_us": 4.08598}
// CHECK-NEXT: ]

// SUMS: gpu_cost.json: consistent

// STRIPPED-NOT: gpu_kernel_cost

// NOCOST: error: msamp-gpu-cost-report: this launch has no cost

// The first GEMM of fc1: x[4,3] (quantized, 12 bytes) x w1[5,3]^T (15 bytes)
// -> f32 [4,5] (80 bytes), K = 3: 2 x 20 x 3 = 120 FLOPs; 3 scale/amax
// operands: 119 bytes. Each FP8 cast's scaling is one msamp_rt_scale_update
// (msamp-gpu-fuse-scale-updates: 49 calls and 25 kernels before it), and
// each of the 4 delayed casts' update and quantize one
// msamp_rt_quantize_scale_update (29 calls before it).
// MLP: "kernels": 16,
// MLP: "distinct_kernels": 16,
// MLP: "library_calls": 25,
// MLP: "host_syncs": 0,
// MLP: "managed_allocations": 0,
// MLP: "cuda_graph_blocker": "",
// MLP: "host_arena_bytes": 0,
// MLP: {"name": "msamp_rt_gemm", "op": "gemm", "unit": "fp8", "flops": 120, "bytes": 119,

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#all = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
module {
  func.func @train_step(
      %w: tensor<300x64xf32> {msamp.role = "param", msamp.name = "w", msamp.init = "zeros"},
      %step: tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.init = "zeros"},
      %lr: tensor<f32> {msamp.role = "hyperparam", msamp.name = "lr"},
      %x: tensor<8x300xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<300x64xf32> {msamp.role = "param", msamp.name = "w", msamp.updates = 0 : i64},
          tensor<i64> {msamp.role = "step", msamp.name = "step", msamp.updates = 1 : i64})
      attributes {msamp.kind = "train_step", msamp.level = "O0"} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x64xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
    %h = linalg.matmul ins(%x, %w : tensor<8x300xf32>, tensor<300x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      %s = math.exp %m : f32
      linalg.yield %s : f32
    } -> tensor<8x64xf32>
    %e8 = tensor.empty() : tensor<8xf32>
    %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
    %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%r : tensor<8x64xf32>) outs(%z8 : tensor<8xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %e0 = tensor.empty() : tensor<f32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction"]}
        ins(%rows : tensor<8xf32>) outs(%z0 : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %g = msamp.all_reduce mean %w : tensor<300x64xf32>
    %one = arith.constant dense<1> : tensor<i64>
    %t = arith.addi %step, %one : tensor<i64>
    %w1 = msamp.sgd_update param %w : tensor<300x64xf32>, grad %g : tensor<300x64xf32>,
        lr %lr, step %t {momentum = 0.0 : f64, weight_decay = 0.0 : f64}
    return %loss, %w1, %t : tensor<f32>, tensor<300x64xf32>, tensor<i64>
  }
}
