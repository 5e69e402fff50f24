//===- TrainStep.h - conventions of graphs and train steps ------*- C++ -*-===//
//
// Attribute names of the input contract and of the compiled train step
// (docs/TrainStep.md), and the helpers every pass uses to find functions,
// read roles and names, and thread new persistent state through @train_step.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_TRAINSTEP_H
#define MSAMP_TRAINSTEP_TRAINSTEP_H

#include "MSAMP/Runtime/msamp_vocabulary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Remarks.h"

#include <optional>
#include <string>

namespace mlir::msamp {

// Discardable attributes of the contract and the train step.
constexpr llvm::StringLiteral kKindAttr = "msamp.kind";
constexpr llvm::StringLiteral kRoleAttr = "msamp.role";
constexpr llvm::StringLiteral kNameAttr = "msamp.name";
constexpr llvm::StringLiteral kUpdatesAttr = "msamp.updates";
constexpr llvm::StringLiteral kInitAttr = "msamp.init";
constexpr llvm::StringLiteral kLevelAttr = "msamp.level";
constexpr llvm::StringLiteral kOptimizerAttr = "msamp.optimizer";
constexpr llvm::StringLiteral kRecipeAttr = "msamp.recipe";
/// On @train_step, set by --msamp-bf16-activations: "bf16" when the forward
/// activations are stored in bf16 (absent: f32).
constexpr llvm::StringLiteral kActivationsAttr = "msamp.activations";
constexpr llvm::StringLiteral kGemmAttr = "msamp.gemm";
constexpr llvm::StringLiteral kGemmWeightAttr = "msamp.gemm_weight";
/// O3: `{world_size = N, rank = r}` on @train_step (lib/Transforms/ZeROShard).
constexpr llvm::StringLiteral kZeroAttr = "msamp.zero";
/// O3: unit attribute on the state arguments only this rank holds.
constexpr llvm::StringLiteral kShardedAttr = "msamp.sharded";
/// O3 flat shards (issue 20): on a sharded argument that holds a piece of a
/// param's flattened state, the element offset of the piece in the param.
constexpr llvm::StringLiteral kShardOffsetAttr = "msamp.shard_offset";
/// ZeRO stage 3: on a param argument that holds a piece of the param, the
/// param's shape (the manifest's "param_shape").
constexpr llvm::StringLiteral kParamShapeAttr = "msamp.param_shape";
/// Module attribute written by --msamp-index-checks and consumed by
/// msamp-emit-entry-point: the range checks of the index inputs.
constexpr llvm::StringLiteral kIndexChecksAttr = "msamp.index_checks";

// Function kinds.
constexpr llvm::StringLiteral kForwardBackward = "forward_backward";
constexpr llvm::StringLiteral kTrainStep = "train_step";
constexpr llvm::StringLiteral kTrainStepName = "train_step";

// Roles: kRoleParam = "param", kRoleMasterParam, ..., kRoleMetric, one per
// entry of MSAMP_ROLE_LIST (msamp_vocabulary.h, shared with the session
// library and Python, which documents each).
#define MSAMP_ROLE_CONSTANT(ID, Name, spelling, kind)                          \
  constexpr llvm::StringLiteral kRole##Name = spelling;
MSAMP_ROLE_LIST(MSAMP_ROLE_CONSTANT)
#undef MSAMP_ROLE_CONSTANT

/// The kind of a role (state, input or result), or none for an unknown one.
std::optional<msamp_role_kind> getRoleKind(StringRef role);

// Initializers recorded on state arguments (msamp.init) for the manifest.
constexpr llvm::StringLiteral kInitNormal = "normal(0,0.02)";
constexpr llvm::StringLiteral kInitZeros = "zeros";
constexpr llvm::StringLiteral kInitOnes = "ones";
constexpr llvm::StringLiteral kInitFromParam = "from_param";
/// The run's seed (msamp-run --seed, Session.init), written as one i64.
constexpr llvm::StringLiteral kInitSeed = "seed";

/// One optimizer update (msamp.adam_update or msamp.sgd_update): the op,
/// its param and the gradient operand group it reads.
struct OptimizerUpdate {
  Operation *op;
  Value param;
  Value grad;
  Value gradScaleInv; // null for an f32 gradient
};

/// `op` as an optimizer update, or std::nullopt for any other op.
std::optional<OptimizerUpdate> asOptimizerUpdate(Operation *op);

/// The unique function with msamp.kind = `kind`, or null. Emits an error on
/// the module when there are several.
func::FuncOp findFunctionOfKind(ModuleOp module, StringRef kind);

/// The public @train_step, or null after emitting a located error saying
/// that `passName` needs a train step (run --msamp-synthesize-train-step).
func::FuncOp getTrainStepOrError(ModuleOp module, StringRef passName);

/// String-valued argument / result attributes ("" when absent).
StringRef getArgRole(func::FuncOp func, unsigned index);
StringRef getArgName(func::FuncOp func, unsigned index);
StringRef getResultRole(func::FuncOp func, unsigned index);
StringRef getResultName(func::FuncOp func, unsigned index);

// The signature helpers below are one-edit StepSignatures (StepSignature.h):
// each reads, and each edit rewrites, the whole signature. A pass that looks
// up or adds state per parameter or per GEMM holds one StepSignature instead.

/// Index of the argument named `name` (optionally with role `role`).
std::optional<unsigned> findArgument(func::FuncOp func, StringRef name,
                                     StringRef role = "");

/// Index of the result carrying msamp.updates = argIndex.
std::optional<unsigned> findUpdatingResult(func::FuncOp func,
                                           unsigned argIndex);

/// Appends a persistent-state argument with its role, name and initializer.
BlockArgument addStateArgument(func::FuncOp func, Type type, StringRef role,
                               StringRef name, StringRef init);

/// Appends `value` to the function's results (the single func.return) as the
/// new value of argument `argIndex`: msamp.updates, role and name are copied
/// from the argument.
void addStateResult(func::FuncOp func, Value value, unsigned argIndex);

/// Replaces the value returned as the update of argument `argIndex`.
void setStateResult(func::FuncOp func, unsigned argIndex, Value value);

/// Changes the type of argument `argIndex` (and of the result updating it,
/// if any) in the signature and the entry block. Callers fix the uses.
void setStateType(func::FuncOp func, unsigned argIndex, Type type);

/// Re-derives the function type from the entry block and the return op.
void updateFunctionType(func::FuncOp func);

/// "'fc1.weight'" for a value that is an argument of `func`, else "param"
/// (for diagnostics).
std::string describeParam(func::FuncOp func, Value param);

/// "fc1.weight" -> "fc1"; other names are returned unchanged.
std::string layerNameOf(StringRef paramName);

/// The type of an optional operand or result, null when it is absent (the
/// shape the builders of ops with optional scales take).
inline Type typeOrNull(Value value) { return value ? value.getType() : Type(); }

/// The 0-d f32 tensor type used for scales, amaxes and the learning rate.
RankedTensorType getScalarF32Type(MLIRContext *context);

/// The `dense<1.0> : tensor<f32>` constant at the top of `func`'s entry block
/// (the numerator of every inverse scale, the previous scale of a
/// just-in-time scale). An existing one is reused and moved to the top so
/// that it dominates everything a pass inserts.
Value getOrCreateScalarOne(func::FuncOp func);

/// Options of an msamp remark: MLIR's remark engine, category "msamp",
/// sub-category the pass (`fp8-gemms`, ...); silent unless asked for with
/// --remarks-filter=msamp. (Pass statistics would not do: they are no-ops in
/// Debian's NDEBUG build of LLVM.)
remark::RemarkOpts remarkOptions(StringRef pass, StringRef name);

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_TRAINSTEP_H
