//===- ParallelCodegen.cpp - object code on several threads ---------------===//

#include "ParallelCodegen.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <mutex>

using namespace llvm;

unsigned mlir::msamp::codegenPartitions(unsigned numFunctions) {
  return std::clamp(numFunctions, 1u, kMaxCodegenPartitions);
}

/// Compiles one partition, given as bitcode, in a context of its own (an
/// LLVMContext is not thread-safe) and writes the object to `path`.
static Error emitPartition(StringRef bitcode, StringRef path,
                           TargetMachine &machine) {
  LLVMContext context;
  Expected<std::unique_ptr<Module>> module =
      parseBitcodeFile(MemoryBufferRef(bitcode, "partition"), context);
  if (!module)
    return module.takeError();
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "cannot write %s: %s", path.str().c_str(),
                             ec.message().c_str());
  legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  CodeGenFileType::ObjectFile))
    return createStringError("the host target cannot emit object files");
  codegen.run(**module);
  return Error::success();
}

/// Gives every local symbol external linkage and hidden visibility, as
/// SplitModule does with the partitions it makes, so that the -O0
/// partition and the others can reference each other's functions and
/// constants (the step calls the internal block functions).
static void externalizeLocals(Module &module) {
  for (GlobalValue &gv : module.global_values()) {
    if (gv.hasLocalLinkage()) {
      gv.setLinkage(GlobalValue::ExternalLinkage);
      gv.setVisibility(GlobalValue::HiddenVisibility);
    }
    if (!gv.hasName())
      gv.setName("msamp_unnamed");
  }
}

Expected<std::vector<std::string>> mlir::msamp::emitObjectsInParallel(
    Module &module, StringRef prefix, unsigned threads,
    function_ref<std::unique_ptr<TargetMachine>()> makeMachine) {
  unsigned numFunctions = 0;
  SmallPtrSet<const GlobalValue *, 8> optNone;
  for (Function &fn : module) {
    numFunctions += !fn.isDeclaration();
    if (!fn.isDeclaration() && fn.hasOptNone())
      optNone.insert(&fn);
  }
  // Partitions in a fixed order, serialized while they still share the
  // module's context.
  std::vector<SmallString<0>> bitcode;
  // The optnone functions first, alone, for code generation at -O0.
  bool lightPartition = !optNone.empty() && optNone.size() < numFunctions;
  if (lightPartition) {
    externalizeLocals(module);
    ValueToValueMapTy map;
    std::unique_ptr<Module> light =
        CloneModule(module, map, [&](const GlobalValue *gv) {
          return optNone.contains(gv);
        });
    raw_svector_ostream os(bitcode.emplace_back());
    WriteBitcodeToFile(*light, os);
    for (const GlobalValue *gv : optNone)
      const_cast<Function *>(cast<Function>(gv))->deleteBody();
    numFunctions -= optNone.size();
  }
  SplitModule(module, codegenPartitions(numFunctions),
              [&](std::unique_ptr<Module> part) {
                raw_svector_ostream os(bitcode.emplace_back());
                WriteBitcodeToFile(*part, os);
              });
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<TargetMachine>> machines;
  for (size_t i = 0; i < bitcode.size(); ++i) {
    paths.push_back((prefix + "." + Twine(i) + ".o").str());
    machines.push_back(makeMachine());
  }
  // Fast instruction selection and register allocation: the greedy
  // allocator's interference checks grew with (calls x live values) in the
  // step's one long block (a third of a 24-layer compile).
  if (lightPartition)
    machines.front()->setOptLevel(CodeGenOptLevel::None);

  std::mutex mutex;
  Error firstError = Error::success();
  {
    StdThreadPool pool(hardware_concurrency(threads));
    for (size_t i = 0; i < bitcode.size(); ++i)
      pool.async([&, i] {
        Error err = emitPartition(bitcode[i], paths[i], *machines[i]);
        std::lock_guard<std::mutex> lock(mutex);
        if (err && !firstError)
          firstError = std::move(err);
        else
          consumeError(std::move(err));
      });
    pool.wait();
  }
  if (firstError)
    return std::move(firstError);
  return paths;
}
