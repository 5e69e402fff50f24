#!/usr/bin/env python3
"""What undoing a refused step costs: the session copies the whole state
before every step (docs/Design.md "Bad data and bad updates"), one memcpy
per state tensor into a buffer allocated when the session opens.

For the benchmark LM of docs/Benchmarks.md at O0 and O2, in one run: the
median step time of the session (the copy included) and the median time of
the same copy (np.copyto of the session's state tensors, the same bytes,
into preallocated arrays), and their ratio.

    .venv/bin/python benchmarks/bench_step_undo.py [--steps 20 --warmup 3]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import msamp  # noqa: E402
from msamp import graphs  # noqa: E402

from benchmark_lm import BENCHMARK_LM as LM  # noqa: E402


def median_ms(fn, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    graph = graphs.build("transformer-lm", **LM)
    rng = np.random.default_rng(0)
    shape = (LM["batch"], LM["seq"])
    print("| level | state MB | step ms | copy ms | copy / step |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for level in ("O0", "O2"):
            step = msamp.compile(graph, level, out_dir=os.path.join(tmp, level))
            with step.session() as s:
                s.init(seed=0)

                def one_step():
                    s.step({name: rng.integers(0, LM["vocab"], shape)
                            .astype(np.int64)
                            for name in ("input_ids", "targets")}, lr=1e-4)

                for _ in range(args.warmup):
                    one_step()
                step_ms = median_ms(one_step, args.steps)
                state = list(s.state_dict().values())
            copies = [np.empty_like(t) for t in state]

            def copy():
                for src, dst in zip(state, copies):
                    np.copyto(dst, src)

            copy()
            copy_ms = median_ms(copy, args.steps)
            mb = sum(t.nbytes for t in state) / 1e6
            print(f"| {level} | {mb:.1f} | {step_ms:.1f} | {copy_ms:.2f} | "
                  f"{copy_ms / step_ms:.1%} |")


if __name__ == "__main__":
    main()
