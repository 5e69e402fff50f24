//===- ImportONNX.cpp - ONNX graph to the msamp input contract ------------===//
//
// Maps an ONNX graph onto the contract of docs/Interfaces.md 1 and 6:
//
//  - params are the graph inputs / initializers X for which the graph
//    produces `X_grad`, directly or as the value an ONNX Runtime
//    InPlaceAccumulatorV2 adds into `X_grad.accumulation.buffer` (the
//    accumulator itself is read through: the contract returns gradients and
//    leaves accumulation to the runtime);
//  - the other graph inputs are inputs, or targets when named label*/target*
//    or consumed only as the label of a loss op;
//  - the loss is the output named "loss", else the single scalar float
//    output; without gradients the graph imports as msamp.kind = "forward"
//    and returns every graph output.
//
// Only the nodes the results depend on are lowered, in graph order, so
// unsupported ops in dead parts (accumulator flags, extra outputs) do not
// stop an import.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Target/ONNX/ImportONNX.h"

#include "ModelLoader.h"
#include "NodeContext.h"
#include "SafeTensors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::msamp::onnx;
using llvm::StringRef;

namespace mlir::msamp::onnx {
llvm::Expected<DictionaryAttr> importOptimizerModel(StringRef path,
                                                    MLIRContext *ctx);
} // namespace mlir::msamp::onnx

namespace {

constexpr StringRef kGradSuffix = "_grad";
constexpr StringRef kAccumBufferSuffix = ".accumulation.buffer";
/// Host copies are kept for constants up to this many elements (enough for
/// shape vectors and scalar hyperparameters, not for weights).
constexpr int64_t kMaxHostConstant = 4096;

bool isLossOp(StringRef type) {
  return type == "SoftmaxCrossEntropyLoss" ||
         type == "SoftmaxCrossEntropyLossInternal" ||
         type == "NegativeLogLikelihoodLoss" ||
         type == "SoftmaxCrossEntropyLossGrad" ||
         type == "SoftmaxCrossEntropyLossInternalGrad";
}

bool knownDomain(StringRef d) {
  return d.empty() || d == "ai.onnx" || d == "com.microsoft" ||
         d == "ai.onnx.preview.training";
}

class GraphImporter {
public:
  GraphImporter(LoadedModel &model, MLIRContext *ctx,
                const ImportOptions &options)
      : model(model), graph(model.proto->graph()), ctx(ctx), options(options),
        builder(ctx), tb(builder, UnknownLoc::get(ctx)) {
    registerForwardOps(lowerings);
    registerNNOps(lowerings);
    registerShapeOps(lowerings);
    registerGradientOps(lowerings);
    registerRandomOps(lowerings);
    if (!options.externalDataDir.empty())
      model.baseDir = options.externalDataDir;
  }

  llvm::Expected<OwningOpRef<ModuleOp>> run();

private:
  struct Param {
    std::string name;
    std::string gradValue;
    RankedTensorType type;
    const msamp_onnx::TensorProto *initializer = nullptr;
  };
  struct DataArg {
    std::string name;
    bool target;
    RankedTensorType type;
  };

  llvm::Error classify();
  llvm::Expected<RankedTensorType>
  typeOfValueInfo(const msamp_onnx::ValueInfoProto &vi, StringRef what);
  llvm::Expected<RankedTensorType>
  typeOfInitializer(const msamp_onnx::TensorProto &t);
  llvm::Error lowerNodes(ArrayRef<std::string> results);
  llvm::Error writeWeights();
  llvm::Expected<Value> resultValue(StringRef name, StringRef what);
  /// The value of `name`, materializing a non-param initializer as a
  /// constant on first use (unused initializers leave no dead constants);
  /// null when the name is unknown.
  llvm::Expected<const TensorValue *> lookup(StringRef name);

  LoadedModel &model;
  const msamp_onnx::GraphProto &graph;
  MLIRContext *ctx;
  const ImportOptions &options;
  OpBuilder builder;
  TensorBuilder tb;
  llvm::StringMap<LowerFn> lowerings;

