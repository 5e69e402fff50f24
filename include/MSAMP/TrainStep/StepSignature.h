//===- StepSignature.h - batched edits of a train step's signature -*- C++
//-*-===//
//
// Part of the msamp project.
//
// A function's type and its argument and result attributes are immutable,
// uniqued attributes: adding one state argument to @train_step rebuilds the
// FunctionType and the array of every argument's attributes, and a lookup
// by name reads every argument's dictionary. A pass that adds or finds state
// once per parameter or per GEMM therefore does work quadratic in the number
// of state tensors (about 0.8 s of a 24-layer GPT's msamp-compile, issue 19).
//
// A StepSignature holds the signature while a pass edits it: arguments and
// results are appended to the entry block and the return at once, their
// attributes to a list, the lookups go through indices built on first use
// and kept up to date, and the function's type and attribute arrays are
// written once, by commit() (or the destructor). While one is live, the
// function's own type and attributes are stale: read the signature through
// it (getNumArguments(), getArgName(), ...), not through the func::FuncOp
// or the free helpers of TrainStep.h, which are one-edit StepSignatures.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_STEPSIGNATURE_H
#define MSAMP_TRAINSTEP_STEPSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace mlir::msamp {

class StepSignature {
public:
  explicit StepSignature(func::FuncOp func);
  ~StepSignature() { commit(); }
  StepSignature(const StepSignature &) = delete;
  StepSignature &operator=(const StepSignature &) = delete;

  func::FuncOp getFunc() const { return func; }
  unsigned getNumArguments() const { return argAttrs.size(); }
  unsigned getNumResults() const { return resultAttrs.size(); }

  /// String-valued attributes of argument / result `index` ("" when absent).
  StringRef getArgRole(unsigned index) const;
  StringRef getArgName(unsigned index) const;
  StringRef getResultRole(unsigned index) const;
  StringRef getResultName(unsigned index) const;

  /// Index of the first argument named `name` (with role `role` unless it
  /// is empty).
  std::optional<unsigned> findArgument(StringRef name, StringRef role = "");

  /// Index of the first result carrying msamp.updates = `argIndex`.
  std::optional<unsigned> findUpdatingResult(unsigned argIndex);

  /// Appends a persistent-state argument with its role, name and
  /// initializer (none when `init` is empty).
  BlockArgument addArgument(Type type, StringRef role, StringRef name,
                            StringRef init);

  /// Appends `value` to the results (the single func.return) as the new
  /// value of argument `argIndex`: msamp.updates, role and name are copied
  /// from the argument.
  void addResult(Value value, unsigned argIndex);

  /// Replaces the value returned as the update of argument `argIndex`.
  void setResult(unsigned argIndex, Value value);

  /// Changes the type of argument `argIndex` in the entry block (the
  /// result updating it follows when its value is replaced; callers fix the
  /// uses).
  void setType(unsigned argIndex, Type type);

  /// Writes the function type and the attribute arrays if anything
  /// changed since the last commit.
  void commit();

private:
  void indexArgument(unsigned index);
  void indexResult(unsigned index);

  func::FuncOp func;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  bool typeChanged = false, argAttrsChanged = false, resultAttrsChanged = false;
  /// Built on the first lookup, then kept up to date by every append: the
  /// arguments with each name in order, and each argument's first updating
  /// result.
  std::optional<llvm::StringMap<SmallVector<unsigned, 1>>> argsByName;
  std::optional<llvm::DenseMap<unsigned, unsigned>> updatingResult;
};

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_STEPSIGNATURE_H
