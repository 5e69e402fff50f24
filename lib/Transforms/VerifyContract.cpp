//===- VerifyContract.cpp - check the input contract ------------*- C++ -*-===//
//
// The first pass of every pipeline. Every later pass assumes the contract of
// docs/Interfaces.md 1 (one forward_backward function, named and typed roles,
// static shapes, upstream dialects only), so this pass turns each violation
// into a located error that says what was found and what was expected,
// instead of letting a later pass crash or miscompile. It reports every
// violation it can find in one run, and changes nothing in a valid module
// except erasing `cf.assert` (a runtime check that the compiled step does not
// carry, dropped with a remark).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/ParamGroups.h"
#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/TorchRandom.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPVERIFYCONTRACT
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

// The dialects of the input contract. `builtin` is the module itself.
constexpr StringLiteral kAllowedDialects[] = {"builtin", "func",  "linalg",
                                              "tensor",  "arith", "math",
                                              "scf",     "shard", "ml_program"};
constexpr StringLiteral kAllowedDialectList =
    "builtin, func, linalg, tensor, arith, math, scf, shard, ml_program";

constexpr StringLiteral kArgRoles[] = {kRoleParam, kRoleBuffer, kRoleInput,
                                       kRoleTarget};
constexpr StringLiteral kArgRoleList =
    "\"param\", \"buffer\", \"input\", \"target\"";
constexpr StringLiteral kResultRoleList = "\"loss\", \"grad\", \"buffer\"";

// Function kinds an exporter or the compiler writes.
constexpr StringLiteral kForward = "forward";

constexpr StringLiteral kOptimizerKeyList =
    "kind, lr, beta1, beta2, eps, weight_decay, momentum, nesterov, adam_mode";

constexpr StringLiteral kDynamicShapeHint =
    "dynamic shapes are outside the contract: export the graph with static "
    "shapes (a fixed batch size and sequence length)";

/// The location of argument `index`: the argument's own location when the
/// parser recorded one, else the function's.
Location argLoc(func::FuncOp func, unsigned index) {
  Location loc = func.getArgument(index).getLoc();
  if (isa<UnknownLoc>(loc))
    return func.getLoc();
  return loc;
}

/// `argument #2 ("fc2.weight")`, or `argument #2` when it has no name.
std::string describeArg(func::FuncOp func, unsigned index) {
  std::string s = "argument #" + std::to_string(index);
  StringRef name = getArgName(func, index);
  if (!name.empty())
    s += " (\"" + name.str() + "\")";
  return s;
}

std::string describeResult(func::FuncOp func, unsigned index) {
  std::string s = "result #" + std::to_string(index);
  StringRef name = getResultName(func, index);
  if (!name.empty())
    s += " (\"" + name.str() + "\")";
  return s;
}

/// Why `type` is not a static-shaped ranked tensor, or "" when it is one.
std::string shapeProblem(Type type) {
  auto tensor = dyn_cast<TensorType>(type);
  if (!tensor)
    return "";
  if (!tensor.hasRank())
    return "an unranked shape";
  if (!tensor.hasStaticShape())
    return "a dynamic shape";
  return "";
}

class ContractChecker {
public:
  explicit ContractChecker(ModuleOp module) : module(module) {}

  /// Runs every check; returns failure when any violation was reported.
  LogicalResult run() {
    checkDialectsAndCalls();
    // ml_program only as torch-mlir's dropout seed (docs/Interfaces.md 1).
    if (::mlir::failed(verifyTorchSeedGlobals(module)))
      failed = true;
    SmallVector<func::FuncOp> graphs = checkFunctionKinds();
    for (func::FuncOp func : graphs) {
      if (func.isExternal()) {
        error(func.getLoc())
            << "forward_backward function @" << func.getSymName()
            << " is only a declaration; the contract needs its body";
        continue;
      }
      checkArguments(func);
      checkResults(func);
      checkShapesInBody(func);
      if (::mlir::failed(matchTorchRandomness(func)))
        failed = true;
    }
    checkOptimizer();
    dropAsserts();
    return failure(failed);
  }

private:
  InFlightDiagnostic error(Location loc) {
    failed = true;
    return emitError(loc);
  }

