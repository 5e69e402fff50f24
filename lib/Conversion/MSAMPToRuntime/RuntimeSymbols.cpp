//===- RuntimeSymbols.cpp - the one table of runtime entry points --*- C++
//-*-===//

#include "MSAMP/Conversion/RuntimeSymbols.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::msamp;

// Keep in sync with docs/RuntimeABI.md and lib/Runtime/MemRefABI.cpp.
static const RuntimeSymbol kSymbols[] = {
    {RuntimeFn::Quantize, "msamp_rt_quantize", "mmmii"},
    {RuntimeFn::Dequantize, "msamp_rt_dequantize", "mmmii"},
    {RuntimeFn::Amax, "msamp_rt_amax", "mmi"},
    {RuntimeFn::ComputeScale, "msamp_rt_compute_scale", "mmmiiii"},
    {RuntimeFn::UpdateAmaxHistory, "msamp_rt_update_amax_history", "mmm"},
    {RuntimeFn::Gemm, "msamp_rt_gemm", "mmmmmmiiii"},
    {RuntimeFn::AllReduce, "msamp_rt_all_reduce", "mmmmiii"},
    {RuntimeFn::Reduce, "msamp_rt_reduce", "mmmmiiii"},
    {RuntimeFn::Broadcast, "msamp_rt_broadcast", "mmii"},
    {RuntimeFn::AdamUpdate, "msamp_rt_adam_update",
     "mmmmmmmmmmmmmmmmiiiiddddi"},
    {RuntimeFn::SGDUpdate, "msamp_rt_sgd_update", "mmmmmmmmmmiiddi"},
    {RuntimeFn::CheckComputedIndex, "msamp_rt_check_computed_index", "mmilli"},
    {RuntimeFn::ReduceScatter, "msamp_rt_reduce_scatter", "mmmmiii"},
    {RuntimeFn::AllGather, "msamp_rt_all_gather", "mmi"},
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
  for (char c : symbol.signature.str()) {
    if (c == 'm')
      inputs.push_back(memref);
    else if (c == 'i')
      inputs.push_back(b.getI32Type());
    else if (c == 'l')
      inputs.push_back(b.getI64Type());
    else
      inputs.push_back(b.getF64Type());
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
