"""PyTorch -> the msamp input contract (docs/Interfaces.md 1), via make_fx and
torch-mlir's FX importer (docs/Inputs.md 1).

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

What the trace does so that stock transformers / timm models get through
(docs/Python.md "PyTorch export" has the table):

* attention runs as PyTorch's math backend (the fused SDPA kernels'
  backward ops have no torch-mlir lowering);
* the trace is functionalized (``copy_``, ``div_``: torch-mlir rejects
  mutation); training-mode BatchNorm is traced as ops, and buffers the
  forward changes (running statistics) become updated-buffer results;
* scatter-free gradients (nll_loss, embedding, index_put with accumulate,
  max_pool2d) and cumsum as a triangular masked sum: the defaults lower to
  torch-mlir's private ``tm_tensor`` dialect, which LLVM 22 cannot parse;
* ``aten.squeeze.dims`` (not legal in this torch-mlir) and
  ``aten.empty_permuted`` (no lowering) are rewritten;
* param groups become per-param ``msamp.weight_decay`` / ``msamp.lr_scale``.

Anything else the trace or torch-mlir cannot handle is an
:class:`ExportError` naming the aten op, never a torch-mlir IR dump.
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
    # Every buffer's value at export time (its own dtype), the buffers the
    # step returns updated, and {param: (weight_decay, lr_scale)} from the
    # optimizer's param groups.
    buffer_values: dict = field(default_factory=dict)
    updated_buffers: list = field(default_factory=list)
    param_overrides: dict = field(default_factory=dict)
    # Back to PyTorch (msamp.weights): [(state_dict key, param or buffer
    # name)] in state_dict order (tied weights: several keys, one param).
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
        Session.init(init_file=...)), the buffers' in their own dtype (i64
        position ids, BatchNorm statistics), and the state_dict layout in the
        metadata (msamp.state_dict's names)."""
        import json
        from safetensors.numpy import save_file
        from .weights import LAYOUT_KEY
        tensors = {k: np.ascontiguousarray(v, np.float32)
                   for k, v in self.param_values.items()}
        # np.array, not ascontiguousarray: a 0-d buffer (BatchNorm's
        # num_batches_tracked) must stay 0-d.
        tensors.update({k: np.array(v, order="C")
                        for k, v in self.buffer_values.items()})
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


# Hyper-parameters a param group may set on its own (docs/Interfaces.md 1:
# per-param msamp.weight_decay / msamp.lr_scale); every other one is the
# module's msamp.optimizer and must agree across groups.
_PER_PARAM_KEYS = ("lr", "weight_decay")
_SHARED_KEYS = ("betas", "eps", "momentum", "nesterov", "dampening", "amsgrad",
                "maximize")


def optimizer_attribute(optimizer):
    """The ``msamp.optimizer`` text for a torch.optim.AdamW / Adam / SGD
    (or None: the contract's default AdamW). The first param group's lr and
    weight decay are the module's (the base lr that schedules scale); other
    groups differ from it per param (:func:`param_group_overrides`)."""
    from .graphs.optimizer import optimizer_attr
    if optimizer is None:
        return optimizer_attr("adamw", 1e-3)
    groups = optimizer.param_groups
    first = {k: groups[0].get(k) for k in _SHARED_KEYS}
    for i, g in enumerate(groups[1:], 1):
        other = {k: g.get(k) for k in _SHARED_KEYS}
        if other != first:
            diff = sorted(k for k in _SHARED_KEYS if other[k] != first[k])
            raise ExportError(f"param group {i} differs from group 0 in {diff}; "
                              "only lr and weight_decay may differ between "
                              "groups (one msamp.optimizer per graph)")
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


