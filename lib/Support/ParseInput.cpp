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
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace {
/// Skips white space and `//` comments from `pos`.
size_t skipBlanks(StringRef text, size_t pos) {
  while (pos < text.size()) {
    if (llvm::isSpace(text[pos]))
      ++pos;
    else if (text.substr(pos).starts_with("//"))
      pos = std::min(text.find('\n', pos), text.size());
    else
      break;
  }
  return pos;
}

/// Whether `text` at `pos` holds what DenseI64ArrayAttr::parse accepts: `[`,
/// integers that fit in 64 signed bits (decimal or hex, `true`, `false`),
/// separated by commas, `]`. Otherwise `pos` is set to the offending spot.
bool isI64List(StringRef text, size_t &pos) {
  pos = skipBlanks(text, pos);
  if (pos >= text.size() || text[pos] != '[')
    return false;
  pos = skipBlanks(text, pos + 1);
  if (pos < text.size() && text[pos] == ']')
    return true;
  while (true) {
    bool negative = pos < text.size() && text[pos] == '-';
    size_t start = negative ? skipBlanks(text, pos + 1) : pos;
    size_t end = start;
    while (end < text.size() && llvm::isAlnum(text[end]))
      ++end;
    StringRef number = text.slice(start, end);
    uint64_t value = 0;
    bool isBool = !negative && (number == "true" || number == "false");
    if (!isBool &&
        (number.empty() || !llvm::isDigit(number[0]) ||
         (number.starts_with_insensitive("0x")
              ? number.drop_front(2).getAsInteger(16, value)
              : number.getAsInteger(10, value)) ||
         value > uint64_t(std::numeric_limits<int64_t>::max()) + negative))
      return false;
    pos = skipBlanks(text, end);
    if (pos < text.size() && text[pos] == ']')
      return true;
    if (pos >= text.size() || text[pos] != ',')
      return false;
    pos = skipBlanks(text, pos + 1);
  }
}

/// MLIR 22's parsers of linalg.reduce and linalg.broadcast (`dimensions =
/// [...]`) and linalg.transpose (`permutation = [...]`) store what
/// DenseI64ArrayAttr::parse returns without checking it: after its error, a
/// null attribute, dereferenced (a segfault; docs/Robustness.md). Check those
/// lists of the custom forms (the keyword follows the `)` of outs(...))
/// before parsing; emits an error at the first bad one.
LogicalResult checkI64Lists(const llvm::SourceMgr &sourceMgr,
                            MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef text = buffer->getBuffer();
  char previous = 0; // the last character outside blanks, strings, words
  for (size_t pos = skipBlanks(text, 0); pos < text.size();
       pos = skipBlanks(text, pos)) {
    char c = text[pos];
    if (c == '"') {
      for (++pos; pos < text.size() && text[pos] != '"'; ++pos)
        pos += text[pos] == '\\';
      ++pos;
      previous = '"';
      continue;
    }
    if (!llvm::isAlpha(c) && c != '_') {
      previous = c;
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < text.size() &&
           (llvm::isAlnum(text[end]) || StringRef("_.$").contains(text[end])))
      ++end;
    StringRef word = text.slice(pos, end);
    pos = end;
    bool listFollows =
        previous == ')' && (word == "dimensions" || word == "permutation");
    previous = 'a';
    size_t at = skipBlanks(text, pos);
    if (!listFollows || at >= text.size() || text[at] != '=')
      continue;
    ++at;
    if (isI64List(text, at))
      continue;
    auto [line, column] = sourceMgr.getLineAndColumn(
        llvm::SMLoc::getFromPointer(text.data() + std::min(at, text.size())));
    emitError(FileLineColLoc::get(context, buffer->getBufferIdentifier(), line,
                                  column))
        << "expected '" << word
        << " = [' and 64-bit integers separated by ',' and ']'";
    return failure();
  }
  return success();
}
} // namespace

LogicalResult msamp::parseSourceFileSafely(const llvm::SourceMgr &sourceMgr,
                                           Block *block, MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  ParserConfig config(context, /*verifyAfterParse=*/false);
  // The bytecode reader is not affected: only the text parser's op parsers
  // hold regions of their own.
  if (isBytecode(buffer->getMemBufferRef()))
    return parseSourceFile(sourceMgr, block, config);

  if (failed(checkI64Lists(sourceMgr, context)))
    return failure();

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
