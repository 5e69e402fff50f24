#!/usr/bin/env python3
"""Compile-time benchmark: msamp-opt --msamp-o0/o1/o2 on generated graphs.

Generates transformer LMs of increasing depth with `python -m msamp.graphs`,
compiles each at O0, O1 and O2 with msamp-opt (best of --repeat runs, wall
clock), and prints a Markdown table with the op count, the times and the O1/O2
time as a ratio to O0 measured in the same run. Also reports the memory
report's bytes per parameter for each level.

    .venv/bin/python benchmarks/bench_compile.py --build build [--layers 2,8,16]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def op_count(path, mlir_opt):
    """Total ops as `mlir-opt --print-op-stats` counts them (nested included)."""
    out = run([mlir_opt, path, "--print-op-stats", "-o", "/dev/null"]).stderr
    total = 0
    for line in out.splitlines():
        # Rows look like "    linalg.matmul        , 147".
        name, sep, count = line.partition(",")
        if sep and "." in name and count.strip().isdigit():
            total += int(count)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--layers", default="2,8,16")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    opt = os.path.join(args.build, "bin", "msamp-opt")
    if not os.path.exists(opt):
        sys.exit(f"bench_compile: {opt} not found; build first (scripts/build.sh)")
    mlir_opt = "/usr/lib/llvm-22/bin/mlir-opt"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in [int(x) for x in args.layers.split(",")]:
            graph = os.path.join(tmp, f"lm{layers}.mlir")
            run([sys.executable, "-m", "msamp.graphs", "transformer-lm",
                 "--layers", str(layers), "-o", graph], env=env)
            ops = op_count(graph, mlir_opt)
            times, bpp = {}, {}
            for level in ("o0", "o1", "o2"):
                best = float("inf")
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    out = run([opt, graph, f"--msamp-{level}",
                               "--msamp-memory-report=format=json",
                               "-o", "/dev/null"]).stdout
                    best = min(best, time.perf_counter() - t0)
                times[level] = best
                bpp[level] = json.loads(out)["bytes_per_param"]
            rows.append((layers, ops, times, bpp))
    print("| graph | ops | O0 s | O1 s (x O0) | O2 s (x O0) | bytes/param O0 / O1 / O2 |")
    print("|---|---|---|---|---|---|")
    for layers, ops, t, b in rows:
        print(f"| transformer-lm, {layers} layers | {ops} | {t['o0']:.2f} | "
              f"{t['o1']:.2f} ({t['o1'] / t['o0']:.1f}x) | "
              f"{t['o2']:.2f} ({t['o2'] / t['o0']:.1f}x) | "
              f"{b['o0']:.2f} / {b['o1']:.2f} / {b['o2']:.2f} |")


if __name__ == "__main__":
    main()
