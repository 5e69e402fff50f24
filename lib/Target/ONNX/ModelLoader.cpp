//===- ModelLoader.cpp - ONNX protobuf parsing and tensor data ------------===//
//
// Parses ModelProtos with our own copy of onnx.proto (IR version 10 and the
// FP8 data types postdate Debian's libonnx 1.12) and decodes tensor payloads.
// Every size read from the file is checked before it is used: the fuzzer
// feeds this code arbitrary bytes.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <limits>

using namespace mlir::msamp::onnx;
using llvm::StringRef;

// Largest tensor we accept, in bytes: far above any model we compile on one
// host, far below what would make a corrupt size allocate the machine away.
static constexpr int64_t kMaxTensorBytes = int64_t(1) << 36;

llvm::Error mlir::msamp::onnx::makeError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

std::string mlir::msamp::onnx::dataTypeName(int32_t type) {
  static const char *names[] = {
      "UNDEFINED",      "FLOAT",        "UINT8",          "INT8",
      "UINT16",         "INT16",        "INT32",          "INT64",
      "STRING",         "BOOL",         "FLOAT16",        "DOUBLE",
      "UINT32",         "UINT64",       "COMPLEX64",      "COMPLEX128",
      "BFLOAT16",       "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",        "INT4",           "FLOAT4E2M1",
      "FLOAT8E8M0",     "UINT2",        "INT2",           "FLOAT6E2M3",
      "FLOAT6E3M2"};
  if (type >= 0 && type < int32_t(std::size(names)))
    return names[type];
  return "data type " + std::to_string(type);
}

unsigned mlir::msamp::onnx::dataTypeSize(int32_t type) {
  switch (type) {
  case kFloat:
  case kInt32:
  case kUInt32:
    return 4;
  case kInt64:
  case kUInt64:
  case kDouble:
    return 8;
  case kInt16:
  case kUInt16:
  case kFloat16:
  case kBFloat16:
    return 2;
  case kInt8:
  case kUInt8:
  case kBool:
  case kFloat8E4M3FN:
  case kFloat8E5M2:
    return 1;
  default:
    return 0;
  }
}

llvm::Expected<int64_t>
mlir::msamp::onnx::checkedNumElements(llvm::ArrayRef<int64_t> shape,
                                      StringRef what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return makeError(what + ": negative dimension " + llvm::Twine(d));
    if (d != 0 && n > kMaxTensorBytes / d)
      return makeError(what + ": tensor too large");
    n *= d;
  }
  return n;
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

