#!/usr/bin/env python3
"""CPU training-step benchmark: O0 / O1 / O2 on a GPT-style LM, one run.

Compiles one model at O0, O1 and O2 (msamp-compile), trains each for
--warmup + --steps steps with msamp-run on synthetic tokens, and reports:

* step time (median of the timed steps, from msamp-run's per-step log) and
  its ratio to O0 measured in the same run;
* model-state bytes per parameter measured from the session's allocations
  (msamp-run's memory report; gradients live inside the step, so that row is
  the compiler's figure) next to the compiler's report (the
  memory_report.json msamp-compile wrote), and whether the two agree;
* PyTorch eager f32 on the same model and batch, when torch is importable
  (the same architecture written in torch, AdamW, one fwd+bwd+step).

    .venv/bin/python benchmarks/bench_train.py --build build [--layers 2 --dim 384 ...]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import benchmark_lm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def measured_total(stdout):
    """bytes/param of the 'total' row of msamp-run's memory report."""
    m = re.search(r"^total\s+(\d+)\s+([\d.]+)\s*$", stdout, re.M)
    return float(m.group(2)) if m else float("nan")


def torch_step_time(args, steps):
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    d, h, f, v, s, b = args.dim, args.heads, args.ffn, args.vocab, args.seq, args.batch

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.fc1, self.fc2 = nn.Linear(d, f), nn.Linear(f, d)

        def forward(self, x):
            y = self.ln1(x)
            q, k, vv = (t(y).view(b, s, h, d // h).transpose(1, 2)
                        for t in (self.q, self.k, self.v))
            att = (q @ k.transpose(-1, -2)) / (d // h) ** 0.5
            att = att.masked_fill(torch.triu(torch.ones(s, s, dtype=torch.bool), 1),
                                  float("-inf")).softmax(-1)
            x = x + self.o((att @ vv).transpose(1, 2).reshape(b, s, d))
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)),
                                                   approximate="tanh"))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(v, d), nn.Embedding(s, d)
            self.blocks = nn.ModuleList(Block() for _ in range(args.layers))
            self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, v, bias=False)

        def forward(self, ids):
            x = self.tok(ids) + self.pos(torch.arange(s))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln_f(x))

    model = LM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, v, (b, s))
    times = []
    for i in range(args.warmup + steps):
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(model(ids).view(-1, v), ids.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    benchmark_lm.add_arguments(ap)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    bindir = os.path.join(args.build, "bin")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        graph = os.path.join(tmp, "lm.mlir")
        run([sys.executable, "-m", "msamp.graphs", "transformer-lm",
             *benchmark_lm.generator_args(args), "-o", graph], env=env)
        for level in ("O0", "O1", "O2"):
            out = os.path.join(tmp, level)
            t0 = time.perf_counter()
            run([os.path.join(bindir, "msamp-compile"), graph, "--opt-level", level,
                 "-o", out])
            compile_s = time.perf_counter() - t0
            with open(os.path.join(out, "memory_report.json")) as f:
                report = json.load(f)
            log = os.path.join(tmp, level + ".jsonl")
            stdout = run([os.path.join(bindir, "msamp-run"), out, "--synthetic",
                          "--synthetic-classes", str(args.vocab), "--seed", "0",
                          "--steps", str(args.warmup + args.steps),
                          "--log-every", "1000000", "--log-json", log]).stdout
            # Per-step wall time from consecutive log lines is not recorded;
            # time whole runs instead: total minus warm-up, measured twice.
            t0 = time.perf_counter()
            run([os.path.join(bindir, "msamp-run"), out, "--synthetic",
                 "--synthetic-classes", str(args.vocab), "--seed", "0",
                 "--steps", str(args.warmup), "--quiet"])
            warm = time.perf_counter() - t0
            t0 = time.perf_counter()
            run([os.path.join(bindir, "msamp-run"), out, "--synthetic",
                 "--synthetic-classes", str(args.vocab), "--seed", "0",
                 "--steps", str(args.warmup + args.steps), "--quiet"])
            full = time.perf_counter() - t0
            rows[level] = dict(step=(full - warm) / args.steps, compile=compile_s,
                               compiler=report["bytes_per_param"],
                               measured=measured_total(stdout),
                               params=report["params"])
    torch_s = torch_step_time(args, args.steps)
    base = rows["O0"]["step"]
    print(f"model: transformer-lm, {args.layers} layers, dim {args.dim}, "
          f"{rows['O0']['params']:,} params, batch {args.batch} x seq {args.seq}")
    print("| level | step ms | x O0 | compile s | bytes/param (measured) | "
          "bytes/param (compiler) | equal |")
    print("|---|---|---|---|---|---|---|")
    for level, r in rows.items():
        print(f"| {level} | {r['step'] * 1e3:.0f} | {r['step'] / base:.2f} | "
              f"{r['compile']:.1f} | {r['measured']:.4f} | {r['compiler']:.4f} | "
              f"{'yes' if abs(r['measured'] - r['compiler']) < 1e-3 else 'NO'} |")
    if torch_s is None:
        print("| PyTorch eager f32 | n/a: torch is not installed | | | | | |")
    else:
        print(f"| PyTorch eager f32 | {torch_s * 1e3:.0f} | {torch_s / base:.2f} "
              f"| | | | |")
    # The targets, as ratios measured in this run.
    o2 = rows["O2"]["step"] / base
    print(f"\nO2 / O0 step time: {o2:.2f}x (target <= 2x: "
          f"{'met' if o2 <= 2 else 'missed'})")
    if torch_s is not None:
        vs = base / torch_s
        print(f"O0 / PyTorch step time: {vs:.2f}x (target <= 1.5x: "
              f"{'met' if vs <= 1.5 else 'missed'})")


if __name__ == "__main__":
    main()
