#!/usr/bin/env python3
"""ONNX node-test conformance of msamp-translate --import-onnx.

For every node test (model.onnx + test_data_set_*/{input,output}_N.pb) whose
nodes are all ops the importer supports, this imports the model, appends a
@main that feeds the inputs as constants and prints every result, lowers it
with upstream mlir-opt (the pipeline of python/msamp/graphs/run_mlir.py: the
f32 "O0" path with no msamp pass involved, since forward graphs have no train
step) and runs it with mlir-runner, then compares with the expected outputs
(rtol 1e-3, atol 1e-5: printMemref prints 6 significant digits).

Sources of tests:
  --testdata DIR   a directory of node tests, e.g. Debian's libonnx-testdata
                   /usr/share/libonnx-testdata/data/node (ONNX 1.12, opset 17)
  --generate DIR   writes the node tests of the installed onnx package
                   (onnx.backend.test.case.node.collect_testcases) into DIR
                   first, in the same layout, then runs them

Prints one table row per op (tests with a single node of that op) plus one
row for the multi-node ("expanded") tests, and a final "N passed, N failed"
line; --markdown FILE writes the table for docs/ONNX.md. Exit status 0.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

def _load_run_mlir():
    """python/msamp/graphs/run_mlir.py by path: it needs only numpy, and the
    msamp package's __init__ pulls in the rest of the package."""
    import importlib.util
    path = os.path.join(REPO, "python", "msamp", "graphs", "run_mlir.py")
    spec = importlib.util.spec_from_file_location("msamp_run_mlir", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run_mlir = _load_run_mlir()

SUPPORTED = {
    "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg",
    "Abs", "Tanh", "Erf", "Relu", "Gelu", "Sigmoid", "Where", "Max", "Min", "Clip",
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "Softmax", "LogSoftmax",
    "LayerNormalization", "SoftmaxCrossEntropyLoss", "Transpose", "Reshape",
    "Flatten", "Squeeze", "Unsqueeze", "Concat", "Gather", "Cast", "Identity",
    "Constant", "Shape", "Reciprocal", "Sum", "Mean", "Equal", "Less", "Greater",
    "Slice", "ConstantOfShape", "Expand", "Dropout", "Size",
}

NP_TO_MLIR = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
              np.dtype(np.int64): "i64", np.dtype(np.int32): "i32",
              np.dtype(np.int16): "i16", np.dtype(np.int8): "i8",
              np.dtype(np.float16): "f16", np.dtype(np.bool_): "i1"}
# Results of other element types are widened in @main before printing.
WIDEN = {"i1": ("i32", "arith.extui"), "i8": ("i32", "arith.extsi"),
         "i16": ("i32", "arith.extsi"), "f16": ("f32", "arith.extf")}
PRINT = {"f32": "printMemrefF32", "f64": "printMemrefF64", "i64": "printMemrefI64",
         "i32": "printMemrefI32"}


def tensor_type(shape, elem):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def dense(arr):
    elem = NP_TO_MLIR[arr.dtype]
    t = tensor_type(arr.shape, elem)
    if elem == "i1":
        return f"dense<{json.dumps(arr.tolist())}> : {t}"
    data = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<")))
    if arr.size == 0:
        return f"dense<> : {t}"
    return f'dense<"0x{data.tobytes().hex().upper()}"> : {t}'


def build_main(text, func_name, in_arrays, out_types):
    """@main: constants in, call, print each result (i1 printed as i32)."""
    lines = []
    used = set(PRINT.values())
    for fn, mem in [("printMemrefF32", "f32"), ("printMemrefF64", "f64"),
                    ("printMemrefI64", "i64"), ("printMemrefI32", "i32")]:
        if fn in used:
            lines.append(f"  func.func private @{fn}(memref<*x{mem}>) "
                         "attributes {llvm.emit_c_interface}")
    lines.append("  func.func @main() {")
    args, arg_types = [], []
    for i, a in enumerate(in_arrays):
        lines.append(f"    %a{i} = arith.constant {dense(a)}")
        args.append(f"%a{i}")
        arg_types.append(tensor_type(a.shape, NP_TO_MLIR[a.dtype]))
    res_types = [tensor_type(s, e) for s, e in out_types]
    n = len(res_types)
    lines.append(f"    %r:{n} = call @{func_name}({', '.join(args)}) : "
                 f"({', '.join(arg_types)}) -> ({', '.join(res_types)})")
    for i, (shape, elem) in enumerate(out_types):
        val, t = f"%r#{i}", res_types[i]
        if elem in WIDEN:
            wide, op = WIDEN[elem]
            rank = len(shape)
            dims = ", ".join(f"d{k}" for k in range(rank))
            m = f"affine_map<({dims}) -> ({dims})>"
            tw = tensor_type(shape, wide)
            iters = ", ".join(['"parallel"'] * rank)
            lines += [f"    %e{i} = tensor.empty() : {tw}",
                      f"    %c{i} = linalg.generic {{indexing_maps = [{m}, {m}], "
                      f"iterator_types = [{iters}]}} "
                      f"ins({val} : {t}) outs(%e{i} : {tw}) {{",
                      f"    ^bb0(%x{i}: {elem}, %o{i}: {wide}):",
                      f"      %z{i} = {op} %x{i} : {elem} to {wide}",
                      f"      linalg.yield %z{i} : {wide}",
                      f"    }} -> {tw}"]
            val, t, elem = f"%c{i}", tw, wide
        mem = "memref<" + "".join(f"{d}x" for d in shape) + elem + ">"
        lines += [f"    %b{i} = bufferization.to_buffer {val} : {t} to {mem}",
                  f"    %u{i} = memref.cast %b{i} : {mem} to memref<*x{elem}>",
                  f"    call @{PRINT[elem]}(%u{i}) : (memref<*x{elem}>) -> ()"]
    lines += ["    return", "  }"]
    end = text.rstrip().rfind("}")
    return text[:end] + "\n".join(lines) + "\n}\n"


