//===- Passes.td - msamp GPU lowering passes -----------------*- tablegen -*-===//
//
// The passes of --msamp-lower-to-gpu (docs/Passes.md): the elementwise and
// reduction linalg of a bufferized train step become GPU kernels; the
// runtime calls (GEMMs, collectives, casts, optimizers) stay host calls.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_PASSES_TD
#define MSAMP_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MSAMPGPUStageGlobals : Pass<"msamp-gpu-stage-globals", "::mlir::ModuleOp"> {
  let summary = "copy memref.get_global constants into step-local buffers";
  let description = [{
    A `memref.global` lives in the host image of the compiled step, which a
    GPU kernel cannot read. Each `memref.get_global` inside a function body
    becomes a `memref.alloc` (device-accessible once the host allocation
    functions are the runtime's, see --msamp-lower-to-gpu) filled with a
    `memref.copy` from the global. Run it after bufferization and before
    the buffer deallocation pipeline, which then frees the copies.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MSAMPGPUCopiesToLinalg
    : Pass<"msamp-gpu-copies-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "turn ranked memref.copy into linalg.copy";
  let description = [{
    Buffer copies of rank >= 1 between identity-layout buffers become
    `linalg.copy`, so that the GPU pipeline runs them as kernels instead of
    host loops over device-resident memory. 0-d copies stay on the host.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MSAMPGPUParallelDimsOuter
    : Pass<"msamp-gpu-parallel-dims-outer", "::mlir::func::FuncOp"> {
  let summary = "move the parallel dimensions of linalg ops outermost";
  let description = [{
    A linalg op that reduces over an outer dimension (a bias gradient:
    `[batch, features] -> [features]`) becomes, in
    convert-linalg-to-parallel-loops, a sequential host loop around a
    parallel loop: one kernel launch per batch row. This pass generalizes
    such ops and interchanges their iterators so that every parallel
    dimension comes first (in its original order) and the reductions
    last: one kernel, one thread per output element, the reduction a loop
    inside it. Ops whose reductions are already innermost are untouched.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MSAMPGPUAtomicFullReductions
    : Pass<"msamp-gpu-atomic-full-reductions", "::mlir::func::FuncOp"> {
  let summary = "full f32/f64 sum reductions -> strided partial sums + atomic add";
  let description = [{
    A linalg op whose iterators are all reductions into a 0-d buffer (the
    loss, the gradient norm's sums of squares) has no parallel dimension:
    convert-linalg-to-parallel-loops would leave it a host loop, which
    pulls every page it reads from the GPU to the host each step. When the
    body is `acc + g(inputs)` (one `arith.addf` of the accumulator, f32 or
    f64, static loop ranges, no `linalg.index`), it becomes an
    `scf.parallel` of `min(N, threads)` threads; thread t sums g over the
    elements t, t + T, ... (coalesced) and adds its partial sum to the 0-d
    buffer with `memref.atomic_rmw addf`. The result equals the sequential
    sum up to floating-point reassociation (the order of the atomic adds
    varies from run to run).
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"65536",
           "most threads (partial sums) per reduction">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPGPUTileParallelLoops
    : Pass<"msamp-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "collapse and tile outermost scf.parallel loops into blocks x threads";
  let description = [{
    Each outermost `scf.parallel` is collapsed into one dimension (its
    iteration space linearized in row-major order, the indices recovered
    in the body), then tiled by `block-size` without min/max bounds (the
    tail is an `scf.if` inside the kernel). After `gpu-map-parallel-loops`
    the tile loop is blockIdx.x and the inner loop threadIdx.x: any tensor
    fits the 1-D grid (gridDim.y/z and blockDim.z are small), and
    neighbouring threads touch neighbouring elements.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block along the innermost dimension">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPGPUDedupeKernels
    : Pass<"msamp-gpu-dedupe-kernels", "::mlir::ModuleOp"> {
  let summary = "one gpu.module per structurally identical kernel";
  let description = [{
    After `gpu-kernel-outlining`, which makes one `gpu.module` per launch:
    modules whose kernels are structurally identical (same ops, attributes,
    shapes and element types: they differ only in the buffers they are
    launched on) are merged into the first, and every `gpu.launch_func`
    of the others launches that one. An N-layer transformer then compiles
    (and the driver JITs) each layer's kernels once, not N times. A remark
    (`kernels-deduplicated`) reports the counts.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numDeduplicated", "num-deduplicated",
              "gpu.modules merged into an identical one">
  ];
}

def MSAMPGPULowerFP8Casts : Pass<"msamp-gpu-lower-fp8-casts"> {
  let summary = "FP8 casts in GPU kernels -> NVVM cvt with satfinite";
  let description = [{
    Upstream's GPU-to-NVVM conversion does not lower `arith.truncf` or
    `arith.extf` to or from `f8E4M3FN` / `f8E5M2`. Inside `gpu.func`s this
    pass rewrites

    * `arith.truncf %x : f32 to f8E4M3FN|f8E5M2` (f16, bf16 and f64 sources
      go through f32 first) into `nvvm.convert.f32x2.to.f8x2` with
      `rnd = rn` and `sat = satfinite` (PTX
      `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`: round to nearest even, finite
      overflow and infinities saturate to the format's largest finite
      value, NaN stays NaN), i.e. the runtime's numerics;
    * `arith.extf %x : f8E4M3FN|f8E5M2 to f16|f32|...` into
      `nvvm.convert.f8x2.to.f16x2` (exact) followed by an exact `extf`.

    Both instructions need sm_89 (PTX 8.1) or sm_90 (PTX 8.0). Run it
    before `convert-gpu-to-nvvm`.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def MSAMPGPUStepFloor : Pass<"msamp-gpu-step-floor", "::mlir::ModuleOp"> {
  let summary = "record the tensor-level inputs of the cost report's floor";
  let description = [{
    On the tensor-level train step, before bufferization: records on it
    (`msamp.gpu_step_floor`) the bytes of its state, of its inputs (the
    batch), and of the values kept for backward: results of ops the loss
    depends on that an op the loss does not depend on (backward, optimizer)
    also reads, a reshape counted as its source. --msamp-gpu-cost-report
    turns them into `floor_ms` (docs/GPU.md "The cost report").
  }];
}

def MSAMPGPUGroupAdamUpdates
    : Pass<"msamp-gpu-group-adam-updates", "::mlir::func::FuncOp"> {
  let summary = "group adjacent Adam updates into one multi-tensor call";
  let description = [{
    On the tensor-level train step, before convert-msamp-to-runtime: every
    maximal run of adjacent `msamp.adam_update` ops that can share one
    `msamp_rt_adam_update_multi` call (canShareAdamCall: the same lr and
    step values, hyper-parameters and dtypes) gets one group id
    (`msamp.adam_group`), which the conversion lowers to one call, so that
    the CUDA backend updates all of them in one launch per pass (per 24
    tensors) instead of one call each. A run of one is left alone. Only
    adjacent updates are grouped: no op between them can then read a state
    the call writes in place.
  }];
  let statistics = [
    Statistic<"numGroups", "num-groups", "multi-tensor Adam calls made">,
    Statistic<"numGrouped", "num-grouped", "Adam updates grouped">
  ];
}

def MSAMPGPUKernelCosts
    : Pass<"msamp-gpu-kernel-costs", "::mlir::func::FuncOp"> {
  let summary = "attach each linalg op's kernel cost to its location";
  let description = [{
    Before msamp-gpu-atomic-full-reductions and
    convert-linalg-to-parallel-loops: every linalg op with a loop gets its
    cost as a kernel (MSAMP/Codegen/GPU/CostModel.h: FLOPs, bytes) as the
    metadata of a FusedLoc around its location. The passes that turn it
    into a parallel loop, a gpu.launch and a gpu.launch_func keep that
    location, so --msamp-gpu-cost-report reads each launch's cost from it.
  }];
}

def MSAMPGPUCostReport : Pass<"msamp-gpu-cost-report", "::mlir::ModuleOp"> {
  let summary = "write gpu_cost.json: per launch and library call, and totals";
  let description = [{
    After kernel outlining: reads each `gpu.launch_func`'s cost from the
    location msamp-gpu-kernel-costs tagged (a launch without one is an
    error), costs
    each runtime call (`msamp_rt_*`), counts host synchronizations per
    step, and writes the report to `file` (docs/Interfaces.md 4, docs/GPU.md
    "The cost report"). Removes what the cost passes recorded (the
    step's attribute, the locations' cost metadata).
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "where to write gpu_cost.json (empty: nowhere)">
  ];
}

def MSAMPGPUAsyncLaunches
    : Pass<"msamp-gpu-async-launches", "::mlir::func::FuncOp"> {
  let summary = "launch kernels asynchronously; synchronize only before host code that touches memory";
  let description = [{
    After kernel outlining, a `gpu.launch_func` without an async token is
    lowered by gpu-to-llvm to a launch followed by a stream
    synchronization. The step's launches and its runtime calls all run on
    the session's one stream (the runtime's GPU wrappers hand out the CUDA
    backend's stream), so they are ordered without the host waiting: only
    host code that reads or writes memory (a `memref.load`, `store` or
    `copy` of the 0-d arithmetic left on the host, a call that is not one
    of the backend's stream-ordered entry points, a loop or branch, the
    return) must wait for the kernels before it. In each block, launches
    become `gpu.launch_func async` chained on one token (from `gpu.wait
    async`, i.e. the stream), and a blocking `gpu.wait` is placed only
    before the first such host op after a launch, and before the block's
    terminator. Allocation and deallocation (stream-ordered reuse by the
    runtime's cache) and pure ops do not wait.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // MSAMP_CODEGEN_GPU_PASSES_TD
