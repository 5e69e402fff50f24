//===- SafeTensors.h - f32 safetensors files for param values --*- C++ -*-===//
//
// The importer's weights interface (--weights-in / --weights-out) is the
// safetensors format msamp-run reads with --init: an 8-byte little-endian
// header length, a JSON header {name: {dtype, shape, data_offsets}} and the
// raw data. Only F32 tensors are read or written (docs/Interfaces.md 5: --init
// takes f32 values by param name).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_TARGET_ONNX_SAFETENSORS_H
#define MSAMP_LIB_TARGET_ONNX_SAFETENSORS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::msamp::onnx {

struct F32Tensor {
  llvm::SmallVector<int64_t> shape;
  std::vector<float> data;
};

llvm::Expected<llvm::StringMap<F32Tensor>>
readSafeTensors(llvm::StringRef path);

/// Writes `tensors` in the given order (names must be unique) with
/// `metadata` as the string-to-string `__metadata__` entry.
llvm::Error
writeSafeTensors(llvm::StringRef path,
                 llvm::ArrayRef<std::pair<std::string, F32Tensor>> tensors,
                 llvm::ArrayRef<std::pair<std::string, std::string>> metadata);

} // namespace mlir::msamp::onnx

#endif // MSAMP_LIB_TARGET_ONNX_SAFETENSORS_H