def param_group_overrides(optimizer, named_params):
    """{param name: (weight_decay, lr_scale)} for the params whose group's
    weight decay or lr differs from the first group's (lr_scale = group lr /
    base lr). ``named_params``: (name, tensor) pairs; every one must be in
    exactly one group."""
    if optimizer is None:
        return {}
    groups = optimizer.param_groups
    base_lr, base_wd = float(groups[0]["lr"]), float(groups[0].get("weight_decay", 0.0))
    group_of = {}
    for i, g in enumerate(groups):
        for p in g["params"]:
            group_of.setdefault(id(p), i)
    out = {}
    missing = []
    for name, p in named_params:
        i = group_of.get(id(p))
        if i is None:
            missing.append(name)
            continue
        lr, wd = float(groups[i]["lr"]), float(groups[i].get("weight_decay", 0.0))
        if lr == base_lr and wd == base_wd:
            continue
        if base_lr <= 0:
            raise ExportError(f"param group 0 has lr {base_lr}; the base lr must be "
                              "positive to scale the other groups' lr by it")
        out[name] = (wd, lr / base_lr)
    if missing:
        raise ExportError(f"params {missing[:5]}{' ...' if len(missing) > 5 else ''} "
                          "are in no param group of the optimizer: the exported "
                          "step updates every param, so give them a group")
    return out


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
    table = {torch.float32: "f32", torch.int64: "i64", torch.int32: "i32",
             torch.bool: "i1"}
    if t.dtype not in table:
        raise ExportError(f"dtype {t.dtype} is not allowed by the contract "
                          "(params f32; buffers, inputs and targets f32, i64, "
                          "i32 or bool)")
    return table[t.dtype]


def _dense_empties(gm):
    """aten.empty_permuted (empty_like, e.g. in SiLU's gradient; torch-mlir
    has no lowering) -> aten.empty of the physical shape, permuted back.
    Only the shape matters: the values are undefined either way."""
    import torch
    aten = torch.ops.aten
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != aten.empty_permuted.default:
            continue
        shape, perm = node.args
        physical = [shape[p] for p in perm]
        inverse = [perm.index(i) for i in range(len(perm))]
        kwargs = {k: v for k, v in node.kwargs.items() if k in ("dtype", "device")}
        with graph.inserting_before(node):
            new = graph.call_function(aten.empty.memory_format, (physical,), kwargs)
            new.meta = {"val": node.meta["val"].new_empty(physical)}
            if inverse != list(range(len(perm))):
                new = graph.call_function(aten.permute.default, (new, inverse))
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


def _cumsum(self, dim, dtype=None):
    """cumsum as a masked sum over a triangular matrix: torch-mlir lowers
    aten.cumsum to ``tm_tensor.scan``, which LLVM 22 cannot parse. The
    product form is elementwise + a reduction (exact for integer types; a
    sum in a different order for floats). O(n^2) in the scanned length."""
    import torch
    if dtype is None:
        dtype = (torch.int64 if not self.dtype.is_floating_point
                 and self.dtype != torch.complex64 else self.dtype)
    x = self.to(dtype)
    if x.dim() == 0:
        return x.clone()
    dim = dim % x.dim()
    n = x.shape[dim]
    idx = torch.arange(n, device=x.device)
    # tri[j, i] = 1 where j <= i: output i sums inputs 0..i.
    tri = (idx.unsqueeze(1) <= idx.unsqueeze(0)).to(dtype)
    moved = x.movedim(dim, -1).unsqueeze(-1)          # [..., n, 1]
    out = (moved * tri).sum(-2)                         # [..., n]
    return out.movedim(-1, dim)


def _index_put(self, indices, values, accumulate=False):
    """index_put with accumulate over the first dimension by one index
    tensor (the gradient of ``table[index]``, e.g. Swin's relative position
    bias) as a one-hot product: the default lowering is a scatter
    (tm_tensor)."""
    import torch
    if (not accumulate or len(indices) != 1 or indices[0] is None
            or indices[0].dtype == torch.bool):
        return NotImplemented
    index = indices[0]
    n = self.shape[0]
    rows = index.numel()
    flat = index.reshape(-1)
    flat = torch.where(flat < 0, flat + n, flat)
    vals = values.expand(*index.shape, *self.shape[1:]).reshape(rows, -1)
    hot = _one_hot(flat, n, vals.dtype)
    return self + (hot.transpose(0, 1) @ vals).reshape(self.shape)


