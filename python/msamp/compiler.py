"""Compiling a training graph into a step the runtime can execute.

``compile(graph, opt_level="O2", **recipe)`` runs ``msamp-compile`` as a
subprocess (the upstream MLIR Python bindings are not available, and the
tool's output directory - ``train_step.so``, ``manifest.json``,
``train_step.mlir``, ``memory_report.json``, ``gemms.json`` - is the
documented interface, docs/Interfaces.md 4) and returns a :class:`CompiledStep`.
Everything about the compiled step is read back from the files msamp-compile
wrote into that directory, never re-derived in Python and never by running
the compiler again, so the package cannot disagree with the compiler:

* the manifest (state, inputs, their roles, dtypes and inits),
* the memory report (``memory_report.json``: bytes per category, and
  ``peak_bytes``, the high-water mark of the static buffer plan),
* the precision of every GEMM and why one stayed in high precision
  (``gemms.json``, written by the passes that decide).
"""

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import _native

LEVELS = ("O0", "O1", "O2")
# O3 is one rank's program of a fixed group: compile(g, "O3", world_size=N,
# rank=R); compile_all's default stays the replicated levels.
ALL_LEVELS = LEVELS + ("O3",)
# The reference rows of MS-AMP's level table (docs/Levels.md): PyTorch
# autocast in bf16 / fp16 and Transformer Engine's DelayedScaling. The C++
# list they mirror is include/MSAMP/Support/Levels.h; msamp-compile rejects
# any other name with the full list.
REFERENCE_LEVELS = ("amp-bf16", "amp-fp16", "te")


class CompileError(RuntimeError):
    """msamp-compile failed; the message carries its stderr."""


def pipeline_options(**recipe):
    """The ``--msamp-oN`` option string for recipe keyword arguments.

    ``fp8_format="hybrid"`` becomes ``fp8-format=hybrid``, booleans are
    written ``true``/``false`` (MLIR's spelling), ``None`` values are left out
    so callers can forward optional arguments unchanged.
    """
    parts = []
    for key, value in recipe.items():
        if value is None:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = str(value)
        if not text or any(c.isspace() for c in text) or "{" in text or "}" in text:
            raise ValueError(f"recipe option {key}={value!r}: values may not "
                             "be empty or contain spaces or braces")
        parts.append(f"{key.replace('_', '-')}={text}")
    return " ".join(parts)


def graph_text(graph):
    """MLIR text of a graph given as an ``msamp.graphs.Graph`` (or anything
    with a ``.text``), a path, or MLIR text itself."""
    if hasattr(graph, "text"):
        return graph.text
    if isinstance(graph, os.PathLike):
        return Path(graph).read_text()
    if isinstance(graph, str):
        # An existing file is read; otherwise a string with any of MLIR's
        # brackets, SSA or symbol sigils (even one line: "module {}") is text.
        if "\n" not in graph and os.path.isfile(graph):
            return Path(graph).read_text()
        if any(c in graph for c in "{}()%@\n"):
            return graph
        raise FileNotFoundError(f"{graph!r}: no such file, nor MLIR text "
                                "(a str is MLIR text or the path of a file)")
    raise TypeError(f"cannot compile a {type(graph).__name__}: expected a "
                    "Graph, a path or MLIR text")


def _run(args, what):
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(f"{what} failed (exit {proc.returncode}): "
                           f"{' '.join(map(str, args))}\n{proc.stderr.strip()}")
    return proc


