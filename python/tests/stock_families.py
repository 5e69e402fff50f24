"""Stock Hugging Face transformers and timm models from tiny configs, each
with a learnable task, for test_stock_models.py and
benchmarks/bench_stock_models.py.

Library defaults everywhere (SDPA attention, tied embeddings, integer
position-id buffers, BatchNorm in training mode) except dropout, set to 0
so that O0 can equal PyTorch step by step; ``DROPOUT_FAMILIES`` are GPT-2
and BERT with their default dropout (0.1 on embeddings, residuals,
attention and the classifier: test_dropout_models.py). No weights are downloaded
(HF_HUB_OFFLINE=1): every model is built from its config with the
library's own initialization.

Tasks (each learnable by its family in a few dozen steps):
* LMs (GPT-2, Llama): predict the previous token (position 0: token 0);
* sequence classifiers (BERT, RoBERTa): the class of the first token
  (token id mod the number of classes);
* images (ViT, DeiT, Swin, ResNet): the brightest quadrant of a noise
  image with one quadrant lifted (4 classes: quadrant_batch).

The optimizer is AdamW with the usual two param groups: weight decay 0.1 on
matrices, none on biases and norm scales, and the latter at half the lr
(so that both per-param overrides, msamp.weight_decay and msamp.lr_scale,
are exercised).
"""

import os
from dataclasses import dataclass

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

VOCAB, SEQ, CLASSES, IMAGE = 32, 8, 4, 16
# The protocol: batches of BATCH, DISTINCT of them cycled, STEPS
# steps (the bars compare the mean of the last 5), O0 compared at each of
# the first O0_STEPS (test_stock_models.py, bench_stock_models.py --gaps).
BATCH, DISTINCT, STEPS, O0_STEPS = 4, 8, 50, 20


@dataclass
class Family:
    name: str
    build: object     # () -> torch.nn.Module
    kind: str         # "lm" | "seqcls" | "image"
    lr: float
    image: int = IMAGE


def _hf(config_cls, model_cls, **config):
    import transformers
    cfg = getattr(transformers, config_cls)(**config)
    return getattr(transformers, model_cls)(cfg)


def gpt2(dropout=False):
    off = {} if dropout else dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return _hf("GPT2Config", "GPT2LMHeadModel", vocab_size=VOCAB, n_positions=SEQ,
               n_embd=32, n_layer=1, n_head=2, bos_token_id=0, eos_token_id=0, **off)


def llama():
    return _hf("LlamaConfig", "LlamaForCausalLM", vocab_size=VOCAB, hidden_size=32,
               intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
               num_key_value_heads=2, max_position_embeddings=SEQ,
               bos_token_id=0, eos_token_id=0, pad_token_id=None)


def bert(dropout=False):
    off = {} if dropout else dict(hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0,
                                  classifier_dropout=0.0)
    return _hf("BertConfig", "BertForSequenceClassification", vocab_size=VOCAB,
               hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=SEQ,
               num_labels=CLASSES, **off)


def roberta():
    # Position ids count the non-padding tokens (a cumsum) from pad id + 1.
    return _hf("RobertaConfig", "RobertaForSequenceClassification", vocab_size=VOCAB,
               hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=SEQ + 2, pad_token_id=1,
               num_labels=CLASSES, hidden_dropout_prob=0.0,
               attention_probs_dropout_prob=0.0, classifier_dropout=0.0)


def _timm(name, **kwargs):
    import timm
    return timm.create_model(name, pretrained=False, num_classes=CLASSES, **kwargs)


def vit():
    return _timm("vit_tiny_patch16_224", img_size=IMAGE, patch_size=4, embed_dim=32,
                 depth=1, num_heads=2)


def deit():
    # The distilled DeiT: class and distillation tokens, two heads averaged.
    return _timm("deit_tiny_distilled_patch16_224", img_size=IMAGE, patch_size=4,
                 embed_dim=32, depth=1, num_heads=2)


