//===- UndefinedSymbols.cpp - what a compiled step may leave undefined ----===//

#include "UndefinedSymbols.h"

#include "MSAMP/Codegen/GPU/GPURuntimeSymbols.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ObjectFile.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>

using namespace mlir;

namespace {

/// The C libraries every process that loads a step has: found by name
/// through the dynamic loader, as dlopen of the step would.
class SystemLibraries {
public:
  SystemLibraries() {
    for (const char *name : {LIBC_SO, LIBM_SO, "libgcc_s.so.1"})
      if (void *handle = dlopen(name, RTLD_LAZY | RTLD_LOCAL))
        handles.push_back(handle);
  }
  ~SystemLibraries() {
    for (void *handle : handles)
      dlclose(handle);
  }
  bool provides(StringRef symbol) const {
    std::string name = symbol.str();
    return llvm::any_of(handles, [&](void *handle) {
      return dlsym(handle, name.c_str()) != nullptr;
    });
  }

private:
  SmallVector<void *> handles;
};

/// Why a symbol might be missing, for the ones we know.
std::string explain(StringRef symbol) {
  if (symbol == "memrefCopy")
    return "MLIR's run-time copy of strided buffers: a memref.copy the "
           "lowering did not turn into loops (msamp-strided-copies-to-loops)";
  if (symbol.starts_with("_mlir_") || symbol.starts_with("mgpu"))
    return "a function of MLIR's runner libraries, which msamp does not "
           "ship";
  return "neither an msamp runtime entry point (docs/RuntimeABI.md) nor a "
         "function of libc or libm";
}

} // namespace

LogicalResult
mlir::msamp::checkUndefinedSymbols(llvm::ArrayRef<std::string> objPaths,
                                   ModuleOp module) {
  SmallVector<llvm::object::OwningBinary<llvm::object::ObjectFile>> objects;
  for (const std::string &objPath : objPaths) {
    auto object = llvm::object::ObjectFile::createObjectFile(objPath);
    if (!object) {
      module.emitError() << "cannot read " << objPath << ": "
                         << llvm::toString(object.takeError());
      return failure();
    }
    objects.push_back(std::move(*object));
  }
  // The step's code is split into objects (msamp-compile -j): one object's
  // undefined symbol may be another's definition.
  llvm::StringSet<> runtime, defined;
  for (const RuntimeSymbol &symbol : getRuntimeSymbols())
    runtime.insert(("_mlir_ciface_" + symbol.name).str());
  for (const GPUHostSymbol &symbol : getGPUHostSymbols())
    runtime.insert(symbol.name);
  for (llvm::StringLiteral name : kEntryPointRuntimeSymbols)
    runtime.insert(name);
  for (llvm::StringLiteral name : kAllocatorRuntimeSymbols)
    runtime.insert(name);
  auto forEachSymbol = [](auto &objects, auto fn) {
    for (auto &object : objects)
      for (const llvm::object::SymbolRef &symbol :
           object.getBinary()->symbols()) {
        auto flags = symbol.getFlags();
        auto name = symbol.getName();
        if (!flags || !name) {
          llvm::consumeError(flags.takeError());
          llvm::consumeError(name.takeError());
          continue;
        }
        fn(*name, *flags & llvm::object::SymbolRef::SF_Undefined);
      }
  };
  forEachSymbol(objects, [&](StringRef name, bool undefined) {
    if (!undefined)
      defined.insert(name);
  });
  SystemLibraries system;

  bool ok = true;
  llvm::StringSet<> reported;
  forEachSymbol(objects, [&](StringRef name, bool undefined) {
    if (!undefined || name.empty() || defined.contains(name) ||
        runtime.contains(name) || system.provides(name) ||
        !reported.insert(name).second)
      return;
    ok = false;
    // Report it at the calls that reference it, when the call was in the
    // LLVM dialect (LLVM's code generator may also introduce calls).
    bool located = false;
    module.walk([&](LLVM::CallOp call) {
      if (call.getCallee() != name)
        return;
      call.emitError() << "the compiled step would call `" << name << "`, "
                       << explain(name)
                       << ": train_step.so could not be loaded";
      located = true;
    });
    if (!located)
      module.emitError() << "train_step.so would reference the undefined "
                            "symbol `"
                         << name << "`, " << explain(name)
                         << ": it could not be loaded";
  });
  return success(ok);
}
