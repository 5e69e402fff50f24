"""Inputs and the numpy reference of Inputs/fused-projection.mlir.

  fused_projection.py init OUT             f32 initial values of w and b
  fused_projection.py data OUT             x and y, one batch (K = 1)
  fused_projection.py check LOG STEPS TOL  the logged losses of STEPS SGD
                                           steps (lr 0.1) against numpy f64

The reference computes the split, its gradient and SGD with plain numpy
(float64), independently of the graph.
"""

import json
import sys

import numpy as np
from safetensors.numpy import save_file

RNG = np.random.default_rng(14)
W = RNG.normal(0, 0.5, (6, 3)).astype(np.float32)
B = RNG.normal(0, 0.1, 6).astype(np.float32)
X = RNG.normal(0, 1, (4, 3)).astype(np.float32)
Y = RNG.normal(0, 1, (4, 1)).astype(np.float32)
LR = 0.1


def reference_losses(steps):
    w, b = W.astype(np.float64), B.astype(np.float64)
    x, y = X.astype(np.float64), Y.astype(np.float64)
    losses = []
    for _ in range(steps):
        z = x @ w.T + b
        q, k = z[:, :3], z[:, 3:]
        d = (q * k).sum(axis=1, keepdims=True) - y
        losses.append(float((d ** 2).mean()))
        ds = 2 * d / d.shape[0]
        dz = np.concatenate([ds * k, ds * q], axis=1)
        w, b = w - LR * dz.T @ x, b - LR * dz.sum(axis=0)
    return losses


def main(argv):
    if argv[0] == "init":
        save_file({"c_attn.weight": W, "c_attn.bias": B}, argv[1])
    elif argv[0] == "data":
        save_file({"x": X[None], "y": Y[None]}, argv[1])
    elif argv[0] == "check":
        with open(argv[1]) as f:
            got = [json.loads(line)["loss"] for line in f if line.strip()]
        want = reference_losses(int(argv[2]))
        tol = float(argv[3])
        if len(got) != len(want):
            sys.exit(f"FAIL: {len(got)} losses logged, {len(want)} expected")
        for step, (g, r) in enumerate(zip(got, want), 1):
            print(f"step {step}: loss {g:.7f} reference {r:.7f}")
            if abs(g - r) > tol * abs(r):
                sys.exit(f"FAIL: step {step} differs by more than {tol} relative")
        if not want[-1] < want[0]:
            sys.exit("FAIL: the reference does not train")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
