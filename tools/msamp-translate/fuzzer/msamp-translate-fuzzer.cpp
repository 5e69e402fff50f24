//===- msamp-translate-fuzzer.cpp - libFuzzer target for the importer -----===//
//
// Feeds arbitrary bytes to the ONNX importer as a serialized ModelProto. The
// importer must answer every input with a module or an llvm::Error: a crash,
// an abort or a sanitizer report is a bug. External data is resolved in a
// directory that does not exist, so fuzzed locations read nothing.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Target/ONNX/ImportONNX.h"

#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    mlir::msamp::onnx::loadImporterDialects(*ctx);
    return ctx;
  }();
  mlir::msamp::onnx::ImportOptions options;
  options.externalDataDir = "/nonexistent-msamp-fuzz-dir";
  auto module = mlir::msamp::onnx::importONNXBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), context,
      options);
  if (!module)
    llvm::consumeError(module.takeError());
  return 0;
}
