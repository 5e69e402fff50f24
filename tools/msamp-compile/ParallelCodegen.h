//===- ParallelCodegen.h - object code on several threads -------*- C++ -*-===//
//
// LLVM's code generator is single-threaded per module. msamp-compile splits
// the optimized module by function into a fixed number of partitions (a
// function of the module alone, never of the thread count), compiles each
// partition in its own LLVMContext on a pool of `threads` threads and hands
// the objects to the linker in partition order: the objects, and so
// train_step.so, are the same bytes whatever -j is.
//
// Functions marked optnone (msamp-optnone-entry-points: @train_step and
// its wrappers, straight lines of calls) form a partition of their own,
// the first, compiled at -O0; the module's local symbols then become
// hidden globals (as SplitModule makes them anyway) and those functions
// declarations in `module`.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_COMPILE_PARALLELCODEGEN_H
#define MSAMP_TOOLS_MSAMP_COMPILE_PARALLELCODEGEN_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::msamp {

/// How many partitions a module with `numFunctions` defined functions is
/// split into: at most kMaxCodegenPartitions, whatever the thread count.
unsigned codegenPartitions(unsigned numFunctions);

/// The most partitions (and so the most threads code generation can use).
constexpr unsigned kMaxCodegenPartitions = 16;

/// Writes `module` as object files `<prefix>.<i>.o`, one per partition, on
/// `threads` threads (>= 1); returns their paths in link order.
/// `makeMachine` creates a TargetMachine (called once per partition: a
/// TargetMachine is not shared between threads).
llvm::Expected<std::vector<std::string>> emitObjectsInParallel(
    llvm::Module &module, llvm::StringRef prefix, unsigned threads,
    llvm::function_ref<std::unique_ptr<llvm::TargetMachine>()> makeMachine);

} // namespace mlir::msamp

#endif // MSAMP_TOOLS_MSAMP_COMPILE_PARALLELCODEGEN_H
