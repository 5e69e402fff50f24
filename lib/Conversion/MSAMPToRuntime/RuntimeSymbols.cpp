//===- RuntimeSymbols.cpp - the one table of runtime entry points --*- C++
//-*-===//

#include "MSAMP/Conversion/RuntimeSymbols.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::msamp;

/// The kind of a parameter from its C type in MSAMP_RT_ENTRY_POINT_LIST.
template <typename T>
static constexpr RuntimeArgKind getArgKind() {
  if constexpr (std::is_same_v<T, MSAMP_RT_ARG_MEMREF>)
    return RuntimeArgKind::MemRef;
  else if constexpr (std::is_same_v<T, MSAMP_RT_ARG_I32>)
    return RuntimeArgKind::I32;
  else if constexpr (std::is_same_v<T, MSAMP_RT_ARG_I64>)
    return RuntimeArgKind::I64;
  else if constexpr (std::is_same_v<T, MSAMP_RT_ARG_F64>)
    return RuntimeArgKind::F64;
  else
    static_assert(!sizeof(T), "not an MSAMP_RT_ARG_* type");
}

/// The parameter kinds of one entry point, as static storage.
template <typename... Args>
static constexpr RuntimeArgKind kArgKinds[] = {getArgKind<Args>()...};

static const RuntimeSymbol kSymbols[] = {
#define MSAMP_RT_ENTRY_POINT_SYMBOL_(Name, symbol, ...)                        \
  {RuntimeFn::Name, #symbol, kArgKinds<__VA_ARGS__>},
    MSAMP_RT_ENTRY_POINT_LIST(MSAMP_RT_ENTRY_POINT_SYMBOL_)
#undef MSAMP_RT_ENTRY_POINT_SYMBOL_
};

ArrayRef<RuntimeSymbol> mlir::msamp::getRuntimeSymbols() { return kSymbols; }

const RuntimeSymbol &mlir::msamp::getRuntimeSymbol(RuntimeFn fn) {
  const RuntimeSymbol &symbol = kSymbols[static_cast<unsigned>(fn)];
  assert(symbol.fn == fn && "runtime symbol table out of order");
  return symbol;
}

func::FuncOp mlir::msamp::getOrInsertRuntimeDecl(ModuleOp module,
                                                 RuntimeFn fn) {
  const RuntimeSymbol &symbol = getRuntimeSymbol(fn);
  if (auto existing = module.lookupSymbol<func::FuncOp>(symbol.name))
    return existing;
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  auto memref = UnrankedMemRefType::get(b.getI8Type(), /*memorySpace=*/0);
  SmallVector<Type> inputs;
  for (RuntimeArgKind kind : symbol.args) {
    switch (kind) {
    case RuntimeArgKind::MemRef:
      inputs.push_back(memref);
      break;
    case RuntimeArgKind::I32:
      inputs.push_back(b.getI32Type());
      break;
    case RuntimeArgKind::I64:
      inputs.push_back(b.getI64Type());
      break;
    case RuntimeArgKind::F64:
      inputs.push_back(b.getF64Type());
      break;
    }
  }
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module.getBody());
  auto decl = func::FuncOp::create(builder, module.getLoc(), symbol.name,
                                   FunctionType::get(ctx, inputs, {}));
  decl.setPrivate();
  decl->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  return decl;
}

func::FuncOp mlir::msamp::getOrInsertTypedRuntimeDecl(ModuleOp module,
                                                      RuntimeFn fn,
                                                      TypeRange operandTypes) {
  const RuntimeSymbol &symbol = getRuntimeSymbol(fn);
  assert(operandTypes.size() == symbol.args.size() &&
         "runtime call with the wrong number of operands");
  assert(llvm::all_of(llvm::zip(operandTypes, symbol.args),
                      [](auto pair) {
                        auto [type, kind] = pair;
                        return isa<UnrankedMemRefType>(type) ==
                               (kind == RuntimeArgKind::MemRef);
                      }) &&
         "runtime call with a memref where the entry point takes a scalar "
         "or the reverse");
  MLIRContext *ctx = module.getContext();
  auto type = FunctionType::get(ctx, operandTypes, {});
  // Reuse a typed declaration with the same signature.
  for (auto decl : module.getOps<func::FuncOp>()) {
    auto tag = decl->getAttrOfType<StringAttr>(kRuntimeSymbolAttr);
    if (tag && tag.getValue() == symbol.name && decl.getFunctionType() == type)
      return decl;
  }
  std::string name;
  for (unsigned i = 0;; ++i) {
    name = (symbol.name + "__" + std::to_string(i)).str();
    if (!module.lookupSymbol(name))
      break;
  }
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module.getBody());
  auto decl = func::FuncOp::create(builder, module.getLoc(), name, type);
  decl.setPrivate();
  decl->setAttr(kRuntimeSymbolAttr, builder.getStringAttr(symbol.name));
  return decl;
}

/// The LLVM type of a C parameter or result type of
/// MSAMP_RT_HOST_ENTRY_POINT_LIST: a pointer is `!llvm.ptr`, an integer or
/// enum an integer of its width.
template <typename T>
static Type getLLVMType(MLIRContext *ctx) {
  if constexpr (std::is_pointer_v<T>) {
    return LLVM::LLVMPointerType::get(ctx);
  } else {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>,
                  "a host entry point type the compiler cannot declare");
    return IntegerType::get(ctx, 8 * sizeof(T));
  }
}

template <typename Result, typename... Args>
static LLVM::LLVMFunctionType getLLVMFunctionType(MLIRContext *ctx) {
  return LLVM::LLVMFunctionType::get(getLLVMType<Result>(ctx),
                                     {getLLVMType<Args>(ctx)...});
}

LLVM::LLVMFuncOp mlir::msamp::getOrInsertHostRuntimeDecl(ModuleOp module,
                                                         HostRuntimeFn fn,
                                                         Location loc) {
  StringRef name = kEntryPointRuntimeSymbols[static_cast<unsigned>(fn)];
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  MLIRContext *ctx = module.getContext();
  LLVM::LLVMFunctionType type;
  switch (fn) {
#define MSAMP_RT_HOST_ENTRY_POINT_TYPE_(Name, symbol, Result, ...)             \
  case HostRuntimeFn::Name:                                                    \
    type = getLLVMFunctionType<Result, __VA_ARGS__>(ctx);                      \
    break;
    MSAMP_RT_HOST_ENTRY_POINT_LIST(MSAMP_RT_HOST_ENTRY_POINT_TYPE_)
#undef MSAMP_RT_HOST_ENTRY_POINT_TYPE_
  }
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, loc, name, type);
}

int32_t mlir::msamp::getRuntimeDTypeCode(Type t) {
  if (t.isF32())
    return MSAMP_RT_F32;
  if (t.isF16())
    return MSAMP_RT_F16;
  if (t.isBF16())
    return MSAMP_RT_BF16;
  if (isa<Float8E4M3FNType>(t))
    return MSAMP_RT_F8E4M3FN;
  if (isa<Float8E5M2Type>(t))
    return MSAMP_RT_F8E5M2;
  if (t.isInteger(64))
    return MSAMP_RT_I64;
  if (t.isInteger(32))
    return MSAMP_RT_I32;
  return -1;
}