  llvm::StringMap<const msamp_onnx::TensorProto *> initializers;
  llvm::StringMap<unsigned> producer; // value name -> node index
  llvm::StringSet<> accumulatorInputs;
  std::vector<Param> params;
  std::vector<DataArg> dataArgs;
  std::string lossName;
  bool training = false;
  llvm::StringMap<TensorValue> values;
};

llvm::Expected<RankedTensorType>
GraphImporter::typeOfValueInfo(const msamp_onnx::ValueInfoProto &vi,
                               StringRef what) {
  std::string where = (what + " '" + vi.name() + "'").str();
  if (!vi.has_type() || !vi.type().has_tensor_type())
    return makeError(where + ": not a tensor (sequences and maps are not "
                             "supported)");
  const auto &tt = vi.type().tensor_type();
  Type elem = elementTypeFor(ctx, tt.elem_type());
  if (!elem)
    return makeError(where + ": unsupported element type " +
                     dataTypeName(tt.elem_type()));
  if (!tt.has_shape())
    return makeError(where + ": has no shape (static shapes are required)");
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(tt.shape().dim())) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      shape.push_back(d.dim_value());
      continue;
    }
    if (d.has_dim_param()) {
      auto it = options.dims.find(d.dim_param());
      if (it != options.dims.end()) {
        shape.push_back(it->second);
        continue;
      }
      return makeError(where + ": dimension " + llvm::Twine(i) +
                       " is symbolic ('" + d.dim_param() + "'); pass --dim " +
                       d.dim_param() + "=SIZE");
    }
    return makeError(where + ": dimension " + llvm::Twine(i) +
                     " is unknown (static shapes are required)");
  }
  if (auto n = checkedNumElements(shape, where); !n)
    return n.takeError();
  return RankedTensorType::get(shape, elem);
}

llvm::Expected<RankedTensorType>
GraphImporter::typeOfInitializer(const msamp_onnx::TensorProto &t) {
  Type elem = elementTypeFor(ctx, t.data_type());
  if (!elem)
    return makeError("initializer '" + t.name() + "': unsupported type " +
                     dataTypeName(t.data_type()));
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (auto n = checkedNumElements(shape, "initializer '" + t.name() + "'"); !n)
    return n.takeError();
  return RankedTensorType::get(shape, elem);
}

llvm::Error GraphImporter::classify() {
  for (const auto &init : graph.initializer()) {
    if (init.name().empty())
      return makeError("an initializer has no name");
    initializers[init.name()] = &init;
  }
  for (auto [i, node] : llvm::enumerate(graph.node()))
    for (const std::string &out : node.output())
      if (!out.empty())
        producer[out] = i;

  // Gradient sources: `X_grad` values, and values accumulated into
  // `X_grad.accumulation.buffer` by ONNX Runtime.
  llvm::StringMap<std::string> gradOf;
  for (const auto &node : graph.node()) {
    StringRef type = node.op_type();
    if (type != "InPlaceAccumulatorV2" && type != "InPlaceAccumulator")
      continue;
    if (node.input_size() < 2)
      return makeError("node '" + node.name() + "' (" + node.op_type() +
                       "): needs the buffer and the value inputs");
    StringRef buffer = node.input(0);
    for (const std::string &in : node.input())
      if (!in.empty() && in != node.input(1))
        accumulatorInputs.insert(in);
    StringRef param = buffer;
    param.consume_back(kAccumBufferSuffix);
    param.consume_back(kGradSuffix);
    gradOf[param] = node.input(1);
  }
  auto considerParam = [&](StringRef name) {
    std::string grad;
    auto acc = gradOf.find(name);
    if (acc != gradOf.end())
      grad = acc->second;
    else if (producer.count((name + kGradSuffix).str()))
      grad = (name + kGradSuffix).str();
    return grad;
  };

  llvm::StringSet<> seen;
  for (const auto &input : graph.input()) {
    StringRef name = input.name();
    if (name.empty() || !seen.insert(name).second)
      continue;
    if (accumulatorInputs.count(name))
      continue;
    std::string grad = considerParam(name);
    auto init = initializers.find(name);
    if (!grad.empty()) {
      auto type = typeOfValueInfo(input, "param");
      if (!type)
        return type.takeError();
      if (!type->getElementType().isF32())
        return makeError("param '" + name + "' must be FLOAT (f32)");
      params.push_back({name.str(), grad, *type,
                        init == initializers.end() ? nullptr : init->second});
      continue;
    }
    // An input with an initializer is a constant with a default (IR < 4
    // lists every initializer as an input).
    if (init != initializers.end())
      continue;
    auto type = typeOfValueInfo(input, "input");
    if (!type)
      return type.takeError();
    dataArgs.push_back({name.str(), false, *type});
  }
  for (const auto &init : graph.initializer()) {
    if (seen.count(init.name()))
      continue;
    std::string grad = considerParam(init.name());
    if (grad.empty())
      continue;
    auto type = typeOfInitializer(init);
    if (!type)
      return type.takeError();
    if (!type->getElementType().isF32())
      return makeError("param '" + init.name() + "' must be FLOAT (f32)");
    params.push_back({init.name(), grad, *type, &init});
  }
  training = !params.empty();

  // The loss.
  for (const auto &out : graph.output())
    if (out.name() == "loss")
      lossName = out.name();
  if (lossName.empty()) {
    std::vector<std::string> scalars;
    for (const auto &out : graph.output()) {
      if (!out.type().has_tensor_type())
        continue;
      const auto &tt = out.type().tensor_type();
      Type elem = elementTypeFor(ctx, tt.elem_type());
      bool scalar =
          tt.has_shape() && llvm::all_of(tt.shape().dim(), [](const auto &d) {
            return d.has_dim_value() && d.dim_value() == 1;
          });
      if (elem && isa<FloatType>(elem) && scalar)
        scalars.push_back(out.name());
    }
    if (scalars.size() == 1)
      lossName = scalars[0];
  }
  if (training && lossName.empty())
    return makeError("the graph has gradients but no loss: name the loss "
                     "output \"loss\" or make it the only scalar float output");

  // Targets: by name, or used only as the label of loss ops.
  llvm::StringMap<bool> onlyLabel;
  for (const auto &node : graph.node())
    for (auto [i, in] : llvm::enumerate(node.input())) {
      bool label = isLossOp(node.op_type()) &&
                   i == (StringRef(node.op_type()).ends_with("Grad") ? 2 : 1);
      auto [it, inserted] = onlyLabel.try_emplace(in, label);
      if (!inserted)
        it->second &= label;
    }
  for (DataArg &arg : dataArgs) {
    std::string lower = StringRef(arg.name).lower();
    auto it = onlyLabel.find(arg.name);
    arg.target = StringRef(lower).starts_with("label") ||
                 StringRef(lower).starts_with("target") ||
                 (it != onlyLabel.end() && it->second);
  }
  return llvm::Error::success();
}

