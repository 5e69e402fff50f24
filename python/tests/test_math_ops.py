"""Every op of MLIR 22's math dialect compiles and runs (issue #14).

The list comes from MLIR's own MathOps.td, so an op added to the dialect
fails here until it is covered. For each op, a one-op graph computes
y = op(x[, x2]) elementwise over 8 values and the loss sum(w * y), whose
gradient is y; one SGD step with lr 1 from w = 0 leaves w = -y exactly, so
the compiled op's every value is read back and compared with numpy (f64 on
the same f32 inputs). On the CPU target (O0) every op must match, computed
in f32 and (the float ops) in f64; all float ops in f16 and in bf16 must
compile (one graph per type). For the GPU target (--target cuda) every op
(f32; all float ops in f64, f16 and bf16, one kernel per type) must compile
and its kernels assemble with ptxas for sm_90 (as test/CUDA does; that part
needs the CUDA toolkit).
"""

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

N = 8
GENERAL = [-2.5, -1.5, -0.5, 0.3, 0.5, 1.5, 2.5, 3.7]
UNIT = [-0.9, -0.5, -0.1, 0.0, 0.2, 0.5, 0.7, 0.95]
POSITIVE = [0.01, 0.3, 0.5, 1.0, 1.5, 2.5, 10.0, 100.0]
AT_LEAST_ONE = [1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0, 100.0]
HALVES = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.49, 3.51]
SPECIAL = [0.0, 1e-40, -1.0, math.inf, -math.inf, math.nan, 3.4e38, -1.2e-38]
INTS = [-3, -2, -1, 0, 1, 2, 3, 7]
EXPONENTS = [3, 2, -1, 5, 0, -2, 1, 4]


def _float_unary(fn, x=GENERAL):
    return dict(body="%r = math.{op} %a : f32", x=x, ref=lambda a, b: fn(a))


def _bits(fn):
    """An i32 op on int(x), as numpy on the same 32-bit patterns."""
    return dict(body=("%i = arith.fptosi %a : f32 to i32\n"
                      "%j = math.{op} %i : i32\n"
                      "%r = arith.sitofp %j : i32 to f32"),
                x=INTS, ref=lambda a, b: np.array([fn(int(v)) for v in a]))


def _classify(fn):
    return dict(body=("%q = math.{op} %a : f32\n"
                      "%r = arith.uitofp %q : i1 to f32"),
                x=SPECIAL, ref=lambda a, b: fn(a).astype(np.float64))


def _ipow(base, exponent):
    if exponent >= 0:
        return np.int32(np.int64(base) ** exponent)
    return {1: 1, -1: -1 if exponent % 2 else 1}.get(base, 0)


_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)
_u32 = np.vectorize(lambda v: v & 0xFFFFFFFF)

# op -> body (MLIR over %a = x, %b = x2, %c = 0.75), x, x2, numpy reference.
OPS = {
    "absf": _float_unary(np.abs),
    "acos": _float_unary(np.arccos, UNIT),
    "acosh": _float_unary(np.arccosh, AT_LEAST_ONE),
    "asin": _float_unary(np.arcsin, UNIT),
    "asinh": _float_unary(np.arcsinh),
    "atan": _float_unary(np.arctan),
    "atanh": _float_unary(np.arctanh, UNIT),
    "cbrt": _float_unary(np.cbrt),
    "ceil": _float_unary(np.ceil),
    "cos": _float_unary(np.cos),
    "cosh": _float_unary(np.cosh),
    "sin": _float_unary(np.sin),
    "sinh": _float_unary(np.sinh),
    "erf": _float_unary(_erf),
    "erfc": _float_unary(_erfc),
    "exp": _float_unary(np.exp),
    "exp2": _float_unary(np.exp2),
    "expm1": _float_unary(np.expm1, [-1e-6, -0.5, -1e-3, 1e-7, 0.5, 1.5, 2.5, 3.7]),
    "floor": _float_unary(np.floor),
    "log": _float_unary(np.log, POSITIVE),
    "log10": _float_unary(np.log10, POSITIVE),
    "log1p": _float_unary(np.log1p, [1e-7, 1e-4, 0.5, -0.5, 1.5, 2.5, 10.0, -1e-6]),
    "log2": _float_unary(np.log2, POSITIVE),
    "rsqrt": _float_unary(lambda a: 1 / np.sqrt(a), POSITIVE),
    "sqrt": _float_unary(np.sqrt, POSITIVE),
    "tan": _float_unary(np.tan),
    "tanh": _float_unary(np.tanh),
    "roundeven": _float_unary(np.round, HALVES),
    "round": _float_unary(lambda a: np.sign(a) * np.floor(np.abs(a) + 0.5), HALVES),
    "trunc": _float_unary(np.trunc),
    "atan2": dict(body="%r = math.atan2 %a, %b : f32", x=GENERAL, x2=UNIT,
                  ref=np.arctan2),
    "copysign": dict(body="%r = math.copysign %a, %b : f32", x=GENERAL,
                     x2=[1.0, -1.0, -0.0, 0.0, -2.0, 3.0, -0.5, 0.5],
                     ref=np.copysign),
    "powf": dict(body="%r = math.powf %a, %b : f32", x=POSITIVE, x2=GENERAL,
                 ref=np.power),
    # MathOps.td defines clampf(value, min, max) as maxf(minf(value, min), max).
    "clampf": dict(body="%r = math.clampf %a to [%b, %c] : f32", x=GENERAL,
                   x2=UNIT, ref=lambda a, b: np.maximum(np.minimum(a, b), 0.75)),
    "fma": dict(body="%r = math.fma %a, %b, %c : f32", x=GENERAL, x2=UNIT,
                ref=lambda a, b: a * b + 0.75),
    "absi": _bits(abs),
    "ctlz": _bits(lambda v: 32 - int(_u32(v)).bit_length()),
    "cttz": _bits(lambda v: 32 if v == 0 else (int(_u32(v)) & -int(_u32(v))).bit_length() - 1),
    "ctpop": _bits(lambda v: bin(int(_u32(v))).count("1")),
    "ipowi": dict(body=("%i = arith.fptosi %a : f32 to i32\n"
                        "%n = arith.fptosi %b : f32 to i32\n"
                        "%j = math.ipowi %i, %n : i32\n"
                        "%r = arith.sitofp %j : i32 to f32"),
                  x=INTS, x2=EXPONENTS,
                  ref=lambda a, b: np.array([_ipow(int(p), int(q)) for p, q in zip(a, b)])),
    "fpowi": dict(body=("%n = arith.fptosi %b : f32 to i32\n"
                        "%r = math.fpowi %a, %n : f32, i32"),
                  x=GENERAL, x2=EXPONENTS,
                  ref=lambda a, b: np.power(a, b.astype(np.int64).astype(np.float64))),
    "isfinite": _classify(np.isfinite),
    "isinf": _classify(np.isinf),
    "isnan": _classify(np.isnan),
    "isnormal": _classify(lambda a: np.isfinite(a) & (np.abs(a) >= np.finfo(np.float32).tiny)),
    "sincos": dict(body=("%s, %k = math.sincos %a : f32\n"
                         "%r = arith.addf %s, %k : f32"),
                   x=GENERAL, ref=lambda a, b: np.sin(a) + np.cos(a)),
}


