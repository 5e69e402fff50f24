// --msamp-lower-to-gpu on a small step: a GEMM and the optimizer stay
// runtime calls; the fused relu+exp+row-sum becomes a kernel (one gpu.binary each, PTX for sm_90 / +ptx80 or sm_89 /
// +ptx81); the full reduction to the 0-d loss is a kernel of partial sums
// and an atomic add; the 0-d arithmetic is single-thread kernels; every
// buffer of the step is a view of the static device arena, taken once at
// the step's entry: nothing is allocated or freed inside the step.
// RUN: msamp-opt %s --msamp-lower-to-gpu | FileCheck %s
// RUN: msamp-opt %s --msamp-lower-to-gpu="chip=sm_89" | FileCheck %s --check-prefix=SM89
// RUN: msamp-opt %s --msamp-lower-to-gpu --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTLINED
// RUN: msamp-opt %s --msamp-lower-to-gpu --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVVM

// OUTLINED-LABEL: func.func @train_step(
// OUTLINED: call @msamp_rt_gpu_arena(
// The 0-d constants the GEMM takes as scales, stored by one thread
// (msamp-gpu-scalar-kernels): no host code between kernels and calls. The
// loss's 0-d initial value, the all-reduce's constants, the step increment
// and the SGD's constants depend on no kernel or call before them: the
// same kernel (msamp-gpu-merge-scalar-kernels).
// OUTLINED: gpu.launch_func @[[CONSTS:train_step_kernel]]::@train_step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%{{.+}} : f32, %{{.+}} : memref<f32>, %{{.+}} : memref<f32>, %{{.+}} : memref<f32>, %{{.+}} : f32, %{{.+}} : memref<f32>, {{.*}}%arg1 : memref<i64>, %c1_i64 : i64,
// OUTLINED: call @msamp_rt_gemm(
// relu, exp and the row sum, fused: a warp per row (msamp-gpu-row-reductions),
// the 8 rows in one block of 8 warps; the sums start from the fill's 0.0,
// which is no kernel (msamp-gpu-reduction-inits).
// OUTLINED-NOT: gpu.launch_func
// OUTLINED: gpu.launch_func @[[ROWS:train_step_kernel_0]]::@train_step_kernel blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%c32 : index, %{{.+}} : memref<8x64xf32>
// The 0-d loss: 8 threads (one element each) in a block of a warp, their
// values added in workgroup memory, one atomic add
// (msamp-gpu-block-atomic-sums).
// OUTLINED: gpu.launch_func @[[LOSS:train_step_kernel_1]]::@train_step_kernel blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%c8 : index, %{{.+}} : memref<8xf32>
// OUTLINED: call @msamp_rt_all_reduce(
// SGD writes the 300x64 weight in place: no copy kernel before it.
// OUTLINED-NOT: gpu.launch_func
// OUTLINED: call @msamp_rt_sgd_update(
// The step and the loss copied into the outputs, one thread: after the
// loss's kernel and the SGD update, which may write the same buffers.
// OUTLINED: gpu.launch_func @train_step_kernel_2::@train_step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
// OUTLINED: gpu.module @[[CONSTS]]
// OUTLINED: memref.store %{{.+}}, %{{.+}}[] : memref<f32>
// OUTLINED: memref.load %{{.+}}[] : memref<i64>
// OUTLINED: arith.addi
// OUTLINED: memref.store %{{.+}}, %{{.+}}[] : memref<i64>
// OUTLINED: gpu.module @[[ROWS]]
// OUTLINED: gpu.func @train_step_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>
// OUTLINED: scf.for {{.+}} iter_args
// OUTLINED: arith.maximumf
// OUTLINED: math.exp
// OUTLINED: arith.addf
// OUTLINED: gpu.shuffle  xor
// OUTLINED: scf.if
// OUTLINED: gpu.module @[[LOSS]]
// OUTLINED: scf.for {{.+}} iter_args
// OUTLINED: gpu.barrier
// OUTLINED: memref.atomic_rmw addf

