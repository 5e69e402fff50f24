"""Small ONNX models for msamp-translate's tests, built with onnx.helper.

Why generated: the lit tests and python/tests/test_onnx_import.py build these
at test time (``python scripts/onnx/onnx_models.py NAME OUT.onnx``), so the
repository holds the recipe, not opaque binaries. The training graphs are
written the way ONNX Runtime's training artifacts are (docs/Inputs.md 2.2):
params as graph inputs (trainable initializers moved to inputs), gradient
nodes in ORT's style (Gemm with transA/transB, com.microsoft ReluGrad,
GeluGrad, LayerNormalizationGrad, SoftmaxCrossEntropyLossGrad), gradients
named ``<param>_grad`` and delivered through InPlaceAccumulatorV2 into
``<param>_grad.accumulation.buffer`` inputs with a ``lazy_reset_grad`` flag.
These are hand-written stand-ins for real ORT exports, not ORT output.

Each model also has a numpy reference (``reference(name, feeds)``) used by
the numeric tests.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
OPSETS = [helper.make_opsetid("", 18), helper.make_opsetid(MS, 1)]

# MLP sizes: batch 4, 3 -> 5 -> 2 (as test/Transforms/Inputs/mlp.mlir).
N, D, H, O = 4, 3, 5, 2


def _rng(seed=0):
    return np.random.default_rng(seed)


def mlp_params(seed=0):
    r = _rng(seed)
    return {
        "fc1.weight": (r.standard_normal((H, D)) * 0.5).astype(np.float32),
        "fc1.bias": (r.standard_normal(H) * 0.1).astype(np.float32),
        "fc2.weight": (r.standard_normal((O, H)) * 0.5).astype(np.float32),
        "fc2.bias": (r.standard_normal(O) * 0.1).astype(np.float32),
    }


def mlp_feeds(seed=1):
    r = _rng(seed)
    return {"x": r.standard_normal((N, D)).astype(np.float32),
            "target": r.standard_normal((N, O)).astype(np.float32)}


def _vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, name, inputs, outputs, initializers=(), opsets=OPSETS,
           ir_version=10):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="msamp-test")
    model.ir_version = ir_version
    return model


def _mlp_forward_nodes():
    return [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["z1"],
                         name="fc1", transB=1),
        helper.make_node("Relu", ["z1"], ["h1"], name="relu1"),
        helper.make_node("Gemm", ["h1", "fc2.weight", "fc2.bias"], ["y"],
                         name="fc2", transB=1),
    ]


def mlp_forward():
    """Inference MLP with the weights as initializers: imports as "forward"."""
    inits = [numpy_helper.from_array(v, k) for k, v in mlp_params().items()]
    return _model(_mlp_forward_nodes(), "mlp_fwd", [_vi("x", ["batch", D])],
                  [_vi("y", ["batch", O])], inits)


def _mse_and_backward(accumulate):
    """MSE loss + ORT-style backward of the MLP; grads `<p>_grad`."""
    inv = np.float32(2.0 / (N * O))
    nodes = _mlp_forward_nodes() + [
        helper.make_node("Sub", ["y", "target"], ["diff"], name="mse_sub"),
        helper.make_node("Pow", ["diff", "two"], ["sq"], name="mse_pow"),
        helper.make_node("ReduceMean", ["sq"], ["loss"], name="mse_mean",
                         keepdims=0),
        # backward
        helper.make_node("Mul", ["loss_grad", "mse_scale"], ["dscale"],
                         name="mse_grad_scale"),
        helper.make_node("Mul", ["diff", "dscale"], ["y_grad"], name="mse_grad"),
        helper.make_node("ReduceSum", ["y_grad", "axes0"], ["fc2.bias_grad"],
                         name="fc2_bias_grad", keepdims=0),
        helper.make_node("Gemm", ["y_grad", "h1"], ["fc2.weight_grad"],
                         name="fc2_weight_grad", transA=1, beta=0.0),
        helper.make_node("Gemm", ["y_grad", "fc2.weight"], ["h1_grad"],
                         name="fc2_input_grad", beta=0.0),
        helper.make_node("ReluGrad", ["h1_grad", "h1"], ["z1_grad"],
                         name="relu1_grad", domain=MS),
        helper.make_node("ReduceSum", ["z1_grad", "axes0"], ["fc1.bias_grad"],
                         name="fc1_bias_grad", keepdims=0),
        helper.make_node("Gemm", ["z1_grad", "x"], ["fc1.weight_grad"],
                         name="fc1_weight_grad", transA=1, beta=0.0),
    ]
    inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1.0, np.float32), "loss_grad"),
             numpy_helper.from_array(np.array(inv, np.float32), "mse_scale"),
             numpy_helper.from_array(np.array([0], np.int64), "axes0")]
    outputs = [_vi("loss", [])]
    extra_inputs = []
    if accumulate:
        extra_inputs.append(_vi("lazy_reset_grad", [1], TensorProto.BOOL))
        for p, v in mlp_params().items():
            buf = f"{p}_grad.accumulation.buffer"
            extra_inputs.append(_vi(buf, list(v.shape)))
            nodes.append(helper.make_node(
                "InPlaceAccumulatorV2", [buf, f"{p}_grad", "lazy_reset_grad"],
                [f"{p}_grad.accumulation.out"], name=f"{p}_accumulator", domain=MS))
            outputs.append(_vi(f"{p}_grad.accumulation.out", [1], TensorProto.BOOL))
    else:
        outputs += [_vi(f"{p}_grad", list(v.shape)) for p, v in mlp_params().items()]
    return nodes, inits, outputs, extra_inputs


def mlp_train_ort():
    """ORT artifact layout: params are inputs, grads via accumulators."""
    nodes, inits, outputs, extra = _mse_and_backward(accumulate=True)
    inputs = [_vi("x", ["batch", D]), _vi("target", ["batch", O])]
    inputs += [_vi(k, list(v.shape)) for k, v in mlp_params().items()] + extra
    return _model(nodes, "mlp_train", inputs, outputs, inits)


def mlp_train_init():
    """Params as initializers, grads as `<param>_grad` outputs."""
    nodes, inits, outputs, _ = _mse_and_backward(accumulate=False)
    inits += [numpy_helper.from_array(v, k) for k, v in mlp_params().items()]
    inputs = [_vi("x", [N, D]), _vi("target", [N, O])]
    return _model(nodes, "mlp_train_init", inputs, outputs, inits)


# ---- classifier: LayerNorm -> Gemm -> Gelu -> Gemm -> SoftmaxCrossEntropy ----
C = 3


def cls_params(seed=2):
    r = _rng(seed)
    return {
        "ln.weight": (1 + 0.1 * r.standard_normal(D)).astype(np.float32),
        "ln.bias": (0.1 * r.standard_normal(D)).astype(np.float32),
        "fc1.weight": (r.standard_normal((H, D)) * 0.5).astype(np.float32),
        "fc2.weight": (r.standard_normal((C, H)) * 0.5).astype(np.float32),
    }


def cls_feeds(seed=3):
    r = _rng(seed)
    return {"x": r.standard_normal((N, D)).astype(np.float32),
            "labels": np.array([0, 2, 1, 2], np.int64)}


def cls_train_ort():
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln.weight", "ln.bias"],
                         ["xn", "ln_mean", "ln_inv_std"], name="ln", axis=-1,
                         epsilon=1e-5),
        helper.make_node("MatMul", ["xn", "fc1.weight_t"], ["z1"], name="fc1"),
        helper.make_node("Gelu", ["z1"], ["h1"], name="gelu", domain=MS),
        helper.make_node("Gemm", ["h1", "fc2.weight"], ["logits"], name="fc2",
                         transB=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"],
                         ["loss", "log_prob"], name="sce", reduction="mean"),
        # fc1.weight is [H, D] and used through a Transpose, like a Linear.
        helper.make_node("Transpose", ["fc1.weight"], ["fc1.weight_t"],
                         name="fc1_t", perm=[1, 0]),
        # backward
        helper.make_node("SoftmaxCrossEntropyLossGrad",
                         ["loss_grad", "log_prob", "labels"], ["logits_grad"],
                         name="sce_grad", domain=MS, reduction="mean"),
        helper.make_node("Gemm", ["logits_grad", "h1"], ["fc2.weight_grad"],
                         name="fc2_wgrad", transA=1, beta=0.0),
        helper.make_node("Gemm", ["logits_grad", "fc2.weight"], ["h1_grad"],
                         name="fc2_dgrad", beta=0.0),
        helper.make_node("GeluGrad", ["h1_grad", "z1"], ["z1_grad"],
                         name="gelu_grad", domain=MS),
        helper.make_node("FusedMatMul", ["z1_grad", "xn"], ["fc1.weight_grad"],
                         name="fc1_wgrad", domain=MS, transA=1),
        helper.make_node("FusedMatMul", ["z1_grad", "fc1.weight"], ["xn_grad"],
                         name="fc1_dgrad", domain=MS),
        helper.make_node("LayerNormalizationGrad",
                         ["xn_grad", "x", "ln.weight", "ln_mean", "ln_inv_std"],
                         ["x_grad", "ln.weight_grad", "ln.bias_grad"],
                         name="ln_grad", domain=MS, axis=-1),
    ]
    inits = [numpy_helper.from_array(np.array(1.0, np.float32), "loss_grad")]
    inputs = [_vi("x", [N, D]), _vi("labels", [N], TensorProto.INT64)]
    inputs += [_vi(k, list(v.shape)) for k, v in cls_params().items()]
    inputs.append(_vi("lazy_reset_grad", [1], TensorProto.BOOL))
    outputs = [_vi("loss", [])]
    for p, v in cls_params().items():
        buf = f"{p}_grad.accumulation.buffer"
        inputs.append(_vi(buf, list(v.shape)))
        nodes.append(helper.make_node(
            "InPlaceAccumulatorV2", [buf, f"{p}_grad", "lazy_reset_grad"],
            [f"{p}_grad.accumulation.out"], name=f"{p}_acc", domain=MS))
        outputs.append(_vi(f"{p}_grad.accumulation.out", [1], TensorProto.BOOL))
    return _model(nodes, "cls_train", inputs, outputs, inits)


# ---- optimizer models ----

def optimizer_adamw():
    seq = helper.make_tensor_sequence_value_info
    node = helper.make_node(
        "AdamWOptimizer",
        ["learning_rate", "step", "params", "gradients", "first_order_moments",
         "second_order_moments"], ["updated_flag"], name="adamw", domain=MS,
        alpha=0.9, beta=0.999, epsilon=1e-6, weight_decay=0.0, adam_mode=1,
        correct_bias=1)
    inputs = [_vi("learning_rate", [1]), _vi("step", [1], TensorProto.INT64)]
    inputs += [seq(n, TensorProto.FLOAT, None) for n in
               ["params", "gradients", "first_order_moments", "second_order_moments"]]
    return _model([node], "opt", inputs, [_vi("updated_flag", [1], TensorProto.BOOL)])


def optimizer_sgd():
    seq = helper.make_tensor_sequence_value_info
    node = helper.make_node("SGDOptimizerV2", ["learning_rate", "params", "gradients"],
                            ["update_completed"], name="sgd", domain=MS)
    inputs = [_vi("learning_rate", [1])]
    inputs += [seq(n, TensorProto.FLOAT, None) for n in ["params", "gradients"]]
    inits = [numpy_helper.from_array(np.array([0.05], np.float32), "learning_rate")]
    return _model([node], "opt", inputs, [_vi("update_completed", [1], TensorProto.BOOL)],
                  inits)


def optimizer_adam_preview():
    node = helper.make_node("Adam", ["R", "T", "X", "G", "V", "H"],
                            ["X_new", "V_new", "H_new"], name="adam",
                            domain="ai.onnx.preview.training", alpha=0.9, beta=0.99,
                            epsilon=1e-7, norm_coefficient=0.01)
    inputs = [_vi("R", []), _vi("T", [], TensorProto.INT64)] + [
        _vi(n, [2]) for n in "XGVH"]
    outputs = [_vi(n, [2]) for n in ["X_new", "V_new", "H_new"]]
    return _model([node], "opt", inputs, outputs,
                  opsets=[helper.make_opsetid("", 18),
                          helper.make_opsetid("ai.onnx.preview.training", 1)])


# ---- randomness (docs/Randomness.md, docs/ONNX.md "Random ops") ----

def dropout_train_ort():
    """`Dropout(w + x)` in training mode (ratio 0.25) and loss
    sum(dropped * target), with ORT's DropoutGrad for w's gradient: with
    x = 0, target = 1 and w = 0, an SGD step at lr 1 sets w to -mask / 0.75,
    the layout of test/Transforms/Inputs/dropout.mlir that
    python/tests/philox_reference.py checks bit for bit."""
    nodes = [
        helper.make_node("Add", ["w", "x"], ["h"], name="add"),
        helper.make_node("Dropout", ["h", "ratio", "training_mode"],
                         ["dropped", "mask"], name="dropout", seed=7),
        helper.make_node("Mul", ["dropped", "target"], ["prod"], name="mul"),
        helper.make_node("ReduceSum", ["prod"], ["loss"], name="sum", keepdims=0),
        # backward: d loss / d dropped = target
        helper.make_node("DropoutGrad", ["target", "mask", "ratio", "training_mode"],
                         ["w_grad"], name="dropout_grad", domain=MS),
    ]
    inits = [numpy_helper.from_array(np.array(0.25, np.float32), "ratio"),
             numpy_helper.from_array(np.array(True), "training_mode")]
    inputs = [_vi("w", [4, 64]), _vi("x", [4, 64]), _vi("target", [4, 64])]
    return _model(nodes, "dropout_train", inputs,
                  [_vi("loss", []), _vi("w_grad", [4, 64])], inits)


def dropout_inference():
    """Dropout with training_mode false (and one without the input): the
    identity, the mask all true."""
    nodes = [
        helper.make_node("Dropout", ["x", "ratio", "off"], ["y1", "mask"], name="d_off"),
        helper.make_node("Dropout", ["y1"], ["y"], name="d_absent"),
    ]
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
             numpy_helper.from_array(np.array(False), "off")]
    return _model(nodes, "dropout_inference", [_vi("x", [2, 3])],
                  [_vi("y", [2, 3]), _vi("mask", [2, 3], TensorProto.BOOL)], inits)


def random_like_train():
    """out = w * Bernoulli(p) + RandomUniformLike(w, low=-1, high=3), loss
    sum(out * target); w_grad = target * the Bernoulli draw."""
    nodes = [
        helper.make_node("Bernoulli", ["p"], ["b"], name="bernoulli", seed=3.0),
        helper.make_node("RandomUniformLike", ["w"], ["u"], name="uniform",
                         low=-1.0, high=3.0, dtype=TensorProto.FLOAT, seed=5.0),
        helper.make_node("Mul", ["w", "b"], ["wb"], name="mul_b"),
        helper.make_node("Add", ["wb", "u"], ["out"], name="add_u"),
        helper.make_node("Mul", ["out", "target"], ["prod"], name="mul_t"),
        helper.make_node("ReduceSum", ["prod"], ["loss"], name="sum", keepdims=0),
        helper.make_node("Mul", ["target", "b"], ["w_grad"], name="w_grad"),
    ]
    inputs = [_vi("w", [4, 8]), _vi("p", [4, 8]), _vi("target", [4, 8])]
    return _model(nodes, "random_like_train", inputs,
                  [_vi("loss", []), _vi("w_grad", [4, 8])])


def bad_random_normal():
    node = helper.make_node("RandomNormalLike", ["x"], ["n"], name="noise")
    return _model([node], "bad", [_vi("x", [2, 3])], [_vi("n", [2, 3])])


# ---- models that must fail cleanly ----

def bad_unsupported_op():
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"],
                            name="nms")
    return _model([node], "bad", [_vi("boxes", [1, 4, 4]), _vi("scores", [1, 1, 4])],
                  [_vi("sel", [1, 3], TensorProto.INT64)])


def bad_broadcast():
    node = helper.make_node("Add", ["a", "b"], ["c"], name="add_bad")
    return _model([node], "bad", [_vi("a", [2, 3]), _vi("b", [4])], [_vi("c", [2, 3])])


def bad_dynamic_reshape():
    node = helper.make_node("Reshape", ["a", "shape"], ["c"], name="reshape_dyn")
    return _model([node], "bad", [_vi("a", [2, 3]), _vi("shape", [2], TensorProto.INT64)],
                  [_vi("c", [3, 2])])


def bad_concat_rank0():
    """Found by the fuzzer: Concat of scalars once indexed an empty shape."""
    node = helper.make_node("Concat", ["a", "b"], ["c"], name="concat", axis=0)
    return _model([node], "bad", [_vi("a", []), _vi("b", [])], [_vi("c", [2])])


def bad_opset():
    m = mlp_forward()
    m.opset_import[0].version = 22
    return m


def bad_ir_version():
    m = mlp_forward()
    m.ir_version = 15
    return m


def external_data(path):
    """mlp_forward with its initializers in a side file (external data)."""
    m = mlp_forward()
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(path) + ".data", size_threshold=0)
    return None


def shape_arith():
    """Exporter-style shape arithmetic: Shape -> Gather -> Concat -> Reshape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["newshape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "newshape"], ["y"], name="flatten"),
        helper.make_node("Softmax", ["y"], ["p"], name="softmax", axis=-1),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "i0"),
             numpy_helper.from_array(np.array([0], np.int64), "ax0"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    return _model(nodes, "shape_arith", [_vi("x", [2, 3, 4])], [_vi("p", [2, 12])],
                  inits)


def unary_math():
    """One node of each float-only unary op: Sqrt Log Tanh Erf Exp Reciprocal."""
    chain = ["Sqrt", "Log", "Tanh", "Erf", "Exp", "Reciprocal"]
    names = ["x"] + [op.lower() for op in chain]
    nodes = [helper.make_node(op, [names[i]], [names[i + 1]], name=names[i + 1])
             for i, op in enumerate(chain)]
    return _model(nodes, "unary_math", [_vi("x", [2, 3])],
                  [_vi(names[-1], [2, 3])])


def bad_unary_int():
    """Sqrt of an int64 tensor: the float-only unary ops reject it."""
    nodes = [helper.make_node("Sqrt", ["x"], ["y"], name="sqrt_int")]
    return _model(nodes, "bad_unary_int", [_vi("x", [2], TensorProto.INT64)],
                  [_vi("y", [2], TensorProto.INT64)])


def ort_fused_ops_feeds(seed=4):
    r = _rng(seed)
    return {"a": r.standard_normal((2, 3, 4)).astype(np.float32),
            "bias": r.standard_normal(4).astype(np.float32),
            "dy": r.standard_normal((2, 3, 4)).astype(np.float32),
            # Repeated (3), negative (-1 = row 6) and first/last rows.
            "ids": np.array([[3, 0, -1], [3, 6, 3]], np.int64),
            "dz": r.standard_normal((2, 3, 5)).astype(np.float32)}


def ort_fused_ops():
    """ONNX Runtime's fused ops of a real export, as a forward graph:
    BiasGelu (ORT's BiasGeluFusion of a Linear's bias add and an exact
    Gelu), its gradient BiasGeluGrad_dX, and GatherGrad (the embedding
    gradient) into a [7, 5] table. `shape` is a constant, as ORT writes it
    (Shape of the table)."""
    shape = numpy_helper.from_array(np.array([7, 5], np.int64), "shape")
    nodes = [
        helper.make_node("BiasGelu", ["a", "bias"], ["gelu"], name="bias_gelu",
                         domain=MS),
        helper.make_node("BiasGeluGrad_dX", ["dy", "a", "bias"], ["da"],
                         name="bias_gelu_grad", domain=MS),
        helper.make_node("GatherGrad", ["shape", "ids", "dz"], ["dtable"],
                         name="gather_grad", domain=MS, axis=0),
    ]
    return _model(nodes, "ort_fused_ops",
                  [_vi("a", [2, 3, 4]), _vi("bias", [4]), _vi("dy", [2, 3, 4]),
                   _vi("ids", [2, 3], TensorProto.INT64), _vi("dz", [2, 3, 5])],
                  [_vi("gelu", [2, 3, 4]), _vi("da", [2, 3, 4]),
                   _vi("dtable", [7, 5])], [shape])


def bad_gather_grad_shape():
    """GatherGrad whose dY does not have Gather's output shape."""
    shape = numpy_helper.from_array(np.array([7, 5], np.int64), "shape")
    nodes = [helper.make_node("GatherGrad", ["shape", "ids", "dz"], ["dtable"],
                              name="gather_grad", domain=MS)]
    return _model(nodes, "bad_gather_grad_shape",
                  [_vi("ids", [2, 3], TensorProto.INT64), _vi("dz", [2, 3, 4])],
                  [_vi("dtable", [7, 5])], [shape])


MODELS = {
    "mlp_forward": mlp_forward,
    "mlp_train_ort": mlp_train_ort,
    "mlp_train_init": mlp_train_init,
    "cls_train_ort": cls_train_ort,
    "optimizer_adamw": optimizer_adamw,
    "optimizer_sgd": optimizer_sgd,
    "optimizer_adam_preview": optimizer_adam_preview,
    "bad_unsupported_op": bad_unsupported_op,
    "bad_broadcast": bad_broadcast,
    "bad_dynamic_reshape": bad_dynamic_reshape,
    "bad_ir_version": bad_ir_version,
    "bad_opset": bad_opset,
    "bad_concat_rank0": bad_concat_rank0,
    "shape_arith": shape_arith,
    "unary_math": unary_math,
    "bad_unary_int": bad_unary_int,
    "ort_fused_ops": ort_fused_ops,
    "bad_gather_grad_shape": bad_gather_grad_shape,
    "dropout_train_ort": dropout_train_ort,
    "dropout_inference": dropout_inference,
    "random_like_train": random_like_train,
    "bad_random_normal": bad_random_normal,
}


def save(name, path):
    if name == "external_data":
        external_data(path)
        return
    model = MODELS[name]()
    # Write the bytes directly: onnx.save would run nothing else, but the
    # explicit form makes clear no checker or shape inference touches them.
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def save_weights(path, params):
    """A safetensors file of f32 params (for --weights-in)."""
    import json
    header, offset, blobs = {}, 0, []
    for k, v in params.items():
        b = np.ascontiguousarray(v, dtype="<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(v.shape),
                     "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def load_safetensors(path):
    import json
    data = open(path, "rb").read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        out[k] = np.frombuffer(data[8 + n + b:8 + n + e], "<f4").reshape(v["shape"])
    return out


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "weights":
        save_weights(sys.argv[3], {"mlp": mlp_params, "cls": cls_params}[sys.argv[2]]())
    elif len(sys.argv) == 3:
        save(sys.argv[1], sys.argv[2])
    else:
        sys.exit("usage: onnx_models.py NAME OUT.onnx | weights mlp|cls OUT.safetensors")
