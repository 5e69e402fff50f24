//===- CostModel.cpp - the GPU step's roofline cost model -----------------===//
//
// Part of the msamp project. The model and how ops are counted:
// MSAMP/Codegen/GPU/CostModel.h and docs/GPU.md "The cost report".
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/BufferPlan.h"
#include "MSAMP/Runtime/msamp_runtime.h"

// The CUDA backend's GEMM plan (pure index logic, no CUDA header), so that
// the packs counted here are the ones the runtime launches.
#include "GemmPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace mlir::msamp;
using namespace mlir::msamp::gpucost;

StringRef gpucost::unitName(Unit unit) {
  switch (unit) {
  case Unit::FP8:
    return "fp8";
  case Unit::BF16:
    return "bf16";
  case Unit::F32:
    return "f32";
  }
  llvm_unreachable("unknown unit");
}

double gpucost::peakFlops(Unit unit) {
  switch (unit) {
  case Unit::FP8:
    return 1979e12;
  case Unit::BF16:
    return 989e12;
  case Unit::F32:
    return 67e12;
  }
  llvm_unreachable("unknown unit");
}

double gpucost::predictedSeconds(const OpCost &cost) {
  double compute = static_cast<double>(cost.flops) /
                   (kComputeEfficiency * peakFlops(cost.unit));
  double memory =
      static_cast<double>(cost.bytes) / (kMemoryEfficiency * kMemoryBandwidth);
  return std::max(compute, memory) + kLaunchSeconds;
}

DictionaryAttr gpucost::kernelCostAttr(MLIRContext *context, StringRef opName,
                                       const OpCost &cost) {
  Builder b(context);
  return b.getDictionaryAttr({b.getNamedAttr(
      kKernelCostAttr,
      b.getDictionaryAttr(
          {b.getNamedAttr("op", b.getStringAttr(opName)),
           b.getNamedAttr("flops", b.getI64IntegerAttr(cost.flops)),
           b.getNamedAttr("bytes", b.getI64IntegerAttr(cost.bytes))}))});
}

DictionaryAttr gpucost::kernelCostOf(Location loc) {
  DictionaryAttr found;
  loc->walk([&](Location inner) {
    auto fused = dyn_cast<FusedLoc>(inner);
    auto metadata =
        fused ? dyn_cast_or_null<DictionaryAttr>(fused.getMetadata()) : nullptr;
    if (metadata)
      found = metadata.getAs<DictionaryAttr>(kKernelCostAttr);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

namespace {

/// One FLOP: a floating-point arith or math op. Constants, selects,
/// bitcasts and conversions between types move or reinterpret a value and
/// are not counted.
bool isFlop(Operation &op) {
  Dialect *dialect = op.getDialect();
  if (!dialect || !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
    return false;
  if (isa<arith::ConstantOp, arith::SelectOp, arith::BitcastOp, arith::ExtFOp,
          arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp,
          arith::FPToUIOp>(op))
    return false;
  return op.getNumResults() == 1 &&
         isa<FloatType>(getElementTypeOrSelf(op.getResult(0).getType()));
}

FailureOr<int64_t> operandBytes(Operation *op, Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type)
    return 0; // a scalar operand travels as a kernel argument
  std::optional<int64_t> bytes = getStaticMemRefBytes(type);
  if (!bytes)
    return op->emitError("GPU cost model: operand of type ")
           << type << " has no static size";
  return *bytes;
}

/// The ranked memref behind a runtime call's unranked operand
/// (memref.cast and the conversion to memref<*xi8> undone).
MemRefType tracedType(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto cast = dyn_cast<UnrealizedConversionCastOp>(def)) {
      value = cast.getOperand(0);
    } else if (auto cast = dyn_cast<memref::CastOp>(def)) {
      value = cast.getSource();
    } else {
      break;
    }
    if (auto ranked = dyn_cast<MemRefType>(value.getType()))
      return ranked;
  }
  return dyn_cast<MemRefType>(value.getType());
}

int64_t numElements(MemRefType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape())
    n *= d;
  return n;
}

/// f32 FLOPs per element of the first operand of each non-GEMM runtime
/// entry point (docs/GPU.md "The cost report"): the scaled casts multiply
/// once, amax and a scale update (its amax) compare once, compute_scale
/// reduces its history once, the
/// fused just-in-time cast and the cast with its scale update (its amax in
/// the cast's pass) compare and multiply (2), Adam
/// does 16 (2 decodes, weight decay, 3 for m, 4 for v, 6 for the update),
/// SGD 8; moves (history roll, collectives, index checks) none.
int64_t elementFlops(StringRef callee) {
  return llvm::StringSwitch<int64_t>(callee)
      .Cases({"msamp_rt_quantize", "msamp_rt_dequantize", "msamp_rt_amax",
              "msamp_rt_compute_scale", "msamp_rt_scale_update",
              "msamp_rt_quantize_transpose"},
             1)
      .Cases({"msamp_rt_quantize_jit", "msamp_rt_quantize_scale_update"}, 2)
      .Case("msamp_rt_adam_update", 16)
      .Case("msamp_rt_sgd_update", 8)
      .Default(0);
}

} // namespace