template <typename T>
static T readAt(const std::vector<char> &bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

double HostTensor::getDouble(int64_t i) const {
  switch (dataType) {
  case kFloat:
    return readAt<float>(bytes, i);
  case kDouble:
    return readAt<double>(bytes, i);
  default:
    return double(getInt(i));
  }
}

int64_t HostTensor::getInt(int64_t i) const {
  switch (dataType) {
  case kInt64:
    return readAt<int64_t>(bytes, i);
  case kUInt64:
    return int64_t(readAt<uint64_t>(bytes, i));
  case kInt32:
    return readAt<int32_t>(bytes, i);
  case kUInt32:
    return readAt<uint32_t>(bytes, i);
  case kInt16:
    return readAt<int16_t>(bytes, i);
  case kUInt16:
    return readAt<uint16_t>(bytes, i);
  case kInt8:
    return readAt<int8_t>(bytes, i);
  case kUInt8:
  case kBool:
    return readAt<uint8_t>(bytes, i);
  case kFloat:
  case kDouble: {
    double d = getDouble(i);
    // Out-of-range floats have no defined conversion; clamp instead.
    if (!(d > -9.2e18))
      return std::numeric_limits<int64_t>::min();
    if (!(d < 9.2e18))
      return std::numeric_limits<int64_t>::max();
    return int64_t(d);
  }
  default:
    return 0;
  }
}

std::vector<int64_t> HostTensor::toInts() const {
  std::vector<int64_t> out(numElements());
  for (int64_t i = 0, e = out.size(); i < e; ++i)
    out[i] = getInt(i);
  return out;
}

std::vector<float> HostTensor::toFloats() const {
  std::vector<float> out(numElements());
  for (int64_t i = 0, e = out.size(); i < e; ++i)
    out[i] = float(getDouble(i));
  return out;
}

/// Copies a repeated numeric field into `out`, converting each element to the
/// tensor's storage type `T`.
template <typename T, typename Field>
static void copyField(const Field &field, std::vector<char> &out) {
  out.resize(field.size() * sizeof(T));
  for (int i = 0, e = field.size(); i < e; ++i) {
    T v = static_cast<T>(field.Get(i));
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
}

static llvm::Error readExternal(const msamp_onnx::TensorProto &tensor,
                                StringRef baseDir, StringRef what,
                                int64_t expectBytes, std::vector<char> &out) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : tensor.external_data()) {
    const std::string &key = entry.key(), &value = entry.value();
    if (key == "location") {
      location = value;
    } else if (key == "offset" || key == "length") {
      int64_t v;
      if (StringRef(value).getAsInteger(10, v) || v < 0)
        return makeError(what + ": external_data " + key + " '" + value +
                         "' is not a non-negative integer");
      (key == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return makeError(what + ": external data without a location");
  // Like ONNX's checker: locations are relative and stay inside the model's
  // directory.
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return makeError(what + ": external data location '" + location +
                     "' must be a relative path inside the model directory");
  if (length >= 0 && length != expectBytes)
    return makeError(what + ": external data length " + llvm::Twine(length) +
                     " does not match the tensor's " +
                     llvm::Twine(expectBytes) + " bytes");
  llvm::SmallString<256> path(baseDir);
  llvm::sys::path::append(path, location);
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return makeError(what + ": cannot read external data '" + path +
                     "': " + file.getError().message());
  StringRef data = (*file)->getBuffer();
  if (offset > int64_t(data.size()) ||
      expectBytes > int64_t(data.size()) - offset)
    return makeError(what + ": external data '" + location + "' holds " +
                     llvm::Twine(data.size()) + " bytes, need " +
                     llvm::Twine(expectBytes) + " at offset " +
                     llvm::Twine(offset));
  out.assign(data.begin() + offset, data.begin() + offset + expectBytes);
  return llvm::Error::success();
}

llvm::Expected<HostTensor>
mlir::msamp::onnx::decodeTensor(const msamp_onnx::TensorProto &tensor,
                                StringRef baseDir, StringRef what) {
  HostTensor t;
  t.dataType = tensor.data_type();
  unsigned size = dataTypeSize(t.dataType);
  if (size == 0)
    return makeError(what + ": unsupported tensor data type " +
                     dataTypeName(t.dataType));
  t.shape.assign(tensor.dims().begin(), tensor.dims().end());
  auto n = checkedNumElements(t.shape, what);
  if (!n)
    return n.takeError();
  int64_t expectBytes = *n * size;
  if (expectBytes > kMaxTensorBytes)
    return makeError(what + ": tensor too large");

  if (tensor.data_location() == msamp_onnx::TensorProto::EXTERNAL) {
    if (auto err = readExternal(tensor, baseDir, what, expectBytes, t.bytes))
      return std::move(err);
    return t;
  }
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (int64_t(raw.size()) != expectBytes)
      return makeError(what + ": raw_data has " + llvm::Twine(raw.size()) +
                       " bytes, expected " + llvm::Twine(expectBytes));
    t.bytes.assign(raw.begin(), raw.end());
    return t;
  }
  // Typed fields; the narrow integer types and FLOAT16 live in int32_data.
  int64_t have = 0;
  switch (t.dataType) {
  case kFloat:
    copyField<float>(tensor.float_data(), t.bytes);
    have = tensor.float_data_size();
    break;
  case kDouble:
    copyField<double>(tensor.double_data(), t.bytes);
    have = tensor.double_data_size();
    break;
  case kInt64:
    copyField<int64_t>(tensor.int64_data(), t.bytes);
    have = tensor.int64_data_size();
    break;
  case kUInt32:
  case kUInt64:
    if (t.dataType == kUInt32)
      copyField<uint32_t>(tensor.uint64_data(), t.bytes);
    else
      copyField<uint64_t>(tensor.uint64_data(), t.bytes);
    have = tensor.uint64_data_size();
    break;
  case kInt32:
    copyField<int32_t>(tensor.int32_data(), t.bytes);
    have = tensor.int32_data_size();
    break;
  case kInt16:
  case kUInt16:
  case kFloat16:
  case kBFloat16:
    copyField<uint16_t>(tensor.int32_data(), t.bytes);
    have = tensor.int32_data_size();
    break;
  default: // 1-byte types
    copyField<uint8_t>(tensor.int32_data(), t.bytes);
    have = tensor.int32_data_size();
    break;
  }
  if (have != *n)
    return makeError(what + ": holds " + llvm::Twine(have) +
                     " values, its shape needs " + llvm::Twine(*n));
  return t;
}

static llvm::Expected<LoadedModel> finishLoad(LoadedModel model,
                                              StringRef what) {
  const msamp_onnx::ModelProto &proto = *model.proto;
  if (!proto.has_graph())
    return makeError(what + ": the model has no graph");
  if (proto.ir_version() > kMaxIRVersion)
    return makeError(what + ": IR version " + llvm::Twine(proto.ir_version()) +
                     " is newer than the supported " +
                     llvm::Twine(kMaxIRVersion));
  for (const auto &opset : proto.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      model.opset = opset.version();
      if (model.opset > kMaxOpset)
        return makeError(what + ": opset " + llvm::Twine(model.opset) +
                         " is newer than the supported " +
                         llvm::Twine(kMaxOpset));
    }
  }
  // An IR version below 3 carries no opset_import: opset 1 semantics.
  if (model.opset == 0)
    model.opset = 1;
  return std::move(model);
}

llvm::Expected<LoadedModel>
mlir::msamp::onnx::loadModelBuffer(StringRef bytes, StringRef baseDir) {
  LoadedModel model;
  model.proto = std::make_unique<msamp_onnx::ModelProto>();
  model.baseDir = baseDir.str();
  if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
      !model.proto->ParseFromArray(bytes.data(), int(bytes.size())))
    return makeError("not a valid ONNX ModelProto (protobuf parse failed)");
  return finishLoad(std::move(model), "model");
}

llvm::Expected<LoadedModel> mlir::msamp::onnx::loadModelFile(StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return makeError("cannot read '" + path +
                     "': " + file.getError().message());
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  auto model = loadModelBuffer((*file)->getBuffer(), dir);
  if (!model)
    return makeError("'" + path + "': " + llvm::toString(model.takeError()));
  return model;
}
