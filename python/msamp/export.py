"""PyTorch -> the msamp input contract (INTERFACES.md 1), via make_fx and
torch-mlir's FX importer (INPUTS.md 1).

``export(model, loss_fn, example_batch, optimizer=opt)`` traces one
forward + loss + backward as a pure function of (params, buffers, inputs,
targets) with ``make_fx`` over ``torch.func.grad_and_value`` (``torch.export``
cannot trace ``autograd.grad``, and torch-mlir's ``export_and_import`` would
freeze the params into constants), decomposes to core aten at trace time
(``stateless_fx_import`` does not decompose), lowers to linalg-on-tensors with
``fx.stateless_fx_import``, and then marks the function up with the
contract's attributes through torch-mlir's own ``ir`` bindings: roles and
names from ``named_parameters()`` / ``named_buffers()`` and the batch, the
loss and one gradient per parameter, and ``msamp.optimizer`` from the
``torch.optim`` instance. Only the *text* leaves: torch-mlir embeds a newer
MLIR than the LLVM 22 tools, so nothing else crosses over.

torch and torch-mlir are optional dependencies (``pip install msamp[torch]``):
importing this module never imports them; calling :func:`export` without
them raises ImportError saying what to install.

Pitfalls handled here (INPUTS.md 1.2/1.4):

* ``x ** 2`` (aten.pow with an integer exponent, e.g. in ``mse_loss``)
  lowers to ``math.fpowi``, which msamp's lowering does not handle: small
  integer powers are rewritten into multiplications before import.
* Ops that torch-mlir lowers to its private ``tm_tensor`` dialect
  (embedding backward, scatter, sort...) cannot be parsed by LLVM 22: they
  are rejected with the op named; express embeddings as one-hot matmuls.
* ``aten.rsqrt`` becomes 1 / sqrt: the step's lowering of math.rsqrt
  references a libm ``rsqrtf`` that does not exist.
* ``aten.squeeze.dims`` (newer torch) is not legal in this torch-mlir:
  squeezes and unsqueezes become views of the traced static shape.
* Modules must not mutate buffers in forward (BatchNorm in train mode).
"""

import os
import re
from dataclasses import dataclass, field

import numpy as np


class ExportError(RuntimeError):
    """The model cannot be exported to the contract (the message says why)."""


@dataclass(frozen=True)
class Arg:
    """One argument of the exported function, shaped like
    msamp.graphs.ArgSpec (name, role, shape, dtype) so msamp.data and
    Session code treat both alike."""

    name: str
    role: str
    shape: tuple
    dtype: str


@dataclass
class ExportedGraph:
    """An exported forward_backward graph: MLIR ``text`` plus the argument
    table and the parameters' values at export time."""

    text: str
    args: list
    param_values: dict = field(default_factory=dict)
    optimizer: str = ""
    # Back to PyTorch (msamp.weights): the buffers' values at export time,
    # and [(state_dict key, param or buffer name)] in state_dict order (tied
    # weights: several keys, one param).
    buffer_values: dict = field(default_factory=dict)
    state_dict_layout: list = field(default_factory=list)

    @property
    def params(self):
        return [a for a in self.args if a.role == "param"]

    @property
    def data(self):
        return [a for a in self.args if a.role in ("input", "target")]

    def write(self, path):
        with open(path, "w") as f:
            f.write(self.text)
        return path

    def write_init(self, path):
        """The params' current values as f32 safetensors (msamp-run --init,
        Session.init(init_file=...)), the buffers' in their dtype, and the
        state_dict layout in the metadata (msamp.state_dict's names)."""
        import json
        from safetensors.numpy import save_file
        from .weights import LAYOUT_KEY
        tensors = {k: np.ascontiguousarray(v, np.float32)
                   for k, v in self.param_values.items()}
        tensors.update({k: np.ascontiguousarray(v) for k, v in self.buffer_values.items()})
        metadata = {LAYOUT_KEY: json.dumps([list(e) for e in self.state_dict_layout])}
        save_file(tensors, str(path), metadata=metadata if self.state_dict_layout else None)
        return path


def _require_torch():
    try:
        import torch  # noqa: F401
        from torch_mlir import fx  # noqa: F401
    except ImportError as e:
        raise ImportError("msamp.export needs torch and torch-mlir: pip install "
                          f"'msamp[torch]' (or torch torch-mlir); {e}") from e


