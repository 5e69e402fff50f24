"""The ``transformer-block`` and ``transformer-lm`` models (pre-LN, causal).

Block: x -> LN1 -> q/k/v Linear -> causal attention -> out_proj -> +x
         -> LN2 -> fc1 -> GELU(tanh) -> fc2 -> +.
transformer-block: one block on a float input [B, S, dim], then a Linear head to
``vocab`` classes and token-mean cross-entropy against i64 targets [B, S].
transformer-lm: token embedding (gather of rows) + learned positions, ``layers``
blocks, final LayerNorm, head without bias (GPT style), cross-entropy. The head
is its own param unless ``tie_embeddings`` (GPT-2: the head is the token
embedding, read by the gather and the head GEMM; its gradient is the sum of
both uses').

Parameter names are PyTorch-style (``layers.0.attn.q_proj.weight``) and in
``named_parameters()`` order, which is also the order of the gradient results.
Activations are [B*S, dim] tensors; only attention reshapes them into heads.
"""

import math
from dataclasses import dataclass

from . import attention, layers, losses
from .emitter import F32, I64
from .spec import GraphBuilder


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes; the defaults are multiples of 16 (FP8 GEMM friendly)."""

    dim: int = 64
    heads: int = 4
    seq: int = 16
    batch: int = 2
    ffn: int = 256
    vocab: int = 64
    layers: int = 2
    tie_embeddings: bool = False

    @property
    def tokens(self):
        return self.batch * self.seq

    def validate(self):
        for field in ("dim", "heads", "seq", "batch", "ffn", "vocab", "layers"):
            if getattr(self, field) <= 0:
                raise ValueError(
                    f"--{field} must be positive, got {getattr(self, field)}")
        if self.dim % self.heads:
            raise ValueError(f"--dim {self.dim} is not divisible by --heads {self.heads}")


BLOCK_PARAMS = [
    # (suffix, kind): kind says the shape and init, see _declare_block.
    ("ln1.weight", "ln_w"), ("ln1.bias", "ln_b"),
    ("attn.q_proj.weight", "w_dd"), ("attn.q_proj.bias", "b_d"),
    ("attn.k_proj.weight", "w_dd"), ("attn.k_proj.bias", "b_d"),
    ("attn.v_proj.weight", "w_dd"), ("attn.v_proj.bias", "b_d"),
    ("attn.out_proj.weight", "w_dd"), ("attn.out_proj.bias", "b_d"),
    ("ln2.weight", "ln_w"), ("ln2.bias", "ln_b"),
    ("mlp.fc1.weight", "w_fd"), ("mlp.fc1.bias", "b_f"),
    ("mlp.fc2.weight", "w_df"), ("mlp.fc2.bias", "b_d"),
]


def block_param_shapes(cfg):
    """suffix -> (shape, init) for one block; reference.py uses the same table."""
    d, f = cfg.dim, cfg.ffn
    kinds = {
        "ln_w": ((d,), ("around_one", 0.1)), "ln_b": ((d,), ("normal", 0.1)),
        "w_dd": ((d, d), ("normal", 1 / math.sqrt(d))), "b_d": ((d,), ("normal", 0.1)),
        "w_fd": ((f, d), ("normal", 1 / math.sqrt(d))), "b_f": ((f,), ("normal", 0.1)),
        "w_df": ((d, f), ("normal", 1 / math.sqrt(f))),
    }
    return {suffix: kinds[kind] for suffix, kind in BLOCK_PARAMS}


def _declare_block(gb, prefix, cfg):
    shapes = block_param_shapes(cfg)
    return {suffix: gb.param(prefix + suffix, *shapes[suffix])
            for suffix, _ in BLOCK_PARAMS}


def block_forward(em, x, p, cfg, hint):
    """One pre-LN block on x [B*S, dim]. Returns (out, saved)."""
    b, s, h = cfg.batch, cfg.seq, cfg.heads
    em.comment(f"{hint}: attention")
    h1, ln1 = layers.layernorm(em, x, p["ln1.weight"], p["ln1.bias"], hint=hint + "_ln1")
    q = layers.linear(em, h1, p["attn.q_proj.weight"], p["attn.q_proj.bias"], hint + "_q")
    k = layers.linear(em, h1, p["attn.k_proj.weight"], p["attn.k_proj.bias"], hint + "_k")
    v = layers.linear(em, h1, p["attn.v_proj.weight"], p["attn.v_proj.bias"], hint + "_v")
    a, attn = attention.attention(em, q, k, v, b, s, h, hint=hint + "_attn")
    o = layers.linear(em, a, p["attn.out_proj.weight"], p["attn.out_proj.bias"],
                      hint + "_o")
    x1 = layers.add(em, x, o, hint=hint + "_res1")
    em.comment(f"{hint}: mlp")
    h2, ln2 = layers.layernorm(em, x1, p["ln2.weight"], p["ln2.bias"], hint=hint + "_ln2")
    f = layers.linear(em, h2, p["mlp.fc1.weight"], p["mlp.fc1.bias"], hint + "_fc1")
    g = layers.gelu(em, f, hint=hint + "_gelu")
    f2 = layers.linear(em, g, p["mlp.fc2.weight"], p["mlp.fc2.bias"], hint + "_fc2")
    out = layers.add(em, x1, f2, hint=hint + "_res2")
    return out, dict(ln1=ln1, h1=h1, attn=attn, a=a, ln2=ln2, h2=h2, f=f, g=g)


def block_backward(em, dout, saved, p, cfg, need_dx=True, hint="blk"):
    """Returns (dx or None, grads suffix -> Value)."""
    b, s, h = cfg.batch, cfg.seq, cfg.heads
    grads = {}

    def lin_back(dy, x, name, need=True):
        dx, dw, db = layers.linear_backward(em, dy, x, p[name + ".weight"], True,
                                            need_dx=need, hint=hint + "_" + name)
        grads[name + ".weight"], grads[name + ".bias"] = dw, db
        return dx

    em.comment(f"{hint}: mlp backward")
    dg = lin_back(dout, saved["g"], "mlp.fc2")
    df = layers.gelu_backward(em, dg, saved["f"], hint=hint + "_gelu_d")
    dh2 = lin_back(df, saved["h2"], "mlp.fc1")
    dx1_ln, grads["ln2.weight"], grads["ln2.bias"] = layers.layernorm_backward(
        em, dh2, saved["ln2"], p["ln2.weight"], hint=hint + "_ln2_d")
    dx1 = layers.add(em, dout, dx1_ln, hint=hint + "_dres1")
    em.comment(f"{hint}: attention backward")
    da = lin_back(dx1, saved["a"], "attn.out_proj")
    dq, dk, dv = attention.attention_backward(em, da, saved["attn"], b, s, h,
                                              hint=hint + "_attn_d")
    h1 = saved["h1"]
    dh1 = layers.add(em, lin_back(dq, h1, "attn.q_proj"), lin_back(dk, h1, "attn.k_proj"),
                     hint=hint + "_dh1_qk")
    dh1 = layers.add(em, dh1, lin_back(dv, h1, "attn.v_proj"), hint=hint + "_dh1")
    dx_ln, grads["ln1.weight"], grads["ln1.bias"] = layers.layernorm_backward(
        em, dh1, saved["ln1"], p["ln1.weight"], need_dx=need_dx, hint=hint + "_ln1_d")
    dx = layers.add(em, dx1, dx_ln, hint=hint + "_dx") if need_dx else None
    return dx, grads


def build_block(cfg, optimizer_attr):
    """transformer-block: float input [B, S, dim], one block, Linear head, CE."""
    cfg.validate()
    gb = GraphBuilder()
    em = gb.em
    p = _declare_block(gb, "", cfg)
    head_w = gb.param("head.weight", (cfg.vocab, cfg.dim),
                      ("normal", 1 / math.sqrt(cfg.dim)))
    head_b = gb.param("head.bias", (cfg.vocab,), ("normal", 0.1))
    x = gb.data("x", "input", (cfg.batch, cfg.seq, cfg.dim), F32, ("normal", 1.0))
    t = gb.data("targets", "target", (cfg.batch, cfg.seq), I64, ("randint", cfg.vocab))
    x2d = em.collapse_shape(x, [[0, 1], [2]], hint="x_tokens")
    t1d = em.collapse_shape(t, [[0, 1]], hint="targets_tokens")

    y, saved = block_forward(em, x2d, p, cfg, "blk")
    em.comment("head + cross-entropy")
    logits = layers.linear(em, y, head_w, head_b, hint="head")
    loss, dlogits = losses.cross_entropy(em, logits, t1d)
    dy, dhw, dhb = layers.linear_backward(em, dlogits, y, head_w, True, hint="head")
    _, bgrads = block_backward(em, dy, saved, p, cfg, need_dx=False, hint="blk")
    grads = {"head.weight": dhw, "head.bias": dhb, **bgrads}
    return gb.finish("transformer-block", cfg, loss, grads, optimizer_attr)


def _embed(em, ids, tok, pos, cfg):
    """h[b, s, :] = tok[ids[b, s], :] + pos[s, :], a gather inside a generic."""
    def body(bb, i, pv):
        row = bb.index_cast(i, "index")
        return bb.addf(bb.extract(tok, [row, bb.index(2)]), pv)
    h = em.generic((cfg.batch, cfg.seq, cfg.dim), [(ids, (0, 1)), (pos, (1, 2))], body,
                   hint="embed")
    return em.collapse_shape(h, [[0, 1], [2]], hint="embed_tokens")


def _embed_backward(em, dh, ids_flat, cfg):
    """(dtok, dpos): dtok[v] = sum of dh over tokens whose id is v (a scatter-add
    as a one-hot contraction with select, no multiply), dpos = sum over batch."""
    dh3 = em.expand_shape(dh, [[0, 1], [2]], (cfg.batch, cfg.seq, cfg.dim), hint="dembed")
    dpos = em.reduce_sum(dh3, [0], hint="pos_emb_d")

    def body(bb, i, g, acc):
        v = bb.index_cast(bb.index(0), "i64")
        return bb.addf(bb.select(bb.cmpi("eq", v, i), g, 0.0), acc)
    dtok = em.generic((cfg.vocab, cfg.dim, cfg.tokens), [(ids_flat, (2,)), (dh, (2, 1))],
                      body, reduction_dims=(2,), init=0.0, hint="tok_emb_d")
    return dtok, dpos


def build_lm(cfg, optimizer_attr):
    """transformer-lm: embeddings, ``cfg.layers`` blocks, final LN, head, CE."""
    cfg.validate()
    gb = GraphBuilder()
    em = gb.em
    tok = gb.param("tok_emb.weight", (cfg.vocab, cfg.dim), ("normal", 1.0))
    pos = gb.param("pos_emb.weight", (cfg.seq, cfg.dim), ("normal", 0.5))
    blocks = [_declare_block(gb, f"layers.{i}.", cfg) for i in range(cfg.layers)]
    lnf_w = gb.param("ln_f.weight", (cfg.dim,), ("around_one", 0.1))
    lnf_b = gb.param("ln_f.bias", (cfg.dim,), ("normal", 0.1))
    head_w = tok if cfg.tie_embeddings else gb.param(
        "head.weight", (cfg.vocab, cfg.dim), ("normal", 1 / math.sqrt(cfg.dim)))
    ids = gb.data("input_ids", "input", (cfg.batch, cfg.seq), I64, ("randint", cfg.vocab))
    t = gb.data("targets", "target", (cfg.batch, cfg.seq), I64, ("randint", cfg.vocab))
    ids_flat = em.collapse_shape(ids, [[0, 1]], hint="ids_tokens")
    t1d = em.collapse_shape(t, [[0, 1]], hint="targets_tokens")

    em.comment("embeddings")
    h = _embed(em, ids, tok, pos, cfg)
    saved = []
    for i, p in enumerate(blocks):
        h, s = block_forward(em, h, p, cfg, f"l{i}")
        saved.append(s)
    em.comment("final LayerNorm + head + cross-entropy")
    hf, lnf = layers.layernorm(em, h, lnf_w, lnf_b, hint="ln_f")
    logits = layers.linear(em, hf, head_w, None, hint="head")
    loss, dlogits = losses.cross_entropy(em, logits, t1d)

    grads = {}
    dhf, dhead, _ = layers.linear_backward(em, dlogits, hf, head_w, False, hint="head")
    dh, grads["ln_f.weight"], grads["ln_f.bias"] = layers.layernorm_backward(
        em, dhf, lnf, lnf_w, hint="ln_f_d")
    for i in reversed(range(cfg.layers)):
        dh, bgrads = block_backward(em, dh, saved[i], blocks[i], cfg, hint=f"l{i}")
        grads.update({f"layers.{i}.{k}": v for k, v in bgrads.items()})
    em.comment("embeddings backward")
    dtok, grads["pos_emb.weight"] = _embed_backward(em, dh, ids_flat, cfg)
    if cfg.tie_embeddings:
        grads["tok_emb.weight"] = layers.add(em, dtok, dhead, hint="dtied")
    else:
        grads["tok_emb.weight"], grads["head.weight"] = dtok, dhead
    return gb.finish("transformer-lm", cfg, loss, grads, optimizer_attr)
