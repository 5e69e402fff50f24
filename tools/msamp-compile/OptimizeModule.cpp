//===- OptimizeModule.cpp - LLVM optimization of the step's module --------===//

#include "OptimizeModule.h"

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"

using namespace llvm;

Error mlir::msamp::optimizeModule(Module &module, TargetMachine &machine,
                                  bool hostGlue) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;

  // Optnone, --time-passes and LLVM's other standard instrumentations.
  PassInstrumentationCallbacks callbacks;
  StandardInstrumentations standard(module.getContext(),
                                    /*DebugLogging=*/false);
  standard.registerCallbacks(callbacks, &mam);
  callbacks.registerShouldRunOptionalPassCallback(
      [](StringRef pass, Any) { return pass != "CalledValuePropagationPass"; });

  PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  PassBuilder builder(&machine, tuning, std::nullopt, &callbacks);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  ModulePassManager passes =
      hostGlue ? builder.buildO0DefaultPipeline(OptimizationLevel::O0)
               : builder.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
  passes.run(module, mam);
  return Error::success();
}
