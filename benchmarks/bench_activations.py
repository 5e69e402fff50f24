#!/usr/bin/env python3
"""Memory of activations=bf16 against activations=f32, one run.

Compiles the benchmark LM at one level with each activation precision
(msamp-compile), then for each:

* the bytes of every buffer the step allocates, by element type, read from
  the bufferized IR (msamp-opt train_step.mlir --msamp-lower-to-llvm, printed
  after one-shot-bufferize: one memref.alloc per buffer the step creates;
  model state is not among them, the session owns it);
* the maximum resident set size of msamp-run training the compiled step
  (os.wait4's ru_maxrss of that process alone: compiling happens before, in
  msamp-compile), and the ratio bf16 / f32 of both;
* the mean of the last losses of both runs (same seed, synthetic data).

    .venv/bin/python benchmarks/bench_activations.py --build build [--level O2]
"""

import argparse
import collections
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

import benchmark_lm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "bf16": 2, "f16": 2,
         "f8E4M3FN": 1, "f8E5M2": 1, "i8": 1, "i1": 1}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def alloc_bytes(ir):
    """{element type: bytes} over the memref.alloc ops of `ir`."""
    total = collections.Counter()
    for m in re.finditer(r"memref\.alloc\(\)(?: \{[^}]*\})? : memref<([^>]*)>", ir):
        *dims, elem = m.group(1).split("x")
        n = 1
        for d in dims:
            n *= int(d)
        total[elem] += n * BYTES[elem]
    return total


def max_rss_kib(cmd, env):
    """Runs `cmd`; the peak resident set size of that process, in KiB."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    return usage.ru_maxrss


def cpu_name():
    try:
        for line in run(["lscpu"]).stdout.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown CPU"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--level", default="O2")
    p.add_argument("--steps", type=int, default=10)
    benchmark_lm.add_arguments(p)
    args = p.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")

    with tempfile.TemporaryDirectory(prefix="bench-activations-") as tmp:
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
                   MSAMP_CACHE_DIR=os.path.join(tmp, "cache"))
        graph = os.path.join(tmp, "lm.mlir")
        run([sys.executable, "-m", "msamp.graphs", "transformer-lm",
             *benchmark_lm.generator_args(args), "--lr", "3e-4", "-o", graph],
            env=env)
        rows = {}
        for act in ("f32", "bf16"):
            out = os.path.join(tmp, act)
            run([os.path.join(bindir, "msamp-compile"), graph, "--opt-level",
                 args.level, "--pipeline-options", f"activations={act}",
                 "-o", out], env=env)
            ir = run([os.path.join(bindir, "msamp-opt"),
                      os.path.join(out, "train_step.mlir"), "--msamp-lower-to-llvm",
                      "--mlir-print-ir-after=one-shot-bufferize", "-o", os.devnull],
                     env=env).stderr
            log = os.path.join(tmp, f"{act}.jsonl")
            rss = max_rss_kib([os.path.join(bindir, "msamp-run"), out, "--steps",
                               str(args.steps), "--synthetic", "--seed", "1",
                               "--quiet", "--log-json", log], env)
            with open(log) as f:
                losses = [json.loads(line)["loss"] for line in f]
            rows[act] = dict(allocs=alloc_bytes(ir), rss=rss,
                             loss=sum(losses[-3:]) / len(losses[-3:]))

    mib = 1 << 20
    print(f"model: transformer-lm, {args.layers} layers, dim {args.dim}, batch "
          f"{args.batch} x seq {args.seq}, level {args.level}, {args.steps} steps; "
          f"{cpu_name()}")
    print("| activations | f32 buffers MiB | bf16 buffers MiB | FP8/f16 buffers MiB "
          "| all buffers MiB | msamp-run max RSS MiB | loss (last 3) |")
    print("|---|---|---|---|---|---|---|")
    for act, r in rows.items():
        a = r["allocs"]
        low = sum(v for k, v in a.items() if k not in ("f32", "bf16"))
        print(f"| {act} | {a['f32'] / mib:.2f} | {a['bf16'] / mib:.2f} | "
              f"{low / mib:.2f} | {sum(a.values()) / mib:.2f} | "
              f"{r['rss'] / 1024:.1f} | {r['loss']:.4f} |")
    f32, b16 = rows["f32"], rows["bf16"]
    print(f"bf16 / f32: all buffers "
          f"{sum(b16['allocs'].values()) / sum(f32['allocs'].values()):.3f}, "
          f"max RSS {b16['rss'] / f32['rss']:.3f}")


if __name__ == "__main__":
    main()
