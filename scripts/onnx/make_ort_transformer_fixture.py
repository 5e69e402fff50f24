"""Regenerates test/Tools/msamp-translate/Inputs/ort_transformer/.

A torch-exported tiny transformer language model run through
onnxruntime-training, committed as small fixtures:

- the model: token embedding (vocab 64, d_model 32) + a learned position
  table, 2 pre-LN blocks (LayerNorm, 2-head causal self-attention with
  separate q/k/v Linears, a masked_fill causal mask, softmax; LayerNorm,
  Linear 32->128, exact GELU, Linear 128->32; residual adds), a final
  LayerNorm, a Linear head and the mean cross-entropy over the batch's
  next-token labels, exported by ``torch.onnx.export`` (TorchScript
  exporter, ``dynamo=False``, opset 17, batch 4 x seq 8 fixed,
  ``training=TrainingMode.TRAINING, do_constant_folding=False``, as the ORT
  docs recommend) with inputs ``input_ids`` and ``labels`` (int64 [4, 8]) and
  the output ``loss``;
- ``onnxruntime.training.artifacts.generate_artifacts`` on it (loss=None: the
  exported graph already ends in its loss; requires_grad = every param;
  optimizer = onnxblock AdamW with betas (0.9, 0.999), eps 1e-8,
  weight_decay 0.01, which ORT writes as AdamWOptimizer adam_mode = 1), which
  writes training_model.onnx, eval_model.onnx, optimizer_model.onnx and
  ORT's checkpoint flatbuffer (not kept: the params are in params.safetensors);
- params.safetensors: the initial f32 params by name (torch.manual_seed(0));
- data.safetensors: ``input_ids`` and ``labels`` as int64 [K=4, 4, 8]: K = 4
  batches of 4 sequences of a fixed random first-order Markov chain (each
  token has 2 possible successors), labels = the next tokens. msamp-run's
  step s uses batch (s - 1) mod 4;
- reference.json: the hyperparameters, and the losses of the first 3 steps
  (batches 0, 1, 2) computed by PyTorch in f32 with (a) torch.optim.AdamW
  (PyTorch AdamW = adam_mode 0), (b) the Hugging Face AdamW formula
  (adam_mode 1, what the optimizer model asks for), and the same losses
  (c) from ONNX Runtime itself (onnxruntime.training.api Module +
  Optimizer on the artifacts), plus (d) 120 steps of PyTorch with the HF
  formula (for the long-run test).

How it was run (2026-11, this machine; no GPU):

    python3 -m venv /tmp/ortvenv2
    /tmp/ortvenv2/bin/pip install onnxruntime-training==1.19.2 "numpy<2" \\
        onnx safetensors
    # torch 2.15.0 (PyPI wheel) from an existing venv, appended to sys.path:
    echo /tmp/torchvenv/lib/python3.11/site-packages \\
        > /tmp/ortvenv2/lib/python3.11/site-packages/zz_torch.pth
    /tmp/ortvenv2/bin/python scripts/onnx/make_ort_transformer_fixture.py \\
        test/Tools/msamp-translate/Inputs/ort_transformer

(onnxruntime-training 1.19.2 needs numpy < 2 and Python <= 3.11; torch 2.15
imports with numpy 1.26.) Two fix-ups between the exporters: the
TorchScript exporter leaves out LayerNormalization's and
SoftmaxCrossEntropyLoss's optional outputs, which ORT's gradient builders
need (add_optional_outputs names them), and the onnx package stamps IR 14,
which ORT 1.19 cannot load (restamped to 8). The run is deterministic: a
second run writes the same bytes. Output: 232 KB.
"""

import json
import math
import os
import sys
import tempfile

import numpy as np

VOCAB, D, HEADS, SEQ, BATCH, LAYERS, K = 64, 32, 2, 8, 4, 2, 4
LR, BETAS, EPS, WD = 5e-3, (0.9, 0.999), 1e-8, 0.01
LONG_STEPS = 120


