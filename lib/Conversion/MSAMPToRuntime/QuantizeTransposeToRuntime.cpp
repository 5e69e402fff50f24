//===- QuantizeTransposeToRuntime.cpp - both FP8 layouts from one cast ----===//
//
// A GEMM whose FP8 operand is needed with its other dimension innermost
// (cuBLASLt's FP8 GEMMs take only the TN layout; msamp-gpu-fp8-operand-
// layouts asks for it on the GPU target) reads the quantized codes
// transposed:
//
//   %q = msamp.quantize %x, %s : tensor<RxCxf32> to tensor<RxCxf8E4M3FN>
//   %t = linalg.transpose ins(%q) outs(%e) permutation = [1, 0]
//
// Lowered op by op that is a cast and a byte transpose that reads the codes
// back. Here the quantize's call writes both: the transpose's result becomes
// the call's out_t,
//
//   msamp_rt_quantize_transpose(%x, %s, q, t, in_dtype, out_dtype)
//
// (docs/RuntimeABI.md 3.14; a just-in-time cast's msamp_rt_quantize_jit
// does the same with MSAMP_RT_QUANTIZE_JIT_TRANSPOSE, FusedCastToRuntime.cpp),
// one pass over %x in one kernel on the GPU. The codes are the same bytes
// transposed, so every reader sees the values it saw. The transpose's input
// may also be a collapse_shape of a higher-rank quantize's result that keeps
// its last dimension: the [rows, cols] view out_t is defined on. The
// transpose is erased when the walk reaches it (it comes after the
// quantize, and an op after the visited one must not be erased earlier).
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::msamp;

Operation *mlir::msamp::getQuantizeOfRowsCols(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() != 2)
    return nullptr;
  if (auto q = value.getDefiningOp<QuantizeOp>())
    return q;
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return nullptr;
  auto q = collapse.getSrc().getDefiningOp<QuantizeOp>();
  // [[0, .., r - 2], [r - 1]]: the last dimension stays the columns.
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  int64_t rank = collapse.getSrcType().getRank();
  if (!q || collapse->getBlock() != q->getBlock() || groups.size() != 2 ||
      groups[1].size() != 1 || groups[1][0] != rank - 1)
    return nullptr;
  return q;
}

Operation *mlir::msamp::getCodesTranspose(Operation *quantize) {
  auto q = dyn_cast_or_null<QuantizeOp>(quantize);
  if (!q)
    return nullptr;
  auto transposeOf = [&](Value rowsCols) -> Operation * {
    for (Operation *user : rowsCols.getUsers()) {
      auto t = dyn_cast<linalg::TransposeOp>(user);
      if (t && t.hasPureTensorSemantics() && t->getBlock() == q->getBlock() &&
          t.getInput() == rowsCols &&
          t.getPermutation() == ArrayRef<int64_t>{1, 0})
        return t;
    }
    return nullptr;
  };
  Value codes = q.getResult();
  if (getQuantizeOfRowsCols(codes) == q)
    if (Operation *t = transposeOf(codes))
      return t;
  for (Operation *user : codes.getUsers())
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
      if (getQuantizeOfRowsCols(collapse.getResult()) == q)
        if (Operation *t = transposeOf(collapse.getResult()))
          return t;
  return nullptr;
}

namespace {

/// A quantize (not a fused just-in-time cast) whose codes are also read
/// transposed: one msamp_rt_quantize_transpose.
struct QuantizeTransposeToRuntime : RuntimeCallPattern<QuantizeOp> {
  // Benefit 2: tried before QuantizeToRuntime; FusedCastToRuntime (3) takes
  // a just-in-time cast's quantize first and writes out_t itself.
  QuantizeTransposeToRuntime(MLIRContext *ctx, MSAMPToRuntimeState &state)
      : RuntimeCallPattern(ctx, state, /*benefit=*/2) {}

  LogicalResult match(QuantizeOp op) const override {
    return success(getCodesTranspose(op) != nullptr);
  }

  void lower(QuantizeOp op, RuntimeCall &call) const override {
    Operation *transpose = getCodesTranspose(op);
    call.replaceOp(RuntimeFn::QuantizeTranspose,
                   {call.input(op.getInput()), call.input(op.getScale()),
                    call.output(op.getType()),
                    call.outputFor(transpose->getResult(0)),
                    call.i32(RuntimeCall::dtype(op.getInput())),
                    call.i32(RuntimeCall::dtype(op.getResult()))});
    state.replacedOps.insert(transpose);
  }
};

} // namespace

void mlir::msamp::populateQuantizeTransposeToRuntimePatterns(
    RewritePatternSet &patterns, MSAMPToRuntimeState &state) {
  patterns.add<QuantizeTransposeToRuntime>(patterns.getContext(), state);
}
