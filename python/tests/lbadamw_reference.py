"""MS-AMP's O2 optimizer (LBAdamW, docs/Numerics.md 5.2) written independently in
PyTorch + ml_dtypes, as a reference for msamp's O2 Adam states: every
param's first moment stored as E4M3 and its second as FP16, each with a
per-tensor power-of-two scale (target max 448 and 65504) recomputed every
step from the new moment's amax; the update itself uses the unrounded f32
moments, and torch.optim.AdamW's formula (decoupled weight decay first,
eps after the bias-corrected sqrt)."""

import math

import ml_dtypes
import numpy as np
import torch


def pow2_scale(amax, fp_max):
    """MS-AMP's scale, margin 0: 2^floor(log2(fp_max / amax)); 1 for a zero
    or non-finite amax (the initial scale)."""
    if not (amax > 0) or not math.isfinite(amax):
        return 1.0
    return 2.0 ** math.floor(math.log2(fp_max / amax))


def stored(x, dtype, fp_max):
    """``x`` as it reads back after a scaled store in ``dtype``."""
    scale = pow2_scale(float(x.abs().max()), fp_max)
    low = (x.numpy() * np.float32(scale)).astype(dtype)
    return torch.from_numpy(low.astype(np.float32)) / scale


def train(optimizer, model, loss_fn, data, steps):
    """Trains ``model`` over ``data`` (dicts, input then target) cycled for
    ``steps`` with the hyper-parameters of ``optimizer``'s groups (an
    AdamW, not stepped) and LBAdamW's states: the losses."""
    inp, tgt = list(data[0])
    state = {}
    losses = []
    for i in range(steps):
        batch = data[i % len(data)]
        for p in model.parameters():
            p.grad = None
        loss = loss_fn(model(batch[inp]), batch[tgt])
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            for group in optimizer.param_groups:
                lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
                b1, b2 = group["betas"]
                for p in group["params"]:
                    s = state.setdefault(p, {"t": 0, "m": torch.zeros_like(p),
                                             "v": torch.zeros_like(p)})
                    s["t"] += 1
                    g = p.grad
                    p.mul_(1 - lr * wd)
                    m = b1 * s["m"] + (1 - b1) * g
                    v = b2 * s["v"] + (1 - b2) * g * g
                    bc1, bc2 = 1 - b1 ** s["t"], 1 - b2 ** s["t"]
                    p.sub_(lr / bc1 * m / (v.sqrt() / math.sqrt(bc2) + eps))
                    s["m"] = stored(m, ml_dtypes.float8_e4m3fn, 448.0)
                    s["v"] = stored(v, np.float16, 65504.0)
    return losses
