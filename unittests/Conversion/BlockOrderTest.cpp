//===- BlockOrderTest.cpp - op order kept across rewrites -----------------===//
//
// Part of the msamp project. BlockOrder (lib/Conversion/MSAMPToRuntime)
// answers convert-msamp-to-runtime's "is A before B" from keys it keeps
// valid as the rewriter inserts, moves and erases ops; its answers must be
// isBeforeInBlock's for every pair, whichever rewrites came before.
//
//===----------------------------------------------------------------------===//

#include "BlockOrder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace mlir;
using namespace mlir::msamp;

namespace {

class BlockOrderTest : public ::testing::Test {
protected:
  BlockOrderTest() : builder(&context) {
    context.loadDialect<arith::ArithDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                     builder.getFunctionType({}, {}));
    block = func.addEntryBlock();
    builder.setInsertionPointToEnd(block);
    for (int i = 0; i < 20; ++i)
      constant(i);
    func::ReturnOp::create(builder, builder.getUnknownLoc());
  }

  Operation *constant(int64_t value) {
    return arith::ConstantIntOp::create(builder, builder.getUnknownLoc(), value,
                                        64);
  }

  std::vector<Operation *> ops() const {
    std::vector<Operation *> result;
    for (Operation &op : *block)
      result.push_back(&op);
    return result;
  }

  /// isBeforeInBlock's answer for every ordered pair.
  void expectAllPairs(const BlockOrder &order) {
    std::vector<Operation *> all = ops();
    for (Operation *a : all)
      for (Operation *b : all)
        ASSERT_EQ(order.isBefore(a, b), a->isBeforeInBlock(b))
            << "positions "
            << (std::find(all.begin(), all.end(), a) - all.begin()) << " and "
            << (std::find(all.begin(), all.end(), b) - all.begin());
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  Block *block = nullptr;
};

TEST_F(BlockOrderTest, OriginalOrder) {
  BlockOrder order(*block);
  expectAllPairs(order);
}

// Insertions, moves and erasures in random places, all through a rewriter
// that notifies the order: many insertions at one point (what a pattern
// does before its op), moves before new ops, erasures whose memory the next
// op may reuse.
TEST_F(BlockOrderTest, RandomRewrites) {
  BlockOrder order(*block);
  IRRewriter rewriter(&context, &order);
  std::mt19937 random(19);
  for (int step = 0; step < 300; ++step) {
    std::vector<Operation *> all = ops();
    Operation *terminator = all.back();
    auto pick = [&](size_t n) {
      return all[std::uniform_int_distribution<size_t>(0, n - 1)(random)];
    };
    Operation *target = pick(all.size()); // may be the terminator
    switch (std::uniform_int_distribution<int>(0, 3)(random)) {
    case 0: // a burst at one point, more than MLIR's index gap
      rewriter.setInsertionPoint(target);
      for (int i = 0; i < 7; ++i)
        arith::ConstantIntOp::create(rewriter, rewriter.getUnknownLoc(), i, 64);
      break;
    case 1: {
      Operation *moved = pick(all.size() - 1);
      if (moved != target)
        rewriter.moveOpBefore(moved, target);
      break;
    }
    case 2:
      if (all.size() > 2)
        rewriter.eraseOp(pick(all.size() - 1));
      break;
    case 3: // erase then create at once: the new op may reuse the memory
      if (all.size() > 2 && target != terminator) {
        Operation *next = target->getNextNode();
        rewriter.eraseOp(target);
        rewriter.setInsertionPoint(next);
        arith::ConstantIntOp::create(rewriter, rewriter.getUnknownLoc(), 99,
                                     64);
      }
      break;
    }
    ASSERT_NO_FATAL_FAILURE(expectAllPairs(order)) << "after step " << step;
  }
}

// An op made with a builder that does not notify the order has no key: its
// queries fall back to isBeforeInBlock and stay right.
TEST_F(BlockOrderTest, UnnotifiedOpFallsBack) {
  BlockOrder order(*block);
  std::vector<Operation *> all = ops();
  builder.setInsertionPoint(all[5]);
  Operation *silent = constant(7);
  IRRewriter rewriter(&context, &order);
  rewriter.setInsertionPoint(silent); // its successor has no key either
  arith::ConstantIntOp::create(rewriter, rewriter.getUnknownLoc(), 8, 64);
  expectAllPairs(order);
  // An op erased early, its memory (most likely) reused by an unnotified op
  // made near the end: no stale key may survive the erasure.
  rewriter.eraseOp(all[1]);
  builder.setInsertionPoint(all[18]);
  constant(9);
  expectAllPairs(order);
}

} // namespace
