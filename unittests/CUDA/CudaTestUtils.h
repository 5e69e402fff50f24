//===- CudaTestUtils.h - Buffers and ABI calls for CUDA tests ---*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Raw tensors of any dtype behind hand-built memref descriptors (the layout
// of RuntimeTestUtils.h), the optimizer calls spelled once, and byte
// comparisons that tell a real mismatch from the one freedom IEEE leaves:
// the sign and payload of a NaN result (x86 propagates the operand's, the
// GPU returns its canonical NaN). Host-only: the device tests add
// CudaDeviceTestUtils.h.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_UNITTESTS_CUDA_CUDATESTUTILS_H
#define MSAMP_UNITTESTS_CUDA_CUDATESTUTILS_H

#include "RuntimeTestUtils.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace msamp_cuda_test {

using msamp_rt_test::MemRef;
using msamp_rt_test::Rng;
using msamp_rt_test::Tensor;
namespace numerics = msamp::numerics;

inline numerics::Format formatOfDType(int32_t dtype) {
  return dtype == MSAMP_RT_F8E4M3FN ? numerics::Format::E4M3
         : dtype == MSAMP_RT_F8E5M2 ? numerics::Format::E5M2
                                    : numerics::Format::F16;
}

inline size_t numelOf(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t s : shape)
    n *= static_cast<size_t>(s);
  return n;
}

/// A tensor of any dtype as raw bytes with its memref.
struct Raw {
  int32_t dtype = MSAMP_RT_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  MemRef ref;

  Raw(int32_t dtype, std::vector<int64_t> shape)
      : dtype(dtype), shape(shape),
        bytes(numelOf(shape) * msamp_rt_dtype_size(dtype) + 1),
        ref(bytes.data(), shape) {
    bytes.resize(bytes.size() - 1); // keep data() non-null for empties
  }
  Raw(const Raw &other) : Raw(other.dtype, other.shape) { bytes = other.bytes; }
  Raw &operator=(const Raw &) = delete;

  size_t numel() const { return numelOf(shape); }
  size_t elementSize() const { return msamp_rt_dtype_size(dtype); }
  operator msamp_rt_unranked_memref *() { return ref.get(); }

  void setF32(size_t i, float x) { std::memcpy(&bytes[4 * i], &x, 4); }
  float getF32(size_t i) const {
    float x;
    std::memcpy(&x, &bytes[4 * i], 4);
    return x;
  }
  void setU16(size_t i, uint16_t x) { std::memcpy(&bytes[2 * i], &x, 2); }
  uint16_t getU16(size_t i) const {
    uint16_t x;
    std::memcpy(&x, &bytes[2 * i], 2);
    return x;
  }
};

/// f32 bits of element i of a high-precision or scaled buffer, decoded
/// exactly (no scale).
inline float decodeAt(const Raw &t, size_t i) {
  switch (t.dtype) {
  case MSAMP_RT_F32:
    return t.getF32(i);
  case MSAMP_RT_BF16:
    return msamp_rt_test::floatOf(static_cast<uint32_t>(t.getU16(i)) << 16);
  case MSAMP_RT_F16:
    return numerics::decodeF16(t.getU16(i));
  default:
    return numerics::decode(formatOfDType(t.dtype), t.bytes[i]);
  }
}

/// Is element i a NaN (in its own format)?
inline bool isNaNAt(const Raw &t, size_t i) {
  return std::isnan(decodeAt(t, i));
}

/// Expects the same bytes, except that two NaNs match whatever their sign
/// and payload. Reports the first few mismatches.
inline void expectSameValues(const Raw &expected, const Raw &actual,
                             const std::string &what) {
  ASSERT_EQ(expected.dtype, actual.dtype) << what;
  ASSERT_EQ(expected.bytes.size(), actual.bytes.size()) << what;
  const size_t size = expected.elementSize();
  int reported = 0;
  size_t mismatches = 0;
  for (size_t i = 0; i < expected.numel(); ++i) {
    if (std::memcmp(&expected.bytes[i * size], &actual.bytes[i * size], size) ==
        0)
      continue;
    if (isNaNAt(expected, i) && isNaNAt(actual, i))
      continue;
    ++mismatches;
    if (reported++ < 5)
      ADD_FAILURE() << what << ": element " << i << " expected "
                    << decodeAt(expected, i) << " got " << decodeAt(actual, i);
  }
  EXPECT_EQ(mismatches, 0u) << what;
}

