"""``python -m msamp.graphs MODEL [options] -o OUT.mlir``: write a contract graph.

Bad values (non-positive sizes, dim not divisible by heads, an option the model
does not take) exit with status 2 and a one-line reason on stderr, never a
traceback, so scripts and lit tests can rely on the message.
"""

import argparse
import math
import sys

from . import MODELS, build
from .optimizer import KINDS

# Which size options each model takes (argparse has no per-choice options).
MODEL_OPTIONS = {
    "mlp": {"sizes", "batch"},
    "transformer-block": {"dim", "heads", "seq", "batch", "ffn", "vocab"},
    "transformer-lm": {"dim", "heads", "seq", "batch", "ffn", "vocab", "layers",
                       "tie_embeddings"},
}


def _sizes(text):
    try:
        return tuple(int(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}") from None


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m msamp.graphs",
        description="Emit a forward+loss+backward MLIR training graph "
                    "(msamp input contract, docs/Interfaces.md section 1).")
    p.add_argument("model", choices=MODELS)
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    g = p.add_argument_group("sizes")
    g.add_argument("--sizes", type=_sizes, help="mlp widths, input first (default 3,5,2)")
    g.add_argument("--batch", type=int, help="batch size (default 4 for mlp, else 2)")
    g.add_argument("--dim", type=int, help="model width (default 64)")
    g.add_argument("--heads", type=int, help="attention heads (default 4)")
    g.add_argument("--seq", type=int, help="sequence length (default 16)")
    g.add_argument("--ffn", type=int, help="MLP hidden width (default 256)")
    g.add_argument("--vocab", type=int, help="classes / vocabulary (default 64)")
    g.add_argument("--layers", type=int, help="transformer-lm blocks (default 2)")
    g.add_argument("--tie-embeddings", action="store_true", default=None,
                   help="transformer-lm: the head is the token embedding (GPT-2)")
    o = p.add_argument_group("optimizer (the msamp.optimizer module attribute)")
    o.add_argument("--optimizer", choices=KINDS, default="adamw")
    o.add_argument("--lr", type=float,
                   help="learning rate (default 1e-2 for mlp, as in the shared "
                        "example; 1e-3 otherwise)")
    o.add_argument("--weight-decay", type=float,
                   help="default 1e-2 for adamw, 0 for adam and sgd")
    p.add_argument("--stats", action="store_true",
                   help="print parameter and op counts to stderr")
    return p


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    allowed = MODEL_OPTIONS[args.model]
    sizes = {}
    for name in ("sizes", "batch", "dim", "heads", "seq", "ffn", "vocab", "layers",
                 "tie_embeddings"):
        value = getattr(args, name)
        if value is None:
            continue
        if name not in allowed:
            parser.error(f"--{name.replace('_', '-')} does not apply to {args.model}")
        sizes[name] = value
    if args.lr is not None and not (math.isfinite(args.lr) and args.lr > 0):
        parser.error(f"--lr must be a finite positive number, got {args.lr}")
    wd = args.weight_decay
    if wd is not None and not (math.isfinite(wd) and wd >= 0):
        parser.error(f"--weight-decay must be a finite non-negative number, got {wd}")
    try:
        graph = build(args.model, optimizer=args.optimizer, lr=args.lr,
                      weight_decay=args.weight_decay, **sizes)
    except ValueError as e:
        parser.error(str(e))
    if args.output == "-":
        sys.stdout.write(graph.text)
    else:
        try:
            with open(args.output, "w") as f:
                f.write(graph.text)
        except OSError as e:
            parser.error(f"cannot write {args.output}: {e.strerror}")
    if args.stats:
        sys.stderr.write(graph.stats_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
