//===- TrainStep.cpp - conventions of graphs and train steps ----*- C++ -*-===//

#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/StepSignature.h"

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

// One-edit StepSignatures: the layout of the state's attributes and the
// lookups are StepSignature's.
std::optional<unsigned>
mlir::msamp::findArgument(func::FuncOp func, StringRef name, StringRef role) {
  return StepSignature(func).findArgument(name, role);
}

std::optional<unsigned> mlir::msamp::findUpdatingResult(func::FuncOp func,
                                                        unsigned argIndex) {
  return StepSignature(func).findUpdatingResult(argIndex);
}

void mlir::msamp::updateFunctionType(func::FuncOp func) {
  Block &entry = func.getBody().front();
  func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                 entry.getTerminator()->getOperandTypes()));
}

BlockArgument mlir::msamp::addStateArgument(func::FuncOp func, Type type,
                                            StringRef role, StringRef name,
                                            StringRef init) {
  return StepSignature(func).addArgument(type, role, name, init);
}

void mlir::msamp::addStateResult(func::FuncOp func, Value value,
                                 unsigned argIndex) {
  StepSignature(func).addResult(value, argIndex);
}

void mlir::msamp::setStateResult(func::FuncOp func, unsigned argIndex,
                                 Value value) {
  StepSignature(func).setResult(argIndex, value);
}

void mlir::msamp::setStateType(func::FuncOp func, unsigned argIndex,
                               Type type) {
  StepSignature(func).setType(argIndex, type);
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