def _mlir_include_dir():
    for tool in ("llvm-config-22", "llvm-config"):
        path = shutil.which(tool)
        if path:
            return Path(subprocess.run([path, "--includedir"], capture_output=True,
                                       text=True, check=True).stdout.strip())
    return Path("/usr/lib/llvm-22/include")


def dialect_ops():
    td = _mlir_include_dir() / "mlir/Dialect/Math/IR/MathOps.td"
    text = td.read_text()
    return sorted(set(re.findall(r'^def Math_\w+\s*:\s*Math_\w+<"(\w+)"', text, re.M)))


FLOAT_TYPES = ("f32", "f64", "f16", "bf16")


def is_float_op(op):
    """Computes on floats (the integer ops take i32; fpowi a float base)."""
    return op == "fpowi" or "i32" not in OPS[op]["body"]


def body_in(op, dtype):
    """The op's body computing in `dtype`: operands cast from f32, the result
    cast back (classification results are i1 already)."""
    body = OPS[op]["body"].format(op=op)
    if dtype == "f32":
        return body
    cast, back = ("extf", "truncf") if dtype == "f64" else ("truncf", "extf")
    lines = [f"%{v}_w = arith.{cast} %{v} : f32 to {dtype}" for v in "abc"]
    for v in "abc":
        body = re.sub(rf"%{v}\b", f"%{v}_w", body)
    body = body.replace(": f32, i32", f": {dtype}, i32").replace(": f32", f": {dtype}")
    if "uitofp" in body:
        body = body.replace(f"i1 to {dtype}", "i1 to f32")
    else:
        body = re.sub(r"^%r = ", "%r_w = ", body, flags=re.M)
        body += f"\n%r = arith.{back} %r_w : {dtype} to f32"
    return "\n".join(lines) + "\n" + body


def combined_body(dtype):
    """Every float op computing in `dtype`, in one body (one kernel): the sum
    of their results, so none is dead code."""
    lines, total = [], None
    for i, op in enumerate(op for op in sorted(OPS) if is_float_op(op)):
        body = re.sub(r"%(?![abc]\b)(\w+)", rf"%\1_{i}", body_in(op, dtype))
        lines.append(body)
        if total is None:
            total = f"%r_{i}"
        else:
            lines.append(f"%sum_{i} = arith.addf {total}, %r_{i} : f32")
            total = f"%sum_{i}"
    lines.append(f"%r = arith.addf {total}, %c : f32")
    return "\n".join(lines)


