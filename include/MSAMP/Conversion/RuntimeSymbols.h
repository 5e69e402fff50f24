//===- RuntimeSymbols.h - the one table of runtime entry points -*- C++ -*-===//
//
// The compiler side of the runtime ABI (docs/RuntimeABI.md): every function
// compiled code may call, with its argument kinds, as the runtime's
// MSAMP_RT_ENTRY_POINT_LIST (msamp_entry_points.h) lists them. The runtime
// implements `_mlir_ciface_<name>` for each; the declarations carry
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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::msamp {

/// The ABI version compiled steps report (msamp_train_step_abi_version): the
/// one in the runtime's plain-C header, which the compiler includes so that
/// every ABI constant (version, dtype codes, flag bits) has one definition.
constexpr int kRuntimeABIVersion = MSAMP_RT_ABI_VERSION;

/// The kernel entry points, one per entry of MSAMP_RT_ENTRY_POINT_LIST
/// (msamp_entry_points.h), in list order.
enum class RuntimeFn {
#define MSAMP_RT_ENTRY_POINT_ENUM_(Name, symbol, ...) Name,
  MSAMP_RT_ENTRY_POINT_LIST(MSAMP_RT_ENTRY_POINT_ENUM_)
#undef MSAMP_RT_ENTRY_POINT_ENUM_
};

/// How one parameter of an entry point travels.
enum class RuntimeArgKind {
  MemRef, ///< An unranked memref (memref<*xi8> once finalized).
  I32,
  I64,
  F64,
};

struct RuntimeSymbol {
  RuntimeFn fn;
  llvm::StringLiteral name;
  /// One kind per parameter, in order.
  llvm::ArrayRef<RuntimeArgKind> args;
};

/// Runtime functions the packed entry point calls directly, with plain C
/// arguments rather than through `_mlir_ciface_` (msamp-emit-entry-point):
/// MSAMP_RT_HOST_ENTRY_POINT_LIST, in list order. msamp-compile allows
/// exactly these and the table below to stay undefined.
enum class HostRuntimeFn {
#define MSAMP_RT_HOST_ENTRY_POINT_ENUM_(Name, symbol, ...) Name,
  MSAMP_RT_HOST_ENTRY_POINT_LIST(MSAMP_RT_HOST_ENTRY_POINT_ENUM_)
#undef MSAMP_RT_HOST_ENTRY_POINT_ENUM_
};
constexpr llvm::StringLiteral kEntryPointRuntimeSymbols[] = {
#define MSAMP_RT_HOST_ENTRY_POINT_NAME_(Name, symbol, ...) #symbol,
    MSAMP_RT_HOST_ENTRY_POINT_LIST(MSAMP_RT_HOST_ENTRY_POINT_NAME_)
#undef MSAMP_RT_HOST_ENTRY_POINT_NAME_
};

/// Declares the host runtime function `fn` in `module` (once, at the start
/// of its body, at `loc`) as an llvm.func of the C types of its list entry,
/// and returns it.
LLVM::LLVMFuncOp getOrInsertHostRuntimeDecl(ModuleOp module, HostRuntimeFn fn,
                                            Location loc);

/// The counting heap of the runtime (msamp_runtime.h, RuntimeABI.md 14):
/// finalize-memref-to-llvm with use-generic-functions lowers memref.alloc and
/// memref.dealloc to calls of these, which the runtime defines.
constexpr llvm::StringLiteral kAllocatorRuntimeSymbols[] = {
    "_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_free"};

/// The function of train_step.so that runs the index-input checks alone
/// (msamp-emit-entry-point; the packed entry point calls it first).
constexpr llvm::StringLiteral kCheckInputsFunction =
    "msamp_train_step_check_inputs";

/// The table (one entry per RuntimeFn, in enum order), generated from
/// MSAMP_RT_ENTRY_POINT_LIST.
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
