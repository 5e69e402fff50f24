//===- StreamOrderedCalls.cpp - Runtime calls that run on the stream ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/StreamOrderedCalls.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::msamp {

// msamp_rt_check_computed_index checks its indices on the stream and the
// session reads the result after the step's wait (RuntimeABI.md 3.11.1).
bool isStreamOrderedCall(llvm::StringRef callee) {
  static const llvm::StringSet<> names = {"msamp_rt_quantize",
                                          "msamp_rt_dequantize",
                                          "msamp_rt_amax",
                                          "msamp_rt_compute_scale",
                                          "msamp_rt_update_amax_history",
                                          "msamp_rt_gemm",
                                          "msamp_rt_all_reduce",
                                          "msamp_rt_reduce",
                                          "msamp_rt_broadcast",
                                          "msamp_rt_reduce_scatter",
                                          "msamp_rt_all_gather",
                                          "msamp_rt_adam_update",
                                          "msamp_rt_adam_update_multi",
                                          "msamp_rt_sgd_update",
                                          "msamp_rt_quantize_jit",
                                          "msamp_rt_scale_update",
                                          "msamp_rt_quantize_transpose",
                                          "msamp_rt_check_computed_index",
                                          "msamp_rt_quantize_scale_update"};
  return names.contains(callee);
}

} // namespace mlir::msamp
