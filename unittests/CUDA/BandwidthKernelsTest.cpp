//===- BandwidthKernelsTest.cpp - Packed Adam and one-launch state scan ---===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The access paths of the runtime kernels rewritten for bandwidth
// (docs/GPU.md, "Runtime kernels at bandwidth"), on device memory the tests
// place themselves so that each path is taken on purpose:
//
//  - multi-tensor Adam: tensors whose buffers are all aligned (packed path,
//    8 elements per thread per access) next to tensors with one or every
//    buffer misaligned (scalar path), odd lengths (a partial last tile, the
//    tail), more tensors than one launch's table, and a tensor large enough
//    that every resident block takes several chunks and crosses from one
//    tensor to the next; bit for bit against the CPU backend's single
//    updates;
//  - msamp_rt_gpu_find_all_ones: hundreds of buffers in one call, aligned
//    and misaligned, matches at element 0, at the last element, in a
//    partial vector and none at all, against a scan on the host.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"
#include "MSAMP/Runtime/msamp_gpu_host.h"

#include "gtest/gtest.h"

#include <cstring>
#include <memory>
#include <random>
#include <vector>

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

/// Host bytes laid out in one device allocation at chosen offsets.
class DeviceLayout {
public:
  /// Reserves `bytes` at an address that is `misalign` bytes past a 16-byte
  /// boundary; returns the offset.
  size_t reserve(size_t bytes, size_t misalign) {
    size_t at = (used + 15) / 16 * 16 + misalign;
    used = at + bytes + 1;
    return at;
  }
  size_t place(const std::vector<uint8_t> &bytes, size_t misalign) {
    const size_t at = reserve(bytes.size(), misalign);
    pending.push_back({at, bytes});
    return at;
  }
  /// Allocates and uploads everything placed.
  void upload() {
    host.assign(used + 16, 0);
    for (const auto &[at, bytes] : pending)
      std::memcpy(host.data() + at, bytes.data(), bytes.size());
    device = std::make_unique<DeviceBuffer>(host.size());
    device->upload(host.data());
  }
  void download() { device->download(host.data()); }
  int64_t address(size_t at) const {
    return static_cast<int64_t>(
        reinterpret_cast<uintptr_t>(static_cast<char *>(device->get()) + at));
  }
  const void *pointer(size_t at) const {
    return static_cast<char *>(device->get()) + at;
  }
  std::vector<uint8_t> host;

private:
  size_t used = 0;
  std::vector<std::pair<size_t, std::vector<uint8_t>>> pending;
  std::unique_ptr<DeviceBuffer> device;
};

class CudaBandwidthKernels : public CudaTest {};

int64_t hostAddress(const void *p) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
}

