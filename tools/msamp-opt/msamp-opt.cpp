//===- msamp-opt.cpp - the msamp optimizer driver ---------------*- C++ -*-===//
//
// mlir-opt plus the msamp dialect, passes and pipelines (--msamp-o0..o3).
//
// Every input chunk is first parsed by msamp::parseSourceFileSafely; one that
// does not parse never reaches MlirOptMain, whose parser can corrupt the heap
// while it cleans up after some errors (docs/Robustness.md). Its errors are
// reported from the safe parse instead: printed, or checked against its
// expected-* comments under --verify-diagnostics.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Registration/InitAll.h"
#include "MSAMP/Support/ParseInput.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
/// Parses `chunk` safely in a context like the one MlirOptMain would use.
/// Its diagnostics go to the handler `makeHandler` installs.
template <typename MakeHandler>
LogicalResult
parseChunk(const llvm::MemoryBuffer &chunk, DialectRegistry &registry,
           const MlirOptMainConfig &config, MakeHandler makeHandler) {
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(chunk.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  auto handler = makeHandler(sourceMgr, context);
  Block block;
  LogicalResult parsed =
      msamp::parseSourceFileSafely(sourceMgr, &block, &context);
  return handler->finish(parsed);
}

/// Swallows everything: the first parse only asks whether a chunk parses.
struct Quiet {
  Quiet(MLIRContext &context)
      : handler(&context, [](Diagnostic &) { return success(); }) {}
  LogicalResult finish(LogicalResult parsed) { return parsed; }
  ScopedDiagnosticHandler handler;
};

/// Prints the errors: the chunk fails.
struct Print {
  Print(llvm::SourceMgr &sourceMgr, MLIRContext &context)
      : handler(sourceMgr, &context) {}
  LogicalResult finish(LogicalResult) { return failure(); }
  SourceMgrDiagnosticHandler handler;
};

/// Checks the errors against the chunk's expected-* comments.
struct Verify {
  Verify(llvm::SourceMgr &sourceMgr, MLIRContext &context,
         SourceMgrDiagnosticVerifierHandler::Level level)
      : handler(sourceMgr, &context, level) {}
  LogicalResult finish(LogicalResult) { return handler.verify(); }
  SourceMgrDiagnosticVerifierHandler handler;
};
} // namespace

int main(int argc, char **argv) {
  DialectRegistry registry;
  msamp::registerAllMSAMPDialects(registry);
  msamp::registerAllMSAMPPasses();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "msamp optimizer: FP8 mixed-precision training compiler\n",
      registry);
  const MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // Modes that read no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }

  // Chunks are handed to MlirOptMain one by one (already split).
  MlirOptMainConfig chunkConfig = config;
  chunkConfig.splitInputFile("");
  auto processChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                          raw_ostream &os) -> LogicalResult {
    auto quiet = [](llvm::SourceMgr &, MLIRContext &context) {
      return std::make_unique<Quiet>(context);
    };
    if (succeeded(parseChunk(*chunk, registry, config, quiet)))
      return MlirOptMain(os, std::move(chunk), registry, chunkConfig);
    if (config.shouldVerifyDiagnostics())
      return parseChunk(*chunk, registry, config,
                        [&](llvm::SourceMgr &sourceMgr, MLIRContext &context) {
                          return std::make_unique<Verify>(
                              sourceMgr, context,
                              config.verifyDiagnosticsLevel());
                        });
    return parseChunk(*chunk, registry, config,
                      [](llvm::SourceMgr &sourceMgr, MLIRContext &context) {
                        return std::make_unique<Print>(sourceMgr, context);
                      });
  };
  if (failed(splitAndProcessBuffer(std::move(input), processChunk, output->os(),
                                   config.inputSplitMarker(),
                                   config.outputSplitMarker())))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