def swin():
    # Window attention with relative position bias, shifted windows (roll).
    # timm's Swin-T defaults to stochastic depth (drop_path_rate 0.1): off,
    # like dropout everywhere here.
    return _timm("swin_tiny_patch4_window7_224", img_size=IMAGE, patch_size=2,
                 embed_dim=16, depths=(2, 1), num_heads=(2, 2), window_size=4,
                 drop_path_rate=0.0)


def resnet():
    # BatchNorm in training mode: the running statistics are updated buffers.
    return _timm("resnet18", layers=(1, 1, 1, 1), channels=(8, 16, 32, 64),
                 stem_width=8)


FAMILIES = {f.name: f for f in [
    Family("gpt2", gpt2, "lm", 3e-3),
    Family("bert", bert, "seqcls", 3e-3),
    Family("llama", llama, "lm", 3e-3),
    # Image lrs (the brightest quadrant, LIFT): the task needs position,
    # which these tiny ViTs must learn from 0.02-std position embeddings;
    # above the lr given, PyTorch's 50 steps end mid-descent, where a 1%
    # weight perturbation moved PyTorch's own last-5 mean by up to 5-33% (ViT at
    # 2e-3, DeiT at 2.5e-3 and 3e-3), too chaotic to compare levels at 5%.
    # At the lrs below the loss falls 21-29% and that perturbation moves it
    # by <= 1.7% (ViT 1e-3: 25%, DeiT 1.5e-3: 28%, Swin 2e-3: 21%, ResNet
    # 5e-4: 29%).
    Family("vit", vit, "image", 1e-3),
    # lr 2e-3, not 3e-3 (issue #14's RoBERTa O2 gap): at 3e-3 the loss falls
    # 84% to 0.22, and O2's last-5 mean, 0.254, is +15.8% (O1 +5.2%) while
    # only 0.035 above PyTorch, 2.5% of the initial loss, and inside
    # PyTorch's own spread over init seeds (0.16-0.22). Not an optimizer
    # bug: O2 with every GEMM in f32 (exclude=".") equals an independent
    # ml_dtypes emulation of MS-AMP's LBAdamW (FP8 m, FP16 v) to 4 digits at
    # all 50 steps (+1.0%). At 2e-3 the loss falls 69%, a 1% weight
    # perturbation moves PyTorch's last-5 by <= 0.7%, O1 +1.6%, O2 +3.1%.
    Family("roberta", roberta, "seqcls", 2e-3),
    Family("deit", deit, "image", 1.5e-3),
    # lr 2e-3, not 3e-3: at 3e-3 (loss falls 23%) O1 and O2 end 6-7% below
    # PyTorch's last-5 mean at each of 6 inits (the stock one and five 1%
    # perturbations; PyTorch's own range 1.085-1.105), while O1 and O2 with
    # f32 GEMMs (exclude=".") are within 0.2% of PyTorch: the FP8 GEMMs
    # systematically speed this descent (docs/Benchmarks.md "Per family").
    # At 2e-3 over 4 inits: O1 +0.9%, O2 +1.2% (each within 2.4%).
    Family("swin", swin, "image", 2e-3),
    # 64x64: at 32x32 the last stage is 1x1, and its BatchNorm normalizes
    # over 4 values (batch 4), so ill-conditioned that PyTorch f32 on 1 and
    # on 2 threads differed by 25% within 20 steps (on the old quadrant
    # task: the "O0 off by 0.27" of issue #14). At 64x64 (2x2, 16 values)
    # PyTorch f32 vs f64 differ by 1.9e-6.
    # lr 5e-4 (issue #14's ResNet O2 gap, +20.6% at 3e-3): BatchNorm over
    # batch 4 makes training at 3e-3 chaotic, a 1% weight perturbation moved
    # PyTorch's own last-5 mean by +2..+16%, so the 5% bar compared noise;
    # at 1e-3 still O1 +5.9%. At 5e-4 that perturbation moves it by
    # <= 2.4%, the loss falls 36%, O1 -2.3%, O2 -1.7%.
    Family("resnet", resnet, "image", 5e-4, image=64),
]}