TEST_F(CudaBandwidthKernels, PackedAndScalarAdamPathsMatchCpuBitForBit) {
  // Lengths around the pack (8), the tile (2048) and the chunk (8192), and
  // one tensor of 3M elements: with ~2 resident blocks per SM every block
  // takes several of its chunks, and in the amax pass crosses into the
  // next tensor. 40 tensors: two launches' tables.
  std::vector<int64_t> sizes = {
      3'000'001, 7,   8, 9, 2047,  2048,  2049, 8191, 8192, 8193, 16,  17, 4096,
      12345,     100, 1, 0, 65537, 24577, 3,    33,   2056, 6000, 8200};
  for (int64_t i = 0; i < 16; ++i)
    sizes.push_back(1000 + 37 * i);
  uint64_t seed = 5000;
  for (int kind = 0; kind < 2; ++kind) {
    // O2 (f16 param, E4M3 grad and m, f16 v) and all-f32 states.
    const bool o2 = kind == 0;
    const int32_t p = o2 ? MSAMP_RT_F16 : MSAMP_RT_F32;
    const int32_t g = o2 ? MSAMP_RT_F8E4M3FN : MSAMP_RT_F32;
    const int32_t m = o2 ? MSAMP_RT_F8E4M3FN : MSAMP_RT_F32;
    const int32_t v = o2 ? MSAMP_RT_F16 : MSAMP_RT_F32;
    const bool inPlace = o2;
    std::vector<std::unique_ptr<AdamCall>> cpu, gpu;
    for (int64_t n : sizes) {
      cpu.push_back(std::make_unique<AdamCall>(p, g, m, v,
                                               std::vector<int64_t>{n}, seed));
      gpu.push_back(std::make_unique<AdamCall>(p, g, m, v,
                                               std::vector<int64_t>{n}, seed));
      ++seed;
    }
    use("cpu");
    for (auto &call : cpu)
      call->run(false);
    expectNoError("cpu");

    // Tensor k: every buffer aligned when k % 3 == 0 (packed), only the
    // gradient misaligned when k % 3 == 1, every buffer misaligned when
    // k % 3 == 2 (the misalignments are multiples of the element size).
    DeviceLayout layout;
    struct Placed {
      size_t param, grad, m, v, outParam, outM, outV;
    };
    std::vector<Placed> placed;
    for (size_t k = 0; k < gpu.size(); ++k) {
      AdamCall &c = *gpu[k];
      auto misalign = [&](const Raw &r, bool shift) -> size_t {
        return shift ? (r.elementSize() * (1 + k % 5)) % 16 : 0;
      };
      // (1 + k % 5) * size can be 16 for f32 (k % 5 == 3): a multiple of
      // 16 is aligned, so use a shift that never is.
      auto off = [&](const Raw &r, bool shift) -> size_t {
        const size_t a = misalign(r, shift);
        return shift && a == 0 ? r.elementSize() : a;
      };
      const bool all = k % 3 == 2, gradOnly = k % 3 == 1;
      Placed at;
      at.param = layout.place(c.param.data.bytes, off(c.param.data, all));
      at.grad =
          layout.place(c.grad.data.bytes, off(c.grad.data, all || gradOnly));
      at.m = layout.place(c.m.data.bytes, off(c.m.data, all));
      at.v = layout.place(c.v.data.bytes, off(c.v.data, all));
      if (inPlace) {
        at.outParam = at.param;
        at.outM = at.m;
        at.outV = at.v;
      } else {
        at.outParam =
            layout.reserve(c.outParam.bytes.size(), off(c.outParam, all));
        at.outM = layout.reserve(c.outM.bytes.size(), off(c.outM, all));
        at.outV = layout.reserve(c.outV.bytes.size(), off(c.outV, all));
      }
      placed.push_back(at);
    }
    layout.upload();

    std::vector<int64_t> table;
    for (size_t k = 0; k < gpu.size(); ++k) {
      AdamCall &c = *gpu[k];
      const Placed &at = placed[k];
      float *outPS =
          inPlace ? c.paramScale.data.data() : c.outParamScale.data.data();
      float *outMS = inPlace ? c.mScale.data.data() : c.outMScale.data.data();
      float *outVS = inPlace ? c.vScale.data.data() : c.outVScale.data.data();
      const int64_t row[] = {static_cast<int64_t>(c.param.data.numel()),
                             layout.address(at.param),
                             hostAddress(c.paramScale.data.data()),
                             layout.address(at.grad),
                             hostAddress(c.gradScaleInv.data.data()),
                             layout.address(at.m),
                             hostAddress(c.mScale.data.data()),
                             layout.address(at.v),
                             hostAddress(c.vScale.data.data()),
                             layout.address(at.outParam),
                             hostAddress(outPS),
                             layout.address(at.outM),
                             hostAddress(outMS),
                             layout.address(at.outV),
                             hostAddress(outVS)};
      static_assert(sizeof(row) / sizeof(row[0]) == MSAMP_RT_ADAM_TABLE_COLUMNS,
                    "one row of msamp_rt_adam_update_multi's table");
      table.insert(table.end(), std::begin(row), std::end(row));
    }
    msamp_rt_test::Tensor<int64_t> tableT(
        {static_cast<int64_t>(gpu.size()), MSAMP_RT_ADAM_TABLE_COLUMNS}, table);
    const AdamCall &g0 = *gpu[0];
    use("cuda");
    _mlir_ciface_msamp_rt_adam_update_multi(
        tableT, gpu[0]->lr, gpu[0]->step, p, g, m, v, g0.beta1, g0.beta2,
        g0.eps, g0.weightDecay, MSAMP_RT_ADAM_DECOUPLED);
    expectNoError("cuda");
    use("cpu");
    layout.download();

    for (size_t k = 0; k < gpu.size(); ++k) {
      AdamCall &c = *cpu[k], &d = *gpu[k];
      const Placed &at = placed[k];
      const std::string what = std::string(o2 ? "O2" : "f32") + " tensor " +
                               std::to_string(k) + " (" +
                               std::to_string(sizes[k]) + " elements, " +
                               (k % 3 == 0   ? "packed"
                                : k % 3 == 1 ? "grad misaligned"
                                             : "all misaligned") +
                               ")";
      auto got = [&](const Raw &like, size_t offset) {
        Raw r(like.dtype, like.shape);
        std::memcpy(r.bytes.data(), layout.host.data() + offset,
                    r.bytes.size());
        return r;
      };
      expectSameValues(c.outParam, got(c.outParam, at.outParam),
                       what + " param");
      expectSameValues(c.outM, got(c.outM, at.outM), what + " m");
      expectSameValues(c.outV, got(c.outV, at.outV), what + " v");
      if (p != MSAMP_RT_F32)
        expectSameFloat(c.outParamScale[0],
                        inPlace ? d.paramScale[0] : d.outParamScale[0],
                        what + " param scale");
      if (m != MSAMP_RT_F32)
        expectSameFloat(c.outMScale[0], inPlace ? d.mScale[0] : d.outMScale[0],
                        what + " m scale");
      if (v != MSAMP_RT_F32)
        expectSameFloat(c.outVScale[0], inPlace ? d.vScale[0] : d.outVScale[0],
                        what + " v scale");
      if (::testing::Test::HasFailure())
        return;
    }
  }
}