/// Same, for one float.
inline void expectSameFloat(float expected, float actual,
                            const std::string &what) {
  if (std::isnan(expected) && std::isnan(actual))
    return;
  EXPECT_EQ(msamp_rt_test::bitsOf(expected), msamp_rt_test::bitsOf(actual))
      << what << ": expected " << expected << " got " << actual;
}

/// Interesting f32 inputs: zeros, subnormals, format boundaries, rounding
/// ties, overflow, infinities, NaNs; then `randomCount` values spread over
/// many binades with random signs.
inline std::vector<float> interestingFloats(size_t randomCount, uint64_t seed) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.5f,
                          448.0f,
                          449.0f,
                          464.0f,
                          480.0f,
                          -500.0f,
                          57344.0f,
                          61440.0f,
                          65504.0f,
                          65520.0f,
                          1e6f,
                          1e-3f,
                          0.0009765625f, // 2^-10
                          0.001953125f,  // 2^-9, E4M3's smallest subnormal
                          0.0029296875f, // 1.5 * 2^-9: a tie
                          1.5258789e-05f,
                          5.9604645e-08f, // 2^-24
                          1e-40f,         // f32 subnormal
                          -1e-40f,
                          3.4e38f,
                          INFINITY,
                          -INFINITY,
                          NAN,
                          -NAN,
                          msamp_rt_test::floatOf(0x7F800001u), // signalling
                          msamp_rt_test::floatOf(0xFFC12345u)};
  Rng rng(seed);
  for (size_t i = 0; i < randomCount; ++i) {
    const double magnitude = std::ldexp(rng.uniform(1.0, 2.0),
                                        static_cast<int>(rng.uniform(-30, 20)));
    v.push_back(static_cast<float>(rng.next() & 1 ? magnitude : -magnitude));
  }
  return v;
}

/// A 1-D buffer of `dtype` holding `values` rounded to it (f32 copied, bf16
/// and f16 rounded to nearest even).
inline Raw highPrecisionBuffer(int32_t dtype,
                               const std::vector<float> &values) {
  Raw t(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == MSAMP_RT_F32) {
      t.setF32(i, values[i]);
    } else if (dtype == MSAMP_RT_F16) {
      t.setU16(i, numerics::encodeF16(values[i]));
    } else {
      // bf16: round to nearest even through the f16-free path of DType.h's
      // rule (truncation with a rounding bias; NaN stays quiet).
      const uint32_t bits = msamp_rt_test::bitsOf(values[i]);
      uint16_t b;
      if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
        b = static_cast<uint16_t>((bits >> 16) | 0x0040u);
      else
        b = static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
      t.setU16(i, b);
    }
  }
  return t;
}

/// `values`, cut or padded with zeros to the element count of `shape`, as a
/// buffer of `dtype` and `shape` (rounded as highPrecisionBuffer does).
inline Raw shaped(int32_t dtype, std::vector<float> values,
                  const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  values.resize(n);
  const Raw flat = highPrecisionBuffer(dtype, values);
  Raw m(dtype, shape);
  m.bytes = flat.bytes;
  return m;
}

/// A state tensor for an optimizer: f32 values, or values quantized with a
/// power-of-two scale chosen for their amax (docs/Numerics.md 5.2).
struct StateInit {
  Raw data;
  float scale = 1.0f;
};

inline StateInit makeState(int32_t dtype, const std::vector<int64_t> &shape,
                           Rng &rng, double lo, double hi) {
  StateInit s{Raw(dtype, shape), 1.0f};
  std::vector<float> values(s.data.numel());
  float amax = 0.0f;
  for (float &x : values) {
    x = static_cast<float>(rng.uniform(lo, hi));
    amax = std::max(amax, std::fabs(x));
  }
  if (dtype == MSAMP_RT_F32) {
    for (size_t i = 0; i < values.size(); ++i)
      s.data.setF32(i, values[i]);
    return s;
  }
  const numerics::Format f = formatOfDType(dtype);
  s.scale = numerics::computeScalePow2(amax, 1.0f, numerics::maxFinite(f), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t code = numerics::quantize(f, values[i], s.scale);
    if (dtype == MSAMP_RT_F16)
      s.data.setU16(i, code);
    else
      s.data.bytes[i] = static_cast<uint8_t>(code);
  }
  return s;
}

/// Everything an adam_update call reads and writes.
struct AdamCall {
  int32_t paramType, gradType, mType, vType;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 1e-2;
  bool decoupled = true;
  bool mode1 = false; ///< MSAMP_RT_ADAM_MODE1 (ONNX Runtime / HF AdamW)
  StateInit param, grad, m, v;
  Raw outParam, outM, outV;
  Tensor<float> paramScale, gradScaleInv, mScale, vScale;
  Tensor<float> outParamScale, outMScale, outVScale, lr;
  Tensor<int64_t> step;