def graph(op, dtype="f32", body=None, x_bits=False):
    """The op in a one-param training graph whose gradient is the op's
    result. `x_bits`: the input x arrives as its i32 bit patterns and is
    bitcast to f32 in the graph: non-finite training data is refused by the
    session (issue 16), but the classification ops must see Inf and NaN."""
    body = body or body_in(op, dtype)
    x_type, x_arg = f"tensor<{N}xf32>", "%a: f32"
    if x_bits:
        x_type, x_arg = f"tensor<{N}xi32>", "%a_bits: i32"
        body = "%a = arith.bitcast %a_bits : i32 to f32\n" + body
    body = "\n          ".join(body.split("\n"))
    return f'''module attributes {{msamp.optimizer = {{kind = "sgd", lr = 1.0 : f64}}}} {{
  func.func @fwd_bwd(%w: tensor<{N}xf32> {{msamp.role = "param", msamp.name = "w"}},
                     %x: {x_type} {{msamp.role = "input", msamp.name = "x"}},
                     %x2: tensor<{N}xf32> {{msamp.role = "input", msamp.name = "x2"}})
      -> (tensor<f32> {{msamp.role = "loss"}},
          tensor<{N}xf32> {{msamp.role = "grad", msamp.name = "w"}})
      attributes {{msamp.kind = "forward_backward"}} {{
    %e = tensor.empty() : tensor<{N}xf32>
    %y = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                          affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}}
        ins(%x, %x2 : {x_type}, tensor<{N}xf32>) outs(%e : tensor<{N}xf32>) {{
        ^bb0({x_arg}, %b: f32, %o: f32):
          %c = arith.constant 0.75 : f32
          {body}
          linalg.yield %r : f32
    }} -> tensor<{N}xf32>
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                          affine_map<(i) -> ()>],
                         iterator_types = ["reduction"]}}
        ins(%w, %y : tensor<{N}xf32>, tensor<{N}xf32>) outs(%f0 : tensor<f32>) {{
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %t = arith.addf %m, %acc : f32
          linalg.yield %t : f32
    }} -> tensor<f32>
    return %s, %y : tensor<f32>, tensor<{N}xf32>
  }}
}}
'''


def test_every_dialect_op_is_covered():
    ops = dialect_ops()
    assert len(ops) >= 46, ops
    assert sorted(OPS) == ops


# f32 for every op, f64 for the float ops: run and compared with numpy.
NUMERIC_CASES = ([(op, "f32") for op in sorted(OPS)]
                 + [(op, "f64") for op in sorted(OPS) if is_float_op(op)])


@pytest.mark.parametrize("op,dtype", NUMERIC_CASES)
def test_op_runs_on_cpu(op, dtype, tmp_path):
    spec = OPS[op]
    x = np.array(spec["x"], np.float32)
    x2 = np.array(spec.get("x2", GENERAL), np.float32)
    bits = not np.all(np.isfinite(x))
    step = msamp.compile(graph(op, dtype, x_bits=bits), "O0", out_dir=tmp_path)
    with step.session() as session:
        session.init(params={"w": np.zeros(N, np.float32)})
        session.step({"x": x.view(np.int32) if bits else x, "x2": x2})
        got = -session.param("w").astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "isnormal":
            # Normal in the type computed in: 1e-40 is subnormal in f32 only.
            tiny = np.finfo(np.float64 if dtype == "f64" else np.float32).tiny
            want = (np.isfinite(x) & (np.abs(x.astype(np.float64)) >= tiny)).astype(np.float64)
        else:
            want = np.asarray(spec["ref"](x.astype(np.float64), x2.astype(np.float64)),
                              np.float64)
    # Within a few f32 ulp of the f64 value (after rounding it to f32).
    want32 = want.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(got, want32, rtol=4e-7 * 8, atol=1e-30,
                               equal_nan=True, err_msg=f"math.{op} on {dtype}")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_float_ops_compile_for_cpu(dtype, tmp_path):
    """f16 and bf16 compile only (their inputs would be rounded and
    overflow): msamp-compile links the step only if every symbol it needs
    exists."""
    msamp.compile(graph(None, body=combined_body(dtype)), "O0", out_dir=tmp_path)
    assert (tmp_path / "train_step.so").exists()


def _ptxas():
    for candidate in (shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


_needs_ptxas = pytest.mark.skipif(
    _ptxas() is None, reason="no CUDA toolkit (ptxas), as test/CUDA's REQUIRES: nvcc")


def _compile_for_gpu(text, what, out):
    msamp.compile(text, "O0", out_dir=out, target="cuda", chip="sm_90")
    kernels = sorted((out / "kernels").glob("*.ptx"))
    assert kernels
    ptx = "".join(k.read_text() for k in kernels)
    # No call is left to a function the kernel module does not define.
    assert ".extern .func" not in ptx, f"{what}: {ptx[:2000]}"
    for kernel in kernels:
        subprocess.run([_ptxas(), "-arch=sm_90", str(kernel), "-o", str(kernel) + ".cubin"],
                       check=True)


@_needs_ptxas
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_compiles_for_gpu(op, tmp_path):
    _compile_for_gpu(graph(op), f"math.{op}", tmp_path)


@_needs_ptxas
@pytest.mark.parametrize("dtype", ["f64", "f16", "bf16"])
def test_float_ops_compile_for_gpu(dtype, tmp_path):
    """Every float op computing in `dtype`, in one kernel."""
    _compile_for_gpu(graph(None, body=combined_body(dtype)), f"float ops on {dtype}",
                     tmp_path)
