//===- RuntimeSymbols.h - the one table of runtime entry points -*- C++ -*-===//
//
// The compiler side of the runtime ABI (docs/RuntimeABI.md): every function
// compiled code may call, with its argument kinds. The runtime implements
// `_mlir_ciface_<name>` for each; the declarations carry
// llvm.emit_c_interface so that memrefs travel as pointers to unranked
// descriptors whatever their rank and element type.
//
// The host wrappers of GPU-compiled steps (plain C pointers and integers, not
// this memref ABI) have their own table: GPU/GPURuntimeSymbols.h.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CONVERSION_RUNTIMESYMBOLS_H
#define MSAMP_CONVERSION_RUNTIMESYMBOLS_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::msamp {

/// The ABI version compiled steps report (msamp_train_step_abi_version): the
/// one in the runtime's plain-C header, which the compiler includes so that
/// every ABI constant (version, dtype codes, flag bits) has one definition.
constexpr int kRuntimeABIVersion = MSAMP_RT_ABI_VERSION;

enum class RuntimeFn {
  Quantize,
  Dequantize,
  Amax,
  ComputeScale,
  UpdateAmaxHistory,
  Gemm,
  AllReduce,
  Reduce,
  Broadcast,
  AdamUpdate,
  SGDUpdate,
  CheckComputedIndex,
  ReduceScatter,
  AllGather,
};

struct RuntimeSymbol {
  RuntimeFn fn;
  llvm::StringLiteral name;
  /// One character per argument: 'm' an unranked memref, 'i' an i32,
  /// 'l' an i64, 'd' an f64.
  llvm::StringLiteral signature;
};

/// Runtime functions the packed entry point calls directly, with plain C
/// arguments rather than through `_mlir_ciface_` (msamp-emit-entry-point).
/// msamp-compile allows exactly these and the table below to stay undefined.
constexpr llvm::StringLiteral kCheckIndexSymbol = "msamp_rt_check_index";
constexpr llvm::StringLiteral kEntryPointRuntimeSymbols[] = {kCheckIndexSymbol};

/// The counting heap of the runtime (msamp_runtime.h, RuntimeABI.md 14):
/// finalize-memref-to-llvm with use-generic-functions lowers memref.alloc and
/// memref.dealloc to calls of these, which the runtime defines.
constexpr llvm::StringLiteral kAllocatorRuntimeSymbols[] = {
    "_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_free"};

/// The function of train_step.so that runs the index-input checks alone
/// (msamp-emit-entry-point; the packed entry point calls it first).
constexpr llvm::StringLiteral kCheckInputsFunction =
    "msamp_train_step_check_inputs";

/// The table (one entry per RuntimeFn, in enum order).
llvm::ArrayRef<RuntimeSymbol> getRuntimeSymbols();
const RuntimeSymbol &getRuntimeSymbol(RuntimeFn fn);

/// Declares the runtime function in `module` (once) and returns it. Memref
/// parameters are typed memref<*xi8>: callers cast their buffers to it.
func::FuncOp getOrInsertRuntimeDecl(ModuleOp module, RuntimeFn fn);

/// A declaration of the runtime function for the exact operand types of one
/// call (unranked memrefs of any element type), named
/// `<symbol>__<n>` and tagged `msamp.runtime_symbol = <symbol>`. Used until
/// buffer deallocation has run; msamp-finalize-runtime-calls then redirects
/// every call to the canonical declaration and erases these.
func::FuncOp getOrInsertTypedRuntimeDecl(ModuleOp module, RuntimeFn fn,
                                         TypeRange operandTypes);

/// Attribute naming the canonical runtime symbol of a typed declaration.
constexpr llvm::StringLiteral kRuntimeSymbolAttr = "msamp.runtime_symbol";

/// On a runtime call, from convert-msamp-to-runtime until
/// msamp-check-in-place-states: pairs (operand index, argument number) of
/// the outputs that must be the step's state arguments themselves.
constexpr llvm::StringLiteral kInPlaceArgsAttr = "msamp.in_place_args";

/// The runtime's dtype code of an element type (msamp_rt_dtype), or -1.
int32_t getRuntimeDTypeCode(Type elementType);

} // namespace mlir::msamp

#endif // MSAMP_CONVERSION_RUNTIMESYMBOLS_H