def optimizer_attribute(optimizer):
    """The ``msamp.optimizer`` text for a torch.optim.AdamW / Adam / SGD
    (or None: the contract's default AdamW). One hyper-parameter set only:
    the compiled step has one optimizer op per parameter with the module's
    settings."""
    from .graphs.optimizer import optimizer_attr
    if optimizer is None:
        return optimizer_attr("adamw", 1e-3)
    groups = optimizer.param_groups
    keys = ("lr", "betas", "eps", "weight_decay", "momentum", "nesterov", "dampening")
    first = {k: groups[0].get(k) for k in keys}
    for g in groups[1:]:
        if {k: g.get(k) for k in keys} != first:
            raise ExportError("param groups with different hyper-parameters are "
                              "not supported (one msamp.optimizer per graph)")
    kind = type(optimizer).__name__
    g = groups[0]
    if kind in ("AdamW", "Adam"):
        if g.get("amsgrad"):
            raise ExportError(f"{kind}(amsgrad=True) is not supported")
        if g.get("maximize"):
            raise ExportError(f"{kind}(maximize=True) is not supported")
        b1, b2 = g["betas"]
        return optimizer_attr(kind.lower(), float(g["lr"]), float(g["weight_decay"]),
                              beta1=float(b1), beta2=float(b2), eps=float(g["eps"]))
    if kind == "SGD":
        if g.get("dampening", 0):
            raise ExportError("SGD(dampening != 0) is not supported")
        text = optimizer_attr("sgd", float(g["lr"]), float(g["weight_decay"]),
                              momentum=float(g.get("momentum", 0.0)))
        if g.get("nesterov"):
            text = text.replace("nesterov = false", "nesterov = true")
        return text
    raise ExportError(f"optimizer {kind} is not supported (AdamW, Adam or SGD)")


def _batch_items(example_batch, targets):
    """[(name, tensor, role)] from a (input, target) tuple or a dict."""
    if isinstance(example_batch, dict):
        names = list(example_batch)
        if targets is None:
            targets = names[-1:]
        unknown = [t for t in targets if t not in example_batch]
        if unknown:
            raise ExportError(f"targets {unknown} are not in the batch {names}")
        return [(n, example_batch[n], "target" if n in targets else "input")
                for n in names]
    if isinstance(example_batch, (tuple, list)) and len(example_batch) == 2:
        x, y = example_batch
        xs = list(x) if isinstance(x, (tuple, list)) else [x]
        ys = list(y) if isinstance(y, (tuple, list)) else [y]
        items = [(("x" if len(xs) == 1 else f"x{i}"), t, "input") for i, t in enumerate(xs)]
        items += [(("y" if len(ys) == 1 else f"y{i}"), t, "target") for i, t in enumerate(ys)]
        return items
    raise ExportError("example_batch must be (inputs, targets) or a dict of "
                      "named tensors (targets= names the targets)")


# An op of torch-mlir's private dialects: `%x = tm_tensor.scatter ...`.
_FOREIGN_OP = re.compile(r'^\s*(%[^=]+=\s*)?"?(tm_tensor|torch_c|torch)\.')


def _mlir_dtype(t):
    import torch
    table = {torch.float32: "f32", torch.int64: "i64", torch.int32: "i32"}
    if t.dtype not in table:
        raise ExportError(f"dtype {t.dtype} is not allowed by the contract "
                          "(params f32; inputs f32, i32 or i64)")
    return table[t.dtype]


def _expand_integer_powers(gm):
    """aten.pow(x, n) for n in {1, 2, 3} -> multiplications (math.fpowi has
    no msamp lowering); pow(x, 0.5) -> sqrt."""
    import torch
    aten = torch.ops.aten
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != aten.pow.Tensor_Scalar:
            continue
        x, n = node.args
        if n not in (1, 2, 3, 0.5, 1.0, 2.0, 3.0):
            continue
        created = []
        with graph.inserting_before(node):
            if n == 0.5:
                created.append(graph.call_function(aten.sqrt.default, (x,)))
            elif n not in (1, 1.0):
                created.append(graph.call_function(aten.mul.Tensor, (x, x)))
                if n in (3, 3.0):
                    created.append(graph.call_function(aten.mul.Tensor, (created[-1], x)))
        # The importer types every node from meta["val"]; x^k has x's type.
        for c in created:
            c.meta = dict(node.meta)
        node.replace_all_uses_with(created[-1] if created else x)
        graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm


