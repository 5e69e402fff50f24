#!/usr/bin/env python3
"""O3 (ZeRO) per rank: model-state memory, balance, collectives, step time.

Three tables for docs/Benchmarks.md "O3: memory per rank and bytes handed to
the group" (issue 20):

1. bytes/param per rank from each rank's compiler memory report
   (msamp-opt --msamp-o3="world-size=N rank=R" --msamp-memory-report), for
   N = 1, 2, 4, 8: the total, and the largest over the smallest rank of the
   model state (weights + masters + gradients + optimizer moments; scaling
   state excluded);
2. collective ops per step per rank in the compiled step (each is one call
   into the collective: msamp.all_reduce, msamp.reduce, msamp.broadcast,
   msamp.reduce_scatter, msamp.all_gather) at O0, O2 and O3 N=2 (ZeRO
   stages 2 and 1), and the payload bytes per rank per step (`comm_bytes`
   of msamp-run --log-json under mpirun -np 2) as a multiple of the params;
3. O3 over O2 step time under mpirun -np 2 (best of --repeat, each time
   t(--steps 12) - t(--steps 2) over 10, start-up excluded; O2 and O3 are
   timed alternately so that the machine's load hits both alike).

    .venv/bin/python benchmarks/bench_zero.py --build build [--repeat 3]

--stage 3 measures ZeRO stage 3 in tables 1 and 3 (the weights sharded too;
table 2 always has a stage 3 row).

--gpt2 adds to table 1 a GPT-2 exported from transformers (GPT2LMHeadModel,
tied head, GPT2_CONFIG below: 430,592 params) by msamp.export with
python/tests/stock_families.py's loss and AdamW groups; --gpt2-only prints
just its rows (no mpirun).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MODELS = {
    # The MLP (one weight holds most params), a wider one (>= 100k
    # params), the generator's default transformer LM, and the same LM with
    # GPT-2's tied head.
    "mlp 64,128,16": ["mlp", "--sizes", "64,128,16"],
    "mlp 256,512,64": ["mlp", "--sizes", "256,512,64"],
    "transformer-lm": ["transformer-lm"],
    "transformer-lm, tied head": ["transformer-lm", "--tie-embeddings"],
}
# Small enough to export in seconds, >= 100k params (the balance
# bound), GPT-2's layout otherwise (tied token embedding, ~8% of params).
GPT2_CONFIG = dict(vocab_size=256, n_positions=8, n_embd=128, n_layer=2,
                   n_head=4, bos_token_id=0, eos_token_id=0)
STATE = ("weights", "master_weights", "weight_grads", "optimizer_m", "optimizer_v")
COLLECTIVES = ("msamp.all_reduce", "msamp.reduce", "msamp.broadcast",
               "msamp.reduce_scatter", "msamp.all_gather")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def report(opt, graph, pipeline):
    out = run([opt, graph, pipeline, "--msamp-memory-report=format=json", "-o",
               "/dev/null"]).stdout
    return json.loads(out)


def collectives(opt, graph, pipeline):
    text = run([opt, graph, pipeline]).stdout
    return sum(len(re.findall(r"= %s\b" % re.escape(op), text)) for op in COLLECTIVES)


def export_gpt2(path):
    """GPT2_CONFIG's GPT-2 from transformers as a forward_backward graph."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    import msamp
    import stock_families as families
    import torch
    import transformers
    family = families.FAMILIES["gpt2"]
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(**GPT2_CONFIG))
    model.train()
    batch = families.batches(family, 1, 4)[0]
    graph = msamp.export(model, families.loss_fn(family), batch,
                         optimizer=families.optimizer(family, model))
    with open(path, "w") as f:
        f.write(graph.text)


def memory_table(opt, graphs, stage):
    rows = ["| model | params | O2 | N | bytes/param per rank | model state max/min |",
            "|---|---|---|---|---|---|"]
    for name, graph in graphs.items():
        o2 = report(opt, graph, "--msamp-o2")
        for n in (1, 2, 4, 8):
            reps = [report(opt, graph, f'--msamp-o3=world-size={n} rank={r}'
                           f' zero-stage={stage}') for r in range(n)]
            state = [sum(rp["categories"].get(c, {}).get("bytes", 0) for c in STATE)
                     for rp in reps]
            per_rank = " / ".join(f"{rp['bytes_per_param']:.2f}" for rp in reps)
            rows.append(f"| {name} | {o2['params']:,} | {o2['bytes_per_param']:.2f} | "
                        f"{n} | {per_rank} | {max(state) / min(state):.3f} |")
    return "\n".join(rows)


