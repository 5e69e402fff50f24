#!/usr/bin/env python3
"""Stock Hugging Face / timm models through msamp: one row per family.

For each family of python/tests/stock_families.py (tiny configs, no
downloads), measured in one run on this machine:

* export: seconds of ``msamp.export`` (trace, decompositions, torch-mlir);
* compile O0 / O2: seconds of ``msamp.compile`` at each level, one at a time
  (``threads`` code generation threads, default 1 so that the levels compare);
* step ms: the median over ``--steps`` steps (after 2 warm-up steps) of a
  CPU training step of PyTorch eager f32 and of the compiled step at O0 and
  O2, all on ``torch.set_num_threads(--threads)`` / one process, the same
  batches cycled; the ratios are against PyTorch in the same run;
* bytes/param: the compiler's memory report (model state) at O0 and O2.

    PYTHONPATH=python .venv/bin/python benchmarks/bench_stock_models.py \\
        [--families gpt2,bert] [--steps 20] [--threads 1]

``--gaps`` prints the issue's numbers instead (test_stock_models.py's
protocol, stock_families.BATCH/DISTINCT/STEPS): PyTorch's loss drop in
50 steps, the O0 max relative difference over the first 20 steps, and the
O1 and O2 last-5 mean against PyTorch's, every family at every level (the
test checks O1 for two families only).

``--spread N`` repeats the O1/O2 gaps over N inits (the stock one and
N - 1 with every weight scaled by 1 + 0.01 * randn): whether a level's gap
is systematic or the spread of its trajectory (docs/Benchmarks.md "Per
family").

The table is printed as Markdown for docs/Benchmarks.md; name the CPU with it
(``lscpu | grep 'Model name'``).
"""

import argparse
import copy
import dataclasses
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))

import torch  # noqa: E402

import msamp  # noqa: E402
import stock_families as families  # noqa: E402

BATCH = 4
DISTINCT = 4


def _median_ms(step, data, steps):
    for i in range(2):
        step(data[i % len(data)])
    times = []
    for i in range(steps):
        start = time.perf_counter()
        step(data[i % len(data)])
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def torch_step_ms(family, model, data, steps):
    opt = families.optimizer(family, model)
    lf = families.loss_fn(family)
    inp, tgt = list(data[0])

    def step(b):
        opt.zero_grad()
        lf(model(b[inp]), b[tgt]).backward()
        opt.step()
    return _median_ms(step, data, steps)


def msamp_step_ms(compiled, init, data, steps):
    trainer = msamp.Trainer(compiled, init_file=init)
    batches = [{k: v.numpy() for k, v in b.items()} for b in data]
    return _median_ms(lambda b: trainer.fit([b], steps=1), batches, steps)


def bytes_per_param(compiled):
    # All step state over the params, scaling state included (a tiny model's
    # amax histories weigh more per param than a real model's).
    return compiled.memory_report()["bytes_per_param"]


def row(name, steps, threads, tmp):
    family = families.FAMILIES[name]
    model = families.model(family)
    data = families.batches(family, DISTINCT, BATCH)
    params = sum(p.numel() for p in model.parameters())
    init = os.path.join(tmp, f"{name}.init.safetensors")
    reference = copy.deepcopy(model)
    start = time.perf_counter()
    graph = msamp.export(model, families.loss_fn(family), data[0],
                         optimizer=families.optimizer(family, model),
                         init_file=init)
    export_s = time.perf_counter() - start
    out = {"family": name, "params": params, "export_s": export_s}
    for level in ("O0", "O2"):
        start = time.perf_counter()
        compiled = msamp.compile(graph, level, threads=threads)
        out[f"compile_{level}_s"] = time.perf_counter() - start
        out[f"step_{level}_ms"] = msamp_step_ms(compiled, init, data, steps)
        out[f"bpp_{level}"] = bytes_per_param(compiled)
    out["step_torch_ms"] = torch_step_ms(family, reference, data, steps)
    return out


def _last5(losses):
    return statistics.fmean(losses[-5:])