FailureOr<OpCost> gpucost::linalgKernelCost(linalg::LinalgOp op) {
  OpCost cost;
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return op->emitError("GPU cost model: dynamic loop range");
    iterations *= range;
  }
  int64_t perIteration = 0;
  op.getBlock()->walk([&](Operation *inner) {
    if (isFlop(*inner))
      ++perIteration;
  });
  cost.flops = iterations * perIteration;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (!op.payloadUsesValueFromOperand(in))
      continue;
    FailureOr<int64_t> bytes = operandBytes(op, in->get());
    if (failed(bytes))
      return failure();
    cost.bytes += *bytes;
  }
  for (OpOperand &out : op.getDpsInitsMutable()) {
    FailureOr<int64_t> bytes = operandBytes(op, out.get());
    if (failed(bytes))
      return failure();
    cost.bytes += op.payloadUsesValueFromOperand(&out) ? 2 * *bytes : *bytes;
  }
  cost.unit = Unit::F32;
  return cost;
}

FailureOr<OpCost>
gpucost::rowChainKernelCost(ArrayRef<linalg::LinalgOp> ops,
                            const llvm::DenseSet<Value> &fromRegisters) {
  OpCost cost;
  llvm::DenseSet<Value> seen;
  for (linalg::LinalgOp op : ops) {
    FailureOr<OpCost> own = linalgKernelCost(op);
    if (failed(own))
      return failure();
    cost.flops += own->flops;
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (!op.payloadUsesValueFromOperand(in) ||
          fromRegisters.contains(in->get()) || !seen.insert(in->get()).second)
        continue;
      FailureOr<int64_t> bytes = operandBytes(op, in->get());
      if (failed(bytes))
        return failure();
      cost.bytes += *bytes;
    }
    for (OpOperand &out : op.getDpsInitsMutable()) {
      bool first = seen.insert(out.get()).second;
      FailureOr<int64_t> bytes = operandBytes(op, out.get());
      if (failed(bytes))
        return failure();
      // Written once by this op; read too when it is the first access and
      // the body reads the old value (not a result that starts from a
      // constant).
      bool readsOld = first && op.payloadUsesValueFromOperand(&out) &&
                      !fromRegisters.contains(out.get());
      cost.bytes += readsOld ? 2 * *bytes : *bytes;
    }
  }
  cost.unit = Unit::F32;
  return cost;
}

Location gpucost::withKernelCost(ArrayRef<Location> locs, DictionaryAttr cost) {
  SmallVector<Location> parts;
  for (Location loc : locs) {
    auto fused = dyn_cast<FusedLoc>(loc);
    auto metadata =
        fused ? dyn_cast_or_null<DictionaryAttr>(fused.getMetadata()) : nullptr;
    if (metadata && metadata.get(kKernelCostAttr))
      llvm::append_range(parts, fused.getLocations());
    else
      parts.push_back(loc);
  }
  return FusedLoc::get(cost.getContext(), parts, cost);
}