def build_model(torch):
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D)
            self.q = nn.Linear(D, D)
            self.k = nn.Linear(D, D)
            self.v = nn.Linear(D, D)
            self.proj = nn.Linear(D, D)
            self.ln2 = nn.LayerNorm(D)
            self.fc1 = nn.Linear(D, 4 * D)
            self.fc2 = nn.Linear(4 * D, D)
            mask = torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), 1)
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x):
            b, s, _ = x.shape
            dh = D // HEADS
            h = self.ln1(x)

            def heads(t):
                return t.reshape(b, s, HEADS, dh).transpose(1, 2)

            q, k, v = heads(self.q(h)), heads(self.k(h)), heads(self.v(h))
            att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(dh))
            att = att.masked_fill(self.mask, -1e4)
            att = torch.softmax(att, dim=-1)
            y = torch.matmul(att, v).transpose(1, 2).reshape(b, s, D)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, D)
            self.pos = nn.Parameter(torch.randn(SEQ, D) * 0.02)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(D)
            self.head = nn.Linear(D, VOCAB)

        def forward(self, input_ids, labels):
            x = self.tok(input_ids) + self.pos
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.reshape(-1, VOCAB),
                                   labels.reshape(-1))

    return TinyLM()


def make_data():
    rng = np.random.default_rng(7)
    successors = rng.integers(0, VOCAB, size=(VOCAB, 2))
    seqs = np.zeros((K * BATCH, SEQ + 1), np.int64)
    for i in range(K * BATCH):
        t = int(rng.integers(0, VOCAB))
        for j in range(SEQ + 1):
            seqs[i, j] = t
            t = int(successors[t, int(rng.integers(0, 2))])
    # Contiguous copies: safetensors writes an array's buffer as it is.
    ids = np.ascontiguousarray(seqs[:, :SEQ].reshape(K, BATCH, SEQ))
    labels = np.ascontiguousarray(seqs[:, 1:].reshape(K, BATCH, SEQ))
    return ids, labels


def hf_adamw_step(torch, params, state, step):
    """Hugging Face transformers' AdamW (= ORT AdamWOptimizer adam_mode 1,
    correct_bias 1), on f32 tensors as in its source."""
    b1, b2 = BETAS
    with torch.no_grad():
        for p in params:
            m, v = state.setdefault(id(p), (torch.zeros_like(p),
                                            torch.zeros_like(p)))
            g = p.grad
            m.mul_(b1).add_(g, alpha=1.0 - b1)
            v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
            denom = v.sqrt().add_(EPS)
            step_size = LR * math.sqrt(1.0 - b2 ** step) / (1.0 - b1 ** step)
            p.addcdiv_(m, denom, value=-step_size)
            p.add_(p, alpha=-LR * WD)


def torch_losses(torch, init, ids, labels, steps, mode):
    model = build_model(torch)
    model.load_state_dict({k: torch.tensor(v) for k, v in init.items()},
                          strict=False)
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=LR, betas=BETAS, eps=EPS,
                            weight_decay=WD) if mode == 0 else None
    state, losses = {}, []
    for s in range(1, steps + 1):
        i = (s - 1) % K
        for p in params:
            p.grad = None
        loss = model(torch.tensor(ids[i]), torch.tensor(labels[i]))
        loss.backward()
        losses.append(float(loss))
        if mode == 0:
            opt.step()
        else:
            hf_adamw_step(torch, params, state, s)
    return losses


def ort_losses(art_dir, names, init, ids, labels, steps):
    from onnxruntime.training import api

    state = api.CheckpointState.load_checkpoint(
        os.path.join(art_dir, "checkpoint"))
    for n in names:  # the checkpoint holds the exported values already
        assert np.array_equal(state.parameters[n].data, init[n]), n
    module = api.Module(os.path.join(art_dir, "training_model.onnx"), state,
                        os.path.join(art_dir, "eval_model.onnx"))
    opt = api.Optimizer(os.path.join(art_dir, "optimizer_model.onnx"), module)
    opt.set_learning_rate(LR)
    module.train()
    losses = []
    for s in range(1, steps + 1):
        i = (s - 1) % K
        loss = module(ids[i], labels[i])
        losses.append(float(loss))
        opt.step()
        module.lazy_reset_grad()
    return losses


