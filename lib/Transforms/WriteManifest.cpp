//===- WriteManifest.cpp - JSON manifest of a train step --------*- C++ -*-===//
//
// Writes the manifest of docs/Interfaces.md 4: what the runtime (msamp-run)
// must allocate, initialize, checkpoint and bind to call @train_step. It is
// derived from the signature of @train_step alone (docs/TrainStep.md 2-3).
// Spellings:
// `--msamp-emit-manifest=FILE` (Pipelines.cpp) or
// `--msamp-write-manifest="file=FILE"`; FILE `-` is stdout.
//
// Format (ABI version 2). Keys appear in this order; a key marked optional is
// absent, not null, when it does not apply.
//
//   {
//     "abi_version": 2,
//     "level": "O1",                   // msamp.level of @train_step
//     "world_size": 1,
//     "state": [                       // persistent state, argument order
//       {"name": "fc1.weight",         // msamp.name: checkpoint tensor name
//        "role": "param",              // param | master_param | opt_state |
//                                      // step | scaling_state | buffer
//        "shape": [64, 32],            // static dims; [] for a 0-d tensor
//        "dtype": "f16",               // MLIR element type: f32, f16, bf16,
//                                      // f8E4M3FN, f8E5M2, i64, i32, ...
//        "init": "normal(0,0.02)",     // msamp.init; "zeros" when absent;
//                                      // also "ones", "from_param"
//        "index": 0,                   // argument index in @train_step
//        "updated_by": 1},             // optional: index of the result that
//                                      // holds the new value after a step
//       ...],
//     "inputs": [                      // per-step inputs, argument order
//       {"name": "lr", "role": "hyperparam",   // input | target |
//        "shape": [], "dtype": "f32",          // hyperparam | rank
//        "index": 5},                  // argument index in @train_step
//       {"name": "max_grad_norm",      // hyperparam of --msamp-grad-stats:
//        "role": "hyperparam", ...},   // clip threshold, <= 0 = no clipping
//       ...],
//     "outputs": [                     // every result, result order
//       {"name": "loss", "role": "loss", "shape": [], "dtype": "f32",
//        "index": 0},                  // result index (0 is the loss)
//       {"name": "fc1.weight", "role": "param", "shape": [64, 32],
//        "dtype": "f16", "index": 1,
//        "updates": 0},                // optional: argument index of the
//                                      // state this result replaces
//       ...,
//       {"name": "grad_norm",          // role "metric": a per-step value
//        "role": "metric",             // (--msamp-grad-stats: "grad_norm",
//        "shape": [], "dtype": "f32",  // "nonfinite"), always 0-d f32, no
//        "index": 9},                  // "updates"
//       ...]
//   }
//
// Every argument is in exactly one of "state" and "inputs", so the runtime can
// bind all of them by "index". An output without msamp.name is named after the
// state it updates, else after its role ("loss"). After lowering
// (convert-msamp-to-runtime) the loss and then every "metric" output, in
// "outputs" order, are written into trailing 0-d output arguments of the
// step, after the N arguments listed here (docs/RuntimeABI.md 11); a runtime
// finds the metrics it knows by name and must size the descriptor table for
// all of them. Older steps have neither max_grad_norm nor metrics.
//
// The file is written to FILE.tmp and renamed over FILE, so a reader never
// sees a half-written manifest; I/O errors are located errors.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Runtime/msamp_session.h"
#include "MSAMP/Support/WriteFile.h"
#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPWRITEMANIFEST
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

static constexpr llvm::StringLiteral kPassName = "--msamp-write-manifest";

/// The manifest format, defined once in the session's plain-C header so that
/// writer and reader cannot disagree.
static constexpr int64_t kABIVersion = MSAMP_MANIFEST_VERSION;

static bool isStateRole(StringRef role) {
  return getRoleKind(role) == MSAMP_ROLE_KIND_STATE;
}

static bool isInputRole(StringRef role) {
  return getRoleKind(role) == MSAMP_ROLE_KIND_INPUT;
}

static std::string printType(Type type) {
  std::string str;
  llvm::raw_string_ostream os(str);
  type.print(os);
  return str;
}

/// Writes "shape" and "dtype" of a statically shaped tensor; the runtime
/// allocates from them, so anything else is an error at `loc`.
static LogicalResult writeShapeAndType(llvm::json::OStream &json, Type type,
                                       Location loc, StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return emitError(loc) << kPassName << ": " << what << " has type " << type
                          << "; the manifest needs statically shaped tensors";
  json.attributeArray("shape", [&] {
    for (int64_t dim : tensor.getShape())
      json.value(dim);
  });
  json.attribute("dtype", printType(tensor.getElementType()));
  return success();
}

/// Writes one entry as a compact object on a line of its own inside `doc`'s
/// current array: a manifest of a large model stays readable and greppable.
static void writeEntry(llvm::json::OStream &doc,
                       llvm::function_ref<void(llvm::json::OStream &)> fields) {
  doc.rawValue([&](llvm::raw_ostream &line) {
    llvm::json::OStream entry(line);
    entry.object([&] { fields(entry); });
  });
}

