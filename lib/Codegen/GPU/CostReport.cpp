//===- CostReport.cpp - gpu_cost.json -------------------------------------===//
//
// Part of the msamp project.
//
// After kernel outlining the host code of the step is a sequence of
// gpu.launch_func ops and msamp_rt_* calls: what one step runs on the GPU.
// Each launch is paired with the cost msamp-gpu-kernel-costs recorded at
// the linalg level, each call costed from its operands, and the whole
// written as gpu_cost.json (docs/Interfaces.md 4, docs/GPU.md "The cost
// report") with the model of MSAMP/Codegen/GPU/CostModel.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferPlanAttr.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/GraphCheck.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

#include <functional>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUCOSTREPORT
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;
using namespace mlir::msamp::gpucost;

namespace {

struct Entry {
  std::string name;
  std::string op;
  OpCost cost;
  double seconds;
  bool fp8Gemm = false;
};

std::string formatDouble(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.6g", value);
  return text;
}

void printEntry(raw_ostream &os, const Entry &e, bool last) {
  os << "    {\"name\": \"" << e.name << "\", \"op\": \"" << e.op
     << "\", \"unit\": \"" << unitName(e.cost.unit)
     << "\", \"flops\": " << e.cost.flops << ", \"bytes\": " << e.cost.bytes
     << ", \"time_us\": " << formatDouble(e.seconds * 1e6) << "}"
     << (last ? "\n" : ",\n");
}

int64_t getInt(DictionaryAttr dict, StringRef key) {
  auto attr = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
  return attr ? attr.getInt() : 0;
}

/// Removes the cost metadata msamp-gpu-kernel-costs put into locations
/// (every op of a kernel carries it), keeping the locations themselves.
void stripCostLocations(ModuleOp module) {
  AttrTypeReplacer replacer;
  replacer.addReplacement([](FusedLoc loc) -> std::optional<Attribute> {
    auto metadata = dyn_cast_or_null<DictionaryAttr>(loc.getMetadata());
    if (!metadata || !metadata.get(kKernelCostAttr))
      return std::nullopt;
    return FusedLoc::get(loc.getContext(), loc.getLocations());
  });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/false,
                                        /*replaceLocs=*/true,
                                        /*replaceTypes=*/false);
}