llvm::Error GraphImporter::lowerNodes(ArrayRef<std::string> results) {
  // Nodes the results depend on.
  llvm::DenseSet<unsigned> needed;
  SmallVector<std::string> work(results.begin(), results.end());
  while (!work.empty()) {
    std::string name = work.pop_back_val();
    auto it = producer.find(name);
    if (it == producer.end() || !needed.insert(it->second).second)
      continue;
    for (const std::string &in : graph.node(it->second).input())
      if (!in.empty() && !values.count(in) && !initializers.count(in))
        work.push_back(in);
  }

  // ONNX requires topological order, but exporters that splice graphs do
  // not always keep it: order the needed nodes by their dependencies,
  // keeping graph order among ready nodes.
  SmallVector<int> order;
  {
    llvm::StringSet<> available;
    for (const auto &kv : values)
      available.insert(kv.getKey());
    SmallVector<int> pending;
    for (int i = 0, e = graph.node_size(); i < e; ++i)
      if (needed.count(i))
        pending.push_back(i);
    while (!pending.empty()) {
      SmallVector<int> blocked;
      for (int i : pending) {
        const auto &node = graph.node(i);
        bool ready = llvm::all_of(node.input(), [&](const std::string &in) {
          return in.empty() || available.count(in) || !producer.count(in) ||
                 !needed.count(producer[in]);
        });
        if (!ready) {
          blocked.push_back(i);
          continue;
        }
        order.push_back(i);
        for (const std::string &out : node.output())
          available.insert(out);
      }
      if (blocked.size() == pending.size()) {
        const auto &node = graph.node(blocked.front());
        return makeError("node '" + node.name() + "' (" + node.op_type() +
                         "): the graph has a cycle through this node");
      }
      pending = std::move(blocked);
    }
  }

  for (int index : order) {
    const msamp_onnx::NodeProto &node = graph.node(index);
    std::string nodeName = node.name().empty()
                               ? node.op_type() + "_" + std::to_string(index)
                               : node.name();
    auto nodeError = [&](const llvm::Twine &reason) {
      return makeError("node '" + nodeName + "' (" + node.op_type() +
                       "): " + reason);
    };
    if (!knownDomain(node.domain()))
      return nodeError("unsupported domain '" + node.domain() + "'");
    auto lower = lowerings.find(node.op_type());
    if (lower == lowerings.end())
      return nodeError("unsupported op type");
    SmallVector<TensorValue> ins;
    for (const std::string &in : node.input()) {
      if (in.empty()) {
        ins.push_back({});
        continue;
      }
      auto found = lookup(in);
      if (!found)
        return found.takeError();
      if (!*found)
        return nodeError("input '" + in +
                         "' is not a graph input, an initializer or the "
                         "output of an earlier node");
      ins.push_back(**found);
    }
    Location loc = NameLoc::get(builder.getStringAttr(nodeName));
    tb.setLoc(loc);
    msamp_onnx::NodeProto named = node;
    named.set_name(nodeName);
    NodeContext nc(named, tb, ins, model.opset, model.baseDir);
    if (auto err = lower->second(nc))
      return err;
    for (auto [i, out] : llvm::enumerate(node.output())) {
      if (out.empty())
        continue;
      if (i >= nc.outputs.size() || !nc.outputs[i].value) {
        // Only an error if someone uses it.
        continue;
      }
      values[out] = nc.outputs[i];
    }
  }
  return llvm::Error::success();
}

