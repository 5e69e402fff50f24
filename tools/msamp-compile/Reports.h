//===- Reports.h - the reports msamp-compile writes -------------*- C++ -*-===//
//
// memory_report.json and gemms.json (docs/Interfaces.md 4): written once, next
// to manifest.json, by the compiler that knows the facts, so that msamp-run,
// the session and Python read them instead of re-running the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_COMPILE_REPORTS_H
#define MSAMP_COMPILE_REPORTS_H

#include "MSAMP/Transforms/MemoryReport.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::msamp {

/// Writes gemms.json for the tensor-level train step `step` to `path`.
LogicalResult writeGemmTable(func::FuncOp step, llvm::StringRef path);

/// Removes the module attribute --msamp-buffer-plan recorded (it must not
/// reach LLVM IR) and returns it, or null when the pipeline has no plan
/// (--target cuda).
DictionaryAttr takeBufferPlan(ModuleOp module);

/// Writes memory_report.json: the state report, then "peak_bytes" and
/// "peak" {"session_bytes", "step_bytes", "buffers", "at"} from `plan`
/// (left out when `plan` is null).
LogicalResult writeMemoryReport(const MemoryReport &report, DictionaryAttr plan,
                                llvm::StringRef path);

} // namespace mlir::msamp

#endif // MSAMP_COMPILE_REPORTS_H
