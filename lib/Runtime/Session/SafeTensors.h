//===- SafeTensors.h - Reader and writer of the safetensors format -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The safetensors format (huggingface/safetensors, docs "Format"):
//
//   [8 bytes]  N, the header size, unsigned little-endian
//   [N bytes]  a JSON object, UTF-8:
//                {"NAME": {"dtype": "F32", "shape": [2, 3],
//                          "data_offsets": [BEGIN, END]}, ...,
//                 "__metadata__": {"key": "string value", ...}}
//              padded with spaces (the writer pads to a multiple of 8 so
//              that the data starts aligned)
//   [rest]     the byte buffer; BEGIN/END are relative to its start
//
// The reader validates everything the reference implementation does: the
// header fits in the file, is a JSON object, every entry has a known dtype, a
// shape of non-negative integers and offsets whose size matches the shape,
// and the tensors tile the byte buffer exactly (no overlap, no hole, nothing
// past the end). Errors name the file and the tensor.
//
// The writer lays tensors out in decreasing element size, then by name, so
// every tensor is naturally aligned for a memory-mapped reader, and writes
// the file atomically: FILE.tmp, fsync, rename over FILE, fsync of the
// directory. On any error FILE is untouched and FILE.tmp removed.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_SAFETENSORS_H
#define MSAMP_LIB_RUNTIME_SESSION_SAFETENSORS_H

#include "ElementType.h"
#include "Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace msamp::session {

/// One tensor of a file: where its bytes are in the mapped buffer.
struct SafeTensor {
  std::string name;
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  int64_t numElements = 0;
  const uint8_t *data = nullptr;
  size_t numBytes = 0;
};

/// A safetensors file, memory-mapped read-only for the reader's lifetime.
class SafeTensorsReader {
public:
  /// Opens and validates `path`.
  static Error open(const std::string &path,
                    std::unique_ptr<SafeTensorsReader> &out);
  /// Validates an in-memory image (the bytes are copied); `source` names it
  /// in messages.
  static Error parse(const void *bytes, size_t size, const std::string &source,
                     std::unique_ptr<SafeTensorsReader> &out);

  ~SafeTensorsReader();
  SafeTensorsReader(const SafeTensorsReader &) = delete;
  SafeTensorsReader &operator=(const SafeTensorsReader &) = delete;

  const std::string &path() const { return path_; }
  /// Tensors in the order of their data offsets.
  const std::vector<SafeTensor> &tensors() const { return tensors_; }
  const SafeTensor *find(const std::string &name) const;
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }

private:
  SafeTensorsReader() = default;
  Error validate(const uint8_t *bytes, size_t size);

  std::string path_;
  void *mapping_ = nullptr;
  size_t mappingSize_ = 0;
  std::vector<uint8_t> owned_;
  std::vector<SafeTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// A tensor to write; `data` holds `numBytes` = numel * element size bytes.
struct TensorToWrite {
  std::string name;
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t numBytes = 0;
};

/// The whole file image (header + data) in memory.
Error serializeSafeTensors(const std::vector<TensorToWrite> &tensors,
                           const std::map<std::string, std::string> &metadata,
                           std::vector<uint8_t> &image);

/// Serializes and writes `path` atomically (see the file comment).
Error writeSafeTensors(const std::string &path,
                       const std::vector<TensorToWrite> &tensors,
                       const std::map<std::string, std::string> &metadata);

/// Writes `bytes` to `path` atomically: `path`.tmp, fsync, rename, fsync of
/// the directory. On failure `path` is unchanged and `path`.tmp is removed.
Error writeFileAtomically(const std::string &path, const void *bytes,
                          size_t size);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_SAFETENSORS_H
