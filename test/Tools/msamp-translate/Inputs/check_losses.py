"""Compares msamp-run --log-json losses with references (stdlib only).

  check_losses.py ref LOG.jsonl REF.json KEY --steps N --tol T
      the first N logged losses each within T of REF.json's list KEY
  check_losses.py trains LOG.jsonl --factor F
      the mean loss of the last 10 steps is below F times the first loss
  check_losses.py close LOG.jsonl BASE.jsonl --window W --tol T
      the mean losses of the last W steps of both logs differ by at most T
  check_losses.py track LOG.jsonl REF.json KEY --tol T
      every logged loss within T of REF.json's list KEY (same length)
Prints the numbers it compared.
"""

import json
import sys


def fail(message):
    print(f"check_losses.py: FAIL: {message}")
    sys.exit(1)


def losses(path):
    with open(path) as f:
        log = [json.loads(line) for line in f if line.strip()]
    out = []
    for entry in log:
        if entry.get("loss") is None:
            fail(f"{path}: step {entry.get('step')} has a non-finite loss")
        out.append(float(entry["loss"]))
    return out


def options(argv):
    return {k: float(v) for k, v in zip(argv[::2], argv[1::2])}


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    cmd = argv[0]
    if cmd in ("ref", "track"):
        got = losses(argv[1])
        with open(argv[2]) as f:
            want = json.load(f)[argv[3]]
        opts = options(argv[4:])
        tol = opts["--tol"]
        n = int(opts.get("--steps", len(want)))
        if len(got) < n or len(want) < n or (cmd == "track" and
                                             len(got) != len(want)):
            fail(f"{len(got)} steps logged, {len(want)} in the reference")
        worst = max(abs(g - w) for g, w in zip(got[:n], want[:n]))
        for i in range(n):
            if abs(got[i] - want[i]) > tol:
                fail(f"step {i + 1}: loss {got[i]:.7f}, {argv[3]} "
                     f"{want[i]:.7f} (+- {tol})")
        print(f"{n} losses within {worst:.2e} of {argv[3]}: "
              + " ".join(f"{g:.6f}" for g in got[:min(n, 5)]))
    elif cmd == "trains":
        got = losses(argv[1])
        factor = options(argv[2:])["--factor"]
        last = sum(got[-10:]) / len(got[-10:])
        if not last < factor * got[0]:
            fail(f"loss {got[0]:.4f} -> {last:.4f} (last 10 mean), "
                 f"expected < {factor} x first")
        print(f"loss {got[0]:.4f} -> {last:.4f} (mean of the last 10 of "
              f"{len(got)} steps)")
    elif cmd == "close":
        a, b = losses(argv[1]), losses(argv[2])
        opts = options(argv[3:])
        w, tol = int(opts["--window"]), opts["--tol"]
        if len(a) != len(b):
            fail(f"{len(a)} and {len(b)} steps logged")
        ma, mb = sum(a[-w:]) / w, sum(b[-w:]) / w
        if abs(ma - mb) > tol:
            fail(f"last-{w} mean loss {ma:.4f} vs {mb:.4f}: "
                 f"|diff| {abs(ma - mb):.4f} > {tol}")
        print(f"last-{w} mean loss {ma:.4f} vs {mb:.4f} "
              f"(|diff| {abs(ma - mb):.4f} <= {tol})")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