OpCost gpucost::oneHotScatterKernelCost(int64_t threads, int64_t ids,
                                        int64_t idBytes, int64_t gradElements,
                                        int64_t gradBytes, int64_t rows,
                                        int64_t rowBytes) {
  OpCost cost;
  cost.flops = 2 * threads * ids + gradElements;
  cost.bytes = idBytes + gradBytes + 2 * std::min(ids, rows) * rowBytes;
  cost.unit = Unit::F32;
  return cost;
}

FailureOr<OpCost> gpucost::scalarKernelCost(ArrayRef<Operation *> ops) {
  OpCost cost;
  llvm::SmallDenseSet<Value> read, written;
  for (Operation *root : ops) {
    root->walk([&](Operation *op) {
      if (isFlop(*op))
        ++cost.flops;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        read.insert(load.getMemRef());
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        written.insert(store.getMemRef());
      else if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
        read.insert(atomic.getMemref());
        written.insert(atomic.getMemref());
      }
    });
  }
  for (const auto &buffers : {read, written})
    for (Value buffer : buffers) {
      FailureOr<int64_t> bytes = operandBytes(ops.front(), buffer);
      if (failed(bytes))
        return failure();
      cost.bytes += *bytes;
    }
  cost.unit = Unit::F32;
  return cost;
}

/// The alloca that built the table `table` is (through casts), or null.
/// In a layer's host code (msamp-gpu-outline-layers) the table is an
/// argument: the step's stack buffers are at its entry and each call takes
/// its copy's own, and with the period rotated a call launches the
/// previous copy's table and fills the next. Every copy's table is built
/// the same way, so the one the function's first call passes stands for
/// all (followed through a function that returns its table, too).
static memref::AllocaOp tableAlloca(Value table) {
  for (int hops = 0; hops < 8; ++hops) {
    while (Operation *def = table.getDefiningOp()) {
      if (!isa<UnrealizedConversionCastOp, memref::CastOp>(def))
        break;
      table = def->getOperand(0);
    }
    if (auto alloca = table.getDefiningOp<memref::AllocaOp>())
      return alloca;
    if (auto arg = dyn_cast<BlockArgument>(table)) {
      auto function = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      auto module = function ? function->getParentOfType<ModuleOp>() : nullptr;
      if (!module || !arg.getOwner()->isEntryBlock())
        return {};
      func::CallOp first;
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(function, module))
        for (const SymbolTable::SymbolUse &use : *uses)
          if ((first = dyn_cast<func::CallOp>(use.getUser())))
            break;
      if (!first)
        return {};
      table = first.getOperand(arg.getArgNumber());
      continue;
    }
    auto call = table.getDefiningOp<func::CallOp>();
    auto callee = call ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                             call, call.getCalleeAttr())
                       : func::FuncOp();
    if (!callee || callee.isExternal())
      return {};
    func::ReturnOp ret;
    callee.walk([&](func::ReturnOp op) { ret = op; });
    if (!ret)
      return {};
    table = ret.getOperand(cast<OpResult>(table).getResultNumber());
  }
  return {};
}

