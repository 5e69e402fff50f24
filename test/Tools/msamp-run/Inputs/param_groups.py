"""Param groups (msamp.weight_decay / msamp.lr_scale) on the shared MLP
example against an independent numpy f64 AdamW (torch.optim.AdamW's update).

  param_groups.py graph MLP OUT          MLP with two groups: weights decay
                                         0.1 at the base lr, biases no decay
                                         at half the base lr
  param_groups.py check LOG CKPT STEPS LOSS_TOL [PARAM_TOL]
                                         the logged losses (and, with
                                         PARAM_TOL, the checkpoint's params)
                                         against the reference
  param_groups.py check-tail LOG STEPS N TOL
                                         the mean of the last N logged losses
                                         within TOL (relative) of the
                                         reference's (FP8 levels: single
                                         steps are noisy)

Initial values and the batch: mlp_inputs.py (init, data).
"""

import json
import re
import sys

import numpy as np
from safetensors import safe_open

from mlp_inputs import INIT, X, Y

# The MLP's module optimizer: AdamW, lr 1e-2, betas (0.9, 0.999), eps 1e-8.
LR, B1, B2, EPS = 1e-2, 0.9, 0.999, 1e-8
GROUPS = {"fc1.weight": (0.1, 1.0), "fc2.weight": (0.1, 1.0),
          "fc1.bias": (0.0, 0.5), "fc2.bias": (0.0, 0.5)}   # (decay, lr scale)


def graph(src, out):
    text = open(src).read()
    for name, (decay, scale) in GROUPS.items():
        attrs = (f'msamp.name = "{name}", msamp.weight_decay = {decay!r} : f64, '
                 f'msamp.lr_scale = {scale!r} : f64')
        text, n = re.subn(rf'msamp.role = "param", msamp.name = "{re.escape(name)}"',
                          f'msamp.role = "param", {attrs}', text)
        assert n == 1, name
    open(out, "w").write(text)


def loss_and_grads(p):
    x, y = X.astype(np.float64), Y.astype(np.float64)
    z1 = x @ p["fc1.weight"].T + p["fc1.bias"]
    h1 = np.maximum(z1, 0)
    diff = h1 @ p["fc2.weight"].T + p["fc2.bias"] - y
    dout = 2 * diff / diff.size
    dz1 = (dout @ p["fc2.weight"]) * (z1 > 0)
    return float((diff ** 2).mean()), {
        "fc2.weight": dout.T @ h1, "fc2.bias": dout.sum(0),
        "fc1.weight": dz1.T @ x, "fc1.bias": dz1.sum(0)}


def reference(steps):
    p = {k: v.astype(np.float64) for k, v in INIT.items()}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(t) for k, t in p.items()}
    losses = []
    for t in range(1, steps + 1):
        loss, g = loss_and_grads(p)
        losses.append(loss)
        for k in p:
            decay, scale = GROUPS[k]
            lr = LR * scale
            p[k] = p[k] * (1 - lr * decay)
            m[k] = B1 * m[k] + (1 - B1) * g[k]
            v[k] = B2 * v[k] + (1 - B2) * g[k] ** 2
            mhat, vhat = m[k] / (1 - B1 ** t), v[k] / (1 - B2 ** t)
            p[k] = p[k] - lr * mhat / (np.sqrt(vhat) + EPS)
    return losses, p


def read_param(ckpt, name):
    with safe_open(ckpt, "np") as f:
        value = f.get_tensor(name).astype(np.float64)
        if name + ".scale" in f.keys():
            value = value / float(f.get_tensor(name + ".scale"))
    return value


def check(log, ckpt, steps, loss_tol, param_tol=None):
    with open(log) as f:
        got = [json.loads(line)["loss"] for line in f if line.strip()]
    want, params = reference(steps)
    worst = max(abs(g - w) / abs(w) for g, w in zip(got, want))
    print(f"losses: {len(got)} steps, worst relative difference {worst:.2e}")
    if len(got) != steps or not worst <= loss_tol:
        sys.exit(f"FAIL: losses {got} vs reference {want}")
    if param_tol is None:
        return
    for name, want_p in params.items():
        got_p = read_param(ckpt, name)
        rel = np.abs(got_p - want_p).max() / np.abs(want_p).max()
        print(f"{name}: relative difference {rel:.2e}")
        if not rel <= param_tol:
            sys.exit(f"FAIL: {name} = {got_p.tolist()}, reference {want_p.tolist()}")


def check_tail(log, steps, n, tol):
    with open(log) as f:
        got = [json.loads(line)["loss"] for line in f if line.strip()]
    want, _ = reference(steps)
    if len(got) != steps:
        sys.exit(f"FAIL: {len(got)} losses logged, {steps} expected")
    got_mean, want_mean = np.mean(got[-n:]), np.mean(want[-n:])
    rel = (got_mean - want_mean) / want_mean
    print(f"mean of the last {n} losses {got_mean:.6f}, reference "
          f"{want_mean:.6f}: {rel:+.2%}")
    if not abs(rel) <= tol:
        sys.exit(f"FAIL: more than {tol:.0%} off")


def main(argv):
    if argv[0] == "graph":
        graph(argv[1], argv[2])
    elif argv[0] == "check-tail":
        check_tail(argv[1], int(argv[2]), int(argv[3]), float(argv[4]))
    elif argv[0] == "check":
        check(argv[1], argv[2], int(argv[3]), float(argv[4]),
              float(argv[5]) if len(argv) > 5 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
