//===- MemoryReport.cpp - bytes per parameter of a train step ---*- C++ -*-===//
//
// Prints the model-state memory of @train_step by category, as a table or as
// the JSON of docs/Interfaces.md 4, to stdout (the IR goes to -o). The figures
// are computed from the IR alone (docs/TrainStep.md 3), never from the options
// a pipeline was given, so that a test can hold the compiler to
// docs/Architecture.md's level table (about 16 bytes/param at O0, 11 at O1, 6
// at O2):
//
//   weights         `param` arguments
//   master_weights  `master_param` arguments
//   weight_grads    the `grad` operand of every msamp.adam_update /
//                   msamp.sgd_update (one gradient buffer per param, in the
//                   type the optimizer reads, as MS-AMP counts it)
//   optimizer_m     `opt_state` arguments named `*.exp_avg` or
//                   `*.momentum_buffer`
//   optimizer_v     `opt_state` arguments named `*.exp_avg_sq`
//   scaling_state   `scaling_state` arguments (scales and amax histories)
//   other_state     `step`, `buffer`, `rng_state` and `loss_scale`
//                   arguments, and any other `opt_state`
//
// The role and name rule is msamp_memory_category_of (msamp_vocabulary.h),
// the one the session's report (msamp_session_memory_report) applies too.
//
// Inputs, targets, the hyperparameters (lr, max_grad_norm) and the rank are
// not model state and are not counted; nor are results: state results repeat
// their arguments, and "metric" results (grad_norm, nonfinite) are per-step
// scalars. After --msamp-grad-stats the optimizer reads the clipped gradient,
// of the same type as before, so clipping changes no figure; its transient
// buffers (dequantized copies for the norm) are temporaries like activations.
// The parameter count is the number of elements of the `param`
// arguments; every bytes_per_param is a category's bytes divided by it.
// At O3 (msamp.zero) the figures are the rank's own: replicated FP8 weights,
// its pieces of the masters and optimizer states, and its gradient buffers:
// at ZeRO stage 2 the reduce-scattered shard of each flat group, at stage 1
// every all-reduced gradient. At ZeRO stage 3 the weights are the rank's
// pieces too, the param count is the whole params' (msamp.param_shape), and
// "gathered_weights_peak" is the largest sum of all-gathered weight groups
// alive at one point of the step (the working set of the gathers).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/MemoryReport.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPMEMORYREPORT
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

static constexpr llvm::StringLiteral kPassName = "--msamp-memory-report";

using Category = MemoryCategory;
using Report = MemoryReport;
using Usage = MemoryUsage;
static constexpr unsigned NumCategories = NumMemoryCategories;

constexpr llvm::StringLiteral kCategoryKeys[NumCategories] = {
#define MSAMP_MEMORY_CATEGORY_KEY(ID, Name, key) key,
    MSAMP_MEMORY_CATEGORY_LIST(MSAMP_MEMORY_CATEGORY_KEY)
#undef MSAMP_MEMORY_CATEGORY_KEY
};

void MemoryUsage::add(Type elt, int64_t size) {
  if (!elementType)
    elementType = elt;
  else if (elementType != elt)
    mixed = true;
  bytes += size;
}

std::string MemoryUsage::dtype() const {
  if (mixed)
    return "mixed";
  if (!elementType)
    return "none";
  std::string str;
  llvm::raw_string_ostream os(str);
  elementType.print(os);
  return str;
}

int64_t MemoryReport::totalBytes() const {
  int64_t total = 0;
  for (const MemoryUsage &u : usage)
    total += u.bytes;
  return total;
}

double MemoryReport::perParam(int64_t bytes) const {
  return params ? static_cast<double>(bytes) / static_cast<double>(params)
                : 0.0;
}

/// Bytes of one element: f32 4, f16/bf16 2, f8 1, i64 8, i32 4; sub-byte
/// types are rounded up to a byte, as the runtime stores them.
static std::optional<int64_t> getElementBytes(Type elt) {
  if (isa<IndexType>(elt))
    return 8;
  if (elt.isIntOrFloat())
    return static_cast<int64_t>(
        llvm::divideCeil(elt.getIntOrFloatBitWidth(), 8));
  return std::nullopt;
}

namespace {
/// How a value of some type is stored.
struct Storage {
  Type elementType;
  int64_t elements;
  int64_t bytes;
};
} // namespace

