"""Loss curves of several levels side by side, and amax histories, as one PNG.

Command line (one command from graph to picture)::

    python -m msamp.plot --model transformer-lm --levels O0,O1,O2 --steps 200 \\
        -o levels.png
    python -m msamp.plot --log-json O0=o0.jsonl --log-json O2=o2.jsonl -o l.png

The first form builds the model with msamp.graphs, compiles it at every level
and trains each on the same learnable task (msamp.data) from the same seed,
recording after every step the most recent amax of each delayed-scaled
tensor. The second only plots msamp-run --log-json files (losses only: the
log has no amax). matplotlib is optional (``pip install msamp[plot]``);
without it the command exits with status 2 and says so before training.
"""

import argparse
import json
import math
import sys

from . import data, graphs
from .compiler import compile as compile_graph
from .inspect import amax_histories
from .session import Trainer


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _require_matplotlib():
    if not have_matplotlib():
        raise ImportError("msamp.plot needs matplotlib: pip install matplotlib "
                          "(or pip install 'msamp[plot]')")
    import matplotlib
    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt
    return plt


def run_levels(graph, levels=("O0", "O1", "O2"), steps=100, batches=None,
               seed=0, lr=None, recipe=None, num_classes=None):
    """Train ``graph`` at each level; returns ``{level: {"log": [...],
    "amax": {tensor: [amax after step 1, 2, ...]}}}``.

    ``batches``: what Trainer.fit takes; by default 16 batches of the
    learnable task for the graph's inputs (msamp.data).
    """
    if batches is None:
        vocab = num_classes or getattr(getattr(graph, "config", None), "vocab", 2)
        batches = data.task_batches(graph.data, 16, vocab, seed=seed)
    results = {}
    for level in levels:
        step = compile_graph(graph, level, **(recipe or {}))
        trainer = Trainer(step, lr=lr, seed=seed)
        amax = {}

        def record(_entry, trainer=trainer, amax=amax):
            for tensor, history in amax_histories(trainer).items():
                amax.setdefault(tensor, []).append(float(history[0]))

        trainer.fit(batches, steps=steps, callback=record)
        results[level] = {"log": list(trainer.log), "amax": amax}
        trainer.close()
        step.cleanup()
    return results


def read_log_json(path):
    """The entries of an msamp-run --log-json file (a null loss is NaN)."""
    entries = []
    with open(path) as f:
        for line in f:
            if line.strip():
                e = json.loads(line)
                if e.get("loss") is None:
                    e["loss"] = math.nan
                entries.append(e)
    return entries


def plot(results, path, title=None, max_legend=10):
    """Writes the figure: losses of every level on one panel, then one panel
    of amax curves per level that has delayed-scaled tensors."""
    plt = _require_matplotlib()
    amax_levels = [lv for lv, r in results.items() if r.get("amax")]
    n = 1 + len(amax_levels)
    fig, axes = plt.subplots(1, n, figsize=(5.5 * n, 6.0 if amax_levels else 4.2),
                             squeeze=False)
    ax = axes[0][0]
    for level, r in results.items():
        steps = [e["step"] for e in r["log"]]
        ax.plot(steps, [e["loss"] for e in r["log"]], label=level, linewidth=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title("loss by level")
    ax.grid(alpha=0.3)
    ax.legend()
    for ax, level in zip(axes[0][1:], amax_levels):
        curves = results[level]["amax"]
        # The largest tensors first: they decide whether casts saturate.
        order = sorted(curves, key=lambda t: -max(curves[t]))
        for i, tensor in enumerate(order):
            ys = [max(v, 1e-30) for v in curves[tensor]]
            ax.plot(range(1, len(ys) + 1), ys, linewidth=0.9,
                    label=tensor if i < max_legend else None)
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("amax (most recent)")
        ax.set_title(f"{level}: amax of {len(curves)} delayed-scaled tensors")
        ax.grid(alpha=0.3)
        # Below the panel: inside it would hide the curves.
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.13),
                  ncol=2, frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m msamp.plot",
        description="Train a generated model at several msamp levels (or read "
                    "msamp-run --log-json files) and plot loss curves and amax "
                    "histories to a PNG.")
    p.add_argument("-o", "--output", required=True, help="PNG file to write")
    p.add_argument("--model", choices=graphs.MODELS, default="transformer-lm")
    p.add_argument("--levels", default="O0,O1,O2", help="comma-separated (O0,O1,O2)")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, help="default: the graph's")
    for size in ("dim", "heads", "seq", "batch", "ffn", "vocab", "layers"):
        p.add_argument(f"--{size}", type=int, help="model size (msamp.graphs)")
    p.add_argument("--sizes", help="mlp widths, e.g. 16,32,8")
    p.add_argument("--log-json", action="append", metavar="LEVEL=FILE",
                   help="plot this msamp-run log instead of training (repeat)")
    p.add_argument("--save-logs", metavar="PREFIX",
                   help="also write PREFIX<level>.jsonl logs of the runs")
    p.add_argument("--title")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    if not have_matplotlib():
        print("msamp.plot: error: matplotlib is not installed (pip install "
              "matplotlib, or pip install 'msamp[plot]'); nothing was trained",
              file=sys.stderr)
        return 2
    if args.log_json:
        results = {}
        for item in args.log_json:
            level, sep, path = item.partition("=")
            if not sep:
                print(f"msamp.plot: error: --log-json wants LEVEL=FILE, got {item!r}",
                      file=sys.stderr)
                return 2
            results[level] = {"log": read_log_json(path), "amax": {}}
    else:
        sizes = {k: getattr(args, k) for k in ("dim", "heads", "seq", "batch",
                                               "ffn", "vocab", "layers")
                 if getattr(args, k) is not None}
        if args.sizes:
            sizes["sizes"] = tuple(int(s) for s in args.sizes.split(","))
        try:
            graph = graphs.build(args.model, **sizes)
        except (TypeError, ValueError) as e:
            print(f"msamp.plot: error: {e}", file=sys.stderr)
            return 2
        levels = [lv.strip() for lv in args.levels.split(",") if lv.strip()]
        results = run_levels(graph, levels, args.steps, seed=args.seed, lr=args.lr)
        for level, r in results.items():
            last = r["log"][-1]["loss"] if r["log"] else math.nan
            print(f"{level}: final loss {last:.4f} after {len(r['log'])} steps")
            if args.save_logs:
                with open(f"{args.save_logs}{level}.jsonl", "w") as f:
                    for e in r["log"]:
                        f.write(json.dumps(e) + "\n")
    plot(results, args.output, title=args.title or
         (None if args.log_json else f"{args.model}, {args.steps} steps"))
    print(f"msamp.plot: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
