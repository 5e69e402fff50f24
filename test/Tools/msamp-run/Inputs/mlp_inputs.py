"""Writes the inputs of the reference MLP example (docs/Inputs.md 3) as
safetensors files with the reference `safetensors` package, so that msamp's
reader is tested against another implementation.

  mlp_inputs.py init OUT            f32 initial values of the four params
  mlp_inputs.py data OUT [VARIANT]  x and y with a leading batch dimension K=1
      VARIANT: ok (default), two (K=2: the batch and its negation),
               missing-y, no-batch-dim, f64-x, k-mismatch
"""

import sys

import numpy as np
from safetensors.numpy import save_file

F32 = np.float32

INIT = {
    "fc1.weight": np.array([[0.1, -0.2, 0.3], [0.0, 0.4, -0.1],
                            [-0.3, 0.2, 0.1], [0.5, -0.4, 0.2],
                            [0.2, 0.1, -0.5]], F32),
    "fc1.bias": np.array([0.01, -0.02, 0.03, 0.0, 0.05], F32),
    "fc2.weight": np.array([[0.3, -0.1, 0.2, 0.4, -0.2],
                            [-0.5, 0.2, 0.1, -0.3, 0.6]], F32),
    "fc2.bias": np.array([0.1, -0.1], F32),
}

X = np.array([[1, 2, 3], [0.5, -1, 2], [-1, 0, 1], [2, 1, -1]], F32)
Y = np.array([[1, 0], [0, 1], [0.5, 0.5], [-1, 2]], F32)


def data(variant):
    x, y = X[None], Y[None]
    if variant == "ok":
        return {"x": x, "y": y}
    if variant == "two":
        return {"x": np.concatenate([x, -x]), "y": np.concatenate([y, -y])}
    if variant == "missing-y":
        return {"x": x}
    if variant == "no-batch-dim":
        return {"x": X, "y": y}
    if variant == "f64-x":
        return {"x": x.astype(np.float64), "y": y}
    if variant == "k-mismatch":
        return {"x": np.concatenate([x, x]), "y": y}
    raise SystemExit(f"unknown variant {variant}")


def main(argv):
    if len(argv) >= 2 and argv[0] == "init":
        save_file(INIT, argv[1])
    elif len(argv) >= 2 and argv[0] == "data":
        save_file(data(argv[2] if len(argv) > 2 else "ok"), argv[1])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
