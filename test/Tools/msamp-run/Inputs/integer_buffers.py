"""Inputs and numpy reference of Inputs/integer-buffers.mlir.

  integer_buffers.py init OUT                 pos.weight (f32), position_ids
                                              (I64), mask (BOOL),
                                              norm.running_mean (f32)
  integer_buffers.py data OUT                 x, y (K = 1)
  integer_buffers.py check LOG CKPT STEPS TOL losses and the checkpoint's
                                              buffers and param against numpy
                                              f64 (SGD, lr 0.25)
"""

import json
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

RNG = np.random.default_rng(3)
POS = RNG.normal(0, 1, (6, 4)).astype(np.float32)
IDS = np.array([4, 1, 5], np.int64)
MASK = np.array([True, True, False])
RUNNING = np.array([0.5, -0.5, 1.0, 0.0], np.float32)
X = RNG.normal(0, 1, (3, 4)).astype(np.float32)
Y = RNG.normal(0, 1, (3, 4)).astype(np.float32)
LR = 0.25


def reference(steps):
    pos, rm = POS.astype(np.float64), RUNNING.astype(np.float64)
    x, y = X.astype(np.float64), Y.astype(np.float64)
    losses = []
    for _ in range(steps):
        h = np.where(MASK[:, None], pos[IDS], 0.0) + x
        diff = h - y
        losses.append(float((diff ** 2).mean()))
        grad = np.zeros_like(pos)
        for s in range(3):
            if MASK[s]:
                grad[IDS[s]] += 2 * diff[s] / diff.size
        rm = 0.9 * rm + 0.1 * h.mean(axis=0)
        pos = pos - LR * grad
    return losses, pos, rm


def main(argv):
    if argv[0] == "init":
        save_file({"pos.weight": POS, "position_ids": IDS, "mask": MASK,
                   "norm.running_mean": RUNNING}, argv[1])
    elif argv[0] == "data":
        save_file({"x": X[None], "y": Y[None]}, argv[1])
    elif argv[0] == "check":
        log, ckpt, steps, tol = argv[1], argv[2], int(argv[3]), float(argv[4])
        with open(log) as f:
            got = [json.loads(line)["loss"] for line in f if line.strip()]
        losses, pos, rm = reference(steps)
        for step, (g, r) in enumerate(zip(got, losses), 1):
            print(f"step {step}: loss {g:.7f} reference {r:.7f}")
        if len(got) != steps or not np.allclose(got, losses, rtol=tol, atol=0):
            sys.exit("FAIL: losses")
        with safe_open(ckpt, "np") as f:
            ids, mask = f.get_tensor("position_ids"), f.get_tensor("mask")
            got_rm = f.get_tensor("norm.running_mean")
            got_pos = f.get_tensor("pos.weight").astype(np.float64)
            if "pos.weight.scale" in f.keys():
                got_pos = got_pos / float(f.get_tensor("pos.weight.scale"))
        print(f"position_ids {ids.dtype} {ids.tolist()}, mask {mask.dtype} "
              f"{mask.tolist()}, running_mean {got_rm.tolist()}")
        if ids.dtype != np.int64 or ids.tolist() != IDS.tolist():
            sys.exit("FAIL: position_ids")
        if mask.dtype != np.bool_ or mask.tolist() != MASK.tolist():
            sys.exit("FAIL: mask")
        if not np.allclose(got_rm, rm, rtol=tol, atol=1e-7):
            sys.exit(f"FAIL: running_mean, reference {rm.tolist()}")
        if not np.allclose(got_pos, pos, rtol=tol, atol=1e-6):
            sys.exit(f"FAIL: pos.weight {got_pos.tolist()}, reference {pos.tolist()}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