/// msamp_rt_adam_update_multi: the sum of the msamp_rt_adam_update calls
/// it stands for, read from its table's stores (AdamGroupToRuntime.cpp):
/// per row every buffer stored (an absent scale, 0 in the table, as the
/// 4-byte dummy a single call passes) plus lr and step, and 16 FLOPs per
/// element of the param.
static FailureOr<OpCost> adamMultiCost(func::CallOp call) {
  auto fail = [&](const Twine &why) {
    return call.emitError("GPU cost model: msamp_rt_adam_update_multi: ")
           << why;
  };
  memref::AllocaOp alloca = tableAlloca(call.getOperand(0));
  MemRefType lr = tracedType(call.getOperand(1)),
             step = tracedType(call.getOperand(2));
  if (!alloca || !lr || !step)
    return fail("cannot find its table, lr or step");
  int64_t rows = alloca.getType().getDimSize(0);
  int64_t perRow = *getStaticMemRefBytes(lr) + *getStaticMemRefBytes(step);
  OpCost cost;
  cost.unit = Unit::F32;
  cost.bytes = rows * perRow;
  // The stores into the table: the step's own, and those of the functions
  // it passes the table to (a layer's rows, msamp-gpu-outline-layers), once
  // per call, with the calls they are reached through (a value a function
  // stores may be one of its arguments).
  SmallVector<std::pair<memref::StoreOp, SmallVector<func::CallOp>>> stores;
  SymbolTableCollection symbols;
  SmallVector<func::CallOp> through;
  std::function<void(Value)> collect = [&](Value buffer) {
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      if (auto store = dyn_cast<memref::StoreOp>(user)) {
        stores.push_back({store, through});
        continue;
      }
      auto inner = dyn_cast<func::CallOp>(user);
      auto callee = inner ? symbols.lookupNearestSymbolFrom<func::FuncOp>(
                                inner, inner.getCalleeAttr())
                          : func::FuncOp();
      if (!callee || callee.isExternal())
        continue;
      through.push_back(inner);
      collect(callee.getArgument(use.getOperandNumber()));
      through.pop_back();
    }
  };
  collect(alloca.getResult());
  // `value` as the step has it: a function's argument is its call's operand.
  auto resolve = [](Value value, ArrayRef<func::CallOp> calls) {
    while (!calls.empty()) {
      auto arg = dyn_cast<BlockArgument>(value);
      if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
        break;
      value = func::CallOp(calls.back()).getOperand(arg.getArgNumber());
      calls = calls.drop_back();
    }
    return value;
  };
  for (auto &[store, calls] : stores) {
    IntegerAttr column;
    if (store.getIndices().size() != 2 ||
        !matchPattern(store.getIndices()[1], m_Constant(&column)))
      return fail("a table store without a constant column");
    if (column.getInt() == 0)
      continue; // the element count
    Value address = resolve(store.getValueToStore(), calls);
    if (auto cast = address.getDefiningOp<arith::IndexCastOp>())
      address = resolve(cast.getIn(), calls);
    auto pointer =
        address.getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>();
    if (!pointer) {
      if (!matchPattern(address, m_Zero()))
        return fail("a table entry that is neither a buffer nor 0");
      cost.bytes += 4; // an absent scale
      continue;
    }
    MemRefType type = tracedType(pointer.getSource());
    std::optional<int64_t> bytes =
        type ? getStaticMemRefBytes(type) : std::nullopt;
    if (!bytes)
      return fail("a table entry of unknown size");
    cost.bytes += *bytes;
    if (column.getInt() == 1)
      cost.flops += elementFlops("msamp_rt_adam_update") * numElements(type);
  }
  return cost;
}

FailureOr<OpCost> gpucost::libraryCallCost(func::CallOp call, bool &isGemm) {
  isGemm = false;
  if (call.getCallee() == "msamp_rt_adam_update_multi")
    return adamMultiCost(call);
  OpCost cost;
  SmallVector<MemRefType> types;
  for (Value operand : call.getOperands()) {
    if (!isa<BaseMemRefType>(operand.getType()))
      continue;
    MemRefType type = tracedType(operand);
    std::optional<int64_t> bytes;
    if (type)
      bytes = getStaticMemRefBytes(type);
    if (!bytes)
      return call.emitError("GPU cost model: cannot find the static type of "
                            "an operand of ")
             << call.getCallee();
    cost.bytes += *bytes;
    types.push_back(type);
  }
  StringRef callee = call.getCallee();
  isGemm = callee == "msamp_rt_gemm";
  cost.unit = Unit::F32;
  if (isGemm) {
    // (a, a_scale_inv, b, b_scale_inv, out, out_amax, a_dtype, b_dtype,
    //  out_dtype, flags); a is [.., K, M] with MSAMP_RT_GEMM_TRANSPOSE_A.
    IntegerAttr flags;
    if (types.size() != 6 || call.getNumOperands() != 10 ||
        !matchPattern(call.getOperand(9), m_Constant(&flags)))
      return call.emitError("GPU cost model: unexpected msamp_rt_gemm call");
    MemRefType a = types[0], out = types[4];
    int64_t rank = a.getRank();
    int64_t k = a.getDimSize((flags.getInt() & 0x1) ? rank - 2 : rank - 1);
    cost.flops = 2 * numElements(out) * k;
    Type element = a.getElementType();
    if (isa<Float8E4M3FNType, Float8E5M2Type>(element))
      cost.unit = Unit::FP8;
    else if (isa<BFloat16Type, Float16Type>(element))
      cost.unit = Unit::BF16;
    return cost;
  }
  if (!types.empty())
    cost.flops = elementFlops(callee) * numElements(types.front());
  // The fused just-in-time cast reads its input twice (once for the amax,
  // once to quantize with the scale that amax gives) and writes out_t
  // (operand 3) only with MSAMP_RT_QUANTIZE_JIT_TRANSPOSE (flags, operand
  // 10); without it out_t is a placeholder the runtime does not touch.
  if (callee == "msamp_rt_quantize_jit") {
    IntegerAttr flags;
    if (types.size() != 6 || call.getNumOperands() != 11 ||
        !matchPattern(call.getOperand(10), m_Constant(&flags)))
      return call.emitError(
          "GPU cost model: unexpected msamp_rt_quantize_jit call");
    cost.bytes += *getStaticMemRefBytes(types[0]);
    if (!(flags.getInt() & MSAMP_RT_QUANTIZE_JIT_TRANSPOSE))
      cost.bytes -= *getStaticMemRefBytes(types[3]);
  }
  return cost;
}

