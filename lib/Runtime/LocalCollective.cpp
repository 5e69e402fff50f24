//===- LocalCollective.cpp - World-size-1 collective and the setter -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A single process is a data-parallel group of one: every all-reduce returns
// its input. It still goes through reduce*InRankOrder so that the local path
// and a gathering multi-rank implementation share one code path; with one
// contribution that is a copy, with no FP8 re-rounding (a sum of one term
// performs no hop).
//
//===----------------------------------------------------------------------===//

#include "Collective.h"

#include <mutex>

namespace msamp::runtime {

Collective::~Collective() = default;

namespace {

class LocalCollective final : public Collective {
public:
  const char *name() const override { return "local"; }
  int rank() const override { return 0; }
  int worldSize() const override { return 1; }

  msamp_rt_status allReduceF32(const float *in, float *out, int64_t n,
                               CollectiveOp op) override {
    const float *contrib[1] = {in};
    reduceF32InRankOrder(contrib, 1, n, op, out);
    return MSAMP_RT_OK;
  }

  msamp_rt_status allReduceFP8(const uint8_t *in, uint8_t *out, int64_t n,
                               numerics::Format format,
                               CollectiveOp op) override {
    const uint8_t *contrib[1] = {in};
    reduceFP8InRankOrder(contrib, 1, n, format, op, out);
    return MSAMP_RT_OK;
  }

  /// A group of one already holds the root's bytes.
  msamp_rt_status broadcast(void *, int64_t, int) override {
    return MSAMP_RT_OK;
  }
};

struct CollectiveSlot {
  std::mutex mutex;
  std::unique_ptr<Collective> current = createLocalCollective();
};

CollectiveSlot &slot() {
  static CollectiveSlot *s = new CollectiveSlot(); // leaked, like the registry
  return *s;
}

} // namespace

std::unique_ptr<Collective> createLocalCollective() {
  return std::make_unique<LocalCollective>();
}

Collective &currentCollective() {
  CollectiveSlot &s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  return *s.current;
}

void setCollective(std::unique_ptr<Collective> collective) {
  CollectiveSlot &s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.current = collective ? std::move(collective) : createLocalCollective();
}

} // namespace msamp::runtime

using namespace msamp::runtime;

extern "C" {

MSAMP_RT_EXPORT int32_t msamp_rt_rank(void) {
  return currentCollective().rank();
}

MSAMP_RT_EXPORT int32_t msamp_rt_world_size(void) {
  return currentCollective().worldSize();
}

} // extern "C"
