"""Trained weights back to PyTorch: :func:`state_dict` and :func:`export_weights`.

``msamp.state_dict(trainer)`` returns what ``model.load_state_dict(sd,
strict=True)`` takes: one tensor per entry of the module's ``state_dict()``
under its PyTorch name, f32 values of the params exactly as the session
holds them (f16 / FP8 storage decoded with its scale; at O3 the FP16 master
of each param's owner rank), tied weights under every name they had,
buffers in their own dtype.

There is one definition of these bytes, in libmsamp_session
(``msamp_session_export_weights`` for a live session,
``msamp_export_checkpoint_weights`` for a checkpoint, including an O3
checkpoint's rank files); ``msamp-run --export-weights FILE`` calls the
same code, so its file equals :func:`export_weights`' byte for byte. This
module writes that file and reads it back.

The names come from the state_dict layout ``msamp.export`` records in the
init file (``ExportedGraph.write_init``): a session initialized from it keeps
the layout and writes it into its checkpoints. Without one, the params and
buffers are named as in the compiled step (the graph's ``msamp.name``).
"""

import os
import tempfile

from . import _native, checkpoint
from .compiler import CompiledStep

# The __metadata__ key of the layout (lib/Runtime/Session/Weights.h).
LAYOUT_KEY = "msamp_state_dict"


def state_dict_layout(model, param_names, buffer_names):
    """``[(key, source)]`` for every entry of ``model.state_dict()`` in its
    order: ``source`` is the exported param or buffer it holds (a tied
    weight's canonical name from ``named_parameters()``). Raises
    ``msamp.export.ExportError`` for an entry that is neither."""
    from .export import ExportError
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    owner = {id(params[n]): n for n in param_names}
    owner.update({id(buffers[n]): n for n in buffer_names})
    layout = []
    for key, value in model.state_dict(keep_vars=True).items():
        source = owner.get(id(value))
        if source is None:
            raise ExportError(f"state_dict entry {key!r} is neither a parameter nor a "
                              "buffer of the module (set by a custom "
                              "_save_to_state_dict?): msamp cannot give it back")
        layout.append((key, source))
    return layout


def _step_dir(step_dir):
    if step_dir is None:
        return None
    if isinstance(step_dir, CompiledStep):
        return str(step_dir.dir)
    return os.fspath(step_dir)


def export_weights(source, path, step_dir=None):
    """Writes the trained weights of ``source`` to the safetensors file
    ``path`` (``msamp-run --export-weights``' format) and returns ``path``.

    ``source``: a :class:`~msamp.Trainer`, a :class:`~msamp.Session`, or the
    path of a checkpoint (``Trainer.save`` / ``msamp-run --save``; at O3 the
    file without ``.rank<r>``, its rank files next to it). ``step_dir``
    (checkpoints only): the compiled step (a ``CompiledStep`` or its
    directory); it is checked against the checkpoint's level and graph and
    names the params when the checkpoint records no layout.
    """
    from .session import Session, SessionError, Trainer
    lib = _native.libraries().session
    target = os.fsencode(path)
    if isinstance(source, Trainer):
        source = source.session
    if isinstance(source, Session):
        if step_dir is not None:
            raise ValueError("step_dir is for checkpoints; a session knows its step")
        source._check(lib.msamp_session_export_weights(source._handle(), target))
        return path
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("source must be a Trainer, a Session or a checkpoint path, "
                        f"not {type(source).__name__}")
    directory = _step_dir(step_dir)
    status = lib.msamp_export_checkpoint_weights(
        os.fsencode(source), None if directory is None else os.fsencode(directory),
        target)
    if status != 0:
        raise SessionError(lib.msamp_status_name(status).decode(),
                           lib.msamp_last_error_message().decode())
    return path


def read_weights(path, as_numpy=None):
    """The tensors of an exported weights file in state_dict order: torch
    tensors, or numpy arrays when ``as_numpy`` (default: when torch is not
    installed)."""
    import json
    tensors, metadata = checkpoint.read(path)
    order = [key for key, _ in json.loads(metadata.get(LAYOUT_KEY, "[]"))]
    order += [k for k in tensors if k not in order]
    arrays = {k: tensors[k] for k in order}
    if as_numpy is None:
        try:
            import torch  # noqa: F401
            as_numpy = False
        except ImportError:
            as_numpy = True
    if as_numpy:
        return arrays
    import torch
    return {k: torch.from_numpy(v) for k, v in arrays.items()}


def state_dict(source, step_dir=None, as_numpy=None):
    """The trained weights of ``source`` as a PyTorch ``state_dict`` for
    ``model.load_state_dict(sd, strict=True)``; see :func:`export_weights`
    for ``source`` and ``step_dir``, :func:`read_weights` for ``as_numpy``.
    """
    with tempfile.TemporaryDirectory(prefix="msamp-weights-") as tmp:
        path = export_weights(source, os.path.join(tmp, "weights.safetensors"),
                              step_dir)
        return read_weights(path, as_numpy)

