"""Causal multi-head attention: forward and backward with ``linalg.batch_matmul``.

Heads are moved into the batch dimension ([B*S, H*hd] -> [B*H, S, hd]) with
expand_shape / linalg.transpose / collapse_shape, so every attention GEMM is one
batch_matmul: QK^T (maps (b,m,k),(b,n,k)), PV (plain), and in the backward
dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q.

The causal mask is applied inside the softmax generics from the loop indices
(key j <= query i): no -inf is ever materialized, so an FP8 compiler computing
amax over any tensor of the graph sees only finite values.
"""

import math

from . import layers
from .emitter import F32_LOWEST


def split_heads(em, x, batch, seq, heads, hint):
    """[B*S, H*hd] -> [B*H, S, hd]."""
    d = x.shape[1]
    hd = d // heads
    x4 = em.expand_shape(x, [[0, 1], [2, 3]], (batch, seq, heads, hd), hint=hint + "_4d")
    xt = em.transpose(x4, (0, 2, 1, 3), hint=hint + "_bhsd")
    return em.collapse_shape(xt, [[0, 1], [2], [3]], hint=hint + "_heads")


def merge_heads(em, x, batch, seq, heads, hint):
    """[B*H, S, hd] -> [B*S, H*hd]."""
    hd = x.shape[2]
    x4 = em.expand_shape(x, [[0, 1], [2], [3]], (batch, heads, seq, hd),
                         hint=hint + "_4d")
    xt = em.transpose(x4, (0, 2, 1, 3), hint=hint + "_bshd")
    return em.collapse_shape(xt, [[0, 1], [2, 3]], hint=hint + "_merged")


def _causal(bb):
    """i1: the key index (dim 2) is not after the query index (dim 1)."""
    return bb.cmpi("ule", bb.index(2), bb.index(1))


def attention(em, q, k, v, batch, seq, heads, hint="attn"):
    """softmax(mask(Q K^T / sqrt(hd))) V. Returns (out [B*S, D], saved)."""
    hd = q.shape[1] // heads
    scale = 1.0 / math.sqrt(hd)
    qh = split_heads(em, q, batch, seq, heads, hint + "_q")
    kh = split_heads(em, k, batch, seq, heads, hint + "_k")
    vh = split_heads(em, v, batch, seq, heads, hint + "_v")
    scores = em.batch_matmul(qh, kh, transpose_b=True, hint=hint + "_scores")
    bh = batch * heads
    dims = (bh, seq, seq)

    def max_body(bb, x, acc):
        return bb.select(_causal(bb), bb.maximumf(x, acc), acc)
    row_max = em.generic(dims, [scores], max_body, reduction_dims=(2,),
                         init=F32_LOWEST, hint=hint + "_max")

    def exp_body(bb, x, m):
        e = bb.exp(bb.mulf(bb.subf(x, m), scale))
        return bb.select(_causal(bb), e, 0.0)
    expd = em.generic(dims, [scores, (row_max, (0, 1))], exp_body, hint=hint + "_exp")
    denom = em.reduce_sum(expd, [2], hint=hint + "_denom")
    probs = em.generic(dims, [expd, (denom, (0, 1))], lambda bb, e, s: bb.divf(e, s),
                       hint=hint + "_probs")
    out = em.batch_matmul(probs, vh, hint=hint + "_pv")
    merged = merge_heads(em, out, batch, seq, heads, hint + "_o")
    return merged, (qh, kh, vh, probs)


def attention_backward(em, dout, saved, batch, seq, heads, hint="attn_d"):
    """Returns (dq, dk, dv), each [B*S, D]."""
    qh, kh, vh, probs = saved
    hd = qh.shape[2]
    scale = 1.0 / math.sqrt(hd)
    doh = split_heads(em, dout, batch, seq, heads, hint + "_do")
    dprobs = em.batch_matmul(doh, vh, transpose_b=True, hint=hint + "_dp")
    dvh = em.batch_matmul(probs, doh, transpose_a=True, hint=hint + "_dv")
    dims = probs.shape
    rowdot = em.reduce_sum(layers.mul(em, dprobs, probs, hint=hint + "_dp_p"), [2],
                           hint=hint + "_rowdot")
    dscores = em.generic(dims, [dprobs, probs, (rowdot, (0, 1))],
                         lambda bb, g, p, r: bb.mulf(bb.mulf(p, bb.subf(g, r)), scale),
                         hint=hint + "_ds")
    dqh = em.batch_matmul(dscores, kh, hint=hint + "_dq")
    dkh = em.batch_matmul(dscores, qh, transpose_a=True, hint=hint + "_dk")
    return (merge_heads(em, dqh, batch, seq, heads, hint + "_dq"),
            merge_heads(em, dkh, batch, seq, heads, hint + "_dk"),
            merge_heads(em, dvh, batch, seq, heads, hint + "_dv"))
