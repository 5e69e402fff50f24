"""msamp: an MLIR compiler that turns exported training graphs into FP8 training steps.

The Python package drives the C++ tools and runtime (found by msamp._native)::

    import msamp
    from msamp import graphs
    step = msamp.compile(graphs.build("mlp"), opt_level="O2", fp8_format="hybrid")
    trainer = msamp.Trainer(step)
    trainer.fit(batches, steps=100)          # losses in trainer.log
    trainer.memory_report(); msamp.inspect.scaling_table(trainer)

``msamp.export(model, loss_fn, example_batch, optimizer=...)`` turns a PyTorch
module into a contract graph (needs the optional torch + torch-mlir);
``msamp.state_dict(trainer)`` gives the trained weights back for
``model.load_state_dict``.
Modules: compiler, session, inspect, numerics, data, plot, export, graphs.
"""

__version__ = "0.1.0"

from .compiler import CompiledStep, CompileError, compile, compile_all  # noqa: A004
from .session import NonFiniteLossError, Session, SessionError, Trainer
from .export import ExportedGraph, export
from .weights import export_weights, state_dict
from ._native import NativeNotFoundError
from . import checkpoint, data, inspect, numerics  # noqa: E402  (submodules as attributes)

__all__ = ["CompiledStep", "CompileError", "ExportedGraph", "NativeNotFoundError",
           "NonFiniteLossError", "Session", "SessionError", "Trainer", "checkpoint",
           "compile", "compile_all", "data", "export", "export_weights", "inspect",
           "numerics", "state_dict"]
