//===- State.h - Buffers of a session and their initialization --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Every argument of @train_step gets one TensorBuffer: a 64-byte aligned,
// zero-filled, contiguous row-major allocation plus the ranked memref
// descriptor that points at it ({allocated, aligned, offset, sizes[rank],
// strides[rank]}, MLIR's C interface), which is what msamp_train_step_packed
// receives a pointer to.
//
// Initialization follows the manifest's "init" (msamp_session.h,
// msamp_session_init, says it for users): params are first produced as f32
// values (random, ones, zeros, or from an --init file), then the scales that
// are "from_param" are computed from those values, then the values are cast
// to the storage dtype with their scale by the numerics core, so the bytes
// are exactly what the compiled step and the CPU runtime would produce.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_STATE_H
#define MSAMP_LIB_RUNTIME_SESSION_STATE_H

#include "Error.h"
#include "Manifest.h"

#include <memory>
#include <string>
#include <vector>

namespace msamp::session {

class SafeTensorsReader;

/// Where a session's buffers live: host memory, or CUDA managed memory
/// (msamp_rt_gpu_alloc) for steps compiled with --target cuda, whose kernels,
/// host code and runtime calls all reach it.
enum class BufferMemory { Host, Managed };

class TensorBuffer {
public:
  /// Allocates (zero-filled) for `spec`; `error` is set on failure.
  static Error create(const TensorSpec &spec,
                      std::unique_ptr<TensorBuffer> &out,
                      BufferMemory memory = BufferMemory::Host);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer &) = delete;
  TensorBuffer &operator=(const TensorBuffer &) = delete;

  const TensorSpec &spec() const { return spec_; }
  void *data() { return data_; }
  const void *data() const { return data_; }
  size_t numBytes() const { return static_cast<size_t>(spec_.numBytes); }
  /// The ranked memref descriptor to pass to the step.
  void *descriptor() { return descriptor_.data(); }

private:
  explicit TensorBuffer(const TensorSpec &spec) : spec_(spec) {}

  TensorSpec spec_;
  void *data_ = nullptr;
  BufferMemory memory_ = BufferMemory::Host;
  std::vector<int64_t> descriptor_;
};

/// f32 -> `type` with `scale` (stored = Q(x * scale)): f16/FP8 through
/// msamp::numerics::quantize, bf16 round-to-nearest-even of x * scale, f32
/// copies x * scale (exactly x when scale is 1), integers truncate.
void encodeFromF32(ElementType type, const float *in, int64_t n, float scale,
                   void *out);

/// `type` -> f32, times `scaleInv` (real = decode(stored) * scaleInv).
void decodeToF32(ElementType type, const void *in, int64_t n, float scaleInv,
                 float *out);

/// The largest finite value of a low-precision storage type (65504 for f16,
/// 448 for E4M3, 57344 for E5M2), 0 for any other type.
float storageMaxFinite(ElementType type);

/// Initializes `state` (the session's state buffers, manifest order) per
/// their "init"; see the file comment. `initFile` may be null.
Error initializeState(const std::vector<TensorBuffer *> &state, uint64_t seed,
                      const SafeTensorsReader *initFile, int64_t *numFromFile);

/// The name of the scale state of a scaled tensor: "<name>.scale".
std::string scaleName(const std::string &name);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_STATE_H
