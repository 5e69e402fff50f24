"""Loss emission: forward value and the gradient of the loss w.r.t. its input.

Both losses are means (the contract's loss is the mean over the batch), so the
seed gradient already carries the 1/N.
"""

from .emitter import F32_LOWEST


def _scalar_scale(em, total, factor, hint):
    """0-d ``total * factor`` (the mean), as in the shared example."""
    return em.generic((), [total], lambda bb, s: bb.mulf(s, factor), hint=hint)


def mse(em, pred, target):
    """Mean over all elements of (pred - target)^2. Returns (loss, dpred)."""
    inv_n = 1.0 / (pred.shape[0] * pred.shape[1])
    diff = em.generic(pred.shape, [pred, target], lambda bb, p, t: bb.subf(p, t),
                      hint="diff")
    sq = em.generic(diff.shape, [diff], lambda bb, v, acc: bb.addf(bb.mulf(v, v), acc),
                    reduction_dims=(0, 1), init=0.0, hint="sqsum")
    loss = _scalar_scale(em, sq, inv_n, "loss")
    em.comment("---- backward ----")
    dpred = em.generic(diff.shape, [diff],
                       lambda bb, v: bb.mulf(bb.mulf(v, 2.0), inv_n), hint="dout")
    return loss, dpred


def cross_entropy(em, logits, targets):
    """Mean over tokens of logsumexp(l) - l[target]. Returns (loss, dlogits).

    ``targets`` is a [tokens] i64 tensor; the one-hot is a compare of the loop
    index with the target inside the generic, so no one-hot tensor exists.
    """
    n, v = logits.shape
    inv_n = 1.0 / n
    row_max = em.generic((n, v), [logits], lambda bb, x, acc: bb.maximumf(x, acc),
                         reduction_dims=(1,), init=F32_LOWEST, hint="ce_max")
    sum_exp = em.generic((n, v), [logits, (row_max, (0,))],
                         lambda bb, x, m, acc: bb.addf(bb.exp(bb.subf(x, m)), acc),
                         reduction_dims=(1,), init=0.0, hint="ce_sumexp")

    def picked_body(bb, x, t, acc):
        j = bb.index_cast(bb.index(1), "i64")
        return bb.addf(bb.select(bb.cmpi("eq", j, t), x, 0.0), acc)
    picked = em.generic((n, v), [logits, (targets, (0,))], picked_body,
                        reduction_dims=(1,), init=0.0, hint="ce_picked")

    def nll_body(bb, m, s, p, acc):
        lse = bb.addf(m, bb.log(s))
        return bb.addf(bb.subf(lse, p), acc)
    total = em.generic((n,), [row_max, sum_exp, picked], nll_body, reduction_dims=(0,),
                       init=0.0, hint="ce_total")
    loss = _scalar_scale(em, total, inv_n, "loss")
    em.comment("---- backward ----")

    def grad_body(bb, x, m, s, t):
        p = bb.divf(bb.exp(bb.subf(x, m)), s)
        j = bb.index_cast(bb.index(1), "i64")
        p = bb.subf(p, bb.select(bb.cmpi("eq", j, t), 1.0, 0.0))
        return bb.mulf(p, inv_n)
    dlogits = em.generic((n, v), [logits, (row_max, (0,)), (sum_exp, (0,)),
                                  (targets, (0,))], grad_body, hint="dlogits")
    return loss, dlogits