  AdamCall(int32_t paramType, int32_t gradType, int32_t mType, int32_t vType,
           std::vector<int64_t> shape, uint64_t seed)
      : paramType(paramType), gradType(gradType), mType(mType), vType(vType),
        param(init(paramType, shape, seed, -1.0, 1.0)),
        grad(init(gradType, shape, seed + 1, -0.01, 0.01)),
        m(init(mType, shape, seed + 2, -1e-3, 1e-3)),
        v(init(vType, shape, seed + 3, 0.0, 1e-5)), outParam(paramType, shape),
        outM(mType, shape), outV(vType, shape),
        paramScale(msamp_rt_test::scalar(param.scale)),
        gradScaleInv(msamp_rt_test::scalar(1.0f / grad.scale)),
        mScale(msamp_rt_test::scalar(m.scale)),
        vScale(msamp_rt_test::scalar(v.scale)),
        outParamScale(msamp_rt_test::scalar(0.0f)),
        outMScale(msamp_rt_test::scalar(0.0f)),
        outVScale(msamp_rt_test::scalar(0.0f)),
        lr(msamp_rt_test::scalar(1e-3f)),
        step(msamp_rt_test::scalar<int64_t>(1)) {}

  static StateInit init(int32_t dtype, const std::vector<int64_t> &shape,
                        uint64_t seed, double lo, double hi) {
    Rng rng(seed);
    return makeState(dtype, shape, rng, lo, hi);
  }

  /// Calls the ABI; in place (outputs are the inputs) when `inPlace`.
  void run(bool inPlace) {
    msamp_rt_unranked_memref *op = inPlace ? param.data.ref.get() : outParam;
    msamp_rt_unranked_memref *om = inPlace ? m.data.ref.get() : outM;
    msamp_rt_unranked_memref *ov = inPlace ? v.data.ref.get() : outV;
    msamp_rt_unranked_memref *ops =
        inPlace ? paramScale.ref.get() : outParamScale.ref.get();
    msamp_rt_unranked_memref *oms =
        inPlace ? mScale.ref.get() : outMScale.ref.get();
    msamp_rt_unranked_memref *ovs =
        inPlace ? vScale.ref.get() : outVScale.ref.get();
    _mlir_ciface_msamp_rt_adam_update(
        param.data, paramScale, grad.data, gradScaleInv, m.data, mScale, v.data,
        vScale, lr, step, op, ops, om, oms, ov, ovs, paramType, gradType, mType,
        vType, beta1, beta2, eps, weightDecay,
        (decoupled ? MSAMP_RT_ADAM_DECOUPLED : 0) |
            (mode1 ? MSAMP_RT_ADAM_MODE1 : 0));
  }

  /// Appends this update's row of msamp_rt_adam_update_multi's table (the
  /// buffers run() passes).
  void appendRow(std::vector<int64_t> &table, bool inPlace) {
    msamp_rt_test::appendAdamRow(
        table, static_cast<int64_t>(param.data.numel()),
        {param.data, paramScale, grad.data, gradScaleInv, m.data, mScale,
         v.data, vScale, inPlace ? param.data.ref.get() : outParam.ref.get(),
         inPlace ? paramScale.ref.get() : outParamScale.ref.get(),
         inPlace ? m.data.ref.get() : outM.ref.get(),
         inPlace ? mScale.ref.get() : outMScale.ref.get(),
         inPlace ? v.data.ref.get() : outV.ref.get(),
         inPlace ? vScale.ref.get() : outVScale.ref.get()},
        paramType, gradType, mType, vType);
  }

  /// The results of a non-in-place run moved into the inputs, so the next
  /// step continues from them (and an in-place run needs nothing).
  void advance() {
    param.data.bytes = outParam.bytes;
    m.data.bytes = outM.bytes;
    v.data.bytes = outV.bytes;
    if (paramType != MSAMP_RT_F32)
      paramScale[0] = outParamScale[0];
    if (mType != MSAMP_RT_F32)
      mScale[0] = outMScale[0];
    if (vType != MSAMP_RT_F32)
      vScale[0] = outVScale[0];
    step[0] += 1;
  }
};

} // namespace msamp_cuda_test

#endif // MSAMP_UNITTESTS_CUDA_CUDATESTUTILS_H