def _expand_rsqrt(gm):
    """aten.rsqrt(x) -> reciprocal(sqrt(x)). The compiled step's lowering of
    math.rsqrt calls a libm ``rsqrtf`` that glibc does not have (train_step.so
    fails to load); PyTorch's CPU kernel computes 1 / sqrt(x) too."""
    import torch
    aten = torch.ops.aten
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != aten.rsqrt.default:
            continue
        with graph.inserting_before(node):
            root = graph.call_function(aten.sqrt.default, node.args)
            new = graph.call_function(aten.reciprocal.default, (root,))
        root.meta = dict(node.meta)
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm


def _static_views(gm):
    """squeeze / unsqueeze -> view to the traced (static) shape. Newer torch
    emits aten.squeeze.dims, which this torch-mlir cannot legalize; a view
    of a known shape lowers everywhere."""
    import torch
    aten = torch.ops.aten
    targets = {aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default,
               aten.unsqueeze.default}
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in targets:
            continue
        val = node.meta.get("val")
        if val is None:
            continue
        with graph.inserting_before(node):
            new = graph.call_function(aten.view.default,
                                      (node.args[0], list(val.shape)))
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm


def _one_hot(index, classes, dtype):
    import torch
    return (index.unsqueeze(-1) == torch.arange(classes, device=index.device)).to(dtype)


def _nll_loss_backward(grad_output, self, target, weight, reduction,
                       ignore_index, total_weight):
    """nll_loss's gradient as a one-hot product: the default decomposition
    scatters, which torch-mlir lowers to tm_tensor."""
    import torch
    if weight is not None or self.dim() != 2:
        return NotImplemented
    hot = _one_hot(target, self.shape[1], self.dtype)
    hot = hot * (target != ignore_index).to(self.dtype).unsqueeze(-1)
    if reduction == 1:  # mean
        scale = grad_output / total_weight
    elif reduction == 2:  # sum
        scale = grad_output
    else:
        scale = grad_output.unsqueeze(-1)
    return torch.neg(hot) * scale


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """The embedding gradient as one-hot^T x grad_output (the default
    decomposition is index_put with accumulate, i.e. tm_tensor.scatter)."""
    if scale_grad_by_freq:
        return NotImplemented
    flat = indices.reshape(-1)
    hot = _one_hot(flat, num_weights, grad_output.dtype)
    if padding_idx >= 0:
        hot = hot * (flat != padding_idx).to(grad_output.dtype).unsqueeze(-1)
    grad = grad_output.reshape(flat.shape[0], -1)
    return hot.transpose(0, 1) @ grad


def decompositions():
    """core aten plus GELU, with scatter-free gradients of nll_loss and
    embedding."""
    import torch
    from torch._decomp import core_aten_decompositions
    from torch._decomp import get_decompositions
    aten = torch.ops.aten
    table = dict(core_aten_decompositions())
    # GELU into elementwise aten (torch-mlir would emit math.fpowi for the
    # tanh form's x^3, which msamp cannot lower; the aten pow is rewritten).
    table.update(get_decompositions([aten.gelu, aten.gelu_backward]))
    # LayerNorm too: torch-mlir's own expansion uses math.rsqrt (see above).
    table.update(get_decompositions([aten.native_layer_norm]))
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    table[aten.embedding_dense_backward.default] = _embedding_dense_backward
    return table


def trace(model, loss_fn, items, param_names, buffer_names):
    """make_fx of fwd_bwd(*params, *buffers, *inputs, *targets) ->
    (loss, *grads), decomposed to core aten."""
    from torch.func import functional_call, grad_and_value
    from torch.fx.experimental.proxy_tensor import make_fx

    n_p, n_b = len(param_names), len(buffer_names)
    roles = [role for _, _, role in items]

    def fwd_bwd(*flat):
        params = dict(zip(param_names, flat[:n_p]))
        buffers = dict(zip(buffer_names, flat[n_p:n_p + n_b]))
        data = flat[n_p + n_b:]
        inputs = [t for t, r in zip(data, roles) if r == "input"]
        targets = [t for t, r in zip(data, roles) if r == "target"]

        def loss_of(p):
            out = functional_call(model, {**p, **buffers}, tuple(inputs))
            return loss_fn(out, *targets)

        grads, loss = grad_and_value(loss_of)(params)
        return (loss, *[grads[n] for n in param_names])

    state = dict(model.named_parameters())
    bufs = dict(model.named_buffers())
    example = ([state[n].detach() for n in param_names]
               + [bufs[n].detach() for n in buffer_names]
               + [t for _, t, _ in items])
    gm = make_fx(fwd_bwd, decomposition_table=decompositions())(*example)
    return _static_views(_expand_rsqrt(_expand_integer_powers(gm)))