// Kernels take their buffers as bare pointers, one !llvm.ptr each (the
// shape, strides and offset are constants of the kernel): the row kernel
// reads the 8x64 input through %arg1 and writes the 8 sums through %arg12,
// 13 parameters where whole descriptors made 23; its launch passes the same.
// NVVM: gpu.module @train_step_kernel_0 [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// NVVM: llvm.func @__nv_expf(f32) -> f32
// NVVM: llvm.func @train_step_kernel(%arg0: i64, %arg1: !llvm.ptr, %arg2: f32, %arg3: i64, %arg4: f32, %arg5: i32, %arg6: i32, %arg7: i32, %arg8: i32, %arg9: i32, %arg10: i32, %arg11: i64, %arg12: !llvm.ptr) attributes {gpu.kernel, {{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// NVVM: nvvm.read.ptx.sreg.tid.x
// NVVM: llvm.intr.maximum
// NVVM: llvm.call @__nv_expf
// NVVM: llvm.fadd
// NVVM: nvvm.shfl.sync bfly

// The kernels, PTX for sm_90, embedded in the host module.
// CHECK-COUNT-4: gpu.binary @train_step_kernel{{(_[0-9]+)?}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}, assembly = "{{.*}}.version 8.0\0A.target sm_90\0A
// CHECK-NOT: gpu.binary
// Every buffer of the step is a view of the static device arena, taken
// once at the entry; nothing is allocated or freed in the step, and no
// buffer is in the pinned host arena (the host code touches none). The
// step is moved into the packed entry point, which is compiled at -O0
// (host-step-optnone.test).
// CHECK-LABEL: llvm.func @msamp_train_step_packed(
// CHECK-NOT: _mlir_memref_to_llvm_alloc
// CHECK-NOT: msamp_rt_gpu_host_arena
// CHECK: llvm.call @msamp_rt_gpu_arena(
// CHECK-NOT: _mlir_memref_to_llvm_alloc
// CHECK-NOT: msamp_rt_gpu_host_arena
// Kernels and runtime calls are asynchronous on one stream
// (msamp-gpu-async-launches), and the 0-d arithmetic between them is
// kernels too (msamp-gpu-scalar-kernels); the step does not wait at its
// end either: it returns with its work enqueued and its caller (the
// session) synchronizes.
// CHECK: %[[S:.+]] = llvm.call @mgpuStreamCreate()
// CHECK-NEXT: gpu.launch_func <%[[S]] : !llvm.ptr> @train_step_kernel::@train_step_kernel
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: llvm.call @msamp_rt_gemm(
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @train_step_kernel_0::@train_step_kernel blocks in ({{.+}}) threads in ({{.+}}) : i64 args(%{{.+}} : i64, %{{.+}} : !llvm.ptr, %{{.+}} : f32, %{{.+}} : i64, %{{.+}} : f32, %{{.+}} : i32, %{{.+}} : i32, %{{.+}} : i32, %{{.+}} : i32, %{{.+}} : i32, %{{.+}} : i32, %{{.+}} : i64, %{{.+}} : !llvm.ptr){{$}}
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @train_step_kernel_1::@train_step_kernel
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: llvm.call @msamp_rt_all_reduce(
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: llvm.call @msamp_rt_sgd_update(
// CHECK-NEXT: gpu.launch_func <%[[S]] : !llvm.ptr> @train_step_kernel_2::@train_step_kernel
// CHECK-NOT: mgpuStreamSynchronize
// CHECK-NOT: _mlir_memref_to_llvm_free
// CHECK: llvm.return
// CHECK-NEXT: }

// SM89-COUNT-4: gpu.binary @{{.*}}#nvvm.target<O = 3, chip = "sm_89", features = "+ptx81">{{.*}}.version 8.1\0A.target sm_89\0A
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
