//===- StepSignatureTest.cpp - batched edits of a step's signature --------===//
//
// Part of the msamp project. StepSignature (lib/TrainStep) appends state
// arguments and results without rebuilding the signature per edit and
// answers lookups from indices it keeps up to date; after commit() the
// function must be exactly what MLIR's one-at-a-time insertArgument /
// insertResult make of the same edits, and every lookup, before and after
// the index is built, must be the first match a scan of the attributes
// finds.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace mlir::msamp;

namespace {

class StepSignatureTest : public ::testing::Test {
protected:
  StepSignatureTest() : b(&context) {
    context.loadDialect<arith::ArithDialect, func::FuncDialect>();
    module = ModuleOp::create(b.getUnknownLoc());
  }

  /// A step with arguments "w" (param), "w" (opt_state: a name used twice),
  /// "x" (input), one without attributes, and the loss and "w"'s update as
  /// results.
  func::FuncOp makeStep(StringRef symbol) {
    b.setInsertionPointToEnd(module->getBody());
    Type f32 = getScalarF32Type(&context);
    auto func = func::FuncOp::create(
        b, b.getUnknownLoc(), symbol,
        b.getFunctionType({f32, f32, f32, f32}, {f32, f32}));
    Block *entry = func.addEntryBlock();
    auto dict = [&](StringRef role, StringRef name) {
      return b.getDictionaryAttr(
          {b.getNamedAttr(kRoleAttr, b.getStringAttr(role)),
           b.getNamedAttr(kNameAttr, b.getStringAttr(name))});
    };
    func.setArgAttrs(0, dict(kRoleParam, "w"));
    func.setArgAttrs(1, dict(kRoleOptState, "w"));
    func.setArgAttrs(2, dict(kRoleInput, "x"));
    func.setResultAttr(0, kRoleAttr, b.getStringAttr(kRoleLoss));
    func.setResultAttrs(
        1, b.getDictionaryAttr(
               {b.getNamedAttr(kRoleAttr, b.getStringAttr(kRoleParam)),
                b.getNamedAttr(kNameAttr, b.getStringAttr("w")),
                b.getNamedAttr(kUpdatesAttr, b.getI64IntegerAttr(0))}));
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(
        b, b.getUnknownLoc(),
        ValueRange{entry->getArgument(2), entry->getArgument(0)});
    return func;
  }

  /// The first argument a scan finds (the lookup's definition).
  static std::optional<unsigned> scanArgument(func::FuncOp func, StringRef name,
                                              StringRef role) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (getArgName(func, i) == name &&
          (role.empty() || getArgRole(func, i) == role))
        return i;
    return std::nullopt;
  }
  static std::optional<unsigned> scanUpdatingResult(func::FuncOp func,
                                                    unsigned arg) {
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto updates = func.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr))
        if (updates.getInt() == static_cast<int64_t>(arg))
          return i;
    return std::nullopt;
  }

  MLIRContext context;
  OpBuilder b;
  OwningOpRef<ModuleOp> module;
};

