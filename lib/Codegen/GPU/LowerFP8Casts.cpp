//===- LowerFP8Casts.cpp - FP8 casts in kernels -> NVVM cvt ------*- C++
//-*-===//
//
// Inside gpu.func only (host code keeps its own lowering):
//
//   arith.truncf %x : f32 to f8E4M3FN
//     -> %p = nvvm.convert.f32x2.to.f8x2 %x, %x
//              {rnd = rn, sat = satfinite} : i16 (f8E4M3FN)
//        %b = arith.trunci %p : i16 to i8       // the low byte converts `b`
//        %r = arith.bitcast %b : i8 to f8E4M3FN
//
//   arith.extf %q : f8E4M3FN to f32
//     -> %v = vector.broadcast (arith.bitcast %q : f8 to i8) : vector<2xi8>
//        %h = nvvm.convert.f8x2.to.f16x2 %v : vector<2xi8> (f8E4M3FN)
//                                           -> vector<2xf16>
//        %r = arith.extf (vector.extract %h[0]) : f16 to f32
//
// Both conversions are PTX cvt instructions of sm_89 / sm_90. FP8 values
// are exactly representable in f16, so the widening is exact; the
// narrowing rounds once, to nearest even, with satfinite saturation, which
// is the runtime's numerics (docs/Design.md "Numerics").
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPULOWERFP8CASTS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

bool isFP8(Type type) { return isa<Float8E4M3FNType, Float8E5M2Type>(type); }

/// f32 of `value` (any float type): exact for f16/bf16, one rounding for
/// f64 (documented: f64 -> f8 in a kernel rounds twice).
Value toF32(OpBuilder &b, Location loc, Value value) {
  Type f32 = b.getF32Type();
  Type type = value.getType();
  if (type == f32)
    return value;
  if (type.getIntOrFloatBitWidth() < 32)
    return arith::ExtFOp::create(b, loc, f32, value);
  return arith::TruncFOp::create(b, loc, f32, value);
}

LogicalResult lowerTruncF(arith::TruncFOp op) {
  Type target = op.getType();
  if (!isFP8(target))
    return success();
  if (isa<VectorType>(op.getIn().getType()))
    return op.emitError("msamp-gpu-lower-fp8-casts: vector FP8 casts are "
                        "not supported in kernels");
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value x = toF32(b, loc, op.getIn());
  auto packed = NVVM::ConvertF32x2ToF8x2Op::create(
      b, loc, b.getI16Type(), x, x, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, target);
  Value low = arith::TruncIOp::create(b, loc, b.getI8Type(), packed);
  Value result = arith::BitcastOp::create(b, loc, target, low);
  op.replaceAllUsesWith(result);
  op.erase();
  return success();
}

LogicalResult lowerExtF(arith::ExtFOp op) {
  Type source = op.getIn().getType();
  if (!isFP8(source))
    return success();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value bits = arith::BitcastOp::create(b, loc, b.getI8Type(), op.getIn());
  auto pairType = VectorType::get({2}, b.getI8Type());
  Value pair = vector::BroadcastOp::create(b, loc, pairType, bits);
  auto halves = NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
      source);
  Value half = vector::ExtractOp::create(b, loc, halves, 0);
  Type target = op.getType();
  Value result = target == b.getF16Type()
                     ? half
                     : arith::ExtFOp::create(b, loc, target, half).getResult();
  op.replaceAllUsesWith(result);
  op.erase();
  return success();
}

struct LowerFP8CastsPass
    : msamp::impl::MSAMPGPULowerFP8CastsBase<LowerFP8CastsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> casts;
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      func.walk([&](Operation *op) {
        if (isa<arith::TruncFOp, arith::ExtFOp>(op))
          casts.push_back(op);
      });
    });
    for (Operation *op : casts) {
      LogicalResult result = success();
      if (auto trunc = dyn_cast<arith::TruncFOp>(op))
        result = lowerTruncF(trunc);
      else
        result = lowerExtF(cast<arith::ExtFOp>(op));
      if (failed(result))
        return signalPassFailure();
    }
  }
};

} // namespace
