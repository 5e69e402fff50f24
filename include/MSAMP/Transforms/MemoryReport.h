//===- MemoryReport.h - model-state bytes of a train step -------*- C++ -*-===//
//
// The memory report of docs/Interfaces.md 4, computed from the tensor-level
// @train_step (lib/Transforms/MemoryReport.cpp explains each category).
// --msamp-memory-report prints it; msamp-compile writes it, with the peak of
// the static buffer plan appended, to memory_report.json.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_MEMORYREPORT_H
#define MSAMP_TRANSFORMS_MEMORYREPORT_H

#include "MSAMP/Runtime/msamp_vocabulary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::msamp {

/// The report's categories, in the order of docs/Interfaces.md 4.
/// One enumerator per entry of MSAMP_MEMORY_CATEGORY_LIST (msamp_vocabulary.h,
/// shared with the session), with the session's numbering.
enum MemoryCategory : unsigned {
#define MSAMP_MEMORY_CATEGORY_ENUM(ID, Name, key) Name = MSAMP_MEMORY_##ID,
  MSAMP_MEMORY_CATEGORY_LIST(MSAMP_MEMORY_CATEGORY_ENUM)
#undef MSAMP_MEMORY_CATEGORY_ENUM
      NumMemoryCategories = MSAMP_MEMORY_NUM_CATEGORIES
};

/// Bytes of one category and the element type they are stored in.
struct MemoryUsage {
  Type elementType;   // null while empty
  bool mixed = false; // element types differ
  int64_t bytes = 0;

  void add(Type elt, int64_t size);
  /// "none", "mixed" or the MLIR spelling of the element type ("f8E4M3FN").
  std::string dtype() const;
};

struct MemoryReport {
  std::string level;
  int64_t worldSize = 0; // O3 only: the figures are this rank's
  int64_t rank = 0;
  int64_t params = 0;
  MemoryUsage usage[NumMemoryCategories];
  /// ZeRO stage 3: the most bytes of all-gathered weights the step holds
  /// at once (each gathered group lives from its msamp.all_gather to its
  /// phase's last reader); 0 otherwise. Not model state: a temporary.
  int64_t gatheredPeak = 0;

  int64_t totalBytes() const;
  /// Bytes per parameter; 0 for a model without params (keeps the JSON
  /// free of NaN, which it cannot represent).
  double perParam(int64_t bytes) const;
};

/// The report of a tensor-level @train_step; a located error if an argument
/// or gradient cannot be sized.
FailureOr<MemoryReport> computeMemoryReport(func::FuncOp trainStep);

/// Prints docs/Interfaces.md 4's JSON object; `extra`, if given, writes more
/// attributes after "categories" (msamp-compile's "peak_bytes" and "peak").
void printMemoryReportJSON(
    const MemoryReport &report, llvm::raw_ostream &os,
    llvm::function_ref<void(llvm::json::OStream &)> extra = {});

/// Writes `value` as the shortest decimal that reads back as the same double
/// (2.4, not json::OStream's 2.3999999999999999).
void writeJSONNumber(llvm::json::OStream &json, double value);

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_MEMORYREPORT_H