llvm::Expected<const TensorValue *> GraphImporter::lookup(StringRef name) {
  auto it = values.find(name);
  if (it != values.end())
    return &it->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return nullptr;
  auto host = decodeTensor(*init->second, model.baseDir,
                           ("initializer '" + name + "'").str());
  if (!host)
    return host.takeError();
  if (!elementTypeFor(ctx, host->dataType))
    return makeError("initializer '" + name + "': unsupported type " +
                     dataTypeName(host->dataType));
  // Constants go to the top of the function, before their first user.
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(builder.getInsertionBlock());
  Value v = materializeConstant(
      builder, NameLoc::get(builder.getStringAttr(name)), *host);
  std::shared_ptr<const HostTensor> copy;
  if (host->numElements() <= kMaxHostConstant)
    copy = std::make_shared<HostTensor>(std::move(*host));
  return &(values[name] = {v, copy});
}

llvm::Expected<Value> GraphImporter::resultValue(StringRef name,
                                                 StringRef what) {
  auto found = lookup(name);
  if (!found)
    return found.takeError();
  if (*found)
    return (*found)->value;
  auto p = producer.find(name);
  if (p != producer.end()) {
    const auto &node = graph.node(p->second);
    return makeError("node '" + node.name() + "' (" + node.op_type() +
                     "): output '" + name + "' (" + what +
                     ") is not supported");
  }
  return makeError(what + " '" + name + "' is not produced by the graph");
}

llvm::Error GraphImporter::writeWeights() {
  llvm::StringMap<F32Tensor> given;
  if (!options.weightsIn.empty()) {
    auto w = readSafeTensors(options.weightsIn);
    if (!w)
      return w.takeError();
    given = std::move(*w);
  }
  std::vector<std::pair<std::string, F32Tensor>> out;
  for (const Param &p : params) {
    F32Tensor t;
    if (p.initializer) {
      auto host = decodeTensor(*p.initializer, model.baseDir,
                               "initializer '" + p.name + "'");
      if (!host)
        return host.takeError();
      t.shape = host->shape;
      t.data = host->toFloats();
    } else {
      auto it = given.find(p.name);
      if (it == given.end()) {
        if (options.weightsOut.empty())
          continue;
        return makeError("param '" + p.name +
                         "' has no initializer and no value in --weights-in");
      }
      t = it->second;
    }
    if (ArrayRef<int64_t>(t.shape) != p.type.getShape())
      return makeError("the value of param '" + p.name +
                       "' does not have the param's shape");
    out.emplace_back(p.name, std::move(t));
  }
  if (options.weightsOut.empty())
    return llvm::Error::success();
  return writeSafeTensors(options.weightsOut, out,
                          {{"format", "pt"}, {"producer", "msamp-translate"}});
}

