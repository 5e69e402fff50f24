#!/usr/bin/env python3
"""Compile-time benchmark: msamp-opt --msamp-o0/o1/o2 on generated graphs.

Generates transformer LMs of increasing depth with `python -m msamp.graphs`,
compiles each at O0, O1 and O2 with msamp-opt (best of --repeat runs, wall
clock), and prints a Markdown table with the op count, the times and the O1/O2
time as a ratio to O0 measured in the same run. Also reports the memory
report's bytes per parameter for each level.

    .venv/bin/python benchmarks/bench_compile.py --build build [--layers 2,8,16]

With --compile, times the whole `msamp-compile` instead (what a user waits
for: pipeline, lowering, LLVM, linking) on the LM of issue #19 (dim 768,
12 heads, seq 128, batch 2, ffn 3072, vocab 8192), per binary, level,
target and depth: wall time, peak RSS (of that child alone, from wait4),
and for --target cuda the distinct kernels (PTX modules) and launches per
step, each the best of --repeat compiles (least wall and CPU time); then the
ratios the issue asks for, within one run. --old names
another msamp-compile (e.g. main's) to compare with; --quick is 1,2,4 layers.

    .venv/bin/python benchmarks/bench_compile.py --compile \
        --old /tmp/main-bin/msamp-compile --layers 1,2,4,8,12 --levels O0,O2
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


LM_SIZES = ["--dim", "768", "--heads", "12", "--seq", "128", "--batch", "2",
            "--ffn", "3072", "--vocab", "8192"]


def timed_compile(binary, graph, out, level, target, extra):
    """(wall s, peak RSS MB, kernels, launches, CPU s) of one msamp-compile.

    CPU s (user + system, all threads) is the work done: on a shared host it
    moves far less with the load than the wall time does."""
    cmd = [binary, graph, "--opt-level", level, "-o", out, "--emit-llvm"]
    if target == "cuda":
        cmd += ["--target", "cuda"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd + extra, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read()
    if proc.returncode != 0:
        sys.exit(f"bench_compile: {' '.join(cmd + extra)} failed:\n{err}")
    kernels = launches = None
    if target == "cuda":
        kdir = os.path.join(out, "kernels")
        kernels = len([f for f in os.listdir(kdir) if f.endswith(".ptx")])
        # Launches per step from the cost report: since the layers are
        # functions (msamp-gpu-outline-layers) a launch site in the host
        # code runs once per call.
        with open(os.path.join(out, "gpu_cost.json")) as f:
            launches = json.load(f)["kernels"]
    return (wall, usage.ru_maxrss / 1024.0, kernels, launches,
            usage.ru_utime + usage.ru_stime)


def compile_main(args):
    binaries = [("new", os.path.join(args.build, "bin", "msamp-compile"), [])]
    if args.old:
        binaries.append(("old", args.old, []))
    layers = [1, 2, 4] if args.quick else [int(x) for x in args.layers.split(",")]
    old_layers = (set(int(x) for x in args.old_layers.split(","))
                  if args.old_layers else set(layers))
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    results = {}
    print("| layers | level | target | binary | wall s | CPU s | peak MB | "
          "kernels | launches/step |", flush=True)
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in layers:
            graph = os.path.join(tmp, f"lm{n}.mlir")
            run([sys.executable, "-m", "msamp.graphs", "transformer-lm",
                 *LM_SIZES, "--layers", str(n), "-o", graph], env=env)
            for level in args.levels.split(","):
                for target in args.targets.split(","):
                    for name, binary, extra in binaries:
                        if name == "old" and n not in old_layers:
                            continue
                        out = os.path.join(tmp, f"{name}-{n}-{level}-{target}")
                        # Best of --repeat: the least wall and CPU time
                        # (a shared host's load only ever adds), the
                        # largest peak.
                        runs = [timed_compile(binary, graph, out, level,
                                              target, extra)
                                for _ in range(args.repeat)]
                        r = (min(x[0] for x in runs), max(x[1] for x in runs),
                             runs[0][2], runs[0][3], min(x[4] for x in runs))
                        results[(n, level, target, name)] = r
                        wall, rss, kernels, launches, cpu = r
                        print(f"| {n} | {level} | {target} | {name} | "
                              f"{wall:.1f} | {cpu:.1f} | {rss:.0f} | "
                              f"{'' if kernels is None else kernels} | "
                              f"{'' if launches is None else launches} |",
                              flush=True)
    print()
    for level in args.levels.split(","):
        for target in args.targets.split(","):
            for column, what in ((0, "wall"), (4, "CPU")):
                def t(n, name="new"):
                    r = results.get((n, level, target, name))
                    return r[column] if r else None
                for a, b, goal in ((12, 1, "<= 3"), (24, 12, "<= 1.5")):
                    if t(a) and t(b):
                        print(f"- {level} {target} {what}: new {a} layers / "
                              f"{b} layer(s): {t(a) / t(b):.2f}x (goal {goal})")
                for n in layers:
                    if t(n) and t(n, "old"):
                        print(f"- {level} {target} {what}: {n} layers, new / "
                              f"old: {t(n) / t(n, 'old'):.2f}x "
                              "(goal at 12: <= 0.15)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--layers", default=None,
                    help="depths (default 2,8,16; --compile: 1,2,4,8,12,24)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compile", action="store_true",
                    help="time msamp-compile on the issue-#19 LM instead")
    ap.add_argument("--old", help="--compile: another msamp-compile to compare")
    ap.add_argument("--old-layers", default=None,
                    help="--compile: depths to run --old at (default: all)")
    ap.add_argument("--levels", default="O0,O2")
    ap.add_argument("--targets", default="cpu,cuda")
    ap.add_argument("--quick", action="store_true",
                    help="--compile: 1, 2 and 4 layers only")
    args = ap.parse_args()
    if args.compile:
        args.layers = args.layers or "1,2,4,8,12,24"
        return compile_main(args)
    args.layers = args.layers or "2,8,16"
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