  /// Dialects of every op of the module, and calls that cannot be inlined.
  void checkDialectsAndCalls() {
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == module.getOperation())
        return WalkResult::advance();
      if (op->getName().getStringRef() == "cf.assert") {
        asserts.push_back(op);
        return WalkResult::advance();
      }
      StringRef dialect = op->getName().getDialectNamespace();
      if (!llvm::is_contained(kAllowedDialects, dialect)) {
        error(op->getLoc())
            << "'" << op->getName() << "' is from dialect '" << dialect
            << "', which is outside the input contract; "
               "allowed dialects: "
            << kAllowedDialectList;
        // Its nested ops would only repeat the same complaint.
        return WalkResult::skip();
      }
      if (auto call = dyn_cast<func::CallOp>(op))
        checkCall(call);
      else if (isa<func::CallIndirectOp>(op))
        error(op->getLoc()) << "indirect calls are outside the input contract: "
                               "every call must name a function defined in "
                               "the module (the compiler inlines it)";
      return WalkResult::advance();
    });
  }

  void checkCall(func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee) {
      error(call.getLoc()) << "calls @" << call.getCallee()
                           << ", which is not a func.func of the module";
      return;
    }
    if (callee.isExternal())
      error(call.getLoc())
          << "calls @" << call.getCallee()
          << ", which is only declared in the module; every called function "
             "must be defined in the module (the compiler inlines it)";
  }

  /// msamp.kind of every function: exactly one forward_backward, no compiled
  /// train step. Returns the forward_backward functions found.
  SmallVector<func::FuncOp> checkFunctionKinds() {
    SmallVector<func::FuncOp> graphs;
    bool compiled = false;
    func::FuncOp forwardOnly;
    for (auto func : module.getOps<func::FuncOp>()) {
      Attribute kindAttr = func->getAttr(kKindAttr);
      auto kind = dyn_cast_or_null<StringAttr>(kindAttr);
      if (kindAttr && !kind) {
        error(func.getLoc()) << "msamp.kind of @" << func.getSymName()
                             << " must be a string; got " << kindAttr;
        continue;
      }
      if (kind && kind.getValue() == kTrainStep) {
        error(func.getLoc())
            << "module is already compiled: @" << func.getSymName()
            << " has msamp.kind = \"train_step\"; --msamp-verify-contract "
               "and the --msamp-o* pipelines take a training graph with a "
               "msamp.kind = \"forward_backward\" function, not a compiled "
               "step";
        compiled = true;
        continue;
      }
      if (kind && kind.getValue() == kForwardBackward) {
        if (!graphs.empty()) {
          InFlightDiagnostic diag = error(func.getLoc());
          diag << "more than one function with msamp.kind = "
                  "\"forward_backward\" (@"
               << func.getSymName() << "); the contract allows one";
          diag.attachNote(graphs.front().getLoc())
              << "the first one, @" << graphs.front().getSymName()
              << ", is here";
          continue;
        }
        graphs.push_back(func);
        continue;
      }
      if (kind && kind.getValue() == kForward) {
        forwardOnly = func;
      } else if (kind) {
        error(func.getLoc()) << "unknown msamp.kind \"" << kind.getValue()
                             << "\" on @" << func.getSymName()
                             << "; expected \"forward_backward\" (a training "
                                "graph), \"forward\" or \"train_step\"";
      }
      if (func.getSymName() == kTrainStepName)
        error(func.getLoc())
            << "a function named @train_step already exists; the compiler "
               "creates @train_step from the forward_backward function: "
               "rename this one";
    }
    if (graphs.empty() && !compiled) {
      InFlightDiagnostic diag = error(module.getLoc());
      diag << "no function with msamp.kind = \"forward_backward\"; mark the "
              "joint forward+backward function with "
              "`attributes {msamp.kind = \"forward_backward\"}`";
      if (forwardOnly)
        diag.attachNote(forwardOnly.getLoc())
            << "@" << forwardOnly.getSymName()
            << " is a forward-only graph (msamp.kind = \"forward\"): it can "
               "be evaluated but not compiled into a train step";
    }
    return graphs;
  }

  /// Roles, names and types of the arguments.
  void checkArguments(func::FuncOp func) {
    llvm::StringMap<unsigned> firstUse;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      Location loc = argLoc(func, i);
      std::string what = describeArg(func, i);

      Attribute roleAttr = func.getArgAttr(i, kRoleAttr);
      auto role = dyn_cast_or_null<StringAttr>(roleAttr);
      if (!roleAttr)
        error(loc) << what << " has no msamp.role; expected one of "
                   << kArgRoleList;
      else if (!role)
        error(loc) << what << " has msamp.role = " << roleAttr
                   << "; expected a string, one of " << kArgRoleList;
      else if (!llvm::is_contained(kArgRoles, role.getValue()))
        error(loc) << what << " has unknown msamp.role \"" << role.getValue()
                   << "\"; expected one of " << kArgRoleList;

      Attribute nameAttr = func.getArgAttr(i, kNameAttr);
      auto name = dyn_cast_or_null<StringAttr>(nameAttr);
      if (!nameAttr) {
        error(loc) << what
                   << " has no msamp.name; every argument needs a unique "
                      "name (e.g. msamp.name = \"fc1.weight\")";
      } else if (!name || name.getValue().empty()) {
        error(loc) << what << " has msamp.name = " << nameAttr
                   << "; expected a non-empty string";
      } else {
        auto [it, inserted] = firstUse.try_emplace(name.getValue(), i);
        if (!inserted) {
          InFlightDiagnostic diag = error(loc);
          diag << what << " has the duplicate msamp.name \"" << name.getValue()
               << "\"; names must be unique";
          diag.attachNote(argLoc(func, it->second))
              << "first used by argument #" << it->second;
        }
      }

      checkArgumentType(func, i, role ? role.getValue() : "");
      checkParamGroup(func, i, role ? role.getValue() : "");
    }
  }

  /// Per-param optimizer overrides (ParamGroups.h): f64 numbers >= 0, on
  /// params only.
  void checkParamGroup(func::FuncOp func, unsigned i, StringRef role) {
    for (StringRef attrName : {kWeightDecayAttr, kLrScaleAttr}) {
      Attribute attr = func.getArgAttr(i, attrName);
      if (!attr)
        continue;
      Location loc = argLoc(func, i);
      std::string what = describeArg(func, i);
      if (role != kRoleParam) {
        error(loc) << what << " (" << role << ") has " << attrName
                   << "; only params have optimizer settings";
        continue;
      }
      auto number = dyn_cast<FloatAttr>(attr);
      if (!number || !number.getType().isF64()) {
        error(loc) << what << " has " << attrName << " = " << attr
                   << "; expected an f64 number (e.g. " << attrName
                   << " = 0.0 : f64)";
        continue;
      }
      double value = number.getValueAsDouble();
      if (!std::isfinite(value) || value < 0)
        error(loc) << what << " has " << attrName << " = " << value
                   << "; expected a finite number >= 0";
    }
  }

  void checkArgumentType(func::FuncOp func, unsigned i, StringRef role) {
    Type type = func.getArgumentTypes()[i];
    Location loc = argLoc(func, i);
    std::string what = describeArg(func, i);
    if (!isa<TensorType>(type)) {
      error(loc) << what << " has type " << type
                 << "; arguments must be ranked tensors (tensor semantics)";
      return;
    }
    std::string problem = shapeProblem(type);
    if (!problem.empty()) {
      error(loc) << what << " has type " << type << " with " << problem << "; "
                 << kDynamicShapeHint;
      return;
    }
    // A batch of 0 samples would train on nothing with loss 0; a param of
    // 0 elements has no use either.
    if (llvm::is_contained(cast<TensorType>(type).getShape(), 0)) {
      error(loc) << what << " has type " << type
                 << " with a dimension of size 0; every dimension must be at "
                    "least 1 (an empty batch trains on nothing)";
      return;
    }
    Type element = cast<TensorType>(type).getElementType();
    if (role == kRoleParam && !element.isF32())
      error(loc) << what << " (" << role << ") has type " << type
                 << "; params must be f32 tensors";
    // Buffers are not trained: integer ones (position ids, masks, counters)
    // are carried as they are.
    if (role == kRoleBuffer && !element.isF32() &&
        !element.isSignlessInteger(64) && !element.isSignlessInteger(32) &&
        !element.isSignlessInteger(1))
      error(loc) << what << " (" << role << ") has type " << type
                 << "; buffers must be f32, i64, i32 or i1 tensors";
    if ((role == kRoleInput || role == kRoleTarget) && !element.isF32() &&
        !element.isSignlessInteger(32) && !element.isSignlessInteger(64))
      error(loc) << what << " (" << role << ") has type " << type
                 << "; inputs and targets must be f32, i32 or i64 tensors";
  }

  /// The loss, one gradient per param, updated buffers.
  void checkResults(func::FuncOp func) {
    Location loc = func.getLoc();
    std::optional<unsigned> loss;
    llvm::StringMap<unsigned> gradOf, bufferOf;
    // One index of the arguments by name: a lookup per result, not a scan
    // (quadratic in depth: 60 ms at 48 layers).
    StepSignature signature(func);
    ArrayRef<Type> types = func.getResultTypes();
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      std::string what = describeResult(func, i);
      Type type = types[i];
      std::string problem = shapeProblem(type);
      // A result already reported for its type is not compared again below.
      bool badType = !isa<TensorType>(type) || !problem.empty();
      if (!isa<TensorType>(type))
        error(loc) << what << " has type " << type
                   << "; results must be ranked tensors (tensor semantics)";
      else if (!problem.empty())
        error(loc) << what << " has type " << type << " with " << problem
                   << "; " << kDynamicShapeHint;

      Attribute roleAttr = func.getResultAttr(i, kRoleAttr);
      auto role = dyn_cast_or_null<StringAttr>(roleAttr);
      if (!roleAttr) {
        error(loc) << what << " has no msamp.role; expected one of "
                   << kResultRoleList;
        continue;
      }
      if (!role) {
        error(loc) << what << " has msamp.role = " << roleAttr
                   << "; expected a string, one of " << kResultRoleList;
        continue;
      }
      StringRef roleName = role.getValue();
      if (roleName == kRoleLoss) {
        if (loss)
          error(loc) << "more than one loss result: results #" << *loss
                     << " and #" << i << " both have msamp.role = \"loss\"";
        else
          loss = i;
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (!tensor || tensor.getRank() != 0 ||
            !tensor.getElementType().isF32())
          error(loc) << "loss " << what << " has type " << type
                     << "; expected tensor<f32> (a 0-d f32 tensor: the mean "
                        "loss over the batch)";
        continue;
      }
      if (roleName != kRoleGrad && roleName != kRoleBuffer) {
        error(loc) << what << " has unknown msamp.role \"" << roleName
                   << "\"; expected one of " << kResultRoleList;
        continue;
      }
      // grad and buffer results name the argument they belong to.
      bool isGrad = roleName == kRoleGrad;
      StringRef argRole = isGrad ? kRoleParam : kRoleBuffer;
      StringRef name = getResultName(func, i);
      if (name.empty()) {
        error(loc) << roleName << " " << what
                   << " has no msamp.name; expected the name of its "
                   << argRole;
        continue;
      }
      std::optional<unsigned> arg = signature.findArgument(name, argRole);
      if (!arg) {
        InFlightDiagnostic diag = error(loc);
        diag << roleName << " " << what << " names \"" << name
             << "\", which matches no " << argRole << " argument";
        if (std::optional<unsigned> other = signature.findArgument(name))
          diag << " (argument #" << *other << " \"" << name
               << "\" has msamp.role \"" << getArgRole(func, *other) << "\")";
        continue;
      }
      llvm::StringMap<unsigned> &seen = isGrad ? gradOf : bufferOf;
      auto [it, inserted] = seen.try_emplace(name, i);
      if (!inserted)
        error(loc) << "duplicate " << roleName << " result for " << argRole
                   << " \"" << name << "\": results #" << it->second << " and #"
                   << i;
      Type argType = func.getArgumentTypes()[*arg];
      if (!badType && type != argType)
        error(loc) << roleName << " " << what << " has type " << type
                   << "; expected the type of " << argRole << " argument #"
                   << *arg << ", " << argType;
    }

    if (!loss)
      error(loc) << "forward_backward function @" << func.getSymName()
                 << " has no loss result; expected one result with "
                    "msamp.role = \"loss\" of type tensor<f32>";
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      if (getArgRole(func, i) != kRoleParam)
        continue;
      StringRef name = getArgName(func, i);
      if (name.empty() || gradOf.count(name))
        continue;
      error(argLoc(func, i))
          << "param " << describeArg(func, i)
          << " has no gradient result; expected a result with msamp.role = "
             "\"grad\", msamp.name = \""
          << name << "\" (a tensor that is not trained is a \"buffer\")";
    }
  }

  /// Static shapes on every op result of the function and of the functions
  /// it calls (they are inlined into the step).
  void checkShapesInBody(func::FuncOp func) {
    llvm::SetVector<func::FuncOp> bodies;
    bodies.insert(func);
    for (unsigned next = 0; next < bodies.size(); ++next) {
      func::FuncOp current = bodies[next];
      current.walk([&](func::CallOp call) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (callee && !callee.isExternal())
          bodies.insert(callee);
      });
    }
    for (func::FuncOp body : bodies) {
      body.walk([&](Operation *op) {
        for (OpResult result : op->getResults()) {
          std::string problem = shapeProblem(result.getType());
          if (problem.empty())
            continue;
          error(op->getLoc())
              << "result #" << result.getResultNumber() << " of '"
              << op->getName() << "' has type " << result.getType() << " with "
              << problem << "; " << kDynamicShapeHint;
          break;
        }
      });
    }
  }

  /// The module's msamp.optimizer dictionary (docs/Interfaces.md 1).
  void checkOptimizer() {
    Attribute attr = module->getAttr(kOptimizerAttr);
    if (!attr)
      return; // AdamW with the default hyperparameters.
    Location loc = module.getLoc();
    auto dict = dyn_cast<DictionaryAttr>(attr);
    if (!dict) {
      error(loc) << "msamp.optimizer must be a dictionary such as "
                    "{kind = \"adamw\", lr = 1.0e-03 : f64}; got "
                 << attr;
      return;
    }
    std::optional<double> momentum;
    bool nesterov = false;
    for (NamedAttribute entry : dict) {
      StringRef key = entry.getName().getValue();
      Attribute value = entry.getValue();
      if (key == "kind") {
        auto kind = dyn_cast<StringAttr>(value);
        // The empty spelling is the pass option's "keep", not a kind.
        if (!kind || kind.getValue().empty() ||
            !symbolizeOptimizerKind(kind.getValue()))
          error(loc) << "msamp.optimizer kind must be one of \"sgd\", "
                        "\"adam\", \"adamw\"; got "
                     << value;
        continue;
      }
      if (key == "nesterov") {
        auto flag = dyn_cast<BoolAttr>(value);
        if (!flag)
          error(loc) << "msamp.optimizer nesterov must be a bool (true or "
                        "false); got "
                     << value;
        else
          nesterov = flag.getValue();
        continue;
      }
      if (key == "adam_mode") {
        auto mode = dyn_cast<IntegerAttr>(value);
        if (!mode || isa<BoolAttr>(value) ||
            (mode.getValue() != 0 && mode.getValue() != 1))
          error(loc) << "msamp.optimizer adam_mode must be the integer 0 "
                        "(PyTorch AdamW) or 1 (Hugging Face / ONNX Runtime "
                        "mode 1); got "
                     << value;
        continue;
      }
      if (!llvm::is_contained(
              {"lr", "beta1", "beta2", "eps", "weight_decay", "momentum"},
              key)) {
        error(loc) << "msamp.optimizer has unknown key \"" << key
                   << "\"; known keys: " << kOptimizerKeyList;
        continue;
      }
      // Numbers: f64 by the contract; other float widths and integers are
      // accepted too, since exporters write `lr = 1` or f32 literals.
      double number;
      if (auto f = dyn_cast<FloatAttr>(value)) {
        number = f.getValueAsDouble();
      } else if (auto i = dyn_cast<IntegerAttr>(value);
                 i && !isa<BoolAttr>(value) &&
                 i.getType().isSignlessInteger()) {
        number = static_cast<double>(i.getValue().getSExtValue());
      } else {
        error(loc) << "msamp.optimizer " << key << " must be a number (e.g. "
                   << key << " = 1.0e-03 : f64); got " << value;
        continue;
      }
      // Written as negated conditions so that NaN is rejected too.
      const char *range = nullptr;
      if ((key == "lr" || key == "eps") && !(number > 0))
        range = "> 0";
      else if ((key == "beta1" || key == "beta2") &&
               !(number >= 0 && number < 1))
        range = "in [0, 1)";
      else if (key == "weight_decay" && !(number >= 0 && std::isfinite(number)))
        range = ">= 0";
      else if (key == "momentum" && !(number >= 0 && number <= 1))
        range = "in [0, 1]";
      else if (!std::isfinite(number))
        range = "finite";
      // The step computes in f32: 1e39 would become inf, 1e-50 zero.
      else if (std::fabs(number) > std::numeric_limits<float>::max())
        range = "finite in f32 (at most 3.4028235e+38)";
      else if ((key == "lr" || key == "eps") &&
               static_cast<float>(number) == 0.0f)
        range = "> 0 in f32 (at least 1.4e-45)";
      if (range)
        error(loc) << "msamp.optimizer " << key << " = " << value
                   << " is out of range; expected " << range;
      if (key == "momentum")
        momentum = number;
    }
    // PyTorch's SGD rejects the same combination.
    if (nesterov && !(momentum && *momentum > 0))
      error(loc) << "msamp.optimizer nesterov = true needs momentum > 0";
  }

  void dropAsserts() {
    for (Operation *op : asserts) {
      op->emitRemark("dropping cf.assert: runtime assertions are not part "
                     "of the compiled step");
      op->erase();
    }
  }

  ModuleOp module;
  bool failed = false;
  SmallVector<Operation *> asserts;
};

struct MSAMPVerifyContractPass
    : ::mlir::msamp::impl::MSAMPVerifyContractBase<MSAMPVerifyContractPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(ContractChecker(getOperation()).run()))
      signalPassFailure();
  }
};
} // namespace
