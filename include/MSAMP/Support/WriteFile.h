//===- WriteFile.h - files a reader never sees half-written -----*- C++ -*-===//
//
// msamp-compile's outputs (manifest.json, memory_report.json, gemms.json) are
// read by other processes, possibly while a compile into the same directory
// runs: each is written to FILE.tmp and renamed over FILE.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_SUPPORT_WRITEFILE_H
#define MSAMP_SUPPORT_WRITEFILE_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::msamp {

/// Writes `contents` to `path` through `path`.tmp and a rename, so that a
/// reader never sees a partial file. "-" is stdout. On failure `error` says
/// which file and why, and no .tmp is left behind.
LogicalResult writeFileAtomically(llvm::StringRef path,
                                  llvm::StringRef contents, std::string &error);

} // namespace mlir::msamp

#endif // MSAMP_SUPPORT_WRITEFILE_H
