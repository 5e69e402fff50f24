//===- OptimizeModule.h - LLVM optimization of the step ---------*- C++ -*-===//
//
// CPU target: LLVM's default -O3 pipeline (the options of MLIR's
// makeOptimizingTransformer: loop and SLP vectorization, unrolling,
// interleaving) with two differences that only save time:
//
//  - `optnone` is honoured: makeOptimizingTransformer registers no pass
//    instrumentation, so its function passes optimized the functions
//    msamp-optnone-entry-points marks (@train_step and its wrappers);
//  - CalledValuePropagation is skipped: it only attaches !callees metadata
//    to indirect calls, which a compiled step does not make, and its
//    module-wide propagation over every pointer argument was 90% of -O3 on
//    a 12-layer LM (the step passes ~1,300 descriptor fields per call;
//    docs/Benchmarks.md, issue 19).
//
// GPU target: LLVM's -O0 pipeline. The host module is glue (launches and
// runtime calls, kernel registration; the kernels are PTX, optimized by
// gpu-module-to-binary), and -O3's interprocedural passes still walked the
// step at -O0 (IPSCCP, GlobalOpt: 0.4 s of a 24-layer compile, issue 19).
//
// With --time-passes the optimizer's passes are timed too.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_COMPILE_OPTIMIZEMODULE_H
#define MSAMP_TOOLS_MSAMP_COMPILE_OPTIMIZEMODULE_H

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace mlir::msamp {

/// Runs the -O3 pipeline above (`hostGlue`: the -O0 pipeline) on `module`
/// for `machine`.
llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           bool hostGlue);

} // namespace mlir::msamp

#endif // MSAMP_TOOLS_MSAMP_COMPILE_OPTIMIZEMODULE_H