/// The storage of a static tensor (or scalar) type.
static std::optional<Storage> getStorage(Type type) {
  Type elt = type;
  int64_t elements = 1;
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    if (!shaped.hasStaticShape())
      return std::nullopt;
    elt = shaped.getElementType();
    elements = shaped.getNumElements();
  }
  std::optional<int64_t> bytes = getElementBytes(elt);
  if (!bytes)
    return std::nullopt;
  return Storage{elt, elements, elements * *bytes};
}

/// The category of a state argument, or none for arguments that are not model
/// state (inputs, targets, the learning rate, the rank): msamp_vocabulary.h's
/// rule, which the session's report applies too.
static std::optional<Category> getArgCategory(StringRef role, StringRef name) {
  int category = msamp_memory_category_of(
      msamp_role_of(role.data(), role.size()), name.data(), name.size());
  if (category < 0)
    return std::nullopt;
  return static_cast<Category>(category);
}

/// ZeRO stage 3: the peak over the entry block of the bytes of the
/// msamp.all_gather results alive at once. A gathered group is alive from
/// its gather to the last op that reads it or a view of it (the slices and
/// reshapes that cut each weight out of it).
static int64_t computeGatheredPeak(func::FuncOp func) {
  Block &entry = func.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : entry)
    position[&op] = position.size();
  SmallVector<std::pair<unsigned, int64_t>> events; // (position, +-bytes)
  for (auto gather : entry.getOps<AllGatherOp>()) {
    auto storage = getStorage(gather.getType());
    if (!storage)
      continue;
    unsigned last = position[gather];
    SmallVector<Value> views = {gather.getResult()};
    while (!views.empty()) {
      Value view = views.pop_back_val();
      for (Operation *user : view.getUsers()) {
        Operation *op = entry.findAncestorOpInBlock(*user);
        last = std::max(last, position[op]);
        if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                tensor::CollapseShapeOp>(user))
          views.push_back(user->getResult(0));
      }
    }
    events.push_back({position[gather], storage->bytes});
    events.push_back({last + 1, -storage->bytes});
  }
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [at, bytes] : events)
    peak = std::max(peak, live += bytes);
  return peak;
}

FailureOr<MemoryReport> mlir::msamp::computeMemoryReport(func::FuncOp func) {
  Report report;
  auto level = func->getAttrOfType<StringAttr>(kLevelAttr);
  if (!level) {
    func.emitError(kPassName)
        << ": the train step has no string attribute " << kLevelAttr;
    return failure();
  }
  report.level = level.getValue().str();

  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    std::optional<Category> category =
        getArgCategory(getArgRole(func, i), getArgName(func, i));
    if (!category)
      continue;
    BlockArgument arg = func.getArgument(i);
    auto storage = getStorage(arg.getType());
    if (!storage) {
      emitError(arg.getLoc())
          << kPassName << ": cannot size argument '" << getArgName(func, i)
          << "' of type " << arg.getType()
          << " (expected a statically shaped integer or float tensor)";
      return failure();
    }
    report.usage[*category].add(storage->elementType, storage->bytes);
    if (*category == Weights) {
      // ZeRO stage 3: the rank's piece of a param of msamp.param_shape.
      if (auto whole =
              func.getArgAttrOfType<DenseI64ArrayAttr>(i, kParamShapeAttr))
        report.params += llvm::product_of(whole.asArrayRef());
      else
        report.params += storage->elements;
    }
  }

  // Gradients are not arguments: the optimizer ops show how many there are
  // and what they are stored in. At O3 a rank updates only the params it
  // owns but computes every gradient: each one's reduce-to-owner payload.
  const bool sharded = func->hasAttr(kZeroAttr);
  if (auto zero = func->getAttrOfType<DictionaryAttr>(kZeroAttr)) {
    if (auto n = zero.getAs<IntegerAttr>("world_size"))
      report.worldSize = n.getInt();
    if (auto r = zero.getAs<IntegerAttr>("rank"))
      report.rank = r.getInt();
  }
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    Value grad;
    if (auto reduce = dyn_cast<ReduceOp>(op); sharded && reduce)
      grad = reduce.getInput();
    // Flat shards: stage 2 keeps its reduce-scattered shard of each group,
    // stage 1 every all-reduced gradient (ZeROShard.cpp marks them).
    else if (auto scatter = dyn_cast<ReduceScatterOp>(op); sharded && scatter)
      grad = scatter.getResult();
    else if (sharded && isa<AllReduceOp>(op) && op->hasAttr("msamp.zero_grad"))
      grad = op->getResult(0);
    else if (auto update = asOptimizerUpdate(op); !sharded && update)
      grad = update->grad;
    else
      return WalkResult::advance();
    auto storage = getStorage(grad.getType());
    if (!storage) {
      op->emitError(kPassName)
          << ": cannot size the gradient of type " << grad.getType();
      return WalkResult::interrupt();
    }
    report.usage[WeightGrads].add(storage->elementType, storage->bytes);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (auto zero = func->getAttrOfType<DictionaryAttr>(kZeroAttr))
    if (auto stage = zero.getAs<IntegerAttr>("stage");
        stage && stage.getInt() == 3)
      report.gatheredPeak = computeGatheredPeak(func);
  return report;
}

