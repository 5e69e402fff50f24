"""Running a compiled step: :class:`Session` (one compiled step's state) and
:class:`Trainer` (a training loop with a learning-rate schedule and a log).

Session is a thin ctypes layer over ``msamp_session.h``; it adds no numerics
of its own, so what Python trains is exactly what ``msamp-run`` trains
(initialization streams, checkpoint format, learning-rate schedules and the
memory report all come from libmsamp_session). Tensors cross the boundary as
raw bytes in their storage dtype; see :data:`STORAGE_DTYPES`.
"""

import ctypes
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from . import _native
from .compiler import CompiledStep, compile as compile_graph

# numpy dtype of each storage type. numpy has no bf16 or FP8: those arrays
# hold the raw bits (msamp.numerics.decode turns them into f32).
STORAGE_DTYPES = {
    "f32": np.float32, "f16": np.float16, "bf16": np.uint16,
    "f8E4M3FN": np.uint8, "f8E5M2": np.uint8, "i64": np.int64, "i32": np.int32,
    "i1": np.bool_,
}


class SessionError(RuntimeError):
    """A libmsamp_session call failed. ``status`` is the status name, e.g.
    ``MSAMP_ERROR_MISMATCH``; the message is the library's."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status


class NonFiniteLossError(SessionError):
    """A non-finite step: NaN or Inf in the input data (found before the
    step runs), the loss, the gradients or the state the update left (the
    update is undone: the state is byte for byte that before the step);
    ``skip_nonfinite=True`` skips such a step instead (the state
    restored, the step counted, the counter advanced)."""


@dataclass(frozen=True)
class TensorSpec:
    """A state tensor or input as the session allocated it."""

    name: str
    role: str
    dtype: str
    shape: tuple
    num_bytes: int

    @property
    def numpy_dtype(self):
        return STORAGE_DTYPES[self.dtype]


def _spec(info):
    shape = tuple(info.shape[i] for i in range(info.rank))
    return TensorSpec(info.name.decode(), info.role.decode(), info.dtype.decode(),
                      shape, info.num_bytes)


class Session:
    """One compiled step, its state and its inputs.

    ``Session(compiled)`` opens a :class:`~msamp.compiler.CompiledStep` or an
    msamp-compile output directory; the state is zero until :meth:`init` or
    :meth:`load`. Use it as a context manager (or call :meth:`close`) to free
    the buffers deterministically.
    """

    def __init__(self, compiled):
        if not isinstance(compiled, CompiledStep):
            compiled = CompiledStep(compiled)
        self.compiled = compiled  # keeps a temporary directory alive
        self._lib = _native.libraries().session
        _native.keep_freed_memory()
        handle = ctypes.c_void_p()
        self._check(self._lib.msamp_session_open(str(compiled.dir).encode(),
                                                 ctypes.byref(handle)))
        self._h = handle
        self.state_specs = [self._info(self._lib.msamp_session_state_info, i)
                            for i in range(self._lib.msamp_session_num_state(handle))]
        self.input_specs = [self._info(self._lib.msamp_session_input_info, i)
                            for i in range(self._lib.msamp_session_num_inputs(handle))]
        self._by_name = {s.name: s for s in self.state_specs + self.input_specs}

    # ---- plumbing ---------------------------------------------------------
    def _check(self, status):
        if status != 0:
            name = self._lib.msamp_status_name(status).decode()
            message = self._lib.msamp_last_error_message().decode()
            cls = NonFiniteLossError if name == "MSAMP_ERROR_NONFINITE" else SessionError
            raise cls(name, message)

    def _handle(self):
        if self._h is None:
            raise ValueError("the session is closed")
        return self._h

    def _info(self, getter, i):
        info = _native.TensorInfo()
        self._check(getter(self._h, i, ctypes.byref(info)))
        return _spec(info)

    def _find(self, name):
        info = _native.TensorInfo()
        self._check(self._lib.msamp_session_find(self._handle(), name.encode(),
                                                 ctypes.byref(info)))
        return info

    def close(self):
        """Frees the session's buffers. Idempotent."""
        if getattr(self, "_h", None) is not None:
            self._lib.msamp_session_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # ---- description ------------------------------------------------------
    @property
    def level(self):
        return self._lib.msamp_session_level(self._handle()).decode()

    @property
    def graph_hash(self):
        return self._lib.msamp_session_graph_hash(self._handle()).decode()

    @property
    def default_lr(self):
        """The lr the graph was compiled with (its msamp.optimizer's)."""
        return self._lib.msamp_session_default_lr(self._handle())

    @property
    def global_step(self):
        """Completed steps (state: survives save/load)."""
        return self._lib.msamp_session_get_step(self._handle())

    @property
    def num_skipped(self):
        return self._lib.msamp_session_num_skipped(self._handle())

    @property
    def consecutive_skipped(self):
        """Steps skipped in a row up to the last one (0 after a committed
        step)."""
        return self._lib.msamp_session_num_consecutive_skipped(self._handle())

    @property
    def last_skip_reason(self):
        """Why the last skipped step was skipped ("" before the first)."""
        return self._lib.msamp_session_last_skip_reason(self._handle()).decode()

    @property
    def param_names(self):
        return [s.name for s in self.state_specs if s.role == "param"]

    @property
    def data_names(self):
        """Inputs a batch must provide (roles input and target)."""
        return [s.name for s in self.input_specs if s.role in ("input", "target")]

    def spec(self, name):
        return self._by_name[name]

    # ---- state ------------------------------------------------------------
    def init(self, seed=0, init_file=None, params=None):
        """Initializes the state per the manifest (msamp_session_init).

        ``init_file``: a safetensors file of f32 param values by name (and
        buffer values in the buffer's own dtype: i64 position ids, i1 masks);
        ``params``: the same as a dict of arrays (written to a temporary file,
        so the runtime's cast to storage precision is the one used).
        Returns how many params and buffers came from the file.
        """
        tmp = None
        if params is not None:
            if init_file is not None:
                raise ValueError("give init_file or params, not both")
            from safetensors.numpy import save_file
            tmp = tempfile.NamedTemporaryFile(suffix=".safetensors", delete=False)
            tmp.close()
            save_file({k: np.ascontiguousarray(v, self._init_dtype(k))
                       for k, v in params.items()}, tmp.name)
            init_file = tmp.name
        try:
            n = ctypes.c_int64()
            self._check(self._lib.msamp_session_init(
                self._handle(), seed,
                None if init_file is None else os.fsencode(init_file),
                ctypes.byref(n)))
            return n.value
        finally:
            if tmp is not None:
                os.unlink(tmp.name)

    def _init_dtype(self, name):
        """Initial values are f32, but a buffer's come in its own dtype."""
        spec = self._by_name.get(name)
        if spec is not None and spec.role == "buffer":
            return spec.numpy_dtype
        return np.float32

    def save(self, path):
        """Writes a checkpoint (safetensors, atomically; msamp-run's format)."""
        self._check(self._lib.msamp_session_save(self._handle(), os.fsencode(path)))

    def load(self, path):
        """Restores a checkpoint of the same graph, level and world size (an
        O3 checkpoint: any world size, RuntimeABI.md 12 "O3")."""
        self._check(self._lib.msamp_session_load(self._handle(), os.fsencode(path)))

    def tensor(self, name):
        """A copy of a state tensor or input in its storage dtype."""
        info = self._find(name)
        spec = self._by_name[name]
        raw = (ctypes.c_uint8 * info.num_bytes).from_address(info.data)
        return np.frombuffer(raw, dtype=spec.numpy_dtype).reshape(spec.shape).copy()

    def state_dict(self, roles=None):
        """Every state tensor (or those of ``roles``), by manifest name, as a
        copy in storage dtype: f16 weights still carry their scale, FP8
        moments are raw bits. :meth:`param` and
        :func:`msamp.inspect.dequantize` give real values."""
        return {s.name: self.tensor(s.name) for s in self.state_specs
                if roles is None or s.role in roles}

    def param(self, name):
        """The real (f32) value of a param: storage decoded and unscaled by
        the runtime's own numerics (msamp_session_read_param)."""
        spec = self._by_name[name]
        out = np.empty(spec.shape, np.float32)
        self._check(self._lib.msamp_session_read_param(
            self._handle(), name.encode(),
            out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size))
        return out

    def params(self):
        return {name: self.param(name) for name in self.param_names}

    # ---- inputs -----------------------------------------------------------
    def set_input(self, name, value):
        spec = self._by_name.get(name)
        if spec is None or spec.role not in ("input", "target"):
            raise KeyError(f"{name!r} is not an input of this step (inputs: "
                           f"{', '.join(self.data_names)})")
        array = np.ascontiguousarray(value, dtype=spec.numpy_dtype)
        if array.shape != spec.shape:
            raise ValueError(f"input {name!r}: shape {array.shape}, the step "
                             f"takes {spec.shape}")
        self._check(self._lib.msamp_session_set_input(
            self._handle(), name.encode(), array.ctypes.data_as(ctypes.c_void_p),
            array.nbytes))

    def set_batch(self, batch):
        """Binds a dict of arrays; every input and target must be given."""
        missing = [n for n in self.data_names if n not in batch]
        if missing:
            raise KeyError(f"batch lacks {', '.join(missing)}")
        for name, value in batch.items():
            self.set_input(name, value)

    def synthetic_batch(self, seed, step, num_classes=2):
        """Seeded random inputs (msamp-run --synthetic's)."""
        self._check(self._lib.msamp_session_synthetic_batch(
            self._handle(), seed, step, num_classes))

    def open_data(self, path):
        """Opens a safetensors data file (msamp-run --data's); returns K."""
        k, ignored = ctypes.c_int64(), ctypes.c_int64()
        self._check(self._lib.msamp_session_open_data(
            self._handle(), os.fsencode(path), ctypes.byref(k), ctypes.byref(ignored)))
        return k.value

    def select_batch(self, k):
        self._check(self._lib.msamp_session_select_batch(self._handle(), k))

    # ---- steps ------------------------------------------------------------
    def step(self, batch=None, lr=None, skip_nonfinite=False):
        """One training step; returns the loss computed before the update.

        ``batch``: a dict of arrays, or None to reuse the bound inputs.
        ``lr``: defaults to the graph's; NaN, infinite or negative raises
        SessionError (MSAMP_ERROR_INVALID_ARGUMENT), 0 is allowed. A
        non-finite step (input data, loss, gradients or updated state)
        raises NonFiniteLossError unless ``skip_nonfinite`` (then the state
        is restored, the step counted as skipped and the loss returned). An
        index input outside its valid range (a token id >= the vocabulary)
        raises SessionError naming the input, the value and the range,
        whatever ``skip_nonfinite`` says, before the step runs; an index
        the graph computes raises it naming the reading op's location.
        Every refused step leaves the state as it was before the step.
        """
        if batch is not None:
            self.set_batch(batch)
        flags = _native.libraries().step_flags["skip_nonfinite"] \
            if skip_nonfinite else 0
        return self._step(lr, flags)

    def eval(self, batch=None):
        """The loss on ``batch`` without changing the state, with dropout
        off (as PyTorch's ``model.eval()``; docs/Randomness.md 3)."""
        if batch is not None:
            self.set_batch(batch)
        return self._step(None, _native.libraries().step_flags["eval"])

    def _step(self, lr, flags):
        loss = ctypes.c_float()
        lr = self.default_lr if lr is None else lr
        self._check(self._lib.msamp_session_step(self._handle(), lr, flags,
                                                 ctypes.byref(loss)))
        return loss.value

    # ---- memory -----------------------------------------------------------
    def memory_report(self, include_grads=True):
        """Bytes of state per category (docs/Interfaces.md 4's names), measured
        from the session's buffers. Gradients live inside the compiled step;
        with ``include_grads`` their figure comes from the compiler's report
        (as msamp-run prints it) and ``grads_from`` says so.

        Returns ``{"level", "params", "bytes_per_param", "grads_from",
        "categories": {name: {"dtype", "bytes", "bytes_per_param"}}}``.
        """
        cats = (_native.MemoryCategory
                * len(_native.libraries().memory_categories))()
        n = ctypes.c_int64()
        self._check(self._lib.msamp_session_memory_report(self._handle(), cats,
                                                          ctypes.byref(n)))
        params = n.value
        per = 1.0 / params if params else 0.0
        categories = {c.name.decode(): {"dtype": c.dtype.decode(), "bytes": c.bytes}
                      for c in cats}
        grads_from = "none"
        if include_grads:
            try:
                compiler = self.compiled.memory_report()["categories"]["weight_grads"]
                categories["weight_grads"] = {"dtype": compiler["dtype"],
                                              "bytes": compiler["bytes"]}
                grads_from = "compiler"
            except (OSError, KeyError, ValueError):
                pass  # no memory_report.json: the session's figures only
        for c in categories.values():
            c["bytes_per_param"] = c["bytes"] * per
        total = sum(c["bytes"] for c in categories.values())
        return {"level": self.level, "params": params,
                "bytes_per_param": total * per, "grads_from": grads_from,
                "categories": categories}


    def peak_bytes(self):
        """The whole memory of training, planned against measured:
        ``{"planned": memory_report.json's peak_bytes (None without a
        plan), "measured": session + step, "session": the buffers bound to
        the step (state, inputs, outputs), "step": the most bytes the
        compiled step's own allocations held at once over the steps run so
        far}``."""
        session, step = ctypes.c_int64(), ctypes.c_int64()
        self._check(self._lib.msamp_session_peak_bytes(
            self._handle(), ctypes.byref(session), ctypes.byref(step)))
        try:
            planned = self.compiled.planned_peak_bytes
        except (OSError, ValueError):
            planned = None  # compiled before memory_report.json existed
        return {"planned": planned, "measured": session.value + step.value,
                "session": session.value, "step": step.value}


