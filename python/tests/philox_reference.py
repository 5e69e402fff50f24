"""An independent NumPy Philox4x32-10 and the dropout masks the compiled
step must draw (the oracle of test_randomness.py and of the lit tests under
test/Tools/msamp-run/Randomness and DataParallel).

The step's keying is defined once, in include/MSAMP/Numerics/Philox.h:
key = (seed low 32, seed high 32), counter = (element index, op id, step
low 32, rank); the uniform number is the top 53 of output words 0 (high)
and 1, times 2^-53. This file re-derives it from the Random123 paper so
that a mistake in the header or the generated code cannot hide behind
itself, and checks itself against the paper's known answers first.

As a script (lit tests): ``philox_reference.py check CKPT --param w
--seed S --steps K --ranks N --keep P --lr LR``: after K SGD steps from
w = 0 on a graph whose gradient of ``w`` is its dropout mask / keep, the
checkpoint's ``w`` must equal, exactly, the sum over steps of ``- lr *
mean over ranks of mask(step, rank) / keep`` (in f32, step by step), and
with N > 1 the ranks' masks must differ. ``write-data`` writes the inputs
of test/Transforms/Inputs/dropout.mlir (x = 0, y = 1) and an init file
with w = 0.
"""

import argparse
import sys

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)

# Random123's kat_vectors, Philox4x32 with 10 rounds: counter, key, output.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2,
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def philox4x32_10(ctr, key):
    """ctr: four uint64 arrays holding 32-bit words; key: two ints."""
    c0, c1, c2, c3 = (np.asarray(c, np.uint64) & MASK32 for c in ctr)
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
        p0, p1 = M0 * c0, M1 * c2  # < 2^64: exact in uint64
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & MASK32,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & MASK32)
    return c0, c1, c2, c3


def check_kat():
    for ctr, key, out in KAT:
        got = philox4x32_10([np.array([c]) for c in ctr], key)
        assert [int(g[0]) for g in got] == list(out), (ctr, key, got)


def uniform(seed, step, rank, op, n):
    """The step's n uniform numbers in [0, 1) of op ``op`` at ``step``."""
    index = np.arange(n, dtype=np.uint64)
    full = lambda v: np.full(n, v & 0xFFFFFFFF, np.uint64)  # noqa: E731
    w0, w1, _, _ = philox4x32_10((index, full(op), full(step), full(rank)),
                                 (seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF))
    bits = (w0 << np.uint64(32)) | w1
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def keep_mask(seed, step, rank, op, shape, keep):
    n = int(np.prod(shape))
    return (uniform(seed, step, rank, op, n) < keep).reshape(shape)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["check", "write-data"])
    ap.add_argument("ckpt")
    ap.add_argument("init", nargs="?")
    ap.add_argument("--param", default="w")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--op", type=int, default=0)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--keep", type=float, default=0.75)
    ap.add_argument("--lr", type=float, default=1.0)
    a = ap.parse_args(argv)
    from safetensors.numpy import load_file, save_file
    if a.command == "write-data":
        save_file({"x": np.zeros((1, 4, 64), np.float32),
                   "y": np.ones((1, 4, 64), np.float32)}, a.ckpt)
        save_file({"w": np.zeros((4, 64), np.float32)}, a.init)
        return 0
    check_kat()
    w = load_file(a.ckpt)[a.param]
    expected = np.zeros(w.shape, np.float32)
    for step in range(a.steps):
        masks = [keep_mask(a.seed, step, r, a.op, w.shape, a.keep)
                 for r in range(a.ranks)]
        # The gradient all-reduce is a mean over ranks, in f32.
        grad = sum(m.astype(np.float32) / np.float32(a.keep) for m in masks)
        grad = grad / np.float32(a.ranks)
        expected = expected - np.float32(a.lr) * grad
    if not np.array_equal(w, expected):
        bad = int(np.sum(w != expected))
        print(f"FAIL: {bad} of {w.size} elements differ from the Philox masks")
        return 1
    if a.ranks > 1 and all(np.array_equal(masks[0], m) for m in masks[1:]):
        print("FAIL: the ranks drew the same mask")
        return 1
    kept = [float(m.mean()) for m in masks]
    print(f"OK: {a.param} matches the Philox masks of {a.steps} step(s) on "
          f"{a.ranks} rank(s), last step's "
          f"keep rates {', '.join(f'{k:.3f}' for k in kept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
