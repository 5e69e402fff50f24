//===- NodeContext.cpp - what an op lowering sees of its node -------------===//

#include "NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::msamp::onnx;
using llvm::StringRef;

llvm::Error NodeContext::error(const llvm::Twine &reason) const {
  return makeError("node '" + node.name() + "' (" + node.op_type() +
                   "): " + reason);
}

llvm::Error NodeContext::requireInputs(unsigned n) const {
  for (unsigned i = 0; i < n; ++i)
    if (!hasInput(i))
      return error("input " + llvm::Twine(i) + " is required");
  return llvm::Error::success();
}

llvm::Error NodeContext::requireFloat(unsigned i) const {
  if (!isa<FloatType>(elem(i)))
    return error("input " + llvm::Twine(i) + " must be a float tensor");
  return llvm::Error::success();
}

llvm::Expected<std::vector<int64_t>> NodeContext::constInts(unsigned i) const {
  const HostTensor *t = constant(i);
  if (!t)
    return error("input " + llvm::Twine(i) + " ('" +
                 (i < unsigned(node.input_size()) ? node.input(i) : "") +
                 "') must be a constant (an initializer, a Constant node or "
                 "shape arithmetic on them)");
  return t->toInts();
}

const msamp_onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::attrInt(StringRef name, int64_t dflt) const {
  const auto *a = attr(name);
  return a && a->has_i() ? a->i() : dflt;
}

float NodeContext::attrFloat(StringRef name, float dflt) const {
  const auto *a = attr(name);
  return a && a->has_f() ? a->f() : dflt;
}

std::string NodeContext::attrString(StringRef name, StringRef dflt) const {
  const auto *a = attr(name);
  return a && a->has_s() ? a->s() : dflt.str();
}

std::optional<std::vector<int64_t>>
NodeContext::attrInts(StringRef name) const {
  const auto *a = attr(name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

llvm::Expected<int64_t> NodeContext::axis(int64_t a, int64_t rank) const {
  int64_t n = a < 0 ? a + rank : a;
  if (n < 0 || n >= rank)
    return error("axis " + llvm::Twine(a) + " is out of range for rank " +
                 llvm::Twine(rank));
  return n;
}

void NodeContext::setConstantOutput(unsigned i, HostTensor t) {
  Value v = materializeConstant(b, loc, t);
  setOutput(i, v, std::make_shared<HostTensor>(std::move(t)));
}

Type mlir::msamp::onnx::elementTypeFor(MLIRContext *ctx, int32_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case kFloat:
    return b.getF32Type();
  case kDouble:
    return b.getF64Type();
  case kFloat16:
    return b.getF16Type();
  case kBFloat16:
    return b.getBF16Type();
  case kInt64:
    return b.getI64Type();
  case kInt32:
    return b.getI32Type();
  case kInt16:
    return b.getI16Type();
  case kInt8:
    return b.getI8Type();
  case kBool:
    return b.getI1Type();
  default:
    // Unsigned types would need unsigned arithmetic throughout; FP8 inputs
    // are not part of the input contract (the compiler introduces FP8).
    return {};
  }
}

int32_t mlir::msamp::onnx::dataTypeFor(Type elem) {
  if (elem.isF32())
    return kFloat;
  if (elem.isF64())
    return kDouble;
  if (elem.isF16())
    return kFloat16;
  if (elem.isBF16())
    return kBFloat16;
  if (elem.isInteger(64))
    return kInt64;
  if (elem.isInteger(32))
    return kInt32;
  if (elem.isInteger(16))
    return kInt16;
  if (elem.isInteger(8))
    return kInt8;
  if (elem.isInteger(1))
    return kBool;
  return kUndefined;
}

Value mlir::msamp::onnx::materializeConstant(OpBuilder &b, Location loc,
                                             const HostTensor &t) {
  Type elem = elementTypeFor(b.getContext(), t.dataType);
  auto type = RankedTensorType::get(t.shape, elem);
  DenseElementsAttr attr;
  if (t.dataType == kBool) {
    // MLIR packs i1 as bits; ONNX stores one byte per bool.
    SmallVector<bool> bits;
    for (char c : t.bytes)
      bits.push_back(c != 0);
    attr = DenseElementsAttr::get(type, bits);
  } else {
    attr = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(t.bytes.data(), t.bytes.size()));
  }
  return arith::ConstantOp::create(b, loc, attr);
}
