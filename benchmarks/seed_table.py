#!/usr/bin/env python3
"""MS-AMP's level table, measured: one model at amp-bf16, amp-fp16, te, O1,
O2 and O3, trained on the same data from the same seed under mpirun -np 2.

For each level msamp-compile compiles the model (O3: rank 0's program) and
msamp-run trains it for --steps steps on 2 ranks. The printed table has the
seed's columns, read from what ran rather than restated:

* GEMM: the element types of the Linear GEMMs' operands in the compiled
  step (gemms.json, through msamp.compiler.load), "k/n" of them low
  precision;
* weight: the params' storage types in the manifest (GEMM weights first);
* master / weight grad / optimizer m + v: the dtypes of msamp-run's memory
  report (the session's allocations; gradients are the compiler's figure:
  they live inside the step; "mixed": FP8 GEMM weight gradients, f32
  others);
* state B/param: that report's total (O3: rank 0's share);
* peak: ``peak_bytes`` of the compiled directory's memory_report.json (the
  static buffer plan) and the ``peak_bytes`` msamp-run measured (the last
  training step's --log-json line), "n/a" where a build writes none;
* final loss: the mean loss of the last 10 steps (over the ranks), and its
  ratio to amp-bf16's;
* wire B/step: the gradient all-reduce payload per rank per step
  (msamp-run's comm bytes), and that over the params;
* ms/step: msamp-run's training loop time over the steps (2 ranks, one
  thread each), and its ratio to amp-bf16's.

The loss curves go through msamp.plot into --plot (PNG).

    PYTHONPATH=python .venv/bin/python benchmarks/seed_table.py \\
        [--model transformer-lm|benchmark-lm|gpt2] [--steps 200] [--plot levels.png]

``--model gpt2`` exports GPT-2 from transformers (the tiny config of
python/tests/stock_families.py, its previous-token task and initial weights).
Name the CPU with the table (``lscpu | grep 'Model name'``).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import benchmark_lm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

from msamp import data as msamp_data  # noqa: E402
from msamp.compiler import load as load_compiled  # noqa: E402

LEVELS = ("amp-bf16", "amp-fp16", "te", "O1", "O2", "O3")
RANKS = 2
DISTINCT_BATCHES = 16
STATE_ROWS = ("weights", "master_weights", "weight_grads", "optimizer_m",
              "optimizer_v")
SHORT = {"f8E4M3FN": "E4M3", "f8E5M2": "E5M2", "none": "-"}


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"seed_table.py: {' '.join(map(str, cmd))} failed "
                 f"(exit {proc.returncode}):\n{proc.stderr.strip()}")
    return proc


def mpirun():
    exe = shutil.which("mpirun")
    if not exe:
        sys.exit("seed_table.py: mpirun is not on PATH")
    return [exe, "--allow-run-as-root", "--oversubscribe", "--mca",
            "mpi_yield_when_idle", "1", "--mca", "btl", "self,vader", "-np",
            str(RANKS)]


def save_batches(batches, path):
    """msamp-run --data: every input stacked along a leading batch axis."""
    from safetensors.numpy import save_file
    save_file({name: np.ascontiguousarray(np.stack([b[name] for b in batches]))
               for name in batches[0]}, path)


def transformer_lm(tmp, env, sizes=()):
    """A generated transformer LM on msamp.data's learnable task: the
    generator's default one (benchmarks/bench_zero.py's, docs/Levels.md's
    bytes/param table), or with `sizes` (generator arguments) the benchmark
    LM of docs/Benchmarks.md."""
    graph = os.path.join(tmp, "model.mlir")
    run([sys.executable, "-m", "msamp.graphs", "transformer-lm", *sizes,
         "-o", graph], env=env)
    return graph, None


def gpt2(tmp):
    """GPT-2 from transformers, exported by msamp.export with its weights."""
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    import msamp
    import stock_families as families
    family = families.FAMILIES["gpt2"]
    model = families.model(family)
    batches = families.batches(family, DISTINCT_BATCHES, 4)
    init = os.path.join(tmp, "init.safetensors")
    graph = msamp.export(model, families.loss_fn(family), batches[0],
                         optimizer=families.optimizer(family, model),
                         init_file=init)
    path = os.path.join(tmp, "model.mlir")
    with open(path, "w") as f:
        f.write(graph.text)
    data = [{k: v.numpy() for k, v in b.items()} for b in batches]
    return path, init, data


def gemm_column(compiled):
    gemms = [g for g in load_compiled(compiled).gemms()
             if g.kind in ("fprop", "dgrad", "wgrad")]
    low = [g for g in gemms if g.lhs != "f32" or g.rhs != "f32"]
    types = sorted({SHORT.get(t, t) for g in low for t in (g.lhs, g.rhs)})
    return (f"{'/'.join(types) or 'f32'} {len(low)}/{len(gemms)}")


def param_dtypes(compiled):
    """The params' storage types from the manifest, low precision first
    ("f16/f32": FP16 GEMM weights, f32 biases and norms)."""
    with open(os.path.join(compiled, "manifest.json")) as f:
        state = json.load(f)["state"]
    types = {s["dtype"] for s in state if s["role"] == "param"}
    return "/".join(SHORT.get(t, t) for t in sorted(types, key=lambda t: t == "f32"))


def memory_rows(stdout):
    """{category: (dtype, bytes, bytes/param)} of msamp-run's report."""
    rows = {}
    for m in re.finditer(r"^(\w+)\s+(\S+)\s+(\d+)\s+([\d.]+)\s*$", stdout,
                         re.M):
        rows[m.group(1)] = (m.group(2), int(m.group(3)), float(m.group(4)))
    total = re.search(r"^total\s+(\d+)\s+([\d.]+)\s*$", stdout, re.M)
    return rows, float(total.group(2)) if total else float("nan")


