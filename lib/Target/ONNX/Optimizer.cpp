//===- Optimizer.cpp - ONNX optimizer models to msamp.optimizer -----------===//
//
// Reads the optimizer node of an ONNX Runtime optimizer_model.onnx
// (com.microsoft AdamWOptimizer / SGDOptimizerV2) or a model holding the
// standard ai.onnx.preview.training Adam / Momentum, and writes the
// hyperparameters as the contract's msamp.optimizer dictionary
// (docs/Interfaces.md 1). Semantics that the dictionary cannot express are
// errors, not silent approximations.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::msamp::onnx;
using llvm::StringRef;

namespace {

float attrF(const msamp_onnx::NodeProto &n, StringRef name, float dflt) {
  for (const auto &a : n.attribute())
    if (a.name() == name && a.has_f())
      return a.f();
  return dflt;
}

int64_t attrI(const msamp_onnx::NodeProto &n, StringRef name, int64_t dflt) {
  for (const auto &a : n.attribute())
    if (a.name() == name && a.has_i())
      return a.i();
  return dflt;
}

std::string attrS(const msamp_onnx::NodeProto &n, StringRef name,
                  StringRef dflt) {
  for (const auto &a : n.attribute())
    if (a.name() == name && a.has_s())
      return a.s();
  return dflt.str();
}

} // namespace

namespace mlir::msamp::onnx {

llvm::Expected<DictionaryAttr> importOptimizerModel(StringRef path,
                                                    MLIRContext *ctx) {
  auto model = loadModelFile(path);
  if (!model)
    return model.takeError();
  const auto &graph = (*model->proto).graph();
  const msamp_onnx::NodeProto *opt = nullptr;
  for (const auto &node : graph.node()) {
    StringRef t = node.op_type();
    if (t == "AdamWOptimizer" || t == "SGDOptimizerV2" || t == "Adam" ||
        t == "Momentum") {
      if (opt && opt->op_type() != node.op_type())
        return makeError("'" + path + "': more than one kind of optimizer (" +
                         opt->op_type() + ", " + node.op_type() + ")");
      opt = &node;
    }
  }
  if (!opt)
    return makeError("'" + path +
                     "': no AdamWOptimizer, SGDOptimizerV2, Adam or Momentum "
                     "node");
  auto nodeError = [&](const llvm::Twine &reason) {
    return makeError("'" + path + "': node '" + opt->name() + "' (" +
                     opt->op_type() + "): " + reason);
  };
  Builder b(ctx);
  SmallVector<NamedAttribute> entries;
  auto setF = [&](StringRef key, double v) {
    entries.push_back(b.getNamedAttr(key, b.getF64FloatAttr(v)));
  };
  // The learning rate, when the model fixes it with an initializer.
  if (opt->input_size() > 0)
    for (const auto &init : graph.initializer())
      if (init.name() == opt->input(0)) {
        auto t = decodeTensor(init, model->baseDir, "learning rate");
        if (t && t->numElements() == 1)
          setF("lr", t->getDouble(0));
        else if (!t)
          llvm::consumeError(t.takeError());
      }

  StringRef type = opt->op_type();
  if (type == "AdamWOptimizer") {
    if (!attrI(*opt, "correct_bias", 1))
      return nodeError("correct_bias = 0 is not supported");
    int64_t mode = attrI(*opt, "adam_mode", 0);
    if (mode != 0 && mode != 1)
      return nodeError("adam_mode must be 0 or 1");
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("adamw")));
    setF("beta1", attrF(*opt, "alpha", 0.9f));
    setF("beta2", attrF(*opt, "beta", 0.999f));
    setF("eps", attrF(*opt, "epsilon", 1e-8f));
    setF("weight_decay", attrF(*opt, "weight_decay", 1e-2f));
    entries.push_back(b.getNamedAttr("adam_mode", b.getI64IntegerAttr(mode)));
  } else if (type == "SGDOptimizerV2") {
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("sgd")));
  } else if (type == "Adam") {
    // ai.onnx.preview.training Adam: norm_coefficient is coupled L2 (torch
    // Adam's weight_decay); the post-update shrink has no equivalent.
    if (attrF(*opt, "norm_coefficient_post", 0.0f) != 0.0f)
      return nodeError("norm_coefficient_post != 0 has no msamp.optimizer "
                       "equivalent");
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("adam")));
    setF("beta1", attrF(*opt, "alpha", 0.9f));
    setF("beta2", attrF(*opt, "beta", 0.999f));
    setF("eps", attrF(*opt, "epsilon", 1e-6f));
    setF("weight_decay", attrF(*opt, "norm_coefficient", 0.0f));
  } else { // Momentum
    if (attrF(*opt, "beta", 1.0f) != 1.0f)
      return nodeError("beta != 1 (dampening) is not supported");
    std::string mode = attrS(*opt, "mode", "standard");
    if (mode != "standard" && mode != "nesterov")
      return nodeError("unknown mode '" + mode + "'");
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("sgd")));
    setF("momentum", attrF(*opt, "alpha", 0.0f));
    setF("weight_decay", attrF(*opt, "norm_coefficient", 0.0f));
    entries.push_back(
        b.getNamedAttr("nesterov", b.getBoolAttr(mode == "nesterov")));
  }
  return b.getDictionaryAttr(entries);
}

} // namespace mlir::msamp::onnx