/// The fields of a "state" (`state` true) or "inputs" entry for argument `i`.
/// `signature` indexes the updating results (one lookup per argument).
static LogicalResult writeArgument(llvm::json::OStream &json,
                                   StepSignature &signature, unsigned i,
                                   bool state) {
  func::FuncOp func = signature.getFunc();
  StringRef name = getArgName(func, i);
  BlockArgument arg = func.getArgument(i);
  json.attribute("name", name);
  json.attribute("role", getArgRole(func, i));
  LogicalResult result = writeShapeAndType(json, arg.getType(), arg.getLoc(),
                                           ("argument '" + name + "'").str());
  if (state) {
    auto init = func.getArgAttrOfType<StringAttr>(i, kInitAttr);
    json.attribute("init", init ? init.getValue() : StringRef(kInitZeros));
  }
  json.attribute("index", static_cast<int64_t>(i));
  if (state)
    if (std::optional<unsigned> updater = signature.findUpdatingResult(i))
      json.attribute("updated_by", static_cast<int64_t>(*updater));
  // O3: state only this rank holds (its shard of the checkpoint).
  if (state && func.getArgAttr(i, kShardedAttr))
    json.attribute("sharded", true);
  if (auto offset = func.getArgAttrOfType<IntegerAttr>(i, kShardOffsetAttr);
      state && offset)
    json.attribute("shard_offset", offset.getInt());
  // ZeRO stage 3: a param held as a piece, and the param's shape.
  if (auto whole = func.getArgAttrOfType<DenseI64ArrayAttr>(i, kParamShapeAttr);
      state && whole)
    json.attributeArray("param_shape", [&] {
      for (int64_t d : whole.asArrayRef())
        json.value(d);
    });
  return result;
}

/// The fields of the "outputs" entry for result `r`.
static LogicalResult writeResult(llvm::json::OStream &json, func::FuncOp func,
                                 unsigned r) {
  auto updates = func.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr);
  std::optional<unsigned> arg;
  if (updates) {
    if (updates.getInt() < 0 ||
        updates.getInt() >= static_cast<int64_t>(func.getNumArguments()))
      return func.emitError(kPassName)
             << ": result #" << r << " has " << kUpdatesAttr << " = "
             << updates.getInt() << ", out of range";
    arg = static_cast<unsigned>(updates.getInt());
  }
  StringRef role = getResultRole(func, r);
  if (role.empty() && arg)
    role = getArgRole(func, *arg);
  StringRef name = getResultName(func, r);
  if (name.empty())
    name = arg ? getArgName(func, *arg) : role;
  json.attribute("name", name);
  json.attribute("role", role);
  LogicalResult result =
      writeShapeAndType(json, func.getResultTypes()[r], func.getLoc(),
                        ("result #" + Twine(r)).str());
  json.attribute("index", static_cast<int64_t>(r));
  if (arg)
    json.attribute("updates", static_cast<int64_t>(*arg));
  return result;
}

/// Serializes the manifest of `func`, or emits a located error.
static LogicalResult buildManifest(func::FuncOp func, llvm::raw_ostream &os) {
  auto level = func->getAttrOfType<StringAttr>(kLevelAttr);
  if (!level)
    return func.emitError(kPassName)
           << ": the train step has no string attribute " << kLevelAttr;

  // Every argument must land in "state" or "inputs", or the runtime could not
  // bind it.
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    StringRef role = getArgRole(func, i);
    Location loc = func.getArgument(i).getLoc();
    if (role.empty())
      return emitError(loc)
             << kPassName << ": argument #" << i << " has no " << kRoleAttr;
    if (!isStateRole(role) && !isInputRole(role))
      return emitError(loc)
             << kPassName << ": argument #" << i << " has unknown " << kRoleAttr
             << " \"" << role << "\"; the runtime cannot bind it";
    if (getArgName(func, i).empty())
      return emitError(loc)
             << kPassName << ": argument #" << i << " has no " << kNameAttr;
  }

  bool ok = true;
  StepSignature signature(func);
  llvm::json::OStream doc(os, /*IndentSize=*/2);
  doc.object([&] {
    doc.attribute("abi_version", kABIVersion);
    doc.attribute("level", level.getValue());
    // O3 programs are specialized for one rank of a fixed group; every
    // other level runs on any number of ranks (1 here).
    int64_t worldSize = 1, rank = 0;
    if (auto zero = func->getAttrOfType<DictionaryAttr>(kZeroAttr)) {
      if (auto n = zero.getAs<IntegerAttr>("world_size"))
        worldSize = n.getInt();
      if (auto r = zero.getAs<IntegerAttr>("rank"))
        rank = r.getInt();
    }
    doc.attribute("world_size", worldSize);
    if (func->hasAttr(kZeroAttr))
      doc.attribute("rank", rank);
    doc.attributeArray("state", [&] {
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (isStateRole(getArgRole(func, i)))
          writeEntry(doc, [&](llvm::json::OStream &json) {
            ok &= succeeded(writeArgument(json, signature, i, /*state=*/true));
          });
    });
    doc.attributeArray("inputs", [&] {
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (isInputRole(getArgRole(func, i)))
          writeEntry(doc, [&](llvm::json::OStream &json) {
            ok &= succeeded(writeArgument(json, signature, i, /*state=*/false));
          });
    });
    doc.attributeArray("outputs", [&] {
      for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
        writeEntry(doc, [&](llvm::json::OStream &json) {
          ok &= succeeded(writeResult(json, func, r));
        });
    });
  });
  os << "\n";
  return success(ok);
}

namespace {
struct MSAMPWriteManifestPass
    : ::mlir::msamp::impl::MSAMPWriteManifestBase<MSAMPWriteManifestPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getTrainStepOrError(getOperation(), kPassName);
    if (!func)
      return signalPassFailure();
    if (file.empty()) {
      func.emitError(kPassName) << ": no output file (file=FILE, - for stdout)";
      return signalPassFailure();
    }
    // Serialize first: nothing is written when the train step is unfit.
    std::string contents;
    llvm::raw_string_ostream os(contents);
    if (failed(buildManifest(func, os)))
      return signalPassFailure();
    std::string error;
    if (failed(writeFileAtomically(file, contents, error))) {
      func.emitError(kPassName) << ": " << error;
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