def measured_peak(entries):
    """The measured peak (session buffers + the step's heap high-water
    mark) msamp-run puts on the last training step's --log-json line."""
    peaks = [e["peak_bytes"] for e in entries if "peak_bytes" in e]
    return peaks[-1] if peaks else None


def planned_peak(compiled):
    try:
        with open(os.path.join(compiled, "memory_report.json")) as f:
            return json.load(f).get("peak_bytes")
    except FileNotFoundError:
        return None


def train(args, level, graph, init, data_file, tmp):
    bindir = os.path.join(args.build, "bin")
    compiled = os.path.join(tmp, level)
    cmd = [os.path.join(bindir, "msamp-compile"), graph, "--opt-level", level,
           "-o", compiled]
    if level == "O3":
        cmd += ["--pipeline-options", f"world-size={RANKS} rank=0"]
    run(cmd)
    log = os.path.join(tmp, level + ".jsonl")
    # O3 compiles one program per rank: msamp-run does that from the graph.
    model = graph if level == "O3" else compiled
    cmd = mpirun() + [os.path.join(bindir, "msamp-run"), model,
                      "--steps", str(args.steps), "--seed", "0",
                      "--data", data_file, "--log-json", log,
                      "--log-every", str(max(args.steps, 1))]
    if level == "O3":
        cmd += ["--opt-level", "O3"]
    if init:
        cmd += ["--init", init]
    stdout = run(cmd, cwd=tmp).stdout
    rows, total = memory_rows(stdout)
    timing = re.search(r"(\d+) steps in ([\d.]+) s", stdout)
    wire = re.search(r"payload (\d+) bytes/step", stdout)
    params = re.search(r"level \S+, (\d+) params", stdout)
    with open(log) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    losses = [e["loss"] for e in entries if e.get("loss") is not None]
    return {
        "gemm": gemm_column(compiled),
        "weights": param_dtypes(compiled),
        "rows": rows,
        "total": total,
        "params": int(params.group(1)) if params else None,
        "planned_peak": planned_peak(compiled),
        "measured_peak": measured_peak(entries),
        "final": float(np.mean(losses[-10:])) if losses else float("nan"),
        "wire": int(wire.group(1)) if wire else None,
        "ms": 1e3 * float(timing.group(2)) / max(int(timing.group(1)), 1),
        "log": entries,
    }


def mib(n):
    return "n/a" if n is None else f"{n / 2**20:.2f} MiB"


def table(results):
    base = results["amp-bf16"]
    lines = [
        "| level | GEMM (low/all Linear) | weight | master | weight grad | "
        "optimizer m + v | state B/param | peak (plan / measured) | "
        "final loss (x amp-bf16) | wire B/step (B/param) | "
        "ms/step (x amp-bf16) |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for level, r in results.items():
        def dtype(row):
            return SHORT.get(r["rows"].get(row, ("none",))[0],
                             r["rows"].get(row, ("none",))[0])
        wire = "n/a" if r["wire"] is None else (
            f"{r['wire']:,} ({r['wire'] / r['params']:.2f})" if r["params"]
            else f"{r['wire']:,}")
        lines.append(
            f"| {level} | {r['gemm']} | {r['weights']} | "
            f"{dtype('master_weights')} | {dtype('weight_grads')} | "
            f"{dtype('optimizer_m')} + {dtype('optimizer_v')} | "
            f"{r['total']:.2f} | {mib(r['planned_peak'])} / "
            f"{mib(r['measured_peak'])} | {r['final']:.4f} "
            f"({r['final'] / base['final']:.4f}) | "
            f"{wire} | {r['ms']:.2f} ({r['ms'] / base['ms']:.2f}) |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--model", default="transformer-lm",
                   choices=("transformer-lm", "benchmark-lm", "gpt2"))
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--plot", help="write the loss curves (PNG) here")
    args = p.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    if args.plot:
        from msamp import plot as msamp_plot
        if not msamp_plot.have_matplotlib():
            sys.exit("seed_table.py: --plot needs matplotlib")
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="seed-table-") as tmp:
        if args.model == "gpt2":
            graph, init, batches = gpt2(tmp)
        else:
            sizes = (benchmark_lm.generator_args()
                     if args.model == "benchmark-lm" else ())
            graph, init = transformer_lm(tmp, env, sizes)
            run([os.path.join(args.build, "bin", "msamp-compile"), graph,
                 "--opt-level", "O0", "-o", os.path.join(tmp, "O0")])
            with open(os.path.join(tmp, "O0", "manifest.json")) as f:
                inputs = json.load(f)["inputs"]
            vocab = next((i["num_classes"] for i in inputs
                          if i.get("num_classes")), 64)
            batches = msamp_data.task_batches(inputs, DISTINCT_BATCHES, vocab)
        data_file = os.path.join(tmp, "data.safetensors")
        save_batches(batches, data_file)
        results = {}
        for level in LEVELS:
            results[level] = train(args, level, graph, init, data_file, tmp)
            print(f"seed_table.py: {level} done", file=sys.stderr, flush=True)
    params = results["amp-bf16"]["params"]
    # Step times are only comparable on an otherwise idle machine.
    print(f"model: {args.model}, {params:,} params, {RANKS} ranks, "
          f"{args.steps} steps, the same {DISTINCT_BATCHES} batches cycled; "
          f"load average before / after: {load_before:.1f} / "
          f"{os.getloadavg()[0]:.1f}")
    print(table(results))
    if args.plot:
        msamp_plot.plot({lv: {"log": r["log"]} for lv, r in results.items()},
                        args.plot, title=f"{args.model}: loss by level")
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
