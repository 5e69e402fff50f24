"""numpy f64 reference for every model: forward loss and analytic gradients.

Why: it is the oracle for the generated MLIR (run with run_mlir.py) and is itself
checked against central finite differences (``finite_difference_check``), so a
wrong backward formula cannot be copied unnoticed into both. It mirrors the
emitted math (same LayerNorm eps, GELU tanh constants, causal mask, means) but
is written independently with plain numpy (no shared code with the emitter).
"""

import math

import numpy as np

from .layers import GELU_A, GELU_C, LN_EPS

# ------------------------------------------------------------------ layers ----


def linear(x, w, b=None):
    y = x @ w.T
    return y + b if b is not None else y


def linear_backward(dy, x, w):
    """(dx, dw, db)."""
    return dy @ w, dy.T @ x, dy.sum(axis=0)


def layernorm(x, w, b):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + LN_EPS)
    xhat = (x - mean) * rstd
    return xhat * w + b, (xhat, rstd)


def layernorm_backward(dy, saved, w):
    xhat, rstd = saved
    dxhat = dy * w
    dx = rstd * (dxhat - dxhat.mean(axis=1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + GELU_A * x ** 3)))


def gelu_backward(dy, x):
    t = np.tanh(GELU_C * (x + GELU_A * x ** 3))
    du = GELU_C * (1 + 3 * GELU_A * x * x)
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du)


def _heads(x, b, s, h):
    return x.reshape(b, s, h, -1).transpose(0, 2, 1, 3)        # [B, H, S, hd]


def _merge(x):
    b, h, s, hd = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b * s, h * hd)


