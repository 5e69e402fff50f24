//===- CpuScaleUpdate.cpp - One scaled cast's bookkeeping on the CPU ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_scale_update as the composition of what it replaces: cpu::amax,
// the collective's f32 MAX all-reduce (what msamp_rt_all_reduce max of one
// element runs; a group of one returns its input, so it is skipped there),
// then numerics::scaleUpdate, the one definition of the history roll, the
// two scale computations and the inverse (ScaleUpdate.h). The results are
// therefore those of the separate entry points bit for bit; the CUDA
// backend is tested against this one. msamp_rt_quantize_scale_update
// (p.quantize) is the same, then the cast with the scale it chose:
// cpu::quantize, or quantizeTranspose for both layouts, exactly the calls
// it replaces (the CPU gains nothing from a single pass, and composing
// keeps the reference trivially equal).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "../Collective.h"
#include "../Status.h"

#include "MSAMP/Numerics/ScaleUpdate.h"

#include <climits>

namespace msamp::runtime::cpu {

msamp_rt_status scaleUpdate(const ScaleUpdateParams &p,
                            Collective &collective) {
  if (p.length > INT_MAX)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_scale_update: history length %lld is too "
                       "long",
                       static_cast<long long>(p.length));
  float amaxValue = 0.0f;
  if (msamp_rt_status s = amax(p.in, &amaxValue))
    return s;
  if (p.reduceAmax && collective.worldSize() > 1)
    if (msamp_rt_status s = collective.allReduceF32(&amaxValue, &amaxValue, 1,
                                                    CollectiveOp::Max))
      return recordError(s, "msamp_rt_scale_update: collective '%s' failed",
                         collective.name());
  const bool useJit = p.justInTime || (p.useJit && (*p.useJit & 1));
  const numerics::ScaleUpdateResult r = numerics::scaleUpdate(
      amaxValue, p.history, p.outHistory, static_cast<int>(p.length),
      *p.prevScale, useJit, p.kind, p.algo, p.fpMax, p.margin);
  *p.outScale = r.scale;
  *p.outScaleInv = r.scaleInv;
  *p.outNextScale = r.nextScale;
  if (!p.quantize)
    return MSAMP_RT_OK;
  if (!p.outT)
    return quantize(p.in, p.outScale, p.out);
  QuantizeTransposeParams q;
  q.in = p.in;
  q.scale = p.outScale;
  q.out = p.out;
  q.outT = p.outT;
  q.rows = p.rows;
  q.cols = p.cols;
  return quantizeTranspose(q);
}

} // namespace msamp::runtime::cpu