def _max_pool2d_backward(grad_output, self, kernel_size, stride, padding,
                         dilation, ceil_mode, indices):
    """max_pool2d's gradient without a scatter (the default decomposition
    scatters into tm_tensor): for each of the kernel's offsets, the output
    gradients whose recorded argmax is that offset's input position, spread
    out by the stride (interleaved zeros) and shifted into place. Exact:
    the same argmax as PyTorch's kernel, each gradient added once."""
    import torch
    import torch.nn.functional as F
    if any(d != 1 for d in dilation) or self.dim() not in (3, 4):
        return NotImplemented
    kh, kw = kernel_size if len(kernel_size) == 2 else (kernel_size[0],) * 2
    stride = stride or kernel_size
    sh, sw = stride if len(stride) == 2 else (stride[0],) * 2
    ph, pw = padding if len(padding) == 2 else (padding[0],) * 2
    h, w = self.shape[-2:]
    ho, wo = grad_output.shape[-2:]
    rows = torch.arange(ho, device=self.device) * sh - ph
    cols = torch.arange(wo, device=self.device) * sw - pw
    result = torch.zeros_like(self)
    for i in range(kh):
        for j in range(kw):
            ih, iw = rows + i, cols + j
            valid = (((ih >= 0) & (ih < h)).unsqueeze(1)
                     & ((iw >= 0) & (iw < w)).unsqueeze(0))
            where = ih.unsqueeze(1) * w + iw.unsqueeze(0)
            m = grad_output * ((indices == where) & valid).to(grad_output.dtype)
            # m[oh, ow] goes to input (oh*sh + i - ph, ow*sw + j - pw).
            d = F.pad(m.unsqueeze(-1), (0, sw - 1)).reshape(*m.shape[:-1], wo * sw)
            d = F.pad(d.unsqueeze(-2), (0, 0, 0, sh - 1)).reshape(
                *m.shape[:-2], ho * sh, wo * sw)
            top, left = i, j
            bottom = max(0, ph + h - (ho * sh + top))
            right = max(0, pw + w - (wo * sw + left))
            d = F.pad(d, (left, right, top, bottom))
            result = result + d[..., ph:ph + h, pw:pw + w]
    return result


def decompositions():
    """core aten plus GELU, with scatter-free gradients of nll_loss and
    embedding."""
    import torch
    from torch._decomp import core_aten_decompositions
    from torch._decomp import get_decompositions
    aten = torch.ops.aten
    table = dict(core_aten_decompositions())
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    table[aten.embedding_dense_backward.default] = _embedding_dense_backward
    table[aten.cumsum.default] = _cumsum
    table[aten.index_put.default] = _index_put
    table[aten.max_pool2d_with_indices_backward.default] = _max_pool2d_backward
    from .export_roll import roll
    table[aten.roll.default] = roll
    return table


def _batch_norm_mode():
    """A TorchFunctionMode under which training-mode ``F.batch_norm`` is
    spelled in differentiable ops, its running statistics updated with
    ``copy_``. aten.native_batch_norm mutates them without saying so in its
    schema, so functionalization would keep the op and lose the update; the
    ops here are functionalized into new buffer values."""
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    def batch_norm(input, running_mean, running_var, weight=None, bias=None,
                   training=False, momentum=0.1, eps=1e-5):
        dims = [0] + list(range(2, input.dim()))
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        shape = [1, -1] + [1] * (input.dim() - 2)
        out = (input - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)
        if weight is not None:
            out = out * weight.view(shape)
        if bias is not None:
            out = out + bias.view(shape)
        if running_mean is not None:
            n = input.numel() // input.shape[1]
            running_mean.copy_((1 - momentum) * running_mean + momentum * mean.detach())
        if running_var is not None:
            unbiased = var.detach() * (n / max(n - 1, 1))
            running_var.copy_((1 - momentum) * running_var + momentum * unbiased)
        return out

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is F.batch_norm:
                bound = dict(zip(("input", "running_mean", "running_var", "weight",
                                  "bias", "training", "momentum", "eps"), args))
                bound.update(kwargs)
                if bound.get("training"):
                    return batch_norm(**bound)
            return func(*args, **kwargs)

    return Mode()


