//===- State.cpp - Buffers of a session and their initialization ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "State.h"
#include "Random.h"
#include "SafeTensors.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_gpu_host.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

namespace msamp::session {

namespace numerics = ::msamp::numerics;

namespace {

/// Alignment of every buffer: a cache line, and enough for any vector load
/// the compiled step may emit.
constexpr size_t kAlignment = 64;

uint16_t encodeBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u); // quiet NaN
  // Round to nearest even on the 16 dropped bits; a carry into the exponent
  // is the correct step into the next binade (or to infinity).
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float decodeBF16(uint16_t x) {
  uint32_t bits = static_cast<uint32_t>(x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

bool lowPrecisionFormat(ElementType type, numerics::Format &format) {
  switch (type) {
  case ElementType::F16:
    format = numerics::Format::F16;
    return true;
  case ElementType::F8E4M3FN:
    format = numerics::Format::E4M3;
    return true;
  case ElementType::F8E5M2:
    format = numerics::Format::E5M2;
    return true;
  default:
    return false;
  }
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string stripSuffix(const std::string &s, const std::string &suffix) {
  return s.substr(0, s.size() - suffix.size());
}

bool isScalarF32(const TensorSpec &spec) {
  return spec.dtype == ElementType::F32 && spec.numElements == 1;
}

} // namespace

std::string scaleName(const std::string &name) { return name + ".scale"; }

Error TensorBuffer::create(const TensorSpec &spec,
                           std::unique_ptr<TensorBuffer> &out,
                           BufferMemory memory, BufferDevice *device,
                           bool hostCopy) {
  std::unique_ptr<TensorBuffer> buffer(new TensorBuffer(spec));
  buffer->memory_ = memory;
  // aligned_alloc wants a size that is a multiple of the alignment; a 0-byte
  // tensor still gets a real, distinct allocation.
  size_t bytes = static_cast<size_t>(spec.numBytes);
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0)
    rounded = kAlignment;
  auto outOfMemory = [&](const std::string &why) {
    return Error(MSAMP_ERROR_OUT_OF_MEMORY,
                 "cannot allocate " + std::to_string(bytes) + " bytes for '" +
                     spec.name + "'" + why);
  };
  if (memory == BufferMemory::Device) {
    // Device memory comes zeroed; the host copy is zeroed below.
    std::string why;
    buffer->device_ = device;
    buffer->data_ = device ? device->allocate(rounded, why) : nullptr;
    if (!buffer->data_)
      return outOfMemory(" in device memory: " + why);
    buffer->host_ = std::aligned_alloc(kAlignment, rounded);
    if (!buffer->host_)
      return outOfMemory(" (its host copy)");
    if (hostCopy) {
      device->registerHostCopy(buffer->data_, buffer->host_, rounded);
      buffer->hostCopyRegistered_ = true;
    }
  } else {
    buffer->data_ = memory == BufferMemory::Managed
                        ? msamp_rt_gpu_aligned_alloc(kAlignment, rounded)
                        : std::aligned_alloc(kAlignment, rounded);
    buffer->host_ = buffer->data_;
    if (!buffer->data_)
      return outOfMemory("");
  }
  std::memset(buffer->host_, 0, rounded);

  const size_t rank = spec.shape.size();
  std::vector<int64_t> &d = buffer->descriptor_;
  d.assign(3 + 2 * rank, 0);
  static_assert(sizeof(void *) == sizeof(int64_t),
                "memref descriptors hold 64-bit pointers");
  std::memcpy(&d[0], &buffer->data_, sizeof(void *)); // allocated
  std::memcpy(&d[1], &buffer->data_, sizeof(void *)); // aligned
  d[2] = 0;                                           // offset
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    d[3 + i] = spec.shape[i];
    d[3 + rank + i] = stride;
    stride *= spec.shape[i] > 0 ? spec.shape[i] : 1;
  }
  out = std::move(buffer);
  return Error::success();
}

TensorBuffer::~TensorBuffer() {
  switch (memory_) {
  case BufferMemory::Device:
    if (hostCopyRegistered_)
      device_->unregisterHostCopy(data_);
    if (data_)
      device_->release(data_);
    std::free(host_);
    break;
  case BufferMemory::Managed:
    msamp_rt_gpu_free(data_);
    break;
  case BufferMemory::Host:
    std::free(data_);
    break;
  }
}

Error copyBuffers(const std::vector<const TensorBuffer *> &buffers,
                  bool toDevice) {
  std::vector<void *> dst;
  std::vector<const void *> src;
  std::vector<size_t> bytes;
  BufferDevice *device = nullptr;
  for (const TensorBuffer *buffer : buffers) {
    if (!buffer->onDevice() || !buffer->numBytes())
      continue;
    device = buffer->device_;
    dst.push_back(toDevice ? buffer->data_ : buffer->host_);
    src.push_back(toDevice ? buffer->host_ : buffer->data_);
    bytes.push_back(buffer->numBytes());
  }
  if (!device)
    return Error::success();
  std::string error = device->copy(dst.data(), src.data(), bytes.data(),
                                   static_cast<int64_t>(dst.size()));
  if (!error.empty())
    return Error(MSAMP_ERROR_RUNTIME,
                 std::string(toDevice ? "copying " : "reading ") +
                     std::to_string(dst.size()) + " buffer(s) " +
                     (toDevice ? "to" : "from") + " the device: " + error);
  return Error::success();
}

Error TensorBuffer::download() const { return copyBuffers({this}, false); }

Error TensorBuffer::upload() { return copyBuffers({this}, true); }

static std::vector<const TensorBuffer *>
pointers(const std::vector<std::unique_ptr<TensorBuffer>> &buffers) {
  std::vector<const TensorBuffer *> out;
  for (const auto &buffer : buffers)
    out.push_back(buffer.get());
  return out;
}

Error downloadAll(const std::vector<std::unique_ptr<TensorBuffer>> &buffers) {
  return copyBuffers(pointers(buffers), /*toDevice=*/false);
}

Error uploadAll(const std::vector<std::unique_ptr<TensorBuffer>> &buffers) {
  return copyBuffers(pointers(buffers), /*toDevice=*/true);
}

float storageMaxFinite(ElementType type) {
  numerics::Format format;
  if (!lowPrecisionFormat(type, format))
    return 0.0f;
  return numerics::maxFinite(format);
}

void encodeFromF32(ElementType type, const float *in, int64_t n, float scale,
                   void *out) {
  numerics::Format format;
  if (lowPrecisionFormat(type, format)) {
    if (type == ElementType::F16) {
      auto *o = static_cast<uint16_t *>(out);
      for (int64_t i = 0; i < n; ++i)
        o[i] = numerics::quantize(format, in[i], scale);
    } else {
      auto *o = static_cast<uint8_t *>(out);
      for (int64_t i = 0; i < n; ++i)
        o[i] = static_cast<uint8_t>(numerics::quantize(format, in[i], scale));
    }
    return;
  }
  switch (type) {
  case ElementType::F32: {
    auto *o = static_cast<float *>(out);
    for (int64_t i = 0; i < n; ++i)
      o[i] = in[i] * scale;
    return;
  }
  case ElementType::BF16: {
    auto *o = static_cast<uint16_t *>(out);
    for (int64_t i = 0; i < n; ++i)
      o[i] = encodeBF16(in[i] * scale);
    return;
  }
  case ElementType::I64: {
    auto *o = static_cast<int64_t *>(out);
    for (int64_t i = 0; i < n; ++i)
      o[i] = static_cast<int64_t>(in[i]);
    return;
  }
  case ElementType::I32: {
    auto *o = static_cast<int32_t *>(out);
    for (int64_t i = 0; i < n; ++i)
      o[i] = static_cast<int32_t>(in[i]);
    return;
  }
  default:
    std::memset(out, 0, static_cast<size_t>(n * elementSize(type)));
    return;
  }
}

void decodeToF32(ElementType type, const void *in, int64_t n, float scaleInv,
                 float *out) {
  numerics::Format format;
  if (lowPrecisionFormat(type, format)) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t code = type == ElementType::F16
                          ? static_cast<const uint16_t *>(in)[i]
                          : static_cast<const uint8_t *>(in)[i];
      out[i] = numerics::dequantize(format, code, scaleInv);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    float v = 0.0f;
    switch (type) {
    case ElementType::F32:
      v = static_cast<const float *>(in)[i];
      break;
    case ElementType::BF16:
      v = decodeBF16(static_cast<const uint16_t *>(in)[i]);
      break;
    case ElementType::I64:
      v = static_cast<float>(static_cast<const int64_t *>(in)[i]);
      break;
    case ElementType::I32:
      v = static_cast<float>(static_cast<const int32_t *>(in)[i]);
      break;
    default:
      break;
    }
    out[i] = v * scaleInv;
  }
}