def gaps_row(name, tmp):
    family = families.FAMILIES[name]
    model = families.model(family)
    reference = copy.deepcopy(model)
    data = families.batches(family, families.DISTINCT, families.BATCH)
    init = os.path.join(tmp, f"{name}.gaps.init.safetensors")
    graph = msamp.export(model, families.loss_fn(family), data[0],
                         optimizer=families.optimizer(family, model),
                         init_file=init)
    pytorch = families.torch_losses(family, reference, data, families.STEPS)
    batches = [{k: v.numpy() for k, v in b.items()} for b in data]
    out = {"family": name, "lr": family.lr,
           "drop": 1 - _last5(pytorch) / statistics.fmean(pytorch[:5])}
    for level, step in msamp.compile_all(graph, ["O0", "O1", "O2"]).items():
        losses = msamp.Trainer(step, init_file=init).fit(batches, steps=families.STEPS)
        out[level] = _last5(losses) / _last5(pytorch) - 1
        if level == "O0":
            n = families.O0_STEPS
            out["o0_diff"] = max(abs(a / b - 1) for a, b in zip(losses[:n], pytorch[:n]))
    return out


def perturbed(model, seed):
    """``model`` with every weight scaled by 1 + 0.01 * randn (seed)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1 + 0.01 * torch.randn(p.shape, generator=g))
    return model


def spread_row(name, inits, tmp):
    family = families.FAMILIES[name]
    data = families.batches(family, families.DISTINCT, families.BATCH)
    batches = [{k: v.numpy() for k, v in b.items()} for b in data]
    steps, pytorch, gaps = None, [], {"O1": [], "O2": []}
    for seed in range(inits):
        model = families.model(family)
        if seed:
            perturbed(model, seed)
        reference = copy.deepcopy(model)
        init = os.path.join(tmp, f"{name}.spread{seed}.init.safetensors")
        graph = msamp.export(model, families.loss_fn(family), data[0],
                             optimizer=families.optimizer(family, model),
                             init_file=init)
        if steps is None:  # the graph does not depend on the weights
            steps = msamp.compile_all(graph, list(gaps))
        pytorch.append(_last5(families.torch_losses(family, reference, data,
                                                    families.STEPS)))
        for level, step in steps.items():
            losses = msamp.Trainer(step, init_file=init).fit(batches, steps=families.STEPS)
            gaps[level].append(_last5(losses) / pytorch[-1] - 1)
    return pytorch, gaps


def main_spread(names, inits):
    print(f"| family | lr | PyTorch last-5 over {inits} inits | O1 mean gap (range) "
          "| O2 mean gap (range) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            pytorch, gaps = spread_row(name, inits, tmp)
            cells = [f"{statistics.fmean(g):+.1%} ({min(g):+.1%} .. {max(g):+.1%})"
                     for g in gaps.values()]
            print(f"| {name} | {families.FAMILIES[name].lr:g} "
                  f"| {min(pytorch):.3f} .. {max(pytorch):.3f} | " + " | ".join(cells)
                  + " |", flush=True)


def main_gaps(names):
    print("| family | lr | PyTorch loss drop | O0 max rel. diff (20 steps) "
          "| O1 last-5 vs PyTorch | O2 last-5 vs PyTorch |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            r = gaps_row(name, tmp)
            print(f"| {name} | {r['lr']:g} | {r['drop']:.0%} | {r['o0_diff']:.1e} "
                  f"| {r['O1']:+.1%} | {r['O2']:+.1%} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(families.FAMILIES))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--gaps", action="store_true",
                        help="the issue's loss numbers, not times")
    parser.add_argument("--spread", type=int, metavar="N",
                        help="O1/O2 gaps over N inits (1%% perturbations)")
    parser.add_argument("--lr", type=float,
                        help="--gaps / --spread at this lr, not the families' own")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.lr:
        for name in args.families.split(","):
            families.FAMILIES[name] = dataclasses.replace(families.FAMILIES[name],
                                                          lr=args.lr)
    if args.gaps:
        main_gaps(args.families.split(","))
        return
    if args.spread:
        main_spread(args.families.split(","), args.spread)
        return
    print("| family | params | export s | compile O0 s | compile O2 s "
          "| PyTorch ms/step | O0 ms/step (x PyTorch) | O2 ms/step (x PyTorch) "
          "| B/param O0 | B/param O2 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.families.split(","):
            r = row(name, args.steps, args.threads, tmp)
            t = r["step_torch_ms"]
            print(f"| {name} | {r['params']:,} | {r['export_s']:.1f} "
                  f"| {r['compile_O0_s']:.1f} | {r['compile_O2_s']:.1f} | {t:.1f} "
                  f"| {r['step_O0_ms']:.1f} ({r['step_O0_ms'] / t:.2f}) "
                  f"| {r['step_O2_ms']:.1f} ({r['step_O2_ms'] / t:.2f}) "
                  f"| {r['bpp_O0']:.2f} | {r['bpp_O2']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
