//===- NodeContext.h - what an op lowering sees of its node ----*- C++ -*-===//
//
// Op lowerings (ForwardOps.cpp, GradientOps.cpp) are free functions from a
// NodeContext to an llvm::Error. The context gives typed access to inputs
// and attributes, produces errors that name the node and op type, and keeps
// host copies of small constant tensors so that shape arithmetic (Shape ->
// Gather -> Concat -> Reshape) folds instead of reaching the IR.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_TARGET_ONNX_NODECONTEXT_H
#define MSAMP_LIB_TARGET_ONNX_NODECONTEXT_H

#include "ModelLoader.h"
#include "TensorBuilder.h"

#include "llvm/ADT/StringMap.h"

#include <optional>

namespace mlir::msamp::onnx {

/// An imported ONNX value: the SSA tensor and, for constants small enough to
/// fold on the host, their data.
struct TensorValue {
  Value value;
  std::shared_ptr<const HostTensor> constant;
};

class NodeContext {
public:
  NodeContext(const msamp_onnx::NodeProto &node, TensorBuilder &tb,
              llvm::ArrayRef<TensorValue> inputs, int64_t opset,
              llvm::StringRef baseDir)
      : node(node), tb(tb), b(tb.builder()), loc(tb.getLoc()), opset(opset),
        baseDir(baseDir), inputs(inputs) {}

  const msamp_onnx::NodeProto &node;
  TensorBuilder &tb;
  OpBuilder &b;
  Location loc;
  int64_t opset;
  llvm::StringRef baseDir;

  /// "node 'n' (OpType): reason".
  llvm::Error error(const llvm::Twine &reason) const;

  unsigned numInputs() const { return inputs.size(); }
  bool hasInput(unsigned i) const {
    return i < inputs.size() && inputs[i].value;
  }
  Value in(unsigned i) const { return hasInput(i) ? inputs[i].value : Value(); }
  RankedTensorType type(unsigned i) const {
    return TensorBuilder::typeOf(in(i));
  }
  Type elem(unsigned i) const { return type(i).getElementType(); }
  ArrayRef<int64_t> shape(unsigned i) const { return type(i).getShape(); }
  int64_t rank(unsigned i) const { return type(i).getRank(); }
  /// Host data of input i when it is a known constant, else null.
  const HostTensor *constant(unsigned i) const {
    return hasInput(i) ? inputs[i].constant.get() : nullptr;
  }
  /// Error unless inputs [0, n) are present.
  llvm::Error requireInputs(unsigned n) const;
  /// Integer values of a constant input (axes, shapes, pads), or an error
  /// saying the input must be a constant.
  llvm::Expected<std::vector<int64_t>> constInts(unsigned i) const;
  /// Error unless input i has a floating-point element type.
  llvm::Error requireFloat(unsigned i) const;

  // Attributes.
  const msamp_onnx::AttributeProto *attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  int64_t attrInt(llvm::StringRef name, int64_t dflt) const;
  float attrFloat(llvm::StringRef name, float dflt) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<std::vector<int64_t>> attrInts(llvm::StringRef name) const;

  /// Normalizes a possibly negative axis for rank `rank`.
  llvm::Expected<int64_t> axis(int64_t a, int64_t rank) const;

  unsigned numOutputs() const { return node.output_size(); }
  bool wantsOutput(unsigned i) const {
    return i < unsigned(node.output_size()) && !node.output(i).empty();
  }
  void setOutput(unsigned i, Value v,
                 std::shared_ptr<const HostTensor> constant = nullptr) {
    if (outputs.size() <= i)
      outputs.resize(i + 1);
    outputs[i] = {v, std::move(constant)};
  }
  /// Emits `t` as an arith.constant and records its host copy.
  void setConstantOutput(unsigned i, HostTensor t);

  llvm::SmallVector<TensorValue> outputs;

private:
  llvm::ArrayRef<TensorValue> inputs;
};

/// Converts an ONNX data type to an MLIR element type (null if unsupported).
Type elementTypeFor(MLIRContext *ctx, int32_t dataType);
/// The inverse, for host-side constant folding (kUndefined if none).
int32_t dataTypeFor(Type elem);
/// arith.constant for a host tensor.
Value materializeConstant(OpBuilder &b, Location loc, const HostTensor &t);
/// Host constant of int64 values (or `type`'s) with `shape` (ShapeOps.cpp).
HostTensor intTensor(ArrayRef<int64_t> shape, ArrayRef<int64_t> values,
                     int32_t type = kInt64);

using LowerFn = llvm::Error (*)(NodeContext &);
/// Lowerings of ONNX (ai.onnx) ops, by op type.
void registerForwardOps(llvm::StringMap<LowerFn> &table);
/// Softmax, MatMul, Gemm and SoftmaxCrossEntropyLoss (NNOps.cpp).
void registerNNOps(llvm::StringMap<LowerFn> &table);
/// Shape, data-movement and constant ops (ShapeOps.cpp).
void registerShapeOps(llvm::StringMap<LowerFn> &table);
/// Lowerings of ONNX Runtime's com.microsoft gradient ops, by op type.
void registerGradientOps(llvm::StringMap<LowerFn> &table);
/// Dropout, DropoutGrad, RandomUniformLike and Bernoulli in torch-mlir's
/// spelling of randomness; other random ops refused (RandomOps.cpp).
void registerRandomOps(llvm::StringMap<LowerFn> &table);

} // namespace mlir::msamp::onnx

#endif // MSAMP_LIB_TARGET_ONNX_NODECONTEXT_H