FailureOr<SmallVector<OpCost, 2>>
gpucost::gemmPackCosts(func::CallOp call, SmallVectorImpl<StringRef> &sides) {
  SmallVector<OpCost, 2> packs;
  sides.clear();
  if (call.getCallee() != "msamp_rt_gemm")
    return packs;
  // (a, a_scale_inv, b, b_scale_inv, out, out_amax, a_dtype, b_dtype,
  //  out_dtype, flags)
  IntegerAttr aType, bType, outType, flags;
  MemRefType a = tracedType(call.getOperand(0)),
             out = tracedType(call.getOperand(4));
  if (call.getNumOperands() != 10 || !a || !out || !a.hasStaticShape() ||
      !out.hasStaticShape() || out.getRank() < 2 ||
      !matchPattern(call.getOperand(6), m_Constant(&aType)) ||
      !matchPattern(call.getOperand(7), m_Constant(&bType)) ||
      !matchPattern(call.getOperand(8), m_Constant(&outType)) ||
      !matchPattern(call.getOperand(9), m_Constant(&flags)))
    return call.emitError("GPU cost model: unexpected msamp_rt_gemm call");
  ::msamp::runtime::cuda::GemmProblem p;
  p.aType = static_cast<int32_t>(aType.getInt());
  p.bType = static_cast<int32_t>(bType.getInt());
  p.outType = static_cast<int32_t>(outType.getInt());
  p.transA = flags.getInt() & MSAMP_RT_GEMM_TRANSPOSE_A;
  p.transB = flags.getInt() & MSAMP_RT_GEMM_TRANSPOSE_B;
  p.wantAmax = flags.getInt() & MSAMP_RT_GEMM_WRITE_AMAX;
  int64_t rank = out.getRank();
  p.m = out.getDimSize(rank - 2);
  p.n = out.getDimSize(rank - 1);
  p.k = a.getDimSize(p.transA ? a.getRank() - 2 : a.getRank() - 1);
  p.batch = p.m * p.n ? numElements(out) / (p.m * p.n) : 0;
  ::msamp::runtime::cuda::GemmPlan plan;
  const char *reason = nullptr;
  if (!::msamp::runtime::cuda::planGemm(p, plan, reason))
    return packs;
  const int64_t size = ::msamp::runtime::cuda::gemmDTypeSize(p.aType);
  auto add = [&](const ::msamp::runtime::cuda::PackStep &step, StringRef side) {
    if (!step.needed)
      return;
    OpCost cost;
    cost.bytes = p.batch * size *
                 (step.srcRows * step.srcCols + step.dstRows * step.dstCols);
    packs.push_back(cost);
    sides.push_back(side);
  };
  add(plan.packA, "a");
  add(plan.packB, "b");
  return packs;
}
