//===- ParseInput.h - parsing untrusted MLIR text ---------------*- C++ -*-===//
//
// The one way msamp's tools read MLIR text. MLIR 22's parser can write to
// freed memory while it cleans up after a parse error (docs/Robustness.md,
// "The MLIR 22 parser's use-after-free"); these functions cut every def-use
// edge of the partial IR at the first error, before that cleanup runs, so a
// malformed input gives its located error and nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_SUPPORT_PARSEINPUT_H
#define MSAMP_SUPPORT_PARSEINPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class Block;
namespace msamp {

/// Parses the main buffer of `sourceMgr` (text or bytecode) into `block`
/// without verifying it. Fails if any error was emitted; the errors go to the
/// handlers registered on `context`.
LogicalResult parseSourceFileSafely(const llvm::SourceMgr &sourceMgr,
                                    Block *block, MLIRContext *context);

/// Like mlir::parseSourceFile<ModuleOp>: parses, wraps top-level ops that are
/// not a single module into one, and verifies. Null on any error.
OwningOpRef<ModuleOp> parseModuleSafely(const llvm::SourceMgr &sourceMgr,
                                        MLIRContext *context);

} // namespace msamp
} // namespace mlir

#endif // MSAMP_SUPPORT_PARSEINPUT_H