def lr_at(step, base_lr, schedule="constant", warmup=0, total_steps=0):
    """The learning rate of (1-based) ``step``: msamp_lr_at, msamp-run's."""
    schedules = _native.libraries().lr_schedules
    if schedule not in schedules:
        raise ValueError(f"schedule must be one of {sorted(schedules)}")
    lib = _native.libraries().session
    return lib.msamp_lr_at(schedules[schedule], base_lr, warmup,
                           total_steps, step)


class Trainer:
    """A training loop over a Session with msamp-run's semantics.

    ``model``: a Session, a CompiledStep, an output directory, or a graph
    (Graph, path or MLIR text; compiled at ``opt_level`` with ``recipe``).
    ``lr``: base learning rate (default: the graph's); ``schedule``
    "constant" or "cosine" with ``warmup`` steps over ``total_steps``
    (default: the last step of each :meth:`fit`). The session is initialized
    from ``seed`` / ``init_file`` / ``init_params`` unless it was given
    already open.

    ``log`` collects one dict per step: ``{"step", "loss", "lr",
    "nonfinite"}`` (msamp-run's --log-json lines).
    """

    def __init__(self, model, opt_level="O2", lr=None, schedule="constant",
                 warmup=0, total_steps=None, seed=0, init_file=None,
                 init_params=None, skip_nonfinite=False, recipe=None):
        schedules = _native.libraries().lr_schedules
        if schedule not in schedules:
            raise ValueError(f"schedule must be one of {sorted(schedules)}")
        if isinstance(model, Session):
            self.session = model
        else:
            if not isinstance(model, CompiledStep):
                if isinstance(model, (str, os.PathLike)) and os.path.isdir(model):
                    model = CompiledStep(model)
                else:
                    model = compile_graph(model, opt_level, **(recipe or {}))
            self.session = Session(model)
            self.session.init(seed=seed, init_file=init_file, params=init_params)
        self.lr = self.session.default_lr if lr is None else lr
        self.schedule = schedule
        self.warmup = warmup
        self.total_steps = total_steps
        self.seed = seed
        self.skip_nonfinite = skip_nonfinite
        self.log = []

    @property
    def losses(self):
        return [entry["loss"] for entry in self.log]

    def lr_at(self, step, horizon):
        return lr_at(step, self.lr, self.schedule, self.warmup,
                     self.total_steps or horizon)

    def _batches(self, batches, steps):
        """(steps, fn(step) -> binds the batch of that step)."""
        s = self.session
        if batches is None:
            if steps is None:
                raise ValueError("synthetic batches need steps=")
            return steps, lambda step: s.synthetic_batch(self.seed, step)
        if isinstance(batches, (str, os.PathLike)):
            k = s.open_data(batches)
            return (k if steps is None else steps,
                    lambda step: s.select_batch((step - 1) % k))
        if isinstance(batches, dict):
            batches = [batches]
        if isinstance(batches, Sequence):
            k = len(batches)
            return (k if steps is None else steps,
                    lambda step: s.set_batch(batches[(step - 1) % k]))
        if isinstance(batches, Callable):
            if steps is None:
                raise ValueError("a batch function needs steps=")
            return steps, lambda step: s.set_batch(batches(step))
        if isinstance(batches, Iterator) or hasattr(batches, "__iter__"):
            it = iter(batches)
            if steps is None:
                raise ValueError("an iterator of batches needs steps=")
            return steps, lambda step: s.set_batch(next(it))
        raise TypeError(f"cannot take batches from a {type(batches).__name__}")

    def fit(self, batches=None, steps=None, callback=None):
        """Trains ``steps`` steps and returns their losses.

        ``batches``: None (seeded synthetic batches), a safetensors data
        file, a list of dicts (step s uses item (s-1) mod K, like msamp-run
        --data), a dict (the same batch every step), a function of the
        1-based global step, or an iterator. ``callback(entry)`` is called
        after every step with its log entry.
        """
        steps, bind = self._batches(batches, steps)
        start = self.session.global_step
        horizon = start + steps
        losses = []
        for step in range(start + 1, horizon + 1):
            bind(step)
            lr = self.lr_at(step, horizon)
            loss = self.session.step(lr=lr, skip_nonfinite=self.skip_nonfinite)
            entry = {"step": step, "loss": loss, "lr": lr,
                     "nonfinite": not math.isfinite(loss)}
            self.log.append(entry)
            losses.append(loss)
            if callback is not None:
                callback(entry)
        return losses

    def evaluate(self, batches):
        """Mean loss over a list of batches, without updating, with dropout
        off (as PyTorch's ``model.eval()``)."""
        losses = [self.session.eval(b) for b in batches]
        return float(np.mean(losses))

    def write_log_json(self, path):
        """The log as msamp-run --log-json writes it (one object a line)."""
        with open(path, "w") as f:
            for e in self.log:
                loss = e["loss"] if not e["nonfinite"] else None
                f.write(json.dumps({**e, "loss": loss}) + "\n")

    # Delegation, so a Trainer can stand in for its session in scripts.
    def state_dict(self, roles=None):
        return self.session.state_dict(roles)

    def save(self, path):
        self.session.save(path)

    def load(self, path):
        self.session.load(path)

    def memory_report(self, include_grads=True):
        return self.session.memory_report(include_grads)

    def peak_bytes(self):
        return self.session.peak_bytes()

    def close(self):
        self.session.close()
