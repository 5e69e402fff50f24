//===- StepSignature.cpp - batched edits of a train step's signature ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::msamp;

static func::ReturnOp getReturn(func::FuncOp func) {
  return cast<func::ReturnOp>(func.getBody().front().getTerminator());
}

static StringRef stringOf(DictionaryAttr attrs, StringRef name) {
  if (!attrs)
    return "";
  if (auto str = attrs.getAs<StringAttr>(name))
    return str.getValue();
  return "";
}

StepSignature::StepSignature(func::FuncOp func) : func(func) {
  argAttrs.reserve(func.getNumArguments());
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    argAttrs.push_back(func.getArgAttrDict(i));
  resultAttrs.reserve(func.getNumResults());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    resultAttrs.push_back(func.getResultAttrDict(i));
}

StringRef StepSignature::getArgRole(unsigned index) const {
  return stringOf(argAttrs[index], kRoleAttr);
}
StringRef StepSignature::getArgName(unsigned index) const {
  return stringOf(argAttrs[index], kNameAttr);
}
StringRef StepSignature::getResultRole(unsigned index) const {
  return stringOf(resultAttrs[index], kRoleAttr);
}
StringRef StepSignature::getResultName(unsigned index) const {
  return stringOf(resultAttrs[index], kNameAttr);
}

void StepSignature::indexArgument(unsigned index) {
  (*argsByName)[getArgName(index)].push_back(index);
}

void StepSignature::indexResult(unsigned index) {
  DictionaryAttr attrs = resultAttrs[index];
  auto updates = attrs ? attrs.getAs<IntegerAttr>(kUpdatesAttr) : nullptr;
  // Negative or too-large indices are the verifier's to report; they update
  // no argument.
  if (updates && updates.getInt() >= 0 &&
      updates.getInt() <= std::numeric_limits<unsigned>::max())
    updatingResult->try_emplace(static_cast<unsigned>(updates.getInt()), index);
}

std::optional<unsigned> StepSignature::findArgument(StringRef name,
                                                    StringRef role) {
  if (!argsByName) {
    argsByName.emplace();
    for (unsigned i = 0, e = argAttrs.size(); i < e; ++i)
      indexArgument(i);
  }
  auto it = argsByName->find(name);
  if (it == argsByName->end())
    return std::nullopt;
  for (unsigned index : it->second)
    if (role.empty() || getArgRole(index) == role)
      return index;
  return std::nullopt;
}

std::optional<unsigned> StepSignature::findUpdatingResult(unsigned argIndex) {
  if (!updatingResult) {
    updatingResult.emplace();
    for (unsigned i = 0, e = resultAttrs.size(); i < e; ++i)
      indexResult(i);
  }
  auto it = updatingResult->find(argIndex);
  if (it == updatingResult->end())
    return std::nullopt;
  return it->second;
}

BlockArgument StepSignature::addArgument(Type type, StringRef role,
                                         StringRef name, StringRef init) {
  Builder b(func.getContext());
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(kRoleAttr, b.getStringAttr(role)),
      b.getNamedAttr(kNameAttr, b.getStringAttr(name))};
  if (!init.empty())
    attrs.push_back(b.getNamedAttr(kInitAttr, b.getStringAttr(init)));
  argAttrs.push_back(b.getDictionaryAttr(attrs));
  argAttrsChanged = typeChanged = true;
  if (argsByName)
    indexArgument(argAttrs.size() - 1);
  return func.getBody().front().addArgument(type, func.getLoc());
}

void StepSignature::addResult(Value value, unsigned argIndex) {
  Builder b(func.getContext());
  func::ReturnOp ret = getReturn(func);
  ret->insertOperands(ret.getNumOperands(), value);
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(kRoleAttr, b.getStringAttr(getArgRole(argIndex))),
      b.getNamedAttr(kNameAttr, b.getStringAttr(getArgName(argIndex))),
      b.getNamedAttr(kUpdatesAttr, b.getI64IntegerAttr(argIndex))};
  resultAttrs.push_back(b.getDictionaryAttr(attrs));
  resultAttrsChanged = typeChanged = true;
  if (updatingResult)
    indexResult(resultAttrs.size() - 1);
}

void StepSignature::setResult(unsigned argIndex, Value value) {
  std::optional<unsigned> result = findUpdatingResult(argIndex);
  assert(result && "argument has no updating result");
  getReturn(func)->setOperand(*result, value);
  typeChanged = true;
}

void StepSignature::setType(unsigned argIndex, Type type) {
  func.getArgument(argIndex).setType(type);
  typeChanged = true;
}

void StepSignature::commit() {
  if (typeChanged)
    updateFunctionType(func);
  if (argAttrsChanged)
    func.setAllArgAttrs(argAttrs);
  if (resultAttrsChanged)
    func.setAllResultAttrs(resultAttrs);
  typeChanged = argAttrsChanged = resultAttrsChanged = false;
}