# With the library's default dropout (transformers: 0.1 everywhere).
DROPOUT_FAMILIES = {f.name: f for f in [
    Family("gpt2", lambda: gpt2(dropout=True), "lm", 3e-3),
    Family("bert", lambda: bert(dropout=True), "seqcls", 3e-3),
]}


def loss_fn(family):
    if family.kind == "image":
        return F.cross_entropy

    def from_logits(out, targets):
        logits = out.logits
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return from_logits


def batches(family, count, batch, seed=0):
    """``count`` batches of ``batch`` examples, dicts {input name: tensor,
    target name: tensor} (the model takes the input positionally)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        if family.kind == "lm":
            ids = torch.randint(0, VOCAB, (batch, SEQ), generator=g)
            prev = torch.cat([torch.zeros(batch, 1, dtype=ids.dtype), ids[:, :-1]], 1)
            out.append({"input_ids": ids, "targets": prev})
        elif family.kind == "seqcls":
            # Ids from 2 up: RoBERTa's padding id (1) never occurs.
            ids = torch.randint(2, VOCAB, (batch, SEQ), generator=g)
            out.append({"input_ids": ids, "labels": ids[:, 0] % CLASSES})
        else:
            out.append(quadrant_batch(family.image, batch, g))
    return out


# quadrant_batch's lift of one quadrant: uniform in [LIFT[0], LIFT[1]).
LIFT = (0.2, 0.4)


def quadrant_batch(n, batch, g):
    """Issue #14's image task: the label is the quadrant (0: top left, 1:
    top right, 2: bottom left, 3: bottom right) of the n x n image with the
    highest mean brightness. Grey uniform noise in [0, 1) on all 3
    channels, one random quadrant lifted by a random offset (LIFT), so that
    the task is learnable: the lifted quadrant's mean leads the others by
    the offset, while a quadrant mean's noise is 0.29 / (n / 2) (<= 0.04);
    the label is computed from the image, not taken from the lift."""
    h = n // 2
    lo, hi = LIFT
    x = torch.rand(batch, 1, n, n, generator=g)
    lifted = torch.randint(0, 4, (batch,), generator=g)
    offset = lo + (hi - lo) * torch.rand(batch, generator=g)
    for i, q in enumerate(lifted.tolist()):
        r, c = divmod(q, 2)
        x[i, :, r * h:(r + 1) * h, c * h:(c + 1) * h] += offset[i]
    labels = x.reshape(batch, 2, h, 2, h).mean((2, 4)).reshape(batch, 4).argmax(1)
    # Zero mean, unit variance over the task's distribution (not the
    # batch's): a pixel is U(0, 1) plus, in a quarter of the pixels,
    # U(lo, hi).
    mean = 0.5 + (lo + hi) / 8
    square = (hi ** 2 + hi * lo + lo ** 2) / 12
    std = (1 / 12 + square - ((lo + hi) / 8) ** 2) ** 0.5
    return {"x": ((x - mean) / std).expand(batch, 3, n, n).contiguous(),
            "labels": labels}


def model(family, seed=0):
    torch.manual_seed(seed)
    m = family.build()
    m.train()
    return m


def optimizer(family, m):
    """AdamW, two groups: decay on matrices, none (and half the lr) on
    vectors (biases, norm scales)."""
    decay = [p for p in m.parameters() if p.dim() >= 2]
    no_decay = [p for p in m.parameters() if p.dim() < 2]
    return torch.optim.AdamW([
        {"params": decay, "weight_decay": 0.1},
        {"params": no_decay, "weight_decay": 0.0, "lr": family.lr / 2},
    ], lr=family.lr, betas=(0.9, 0.999), eps=1e-8)


def torch_losses(family, m, data, steps):
    """PyTorch eager f32 training over ``data`` cycled: the losses."""
    opt = optimizer(family, m)
    lf = loss_fn(family)
    inp, tgt = list(data[0])
    losses = []
    for i in range(steps):
        b = data[i % len(data)]
        opt.zero_grad()
        loss = lf(m(b[inp]), b[tgt])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
