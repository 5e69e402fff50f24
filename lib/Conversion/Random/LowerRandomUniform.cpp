//===- LowerRandomUniform.cpp - Philox4x32-10 as generated code -*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Why generated code and not a runtime call: a call would need one
// implementation per backend (host loop, CUDA kernel) that must agree bit for
// bit, and it would stop the elementwise fusion of the mask with the ops
// around it. A linalg.generic of integer arithmetic is lowered by each
// target's ordinary path into loops or kernels, and integer arithmetic has
// one result everywhere, so the CPU and GPU numbers agree by construction.
// The arithmetic is that of include/MSAMP/Numerics/Philox.h, which the unit
// tests check against Random123's known answers; the Python tests check the
// compiled step's masks against it.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/Numerics/Philox.h"

#include "mlir/IR/Builders.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPLOWERRANDOMUNIFORM
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;
using namespace ::msamp::numerics;

namespace {

/// Builds the body of one element: Philox of (index, id, step, rank) under
/// the seed, as the uniform number of the result's element type.
class PhiloxBuilder {
public:
  PhiloxBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value i32(uint32_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                        static_cast<int64_t>(v));
  }
  Value i64(uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                        static_cast<int64_t>(v));
  }
  Value lo32(Value v64) {
    return arith::TruncIOp::create(b, loc, b.getI32Type(), v64);
  }
  Value hi32(Value v64) {
    return lo32(arith::ShRUIOp::create(b, loc, v64, i64(32)));
  }
  Value wide(Value v32) {
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v32);
  }
  Value xori(Value a, Value c) { return arith::XOrIOp::create(b, loc, a, c); }

  /// The 64 random bits (output words 0 and 1, word 0 high).
  Value bits(std::array<Value, 4> c, Value k0, Value k1) {
    for (int r = 0; r < kPhiloxRounds; ++r) {
      if (r > 0) {
        k0 = arith::AddIOp::create(b, loc, k0, i32(kPhiloxW0));
        k1 = arith::AddIOp::create(b, loc, k1, i32(kPhiloxW1));
      }
      // 32x32 -> 64 products as i64 multiplications of zero-extended words.
      Value p0 = arith::MulIOp::create(b, loc, i64(kPhiloxM0), wide(c[0]));
      Value p1 = arith::MulIOp::create(b, loc, i64(kPhiloxM1), wide(c[2]));
      c = {xori(xori(hi32(p1), c[1]), k0), lo32(p1),
           xori(xori(hi32(p0), c[3]), k1), lo32(p0)};
    }
    Value high = arith::ShLIOp::create(b, loc, wide(c[0]), i64(32));
    return arith::OrIOp::create(b, loc, high, wide(c[1]));
  }

private:
  OpBuilder &b;
  Location loc;
};

struct MSAMPLowerRandomUniformPass
    : ::mlir::msamp::impl::MSAMPLowerRandomUniformBase<
          MSAMPLowerRandomUniformPass> {
  void runOnOperation() override {
    SmallVector<RandomUniformOp> ops;
    getOperation().walk([&](RandomUniformOp op) { ops.push_back(op); });
    for (RandomUniformOp op : ops)
      lower(op);
  }

  void lower(RandomUniformOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = type.getRank();
    MLIRContext *ctx = &getContext();
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    AffineMap scalar = AffineMap::get(rank, 0, ctx);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    double low = op.getLow().convertToDouble();
    double high = op.getHigh().convertToDouble();
    uint32_t id = static_cast<uint32_t>(op.getId());
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type},
        ValueRange{op.getSeed(), op.getStep(), op.getRank()}, ValueRange{init},
        ArrayRef<AffineMap>{scalar, scalar, scalar, identity}, iterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          PhiloxBuilder p(nb, nloc);
          // Row-major element index.
          Value index = arith::ConstantIndexOp::create(nb, nloc, 0);
          for (int64_t d = 0; d < rank; ++d) {
            Value size =
                arith::ConstantIndexOp::create(nb, nloc, type.getDimSize(d));
            index = arith::MulIOp::create(nb, nloc, index, size);
            index = arith::AddIOp::create(nb, nloc, index,
                                          linalg::IndexOp::create(nb, nloc, d));
          }
          Value index32 =
              arith::IndexCastUIOp::create(nb, nloc, nb.getI32Type(), index);
          Value rank32 = args[2];
          if (!rank32.getType().isInteger(32))
            rank32 = p.lo32(rank32);
          Value bits = p.bits({index32, p.i32(id), p.lo32(args[1]), rank32},
                              p.lo32(args[0]), p.hi32(args[0]));
          // 53 random bits -> [0, 1), exact in f64.
          Value top = arith::ShRUIOp::create(nb, nloc, bits, p.i64(11));
          Value u = arith::UIToFPOp::create(nb, nloc, nb.getF64Type(), top);
          auto f64 = [&](double v) {
            return arith::ConstantFloatOp::create(nb, nloc, nb.getF64Type(),
                                                  APFloat(v));
          };
          u = arith::MulFOp::create(nb, nloc, u, f64(0x1p-53));
          if (low != 0.0 || high != 1.0)
            u = arith::AddFOp::create(
                nb, nloc, arith::MulFOp::create(nb, nloc, u, f64(high - low)),
                f64(low));
          if (!type.getElementType().isF64())
            u = arith::TruncFOp::create(nb, nloc, type.getElementType(), u);
          linalg::YieldOp::create(nb, nloc, u);
        });
    op.getResult().replaceAllUsesWith(generic->getResult(0));
    op.erase();
  }
};

} // namespace
