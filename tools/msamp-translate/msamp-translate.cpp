//===- msamp-translate.cpp - import models into the input contract -------===//
//
//   msamp-translate --import-onnx IN.onnx [-o OUT.mlir]
//                   [--optimizer-model OPT.onnx]
//                   [--weights-in W.safetensors] [--weights-out W.safetensors]
//                   [--dim NAME=SIZE ...]
//
// docs/Interfaces.md 6. Errors go to stderr as "msamp-translate: error: ..."
// naming the node, op type and reason, with exit status 1.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Target/ONNX/ImportONNX.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

/// The tool's own options: --help lists these, not the hundreds that
/// linking LLVM registers.
static cl::OptionCategory toolOptions("msamp-translate options");

static cl::opt<std::string> importOnnx("import-onnx", cl::cat(toolOptions),
                                       cl::desc("ONNX model to import"),
                                       cl::value_desc("model.onnx"));
static cl::opt<std::string> outputFile("o", cl::cat(toolOptions),
                                       cl::desc("output MLIR file"),
                                       cl::value_desc("file"), cl::init("-"));
static cl::opt<std::string>
    optimizerModel("optimizer-model", cl::cat(toolOptions),
                   cl::desc("ONNX Runtime optimizer model (msamp.optimizer)"),
                   cl::value_desc("opt.onnx"));
static cl::opt<std::string>
    weightsIn("weights-in", cl::cat(toolOptions),
              cl::desc("f32 param values for params without initializers"),
              cl::value_desc("w.safetensors"));
static cl::opt<std::string>
    weightsOut("weights-out", cl::cat(toolOptions),
               cl::desc("write every param's f32 value (msamp-run --init)"),
               cl::value_desc("w.safetensors"));
static cl::list<std::string> dims("dim", cl::cat(toolOptions),
                                  cl::desc("size of a symbolic dimension"),
                                  cl::value_desc("NAME=SIZE"));
static cl::opt<std::string> funcName("func-name", cl::cat(toolOptions),
                                     cl::desc("name of the generated function"),
                                     cl::init("main_graph"));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "msamp-translate") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv,
                              "msamp-translate: models to msamp's contract\n");
  if (importOnnx.empty())
    return fail("nothing to do: pass --import-onnx MODEL.onnx");

  msamp::onnx::ImportOptions options;
  options.optimizerModel = optimizerModel;
  options.weightsIn = weightsIn;
  options.weightsOut = weightsOut;
  options.funcName = funcName;
  for (const std::string &d : dims) {
    auto [name, size] = llvm::StringRef(d).split('=');
    int64_t value;
    if (name.empty() || size.getAsInteger(10, value) || value < 0)
      return fail("--dim expects NAME=SIZE with SIZE >= 0; got '" + d + "'");
    options.dims[name.str()] = value;
  }

  MLIRContext context;
  auto module = msamp::onnx::importONNXFile(importOnnx, &context, options);
  if (!module)
    return fail(llvm::toString(module.takeError()));

  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  (*module)->print(output->os(), OpPrintingFlags().printGenericOpForm(false));
  output->os() << "\n";
  output->keep();
  return 0;
}
