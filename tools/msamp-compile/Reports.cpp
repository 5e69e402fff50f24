//===- Reports.cpp - the reports msamp-compile writes -----------*- C++ -*-===//

#include "Reports.h"

#include "MSAMP/Codegen/BufferPlanAttr.h"
#include "MSAMP/Support/WriteFile.h"
#include "MSAMP/Transforms/GemmTable.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::msamp;

static LogicalResult writeOrReport(StringRef path, StringRef contents) {
  std::string error;
  if (succeeded(writeFileAtomically(path, contents, error)))
    return success();
  llvm::errs() << "msamp-compile: error: " << error << "\n";
  return failure();
}

LogicalResult mlir::msamp::writeGemmTable(func::FuncOp step, StringRef path) {
  std::string contents;
  llvm::raw_string_ostream os(contents);
  printGemmTableJSON(step, os);
  return writeOrReport(path, contents);
}

DictionaryAttr mlir::msamp::takeBufferPlan(ModuleOp module) {
  auto plan = module->getAttrOfType<DictionaryAttr>(kBufferPlanAttr);
  module->removeAttr(kBufferPlanAttr);
  return plan;
}

/// "file.mlir":12:3 for a file location (the op that allocates at the peak
/// came from there); other locations as MLIR prints them, without loc(...).
static std::string describeLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  StringRef inner = text;
  if (inner.consume_front("loc(") && inner.consume_back(")"))
    return inner.str();
  return text;
}

LogicalResult mlir::msamp::writeMemoryReport(const MemoryReport &report,
                                             DictionaryAttr plan,
                                             StringRef path) {
  std::string contents;
  llvm::raw_string_ostream os(contents);
  auto integer = [&](StringRef key) -> int64_t {
    auto attr = plan.getAs<IntegerAttr>(key);
    return attr ? attr.getInt() : 0;
  };
  printMemoryReportJSON(report, os, [&](llvm::json::OStream &json) {
    if (!plan)
      return;
    json.attribute("peak_bytes", integer(kPlanPeakBytes));
    json.attributeBegin("peak");
    json.rawValue([&](llvm::raw_ostream &line) {
      llvm::json::OStream entry(line);
      entry.object([&] {
        entry.attribute("session_bytes", integer(kPlanSessionBytes));
        entry.attribute("step_bytes", integer(kPlanStepBytes));
        entry.attribute("buffers", integer(kPlanBuffers));
        // The static arena the plan laid out (a GPU step runs from it).
        for (StringRef key :
             {kPlanArenaBytes, kPlanArenaPeakBytes, kPlanArenaBuffers,
              kPlanHostArenaBytes, kPlanHostArenaBuffers})
          if (plan.get(key))
            entry.attribute(key, integer(key));
        auto at = plan.getAs<LocationAttr>(kPlanAt);
        entry.attribute("at", at ? describeLocation(at) : std::string());
      });
    });
    json.attributeEnd();
  });
  return writeOrReport(path, contents);
}
