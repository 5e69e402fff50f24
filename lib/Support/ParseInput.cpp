//===- ParseInput.cpp - parsing untrusted MLIR text -------------*- C++ -*-===//
//
// Why this exists: with MLIR 22, a forward reference to an SSA name (`%x`
// used before any definition is visible) is resolved by the next definition
// of that name, even one inside a region that does not enclose the use.
// linalg.generic parses its body into a Region of its own; when the body then
// fails to parse (a redefined block, say), that Region and the value are
// freed while the earlier use still points at them, and the parser's cleanup
// of the enclosing function writes into the freed use list (heap corruption,
// an abort for some file-name lengths). The generic parser guards its own
// regions against exactly this (CleanupOpStateRegions); op parsers that keep
// a region of their own are not guarded.
//
// The workaround: parse with an AsmParserState, which records every block the
// parser creates, including those of regions still under construction. At the
// first error, while all of them are still alive, drop every use of every
// value they define. The partial IR is discarded anyway; without def-use
// edges the order in which the parser frees it no longer matters.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Support/ParseInput.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

LogicalResult msamp::parseSourceFileSafely(const llvm::SourceMgr &sourceMgr,
                                           Block *block, MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  ParserConfig config(context, /*verifyAfterParse=*/false);
  // The bytecode reader is not affected: only the text parser's op parsers
  // hold regions of their own.
  if (isBytecode(buffer->getMemBufferRef()))
    return parseSourceFile(sourceMgr, block, config);

  AsmParserState parserState;
  bool sawError = false;
  ScopedDiagnosticHandler cutOnFirstError(context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && !sawError) {
      sawError = true;
      // Only now, before the parser unwinds: later errors may come after it
      // has freed some of these blocks.
      block->dropAllDefinedValueUses();
      for (const AsmParserState::BlockDefinition &def :
           parserState.getBlockDefs())
        def.block->dropAllDefinedValueUses();
    }
    // Not handled here: the caller's handlers report it.
    return failure();
  });
  LogicalResult parsed =
      parseAsmSourceFile(sourceMgr, block, config, &parserState);
  // An error means failure even if the parser went on: the IR has lost its
  // def-use edges.
  return failure(failed(parsed) || sawError);
}

OwningOpRef<ModuleOp> msamp::parseModuleSafely(const llvm::SourceMgr &sourceMgr,
                                               MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  Location fileLoc =
      FileLineColLoc::get(context, buffer->getBufferIdentifier(), 0, 0);
  Block block;
  if (failed(parseSourceFileSafely(sourceMgr, &block, context)))
    return {};
  OwningOpRef<ModuleOp> module =
      detail::constructContainerOpForParserIfNecessary<ModuleOp>(
          &block, context, fileLoc);
  if (module && failed(verify(*module)))
    return {};
  return module;
}