def attention(q, k, v, b, s, h):
    qh, kh, vh = _heads(q, b, s, h), _heads(k, b, s, h), _heads(v, b, s, h)
    scale = 1.0 / math.sqrt(qh.shape[-1])
    causal = np.tril(np.ones((s, s), dtype=bool))
    scores = np.where(causal, qh @ kh.transpose(0, 1, 3, 2) * scale, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return _merge(p @ vh), (qh, kh, vh, p, scale)


def attention_backward(dout, saved, b, s, h):
    qh, kh, vh, p, scale = saved
    do = _heads(dout, b, s, h)
    dv = p.transpose(0, 1, 3, 2) @ do
    dp = do @ vh.transpose(0, 1, 3, 2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * scale
    return _merge(ds @ kh), _merge(ds.transpose(0, 1, 3, 2) @ qh), _merge(dv)


def mse(pred, target):
    diff = pred - target
    return (diff ** 2).mean(), 2.0 * diff / diff.size


def cross_entropy(logits, targets):
    n = logits.shape[0]
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    lse = m[:, 0] + np.log(e.sum(axis=1))
    loss = (lse - logits[np.arange(n), targets]).mean()
    d = e / e.sum(axis=1, keepdims=True)
    d[np.arange(n), targets] -= 1.0
    return loss, d / n


# ------------------------------------------------------------------ models ----


def mlp(cfg, v):
    n_layers = len(cfg.sizes) - 1
    acts, h = [v["x"]], v["x"]
    for i in range(n_layers):
        h = linear(h, v[f"fc{i + 1}.weight"], v[f"fc{i + 1}.bias"])
        if i < n_layers - 1:
            h = np.maximum(h, 0.0)
            acts.append(h)
    loss, d = mse(h, v["y"])
    grads = {}
    for i in reversed(range(n_layers)):
        dx, grads[f"fc{i + 1}.weight"], grads[f"fc{i + 1}.bias"] = linear_backward(
            d, acts[i], v[f"fc{i + 1}.weight"])
        d = dx * (acts[i] > 0)
    return loss, grads


def block(cfg, p, x):
    """One pre-LN block; ``p`` maps suffixes (``ln1.weight``) to arrays."""
    b, s, h = cfg.batch, cfg.seq, cfg.heads
    h1, ln1 = layernorm(x, p["ln1.weight"], p["ln1.bias"])
    q = linear(h1, p["attn.q_proj.weight"], p["attn.q_proj.bias"])
    k = linear(h1, p["attn.k_proj.weight"], p["attn.k_proj.bias"])
    vv = linear(h1, p["attn.v_proj.weight"], p["attn.v_proj.bias"])
    a, att = attention(q, k, vv, b, s, h)
    x1 = x + linear(a, p["attn.out_proj.weight"], p["attn.out_proj.bias"])
    h2, ln2 = layernorm(x1, p["ln2.weight"], p["ln2.bias"])
    f = linear(h2, p["mlp.fc1.weight"], p["mlp.fc1.bias"])
    g = gelu(f)
    out = x1 + linear(g, p["mlp.fc2.weight"], p["mlp.fc2.bias"])
    return out, (h1, ln1, a, att, h2, ln2, f, g)


def block_backward(cfg, p, saved, dout):
    b, s, h = cfg.batch, cfg.seq, cfg.heads
    h1, ln1, a, att, h2, ln2, f, g = saved
    gr = {}
    dg, gr["mlp.fc2.weight"], gr["mlp.fc2.bias"] = linear_backward(
        dout, g, p["mlp.fc2.weight"])
    df = gelu_backward(dg, f)
    dh2, gr["mlp.fc1.weight"], gr["mlp.fc1.bias"] = linear_backward(
        df, h2, p["mlp.fc1.weight"])
    dx1, gr["ln2.weight"], gr["ln2.bias"] = layernorm_backward(dh2, ln2, p["ln2.weight"])
    dx1 = dx1 + dout
    da, gr["attn.out_proj.weight"], gr["attn.out_proj.bias"] = linear_backward(
        dx1, a, p["attn.out_proj.weight"])
    dq, dk, dv = attention_backward(da, att, b, s, h)
    dh1 = 0.0
    for name, d in (("q_proj", dq), ("k_proj", dk), ("v_proj", dv)):
        dxp, gr[f"attn.{name}.weight"], gr[f"attn.{name}.bias"] = linear_backward(
            d, h1, p[f"attn.{name}.weight"])
        dh1 = dh1 + dxp
    dx, gr["ln1.weight"], gr["ln1.bias"] = layernorm_backward(dh1, ln1, p["ln1.weight"])
    return dx + dx1, gr


def transformer_block(cfg, v):
    x = v["x"].reshape(cfg.tokens, cfg.dim)
    y, saved = block(cfg, v, x)
    logits = linear(y, v["head.weight"], v["head.bias"])
    loss, dl = cross_entropy(logits, v["targets"].reshape(-1))
    dy, dhw, dhb = linear_backward(dl, y, v["head.weight"])
    _, grads = block_backward(cfg, v, saved, dy)
    grads.update({"head.weight": dhw, "head.bias": dhb})
    return loss, grads


def transformer_lm(cfg, v):
    ids = v["input_ids"].reshape(-1)
    pos = np.tile(np.arange(cfg.seq), cfg.batch)
    h = v["tok_emb.weight"][ids] + v["pos_emb.weight"][pos]
    params = [{k[len(f"layers.{i}."):]: a for k, a in v.items()
               if k.startswith(f"layers.{i}.")} for i in range(cfg.layers)]
    saved = []
    for p in params:
        h, s = block(cfg, p, h)
        saved.append(s)
    hf, lnf = layernorm(h, v["ln_f.weight"], v["ln_f.bias"])
    head = v["tok_emb.weight"] if cfg.tie_embeddings else v["head.weight"]
    loss, dl = cross_entropy(linear(hf, head), v["targets"].reshape(-1))
    grads = {}
    dhf, dhead, _ = linear_backward(dl, hf, head)
    dh, grads["ln_f.weight"], grads["ln_f.bias"] = layernorm_backward(dhf, lnf,
                                                                      v["ln_f.weight"])
    for i in reversed(range(cfg.layers)):
        dh, gr = block_backward(cfg, params[i], saved[i], dh)
        grads.update({f"layers.{i}.{k}": a for k, a in gr.items()})
    dtok = np.zeros_like(v["tok_emb.weight"])
    np.add.at(dtok, ids, dh)
    dpos = np.zeros_like(v["pos_emb.weight"])
    np.add.at(dpos, pos, dh)
    if cfg.tie_embeddings:
        dtok = dtok + dhead
    else:
        grads["head.weight"] = dhead
    grads.update({"tok_emb.weight": dtok, "pos_emb.weight": dpos})
    return loss, grads


MODELS = {"mlp": mlp, "transformer-block": transformer_block,
          "transformer-lm": transformer_lm}


def loss_and_grads(graph, values):
    """(loss, {param name: grad}) in f64 for a Graph's model on ``values``."""
    v = {k: (a if np.issubdtype(np.asarray(a).dtype, np.integer)
             else np.asarray(a, dtype=np.float64)) for k, a in values.items()}
    return MODELS[graph.model](graph.config, v)


def finite_difference_check(graph, values, seed=0, per_param=3, eps=1e-5):
    """Compare analytic grads with central differences of the f64 loss.

    Checks ``per_param`` random coordinates of every parameter, plus one random
    direction through all parameters at once (catches errors spread thinly over
    many coordinates). Returns {label: relative error}: the error divided by the
    largest gradient magnitude of that parameter, floored at 1e-3 of the largest
    gradient of all (some gradients are zero in exact arithmetic, e.g. the key
    bias's: there the difference quotient is pure rounding noise).
    """
    rng = np.random.default_rng(seed)
    base = {k: (np.array(a, dtype=np.float64) if not np.issubdtype(np.asarray(a).dtype,
                                                                   np.integer) else a)
            for k, a in values.items()}
    _, grads = loss_and_grads(graph, base)

    def loss_at(name, delta):
        shifted = dict(base)
        shifted[name] = base[name] + delta
        return loss_and_grads(graph, shifted)[0]

    floor = 1e-3 * max(float(np.abs(g).max()) for g in grads.values())
    errors = {}
    for p in graph.params:
        g = grads[p.name]
        scale = max(float(np.abs(g).max()), floor, 1e-12)
        worst = 0.0
        for _ in range(per_param):
            idx = tuple(int(rng.integers(0, s)) for s in p.shape)
            delta = np.zeros(p.shape)
            delta[idx] = eps
            fd = (loss_at(p.name, delta) - loss_at(p.name, -delta)) / (2 * eps)
            worst = max(worst, abs(fd - g[idx]) / scale)
        errors[p.name] = worst

    direction = {p.name: rng.normal(size=p.shape) for p in graph.params}

    def loss_along(t):
        shifted = dict(base)
        for name, d in direction.items():
            shifted[name] = base[name] + t * d
        return loss_and_grads(graph, shifted)[0]
    fd = (loss_along(eps) - loss_along(-eps)) / (2 * eps)
    analytic = sum(float((grads[n] * d).sum()) for n, d in direction.items())
    errors["<random direction>"] = abs(fd - analytic) / max(abs(analytic), 1e-8)
    return errors
