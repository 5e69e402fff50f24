//===- FP8OperandLayouts.cpp - --msamp-gpu-fp8-operand-layouts ------------===//
//
// Part of the msamp project.
//
// cuBLASLt's FP8 GEMMs run only "TN": in row-major terms both operands with
// the reduction dimension K innermost (GemmPlan.h). MS-AMP's fprop y = x w^T
// is that layout; the backward GEMMs are not:
//
//   wgrad  dW = dY^T X   msamp.gemm %dy, %x {transpose_a}   dY and X: K outer
//   dgrad  dX = dY W     msamp.gemm %dy, %w                 W: K outer
//
// msamp_rt_gemm then packs each such operand (a byte transpose into scratch)
// on every call: 3 pack kernels per linear layer and step, each reading the
// codes the quantize has just written. The quantize can write them
// transposed in the same pass over its input (Transformer Engine's and
// MS-AMP's fused cast-transpose), so here each such operand becomes
//
//   %t = linalg.transpose ins(%q) outs(%e) permutation = [1, 0]
//   msamp.gemm %t, ..  (transpose_a cleared; for b: transpose_b set)
//
// which reads the same bytes the pack would have produced, and
// convert-msamp-to-runtime lowers the quantize and %t to one call
// (QuantizeTransposeToRuntime.cpp: msamp_rt_quantize_transpose, or
// msamp_rt_quantize_jit with its transposed layout for a just-in-time
// cast). The operand must be the codes of an msamp.quantize as [rows, cols]
// (getQuantizeOfRowsCols: the rank-2 result, or a collapse_shape keeping
// its last dimension), which is what out_t holds; one transpose per value
// serves every GEMM that reads it (the activation x of Q, K and V). An
// operand with another producer (an FP8 value of the graph's own, a
// reshape the call cannot write) or of a batched GEMM (out_t is one
// [cols, rows] matrix, not one per batch) keeps its pack, and so does one
// with a dimension no multiple of 16, which msamp_rt_gemm pads anyway
// (its plan, GemmPlan.h, decides: the padding copy transposes for free, and
// a second layout would only cost a write; the LM head over a vocabulary of
// 50,257); a missed remark says so. GPU only: the CPU's BLAS takes either
// layout, and a copy there would be waste.
//
// Numbers: the GEMM multiplies the same FP8 values; cuBLASLt sees the same
// bytes as with the pack (and, unpadded, in place), so on the GPU the result
// is the same bits; the CPU backend (host emulation) runs its BLAS with the
// other transpose flag on the transposed copy (test/Codegen/GPU/
// host-emulation.test checks the bits against the CPU target).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Conversion/MSAMPToRuntime.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Remarks.h"

#include "llvm/ADT/DenseMap.h"

// The CUDA backend's GEMM plan (pure index logic): whether the GEMM would
// read the transposed codes in place or pack them anyway.
#include "GemmPlan.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUFP8OPERANDLAYOUTS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

bool isFP8(Value value) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(
      cast<ShapedType>(value.getType()).getElementType());
}

/// Whether msamp_rt_gemm would still pack operand a (`side` "a") or b of
/// `gemm` if that operand's transpose flag were flipped: a dimension that
/// is no multiple of 16 is padded by the same pack, which then transposes
/// at no extra cost (GemmPlan.h), and the quantize's second layout would
/// be written for nothing.
bool packedEvenIfFlipped(GemmOp gemm, StringRef side) {
  namespace rtc = ::msamp::runtime::cuda;
  auto a = cast<ShapedType>(gemm.getA().getType());
  auto out = cast<ShapedType>(gemm.getResult().getType());
  rtc::GemmProblem p;
  p.aType = getRuntimeDTypeCode(a.getElementType());
  p.bType = getRuntimeDTypeCode(
      cast<ShapedType>(gemm.getB().getType()).getElementType());
  p.outType = getRuntimeDTypeCode(out.getElementType());
  p.transA = gemm.getTransposeA();
  p.transB = gemm.getTransposeB();
  int64_t rank = out.getRank();
  p.m = out.getDimSize(rank - 2);
  p.n = out.getDimSize(rank - 1);
  p.k = a.getDimSize(p.transA ? a.getRank() - 2 : a.getRank() - 1);
  if (side == "a")
    p.transA = !p.transA;
  else
    p.transB = !p.transB;
  rtc::GemmPlan plan;
  const char *reason = nullptr;
  if (!rtc::planGemm(p, plan, reason))
    return true;
  return side == "a" ? plan.packA.needed : plan.packB.needed;
}

struct FP8OperandLayouts
    : mlir::msamp::impl::MSAMPGPUFP8OperandLayoutsBase<FP8OperandLayouts> {
  void runOnOperation() override {
    SmallVector<GemmOp> gemms;
    getOperation().walk([&](GemmOp gemm) { gemms.push_back(gemm); });
    // The transposed codes of each value, made once.
    llvm::DenseMap<Value, Value> transposed;
    for (GemmOp gemm : gemms) {
      // cuBLASLt's FP8 path needs both operands FP8; mixed or high
      // precision GEMMs take any layout.
      if (!isFP8(gemm.getA()) || !isFP8(gemm.getB()))
        continue;
      if (gemm.getTransposeA())
        if (Value t = transposedCodes(gemm, gemm.getA(), "a", transposed)) {
          gemm.getAMutable().assign(t);
          gemm.setTransposeA(false);
        }
      if (!gemm.getTransposeB())
        if (Value t = transposedCodes(gemm, gemm.getB(), "b", transposed)) {
          gemm.getBMutable().assign(t);
          gemm.setTransposeB(true);
        }
    }
  }

  /// The transposed codes of `operand` (made after its producer, or found in
  /// `transposed`), or null with a remark when its quantize cannot write
  /// them.
  Value transposedCodes(GemmOp gemm, Value operand, StringRef side,
                        llvm::DenseMap<Value, Value> &transposed) {
    auto missed = [&](const Twine &why) {
      remark::missed(gemm.getLoc(), remarkOptions("gpu-fp8-operand-layouts",
                                                  "FP8OperandPacked"))
          << ("the GEMM's FP8 operand " + side +
              " is needed transposed and stays packed by msamp_rt_gemm: " + why)
                 .str();
      return Value();
    };
    if (cast<ShapedType>(operand.getType()).getRank() != 2)
      return missed("a batched GEMM (the quantize's transposed layout is one "
                    "[cols, rows] matrix, not one per batch)");
    if (packedEvenIfFlipped(gemm, side))
      return missed("a dimension is no multiple of 16, so msamp_rt_gemm "
                    "pads it anyway, and that copy transposes at no extra "
                    "cost");
    if (!getQuantizeOfRowsCols(operand))
      return missed("it is not the codes of an msamp.quantize as [rows, "
                    "cols] (its rank-2 result or a collapse_shape keeping "
                    "its last dimension)");
    if (Value t = transposed.lookup(operand)) {
      ++numOperands;
      return t;
    }
    OpBuilder b(operand.getContext());
    b.setInsertionPointAfterValue(operand);
    auto type = cast<RankedTensorType>(operand.getType());
    Location loc = operand.getLoc();
    Value init = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{type.getDimSize(1), type.getDimSize(0)},
        type.getElementType());
    Value t = linalg::TransposeOp::create(b, loc, operand, init,
                                          ArrayRef<int64_t>{1, 0})
                  .getResult()[0];
    transposed[operand] = t;
    ++numTransposes;
    ++numOperands;
    return t;
  }
};

} // namespace