def export(model, loss_fn, example_batch, optimizer=None, targets=None,
           func_name="fwd_bwd", init_file=None):
    """Export ``model`` + ``loss_fn`` as a contract forward_backward graph.

    ``loss_fn(model_output, *targets)`` returns the 0-d mean loss.
    ``example_batch``: ``(inputs, targets)`` (tensors or tuples of tensors;
    named x/y, or x0, x1... y0...) or a dict of named tensors whose last key
    (or those listed in ``targets``) are targets. The model is called with the
    inputs positionally. ``optimizer``: a torch.optim.AdamW / Adam / SGD
    over the model's parameters (its hyper-parameters are declared in the
    graph). ``init_file``: also write the params' current values there.
    """
    _require_torch()
    import torch
    from torch_mlir import fx, ir

    items = _batch_items(example_batch, targets)
    param_names = [n for n, p in model.named_parameters() if p.requires_grad]
    if len(param_names) != len(list(model.parameters())):
        raise ExportError("frozen parameters (requires_grad=False) are not "
                          "supported: register them as buffers")
    buffer_names = [n for n, _ in model.named_buffers()]
    state = dict(model.named_parameters())
    bufs = dict(model.named_buffers())
    for n in param_names:
        if state[n].dtype != torch.float32:
            raise ExportError(f"param {n} is {state[n].dtype}; the contract "
                              "takes f32 params")
    args = ([Arg(n, "param", tuple(state[n].shape), "f32") for n in param_names]
            + [Arg(n, "buffer", tuple(bufs[n].shape), _mlir_dtype(bufs[n]))
               for n in buffer_names]
            + [Arg(n, role, tuple(t.shape), _mlir_dtype(t)) for n, t, role in items])
    names = [a.name for a in args]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ExportError(f"duplicate argument names {sorted(dupes)}: rename the "
                          "batch entries")
    opt_text = optimizer_attribute(optimizer)

    gm = trace(model, loss_fn, items, param_names, buffer_names)
    module = fx.stateless_fx_import(gm, output_type="linalg-on-tensors",
                                    model_name=func_name)
    with module.context:
        funcs = [op for op in module.body.operations
                 if op.operation.name == "func.func"]
        if len(funcs) != 1:
            raise ExportError(f"expected one function, torch-mlir produced {len(funcs)}")
        func = funcs[0]

        def attrs(role, name=None):
            d = {"msamp.role": ir.StringAttr.get(role)}
            if name is not None:
                d["msamp.name"] = ir.StringAttr.get(name)
            return ir.DictAttr.get(d)

        func.attributes["arg_attrs"] = ir.ArrayAttr.get(
            [attrs(a.role, a.name) for a in args])
        func.attributes["res_attrs"] = ir.ArrayAttr.get(
            [attrs("loss")] + [attrs("grad", n) for n in param_names])
        func.attributes["msamp.kind"] = ir.StringAttr.get("forward_backward")
        module.operation.attributes["msamp.optimizer"] = ir.Attribute.parse(opt_text)
        text = str(module)
    foreign = [line.strip() for line in text.splitlines() if _FOREIGN_OP.match(line)]
    if foreign:
        raise ExportError(f"torch-mlir left {len(foreign)} op(s) of its own dialects "
                          f"that LLVM 22 cannot parse, e.g. `{foreign[0][:120]}`; "
                          "decompose them in the model (one-hot matmul for "
                          "embeddings)")
    values = {n: state[n].detach().cpu().numpy().astype(np.float32) for n in param_names}
    graph = ExportedGraph(text=text, args=args, param_values=values, optimizer=opt_text)
    # Back to PyTorch: buffers start from their values, and the names of the
    # module's state_dict are recorded (msamp/weights.py).
    from .weights import state_dict_layout
    graph.buffer_values = {n: bufs[n].detach().cpu().numpy().copy() for n in buffer_names}
    graph.state_dict_layout = state_dict_layout(model, param_names, buffer_names)
    if init_file is not None:
        graph.write_init(os.fspath(init_file))
    return graph
