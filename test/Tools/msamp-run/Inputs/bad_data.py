"""Writes data files with bad values for the hostile-input tests, with the
reference `safetensors` package.

  bad_data.py lm-ids OUT VOCAB VALUE    input_ids/targets [K=2, 2, 4] (i64)
      in [0, VOCAB), with input_ids[1, 1, 3] = VALUE (batch 2, step 2)
  bad_data.py lm-target OUT VOCAB VALUE the same with targets[0, 0, 1] = VALUE
  bad_data.py shifted-ids OUT VALUE     input_ids [K=2, 2, 4] (i64) in [0, 7)
      for Inputs/computed-index.mlir, with input_ids[1, 1, 2] = VALUE
  bad_data.py mlp-x OUT VALUE           the shared MLP example's x and y,
      K=2 (the batch twice) with x[1, 2, 0] = VALUE (inf, -inf, nan)
"""

import sys

import numpy as np
from safetensors.numpy import save_file


def lm(out, vocab, which, value):
    rng = np.random.default_rng(0)
    tensors = {name: rng.integers(0, vocab, (2, 2, 4)).astype(np.int64)
               for name in ("input_ids", "targets")}
    if which == "ids":
        tensors["input_ids"][1, 1, 3] = value
    else:
        tensors["targets"][0, 0, 1] = value
    save_file(tensors, out)


def shifted_ids(out, value):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 7, (2, 2, 4)).astype(np.int64)
    ids[1, 1, 2] = value
    save_file({"input_ids": ids}, out)


def mlp(out, value):
    x = np.array([[1, 2, 3], [0.5, -1, 2], [-1, 0, 1], [2, 1, -1]], np.float32)
    y = np.array([[1, 0], [0, 1], [0.5, 0.5], [-1, 2]], np.float32)
    xs = np.stack([x, x])
    xs[1, 2, 0] = value
    save_file({"x": xs, "y": np.stack([y, y])}, out)


def main(argv):
    cmd, out = argv[0], argv[1]
    if cmd in ("lm-ids", "lm-target"):
        lm(out, int(argv[2]), cmd[3:], int(argv[3]))
    elif cmd == "shifted-ids":
        shifted_ids(out, int(argv[2]))
    elif cmd == "mlp-x":
        mlp(out, float(argv[2]))
    else:
        sys.exit(f"bad_data.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv[1:])