def add_optional_outputs(model):
    """The TorchScript exporter writes LayerNormalization with Y only and
    SoftmaxCrossEntropyLoss with the loss only; ORT's gradient builders read
    the optional outputs (Mean/InvStdDev, log_prob) and fail with
    "i < node_->OutputDefs().size()" without them. Name them."""
    for node in model.graph.node:
        if node.op_type == "LayerNormalization" and len(node.output) == 1:
            node.output.extend([node.output[0] + "_mean",
                                node.output[0] + "_inv_std_var"])
        if node.op_type == "SoftmaxCrossEntropyLoss" and len(node.output) == 1:
            node.output.append(node.output[0] + "_log_prob")


def main(out_dir):
    import onnx
    import torch
    from onnxruntime.training import artifacts, onnxblock
    from safetensors.numpy import save_file

    torch.manual_seed(0)
    model = build_model(torch)
    init = {k: v.detach().numpy().copy() for k, v in model.named_parameters()}
    ids, labels = make_data()
    os.makedirs(out_dir, exist_ok=True)

    with tempfile.TemporaryDirectory() as tmp:
        fwd = os.path.join(tmp, "tiny_lm.onnx")
        torch.onnx.export(
            model, (torch.tensor(ids[0]), torch.tensor(labels[0])), fwd,
            dynamo=False, opset_version=17, input_names=["input_ids", "labels"],
            output_names=["loss"], export_params=True,
            do_constant_folding=False,
            training=torch.onnx.TrainingMode.TRAINING)
        fwd_model = onnx.load(fwd)
        add_optional_outputs(fwd_model)
        init_names = {t.name for t in fwd_model.graph.initializer}
        names = [n for n in init if n in init_names]
        missing = sorted(set(init) - init_names)
        if missing:
            raise SystemExit(f"params not initializers of the export: {missing}")
        artifacts.generate_artifacts(
            fwd_model, requires_grad=names, loss=None,
            optimizer=onnxblock.optim.AdamW(betas=BETAS, eps=EPS,
                                            weight_decay=WD),
            artifact_directory=tmp)
        for f in ("training_model.onnx", "eval_model.onnx",
                  "optimizer_model.onnx"):
            # The onnx package stamps what it writes with its own IR version
            # (14 for onnx 1.23); ORT 1.19 loads up to IR 10.
            m = onnx.load(os.path.join(tmp, f))
            m.ir_version = min(m.ir_version, 8)
            onnx.save(m, os.path.join(tmp, f))
            onnx.save(m, os.path.join(out_dir, f))
        ort = ort_losses(tmp, names, init, ids, labels, 3)

    save_file(init, os.path.join(out_dir, "params.safetensors"))
    save_file({"input_ids": ids, "labels": labels},
              os.path.join(out_dir, "data.safetensors"))
    ref = {
        "lr": LR, "betas": list(BETAS), "eps": EPS, "weight_decay": WD,
        "torch": torch.__version__,
        "losses_torch_adamw_mode0": torch_losses(torch, init, ids, labels, 3, 0),
        "losses_hf_adamw_mode1": torch_losses(torch, init, ids, labels, 3, 1),
        "losses_onnxruntime": ort,
        "losses_hf_adamw_mode1_long": torch_losses(torch, init, ids, labels,
                                                   LONG_STEPS, 1),
    }
    with open(os.path.join(out_dir, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    for k, v in ref.items():
        if k.startswith("losses") and not k.endswith("long"):
            print(k, " ".join(f"{x:.6f}" for x in v))
    long = ref["losses_hf_adamw_mode1_long"]
    print(f"long run: step 1 {long[0]:.4f}, step {LONG_STEPS} {long[-1]:.4f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