def compile(graph, opt_level=None, out_dir=None, target="cpu",  # noqa: A001
            chip="sm_90", threads=None, accelerate_config=None, **recipe):
    """Compile ``graph`` at ``opt_level`` ("O0" ... "O3", or a reference row:
    "amp-bf16", "amp-fp16", "te"; default "O2") with recipe
    options (``fp8_format="e4m3"``, ``amax_history_len=1024``,
    ``scale_kind="exact"``, ``exclude=r"^head\\."`` ...; docs/Interfaces.md 3/4).
    O3 compiles rank ``rank``'s program of a ``world_size``-rank group
    (``compile(g, "O3", world_size=2, rank=0)``).

    ``accelerate_config``: a Hugging Face Accelerate config (the path of its
    YAML file, or the dict it holds) whose ``mixed_precision`` and
    ``fp8_config`` choose the level and its options, as ``msamp-compile
    --recipe`` maps them (docs/Levels.md); an ``opt_level`` given too must be
    the same level. The printed mapping is the step's ``recipe_mapping``.

    ``target="cuda"`` compiles the elementwise code to GPU kernels for
    ``chip`` ("sm_90" or "sm_89"; docs/RuntimeABI.md 13): its sessions need
    the cuda backend (``msamp_rt_set_backend("cuda")``) before they open.

    ``threads``: msamp-compile's code generation threads (``-j``; default:
    the cores available); the compiled step is the same for every value.

    ``out_dir``: where msamp-compile writes; by default a temporary directory
    removed when the CompiledStep (and every Session using it) is gone.
    An already compiled ``train_step`` module is accepted too; its level is
    then the one it was compiled at.
    """
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', got {target!r}")
    if chip not in ("sm_90", "sm_89"):
        raise ValueError(f"chip must be 'sm_90' or 'sm_89', got {chip!r}")
    if opt_level is None and accelerate_config is None:
        opt_level = "O2"
    if opt_level is not None and opt_level not in ALL_LEVELS + REFERENCE_LEVELS:
        raise ValueError("opt_level must be one of "
                         f"{', '.join(ALL_LEVELS + REFERENCE_LEVELS)}, "
                         f"got {opt_level!r}")
    options = pipeline_options(**recipe)
    text = graph_text(graph)
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="msamp-step-")
        out_dir = tmp.name
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    source = out / "input.mlir"
    source.write_text(text)
    args = [_native.find_tool("msamp-compile"), str(source), "-o", str(out)]
    if opt_level is not None:
        args += ["--opt-level", opt_level]
    if accelerate_config is not None:
        args += ["--recipe", _recipe_file(accelerate_config, out)]
    if options:
        args += ["--pipeline-options", options]
    if target == "cuda":
        args += ["--target", "cuda", "--chip", chip]
    if threads:
        args += [f"-j{int(threads)}"]
    proc = _run(args, "msamp-compile")
    mapping = ""
    if accelerate_config is not None:
        # The tool's first line names the level and the options it applied:
        # "recipe FILE: level te {fp8-format=hybrid ...}".
        mapping = "\n".join(line for line in proc.stdout.splitlines()
                            if not line.startswith("msamp-compile:"))
        applied = re.match(r"recipe .*: level \S+(?: \{(.*)\})?$",
                           mapping.splitlines()[0])
        options = " ".join(filter(None, [applied and applied.group(1), options]))
    step = CompiledStep(out, opt_level=opt_level, options=options)
    step.recipe_mapping = mapping
    if tmp is not None:
        step._tmp = tmp  # lives exactly as long as the step object
    return step


def _recipe_file(config, out):
    """msamp-compile --recipe's file: the path itself, or a dict written as
    JSON (which is YAML) next to the compiled step."""
    if isinstance(config, dict):
        path = out / "accelerate_config.json"
        path.write_text(json.dumps(config))
        return str(path)
    if isinstance(config, (str, os.PathLike)):
        if not os.path.isfile(config):
            raise FileNotFoundError(f"accelerate_config {str(config)!r}: no "
                                    "such file")
        return str(config)
    raise TypeError("accelerate_config must be a file path or a dict, got "
                    f"{type(config).__name__}")


def compile_all(graph, levels=LEVELS, jobs=None, **recipe):
    """``{level: CompiledStep}``, compiled concurrently (compiling dominates
    short runs); ``jobs`` (default: the CPU count) is the total of threads:
    the concurrent compiles share them (each gets ``-j jobs // compiles``)
    instead of each msamp-compile using every core."""
    from concurrent.futures import ThreadPoolExecutor
    text = graph_text(graph)
    jobs = jobs or os.cpu_count() or 1
    workers = max(1, min(jobs, len(levels)))
    threads = max(1, jobs // workers)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {lv: pool.submit(compile, text, lv, threads=threads,
                                   **recipe)
                   for lv in levels}
        return {lv: f.result() for lv, f in futures.items()}


