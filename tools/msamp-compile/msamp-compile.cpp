//===- msamp-compile.cpp - ahead-of-time compiler for train steps -*- C++
//-*-===//
//
//   msamp-compile MODEL.mlir [--opt-level LEVEL] [--recipe FILE.yaml]
//                 [--pipeline-options "..."]
//                 [--target cpu|cuda [--chip sm_90|sm_89]] -o OUTDIR
//
// LEVEL is O0-O3 or a reference row (amp-bf16, amp-fp16, te): the list of
// include/MSAMP/Support/Levels.h.
//
// Writes OUTDIR/train_step.mlir (the compiled step on tensors, for humans and
// tests), OUTDIR/manifest.json (the state the runtime allocates),
// OUTDIR/memory_report.json (bytes per category and the peak of the static
// buffer plan), OUTDIR/gemms.json (every GEMM's formats, and why it stayed in
// high precision; both docs/Interfaces.md 4, tools/msamp-compile/Reports.h) and
// OUTDIR/train_step.so (native code for the host, linked with ld.lld; it
// calls the runtime's C ABI and is loaded by the runtime with dlopen). MODEL
// is a forward_backward graph (compiled at --opt-level) or an already
// compiled train step. msamp-run and the Python package drive this tool; the
// runtime itself never links MLIR or LLVM.
//
// --target cuda lowers with --msamp-lower-to-gpu instead: elementwise and
// reduction linalg become GPU kernels whose PTX is embedded in
// train_step.so (and also written to OUTDIR/kernels/<module>.ptx, for
// ptxas and for humans); the host code calls the runtime's GPU wrappers
// (docs/RuntimeABI.md 13) and exports msamp_train_step_target = "cuda"; it
// also writes OUTDIR/gpu_cost.json, the step's predicted GPU time
// (--msamp-gpu-cost-report, docs/GPU.md "The cost report").
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferPlanAttr.h"
#include "MSAMP/Codegen/GPU/GPURuntimeSymbols.h"
#include "MSAMP/Codegen/GPU/GraphCheck.h"
#include "MSAMP/Codegen/GPU/LaunchAllocas.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Registration/InitAll.h"
#include "MSAMP/Support/AccelerateRecipe.h"
#include "MSAMP/Support/Levels.h"
#include "MSAMP/Support/ParseInput.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "OptimizeModule.h"
#include "ParallelCodegen.h"
#include "Reports.h"
#include "UndefinedSymbols.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "MSAMP/Support/HostCpuFeatures.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Pass.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
namespace cl = llvm::cl;

/// The tool's own options: --help lists these, not the hundreds that
/// linking LLVM registers.
static cl::OptionCategory toolOptions("msamp-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::cat(toolOptions),
                                      cl::desc("<model.mlir>"), cl::Required);
static cl::opt<std::string> outputDir("o", cl::cat(toolOptions),
                                      cl::desc("output directory"),
                                      cl::value_desc("dir"), cl::Required);
static cl::opt<std::string>
    optLevel("opt-level", cl::cat(toolOptions),
             cl::desc("O0 (f32), O1, O2 or O3 (one rank's program: "
                      "--pipeline-options \"world-size=N rank=R\"); the "
                      "reference rows amp-bf16, amp-fp16 and te"),
             cl::init("O2"));
static cl::opt<std::string>
    pipelineOptions("pipeline-options", cl::cat(toolOptions),
                    cl::desc("options of the --msamp-oN pipeline, e.g. "
                             "\"scale-kind=exact amax-history-len=1024\""),
                    cl::init(""));
static cl::opt<std::string>
    recipeFile("recipe", cl::cat(toolOptions),
               cl::desc("an Accelerate config (mixed_precision, fp8_config) "
                        "that sets the level and its pipeline options"),
               cl::value_desc("FILE.yaml"), cl::init(""));
static cl::opt<std::string>
    target("target", cl::cat(toolOptions),
           cl::desc("where the step's elementwise code runs: cpu, "
                    "or cuda (GPU kernels, PTX embedded); "
                    "cuda-host-emulation (tests) runs the GPU pipeline's "
                    "loop nests on the host"),
           cl::init("cpu"));