llvm::Expected<OwningOpRef<ModuleOp>> GraphImporter::run() {
  if (auto err = classify())
    return std::move(err);
  if (auto err = writeWeights())
    return std::move(err);

  Location fileLoc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());

  SmallVector<Type> argTypes;
  for (const Param &p : params)
    argTypes.push_back(p.type);
  for (const DataArg &a : dataArgs)
    argTypes.push_back(a.type);
  auto func = func::FuncOp::create(builder, fileLoc, options.funcName,
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);

  unsigned argIndex = 0;
  auto setArgAttrs = [&](StringRef role, StringRef name) {
    func.setArgAttr(argIndex, "msamp.role", builder.getStringAttr(role));
    func.setArgAttr(argIndex, "msamp.name", builder.getStringAttr(name));
  };
  for (const Param &p : params) {
    values[p.name] = {entry->getArgument(argIndex), nullptr};
    setArgAttrs("param", p.name);
    ++argIndex;
  }
  for (const DataArg &a : dataArgs) {
    values[a.name] = {entry->getArgument(argIndex), nullptr};
    setArgAttrs(a.target ? "target" : "input", a.name);
    ++argIndex;
  }
  // Results: loss then grads (training), or every output (forward).
  SmallVector<std::string> resultNames;
  SmallVector<std::pair<std::string, std::string>> resultAttrs; // role, name
  if (training) {
    resultNames.push_back(lossName);
    resultAttrs.push_back({"loss", ""});
    for (const Param &p : params) {
      resultNames.push_back(p.gradValue);
      resultAttrs.push_back({"grad", p.name});
    }
  } else {
    // Outputs keep their ONNX types; a scalar f32 loss is marked for
    // `msamp-run --eval`.
    for (const auto &out : graph.output()) {
      resultNames.push_back(out.name());
      resultAttrs.push_back({"output", out.name()});
    }
  }
  if (auto err = lowerNodes(resultNames))
    return std::move(err);

  SmallVector<Value> results;
  tb.setLoc(fileLoc);
  for (auto [i, name] : llvm::enumerate(resultNames)) {
    auto v = resultValue(name, resultAttrs[i].first == "grad"
                                   ? "gradient of " + resultAttrs[i].second
                                   : resultAttrs[i].first);
    if (!v)
      return v.takeError();
    Value r = *v;
    RankedTensorType t = TensorBuilder::typeOf(r);
    if (resultAttrs[i].first == "loss") {
      if (t.getNumElements() != 1 || !isa<FloatType>(t.getElementType()))
        return makeError("the loss '" + name + "' must be a scalar float");
      r = tb.convert(tb.reshape(r, {}), builder.getF32Type());
    } else if (resultAttrs[i].first == "grad") {
      RankedTensorType pt = params[i - 1].type;
      if (t.getElementType() != pt.getElementType() ||
          t.getNumElements() != pt.getNumElements())
        return makeError("gradient '" + name + "' of param '" +
                         params[i - 1].name + "' does not match its type");
      r = tb.reshape(r, pt.getShape());
    }
    if (!training && name == lossName && t.getRank() == 0 &&
        t.getElementType().isF32())
      resultAttrs[i].first = "loss";
    results.push_back(r);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  // Host-folded shape arithmetic leaves its constants unused: drop every
  // dead side-effect-free op, last first so chains go in one sweep.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, ra] : llvm::enumerate(resultAttrs)) {
    func.setResultAttr(i, "msamp.role", builder.getStringAttr(ra.first));
    if (!ra.second.empty())
      func.setResultAttr(i, "msamp.name", builder.getStringAttr(ra.second));
  }
  func->setAttr("msamp.kind", builder.getStringAttr(
                                  training ? "forward_backward" : "forward"));

  if (!options.optimizerModel.empty()) {
    auto opt = importOptimizerModel(options.optimizerModel, ctx);
    if (!opt)
      return opt.takeError();
    (*module)->setAttr("msamp.optimizer", *opt);
  }

  // The importer's own invariant: what it writes verifies.
  std::string diag;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diag);
      os << d.getLocation() << ": " << d << "\n";
      return success();
    });
    if (failed(verify(*module)))
      return makeError("internal error: the imported module does not "
                       "verify:\n" +
                       diag);
  }
  return std::move(module);
}

} // namespace

void mlir::msamp::onnx::loadImporterDialects(MLIRContext &context) {
  context.loadDialect<func::FuncDialect, linalg::LinalgDialect,
                      tensor::TensorDialect, arith::ArithDialect,
                      math::MathDialect, ml_program::MLProgramDialect>();
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::msamp::onnx::importONNXBuffer(StringRef bytes, MLIRContext *context,
                                    const ImportOptions &options) {
  loadImporterDialects(*context);
  auto model = loadModelBuffer(bytes, options.externalDataDir);
  if (!model)
    return model.takeError();
  GraphImporter importer(*model, context, options);
  return importer.run();
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::msamp::onnx::importONNXFile(StringRef path, MLIRContext *context,
                                  const ImportOptions &options) {
  loadImporterDialects(*context);
  auto model = loadModelFile(path);
  if (!model)
    return model.takeError();
  GraphImporter importer(*model, context, options);
  return importer.run();
}