def mpirun():
    exe = shutil.which("mpirun")
    if not exe:
        sys.exit("bench_zero.py: mpirun is not on PATH")
    return [exe, "--allow-run-as-root", "--oversubscribe", "--mca",
            "mpi_yield_when_idle", "1", "--mca", "btl", "self,vader", "-np", "2"]


def msamp_run(build, graph, level, steps, tmp, log=None, options=None):
    cmd = mpirun() + [os.path.join(build, "bin", "msamp-run"), graph,
                      "--opt-level", level, "--synthetic", "--steps", str(steps),
                      "--quiet", "--seed", "1"]
    if options:
        cmd += ["--pipeline-options", options]
    if log:
        cmd += ["--log-json", log]
    start = time.monotonic()
    run(cmd, cwd=tmp)
    return time.monotonic() - start


def comm_table(opt, build, graphs, tmp):
    rows = ["| model | level | collective calls per step per rank | comm_bytes per step "
            "per rank | comm_bytes / params |",
            "|---|---|---|---|---|"]
    for name, graph in graphs.items():
        params = report(opt, graph, "--msamp-o0")["params"]
        for level, pipeline, options in (
                ("O0", "--msamp-o0", None), ("O2", "--msamp-o2", None),
                ("O3 N=2", "--msamp-o3=world-size=2 rank=0", None),
                ("O3 N=2 stage 1", "--msamp-o3=world-size=2 rank=0 zero-stage=1",
                 "zero-stage=1"),
                ("O3 N=2 stage 3", "--msamp-o3=world-size=2 rank=0 zero-stage=3",
                 "zero-stage=3")):
            log = os.path.join(tmp, "comm.jsonl")
            msamp_run(build, graph, level.split()[0], 1, tmp, log, options)
            with open(log) as f:
                comm = json.loads(f.readline())["comm_bytes"]
            rows.append(f"| {name} | {level} | {collectives(opt, graph, pipeline)} | "
                        f"{comm:,} | {comm / params:.2f} |")
    return "\n".join(rows)


def time_table(build, graphs, tmp, repeat, stage):
    rows = ["| model | O2 ms/step | O3 ms/step | O3 / O2 |", "|---|---|---|---|"]
    for name, graph in graphs.items():
        best = {"O2": float("inf"), "O3": float("inf")}
        options = {"O2": None, "O3": f"zero-stage={stage}"}
        for level in best:  # compile (cached) outside the timing
            msamp_run(build, graph, level, 1, tmp, options=options[level])
        for _ in range(repeat):
            for level in best:
                t = (msamp_run(build, graph, level, 12, tmp, options=options[level]) -
                     msamp_run(build, graph, level, 2, tmp, options=options[level])) / 10
                best[level] = min(best[level], t)
        rows.append(f"| {name} | {1e3 * best['O2']:.1f} | {1e3 * best['O3']:.1f} | "
                    f"{best['O3'] / best['O2']:.2f} |")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-runs", action="store_true",
                   help="only the compiler tables (no mpirun)")
    p.add_argument("--stage", type=int, default=2, choices=(1, 2, 3),
                   help="O3's ZeRO stage in the memory and time tables")
    p.add_argument("--gpt2", action="store_true",
                   help="also a GPT-2 from transformers in the memory table")
    p.add_argument("--gpt2-only", action="store_true",
                   help="only the GPT-2's memory rows")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    opt = os.path.join(args.build, "bin", "msamp-opt")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        for name, argv in MODELS.items() if not args.gpt2_only else ():
            path = os.path.join(tmp, re.sub(r"\W+", "_", name) + ".mlir")
            run([sys.executable, "-m", "msamp.graphs", *argv, "-o", path], env=env)
            graphs[name] = path
        mem_graphs = dict(graphs)
        if args.gpt2 or args.gpt2_only:
            mem_graphs["gpt2 (transformers)"] = os.path.join(tmp, "gpt2.mlir")
            export_gpt2(mem_graphs["gpt2 (transformers)"])
        print(memory_table(opt, mem_graphs, args.stage))
        if args.no_runs or args.gpt2_only:
            return
        print()
        print(comm_table(opt, args.build, graphs, tmp))
        print()
        print(time_table(args.build, {"transformer-lm": graphs["transformer-lm"]},
                         tmp, args.repeat, args.stage))
    cpu = [l for l in open("/proc/cpuinfo") if l.startswith("model name")]
    print(f"\nCPU: {cpu[0].split(':', 1)[1].strip() if cpu else 'unknown'}, "
          f"{os.cpu_count()} cores")


if __name__ == "__main__":
    main()
