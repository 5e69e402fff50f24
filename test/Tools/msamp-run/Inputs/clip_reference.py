"""Gradient clipping and non-finite gradients on the shared MLP example
(mlp_inputs.py's values, test/Transforms/Inputs/mlp.mlir's graph).

  clip_reference.py check LOG.jsonl CKPT --max-norm X --steps N [--tol T]
                    [--adam-mode M] [--eps E] [--weight-decay W]
      runs N steps of the f64 numpy reference: the MLP's gradients, PyTorch's
      clip_grad_norm_(max_norm=X) (X <= 0: no clipping) and torch.optim.AdamW
      (lr 1e-2, betas (0.9, 0.999), eps 1e-8, weight_decay 1e-2: the
      graph's msamp.optimizer), and compares every logged loss and
      "grad_norm" (the norm before clipping) and every param of the
      checkpoint with it, to T (default 1e-5). --adam-mode 1 replaces
      PyTorch's AdamW by Hugging Face's (ONNX Runtime AdamWOptimizer mode 1):
      step size lr*sqrt(bc2)/bc1, eps added to the uncorrected sqrt(v), the
      decay p -= lr*wd*p after the update; --eps and --weight-decay override
      the optimizer's eps and weight decay
  clip_reference.py poison-init OUT
      mlp_inputs.py's init with fc1.weight[:, 2] = 0: the forward pass
      ignores input column 2
  clip_reference.py poison-data OUT
      K = 2 batches: mlp_inputs.py's batch with input column 2 zeroed (so
      the gradient of fc1.weight[:, 2] is 0 and AdamW keeps those weights at
      exactly 0), then one whose input column 2 is 3e38 and whose targets
      are 100 lower. With poison-init its loss is finite (about 1e4), but the
      weight gradient of fc1 multiplies column 2 by an output gradient of
      about 10: it overflows to Inf, in the backward pass only. In FP8 (O1)
      that Inf saturates to 448 at the cast, so only its recorded amax shows
      it.
"""

import json
import os
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

# The shared example's values; no __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_inputs import INIT, X, Y  # noqa: E402

LR, BETA1, BETA2, EPS, WD = 1e-2, 0.9, 0.999, 1e-8, 1e-2
NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


def fail(message):
    print(f"clip_reference.py: FAIL: {message}")
    sys.exit(1)


def loss_and_grads(p, x, y):
    """mlp.mlir in f64: 3 -> 5 -> 2, ReLU, loss = mean((out - y)^2)."""
    h1 = np.maximum(x @ p["fc1.weight"].T + p["fc1.bias"], 0.0)
    diff = h1 @ p["fc2.weight"].T + p["fc2.bias"] - y
    loss = float(np.sum(diff * diff) / diff.size)
    dout = 2.0 * diff / diff.size
    dz1 = (dout @ p["fc2.weight"]) * (h1 > 0)
    grads = {"fc1.weight": dz1.T @ x, "fc1.bias": dz1.sum(0),
             "fc2.weight": dout.T @ h1, "fc2.bias": dout.sum(0)}
    return loss, grads


def reference(max_norm, steps, adam_mode=0, eps=EPS, wd=WD):
    """Losses, gradient norms (before clipping) and params after `steps`."""
    p = {k: INIT[k].astype(np.float64) for k in NAMES}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(x) for k, x in p.items()}
    losses, norms = [], []
    x, y = X.astype(np.float64), Y.astype(np.float64)
    for t in range(1, steps + 1):
        loss, g = loss_and_grads(p, x, y)
        total = float(np.sqrt(sum(np.sum(gi * gi) for gi in g.values())))
        losses.append(loss)
        norms.append(total)
        if max_norm > 0:  # torch.nn.utils.clip_grad_norm_
            coef = min(1.0, max_norm / (total + 1e-6))
            g = {k: gi * coef for k, gi in g.items()}
        bc1, bc2 = 1 - BETA1 ** t, 1 - BETA2 ** t
        for k in NAMES:
            m[k] = BETA1 * m[k] + (1 - BETA1) * g[k]
            v[k] = BETA2 * v[k] + (1 - BETA2) * g[k] * g[k]
            if adam_mode == 0:  # torch.optim.AdamW
                p[k] = p[k] * (1 - LR * wd)
                p[k] = p[k] - LR / bc1 * m[k] / (np.sqrt(v[k]) / np.sqrt(bc2) + eps)
            else:  # transformers.AdamW / ORT AdamWOptimizer adam_mode 1
                step_size = LR * np.sqrt(bc2) / bc1
                p[k] = p[k] - step_size * m[k] / (np.sqrt(v[k]) + eps)
                p[k] = p[k] - LR * wd * p[k]
    return losses, norms, p


def check(argv):
    log_path, ckpt = argv[0], argv[1]
    opts = dict(zip(argv[2::2], argv[3::2]))
    max_norm = float(opts["--max-norm"])
    steps = int(opts["--steps"])
    tol = float(opts.get("--tol", 1e-5))
    losses, norms, params = reference(
        max_norm, steps, int(opts.get("--adam-mode", 0)),
        float(opts.get("--eps", EPS)), float(opts.get("--weight-decay", WD)))
    with open(log_path) as f:
        log = [json.loads(line) for line in f if line.strip()]
    if len(log) != steps:
        fail(f"{len(log)} steps logged, expected {steps}")
    for i, entry in enumerate(log):
        for key, want in (("loss", losses[i]), ("grad_norm", norms[i])):
            got = entry.get(key)
            if got is None or abs(got - want) > tol:
                fail(f"step {i + 1}: {key} {got}, reference {want:.9g} +- {tol}")
    worst = 0.0
    with safe_open(ckpt, "np") as f:
        for k in NAMES:
            err = float(np.max(np.abs(f.get_tensor(k).astype(np.float64) - params[k])))
            if err > tol:
                fail(f"{k}: max deviation {err:.3g} > {tol}")
            worst = max(worst, err)
    print(f"reference ok: {steps} steps, max-norm {max_norm:g}, "
          f"losses {' '.join(f'{l:.6f}' for l in losses)}, "
          f"grad norms {' '.join(f'{n:.6f}' for n in norms)}, "
          f"params within {worst:.1e}")


def main(argv):
    if len(argv) >= 3 and argv[0] == "check":
        check(argv[1:])
    elif len(argv) == 2 and argv[0] == "poison-init":
        init = dict(INIT)
        w1 = init["fc1.weight"].copy()
        w1[:, 2] = 0.0
        init["fc1.weight"] = w1
        save_file(init, argv[1])
    elif len(argv) == 2 and argv[0] == "poison-data":
        clean, poisoned, y = X.copy(), X.copy(), Y - 100.0
        clean[:, 2] = 0.0
        poisoned[:, 2] = 3e38
        save_file({"x": np.stack([clean, poisoned]), "y": np.stack([Y, y])},
                  argv[1])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
