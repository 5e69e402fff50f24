//===- CompileCache.h - Compiling models for msamp-run ----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-run executes what msamp-compile writes (docs/Architecture.md 5: the
// runtime never links MLIR or LLVM). A model file is compiled once per
// (file bytes, opt level, pipeline options, msamp version, msamp-compile
// binary) into
//
//   $MSAMP_CACHE_DIR | $XDG_CACHE_HOME/msamp | ~/.cache/msamp / <sha256 key>/
//       train_step.so  manifest.json  train_step.mlir
//       memory_report.json  gemms.json                   (msamp-compile)
//       compile.log          (msamp-compile's stdout)
//
// The directory is built under a temporary name and renamed into place, so
// a key directory is always complete and concurrent runs never see half a
// compilation. The compiler binary's size and modification time are part of
// the key, so a rebuilt msamp-compile never reuses stale objects.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_COMPILECACHE_H
#define MSAMP_TOOLS_MSAMP_RUN_COMPILECACHE_H

#include <string>

namespace msamp::run {

struct CompileResult {
  std::string dir;     // the directory to open a session on
  bool cached = false; // true when no compilation ran
  double seconds = 0;  // compile time when it ran
};

/// Compiles `model` (a file) or returns the cached directory. On failure
/// returns false with `error` set (msamp-compile's own diagnostics have
/// already gone to stderr).
/// `cudaChip` empty: compile for the CPU; else `--target cuda --chip
/// cudaChip`.
bool compileModel(const std::string &model, const std::string &level,
                  const std::string &pipelineOptions,
                  const std::string &cudaChip, CompileResult &result,
                  std::string &error);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_COMPILECACHE_H