static cl::opt<std::string>
    chip("chip", cl::cat(toolOptions),
         cl::desc("GPU architecture for --target cuda: sm_90 or sm_89"),
         cl::init("sm_90"));
static cl::opt<std::string> hostCpu(
    "host-cpu", cl::cat(toolOptions),
    cl::desc("CPU the step's host code is generated for: native (this "
             "machine's CPU and features) or an LLVM CPU name, e.g. "
             "x86-64-v3 for a step that runs on any AVX2 machine (the GPU "
             "kit); manifest.json records its features and a session on a "
             "CPU without one of them refuses the step"),
    cl::init("native"));
static cl::opt<bool> emitLLVMIR("emit-llvm", cl::cat(toolOptions),
                                cl::desc("also write train_step.ll"),
                                cl::init(false));
static cl::opt<bool>
    dedupe("dedupe", cl::cat(toolOptions),
           cl::desc("compile repeated layers (CPU) and each loop nest as "
                    "functions, structurally identical ones (GPU: kernels) "
                    "once; "
                    "=false keeps the step one function (for comparisons)"),
           cl::init(true));
static cl::opt<bool> outlineTensors(
    "gpu-outline-tensors", cl::cat(toolOptions),
    cl::desc("on the GPU targets, compile each repeated layer once: "
             "outlined before bufferization, its buffers in a frame its "
             "caller passes (docs/GPU.md; the default except for a "
             "ZeRO-sharded O3 step); =false lowers the step inline and "
             "outlines only its host code"),
    cl::init(true));
static cl::opt<unsigned>
    jobs("j", cl::cat(toolOptions), cl::Prefix,
         cl::desc("threads for LLVM code generation (default: the cores "
                  "available); the output is the same for every value"),
         cl::value_desc("N"), cl::init(0));

static cl::opt<bool> verifyEach(
    "verify-each", cl::cat(toolOptions),
    cl::desc("run the IR verifier after every MLIR pass (for debugging a "
             "pass; off: the parsed input, the compiled step and the IR "
             "handed to translation are verified)"),
    cl::init(false));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "msamp-compile: error: " << message << "\n";
  return 1;
}

/// Runs a textual list of passes (no builtin.module(...) anchor) on `module`,
/// timing each pass under `timing` (--time-passes). MLIR's pass manager
/// verifies the IR after every pass by default, which was 12% of a 24-layer
/// compile and grows with the step (docs/Benchmarks.md "Sixth round"):
/// unless --verify-each, only the pipeline's result is verified, so a pass
/// that breaks the IR is still an error here (named less precisely; rerun
/// with --verify-each to find it), never a broken train_step.so.
static LogicalResult runPipeline(ModuleOp module, StringRef pipeline,
                                 TimingScope &timing,
                                 bool verifyResult = true) {
  auto pm = PassManager::on<ModuleOp>(module->getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  pm.enableTiming(timing);
  pm.enableVerifier(verifyEach);
  if (failed(pm.run(module)))
    return failure();
  if (verifyEach || !verifyResult)
    return success();
  TimingScope verifyTimer = timing.nest("verify the result");
  return verify(module);
}

static LogicalResult writeText(StringRef path,
                               llvm::function_ref<void(raw_ostream &)> fn) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "msamp-compile: error: " << error << "\n";
    return failure();
  }
  fn(file->os());
  file->keep();
  return success();
}

