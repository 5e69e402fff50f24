//===- UndefinedSymbols.h - what a compiled step may leave undefined -*- C++
//-*-===//
//
// train_step.so is linked without libraries: the runtime that dlopens it
// provides the runtime ABI, and the process provides libc and libm. Any
// other undefined symbol (MLIR's memrefCopy, a libm function glibc lacks)
// would make dlopen fail long after compilation; msamp-compile checks the
// object instead and reports the op that called the symbol.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_COMPILE_UNDEFINEDSYMBOLS_H
#define MSAMP_TOOLS_MSAMP_COMPILE_UNDEFINEDSYMBOLS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

/// Fails, with one located error per offending symbol (at the LLVM dialect
/// call in `module` when there is one), when the object files at `objPaths`
/// (linked together into train_step.so) leave a symbol undefined that none
/// of them defines and that is outside the runtime ABI (RuntimeSymbols.h,
/// GPURuntimeSymbols.h), libc, libm and libgcc_s (compiler support
/// routines; the C++ runtime library already loads it).
LogicalResult checkUndefinedSymbols(llvm::ArrayRef<std::string> objPaths,
                                    ModuleOp module);

} // namespace mlir::msamp

#endif // MSAMP_TOOLS_MSAMP_COMPILE_UNDEFINEDSYMBOLS_H
