"""Execute a forward_backward graph on the CPU with upstream mlir-opt + mlir-runner.

Why: the numpy reference (reference.py) says what a graph should compute; this
runs what the MLIR text actually computes, with no project code in between, so a
generator bug cannot hide behind a matching bug in our own compiler.

How (verified with Debian's LLVM 22.1):
1. Append to the module ``@main``, which builds every argument as an
   ``arith.constant dense<"0x...">`` (raw little-endian bytes: exact and fast to
   parse), calls the forward_backward function, and for each result does
   ``bufferization.to_buffer`` + ``memref.cast`` to ``memref<*xf32>`` +
   ``call @printMemrefF32``.
2. Lower with ``mlir-opt`` and the pipeline in ``PIPELINE``:
   ``--one-shot-bufferize=bufferize-function-boundaries --buffer-deallocation-pipeline
   --convert-bufferization-to-memref --convert-linalg-to-loops --convert-scf-to-cf
   --expand-strided-metadata --lower-affine --convert-math-to-llvm
   --convert-math-to-libm --convert-arith-to-llvm --convert-func-to-llvm
   --finalize-memref-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts``.
   ``convert-math-to-llvm`` turns exp/log/sqrt/tanh into LLVM intrinsics but
   leaves ``math.erf``; ``convert-math-to-libm`` (after it) turns what is left
   into libm calls (``erff``), which the JIT resolves from the process.
3. ``mlir-runner -e main -entry-point-result=void -O0 -shared-libs=
   libmlir_runner_utils.so,libmlir_c_runner_utils.so``. ``-O0`` because graphs
   are small and JIT compile time dominates: the default-size 8-layer LM runs
   end to end in 6 s at -O0 and 27 s at -O2 (idle 2-core machine), printing
   the same numbers.
   Tiny graphs take 0.3 to 1 s.

``printMemrefF32`` prints 6 significant digits, so results carry a relative
rounding error of at most 5e-6: enough for the 1e-4 checks of the tests, not for
bit-exact comparisons.
"""

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np

LLVM_BIN = os.environ.get("MSAMP_LLVM_BIN", "/usr/lib/llvm-22/bin")
LLVM_LIB = os.environ.get("MSAMP_LLVM_LIB", "/usr/lib/llvm-22/lib")
MLIR_OPT = os.path.join(LLVM_BIN, "mlir-opt")
MLIR_RUNNER = os.path.join(LLVM_BIN, "mlir-runner")
SHARED_LIBS = [os.path.join(LLVM_LIB, "libmlir_runner_utils.so"),
               os.path.join(LLVM_LIB, "libmlir_c_runner_utils.so")]

PIPELINE = [
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--buffer-deallocation-pipeline",
    "--convert-bufferization-to-memref",
    "--convert-linalg-to-loops",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-arith-to-llvm",
    "--convert-func-to-llvm",
    "--finalize-memref-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
]

_NP_DTYPES = {"f32": np.float32, "i64": np.int64, "i32": np.int32}


def tools_available():
    """True when mlir-opt, mlir-runner and the runner libraries are installed."""
    return all(os.path.exists(p) for p in [MLIR_OPT, MLIR_RUNNER] + SHARED_LIBS)


# ---------------------------------------------------------------- signature ----

@dataclass(frozen=True)
class Slot:
    """One argument or result: role, name (None for the loss), type."""

    role: str
    name: object
    type_text: str

    @property
    def shape(self):
        return parse_tensor_type(self.type_text)[0]

    @property
    def elem(self):
        return parse_tensor_type(self.type_text)[1]


@dataclass(frozen=True)
class Signature:
    func_name: str
    args: tuple
    results: tuple


def parse_tensor_type(text):
    """``tensor<4x3xf32>`` -> ((4, 3), "f32")."""
    m = re.fullmatch(r"\s*tensor<((?:\d+x)*)(\w+)>\s*", text)
    if not m:
        raise ValueError(f"not a static tensor type: {text!r}")
    dims = tuple(int(d) for d in m.group(1).split("x") if d)
    return dims, m.group(2)


