//===- ModelLoader.h - ONNX protobuf parsing and tensor data ----*- C++ -*-===//
//
// The only part of the importer that sees raw bytes: parses a ModelProto
// (checking the IR version and opsets we support) and decodes TensorProtos,
// inline or external, into HostTensors with bounds-checked sizes. Everything
// here reports problems as llvm::Error; a malformed file must never crash.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_TARGET_ONNX_MODELLOADER_H
#define MSAMP_LIB_TARGET_ONNX_MODELLOADER_H

#include "onnx.pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::msamp::onnx {

/// Highest ONNX IR version and default-domain opset the importer accepts.
/// The IR version is the one of our onnx.proto copy (onnx 1.23: IR 14, which
/// ONNX Runtime's artifacts get when written with a current onnx package);
/// what we read of it is unchanged since IR 10. The opset bounds semantics:
/// ops are lowered as defined up to opset 21.
constexpr int64_t kMaxIRVersion = 14;
constexpr int64_t kMaxOpset = 21;

/// ONNX TensorProto.DataType values used by the importer (the numbering of
/// onnx.proto; FP8 ones are listed so that errors can name them).
enum DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E5M2 = 19,
};

/// Name of an ONNX data type for messages ("FLOAT", "INT64", ...).
std::string dataTypeName(int32_t type);
/// Bytes per element, or 0 for types the importer does not handle.
unsigned dataTypeSize(int32_t type);

/// A dense tensor in host memory, little-endian, row-major.
struct HostTensor {
  int32_t dataType = kUndefined;
  llvm::SmallVector<int64_t> shape;
  std::vector<char> bytes;

  int64_t numElements() const;
  /// Values as double / int64 (converting from the stored type).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  std::vector<int64_t> toInts() const;
  std::vector<float> toFloats() const;
};

/// A parsed model and where its external data lives.
struct LoadedModel {
  std::unique_ptr<msamp_onnx::ModelProto> proto;
  std::string baseDir;
  int64_t opset = 0; // default domain
};

llvm::Expected<LoadedModel> loadModelFile(llvm::StringRef path);
llvm::Expected<LoadedModel> loadModelBuffer(llvm::StringRef bytes,
                                            llvm::StringRef baseDir);

/// Decodes `tensor` (raw_data, typed fields or external data under
/// `baseDir`). `what` names it in error messages.
llvm::Expected<HostTensor> decodeTensor(const msamp_onnx::TensorProto &tensor,
                                        llvm::StringRef baseDir,
                                        llvm::StringRef what);

/// Product of `shape` with overflow and sign checks.
llvm::Expected<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape,
                                           llvm::StringRef what);

/// An llvm::Error with `message` (StringError, inconvertible code).
llvm::Error makeError(const llvm::Twine &message);

} // namespace mlir::msamp::onnx

#endif // MSAMP_LIB_TARGET_ONNX_MODELLOADER_H
