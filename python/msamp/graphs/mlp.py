"""The ``mlp`` model: Linear (+ReLU) layers and a mean-squared-error loss.

With the defaults (sizes 3,5,2, batch 4, AdamW lr 1e-2) it is the reference
example of docs/Inputs.md 3: same function name, argument names and order, same
math and optimizer attribute, so the example's reference numbers apply.
"""

import math
from dataclasses import dataclass

from . import layers, losses
from .spec import GraphBuilder


@dataclass(frozen=True)
class MlpConfig:
    """Layer widths ``sizes`` (input first, output last) and the batch size."""

    sizes: tuple = (3, 5, 2)
    batch: int = 4

    def validate(self):
        if len(self.sizes) < 2:
            raise ValueError("--sizes needs at least two widths (input and output), "
                             f"got {','.join(map(str, self.sizes))}")
        if any(s <= 0 for s in self.sizes) or self.batch <= 0:
            raise ValueError("sizes and batch must be positive, got sizes "
                             f"{','.join(map(str, self.sizes))} batch {self.batch}")


def build(cfg, optimizer_attr):
    """Emit the graph; parameters fc1.weight, fc1.bias, fc2.weight, ..."""
    cfg.validate()
    gb = GraphBuilder()
    em = gb.em
    sizes, n_layers = cfg.sizes, len(cfg.sizes) - 1
    weights, biases = [], []
    for i in range(n_layers):
        std = 1.0 / math.sqrt(sizes[i])
        weights.append(gb.param(f"fc{i + 1}.weight", (sizes[i + 1], sizes[i]),
                                ("normal", std)))
        biases.append(gb.param(f"fc{i + 1}.bias", (sizes[i + 1],), ("normal", 0.1)))
    x = gb.data("x", "input", (cfg.batch, sizes[0]))
    y = gb.data("y", "target", (cfg.batch, sizes[-1]))

    acts = [x]
    h = x
    for i in range(n_layers):
        em.comment(f"fc{i + 1}")
        h = layers.linear(em, h, weights[i], biases[i], hint=f"fc{i + 1}")
        if i < n_layers - 1:
            h = layers.relu(em, h, hint=f"h{i + 1}")
            acts.append(h)
    loss, grad = losses.mse(em, h, y)

    grads = {}
    for i in reversed(range(n_layers)):
        name = f"fc{i + 1}"
        dx, dw, db = layers.linear_backward(em, grad, acts[i], weights[i], True,
                                            need_dx=i > 0, hint=name)
        grads[f"{name}.weight"], grads[f"{name}.bias"] = dw, db
        if i > 0:
            grad = layers.relu_backward(em, dx, acts[i], hint=f"h{i}_d")
    return gb.finish("mlp", cfg, loss, grads, optimizer_attr)