/// Writes `value` as the shortest decimal that reads back as the same double
/// (2.4, not json::OStream's 2.3999999999999999). Values are finite: bytes
/// per param are divided by a non-zero param count or are 0.
void mlir::msamp::writeJSONNumber(llvm::json::OStream &json, double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  assert(ec == std::errc() && "a double fits in 32 characters");
  (void)ec;
  json.rawValue(StringRef(buffer, end - buffer));
}

void mlir::msamp::printMemoryReportJSON(
    const MemoryReport &report, llvm::raw_ostream &os,
    llvm::function_ref<void(llvm::json::OStream &)> extra) {
  // json::OStream keeps the insertion order (a json::Object would sort the
  // keys), so the keys come in the documented order. One category per line
  // keeps the output readable and easy to grep.
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("level", report.level);
    json.attribute("params", report.params);
    if (report.worldSize) {
      json.attribute("world_size", report.worldSize);
      json.attribute("rank", report.rank);
    }
    json.attributeBegin("bytes_per_param");
    writeJSONNumber(json, report.perParam(report.totalBytes()));
    json.attributeEnd();
    json.attributeObject("categories", [&] {
      for (unsigned c = 0; c < NumCategories; ++c) {
        const Usage &usage = report.usage[c];
        json.attributeBegin(kCategoryKeys[c]);
        json.rawValue([&](llvm::raw_ostream &line) {
          llvm::json::OStream entry(line);
          entry.object([&] {
            entry.attribute("dtype", usage.dtype());
            entry.attribute("bytes", usage.bytes);
            entry.attributeBegin("bytes_per_param");
            writeJSONNumber(entry, report.perParam(usage.bytes));
            entry.attributeEnd();
          });
        });
        json.attributeEnd();
      }
    });
    if (report.gatheredPeak) {
      json.attribute("gathered_weights_peak", report.gatheredPeak);
      json.attributeBegin("gathered_weights_peak_per_param");
      writeJSONNumber(json, report.perParam(report.gatheredPeak));
      json.attributeEnd();
    }
    if (extra)
      extra(json);
  });
  os << "\n";
}

static void printTable(const Report &report, llvm::raw_ostream &os) {
  os << "msamp memory report: @" << kTrainStepName << ", level " << report.level
     << ", " << report.params << " params";
  if (report.worldSize)
    os << ", rank " << report.rank << " of " << report.worldSize;
  os << "\n";
  const char *row = "{0,-16}{1,-10}{2,12}{3,14}\n";
  os << llvm::formatv(row, "category", "dtype", "bytes", "bytes/param");
  for (unsigned c = 0; c < NumCategories; ++c) {
    const Usage &usage = report.usage[c];
    os << llvm::formatv(
        row, kCategoryKeys[c], usage.dtype(), usage.bytes,
        llvm::formatv("{0:F4}", report.perParam(usage.bytes)).str());
  }
  int64_t total = report.totalBytes();
  os << llvm::formatv(row, "total", "", total,
                      llvm::formatv("{0:F4}", report.perParam(total)).str());
  if (report.gatheredPeak)
    os << llvm::formatv(
        row, "gathered (peak)", "", report.gatheredPeak,
        llvm::formatv("{0:F4}", report.perParam(report.gatheredPeak)).str());
}

namespace {
struct MSAMPMemoryReportPass
    : ::mlir::msamp::impl::MSAMPMemoryReportBase<MSAMPMemoryReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = getTrainStepOrError(module, kPassName);
    if (!func)
      return signalPassFailure();
    FailureOr<Report> report = computeMemoryReport(func);
    if (failed(report))
      return signalPassFailure();
    if (format == MemoryReportFormat::JSON)
      printMemoryReportJSON(*report, llvm::outs());
    else
      printTable(*report, llvm::outs());
    llvm::outs().flush();
    markAllAnalysesPreserved();
  }
};
} // namespace