/// Adds "object": {"file", "bytes", "sha256"} of train_step.so and
/// "host_cpu": {"name", "features"} (the CPU its host code is for) to the
/// manifest, which the --msamp-write-manifest pass wrote before the object
/// existed: a session refuses a truncated or replaced object before mapping
/// it (a truncated one was a SIGBUS at its first call; RuntimeABI.md 12).
/// Inserted as text before the closing brace, keeping the pass's layout.
/// With `gpuArena` (a --target cuda step: its static arenas' sizes from the
/// buffer plan), also "gpu_arena": {"device_bytes", "host_bytes"}, which
/// the session checks against the free device memory and reserves.
static LogicalResult recordObject(StringRef manifestPath, StringRef soPath,
                                  StringRef cpuName,
                                  const std::vector<std::string> &cpuFeatures,
                                  DictionaryAttr gpuArena) {
  auto so = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
  auto manifest = llvm::MemoryBuffer::getFile(manifestPath);
  if (!so || !manifest) {
    llvm::errs() << "msamp-compile: error: cannot read "
                 << (so ? manifestPath : soPath) << ": "
                 << (so ? manifest.getError() : so.getError()).message()
                 << "\n";
    return failure();
  }
  StringRef bytes = (*so)->getBuffer();
  std::string sha256 =
      llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)),
                  /*LowerCase=*/true);
  // A copy: the buffer may be a mapping of the file rewritten below (a
  // mapped file truncated under its reader is a SIGBUS).
  std::string copy = (*manifest)->getBuffer().rtrim().str();
  StringRef text = copy;
  if (!text.ends_with("}")) {
    llvm::errs() << "msamp-compile: error: " << manifestPath
                 << " is not a JSON object\n";
    return failure();
  }
  return writeText(manifestPath, [&](raw_ostream &os) {
    os << text.drop_back().rtrim() << ",\n  \"object\": {\"file\": "
       << "\"train_step.so\", \"bytes\": " << bytes.size() << ", \"sha256\": \""
       << sha256 << "\"},\n  \"host_cpu\": {\"name\": \"" << cpuName
       << "\", \"features\": [";
    for (size_t i = 0; i < cpuFeatures.size(); ++i)
      os << (i ? ", " : "") << "\"" << cpuFeatures[i] << "\"";
    os << "]}";
    if (gpuArena) {
      auto bytes = [&](StringRef key) {
        auto attr = gpuArena.getAs<IntegerAttr>(key);
        return attr ? attr.getInt() : 0;
      };
      os << ",\n  \"gpu_arena\": {\"device_bytes\": "
         << bytes(msamp::kPlanArenaBytes)
         << ", \"host_bytes\": " << bytes(msamp::kPlanHostArenaBytes) << "}";
    }
    os << "\n}\n";
  });
}

/// Finds ld.lld: next to the LLVM we were built against, then on PATH.
static std::string findLinker() {
  for (const char *candidate :
       {"/usr/lib/llvm-22/bin/ld.lld", "/usr/bin/ld.lld-22"})
    if (llvm::sys::fs::can_execute(candidate))
      return candidate;
  if (auto path = llvm::sys::findProgramByName("ld.lld"))
    return *path;
  return "";
}

