"""Generators of contract graphs: forward + loss + backward as one MLIR function.

The graphs follow the input contract (docs/Interfaces.md section 1) and
the style of the reference example (docs/Inputs.md 3), so compiler tests and
benchmarks can get graphs of any size without torch. Command line:
``python -m msamp.graphs`` (see __main__.py). Python::

    from msamp import graphs
    g = graphs.build("transformer-lm", layers=2, dim=16, heads=2, seq=4, ffn=32,
                     vocab=16)
    g.text            # the MLIR module
    values = graphs.init_values(g.args, seed=0)
    graphs.reference.loss_and_grads(g, values)   # numpy f64 oracle
    graphs.run_mlir.run(g.text, values)          # what the MLIR computes

Modules: emitter (SSA text builder), layers / attention / losses (forward and
backward emission), mlp / transformer (models), spec (Graph, ArgSpec),
optimizer (module attribute), reference (numpy oracle), run_mlir (CPU runner).
"""

from . import mlp, reference, run_mlir, transformer
from .optimizer import optimizer_attr
from .spec import ArgSpec, Graph, init_values

MODELS = ("mlp", "transformer-block", "transformer-lm")

# The mlp defaults reproduce the shared example, including its learning rate.
DEFAULT_LR = {"mlp": 1e-2, "transformer-block": 1e-3, "transformer-lm": 1e-3}


def build(model, optimizer="adamw", lr=None, weight_decay=None, **sizes):
    """Build ``model`` with the given sizes (MlpConfig / TransformerConfig fields).

    Raises ValueError for unknown models, unknown or invalid sizes.
    """
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r} (expected one of {', '.join(MODELS)})")
    attr = optimizer_attr(optimizer, DEFAULT_LR[model] if lr is None else lr,
                          weight_decay)
    if model == "mlp":
        if "sizes" in sizes:
            sizes["sizes"] = tuple(sizes["sizes"])
        return mlp.build(mlp.MlpConfig(**sizes), attr)
    if model == "transformer-block":
        if sizes.get("layers", 1) != 1:
            raise ValueError("transformer-block has exactly one block "
                             "(use transformer-lm for --layers)")
        sizes["layers"] = 1
        return transformer.build_block(transformer.TransformerConfig(**sizes), attr)
    return transformer.build_lm(transformer.TransformerConfig(**sizes), attr)


__all__ = ["ArgSpec", "Graph", "MODELS", "build", "init_values", "optimizer_attr"]