@dataclass(frozen=True)
class Gemm:
    """One GEMM of a compiled step.

    ``kind``: fprop, dgrad, wgrad, attention_fwd, attention_bwd or other;
    ``layer``: the layer name (``fc1``) or ``gemm<N>`` for attention GEMMs;
    ``fp8``: whether it runs as a scaled FP8 GEMM; ``lhs``/``rhs``/``out``:
    element types (f8E4M3FN, f8E5M2, f32...); ``why``: the compiler's reason
    for keeping it in high precision (only with ``gemms(explain=True)``).
    """

    kind: str
    layer: str
    weight: str
    op: str
    fp8: bool
    lhs: str
    rhs: str
    out: str
    why: str = ""

    @property
    def precision(self):
        return f"{self.lhs} x {self.rhs} -> {self.out}"


class CompiledStep:
    """An msamp-compile output directory and what can be read from it."""

    def __init__(self, directory, opt_level=None, options=""):
        self.dir = Path(directory)
        manifest = self.dir / "manifest.json"
        if not manifest.is_file():
            raise FileNotFoundError(f"{manifest} not found: not an "
                                    "msamp-compile output directory")
        self.manifest = json.loads(manifest.read_text())
        self.level = self.manifest.get("level", opt_level)
        self.options = options
        self.recipe_mapping = ""  # what an accelerate_config mapped to
        self._memory = None
        self._tmp = None

    def __repr__(self):
        return f"CompiledStep({str(self.dir)!r}, level={self.level!r})"

    @property
    def mlir_path(self):
        return self.dir / "train_step.mlir"

    @property
    def state(self):
        """Manifest entries of the state tensors."""
        return self.manifest["state"]

    @property
    def inputs(self):
        """Manifest entries of the per-step inputs (input, target, lr...)."""
        return self.manifest["inputs"]

    @property
    def params(self):
        return [s["name"] for s in self.state if s["role"] == "param"]

    def _report(self, name):
        """A JSON report msamp-compile wrote next to the manifest."""
        path = self.dir / name
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: {self.dir} was compiled before "
                f"msamp-compile wrote {name}; compile it again")
        return json.loads(path.read_text())

    def memory_report(self):
        """The compiler's memory report (``memory_report.json``,
        docs/Interfaces.md 4): bytes per category (unlike the session's it counts
        gradients), and ``peak_bytes`` / ``peak`` from the static buffer
        plan (CPU targets)."""
        if self._memory is None:
            self._memory = self._report("memory_report.json")
        return self._memory

    @property
    def planned_peak_bytes(self):
        """``peak_bytes`` of the memory report: state, inputs and outputs
        plus the step's own buffers at the worst point of the static plan
        (None for a target without a plan)."""
        return self.memory_report().get("peak_bytes")

    def gemms(self, explain=False):
        """The precision of every GEMM (a list of :class:`Gemm`, from
        ``gemms.json``). ``explain=True`` also fills ``Gemm.why`` for GEMMs
        kept in high precision (the reason the compiler recorded)."""
        table = self._report("gemms.json")["gemms"]
        return [Gemm(kind=g["kind"], layer=g["layer"], weight=g["weight"],
                     op=g["op"], fp8=g["fp8"], lhs=g["lhs"], rhs=g["rhs"],
                     out=g["out"], why=g["why"] if explain else "")
                for g in table]

    def session(self, seed=0, init_file=None, init=True):
        """A :class:`msamp.session.Session` on this step, initialized."""
        from .session import Session
        s = Session(self)
        if init:
            s.init(seed=seed, init_file=init_file)
        return s

    def cleanup(self):
        """Removes a temporary output directory now."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def load(directory):
    """A CompiledStep for an existing msamp-compile output directory."""
    return CompiledStep(directory)