/// Writes the PTX of every gpu.binary to OUTDIR/kernels/<name>.ptx.
static LogicalResult writeKernels(ModuleOp module, StringRef dir) {
  llvm::SmallString<256> kernelDir(dir);
  llvm::sys::path::append(kernelDir, "kernels");
  if (auto ec = llvm::sys::fs::create_directories(kernelDir)) {
    llvm::errs() << "msamp-compile: error: cannot create " << kernelDir << ": "
                 << ec.message() << "\n";
    return failure();
  }
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      llvm::SmallString<256> path(kernelDir);
      llvm::sys::path::append(path, binary.getSymName() + ".ptx");
      if (failed(writeText(path, [&](raw_ostream &os) {
            os << object.getObject().getValue();
          })))
        return failure();
    }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv, "msamp ahead-of-time compiler for training steps\n");
  if (!recipeFile.empty()) {
    // The recipe decides the level; an --opt-level given too must agree.
    msamp_recipe::AccelerateRecipe recipe;
    std::optional<std::string> level;
    if (optLevel.getNumOccurrences())
      level = optLevel;
    std::string options = pipelineOptions, error;
    if (!msamp_recipe::loadAccelerateRecipe(recipeFile, recipe, error)) {
      llvm::errs() << error << "\n";
      return 1;
    }
    if (!msamp_recipe::mergeRecipe(recipe, recipeFile, level, options, error))
      return fail(error);
    llvm::outs() << msamp_recipe::describeRecipe(recipe, recipeFile);
    optLevel = *level;
    pipelineOptions = options;
  }
  const msamp_levels::LevelInfo *level = msamp_levels::lookupLevel(optLevel);
  if (!level)
    return fail("--opt-level must be " + msamp_levels::levelNames() +
                ", got '" + optLevel + "'");
  std::string fixed = msamp_levels::fixedOptionIn(*level, pipelineOptions);
  if (!fixed.empty())
    return fail("--pipeline-options sets '" + fixed + "', which --opt-level " +
                optLevel + " fixes (" + std::string(level->options) + ")");
  if (target != "cpu" && target != "cuda" && target != "cuda-host-emulation")
    return fail("--target must be cpu or cuda, got '" + target + "'");
  if (chip != "sm_90" && chip != "sm_89")
    return fail("--chip must be sm_90 or sm_89, got '" + chip + "'");

  DialectRegistry registry;
  msamp::registerAllMSAMPDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  msamp::registerGPUTargetTranslations(registry);
  msamp::registerAllMSAMPPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // --time-passes (LLVM's own option, which also times LLVM's code
  // generation passes): one tree of phases, the MLIR passes nested in
  // theirs, printed to stderr when `timing` goes out of scope.
  DefaultTimingManager timing;
  timing.setEnabled(llvm::TimePassesIsEnabled);
  timing.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope root = timing.getRootScope();
  TimingScope parseTimer = root.nest("parse");

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = msamp::parseModuleSafely(sourceMgr, &context);
  if (!module)
    return 1;
  parseTimer.stop();

  if (msamp::findFunctionOfKind(*module, msamp::kForwardBackward)) {
    std::string pipeline = msamp_levels::levelPipeline(*level, pipelineOptions);
    TimingScope msampTimer = root.nest("msamp pipeline (" + optLevel + ")");
    if (failed(runPipeline(*module, pipeline, msampTimer)))
      return 1;
  } else if (!msamp::findFunctionOfKind(*module, msamp::kTrainStep)) {
    return fail(inputFile + " has neither a forward_backward graph nor a "
                            "compiled train_step");
  }

  if (auto ec = llvm::sys::fs::create_directories(outputDir))
    return fail("cannot create " + outputDir + ": " + ec.message());
  llvm::SmallString<256> mlirPath(outputDir), manifestPath(outputDir),
      objPath(outputDir), soPath(outputDir), llPath(outputDir);
  llvm::sys::path::append(mlirPath, "train_step.mlir");
  llvm::sys::path::append(manifestPath, "manifest.json");
  // Code generation writes train_step.<partition>.o (ParallelCodegen.h).
  llvm::sys::path::append(objPath, "train_step");
  llvm::sys::path::append(soPath, "train_step.so");
  llvm::sys::path::append(llPath, "train_step.ll");
  llvm::SmallString<256> memoryPath(outputDir), gemmsPath(outputDir);
  llvm::sys::path::append(memoryPath, "memory_report.json");
  llvm::sys::path::append(gemmsPath, "gemms.json");
  llvm::SmallString<256> costPath(outputDir);
  llvm::sys::path::append(costPath, "gpu_cost.json");
  TimingScope writeTimer = root.nest("train_step.mlir and manifest");
  // The pass manager verified the module after the msamp pipeline: the
  // printer need not verify it again (a walk of every op, growing with
  // depth).
  if (failed(writeText(mlirPath, [&](raw_ostream &os) {
        module->print(os, OpPrintingFlags().assumeVerified());
      })))
    return 1;
  if (failed(runPipeline(
          *module,
          "msamp-write-manifest{file=" + manifestPath.str().str() + "}",
          writeTimer, /*verifyResult=*/false)))
    return 1;
  // The tensor-level facts, before lowering erases them; the memory report
  // is written once the buffer plan has added its peak.
  func::FuncOp step = msamp::findFunctionOfKind(*module, msamp::kTrainStep);
  FailureOr<msamp::MemoryReport> memoryReport =
      msamp::computeMemoryReport(step);
  if (failed(memoryReport) || failed(msamp::writeGemmTable(step, gemmsPath)))
    return 1;
  writeTimer.stop();
  const bool cuda = target == "cuda";
  // cuda-host-emulation (tests): the GPU pipeline's buffers and loop nests,
  // run on the host by the CPU backend (--msamp-lower-to-gpu's
  // host-emulation option).
  std::string dedupeOption = dedupe ? "true" : "false";
  // A ZeRO-sharded step (O3) keeps its layers inline unless the flag is
  // given: outlined, the sharded states' gathers and scatters cost about
  // 20 more copy kernels per layer (benchmark LM at 4 layers: 933 launches
  // against 854, predicted_ms +3%; docs/GPU.md "Each layer lowered once").
  bool outline = outlineTensors.getNumOccurrences()
                     ? outlineTensors
                     : !step->hasAttr(msamp::kZeroAttr);
  std::string gpuOutline =
      std::string(" outline-tensors=") + (outline ? "true" : "false");
  std::string pipeline =
      cuda ? "msamp-lower-to-gpu{chip=" + chip + " dedupe=" + dedupeOption +
                 gpuOutline + " cost-report=" + costPath.str().str() + "}"
      : target == "cuda-host-emulation"
          ? "msamp-lower-to-gpu{host-emulation=true dedupe=" + dedupeOption +
                gpuOutline + "}"
          : "msamp-lower-to-llvm{outline-loop-nests=" + dedupeOption + "}";
  TimingScope lowerTimer =
      root.nest("lowering (bufferization, loops, LLVM dialect)");
  if (failed(runPipeline(*module, pipeline, lowerTimer)))
    return 1;
  lowerTimer.stop();
  DictionaryAttr bufferPlan = msamp::takeBufferPlan(*module);
  std::string graphBlocker;
  if (auto attr =
          (*module)->getAttrOfType<StringAttr>(msamp::kCudaGraphBlockerAttr)) {
    graphBlocker = attr.getValue().str();
    (*module)->removeAttr(msamp::kCudaGraphBlockerAttr);
  }
  // Not an error (the step is correct), but slower, and the one case left
  // where the session uses managed memory (docs/GPU.md "Session buffers in
  // device memory"): say so rather than fall back silently.
  if (cuda && !graphBlocker.empty())
    llvm::errs() << "msamp-compile: warning: the step cannot run as a CUDA "
                    "graph: "
                 << graphBlocker
                 << "; the session runs it eagerly, its buffers in CUDA "
                    "managed memory\n";
  if (failed(msamp::writeMemoryReport(*memoryReport, bufferPlan, memoryPath)))
    return 1;
  if (cuda && failed(writeKernels(*module, outputDir)))
    return 1;

  // LLVM IR for the host, optimized at -O3 (loop vectorization included).
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  TimingScope translateTimer = root.nest("translation to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "train_step");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  if (cuda) {
    if (auto err = msamp::renameGPUHostCalls(*llvmModule))
      return fail(llvm::toString(std::move(err)));
    // Each launch's argument buffers in the -O0 step's frame, not pushed
    // on the stack launch after launch (LaunchAllocas.h).
    msamp::hoistLaunchAllocas(*llvmModule);
    // The session allocates a GPU step's buffers in device memory.
    auto *tag = llvm::ConstantDataArray::getString(llvmContext, "cuda");
    new llvm::GlobalVariable(*llvmModule, tag->getType(), /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage, tag,
                             msamp::kTrainStepTargetSymbol);
    // Whether the session may replay the step as a CUDA graph.
    auto blocker =
        llvm::ConstantDataArray::getString(llvmContext, graphBlocker);
    new llvm::GlobalVariable(*llvmModule, blocker->getType(),
                             /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage, blocker,
                             msamp::kTrainStepGraphBlockerSymbol);
  }
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target)
    return fail("no LLVM target for " + triple.str() + ": " + lookupError);
  // The host CPU: this machine's with its features, or a named CPU with
  // the features it implies (an unknown name would only be a warning of
  // LLVM's, and the code generated for its generic CPU).
  std::string cpuName = hostCpu;
  llvm::SubtargetFeatures features;
  if (hostCpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
  } else {
    std::unique_ptr<llvm::MCSubtargetInfo> probe(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!probe || !probe->isCPUStringValid(hostCpu))
      return fail("--host-cpu '" + hostCpu + "' is not a CPU of " +
                  triple.str() + " (native, or an LLVM CPU name such as " +
                  "x86-64-v3)");
  }
  // The step's global constructors (a CUDA step registers its kernel
  // modules in them) must be in .init_array: LLVM's default, .ctors, is run
  // only by crtbegin.o, which the step's link leaves out, so glibc never
  // called them and every kernel launch was skipped (first GPU run).
  llvm::TargetOptions targetOptions;
  targetOptions.UseInitArray = true;
  auto makeMachine = [&] {
    return std::unique_ptr<llvm::TargetMachine>(
        target->createTargetMachine(triple, cpuName, features.getString(),
                                    targetOptions, llvm::Reloc::PIC_));
  };
  std::unique_ptr<llvm::TargetMachine> machine = makeMachine();
  // What the session checks before loading the step (HostCpuFeatures.h).
  std::vector<std::string> cpuFeatures;
  if (const llvm::MCSubtargetInfo *sti = machine->getMCSubtargetInfo())
    for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
      if (sti->getFeatureBits().test(kv.Value) &&
          msamp_cpu::isCheckedCpuFeature(kv.Key))
        cpuFeatures.push_back(kv.Key);
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  translateTimer.stop();
  // The GPU target's host code only enqueues work (OptimizeModule.h).
  TimingScope optimizeTimer =
      root.nest(cuda ? "LLVM optimization (-O0)" : "LLVM optimization (-O3)");
  if (auto err = msamp::optimizeModule(*llvmModule, *machine,
                                       /*hostGlue=*/cuda))
    return fail("LLVM optimization failed: " + llvm::toString(std::move(err)));
  optimizeTimer.stop();
  if (emitLLVMIR && failed(writeText(llPath, [&](raw_ostream &os) {
        llvmModule->print(os, nullptr);
      })))
    return 1;

  TimingScope codegenTimer = root.nest("code generation");
  unsigned threads =
      jobs ? jobs : llvm::hardware_concurrency().compute_thread_count();
  // LLVM's per-pass timers are global, not per thread: reported with -j1.
  if (threads > 1)
    llvm::TimePassesIsEnabled = false;
  auto objPaths = msamp::emitObjectsInParallel(*llvmModule, objPath.str(),
                                               threads, makeMachine);
  if (!objPaths)
    return fail("code generation failed: " +
                llvm::toString(objPaths.takeError()));
  codegenTimer.stop();
  TimingScope linkTimer = root.nest("linking");
  if (failed(msamp::checkUndefinedSymbols(*objPaths, *module)))
    return fail("not linking " + soPath.str() +
                ": it has symbols nothing provides at load time (above)");
  std::string linker = findLinker();
  if (linker.empty())
    return fail("ld.lld not found (install lld-22)");
  std::string linkError;
  SmallVector<StringRef> linkArgs = {linker, "-shared", "-o", soPath.str()};
  linkArgs.append(objPaths->begin(), objPaths->end());
  int rc = llvm::sys::ExecuteAndWait(linker, linkArgs, std::nullopt, {}, 0, 0,
                                     &linkError);
  if (rc != 0)
    return fail("linking " + soPath.str() + " failed: " + linkError);
  for (const std::string &path : *objPaths)
    llvm::sys::fs::remove(path);
  if (failed(recordObject(manifestPath, soPath, cpuName, cpuFeatures,
                          cuda ? bufferPlan : DictionaryAttr())))
    return 1;
  llvm::outs() << "msamp-compile: wrote " << soPath << ", " << manifestPath
               << ", " << memoryPath << ", " << gemmsPath << ", " << mlirPath
               << "\n";
  return 0;
}