def parse_func(text):
    m = re.search(r"func\.func @([\w$.]+)\(", text)
    return m.group(1)


def load_data_set(case_dir, model):
    init_names = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in init_names]
    ds = os.path.join(case_dir, "test_data_set_0")
    def read(prefix, count):
        out = []
        for k in range(count):
            t = onnx.TensorProto()
            with open(os.path.join(ds, f"{prefix}_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            out.append(numpy_helper.to_array(t))
        return out
    return read("input", len(inputs)), read("output", len(model.graph.output))


def run_case(translate, case_dir, tmp):
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    ins, outs = load_data_set(case_dir, model)
    for a in ins + outs:
        if a.dtype not in NP_TO_MLIR:
            return "fail", f"unsupported data type {a.dtype}"
    path = os.path.join(tmp, "graph.mlir")
    model_path = os.path.join(case_dir, "model.onnx")
    p = subprocess.run([translate, "--import-onnx", model_path, "-o", path],
                       capture_output=True, text=True, timeout=120)
    folded = False
    if p.returncode != 0 and "must be a constant" in p.stderr:
        # The importer needs shapes, axes and flags as constants (static
        # shapes); node tests pass them as inputs. Bake the integer and bool
        # inputs into initializers, as an exporter with constant folding
        # would, and count the case separately.
        model, ins = _inputs_to_initializers(model, ins)
        model_path = os.path.join(tmp, "model_const.onnx")
        onnx.save(model, model_path)
        p = subprocess.run([translate, "--import-onnx", model_path, "-o", path],
                           capture_output=True, text=True, timeout=120)
        folded = True
    if p.returncode != 0:
        return "import", p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "?"
    text = open(path).read()
    out_types = [(a.shape, NP_TO_MLIR[a.dtype]) for a in outs]
    try:
        module = build_main(text, parse_func(text), ins, out_types)
    except Exception as e:  # noqa: BLE001
        return "fail", f"harness: {e}"
    src, low = os.path.join(tmp, "main.mlir"), os.path.join(tmp, "low.mlir")
    open(src, "w").write(module)
    p = subprocess.run([run_mlir.MLIR_OPT, src, *run_mlir.PIPELINE, "-o", low],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return "lower", p.stderr.strip().splitlines()[0] if p.stderr else "?"
    p = subprocess.run([run_mlir.MLIR_RUNNER, low, "-e", "main", "-entry-point-result=void",
                        "-O0", "-shared-libs=" + ",".join(run_mlir.SHARED_LIBS)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return "run", p.stderr.strip().splitlines()[0] if p.stderr else "?"
    got = run_mlir.parse_printed(p.stdout)
    if len(got) != len(outs):
        return "fail", f"printed {len(got)} results, expected {len(outs)}"
    for k, (g, e) in enumerate(zip(got, outs)):
        e = e.astype(np.float64)
        if g.shape != e.shape:
            return "fail", f"output {k}: shape {g.shape} vs {e.shape}"
        if not np.allclose(g, e, rtol=1e-3, atol=1e-5, equal_nan=True):
            err = np.nanmax(np.abs(g - e))
            return "fail", f"output {k}: max abs error {err:.3g}"
    return ("pass_const", "") if folded else ("pass", "")


def _inputs_to_initializers(model, ins):
    init_names = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init_names]
    keep_inputs, keep_arrays = [], []
    for vi, name, arr in zip([i for i in model.graph.input if i.name not in init_names],
                             names, ins):
        if arr.dtype.kind in "iub":
            model.graph.initializer.append(numpy_helper.from_array(arr, name))
        else:
            keep_inputs.append(vi)
            keep_arrays.append(arr)
    del model.graph.input[:]
    model.graph.input.extend(keep_inputs)
    return model, keep_arrays


def generate(dest):
    """Writes the installed onnx package's node tests into `dest`.

    onnx 1.23 stamps its cases with IR 13 and the newest opsets; the importer
    reads IR <= 10 and opset <= 21. A case is restamped to IR 10 / opset 21
    only when onnx.checker accepts it there, i.e. when its nodes are valid
    opset-21 nodes (for the ops imported here, the later opsets only added
    element types); other cases are left out and counted.
    """
    from onnx.backend.test.case.node import collect_testcases
    os.makedirs(dest, exist_ok=True)
    count = restamped = left_out = 0
    for case in collect_testcases(None):
        if case.kind != "node" or not case.data_sets:
            continue
        model = case.model
        if model.ir_version > 10 or any(o.version > 21 for o in model.opset_import
                                        if o.domain in ("", "ai.onnx")):
            model.ir_version = min(model.ir_version, 10)
            for o in model.opset_import:
                if o.domain in ("", "ai.onnx"):
                    o.version = min(o.version, 21)
            try:
                onnx.checker.check_model(model)
            except Exception:  # noqa: BLE001
                left_out += 1
                continue
            restamped += 1
        d = os.path.join(dest, case.name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        ins, outs = case.data_sets[0]
        for prefix, arrays in (("input", ins), ("output", outs)):
            for k, a in enumerate(arrays):
                if isinstance(a, onnx.TensorProto):
                    t = a
                elif isinstance(a, (np.ndarray, np.generic)):
                    t = numpy_helper.from_array(np.asarray(a))
                else:
                    break
                with open(os.path.join(d, "test_data_set_0", f"{prefix}_{k}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
        count += 1
    print(f"generated {count} node tests ({restamped} restamped to IR 10 / opset 21; "
          f"{left_out} not valid at opset 21, left out)")
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--testdata", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--generate", metavar="DIR")
    ap.add_argument("--translate", default=os.path.join(
        os.environ.get("MSAMP_BUILD_DIR", os.path.join(REPO, "build")), "bin",
        "msamp-translate"))
    ap.add_argument("--filter", default="", help="regex on test names")
    ap.add_argument("--markdown", metavar="FILE")
    ap.add_argument("--failures", action="store_true", help="print each failure")
    args = ap.parse_args()
    root = args.testdata
    if args.generate:
        n = generate(args.generate)
        print(f"wrote {n} node tests from onnx {onnx.__version__} into {args.generate}")
        root = args.generate
    rows = collections.OrderedDict()
    failures = []
    for name in sorted(os.listdir(root)):
        case = os.path.join(root, name)
        if not re.search(args.filter, name) or not os.path.exists(os.path.join(case, "model.onnx")):
            continue
        try:
            model = onnx.load(os.path.join(case, "model.onnx"))
        except Exception:  # noqa: BLE001
            continue
        ops = [n.op_type for n in model.graph.node]
        if not ops or not set(ops) <= SUPPORTED:
            continue
        key = ops[0] if len(ops) == 1 else "(multi-node / expanded)"
        with tempfile.TemporaryDirectory() as tmp:
            try:
                status, why = run_case(args.translate, case, tmp)
            except Exception as e:  # noqa: BLE001
                status, why = "fail", f"harness: {e}"
        row = rows.setdefault(key, collections.Counter())
        row[status] += 1
        row["total"] += 1
        if not status.startswith("pass"):
            failures.append((name, status, why))
            if args.failures:
                print(f"  {name}: {status}: {why}", flush=True)
    header = ("| op | tests | pass | pass (int inputs as initializers) | import error "
              "| lower/run error | wrong result / harness |")
    lines = [header, "|---|---|---|---|---|---|---|"]
    total = collections.Counter()
    for key in sorted(rows, key=lambda k: (k.startswith("("), k)):
        c = rows[key]
        total.update(c)
        lines.append(f"| {key} | {c['total']} | {c['pass']} | {c['pass_const']} | "
                     f"{c['import']} | {c['lower'] + c['run']} | {c['fail']} |")
    lines.append(f"| **all** | {total['total']} | {total['pass']} | {total['pass_const']} | "
                 f"{total['import']} | {total['lower'] + total['run']} | {total['fail']} |")
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"Source: {root}\n\n" + "\n".join(lines) + "\n\nFailures:\n\n")
            for name, status, why in failures:
                f.write(f"- `{name}`: {status}: {why}\n")
    passed = total["pass"] + total["pass_const"]
    print(f"{passed} passed, {total['total'] - passed} failed")


if __name__ == "__main__":
    main()
