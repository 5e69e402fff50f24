//===- ImportONNX.h - ONNX model to the msamp input contract ----*- C++ -*-===//
//
// Public entry points of the ONNX importer (docs/Interfaces.md 6): an ONNX
// model (inference graph, or an ONNX Runtime training graph with gradient
// nodes) becomes one MLIR module in the input contract of docs/Interfaces.md 1,
// written with func/linalg/tensor/arith/math only. The protobuf classes stay
// private to lib/Target/ONNX so that users of this header need neither protobuf
// nor exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TARGET_ONNX_IMPORTONNX_H
#define MSAMP_TARGET_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>

#include <cstdint>
#include <string>

namespace mlir::msamp::onnx {

struct ImportOptions {
  /// ONNX Runtime optimizer model (AdamWOptimizer, SGDOptimizerV2) or a model
  /// holding ai.onnx.preview.training Adam/Momentum: becomes msamp.optimizer.
  std::string optimizerModel;
  /// safetensors file with f32 values of params the model has no
  /// initializer for (ONNX Runtime moves trainable initializers to inputs).
  std::string weightsIn;
  /// Where to write every param's f32 value (for `msamp-run --init`).
  std::string weightsOut;
  /// Sizes of symbolic dimensions (`dim_param`), by name.
  std::map<std::string, int64_t> dims;
  /// Directory that external-data locations are relative to; defaults to the
  /// model file's directory.
  std::string externalDataDir;
  /// Name of the generated function.
  std::string funcName = "main_graph";
};

/// Imports the ONNX file at `path` into a new module of `context` (which must
/// have the func, linalg, tensor, arith and math dialects loaded or
/// loadable). On failure returns an llvm::Error whose message names the node,
/// its op type and the reason; never aborts on malformed input.
llvm::Expected<OwningOpRef<ModuleOp>>
importONNXFile(llvm::StringRef path, MLIRContext *context,
               const ImportOptions &options);

/// As importONNXFile, from serialized ModelProto bytes (the fuzzer's entry
/// point). External data is resolved against options.externalDataDir.
llvm::Expected<OwningOpRef<ModuleOp>>
importONNXBuffer(llvm::StringRef bytes, MLIRContext *context,
                 const ImportOptions &options);

/// Registers (and loads) the dialects the importer emits.
void loadImporterDialects(MLIRContext &context);

} // namespace mlir::msamp::onnx

#endif // MSAMP_TARGET_ONNX_IMPORTONNX_H
