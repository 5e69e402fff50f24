"""Checks on msamp-run's outputs, read with the reference `safetensors`
package and plain json (so msamp's writer is tested against another reader).

  check.py losses LOG.jsonl V1 V2 ... [--tol T]   the logged losses, in order
  check.py decreasing LOG.jsonl                   last loss < first / 2
  check.py track LOG.jsonl REF.jsonl --rel R      every loss within R of REF
  check.py tensor CKPT NAME JSON [--tol T]        a tensor's value (f32 after
                                                  dividing by NAME.scale)
  check.py close A B NAME [--tol T]               a tensor of two checkpoints
  check.py metadata CKPT KEY=VALUE ...            __metadata__ entries
  check.py same-state A B                         identical tensors + metadata
  check.py weights W CKPT NAME ...                --export-weights' file W
                                                  holds exactly NAME ..., each
                                                  f32 and equal to CKPT's
                                                  stored value times the f32
                                                  inverse of its scale
  check.py finite CKPT                            no NaN or Inf in any tensor
"""

import json
import sys

import numpy as np
from safetensors import safe_open

# safetensors' numpy backend looks FP8 dtypes up as numpy attributes, which
# ml_dtypes provides; without it, F8 tensors cannot be read here.
try:
    import ml_dtypes

    np.float8_e4m3fn = ml_dtypes.float8_e4m3fn
    np.float8_e5m2 = ml_dtypes.float8_e5m2
except ImportError:
    pass


def fail(message):
    print(f"check.py: FAIL: {message}")
    sys.exit(1)


def option(args, name, default):
    if name in args:
        i = args.index(name)
        value = float(args[i + 1])
        del args[i:i + 2]
        return value
    return default


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_tensor(path, name):
    with safe_open(path, "np") as f:
        value = f.get_tensor(name).astype(np.float64)
        if name + ".scale" in f.keys():
            value = value / float(f.get_tensor(name + ".scale"))
        return value


def main(argv):
    cmd, args = argv[0], argv[1:]
    if cmd == "losses":
        tol = option(args, "--tol", 1e-5)
        log, expected = read_log(args[0]), [float(v) for v in args[1:]]
        got = [entry["loss"] for entry in log]
        if len(got) != len(expected):
            fail(f"{len(got)} losses logged, expected {len(expected)}")
        for i, (g, e) in enumerate(zip(got, expected)):
            if g is None or abs(g - e) > tol:
                fail(f"step {i + 1}: loss {g}, expected {e} +- {tol}")
        print("losses ok:", " ".join(f"{g:.6f}" for g in got))
    elif cmd == "decreasing":
        losses = [entry["loss"] for entry in read_log(args[0])]
        if not losses[-1] < losses[0] / 2:
            fail(f"loss went from {losses[0]} to {losses[-1]}")
        print(f"decreasing ok: {losses[0]:.6f} -> {losses[-1]:.6f}")
    elif cmd == "track":
        rel = option(args, "--rel", 0.05)
        got = [e["loss"] for e in read_log(args[0])]
        ref = [e["loss"] for e in read_log(args[1])]
        if len(got) != len(ref):
            fail(f"{len(got)} losses vs {len(ref)} in the reference")
        worst = max(abs(g - r) / abs(r) for g, r in zip(got, ref))
        if worst > rel:
            fail(f"largest relative deviation {worst:.4f} > {rel}")
        print(f"track ok: largest relative deviation {worst:.4f}")
    elif cmd == "tensor":
        tol = option(args, "--tol", 1e-5)
        path, name, expected = args[0], args[1], np.array(json.loads(args[2]))
        value = read_tensor(path, name)
        if value.shape != expected.shape:
            fail(f"{name}: shape {value.shape}, expected {expected.shape}")
        err = float(np.max(np.abs(value - expected)))
        if err > tol:
            fail(f"{name}: max deviation {err} > {tol}\n{value}")
        print(f"tensor ok: {name} max deviation {err:.2e}")
    elif cmd == "close":
        tol = option(args, "--tol", 1e-5)
        a, b = read_tensor(args[0], args[2]), read_tensor(args[1], args[2])
        err = float(np.max(np.abs(a - b)))
        if err > tol:
            fail(f"{args[2]}: max deviation {err} > {tol}")
        print(f"close ok: {args[2]} max deviation {err:.2e}")
    elif cmd == "metadata":
        with safe_open(args[0], "np") as f:
            meta = f.metadata()
        for item in args[1:]:
            key, value = item.split("=", 1)
            if meta.get(key) != value:
                fail(f"metadata {key} = {meta.get(key)!r}, expected {value!r}")
        print("metadata ok:", ", ".join(sorted(meta)))
    elif cmd == "same-state":
        with safe_open(args[0], "np") as a, safe_open(args[1], "np") as b:
            if sorted(a.keys()) != sorted(b.keys()):
                fail("different tensor names")
            if a.metadata() != b.metadata():
                fail(f"metadata {a.metadata()} != {b.metadata()}")
            for key in a.keys():
                if a.get_tensor(key).tobytes() != b.get_tensor(key).tobytes():
                    fail(f"tensor {key} differs")
        print("same-state ok")
    elif cmd == "weights":
        with safe_open(args[0], "np") as w, safe_open(args[1], "np") as ck:
            if sorted(w.keys()) != sorted(args[2:]):
                fail(f"weights {sorted(w.keys())}, expected {sorted(args[2:])}")
            for key in w.keys():
                got = w.get_tensor(key)
                stored = ck.get_tensor(key).astype(np.float32)
                inverse = np.float32(1)
                if key + ".scale" in ck.keys():
                    inverse = np.float32(1) / ck.get_tensor(key + ".scale").astype(np.float32)
                if got.dtype != np.float32 or not np.array_equal(got, stored * inverse):
                    fail(f"weight {key} is not the checkpoint's value")
        print("weights ok:", " ".join(sorted(args[2:])))
    elif cmd == "finite":
        with safe_open(args[0], "np") as f:
            for key in f.keys():
                value = f.get_tensor(key)
                if value.dtype.kind == "f" or "float8" in str(value.dtype):
                    if not np.all(np.isfinite(value.astype(np.float32))):
                        fail(f"tensor {key} holds a NaN or an infinity")
        print("finite ok")
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
