#!/usr/bin/env python3
"""Peak memory of training per level: planned (static buffer plan) against
measured (session buffers + the step's counted heap), and the step time the
counting heap costs.

For each model (the benchmark LM and an MLP) and level, compiles with this
build (msamp.compile), trains --steps steps on synthetic batches through a
Session and prints, per level: model-state bytes/param (memory_report.json),
the planned peak (memory_report.json's peak_bytes), the measured peak
(Session.peak_bytes()), their ratio, and the measured peak per parameter.

With --baseline-build DIR (a build of main before the counting heap) it also
times the benchmark LM's CPU step at --time-levels with each build's own
msamp-compile and msamp-run (a new step cannot run on an old runtime, which
lacks the heap functions), round-robin --rounds times so the host's load
hits both alike: median of (t(--steps 12) - t(--steps 2)) / 10 per build,
and the ratio new / baseline, measured in the same run; t is both the wall
time and the CPU time (user + system, all threads) of msamp-run: on a
shared host the CPU time is far less disturbed by other processes.

    $MSAMP_PYTHON benchmarks/bench_peak_memory.py --build build \\
        [--baseline-build /path/to/main/build --rounds 5]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

# The benchmark LM of docs/Benchmarks.md.
from benchmark_lm import BENCHMARK_LM as LM  # noqa: E402
MLP = dict(sizes=(256, 1024, 1024, 10), batch=64)
LEVELS = ("O0", "O1", "O2", "amp-bf16", "amp-fp16", "te")
MIB = 1024.0 * 1024.0


def peak_table(graphs, levels, steps):
    import msamp
    print("| model | level | state bytes/param | planned peak MiB | "
          "measured peak MiB | measured / planned | peak bytes/param |")
    print("|---|---|---|---|---|---|---|")
    for name, graph in graphs:
        for level, step in msamp.compile_all(graph, levels).items():
            report = step.memory_report()
            with step.session() as s:
                for k in range(steps):
                    s.synthetic_batch(seed=0, step=k + 1)
                    s.step()
                peak = s.peak_bytes()
            params = report["params"]
            print(f"| {name} | {level} | {report['bytes_per_param']:.2f} | "
                  f"{peak['planned'] / MIB:.2f} | {peak['measured'] / MIB:.2f} | "
                  f"{peak['measured'] / peak['planned']:.4f} | "
                  f"{peak['measured'] / params:.1f} |")
            step.cleanup()


def step_times(builds, graph, level, rounds, tmp):
    """{build: median ms/step} with each build's own compiler and runtime."""
    dirs = {}
    for i, b in enumerate(builds):
        dirs[b] = os.path.join(tmp, f"build{i}-{level}")
        subprocess.run([os.path.join(b, "bin", "msamp-compile"), graph,
                        "--opt-level", level, "-o", dirs[b]],
                       check=True, capture_output=True)

    def cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def run(b, n):
        """(wall, cpu) seconds of one msamp-run."""
        t0, c0 = time.perf_counter(), cpu()
        subprocess.run([os.path.join(b, "bin", "msamp-run"), dirs[b], "--steps",
                        str(n), "--synthetic", "--quiet", "--seed", "1"],
                       check=True, capture_output=True)
        return time.perf_counter() - t0, cpu() - c0

    wall = {b: [] for b in builds}
    cpus = {b: [] for b in builds}
    for _ in range(rounds):
        for b in builds:
            (w12, c12), (w2, c2) = run(b, 12), run(b, 2)
            wall[b].append((w12 - w2) / 10 * 1000.0)
            cpus[b].append((c12 - c2) / 10 * 1000.0)
    return {b: (statistics.median(wall[b]), statistics.median(cpus[b]))
            for b in builds}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--levels", default=",".join(LEVELS))
    ap.add_argument("--baseline-build")
    ap.add_argument("--skip-peaks", action="store_true",
                    help="only the step times")
    ap.add_argument("--time-levels", default="O0,O2")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    os.environ["MSAMP_BUILD_DIR"] = os.path.abspath(args.build)
    from msamp import graphs
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = [line.split(":", 1)[1].strip() for line in cpu.splitlines()
             if line.startswith("Model name")]
    print(f"CPU: {model[0] if model else '?'}")
    lm = graphs.build("transformer-lm", **LM)
    if not args.skip_peaks:
        peak_table([("LM", lm), ("MLP", graphs.build("mlp", **MLP))],
                   args.levels.split(","), args.steps)
    if not args.baseline_build:
        return
    with tempfile.TemporaryDirectory() as tmp:
        graph = os.path.join(tmp, "lm.mlir")
        with open(graph, "w") as f:
            f.write(lm.text)
        new, old = os.path.abspath(args.build), os.path.abspath(args.baseline_build)
        print("\n| level | baseline wall ms/step | counting heap wall ms/step | "
              "ratio | baseline CPU ms/step | counting heap CPU ms/step | ratio |")
        print("|---|---|---|---|---|---|---|")
        for level in args.time_levels.split(","):
            t = step_times([old, new], graph, level, args.rounds, tmp)
            print(f"| {level} | {t[old][0]:.1f} | {t[new][0]:.1f} | "
                  f"{t[new][0] / t[old][0]:.3f} | {t[old][1]:.1f} | "
                  f"{t[new][1]:.1f} | {t[new][1] / t[old][1]:.3f} |")


if __name__ == "__main__":
    main()
