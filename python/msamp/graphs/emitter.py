"""An SSA text builder for contract graphs (func/linalg/tensor/arith/math on tensors).

Why text: Debian's LLVM 22 ships no MLIR Python bindings, so graphs are written as
MLIR text that upstream ``mlir-opt`` parses. The builder keeps SSA names unique,
writes every type explicitly, checks shapes as it goes (a generator bug becomes a
Python error, not a verifier error in someone else's pipeline) and counts every op
it writes so that ``--stats`` is exact.

Conventions, chosen to match the reference example (docs/Inputs.md 3):
- ``x @ W^T`` is ``linalg.matmul`` with maps (m,k),(n,k),(m,n); ``dY^T @ X`` is a
  matmul with maps (k,m),(k,n),(m,n); a plain ``A @ B`` carries no maps.
- Every GEMM accumulates into its own zero ``linalg.fill``; every elementwise op
  writes into its own ``tensor.empty``. Nothing is shared between ops, as in a
  graph an exporter writes.
- Scalar constants are emitted once, at the top of the function, and used from
  inside ``linalg.generic`` bodies (those regions are not isolated from above).
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np

F32 = "f32"
I64 = "i64"

# Ops with an implicit region that mlir-opt prints in short form: the ops inside
# that region count in ``mlir-opt --print-op-stats`` but are not written by us.
IMPLICIT_BODY_OPS = {
    "linalg.matmul": ("arith.mulf", "arith.addf", "linalg.yield"),
    "linalg.batch_matmul": ("arith.mulf", "arith.addf", "linalg.yield"),
    "linalg.fill": ("linalg.yield",),
    "linalg.transpose": ("linalg.yield",),
}

F32_LOWEST = float(np.finfo(np.float32).min)


def float_literal(value):
    """An MLIR float literal for ``value`` (MLIR requires a '.' in the mantissa).

    ``repr`` is the shortest decimal that round-trips the double, so an f32 value
    written this way parses back to exactly the same f32.
    """
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"non-finite constant {text} has no decimal literal")
    mantissa, has_exp, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if has_exp else "")


def f32_literal(value):
    """The literal of ``value`` rounded to f32, so MLIR and numpy agree on it."""
    return float_literal(np.float32(value))


@dataclass(frozen=True)
class TensorType:
    """A static ranked tensor type."""

    shape: tuple
    elem: str = F32

    def __str__(self):
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.elem}>"

    @property
    def rank(self):
        return len(self.shape)


@dataclass(frozen=True)
class Value:
    """An SSA value: its name (with '%') and type (TensorType or scalar type)."""

    name: str
    type: object

    @property
    def shape(self):
        return self.type.shape


def affine_map(dim_names, results):
    """``affine_map<(d0, d1) -> (d1)>`` with ``results`` given as dim indices."""
    dims = ", ".join(dim_names)
    res = ", ".join(dim_names[r] for r in results)
    return f"affine_map<({dims}) -> ({res})>"


def _dim_names(n):
    return [f"d{i}" for i in range(n)]


class Body:
    """Builds the scalar region of a ``linalg.generic`` / ``linalg.reduce``.

    Operands may be Values or Python numbers (numbers become f32 constants).
    """

    def __init__(self, emitter, indent):
        self._em = emitter
        self._indent = " " * indent
        self.lines = []

    def _operand(self, v):
        return v if isinstance(v, Value) else self._em.constant(v)

    def _op(self, opname, operands, type_text, result_type, hint="v", attrs=""):
        name = self._em.fresh(hint)
        ops = ", ".join(self._operand(o).name for o in operands)
        sep = " " if attrs else ""
        self.lines.append(
            f"{self._indent}{name} = {opname} {attrs}{sep}{ops} : {type_text}")
        self._em.count(opname, nested=True)
        return Value(name, result_type)

    def _float_op(self, opname, *operands):
        operands = [self._operand(o) for o in operands]
        return self._op(opname, operands, operands[0].type, operands[0].type)

    # Arithmetic (f32).
    def addf(self, a, b):
        return self._float_op("arith.addf", a, b)

    def subf(self, a, b):
        return self._float_op("arith.subf", a, b)

    def mulf(self, a, b):
        return self._float_op("arith.mulf", a, b)

    def divf(self, a, b):
        return self._float_op("arith.divf", a, b)

    def maximumf(self, a, b):
        return self._float_op("arith.maximumf", a, b)

    def exp(self, a):
        return self._float_op("math.exp", a)

    def log(self, a):
        return self._float_op("math.log", a)

    def tanh(self, a):
        return self._float_op("math.tanh", a)

    def sqrt(self, a):
        return self._float_op("math.sqrt", a)

    # Comparisons, selection, indices.
    def cmpf(self, predicate, a, b):
        a, b = self._operand(a), self._operand(b)
        return self._op("arith.cmpf", [a, b], a.type, "i1", "c",
                        attrs=predicate + ",")

    def cmpi(self, predicate, a, b):
        return self._op("arith.cmpi", [a, b], a.type, "i1", "c",
                        attrs=predicate + ",")

    def select(self, cond, a, b):
        a, b = self._operand(a), self._operand(b)
        return self._op("arith.select", [cond, a, b], a.type, a.type, "s")

    def index(self, dim):
        name = self._em.fresh("i")
        self.lines.append(f"{self._indent}{name} = linalg.index {dim} : index")
        self._em.count("linalg.index", nested=True)
        return Value(name, "index")

    def index_cast(self, a, to_type):
        name = self._em.fresh("ix")
        self.lines.append(
            f"{self._indent}{name} = arith.index_cast {a.name} : {a.type} to {to_type}")
        self._em.count("arith.index_cast", nested=True)
        return Value(name, to_type)

    def extract(self, tensor, indices):
        name = self._em.fresh("x")
        idx = ", ".join(i.name for i in indices)
        self.lines.append(
            f"{self._indent}{name} = tensor.extract {tensor.name}[{idx}] : {tensor.type}")
        self._em.count("tensor.extract", nested=True)
        return Value(name, tensor.type.elem)

    def yield_(self, values):
        values = [self._operand(v) for v in values]
        names = ", ".join(v.name for v in values)
        types = ", ".join(str(v.type) for v in values)
        self.lines.append(f"{self._indent}linalg.yield {names} : {types}")
        self._em.count("linalg.yield", nested=True)


class FunctionEmitter:
    """Writes the body of one function; ``finish`` wraps it into a module."""

    INDENT = 4

    def __init__(self):
        self._names = set()
        self._const_values = {}
        self._const_lines = []
        self._lines = []
        self._args = []
        self.op_counts = Counter()
        self.top_level_ops = 0

    # ---- names and bookkeeping ----
    def fresh(self, hint):
        """A function-unique SSA name derived from ``hint``."""
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
        name, i = hint, 0
        while name in self._names:
            i += 1
            name = f"{hint}_{i}"
        self._names.add(name)
        return "%" + name

    def count(self, opname, nested=False):
        self.op_counts[opname] += 1
        if not nested:
            self.top_level_ops += 1

    def _emit(self, opname, lines):
        self.count(opname)
        pad = " " * self.INDENT
        self._lines.extend(pad + line for line in lines)

    def comment(self, text):
        """A ``//`` comment line: graphs are read by people too."""
        self._lines.append(" " * self.INDENT + "// " + text)

    # ---- arguments and constants ----
    def arg(self, hint, tensor_type, attrs):
        value = Value(self.fresh(hint), tensor_type)
        self._args.append((value, attrs))
        return value

    def constant(self, value, type_=F32):
        """A scalar constant, emitted once at the top of the function."""
        literal = f32_literal(value) if type_ == F32 else str(int(value))
        key = (literal, type_)
        if key not in self._const_values:
            hint = "cst_" + literal.replace("-", "m").replace(".", "p").replace("+", "")
            v = Value(self.fresh(hint), type_)
            self._const_values[key] = v
            self._const_lines.append(
                " " * self.INDENT + f"{v.name} = arith.constant {literal} : {type_}")
            self.count("arith.constant")
        return self._const_values[key]

    # ---- tensor creation ----
    def empty(self, shape, elem=F32, hint="init"):
        t = TensorType(tuple(shape), elem)
        name = self.fresh(hint)
        self._emit("tensor.empty", [f"{name} = tensor.empty() : {t}"])
        return Value(name, t)

    def fill(self, value, shape, hint="zero"):
        e = self.empty(shape)
        c = self.constant(value)
        name = self.fresh(hint)
        self._emit("linalg.fill", [
            f"{name} = linalg.fill ins({c.name} : f32) outs({e.name} : {e.type}) "
            f"-> {e.type}"])
        return Value(name, e.type)

    # ---- GEMMs ----
    def matmul(self, a, b, transpose_a=False, transpose_b=False, hint="mm"):
        """``op(a) @ op(b)`` with ``op`` a transpose where asked (via indexing maps)."""
        m, k = a.shape[::-1] if transpose_a else a.shape
        kb, n = b.shape[::-1] if transpose_b else b.shape
        if k != kb:
            raise ValueError(f"matmul K mismatch: {a.type} vs {b.type}")
        out = self.fill(0.0, (m, n))
        name = self.fresh(hint)
        lines = [f"{name} = linalg.matmul"]
        if transpose_a or transpose_b:
            dims = ["m", "n", "k"]
            amap = affine_map(dims, (2, 0) if transpose_a else (0, 2))
            bmap = affine_map(dims, (1, 2) if transpose_b else (2, 1))
            omap = affine_map(dims, (0, 1))
            lines.append(f"    indexing_maps = [{amap}, {bmap}, {omap}]")
        lines.append(f"    ins({a.name}, {b.name} : {a.type}, {b.type}) "
                     f"outs({out.name} : {out.type}) -> {out.type}")
        self._emit("linalg.matmul", lines)
        return Value(name, out.type)

    def batch_matmul(self, a, b, transpose_a=False, transpose_b=False, hint="bmm"):
        """Batched ``op(a) @ op(b)`` over the leading dimension."""
        bs, m, k = (a.shape[0],) + (a.shape[2:0:-1] if transpose_a else a.shape[1:])
        bs2, kb, n = (b.shape[0],) + (b.shape[2:0:-1] if transpose_b else b.shape[1:])
        if k != kb or bs != bs2:
            raise ValueError(f"batch_matmul mismatch: {a.type} vs {b.type}")
        out = self.fill(0.0, (bs, m, n))
        name = self.fresh(hint)
        lines = [f"{name} = linalg.batch_matmul"]
        if transpose_a or transpose_b:
            dims = ["b", "m", "n", "k"]
            amap = affine_map(dims, (0, 3, 1) if transpose_a else (0, 1, 3))
            bmap = affine_map(dims, (0, 2, 3) if transpose_b else (0, 3, 2))
            omap = affine_map(dims, (0, 1, 2))
            lines.append(f"    indexing_maps = [{amap}, {bmap}, {omap}]")
        lines.append(f"    ins({a.name}, {b.name} : {a.type}, {b.type}) "
                     f"outs({out.name} : {out.type}) -> {out.type}")
        self._emit("linalg.batch_matmul", lines)
        return Value(name, out.type)

    # ---- structured elementwise / reductions ----
    def generic(self, dims, ins, body, out_map=None, reduction_dims=(),
                init=None, out_elem=F32, hint="t"):
        """A single-result ``linalg.generic`` over loop dims of sizes ``dims``.

        ``ins``: Values (identity map, same rank as the loop) or (Value, dims)
        pairs giving the loop dim of each of the value's dimensions.
        ``body(b, *scalars[, acc])`` returns the Value (or number) to yield; with
        ``reduction_dims`` the accumulator is passed last and the output, starting
        from ``init``, drops those dims (or follows ``out_map``).
        """
        dims = tuple(dims)
        n = len(dims)
        ins = [(v, tuple(range(n))) if isinstance(v, Value) else (v[0], tuple(v[1]))
               for v in ins]
        for v, vmap in ins:
            expect = tuple(dims[d] for d in vmap)
            if tuple(v.shape) != expect:
                raise ValueError(f"generic operand {v.name}: {v.type} does not match "
                                 f"loop dims {dims} through map {vmap}")
        if out_map is None:
            out_map = tuple(d for d in range(n) if d not in reduction_dims)
        out_shape = tuple(dims[d] for d in out_map)
        if reduction_dims:
            if init is None:
                raise ValueError("a reduction needs an init value")
            out = self.fill(init, out_shape, hint="acc")
        else:
            out = self.empty(out_shape, out_elem)
        names = _dim_names(n)
        maps = [affine_map(names, vmap) for _, vmap in ins] + [affine_map(names, out_map)]
        iters = ", ".join('"reduction"' if d in reduction_dims else '"parallel"'
                          for d in range(n))
        name = self.fresh(hint)
        lines = [f"{name} = linalg.generic {{",
                 f"    indexing_maps = [{', '.join(maps)}],",
                 f"    iterator_types = [{iters}]}}"]
        ins_clause = ""
        if ins:
            ins_clause = (f"ins({', '.join(v.name for v, _ in ins)} : "
                          f"{', '.join(str(v.type) for v, _ in ins)}) ")
        lines.append(f"    {ins_clause}outs({out.name} : {out.type}) {{")
        block_args = [Value(self.fresh("in"), v.type.elem) for v, _ in ins]
        acc = Value(self.fresh("acc" if reduction_dims else "out"), out.type.elem)
        sig = ", ".join(f"{a.name}: {a.type}" for a in block_args + [acc])
        lines.append(f"  ^bb0({sig}):")
        b = Body(self, self.INDENT + 4)
        args = block_args + ([acc] if reduction_dims else [])
        result = body(b, *args)
        b.yield_([result])
        self._emit("linalg.generic", lines)
        self._lines.extend(b.lines)
        self._lines.append(" " * self.INDENT + f"}} -> {out.type}")
        return Value(name, out.type)

    def reduce_sum(self, x, dims, hint="sum"):
        """``linalg.reduce`` adding over ``dims`` (bias gradients, row sums)."""
        out_shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
        out = self.fill(0.0, out_shape, hint="acc")
        name = self.fresh(hint)
        dims_text = ", ".join(str(d) for d in dims)
        lines = [f"{name} = linalg.reduce ins({x.name} : {x.type}) "
                 f"outs({out.name} : {out.type}) dimensions = [{dims_text}]"]
        a, acc = Value(self.fresh("in"), F32), Value(self.fresh("acc"), F32)
        lines.append(f"  ({a.name}: f32, {acc.name}: f32) {{")
        b = Body(self, self.INDENT + 4)
        b.yield_([b.addf(a, acc)])
        self._emit("linalg.reduce", lines)
        self._lines.extend(b.lines)
        self._lines.append(" " * self.INDENT + "  }")
        return Value(name, out.type)

    # ---- shapes ----
    def expand_shape(self, x, reassociation, shape, hint="exp"):
        t = TensorType(tuple(shape), x.type.elem)
        name = self.fresh(hint)
        self._emit("tensor.expand_shape", [
            f"{name} = tensor.expand_shape {x.name} {_reassoc(reassociation)} "
            f"output_shape [{', '.join(map(str, shape))}] : {x.type} into {t}"])
        return Value(name, t)

    def collapse_shape(self, x, reassociation, hint="col"):
        shape = tuple(int(np.prod([x.shape[d] for d in group]))
                      for group in reassociation)
        t = TensorType(shape, x.type.elem)
        name = self.fresh(hint)
        self._emit("tensor.collapse_shape", [
            f"{name} = tensor.collapse_shape {x.name} {_reassoc(reassociation)} "
            f": {x.type} into {t}"])
        return Value(name, t)

    def transpose(self, x, permutation, hint="tr"):
        out = self.empty(tuple(x.shape[p] for p in permutation), x.type.elem)
        name = self.fresh(hint)
        self._emit("linalg.transpose", [
            f"{name} = linalg.transpose ins({x.name} : {x.type}) "
            f"outs({out.name} : {out.type}) "
            f"permutation = [{', '.join(map(str, permutation))}]"])
        return Value(name, out.type)

    # ---- assembly ----
    def finish(self, sym_name, results, func_attrs, module_attrs):
        """The module text: one function returning ``results`` [(Value, attrs)]."""
        self.count("builtin.module")
        self.count("func.func")
        self.count("func.return")
        pad = " " * self.INDENT
        out = [f"module attributes {{{module_attrs}}} {{", f"  func.func @{sym_name}("]
        arg_lines = [f"{pad*2}{v.name}: {v.type} {{{attrs}}}" for v, attrs in self._args]
        out.append(",\n".join(arg_lines) + ")")
        res_lines = [f"{pad*2}{v.type} {{{attrs}}}" for v, attrs in results]
        out.append(f"{pad}-> (" + ",\n".join(res_lines).lstrip() + ")")
        out.append(f"{pad}attributes {{{func_attrs}}} {{")
        out.extend(self._const_lines)
        out.extend(self._lines)
        names = ", ".join(v.name for v, _ in results)
        types = ", ".join(str(v.type) for v, _ in results)
        out.append(f"{pad}return {names} : {types}")
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"

    def mlir_op_counts(self):
        """Op counts as ``mlir-opt --print-op-stats`` reports them (named-op bodies
        included)."""
        counts = Counter(self.op_counts)
        for op, implied in IMPLICIT_BODY_OPS.items():
            for sub in implied:
                counts[sub] += self.op_counts[op]
        return counts


def _reassoc(groups):
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
