//===- TrainStep.cpp - conventions of graphs and train steps ----*- C++ -*-===//

#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::msamp;

std::optional<OptimizerUpdate> mlir::msamp::asOptimizerUpdate(Operation *op) {
  if (auto adam = dyn_cast<AdamUpdateOp>(op))
    return OptimizerUpdate{op, adam.getParam(), adam.getGrad(),
                           adam.getGradScaleInv()};
  if (auto sgd = dyn_cast<SGDUpdateOp>(op))
    return OptimizerUpdate{op, sgd.getParam(), sgd.getGrad(),
                           sgd.getGradScaleInv()};
  return std::nullopt;
}

func::FuncOp mlir::msamp::findFunctionOfKind(ModuleOp module, StringRef kind) {
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto attr = func->getAttrOfType<StringAttr>(kKindAttr);
    if (!attr || attr.getValue() != kind)
      continue;
    if (found) {
      InFlightDiagnostic diag = func.emitError()
                                << "more than one function with msamp.kind = \""
                                << kind << "\"";
      diag.attachNote(found.getLoc()) << "the first one is here";
      return nullptr;
    }
    found = func;
  }
  return found;
}

func::FuncOp mlir::msamp::getTrainStepOrError(ModuleOp module,
                                              StringRef passName) {
  func::FuncOp func = findFunctionOfKind(module, kTrainStep);
  if (!func)
    module.emitError() << passName
                       << " needs a compiled train step (a function with "
                          "msamp.kind = \"train_step\"); run "
                          "--msamp-synthesize-train-step first";
  return func;
}

static StringRef stringAttrOrEmpty(Attribute attr) {
  if (auto str = dyn_cast_or_null<StringAttr>(attr))
    return str.getValue();
  return "";
}

std::optional<msamp_role_kind> mlir::msamp::getRoleKind(StringRef role) {
#define MSAMP_ROLE_KIND_CASE(ID, Name, spelling, kind)                         \
  if (role == spelling)                                                        \
    return MSAMP_ROLE_KIND_##kind;
  MSAMP_ROLE_LIST(MSAMP_ROLE_KIND_CASE)
#undef MSAMP_ROLE_KIND_CASE
  return std::nullopt;
}

StringRef mlir::msamp::getArgRole(func::FuncOp func, unsigned index) {
  return stringAttrOrEmpty(func.getArgAttr(index, kRoleAttr));
}
StringRef mlir::msamp::getArgName(func::FuncOp func, unsigned index) {
  return stringAttrOrEmpty(func.getArgAttr(index, kNameAttr));
}
StringRef mlir::msamp::getResultRole(func::FuncOp func, unsigned index) {
  return stringAttrOrEmpty(func.getResultAttr(index, kRoleAttr));
}
StringRef mlir::msamp::getResultName(func::FuncOp func, unsigned index) {
  return stringAttrOrEmpty(func.getResultAttr(index, kNameAttr));
}

std::optional<unsigned>
mlir::msamp::findArgument(func::FuncOp func, StringRef name, StringRef role) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (getArgName(func, i) == name &&
        (role.empty() || getArgRole(func, i) == role))
      return i;
  return std::nullopt;
}

std::optional<unsigned> mlir::msamp::findUpdatingResult(func::FuncOp func,
                                                        unsigned argIndex) {
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto attr =
        dyn_cast_or_null<IntegerAttr>(func.getResultAttr(i, kUpdatesAttr));
    if (attr && attr.getInt() == static_cast<int64_t>(argIndex))
      return i;
  }
  return std::nullopt;
}

static func::ReturnOp getReturn(func::FuncOp func) {
  return cast<func::ReturnOp>(func.getBody().front().getTerminator());
}

void mlir::msamp::updateFunctionType(func::FuncOp func) {
  Block &entry = func.getBody().front();
  func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                 getReturn(func).getOperandTypes()));
}

BlockArgument mlir::msamp::addStateArgument(func::FuncOp func, Type type,
                                            StringRef role, StringRef name,
                                            StringRef init) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  unsigned index = func.getNumArguments();
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(kRoleAttr, b.getStringAttr(role)),
      b.getNamedAttr(kNameAttr, b.getStringAttr(name))};
  if (!init.empty())
    attrs.push_back(b.getNamedAttr(kInitAttr, b.getStringAttr(init)));
  (void)func.insertArgument(index, type, b.getDictionaryAttr(attrs),
                            func.getLoc());
  return func.getArgument(index);
}

void mlir::msamp::addStateResult(func::FuncOp func, Value value,
                                 unsigned argIndex) {
  Builder b(func.getContext());
  func::ReturnOp ret = getReturn(func);
  ret->insertOperands(ret.getNumOperands(), value);
  unsigned index = func.getNumResults();
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(kRoleAttr, b.getStringAttr(getArgRole(func, argIndex))),
      b.getNamedAttr(kNameAttr, b.getStringAttr(getArgName(func, argIndex))),
      b.getNamedAttr(kUpdatesAttr, b.getI64IntegerAttr(argIndex))};
  (void)func.insertResult(index, value.getType(), b.getDictionaryAttr(attrs));
}

void mlir::msamp::setStateResult(func::FuncOp func, unsigned argIndex,
                                 Value value) {
  std::optional<unsigned> result = findUpdatingResult(func, argIndex);
  assert(result && "argument has no updating result");
  getReturn(func)->setOperand(*result, value);
  updateFunctionType(func);
}

void mlir::msamp::setStateType(func::FuncOp func, unsigned argIndex,
                               Type type) {
  func.getArgument(argIndex).setType(type);
  updateFunctionType(func);
}

std::string mlir::msamp::layerNameOf(StringRef paramName) {
  if (paramName.ends_with(".weight"))
    return paramName.drop_back(strlen(".weight")).str();
  return paramName.str();
}

RankedTensorType mlir::msamp::getScalarF32Type(MLIRContext *context) {
  return RankedTensorType::get({}, Float32Type::get(context));
}

Value mlir::msamp::getOrCreateScalarOne(func::FuncOp func) {
  Block &entry = func.getBody().front();
  auto one = DenseElementsAttr::get(getScalarF32Type(func.getContext()), 1.0f);
  for (auto constant : entry.getOps<arith::ConstantOp>()) {
    if (constant.getValue() != one)
      continue;
    constant->moveBefore(&entry, entry.begin());
    return constant;
  }
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  return arith::ConstantOp::create(b, func.getLoc(), one);
}

remark::RemarkOpts mlir::msamp::remarkOptions(StringRef pass, StringRef name) {
  return remark::RemarkOpts::name(name).category("msamp").subCategory(pass);
}

std::string mlir::msamp::describeParam(func::FuncOp func, Value param) {
  if (auto arg = dyn_cast<BlockArgument>(param))
    if (arg.getOwner() == &func.getBody().front())
      return ("'" + getArgName(func, arg.getArgNumber()) + "'").str();
  return "param";
}
