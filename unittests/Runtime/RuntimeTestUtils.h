//===- RuntimeTestUtils.h - Memref descriptors for tests --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Builds MLIR C-interface descriptors by hand ({allocated, aligned, offset,
// sizes[rank], strides[rank]} behind an unranked {rank, descriptor}) from the
// layout documented in msamp_runtime.h / docs/RuntimeABI.md, not from MLIR's
// CRunnerUtils.h: if the documented layout were wrong, these tests would
// disagree with compiled code rather than silently agree with it.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H
#define MSAMP_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace msamp_rt_test {

inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  return strides;
}

/// An unranked memref over caller-owned memory. Movable (the descriptor
/// words live on the heap and keep their address), not copyable.
class MemRef {
public:
  MemRef(void *base, std::vector<int64_t> sizes, int64_t offset = 0,
         std::vector<int64_t> strides = {}) {
    if (strides.empty())
      strides = rowMajorStrides(sizes);
    const int64_t rank = static_cast<int64_t>(sizes.size());
    words.resize(3 + 2 * rank);
    words[0] = reinterpret_cast<intptr_t>(base); // allocated
    words[1] = reinterpret_cast<intptr_t>(base); // aligned
    words[2] = offset;
    for (int64_t i = 0; i < rank; ++i) {
      words[3 + i] = sizes[i];
      words[3 + rank + i] = strides[i];
    }
    memref.rank = rank;
    memref.descriptor = words.data();
  }
  MemRef(MemRef &&) = default;
  MemRef &operator=(MemRef &&) = default;
  MemRef(const MemRef &) = delete;
  MemRef &operator=(const MemRef &) = delete;

  msamp_rt_unranked_memref *get() { return &memref; }
  operator msamp_rt_unranked_memref *() { return &memref; }

private:
  std::vector<int64_t> words;
  msamp_rt_unranked_memref memref{};
};

/// A host tensor with its memref.
template <typename T>
struct Tensor {
  std::vector<T> data;
  std::vector<int64_t> sizes;
  MemRef ref;

  explicit Tensor(std::vector<int64_t> shape, T init = T())
      : data(count(shape), init), sizes(shape), ref(data.data(), shape) {}
  Tensor(std::vector<int64_t> shape, std::vector<T> values)
      : data(std::move(values)), sizes(shape), ref(data.data(), shape) {}

  operator msamp_rt_unranked_memref *() { return ref.get(); }
  // A template, so that any integer index is an exact match and does not
  // compete with the built-in subscript of the pointer conversion.
  template <typename Index>
  T &operator[](Index i) {
    return data[static_cast<size_t>(i)];
  }
  size_t size() const { return data.size(); }

  static size_t count(const std::vector<int64_t> &shape) {
    size_t n = 1;
    for (int64_t s : shape)
      n *= static_cast<size_t>(s);
    return n;
  }
};

/// A 0-d scalar memref (scale, amax, lr, step).
template <typename T>
Tensor<T> scalar(T value) {
  return Tensor<T>({}, std::vector<T>{value});
}

/// Appends one row of msamp_rt_adam_update_multi's table: `numel`, then
/// the data address (aligned pointer + offset) of each of `buffers`:
/// msamp_rt_adam_update's memref arguments without lr and step, in its
/// order (param, param_scale, grad, grad_scale_inv, m, m_scale, v, v_scale,
/// out_param, out_param_scale, out_m, out_m_scale, out_v, out_v_scale).
inline void
appendAdamRow(std::vector<int64_t> &table, int64_t numel,
              const std::vector<msamp_rt_unranked_memref *> &buffers,
              int32_t paramType, int32_t gradType, int32_t mType,
              int32_t vType) {
  const int32_t data[] = {paramType, gradType, mType, vType,
                          paramType, mType,    vType};
  table.push_back(numel);
  for (size_t i = 0; i < buffers.size(); ++i) {
    // Even columns are data, odd ones 0-d f32 scales.
    const int32_t dtype = i % 2 == 0 ? data[i / 2] : MSAMP_RT_F32;
    const auto *words = static_cast<const int64_t *>(buffers[i]->descriptor);
    table.push_back(words[1] + words[2] * msamp_rt_dtype_size(dtype));
  }
}

inline uint32_t bitsOf(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

inline float floatOf(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}

/// Deterministic pseudo-random numbers (xorshift64*), so failures reproduce.
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

private:
  uint64_t state;
};

/// Clears the sticky error before each test and checks after it that a test
/// expecting success left none behind.
class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    msamp_rt_clear_error();
    ASSERT_EQ(msamp_rt_set_backend("cpu"), MSAMP_RT_OK);
  }
  void TearDown() override { msamp_rt_clear_error(); }

  /// Fails with the recorded message if any error is recorded.
  static void expectNoError() {
    EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();
  }
};

} // namespace msamp_rt_test

#endif // MSAMP_UNITTESTS_RUNTIME_RUNTIMETESTUTILS_H