def trace(model, loss_fn, items, param_names, buffer_names):
    """make_fx of fwd_bwd(*params, *buffers, *inputs, *targets) ->
    (loss, *grads, *updated buffers), functionalized and decomposed to core
    aten. Returns (graph module, names of the buffers the step updates).

    * Attention runs as PyTorch's math backend: the fused CPU kernels'
      backward ops (``_scaled_dot_product_flash_attention_for_cpu_backward``)
      have no torch-mlir lowering; the math form is matmul + softmax, which
      autograd differentiates op by op.
    * In-place ops (``copy_``, ``div_``, BatchNorm's running statistics) are
      functionalized: torch-mlir rejects mutation. Training-mode BatchNorm
      is traced as ops (:func:`_batch_norm_mode`).
    * Buffers are cloned before the model sees them, so that a buffer the
      forward mutates becomes a new value that the step returns (an updated
      buffer, docs/Interfaces.md 1) instead of a mutation of an argument.
    """
    import torch
    from torch.func import functional_call, functionalize, grad_and_value
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.attention import SDPBackend, sdpa_kernel

    n_p, n_b = len(param_names), len(buffer_names)
    roles = [role for _, _, role in items]

    def fwd_bwd(*flat):
        params = dict(zip(param_names, flat[:n_p]))
        buffers = dict(zip(buffer_names, flat[n_p:n_p + n_b]))
        data = flat[n_p + n_b:]
        inputs = [t for t, r in zip(data, roles) if r == "input"]
        targets = [t for t, r in zip(data, roles) if r == "target"]

        def loss_of(p):
            # Cloned inside the grad transform: it refuses in-place updates
            # of tensors captured from outside.
            b = {n: t.clone() for n, t in buffers.items()}
            out = functional_call(model, {**p, **b}, tuple(inputs))
            return loss_fn(out, *targets), b

        grads, (loss, new_buffers) = grad_and_value(loss_of, has_aux=True)(params)
        return (loss, *[grads[n] for n in param_names],
                *[new_buffers[n] for n in buffer_names])

    state = dict(model.named_parameters())
    bufs = dict(model.named_buffers())
    example = ([state[n].detach() for n in param_names]
               + [bufs[n].detach() for n in buffer_names]
               + [t for _, t, _ in items])
    with sdpa_kernel([SDPBackend.MATH]), _batch_norm_mode():
        gm = make_fx(functionalize(fwd_bwd, remove="mutations"),
                     decomposition_table=decompositions())(*example)
    gm, updated = _drop_unchanged_buffers(gm, n_p, buffer_names)
    gm = _dense_empties(_static_views(gm))
    return gm, updated


def _drop_unchanged_buffers(gm, n_params, buffer_names):
    """Keep only the buffer results that differ from the buffer argument
    (the clone fwd_bwd made of it, or the argument itself)."""
    import torch
    graph = gm.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    out = next(n for n in graph.nodes if n.op == "output")
    results = list(out.args[0])
    head, tail = results[:1 + n_params], results[1 + n_params:]
    kept, updated = [], []
    for name, arg, res in zip(buffer_names, placeholders[n_params:], tail):
        if res is arg or (res.op == "call_function"
                          and res.target == torch.ops.aten.clone.default
                          and res.args[0] is arg):
            continue
        kept.append(res)
        updated.append(name)
    out.args = (tuple(head + kept),)
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return gm, updated


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
    overrides = param_group_overrides(optimizer, [(n, state[n]) for n in param_names])

    gm, updated = _trace_or_explain(model, loss_fn, items, param_names, buffer_names)
    module = _import_or_explain(fx, gm, func_name)
    with module.context:
        funcs = [op for op in module.body.operations
                 if op.operation.name == "func.func"]
        if len(funcs) != 1:
            raise ExportError(f"expected one function, torch-mlir produced {len(funcs)}")
        func = funcs[0]

        def attrs(role, name=None, extra=None):
            d = {"msamp.role": ir.StringAttr.get(role)}
            if name is not None:
                d["msamp.name"] = ir.StringAttr.get(name)
            if extra:
                wd, scale = extra
                d["msamp.weight_decay"] = ir.FloatAttr.get_f64(wd)
                d["msamp.lr_scale"] = ir.FloatAttr.get_f64(scale)
            return ir.DictAttr.get(d)

        func.attributes["arg_attrs"] = ir.ArrayAttr.get(
            [attrs(a.role, a.name, overrides.get(a.name) if a.role == "param" else None)
             for a in args])
        func.attributes["res_attrs"] = ir.ArrayAttr.get(
            [attrs("loss")] + [attrs("grad", n) for n in param_names]
            + [attrs("buffer", n) for n in updated])
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
    buffer_values = {n: bufs[n].detach().cpu().numpy().copy() for n in buffer_names}
    graph = ExportedGraph(text=text, args=args, param_values=values, optimizer=opt_text,
                          buffer_values=buffer_values, updated_buffers=updated,
                          param_overrides=overrides)
    # Back to PyTorch: the names of the module's state_dict (msamp/weights.py).
    from .weights import state_dict_layout
    graph.state_dict_layout = state_dict_layout(model, param_names, buffer_names)
    if init_file is not None:
        graph.write_init(os.fspath(init_file))
    return graph