/// Random edits applied to two copies of a step: to one through MLIR's
/// insertArgument / insertResult one at a time, to the other through one
/// StepSignature, committed at the end. The functions must then be the same.
TEST_F(StepSignatureTest, BatchedEditsEqualOneAtATimeEdits) {
  func::FuncOp expected = makeStep("expected");
  func::FuncOp batched = makeStep("batched");
  std::mt19937 rng(19);
  Type f32 = getScalarF32Type(&context);
  Type f16 = RankedTensorType::get({}, b.getF16Type());
  Type history = RankedTensorType::get({4}, b.getF32Type());
  auto ret = [](func::FuncOp f) {
    return cast<func::ReturnOp>(f.getBody().front().getTerminator());
  };
  {
    StepSignature signature(batched);
    for (int edit = 0; edit < 200; ++edit) {
      unsigned numArgs = expected.getNumArguments();
      ASSERT_EQ(signature.getNumArguments(), numArgs);
      ASSERT_EQ(signature.getNumResults(), expected.getNumResults());
      switch (rng() % 4) {
      case 0: { // a new state argument, sometimes without an initializer
        std::string name = "s" + std::to_string(rng() % 50);
        StringRef init = rng() % 2 ? StringRef(kInitOnes) : StringRef();
        Type type = rng() % 2 ? f32 : history;
        SmallVector<NamedAttribute> attrs = {
            b.getNamedAttr(kRoleAttr, b.getStringAttr(kRoleScalingState)),
            b.getNamedAttr(kNameAttr, b.getStringAttr(name))};
        if (!init.empty())
          attrs.push_back(b.getNamedAttr(kInitAttr, b.getStringAttr(init)));
        ASSERT_TRUE(succeeded(expected.insertArgument(
            numArgs, type, b.getDictionaryAttr(attrs), expected.getLoc())));
        BlockArgument arg =
            signature.addArgument(type, kRoleScalingState, name, init);
        EXPECT_EQ(arg.getArgNumber(), numArgs);
        break;
      }
      case 1: { // a new result updating a random argument
        unsigned arg = rng() % numArgs;
        Value value = expected.getArgument(rng() % numArgs);
        ret(expected)->insertOperands(ret(expected).getNumOperands(), value);
        ASSERT_TRUE(succeeded(expected.insertResult(
            expected.getNumResults(), value.getType(),
            b.getDictionaryAttr(
                {b.getNamedAttr(kRoleAttr,
                                b.getStringAttr(getArgRole(expected, arg))),
                 b.getNamedAttr(kNameAttr,
                                b.getStringAttr(getArgName(expected, arg))),
                 b.getNamedAttr(kUpdatesAttr, b.getI64IntegerAttr(arg))}))));
        signature.addResult(
            batched.getArgument(cast<BlockArgument>(value).getArgNumber()),
            arg);
        break;
      }
      case 2: { // a new type for an argument (the update's type follows)
        unsigned arg = rng() % numArgs;
        if (expected.getArgument(arg).getType() != f32)
          break;
        expected.getArgument(arg).setType(f16);
        updateFunctionType(expected);
        signature.setType(arg, f16);
        break;
      }
      case 3: { // a new value for an argument's update
        unsigned arg = rng() % numArgs;
        std::optional<unsigned> result = scanUpdatingResult(expected, arg);
        ASSERT_EQ(signature.findUpdatingResult(arg), result);
        if (!result)
          break;
        unsigned from = rng() % numArgs;
        ret(expected)->setOperand(*result, expected.getArgument(from));
        updateFunctionType(expected);
        signature.setResult(arg, batched.getArgument(from));
        break;
      }
      }
      // Every lookup agrees with a scan of the one-at-a-time function.
      for (int name = 0; name < 50; ++name) {
        std::string s = "s" + std::to_string(name);
        ASSERT_EQ(signature.findArgument(s), scanArgument(expected, s, ""));
      }
      ASSERT_EQ(signature.findArgument("w", kRoleOptState), 1u);
      ASSERT_EQ(signature.findArgument("w"), 0u);
      ASSERT_EQ(signature.findArgument("x", kRoleParam), std::nullopt);
    }
  }
  // Committed by the destructor.
  EXPECT_EQ(batched.getFunctionType(), expected.getFunctionType());
  EXPECT_EQ(batched.getArgAttrsAttr(), expected.getArgAttrsAttr());
  EXPECT_EQ(batched.getResAttrsAttr(), expected.getResAttrsAttr());
  for (unsigned i = 0, e = expected.getNumResults(); i < e; ++i) {
    auto returned = [&](func::FuncOp f) {
      return cast<BlockArgument>(ret(f).getOperand(i)).getArgNumber();
    };
    EXPECT_EQ(returned(batched), returned(expected)) << "result " << i;
  }
  EXPECT_TRUE(succeeded(verify(*module)));
}

/// Until commit() the function keeps its old signature (the documented
/// contract: read it through the StepSignature); commit() writes it once,
/// and a commit with nothing new changes nothing.
TEST_F(StepSignatureTest, CommitWritesTheSignature) {
  func::FuncOp step = makeStep("step");
  FunctionType before = step.getFunctionType();
  StepSignature signature(step);
  // The index is built before the edit, then kept up to date.
  EXPECT_EQ(signature.findArgument("w.scale"), std::nullopt);
  EXPECT_EQ(signature.findUpdatingResult(4), std::nullopt);
  BlockArgument scale = signature.addArgument(
      getScalarF32Type(&context), kRoleScalingState, "w.scale", kInitOnes);
  signature.addResult(scale, scale.getArgNumber());
  EXPECT_EQ(signature.findArgument("w.scale", kRoleScalingState), 4u);
  EXPECT_EQ(signature.findUpdatingResult(4), 2u);
  EXPECT_EQ(signature.getResultName(2), "w.scale");
  EXPECT_EQ(signature.getResultRole(2), kRoleScalingState);
  EXPECT_EQ(step.getFunctionType(), before);
  signature.commit();
  EXPECT_EQ(step.getNumArguments(), 5u);
  EXPECT_EQ(step.getNumResults(), 3u);
  EXPECT_EQ(getArgName(step, 4), "w.scale");
  EXPECT_EQ(step.getArgAttrOfType<StringAttr>(4, kInitAttr).getValue(),
            kInitOnes);
  EXPECT_EQ(findUpdatingResult(step, 4), 2u);
  ArrayAttr argAttrs = step.getArgAttrsAttr();
  signature.commit();
  EXPECT_EQ(step.getArgAttrsAttr(), argAttrs);
  EXPECT_TRUE(succeeded(verify(*module)));
}

} // namespace
