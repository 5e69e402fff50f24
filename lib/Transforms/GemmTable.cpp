//===- GemmTable.cpp - the GEMMs of a compiled train step -------*- C++ -*-===//
//
// A GEMM is any op that --msamp-classify-gemms tagged with `msamp.gemm`
// (the dictionary survives the level's rewrites): an `msamp.gemm` op runs as
// a runtime GEMM on its operands' element types (FP8 at O1-O3 and te, 16 bit
// at the AMP levels); a linalg op that still carries the tag stayed in high
// precision, for the reason its `why` key gives. At O0 nothing decides:
// every GEMM is f32 by the level.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/GemmTable.h"

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/RecipeEnums.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::msamp;

void mlir::msamp::recordGemmKeptReason(Operation *op, StringRef why) {
  // Only classified GEMMs are in the table; another contraction has no entry
  // to explain.
  auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr);
  if (!info)
    return;
  Builder b(op->getContext());
  NamedAttrList entries(info.getValue());
  entries.set(kGemmWhyKey, b.getStringAttr(why));
  op->setAttr(kGemmAttr, entries.getDictionary(op->getContext()));
}

/// The MLIR spelling of the element type of `value` ("f8E4M3FN"), or "?".
static std::string elementTypeOf(Value value) {
  Type type = value.getType();
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

namespace {
struct GemmEntry {
  std::string lhs = "?", rhs = "?", out = "?";
};
} // namespace

static GemmEntry operandTypes(Operation *op) {
  GemmEntry types;
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    types.lhs = elementTypeOf(gemm.getA());
    types.rhs = elementTypeOf(gemm.getB());
  } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    auto inputs = linalgOp.getDpsInputs();
    if (!inputs.empty())
      types.lhs = elementTypeOf(inputs[0]);
    if (inputs.size() > 1)
      types.rhs = elementTypeOf(inputs[1]);
  }
  if (op->getNumResults())
    types.out = elementTypeOf(op->getResult(0));
  return types;
}

void mlir::msamp::printGemmTableJSON(func::FuncOp func, llvm::raw_ostream &os) {
  auto level = func->getAttrOfType<StringAttr>(kLevelAttr);
  StringRef levelName = level ? level.getValue() : "";
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("level", levelName);
    json.attributeArray("gemms", [&] {
      func.walk([&](Operation *op) {
        auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr);
        if (!info)
          return;
        auto text = [&](StringRef key) {
          auto attr = info.getAs<StringAttr>(key);
          return attr ? attr.getValue().str() : std::string();
        };
        GemmEntry types = operandTypes(op);
        const bool runtimeGemm = isa<GemmOp>(op);
        const bool fp8 = runtimeGemm && StringRef(types.lhs).starts_with("f8");
        std::string why = text(kGemmWhyKey);
        if (!runtimeGemm && why.empty() &&
            levelName == stringifyEnum(TrainStepLevel::O0))
          why = "level O0 runs every GEMM in f32";
        // One entry per line: readable, and easy to grep in tests.
        json.rawValue([&](llvm::raw_ostream &line) {
          llvm::json::OStream entry(line);
          entry.object([&] {
            entry.attribute("kind", text("kind"));
            entry.attribute("layer", text("layer"));
            entry.attribute("weight", text("weight"));
            entry.attribute("op", op->getName().getStringRef());
            entry.attribute("fp8", fp8);
            entry.attribute("lhs", types.lhs);
            entry.attribute("rhs", types.rhs);
            entry.attribute("out", types.out);
            entry.attribute("why", why);
          });
        });
      });
    });
  });
  os << "\n";
}
