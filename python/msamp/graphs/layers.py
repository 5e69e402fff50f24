"""Forward and hand-written backward emission of the layers the models share.

Activations are 2-D ``[tokens, features]`` tensors. Each ``*_backward`` takes what
its forward saved and returns the input gradient plus parameter gradients, written
the way an autodiff export writes them: weight gradients as transposed-A GEMMs
(``dY^T X``), data gradients as plain GEMMs (``dY W``), bias gradients as
``linalg.reduce`` sums over tokens. The math mirrors reference.py line by line.
"""

import math

LN_EPS = 1e-5
GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715


def add(em, a, b, hint="add"):
    """Elementwise sum (residuals, gradient fan-in)."""
    return em.generic(a.shape, [a, b], lambda bb, x, y: bb.addf(x, y), hint=hint)


def mul(em, a, b, hint="mul"):
    """Elementwise product, kept apart from the sum that follows it.

    A fused multiply-accumulate generic with a reduction is a contraction to
    linalg (ContractionOpInterface, like linalg.dot); the compiler would have to
    tell it from a GEMM. Products-then-``linalg.reduce`` are what exporters
    write for ``(a * b).sum(dim)`` and leave GEMMs the only contractions.
    """
    return em.generic(a.shape, [a, b], lambda bb, x, y: bb.mulf(x, y), hint=hint)


def add_bias(em, y, bias, hint="biased"):
    return em.generic(y.shape, [y, (bias, (1,))], lambda bb, x, c: bb.addf(x, c),
                      hint=hint)


def linear(em, x, w, bias=None, hint="lin"):
    """``x @ w^T (+ bias)`` with PyTorch's [out, in] weight layout."""
    y = em.matmul(x, w, transpose_b=True, hint=hint + "_mm")
    return add_bias(em, y, bias, hint=hint) if bias is not None else y


def linear_backward(em, dy, x, w, has_bias, need_dx=True, hint="lin"):
    """Returns (dx, dw, db); dx is None when not needed (first layer)."""
    dw = em.matmul(dy, x, transpose_a=True, hint=hint + "_dw")
    db = em.reduce_sum(dy, [0], hint=hint + "_db") if has_bias else None
    dx = em.matmul(dy, w, hint=hint + "_dx") if need_dx else None
    return dx, dw, db


def relu(em, z, hint="relu"):
    return em.generic(z.shape, [z], lambda bb, v: bb.maximumf(v, 0.0), hint=hint)


def relu_backward(em, dy, h, hint="relu_d"):
    """``dy * (h > 0)`` on the ReLU output, as the shared example does."""
    def body(bb, g, v):
        return bb.select(bb.cmpf("ogt", v, 0.0), g, 0.0)
    return em.generic(dy.shape, [dy, h], body, hint=hint)


def layernorm(em, x, w, b, hint="ln"):
    """LayerNorm over the last dim. Returns (y, saved) with saved = (xhat, rstd)."""
    n, d = x.shape
    inv_d = 1.0 / d
    total = em.reduce_sum(x, [1], hint=hint + "_sum")
    mean = em.generic((n,), [total], lambda bb, s: bb.mulf(s, inv_d),
                      hint=hint + "_mean")

    def sq_dev(bb, v, m, acc):
        dev = bb.subf(v, m)
        return bb.addf(bb.mulf(dev, dev), acc)
    var_sum = em.generic((n, d), [x, (mean, (0,))], sq_dev, reduction_dims=(1,),
                         init=0.0, hint=hint + "_varsum")

    def rstd_body(bb, s):
        var = bb.mulf(s, inv_d)
        return bb.divf(1.0, bb.sqrt(bb.addf(var, LN_EPS)))
    rstd = em.generic((n,), [var_sum], rstd_body, hint=hint + "_rstd")
    xhat = em.generic((n, d), [x, (mean, (0,)), (rstd, (0,))],
                      lambda bb, v, m, r: bb.mulf(bb.subf(v, m), r),
                      hint=hint + "_xhat")
    y = em.generic((n, d), [xhat, (w, (1,)), (b, (1,))],
                   lambda bb, v, g, c: bb.addf(bb.mulf(v, g), c), hint=hint)
    return y, (xhat, rstd)


def layernorm_backward(em, dy, saved, w, need_dx=True, hint="ln_d"):
    """Returns (dx, dw, db); dx is None when not needed (graph inputs).

    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dy * w.
    """
    xhat, rstd = saved
    n, d = dy.shape
    inv_d = 1.0 / d
    dw = em.reduce_sum(mul(em, dy, xhat, hint=hint + "_dy_xhat"), [0], hint=hint + "_dw")
    db = em.reduce_sum(dy, [0], hint=hint + "_db")
    if not need_dx:
        return None, dw, db
    dxhat = em.generic((n, d), [dy, (w, (1,))], lambda bb, g, c: bb.mulf(g, c),
                       hint=hint + "_dxhat")
    s1 = em.reduce_sum(dxhat, [1], hint=hint + "_s1")
    s2 = em.reduce_sum(mul(em, dxhat, xhat, hint=hint + "_dxhat_xhat"), [1],
                       hint=hint + "_s2")

    def dx_body(bb, g, v, r, a, c):
        t = bb.subf(g, bb.mulf(a, inv_d))
        t = bb.subf(t, bb.mulf(v, bb.mulf(c, inv_d)))
        return bb.mulf(t, r)
    dx = em.generic((n, d), [dxhat, xhat, (rstd, (0,)), (s1, (0,)), (s2, (0,))],
                    dx_body, hint=hint + "_dx")
    return dx, dw, db


def gelu(em, x, hint="gelu"):
    """GELU, tanh approximation: 0.5 x (1 + tanh(c (x + a x^3)))."""
    def body(bb, v):
        v3 = bb.mulf(bb.mulf(v, v), v)
        u = bb.mulf(bb.addf(v, bb.mulf(v3, GELU_A)), GELU_C)
        t = bb.tanh(u)
        return bb.mulf(bb.mulf(v, 0.5), bb.addf(t, 1.0))
    return em.generic(x.shape, [x], body, hint=hint)


def gelu_backward(em, dy, x, hint="gelu_d"):
    """dy * (0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)), t recomputed from x."""
    def body(bb, g, v):
        v2 = bb.mulf(v, v)
        u = bb.mulf(bb.addf(v, bb.mulf(bb.mulf(v2, v), GELU_A)), GELU_C)
        t = bb.tanh(u)
        left = bb.mulf(bb.addf(t, 1.0), 0.5)
        sech2 = bb.subf(1.0, bb.mulf(t, t))
        du = bb.mulf(bb.addf(bb.mulf(v2, 3.0 * GELU_A), 1.0), GELU_C)
        right = bb.mulf(bb.mulf(bb.mulf(v, 0.5), sech2), du)
        return bb.mulf(g, bb.addf(left, right))
    return em.generic(dy.shape, [dy, x], body, hint=hint)
