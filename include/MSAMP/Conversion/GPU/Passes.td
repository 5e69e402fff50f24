//===- Passes.td - msamp GPU lowering passes -----------------*- tablegen -*-===//
//
// The passes of --msamp-lower-to-gpu (docs/Passes.md): the elementwise and
// reduction linalg of a bufferized train step become GPU kernels; the
// runtime calls (GEMMs, collectives, casts, optimizers) stay host calls.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CONVERSION_GPU_PASSES_TD
#define MSAMP_CONVERSION_GPU_PASSES_TD

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

def MSAMPGPUTileParallelLoops
    : Pass<"msamp-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "tile outermost scf.parallel loops into blocks x threads";
  let description = [{
    Each outermost `scf.parallel` is tiled by `block-size` along its
    innermost (contiguous) dimension and by 1 along the others, without
    min/max bounds (the tail is an `scf.if` inside the kernel). After
    `gpu-map-parallel-loops` the tile loop is the grid and the inner loop
    the block, so neighbouring threads touch neighbouring elements.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block along the innermost dimension">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
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

#endif // MSAMP_CONVERSION_GPU_PASSES_TD
