"""Small learnable synthetic tasks for the generated models.

Random inputs with random targets (msamp-run --synthetic) exercise the step
but teach nothing, so loss curves of different levels could not be told
apart from noise. These tasks have a rule a tiny model can learn in a few
hundred steps, so the curves go down and a level that trains worse shows:

* token ids -> next token (LM): sequences follow a fixed random permutation
  of the vocabulary (``t[i+1] = perm[t[i]]``), targets are the inputs
  shifted by one; learnable as a bigram table.
* float input -> class per position: ``argmax(x @ W)`` for a fixed W.
* float input -> float target (regression): ``x @ W / sqrt(in)``.

Batches are dicts of numpy arrays keyed by input name, deterministic in
``seed``.
"""

import numpy as np

_INT = ("i64", "i32")


def _fields(spec):
    """(name, role, shape, dtype) of a TensorSpec, ArgSpec or manifest dict."""
    if isinstance(spec, dict):
        return spec["name"], spec["role"], tuple(spec["shape"]), spec["dtype"]
    return spec.name, spec.role, tuple(spec.shape), spec.dtype


def task_batches(specs, count, num_classes, seed=0):
    """``count`` batches for the inputs/targets among ``specs``."""
    fields = [_fields(s) for s in specs]
    inputs = [f for f in fields if f[1] == "input"]
    targets = [f for f in fields if f[1] == "target"]
    if len(inputs) != 1 or len(targets) != 1:
        raise ValueError("task_batches handles one input and one target, got "
                         f"{[f[0] for f in inputs + targets]}")
    (xn, _, xs, xd), (yn, _, ys, yd) = inputs[0], targets[0]
    rng = np.random.default_rng(seed)
    batches = []
    if xd in _INT and yd in _INT:
        perm = rng.permutation(num_classes)
        for _ in range(count):
            start = rng.integers(0, num_classes, xs[:-1])
            seq = np.empty(xs[:-1] + (xs[-1] + 1,), np.int64)
            seq[..., 0] = start
            for i in range(xs[-1]):
                seq[..., i + 1] = perm[seq[..., i]]
            batches.append({xn: seq[..., :-1], yn: seq[..., 1:]})
    elif yd in _INT:
        w = rng.normal(size=(xs[-1], num_classes))
        for _ in range(count):
            x = rng.normal(size=xs).astype(np.float32)
            batches.append({xn: x, yn: np.argmax(x @ w, axis=-1).astype(np.int64)})
    else:
        w = rng.normal(size=(xs[-1], ys[-1])) / np.sqrt(xs[-1])
        for _ in range(count):
            x = rng.normal(size=xs).astype(np.float32)
            batches.append({xn: x, yn: (x @ w).astype(np.float32)})
    return batches
