"""What a generated graph is: its text plus the metadata tests and benchmarks need.

The arguments are described once here (name, role, shape, dtype and how to
initialise them) so that the numpy reference, the MLIR runner and benchmarks all
feed a graph the same way without parsing its text.
"""

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from .emitter import F32, FunctionEmitter, TensorType

FUNC_NAME = "fwd_bwd"


@dataclass(frozen=True)
class ArgSpec:
    """One argument of the forward_backward function.

    ``init`` says how to draw a value: ("normal", std), ("around_one", std) for
    LayerNorm weights, or ("randint", high) for token ids / class targets.
    """

    name: str
    role: str
    shape: tuple
    dtype: str = F32
    init: tuple = ("normal", 1.0)

    @property
    def type(self):
        return TensorType(self.shape, self.dtype)


@dataclass
class Graph:
    """A generated contract graph."""

    model: str
    config: object
    args: list
    text: str
    func_name: str = FUNC_NAME
    op_counts: Counter = field(default_factory=Counter)
    written_ops: int = 0
    top_level_ops: int = 0

    @property
    def params(self):
        return [a for a in self.args if a.role == "param"]

    @property
    def data(self):
        return [a for a in self.args if a.role != "param"]

    @property
    def total_ops(self):
        """All ops as ``mlir-opt --print-op-stats`` counts them."""
        return sum(self.op_counts.values())

    def stats_text(self):
        """The ``--stats`` report (stderr): sizes first, then op kinds."""
        n_params = sum(math.prod(a.shape) for a in self.params)
        lines = [
            f"model: {self.model}",
            f"params: {len(self.params)} tensors, {n_params} values",
            f"ops: {self.total_ops} (as mlir-opt --print-op-stats counts, "
            f"named-op bodies included), {self.written_ops} written, "
            f"{self.top_level_ops} at the function's top level",
        ]
        for op in sorted(self.op_counts):
            lines.append(f"  {op:24s} {self.op_counts[op]}")
        return "\n".join(lines) + "\n"


class GraphBuilder:
    """Declares arguments in contract order and assembles the Graph."""

    def __init__(self):
        self.em = FunctionEmitter()
        self.args = []

    def param(self, name, shape, init=("normal", 1.0)):
        return self._arg(ArgSpec(name, "param", tuple(shape), F32, init))

    def data(self, name, role, shape, dtype=F32, init=("normal", 1.0)):
        return self._arg(ArgSpec(name, role, tuple(shape), dtype, init))

    def _arg(self, spec):
        if any(a.name == spec.name for a in self.args):
            raise ValueError(f"duplicate argument name {spec.name}")
        self.args.append(spec)
        attrs = f'msamp.role = "{spec.role}", msamp.name = "{spec.name}"'
        return self.em.arg(spec.name, spec.type, attrs)

    def finish(self, model, config, loss, grads, optimizer_attr):
        """``grads``: name -> Value, one per param; returned in param order."""
        params = [a for a in self.args if a.role == "param"]
        missing = [p.name for p in params if p.name not in grads]
        if missing or len(grads) != len(params):
            raise ValueError(f"gradients missing for {missing}")
        results = [(loss, 'msamp.role = "loss"')]
        for p in params:
            g = grads[p.name]
            if g.type != p.type:
                raise ValueError(f"grad of {p.name} has type {g.type}, want {p.type}")
            results.append((g, f'msamp.role = "grad", msamp.name = "{p.name}"'))
        text = self.em.finish(FUNC_NAME, results,
                              'msamp.kind = "forward_backward"',
                              f"msamp.optimizer = {optimizer_attr}")
        return Graph(model=model, config=config, args=list(self.args), text=text,
                     op_counts=self.em.mlir_op_counts(),
                     written_ops=sum(self.em.op_counts.values()),
                     top_level_ops=self.em.top_level_ops)


def init_values(args, seed=0):
    """Draw a value for every ArgSpec from its ``init`` hint (f64 arrays, int64 ids).

    Deterministic in ``seed``; draws happen in argument order so adding a model
    does not change the values of another.
    """
    rng = np.random.default_rng(seed)
    values = {}
    for a in args:
        kind, arg = a.init
        if kind == "normal":
            values[a.name] = rng.normal(0.0, arg, a.shape)
        elif kind == "around_one":
            values[a.name] = 1.0 + rng.normal(0.0, arg, a.shape)
        elif kind == "randint":
            values[a.name] = rng.integers(0, arg, a.shape, dtype=np.int64)
        else:
            raise ValueError(f"unknown init {a.init!r} for {a.name}")
    return values