/// The first element of `bytes` (elements of `width` bytes) whose bits
/// hold every bit of `mask`, or -1: the session's rule, on the host.
int64_t firstMatch(const std::vector<uint8_t> &bytes, int width,
                   uint64_t mask) {
  const int64_t count = static_cast<int64_t>(bytes.size()) / width;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * width, width);
    if ((bits & mask) == mask)
      return i;
  }
  return -1;
}

TEST_F(CudaBandwidthKernels, OneScanFindsTheFirstMatchOfHundredsOfBuffers) {
  use("cuda");
  std::mt19937_64 rng(23);
  const int widths[] = {1, 2, 4, 8};
  const uint64_t masks[] = {0x7Fu, 0x7C00u, 0x7F800000u, 0x7FF0000000000000ull};
  const int64_t lengths[] = {1,  2,  7,   15,   16,   17,
                             31, 33, 255, 4096, 4099, 70'001};
  struct Case {
    int width;
    uint64_t mask;
    std::vector<uint8_t> bytes;
    size_t misalign;
  };
  std::vector<Case> cases;
  for (int b = 0; b < 900; ++b) {
    Case c;
    const int w = b % 4;
    c.width = widths[w];
    c.mask = masks[w];
    const int64_t n = b == 899 ? 0 : lengths[(b / 4) % 12];
    c.bytes.resize(static_cast<size_t>(n * c.width));
    // Finite values: random bits with the exponent's top bit cleared.
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits = rng() & ~(uint64_t(1) << (8 * c.width - 2));
      std::memcpy(c.bytes.data() + i * c.width, &bits, c.width);
    }
    auto put = [&](int64_t i) {
      if (i < 0 || i >= n)
        return;
      uint64_t bits = 0;
      std::memcpy(&bits, c.bytes.data() + i * c.width, c.width);
      bits |= c.mask;
      std::memcpy(c.bytes.data() + i * c.width, &bits, c.width);
    };
    switch ((b / 48) % 5) {
    case 0: // none
      break;
    case 1: // the last element (often in the scalar tail)
      put(n - 1);
      break;
    case 2: // element 0, and later ones
      put(0);
      put(n / 2);
      put(n - 1);
      break;
    case 3: // in the middle, and the last
      put(n / 2);
      put(n - 1);
      break;
    default: // two in a row near the end of the first vector
      put(14 / c.width);
      put(15 / c.width);
      break;
    }
    // Misaligned by a multiple of the width on every other buffer.
    c.misalign = (b / 2) % 2 ? (c.width * (1 + b % 3)) % 16 : 0;
    cases.push_back(std::move(c));
  }
  // A large buffer (many chunks): matches at two places far apart.
  {
    Case c{4, masks[2], std::vector<uint8_t>(4 * 5'000'000), 0};
    for (size_t i = 0; i < c.bytes.size(); i += 4) {
      const uint32_t bits = static_cast<uint32_t>(rng()) & 0x3FFFFFFFu;
      std::memcpy(c.bytes.data() + i, &bits, 4);
    }
    for (int64_t i : {int64_t(4'999'999), int64_t(3'333'333)}) {
      const uint32_t nan = 0x7FC00000u;
      std::memcpy(c.bytes.data() + 4 * i, &nan, 4);
    }
    cases.push_back(std::move(c));
  }

  DeviceLayout layout;
  std::vector<size_t> at;
  for (const Case &c : cases)
    at.push_back(layout.place(c.bytes, c.misalign));
  layout.upload();
  const int64_t n = static_cast<int64_t>(cases.size());
  std::vector<const void *> data;
  std::vector<int64_t> counts;
  std::vector<int32_t> ws;
  std::vector<uint64_t> ms;
  for (int64_t k = 0; k < n; ++k) {
    data.push_back(layout.pointer(at[k]));
    counts.push_back(static_cast<int64_t>(cases[k].bytes.size()) /
                     cases[k].width);
    ws.push_back(cases[k].width);
    ms.push_back(cases[k].mask);
  }
  std::vector<int64_t> first(static_cast<size_t>(n), 12345);
  ASSERT_EQ(msamp_rt_gpu_find_all_ones(data.data(), counts.data(), ws.data(),
                                       ms.data(), n, first.data()),
            MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  int withMatch = 0;
  for (int64_t k = 0; k < n; ++k) {
    const Case &c = cases[k];
    const int64_t expected = firstMatch(c.bytes, c.width, c.mask);
    withMatch += expected >= 0;
    EXPECT_EQ(first[k], expected)
        << "buffer " << k << ": " << counts[k] << " elements of " << c.width
        << " bytes, misaligned by " << c.misalign;
  }
  EXPECT_EQ(first[n - 1], 3'333'333);
  EXPECT_EQ(first[n - 2], -1); // the empty buffer
  // The cases above are not vacuous: most buffers hold a match.
  EXPECT_GT(withMatch, 600);
  expectNoError("find_all_ones");
}

TEST_F(CudaBandwidthKernels, ABadWidthNamesItsBufferAndLaunchesNothing) {
  use("cuda");
  DeviceBuffer buf(64);
  const void *data[] = {buf.get(), buf.get(), buf.get()};
  const int64_t counts[] = {4, 4, 4};
  const int32_t widths[] = {4, 2, 3};
  const uint64_t masks[] = {0x7F800000u, 0x7C00u, 0xFFu};
  int64_t first[3] = {7, 7, 7};
  EXPECT_NE(msamp_rt_gpu_find_all_ones(data, counts, widths, masks, 3, first),
            MSAMP_RT_OK);
  EXPECT_NE(std::string(msamp_rt_get_last_error_message())
                .find("buffer 2, 4 elements of 3 bytes"),
            std::string::npos)
      << msamp_rt_get_last_error_message();
  msamp_rt_clear_error();
}

} // namespace
