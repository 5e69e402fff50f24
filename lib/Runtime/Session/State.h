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

#include "BufferDevice.h"
#include "Error.h"
#include "Manifest.h"

#include <memory>
#include <string>
#include <vector>

namespace msamp::session {

class SafeTensorsReader;

/// Where a session's buffers live: host memory; device memory for a step
/// compiled with --target cuda (BufferDevice.h), which the host reaches only
/// through the buffer's host copy; or CUDA managed memory (msamp_rt_gpu_alloc)
/// for a CUDA step whose own host code reads or writes buffers (its
/// msamp_train_step_graph_blocker says so: a host check of a computed
/// index), which kernels and that host code both reach.
enum class BufferMemory { Host, Managed, Device };

class TensorBuffer {
public:
  /// Allocates (zero-filled) for `spec`; `error` is set on failure. Device
  /// memory comes from `device`, which must outlive the buffer; an input's
  /// host copy is registered with it (`hostCopy`).
  static Error create(const TensorSpec &spec,
                      std::unique_ptr<TensorBuffer> &out,
                      BufferMemory memory = BufferMemory::Host,
                      BufferDevice *device = nullptr, bool hostCopy = false);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer &) = delete;
  TensorBuffer &operator=(const TensorBuffer &) = delete;

  const TensorSpec &spec() const { return spec_; }
  /// Host memory holding the values: the buffer itself in host or managed
  /// memory; for device memory its host copy, which holds the device's
  /// values after download() and reaches the device by upload().
  void *data() { return host_; }
  const void *data() const { return host_; }
  size_t numBytes() const { return static_cast<size_t>(spec_.numBytes); }
  /// Where the step (and the device's copies) read and write the values.
  void *stepData() const { return data_; }
  bool onDevice() const { return memory_ == BufferMemory::Device; }
  /// The ranked memref descriptor to pass to the step.
  void *descriptor() { return descriptor_.data(); }

  /// Host copy <- device (const: the values do not change), or host copy
  /// -> device; nothing unless onDevice(). One wait each; for many buffers
  /// use the free functions below.
  Error download() const;
  Error upload();

private:
  explicit TensorBuffer(const TensorSpec &spec) : spec_(spec) {}

  TensorSpec spec_;
  void *data_ = nullptr;
  void *host_ = nullptr; // data_ unless on the device
  BufferMemory memory_ = BufferMemory::Host;
  BufferDevice *device_ = nullptr;
  bool hostCopyRegistered_ = false;
  std::vector<int64_t> descriptor_;

  friend Error copyBuffers(const std::vector<const TensorBuffer *> &,
                           bool toDevice);
};

/// download() (toDevice false) or upload() of every device buffer of
/// `buffers` (one device), with one wait; host buffers are skipped.
Error copyBuffers(const std::vector<const TensorBuffer *> &buffers,
                  bool toDevice);
/// The same over a session's list of buffers.
Error downloadAll(const std::vector<std::unique_ptr<TensorBuffer>> &buffers);
Error uploadAll(const std::vector<std::unique_ptr<TensorBuffer>> &buffers);

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
