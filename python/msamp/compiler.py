"""Compiling a training graph into a step the runtime can execute.

``compile(graph, opt_level="O2", **recipe)`` runs ``msamp-compile`` as a
subprocess (the upstream MLIR Python bindings are not available, and the
tool's output directory - ``train_step.so``, ``manifest.json``,
``train_step.mlir`` - is the documented interface) and returns a
:class:`CompiledStep`. Everything about the compiled step is read back from
that directory or from ``msamp-opt`` run on it, never re-derived in Python, so
the package cannot disagree with the compiler:

* the manifest (state, inputs, their roles, dtypes and inits),
* the memory report (``msamp-opt --msamp-memory-report=format=json``),
* the precision of every GEMM, read from ``train_step.mlir``: a
  ``msamp.gemm`` op runs in FP8 with its operands' element types, a linalg op
  that still carries the ``msamp.gemm`` classification stayed in high
  precision. The printed IR is stable where remarks are free text; remarks
  are only used, on request, for the reason a GEMM stayed in high precision.
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
    """msamp-compile or msamp-opt failed; the message carries their stderr."""


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


def compile(graph, opt_level="O2", out_dir=None, target="cpu",  # noqa: A001
            chip="sm_90", threads=None, **recipe):
    """Compile ``graph`` at ``opt_level`` ("O0" ... "O3", or a reference row:
    "amp-bf16", "amp-fp16", "te") with recipe
    options (``fp8_format="e4m3"``, ``amax_history_len=1024``,
    ``scale_kind="exact"``, ``exclude=r"^head\\."`` ...; docs/Interfaces.md 3/4).
    O3 compiles rank ``rank``'s program of a ``world_size``-rank group
    (``compile(g, "O3", world_size=2, rank=0)``).

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
    if opt_level not in ALL_LEVELS + REFERENCE_LEVELS:
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
    args = [_native.find_tool("msamp-compile"), str(source), "--opt-level",
            opt_level, "-o", str(out)]
    if options:
        args += ["--pipeline-options", options]
    if target == "cuda":
        args += ["--target", "cuda", "--chip", chip]
    if threads:
        args += [f"-j{int(threads)}"]
    _run(args, "msamp-compile")
    step = CompiledStep(out, opt_level=opt_level, options=options)
    if tmp is not None:
        step._tmp = tmp  # lives exactly as long as the step object
    return step


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


_GEMM_ATTR = re.compile(r"msamp\.gemm = \{([^{}]*)\}")
_STR_FIELD = re.compile(r'(\w+) = "([^"]*)"')
_ELEM = re.compile(r"tensor<(?:[0-9?]+x)*([A-Za-z0-9_]+)>")
_OP_NAME = re.compile(r"=\s*([a-z_]+\.[a-z_.]+)")


def parse_gemms(mlir_text):
    """The GEMM table of a compiled ``train_step.mlir`` (see module doc)."""
    gemms = []
    for line in mlir_text.splitlines():
        m = _GEMM_ATTR.search(line)
        if not m or "func.func" in line:
            continue
        fields = dict(_STR_FIELD.findall(m.group(1)))
        op = _OP_NAME.search(line)
        op_name = op.group(1) if op else "?"
        if op_name == "msamp.gemm":
            # msamp.gemm %a, %as, %b, %bs {...} : tensor<A>, tensor<B> -> tensor<C>
            sig = line[line.rindex("} :") + 3:]
            operands = sig.split("->")[0]
        else:
            # linalg.* {...} ins(%a, %b : tensor<A>, tensor<B>) outs(...) -> tensor<C>
            ins = line[line.index("ins(") + 4:]
            operands = ins[ins.index(":") + 1:ins.index(")")]
        types = _ELEM.findall(operands)
        result = _ELEM.findall(line.split("->")[-1])
        gemms.append(Gemm(kind=fields.get("kind", "?"),
                          layer=fields.get("layer", "?"),
                          weight=fields.get("weight", ""), op=op_name,
                          # The AMP levels' msamp.gemm reads bf16/f16.
                          fp8=op_name == "msamp.gemm" and bool(types)
                          and types[0].startswith("f8"),
                          lhs=types[0] if types else "?",
                          rhs=types[1] if len(types) > 1 else "?",
                          out=result[0] if result else "?"))
    return gemms


_REMARK = re.compile(r"^(.*?:\d+:\d+): remark: \[(\w+)\] (\S+) \| (.*)$")


def _explanations(remark_text):
    """(kind, layer) -> why, from msamp-opt's --remarks-filter=msamp output:
    classify-gemms names the GEMM at a location, fp8-gemms says why the GEMM
    at that location stayed in high precision."""
    names, reasons = {}, {}
    for line in remark_text.splitlines():
        m = _REMARK.match(line)
        if not m:
            continue
        loc, _, name, rest = m.groups()
        said = re.search(r'Remark="([^"]*)"', rest)
        said = said.group(1) if said else ""
        if name == "gemm":
            kind, _, layer = said.partition(" layer ")
            names[loc] = (kind, layer)
        elif name == "GemmKeptInHighPrecision":
            reasons[loc] = said.replace("GEMM kept in high precision: ", "")
    return {names[loc]: why for loc, why in reasons.items() if loc in names}


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

    def memory_report(self):
        """The compiler's memory report (docs/Interfaces.md 4's JSON), computed
        from train_step.mlir: unlike the session's it counts gradients."""
        if self._memory is None:
            proc = _run([_native.find_tool("msamp-opt"),
                         "--msamp-memory-report=format=json",
                         str(self.mlir_path), "-o", os.devnull], "msamp-opt")
            self._memory = json.loads(proc.stdout)
        return self._memory

    def gemms(self, explain=False):
        """The precision of every GEMM (a list of :class:`Gemm`).

        ``explain=True`` also fills ``Gemm.why`` for GEMMs kept in high
        precision, from the remarks of re-running the pipeline on the
        original graph (about as long as compiling it again).
        """
        table = parse_gemms(self.mlir_path.read_text())
        source = self.dir / "input.mlir"
        if not explain or self.level == "O0" or not source.is_file():
            return table
        pipeline = f"--msamp-{self.level.lower()}"
        if self.options:
            pipeline += f"={self.options}"
        proc = _run([_native.find_tool("msamp-opt"), str(source), pipeline,
                     "-o", os.devnull, "--remarks-filter=msamp"], "msamp-opt")
        why = _explanations(proc.stderr)
        return [g if g.fp8 else
                Gemm(**{**g.__dict__, "why": why.get((g.kind, g.layer), "")})
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