def _closing(text, pos):
    """Index just past the bracket group opening at ``text[pos]``."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    i = pos
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets in function header")


def _split_top(text):
    """Split at commas outside brackets, strings and ``<...>``."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c in "([{<":
            depth += 1
        elif c in ")]}>" and not (c == ">" and text[i - 1] == "-"):
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    if text[start:].strip():
        parts.append(text[start:])
    return parts


def _attr(attrs, key):
    m = re.search(rf'{re.escape(key)}\s*=\s*"([^"]*)"', attrs)
    return m.group(1) if m else None


def parse_signature(text):
    """The forward_backward function's signature, from the module text."""
    header = re.compile(r"func\.func\s+(?:(?:public|private|nested)\s+)?@([\w$.]+)\s*\(")
    for m in header.finditer(text):
        args_end = _closing(text, m.end() - 1)
        args_text = text[m.end():args_end - 1]
        pos = args_end
        rest = text[pos:]
        results_text = ""
        r = re.match(r"\s*->\s*", rest)
        if r:
            pos += r.end()
            if text[pos] == "(":
                end = _closing(text, pos)
                results_text = text[pos + 1:end - 1]
                pos = end
            else:
                t = re.match(r"tensor<[^>]*>", text[pos:])
                results_text = t.group(0) if t else ""
                pos += t.end() if t else 0
        a = re.match(r"\s*attributes\s*", text[pos:])
        func_attrs = ""
        if a:
            start = pos + a.end()
            func_attrs = text[start:_closing(text, start)]
        if _attr(func_attrs, "msamp.kind") != "forward_backward":
            continue
        args = []
        for part in _split_top(args_text):
            am = re.fullmatch(r"\s*%[\w$.-]+\s*:\s*(tensor<[^>]*>)\s*(\{.*\})?\s*",
                              part, re.S)
            if not am:
                raise ValueError(f"cannot parse argument {part.strip()!r}")
            attrs = am.group(2) or ""
            args.append(Slot(_attr(attrs, "msamp.role"), _attr(attrs, "msamp.name"),
                             am.group(1)))
        results = []
        for part in _split_top(results_text):
            rm = re.fullmatch(r"\s*(tensor<[^>]*>)\s*(\{.*\})?\s*", part, re.S)
            if not rm:
                raise ValueError(f"cannot parse result {part.strip()!r}")
            attrs = rm.group(2) or ""
            results.append(Slot(_attr(attrs, "msamp.role"), _attr(attrs, "msamp.name"),
                                rm.group(1)))
        return Signature(m.group(1), tuple(args), tuple(results))
    raise ValueError('no function with msamp.kind = "forward_backward" in the module')


# ---------------------------------------------------------------- wrapper ----

def _dense(value, slot):
    shape, elem = slot.shape, slot.elem
    if elem not in _NP_DTYPES:
        raise ValueError(f"unsupported element type {elem} for {slot.name}")
    arr = np.asarray(value)
    if arr.shape != shape:
        raise ValueError(f"value for {slot.name} has shape {arr.shape}, want {shape}")
    if elem.startswith("i") and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"value for {slot.name} must be integer")
    data = np.ascontiguousarray(arr.astype(np.dtype(_NP_DTYPES[elem]).newbyteorder("<")))
    return f'dense<"0x{data.tobytes().hex().upper()}"> : {slot.type_text}'


def build_main(text, sig, values):
    """The module text with ``@main`` (see the module docstring) appended."""
    if re.search(r"func\.func\s+(?:\w+\s+)?@main\b", text):
        raise ValueError("the module already has a @main function")
    lines = []
    if "@printMemrefF32" not in text:
        lines.append("  func.func private @printMemrefF32(memref<*xf32>) "
                     "attributes {llvm.emit_c_interface}")
    lines.append("  func.func @main() {")
    operands = []
    for i, slot in enumerate(sig.args):
        if slot.name not in values:
            raise ValueError(f"no value given for argument {slot.name!r}")
        lines.append(f"    %arg{i} = arith.constant {_dense(values[slot.name], slot)}")
        operands.append(f"%arg{i}")
    n = len(sig.results)
    arg_types = ", ".join(s.type_text for s in sig.args)
    res_types = ", ".join(s.type_text for s in sig.results)
    res = "%res" + (f":{n}" if n > 1 else "")
    lines.append(f"    {res} = call @{sig.func_name}({', '.join(operands)}) : "
                 f"({arg_types}) -> ({res_types})")
    for i, slot in enumerate(sig.results):
        if slot.elem != "f32":
            raise ValueError(f"result {i} has element type {slot.elem}; only f32 prints")
        shape = slot.shape
        memref = f"memref<{''.join(f'{d}x' for d in shape)}f32>"
        ref = f"%res#{i}" if n > 1 else "%res"
        lines.append(f"    %buf{i} = bufferization.to_buffer {ref} : "
                     f"{slot.type_text} to {memref}")
        lines.append(f"    %ubuf{i} = memref.cast %buf{i} : {memref} to memref<*xf32>")
        lines.append(f"    call @printMemrefF32(%ubuf{i}) : (memref<*xf32>) -> ()")
    lines += ["    return", "  }"]
    end = text.rstrip().rfind("}")
    if end < 0:
        raise ValueError("expected a `module { ... }`")
    return text[:end] + "\n".join(lines) + "\n}\n"


# ---------------------------------------------------------------- output ----

_NUMBER = re.compile(r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


def parse_printed(stdout):
    """Arrays from consecutive printMemrefF32 outputs."""
    arrays = []
    for chunk in stdout.split("Unranked Memref")[1:]:
        sizes = re.search(r"sizes = \[([^\]]*)\]", chunk).group(1)
        shape = tuple(int(s) for s in sizes.split(",") if s.strip())
        data = chunk.split("data =", 1)[1]
        nums = [float(x) for x in _NUMBER.findall(data)]
        arrays.append(np.array(nums, dtype=np.float64).reshape(shape))
    return arrays


@dataclass
class RunResult:
    """The loss and gradients (by param name) a graph computed, as f64 arrays."""

    loss: float
    grads: dict
    outputs: list


def run(text, values, opt_level="O0", workdir=None, timeout=600):
    """Run the forward_backward function of ``text`` on ``values`` (name -> array).

    Raises RuntimeError with the tool's stderr if lowering or execution fails.
    """
    if not tools_available():
        raise FileNotFoundError(f"mlir-opt / mlir-runner not found under {LLVM_BIN}")
    sig = parse_signature(text)
    module = build_main(text, sig, values)
    with tempfile.TemporaryDirectory(prefix="msamp-run-") as tmp:
        tmp = workdir or tmp
        src = os.path.join(tmp, "graph_main.mlir")
        low = os.path.join(tmp, "graph_llvm.mlir")
        with open(src, "w") as f:
            f.write(module)
        lowered = subprocess.run([MLIR_OPT, src, *PIPELINE, "-o", low],
                                 capture_output=True, text=True, timeout=timeout)
        _check(lowered, "mlir-opt")
        proc = subprocess.run(
            [MLIR_RUNNER, low, "-e", "main", "-entry-point-result=void", f"-{opt_level}",
             "-shared-libs=" + ",".join(SHARED_LIBS)],
            capture_output=True, text=True, timeout=timeout)
        _check(proc, "mlir-runner")
    outputs = parse_printed(proc.stdout)
    if len(outputs) != len(sig.results):
        raise RuntimeError(f"expected {len(sig.results)} printed results, got "
                           f"{len(outputs)}:\n{proc.stdout[-2000:]}")
    loss, grads = None, {}
    for slot, arr in zip(sig.results, outputs):
        if slot.role == "loss":
            loss = float(arr)
        elif slot.role == "grad":
            grads[slot.name] = arr
    return RunResult(loss, grads, outputs)


def _check(proc, tool):
    if proc.returncode != 0:
        raise RuntimeError(f"{tool} failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-4000:]}")