struct CostReportPass : msamp::impl::MSAMPGPUCostReportBase<CostReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Entry> launches, calls, packs;
    llvm::StringSet<> distinct;
    int64_t hostSyncs = 0, managedAllocations = 0;
    DictionaryAttr floor;
    bool failedAny = false;
    // A function the module defines and calls (a layer outlined by
    // msamp-gpu-outline-layers) counts where it is called, once per call, in
    // the order an inlined copy would run: the report is that of the step
    // with every call inlined.
    SymbolTable symbols(module);
    llvm::DenseSet<Operation *> called;
    module.walk([&](func::CallOp call) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
          callee && !callee.isExternal())
        called.insert(callee);
    });
    std::function<void(Operation *)> visit = [&](Operation *root) {
      root->walk([&](Operation *op) {
        if (auto call = dyn_cast<func::CallOp>(op)) {
          auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
          if (callee && !callee.isExternal()) {
            visit(callee);
            return;
          }
        }
        if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
          // gpu-to-llvm synchronizes the stream after a launch without an
          // async token (msamp-gpu-async-launches leaves none).
          if (!launch.getAsyncToken())
            ++hostSyncs;
          std::string name = (launch.getKernelModuleName().getValue() +
                              "::" + launch.getKernelName().getValue())
                                 .str();
          distinct.insert(name);
          DictionaryAttr cost = kernelCostOf(launch.getLoc());
          if (!cost) {
            launch.emitError("msamp-gpu-cost-report: this launch has no cost "
                             "(msamp-gpu-kernel-costs tags every linalg op; "
                             "did a pass make a kernel of something else?)");
            failedAny = true;
            return;
          }
          Entry e;
          e.name = name;
          e.op = cost.getAs<StringAttr>("op").getValue().str();
          e.cost.flops = getInt(cost, "flops");
          e.cost.bytes = getInt(cost, "bytes");
          e.cost.unit = Unit::F32;
          e.seconds = predictedSeconds(e.cost);
          launches.push_back(std::move(e));
          return;
        }
        // A buffer msamp-gpu-static-arena left to the allocator is managed
        // memory (msamp_rt_gpu_alloc; from the runtime's per-size cache
        // after the first step).
        if (isa<memref::AllocOp>(op)) {
          ++managedAllocations;
          return;
        }
        // A blocking wait (msamp-gpu-async-launches) synchronizes.
        if (auto wait = dyn_cast<gpu::WaitOp>(op)) {
          if (!wait.getAsyncToken())
            ++hostSyncs;
          return;
        }
        auto call = dyn_cast<func::CallOp>(op);
        // The arenas' bases (msamp-gpu-static-arena) are no library work.
        if (!call || !call.getCallee().starts_with("msamp_rt_") ||
            call.getCallee().starts_with("msamp_rt_gpu_"))
          return;
        bool isGemm = false;
        FailureOr<OpCost> cost = libraryCallCost(call, isGemm);
        if (failed(cost)) {
          failedAny = true;
          return;
        }
        Entry e;
        e.name = call.getCallee().str();
        e.op = isGemm ? "gemm" : "runtime";
        e.cost = *cost;
        e.seconds = predictedSeconds(e.cost);
        e.fp8Gemm = isGemm && cost->unit == Unit::FP8;
        calls.push_back(std::move(e));
        // The GEMM's own pack launches (a transposed or padded FP8 operand).
        SmallVector<StringRef> sides;
        FailureOr<SmallVector<OpCost, 2>> packCosts =
            gemmPackCosts(call, sides);
        if (failed(packCosts)) {
          failedAny = true;
          return;
        }
        for (auto [pack, side] : llvm::zip_equal(*packCosts, sides)) {
          Entry p;
          p.name = ("msamp_rt_gemm pack " + side).str();
          p.op = "gemm_pack";
          p.cost = pack;
          p.seconds = predictedSeconds(p.cost);
          packs.push_back(std::move(p));
        }
      });
    };
    for (auto func : module.getOps<func::FuncOp>()) {
      if (auto f = func->getAttrOfType<DictionaryAttr>(kStepFloorAttr)) {
        floor = f;
        func->removeAttr(kStepFloorAttr);
      }
      if (!called.contains(func))
        visit(func);
    }
    stripCostLocations(module);
    if (failedAny)
      return signalPassFailure();
    if (file.empty())
      return;

    double predicted = 0, fp8Seconds = 0, gemmFloor = 0;
    int64_t flops = 0, bytes = 0;
    for (const Entry &e : launches) {
      predicted += e.seconds;
      flops += e.cost.flops;
      bytes += e.cost.bytes;
    }
    for (const Entry &e : packs) {
      predicted += e.seconds;
      bytes += e.cost.bytes;
    }
    for (const Entry &e : calls) {
      predicted += e.seconds;
      flops += e.cost.flops;
      bytes += e.cost.bytes;
      if (e.fp8Gemm)
        fp8Seconds += e.seconds;
      if (e.op == "gemm")
        gemmFloor += static_cast<double>(e.cost.flops) / peakFlops(e.cost.unit);
    }
    int64_t stateBytes = getInt(floor, "state_bytes");
    int64_t inputBytes = getInt(floor, "input_bytes");
    int64_t keptBytes = getInt(floor, "kept_bytes");
    int64_t minimalBytes = 2 * stateBytes + 2 * keptBytes + inputBytes;
    double memoryFloor = static_cast<double>(minimalBytes) / kMemoryBandwidth;

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(file, &error);
    if (!out) {
      module.emitError("msamp-gpu-cost-report: ") << error;
      return signalPassFailure();
    }
    raw_ostream &os = out->os();
    os << "{\n  \"model\": {\"fp8_tflops\": "
       << formatDouble(peakFlops(Unit::FP8) / 1e12)
       << ", \"bf16_tflops\": " << formatDouble(peakFlops(Unit::BF16) / 1e12)
       << ", \"f32_tflops\": " << formatDouble(peakFlops(Unit::F32) / 1e12)
       << ", \"compute_efficiency\": " << formatDouble(kComputeEfficiency)
       << ", \"memory_tb_per_s\": " << formatDouble(kMemoryBandwidth / 1e12)
       << ", \"memory_efficiency\": " << formatDouble(kMemoryEfficiency)
       << ", \"launch_us\": " << formatDouble(kLaunchSeconds * 1e6) << "},\n";
    os << "  \"kernels\": " << launches.size() << ",\n";
    os << "  \"distinct_kernels\": " << distinct.size() << ",\n";
    os << "  \"library_calls\": " << calls.size() << ",\n";
    os << "  \"host_syncs\": " << hostSyncs << ",\n";
    os << "  \"managed_allocations\": " << managedAllocations << ",\n";
    // Why the step cannot be replayed as a CUDA graph (msamp-gpu-graph-check
    // ran before): "" when it can.
    auto blocker = module->getAttrOfType<StringAttr>(kCudaGraphBlockerAttr);
    os << "  \"cuda_graph_blocker\": "
       << llvm::json::Value(blocker ? blocker.getValue().str() : "") << ",\n";
    // The static arenas the step's buffers are views of.
    auto plan = module->getAttrOfType<DictionaryAttr>(kBufferPlanAttr);
    os << "  \"arena_bytes\": " << getInt(plan, kPlanArenaBytes) << ",\n";
    os << "  \"arena_peak_bytes\": " << getInt(plan, kPlanArenaPeakBytes)
       << ",\n";
    os << "  \"arena_buffers\": " << getInt(plan, kPlanArenaBuffers) << ",\n";
    os << "  \"host_arena_bytes\": " << getInt(plan, kPlanHostArenaBytes)
       << ",\n";
    os << "  \"host_arena_buffers\": " << getInt(plan, kPlanHostArenaBuffers)
       << ",\n";
    os << "  \"flops\": " << flops << ",\n";
    os << "  \"bytes\": " << bytes << ",\n";
    os << "  \"predicted_ms\": " << formatDouble(predicted * 1e3) << ",\n";
    os << "  \"floor_ms\": "
       << formatDouble(std::max(gemmFloor, memoryFloor) * 1e3) << ",\n";
    os << "  \"fp8_gemm_share\": "
       << formatDouble(predicted > 0 ? fp8Seconds / predicted : 0) << ",\n";
    os << "  \"floor\": {\"gemm_ms\": " << formatDouble(gemmFloor * 1e3)
       << ", \"memory_ms\": " << formatDouble(memoryFloor * 1e3)
       << ", \"minimal_bytes\": " << minimalBytes
       << ", \"state_bytes\": " << stateBytes
       << ", \"kept_for_backward_bytes\": " << keptBytes
       << ", \"input_bytes\": " << inputBytes << "},\n";
    os << "  \"launches\": [\n";
    for (size_t i = 0; i < launches.size(); ++i)
      printEntry(os, launches[i], i + 1 == launches.size());
    os << "  ],\n  \"calls\": [\n";
    for (size_t i = 0; i < calls.size(); ++i)
      printEntry(os, calls[i], i + 1 == calls.size());
    // Launches inside the GEMM calls: not generated kernels, not calls.
    os << "  ],\n  \"gemm_pack_launches\": " << packs.size()
       << ",\n  \"gemm_packs\": [\n";
    for (size_t i = 0; i < packs.size(); ++i)
      printEntry(os, packs[i], i + 1 == packs.size());
    os << "  ]\n}\n";
    out->keep();
  }
};

} // namespace
