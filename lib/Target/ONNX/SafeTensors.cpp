//===- SafeTensors.cpp - f32 safetensors files for param values -----------===//
//
// A small reader/writer kept inside the importer: the runtime's own
// safetensors code must not link MLIR, and the importer must not link the
// runtime. Files are written to a temporary name and renamed, so that a
// failed import never leaves half a weights file behind.
//
//===----------------------------------------------------------------------===//

#include "SafeTensors.h"
#include "ModelLoader.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir::msamp::onnx;
using llvm::StringRef;

llvm::Expected<llvm::StringMap<F32Tensor>>
mlir::msamp::onnx::readSafeTensors(StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return makeError("cannot read '" + path +
                     "': " + file.getError().message());
  StringRef buf = (*file)->getBuffer();
  if (buf.size() < 8)
    return makeError("'" + path + "': not a safetensors file (too short)");
  uint64_t headerLen = llvm::support::endian::read64le(buf.data());
  if (headerLen > buf.size() - 8)
    return makeError("'" + path + "': header length exceeds the file");
  StringRef header = buf.substr(8, headerLen);
  StringRef data = buf.substr(8 + headerLen);
  auto json = llvm::json::parse(header);
  if (!json)
    return makeError("'" + path + "': bad safetensors header: " +
                     llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return makeError("'" + path + "': safetensors header is not an object");
  llvm::StringMap<F32Tensor> out;
  for (const auto &[key, value] : *root) {
    if (key == "__metadata__")
      continue;
    std::string what = ("'" + path + "': tensor '" + key.str() + "'").str();
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return makeError(what + " is not an object");
    std::optional<StringRef> dtype = entry->getString("dtype");
    if (!dtype || *dtype != "F32")
      return makeError(what + " has dtype " +
                       (dtype ? dtype->str() : std::string("?")) +
                       "; only F32 is accepted");
    const llvm::json::Array *shape = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!shape || !offsets || offsets->size() != 2)
      return makeError(what + " lacks shape or data_offsets");
    F32Tensor t;
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> v = d.getAsInteger();
      if (!v || *v < 0)
        return makeError(what + " has a bad shape");
      t.shape.push_back(*v);
    }
    auto n = checkedNumElements(t.shape, what);
    if (!n)
      return n.takeError();
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        uint64_t(*end) > data.size() || *end - *begin != *n * 4)
      return makeError(what + " has bad data_offsets");
    t.data.resize(*n);
    std::memcpy(t.data.data(), data.data() + *begin, *n * 4);
    out[key] = std::move(t);
  }
  return out;
}

llvm::Error mlir::msamp::onnx::writeSafeTensors(
    StringRef path, llvm::ArrayRef<std::pair<std::string, F32Tensor>> tensors,
    llvm::ArrayRef<std::pair<std::string, std::string>> metadata) {
  llvm::json::Object header;
  llvm::json::Object meta;
  for (const auto &[k, v] : metadata)
    meta[k] = v;
  if (!metadata.empty())
    header["__metadata__"] = std::move(meta);
  int64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    llvm::json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    int64_t bytes = int64_t(t.data.size()) * 4;
    header[name] = llvm::json::Object{
        {"dtype", "F32"},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + bytes}}};
    offset += bytes;
  }
  std::string headerText;
  llvm::raw_string_ostream(headerText) << llvm::json::Value(std::move(header));
  // Pad with spaces to 8 bytes so the data is aligned (as the Python writer).
  while (headerText.size() % 8)
    headerText.push_back(' ');

  std::string tmp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return makeError("cannot write '" + tmp + "': " + ec.message());
    char len[8];
    llvm::support::endian::write64le(len, headerText.size());
    os.write(len, 8);
    os << headerText;
    for (const auto &entry : tensors)
      os.write(reinterpret_cast<const char *>(entry.second.data.data()),
               entry.second.data.size() * 4);
    os.close();
    if (os.has_error())
      return makeError("cannot write '" + tmp + "': " + os.error().message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return makeError("cannot rename '" + tmp + "' to '" + path +
                     "': " + ec.message());
  return llvm::Error::success();
}