Error initializeState(const std::vector<TensorBuffer *> &state, uint64_t seed,
                      const SafeTensorsReader *initFile, int64_t *numFromFile) {
  std::map<std::string, TensorBuffer *> byName;
  for (TensorBuffer *buffer : state)
    byName[buffer->spec().name] = buffer;

  // 1. f32 values of params and master copies; everything else is written
  //    directly in its dtype.
  std::map<std::string, std::vector<float>> values;
  for (TensorBuffer *buffer : state) {
    const TensorSpec &spec = buffer->spec();
    const bool isValue = spec.role == "param" || spec.role == "master_param";
    // A param held as a piece (ZeRO stage 3) starts as the whole param's
    // value, cut at step 5 like the masters.
    std::vector<float> v(static_cast<size_t>(spec.wholeElements()), 0.0f);
    switch (spec.init.kind) {
    case InitSpec::Zeros:
      break;
    case InitSpec::Ones:
      std::fill(v.begin(), v.end(), 1.0f);
      break;
    case InitSpec::Normal: {
      NormalStream normal(streamSeed(seed, spec.name));
      for (float &x : v)
        x = static_cast<float>(spec.init.mean +
                               spec.init.stddev * normal.next());
      break;
    }
    case InitSpec::Seed: {
      // Bit-exact: the seed is a key, not a value to round through f32.
      int64_t key = static_cast<int64_t>(seed);
      std::memcpy(buffer->data(), &key, sizeof(key));
      continue;
    }
    case InitSpec::FromParam:
      if (spec.role == "param")
        return Error(MSAMP_ERROR_MANIFEST,
                     "param '" + spec.name + "' has init from_param");
      continue; // resolved below, once the params are known
    }
    if (isValue)
      values[spec.name] = std::move(v);
    else
      encodeFromF32(spec.dtype, v.data(), spec.numElements, 1.0f,
                    buffer->data());
  }

  // 2. Values from an --init file replace the manifest init of params and
  //    buffers. A buffer (BatchNorm statistics, position ids, a constant
  //    table) is taken as stored, in its own dtype: it is no trained value
  //    to cast, and integers must stay exact.
  int64_t fromFile = 0;
  if (initFile) {
    for (const SafeTensor &t : initFile->tensors()) {
      auto fail = [&](const std::string &what) {
        return Error(MSAMP_ERROR_MISMATCH,
                     initFile->path() + ": tensor '" + t.name + "': " + what);
      };
      auto it = byName.find(t.name);
      if (it != byName.end() && it->second->spec().role == "buffer") {
        // Buffers are not trained and keep their dtype (i64 position ids,
        // i1 masks): the file's tensor is copied as it is.
        const TensorSpec &spec = it->second->spec();
        if (t.dtype != spec.dtype)
          return fail(std::string("dtype ") + safetensorsName(t.dtype) +
                      ", expected " + safetensorsName(spec.dtype) +
                      " (a buffer's initial value is given in its own dtype)");
        if (t.shape != spec.shape)
          return fail("shape " + shapeToString(t.shape) + ", expected " +
                      shapeToString(spec.shape));
        std::memcpy(it->second->data(), t.data, t.numBytes);
        ++fromFile;
        continue;
      }
      if (it == byName.end() || it->second->spec().role != "param")
        return fail("not a param or buffer of this model");
      const TensorSpec &spec = it->second->spec();
      if (t.dtype != ElementType::F32)
        return fail(std::string("dtype ") + safetensorsName(t.dtype) +
                    ", expected F32 (initial values are f32; msamp casts them "
                    "to the storage dtype)");
      if (t.shape != spec.wholeShape())
        return fail("shape " + shapeToString(t.shape) + ", expected " +
                    shapeToString(spec.wholeShape()));
      std::vector<float> &v = values[spec.name];
      std::memcpy(v.data(), t.data, t.numBytes);
      for (float x : v)
        if (!std::isfinite(x))
          return fail("holds a non-finite value");
      ++fromFile;
    }
  }
  if (numFromFile)
    *numFromFile = fromFile;

  // 3. Master copies start as their param.
  for (TensorBuffer *buffer : state) {
    const TensorSpec &spec = buffer->spec();
    if (spec.role != "master_param" || spec.init.kind != InitSpec::FromParam)
      continue;
    std::string param = endsWith(spec.name, ".master")
                            ? stripSuffix(spec.name, ".master")
                            : std::string();
    auto it = byName.find(param);
    // An O3 flat-shard piece ("shard_offset") holds part of the param: its
    // value is the whole param's, cut at step 5.
    const int64_t need = spec.shardOffset >= 0
                             ? spec.shardOffset + spec.numElements
                             : spec.numElements;
    if (param.empty() || it == byName.end() ||
        it->second->spec().role != "param" ||
        (spec.shardOffset >= 0
             ? it->second->spec().wholeElements() < need
             : it->second->spec().wholeElements() != spec.numElements))
      return Error(
          MSAMP_ERROR_MANIFEST,
          "master copy '" + spec.name +
              "' has init from_param, but there is no param '" + param +
              "' of the same size" +
              (spec.shardOffset >= 0 ? " (or larger, for a piece)" : ""));
    values[spec.name] = values[param];
  }
  // A rank that holds no piece of a param's master still holds the master's
  // scale (replicated): it is that of the whole param's value.
  for (TensorBuffer *buffer : state) {
    const TensorSpec &spec = buffer->spec();
    if (spec.init.kind != InitSpec::FromParam ||
        !endsWith(spec.name, ".master.scale"))
      continue;
    std::string master = stripSuffix(spec.name, ".scale");
    std::string param = stripSuffix(master, ".master");
    if (!values.count(master) && values.count(param) && byName.count(param) &&
        byName[param]->spec().role == "param")
      values[master] = values[param];
  }

  // 3b. A param stored in FP8 (O3's GEMM weights) starts as the E4M3 cast
  //     of its FP16 master value, as MS-AMP's FP8 ZeRO casts its FP16
  //     weights (docs/Numerics.md 6.1): the f32 value rounded through scaled
  //     f16 first. Every rank computes it, owner or not, from the same values.
  for (TensorBuffer *buffer : state) {
    const TensorSpec &spec = buffer->spec();
    if (spec.role != "param" || (spec.dtype != ElementType::F8E4M3FN &&
                                 spec.dtype != ElementType::F8E5M2))
      continue;
    std::vector<float> &v = values[spec.name];
    const float f16Max = numerics::maxFinite(numerics::Format::F16);
    const float s16 = numerics::computeScalePow2(
        numerics::amax(v.data(), static_cast<long long>(v.size())), 1.0f,
        f16Max, 0);
    for (float &x : v)
      x = numerics::dequantize(
          numerics::Format::F16,
          numerics::quantize(numerics::Format::F16, x, s16), 1.0f / s16);
  }

  // 4. Scales "from_param": MS-AMP's power-of-two scale that maps the
  //    tensor's amax onto the largest finite value of its storage format
  //    (ScalingTensor casts weights this way when it creates them).
  for (TensorBuffer *buffer : state) {
    const TensorSpec &spec = buffer->spec();
    if (spec.init.kind != InitSpec::FromParam || spec.role == "master_param")
      continue;
    std::string base = endsWith(spec.name, ".scale")
                           ? stripSuffix(spec.name, ".scale")
                           : std::string();
    auto value = values.find(base);
    if (spec.role != "scaling_state" || base.empty() || value == values.end())
      return Error(MSAMP_ERROR_MANIFEST,
                   "state '" + spec.name +
                       "' has init from_param, but it is not the scale "
                       "'<P>.scale' of a param P");
    if (!isScalarF32(spec))
      return Error(MSAMP_ERROR_MANIFEST,
                   "scale '" + spec.name + "' is not one f32");
    // A master this rank holds no piece of is FP16 like every other.
    auto stored = byName.find(base);
    const float fpMax =
        storageMaxFinite(stored != byName.end() ? stored->second->spec().dtype
                                                : ElementType::F16);
    float scale = 1.0f;
    if (fpMax > 0.0f)
      scale = numerics::computeScalePow2(
          numerics::amax(value->second.data(),
                         static_cast<long long>(value->second.size())),
          1.0f, fpMax, 0);
    std::memcpy(buffer->data(), &scale, sizeof(scale));
  }

  // 5. Cast params and master copies to their storage dtype, each with its
  //    scale when it has one.
  for (auto &[name, v] : values) {
    auto found = byName.find(name);
    if (found == byName.end())
      continue; // a master this rank holds no piece of (its scale's value)
    TensorBuffer *buffer = found->second;
    float scale = 1.0f;
    auto s = byName.find(scaleName(name));
    if (s != byName.end() && isScalarF32(s->second->spec()))
      std::memcpy(&scale, s->second->data(), sizeof(scale));
    const int64_t offset = std::max<int64_t>(buffer->spec().shardOffset, 0);
    encodeFromF32(buffer->spec().dtype, v.data() + offset,
                  buffer->spec().numElements, scale, buffer->data());
  }
  return Error::success();
}

} // namespace msamp::session