# "failed to legalize operation 'torch.aten.foo'" in torch-mlir's diagnostics.
_ILLEGAL_OP = re.compile(r"failed to legalize operation '([\w.]+)'")


def _trace_or_explain(model, loss_fn, items, param_names, buffer_names):
    """trace(), with PyTorch's tracing failures turned into ExportError."""
    try:
        return trace(model, loss_fn, items, param_names, buffer_names)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - anything make_fx raises
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise ExportError(
            f"tracing {type(model).__name__} + loss_fn with make_fx failed: "
            f"{type(e).__name__}: {first[:300]} (the step is traced with static "
            "shapes and no data-dependent Python control flow; run the model "
            "once eagerly on the example batch to check it)") from e


def _import_or_explain(fx, gm, func_name):
    """:func:`_lower_or_explain` in a child process (msamp/export_child.py:
    ops that crash torch-mlir must not take the exporting process down);
    the text comes back and is parsed in a context of our own."""
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    from . import export_child
    try:
        text = export_child.run(lambda: str(_lower_or_explain(fx, gm, func_name)))
    except export_child.ChildDied as e:
        ops = export_child.ops_that_kill(
            gm, lambda m: _lower_or_explain(fx, m, "single_op"))
        named = (f"lowering {', '.join(ops)} alone kills it too"
                 if ops else "no single op kills it alone")
        raise ExportError(
            f"torch-mlir crashed lowering the traced step ({e.why}); {named}: "
            "rewrite the module that uses it (sorting, top-k and boolean-mask "
            "indexing are known to crash torch-mlir 20261001), or give "
            "msamp.export a decomposition for it") from None
    context = ir.Context()
    torch_d.register_dialect(context)
    return ir.Module.parse(text, context)


def _lower_or_explain(fx, gm, func_name):
    """torch-mlir's import + lowering, with its failures reduced to the
    aten op it could not lower (never a multi-page IR dump): its
    diagnostics are collected in our own context instead of printed."""
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter
    context = ir.Context()
    torch_d.register_dialect(context)
    messages = []

    def collect(diagnostic):
        messages.append(str(diagnostic.message))
        messages.extend(str(note.message) for note in diagnostic.notes)
        return True

    context.attach_diagnostic_handler(collect)
    try:
        return fx.stateless_fx_import(gm, output_type="linalg-on-tensors",
                                      model_name=func_name,
                                      fx_importer=FxImporter(context=context))
    except MemoryError:
        raise  # a crash, not an op it cannot lower (export_child.run)
    except Exception as e:  # noqa: BLE001 - torch-mlir raises plain errors
        text = str(e) + "\n" + "\n".join(messages)
        ops = sorted(set(_ILLEGAL_OP.findall(text))
                     | set(re.findall(r'name = "(torch\.aten\.[\w.]+)"', text)))
        ops = [o for o in ops if o.startswith("torch.aten.") or o.startswith("torch.prim")]
        if ops:
            names = ", ".join(o.replace("torch.aten.", "aten.") for o in ops)
            raise ExportError(
                f"torch-mlir cannot lower {names} to linalg: rewrite the module "
                "that uses it, or give msamp.export a decomposition for it "
                "(msamp.export.decompositions())") from None
        first = messages[0] if messages else (str(e).strip().splitlines() or [""])[0]
        raise ExportError(f"torch-mlir failed to lower the traced step: "
                          f"{first[:300]}") from None
