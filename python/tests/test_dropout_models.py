"""GPT-2 and BERT from transformers with their default dropout (0.1 on
embeddings, residuals, attention probabilities and the classifier) export
with the dropout in training mode and train at O0 and O2 like PyTorch
(issue 15, docs/Randomness.md 5).

The masks differ from PyTorch's (msamp draws from its own Philox stream),
so step-by-step equality is not the bar; the issue's is: over 3 seeds (the
init and the dropout seed), the mean of the last 5 of 50 losses is within
5% of PyTorch's mean over 3 seeds on the same task and batches.

A 3-seed mean is only as steady as the task's last losses: on the stock
BERT task (batch 4, the class of the first token) the loss ends near 0.19
and PyTorch's own seeds spread it by 13% (standard deviation over 6 seeds),
so two 3-seed means differed by up to 10% by chance. BERT therefore trains
here on a task whose loss stays well above zero: 30% of the labels replaced
by random ones (a fixed draw; the irreducible loss is about 0.78), 50
distinct batches of 32 (each seen once). PyTorch's seed spread there is
2.3% (docs/Randomness.md 5 has the configurations measured and why this
one). GPT-2 keeps the stock task (batch 4, 8 distinct batches; spread 1.3%).
The configurations were chosen on PyTorch's spread alone, before msamp ran.

Runtime: one export and one concurrent O0 + O2 compile per model; the 3
seeds reuse them (only the initial values change). About 2 minutes on 2
busy cores, most of it compiling.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import msamp  # noqa: E402
from msamp import _native  # noqa: E402

torch = pytest.importorskip("torch")
import stock_families as families  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

STEPS, SEEDS = 50, (0, 1, 2)
# Per model: batch size, distinct batches, fraction of labels made random.
TASKS = {"gpt2": (4, 8, 0.0), "bert": (32, 50, 0.3)}

# Filled by the test, printed at the end (docs/Randomness.md's table).
TABLE = {}


def _last5(losses):
    return float(np.mean(np.asarray(losses)[-5:]))


def _batches(family, name):
    batch, distinct, noise = TASKS[name]
    data = families.batches(family, distinct, batch)
    if noise:
        # A fixed draw (the same for PyTorch and msamp, every seed): each
        # label replaced, with probability `noise`, by a uniform class.
        g = torch.Generator().manual_seed(123)
        for b in data:
            flip = torch.rand(b["labels"].shape, generator=g) < noise
            random = torch.randint(0, families.CLASSES, b["labels"].shape, generator=g)
            b["labels"] = torch.where(flip, random, b["labels"])
    return data


@pytest.mark.parametrize("name", sorted(families.DROPOUT_FAMILIES))
def test_default_dropout_trains_like_pytorch(tmp_path, name):
    torch.set_num_threads(1)
    family = families.DROPOUT_FAMILIES[name]
    data = _batches(family, name)
    model = families.model(family, SEEDS[0])
    drops = [m for m in model.modules() if type(m).__name__ == "Dropout" and m.p > 0]
    assert drops, "the family was meant to keep its default dropout"
    graph = msamp.export(model, families.loss_fn(family), data[0],
                         optimizer=families.optimizer(family, model))
    # Every dropout module (attention included) is one random op of the
    # graph, in torch-mlir's spelling that the compiler replaces.
    assert graph.text.count("ml_program.global_load @global_seed") == len(drops)
    steps = msamp.compile_all(graph, ["O0", "O2"])
    batches = [{k: v.numpy() for k, v in b.items()} for b in data]

    results = {"PyTorch": [], "O0": [], "O2": []}
    for seed in SEEDS:
        torch.manual_seed(seed)  # PyTorch's dropout masks
        reference = families.model(family, seed)
        torch.manual_seed(seed)
        results["PyTorch"].append(_last5(families.torch_losses(
            family, reference, data, STEPS)))
        # The same initial values (params of this seed's model, buffers as
        # exported) and msamp's dropout seed.
        init = tmp_path / f"init{seed}.safetensors"
        graph.param_values = {n: p.detach().numpy().copy()
                              for n, p in families.model(family, seed).named_parameters()}
        graph.write_init(init)
        for level in ("O0", "O2"):
            trainer = msamp.Trainer(steps[level], init_file=str(init), seed=seed)
            losses = trainer.fit(batches, steps=STEPS)
            assert all(np.isfinite(losses)), (level, seed, losses)
            results[level].append(_last5(losses))

    means = {k: float(np.mean(v)) for k, v in results.items()}
    TABLE[name] = (results, means)
    print(f"\n{name}: " + ", ".join(
        f"{k} {means[k]:.4f} ({', '.join(f'{x:.4f}' for x in v)})"
        for k, v in results.items()))
    # The task is learned with dropout on.
    assert means["PyTorch"] < 0.8 * float(np.log(families.VOCAB if family.kind == "lm"
                                                  else families.CLASSES))
    for level in ("O0", "O2"):
        gap = abs(means[level] - means["PyTorch"])
        print(f"  {level}: gap {gap / means['PyTorch']:.1%} of PyTorch's")
        assert gap <= 0.05 * means["PyTorch"], (name, level, means, results)


def test_drop_path_and_randn_become_step_draws():
    """timm's DropPath (one draw per sample) and torch.randn_like (two draws
    and Box-Muller) export in torch-mlir's spelling, pass the contract and
    become msamp.random_uniform ops of the step (docs/Randomness.md 1)."""
    import subprocess
    import torch.nn as nn
    import torch.nn.functional as F
    from timm.layers import DropPath

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)
            self.drop_path = DropPath(0.2)

        def forward(self, x):
            h = x + self.drop_path(self.lin(x))
            return h + 0.1 * torch.randn_like(h)

    graph = msamp.export(Model().train(), F.mse_loss,
                         (torch.randn(4, 8), torch.randn(4, 8)))
    assert graph.text.count("ml_program.global_load @global_seed") == 3
    out = subprocess.run([_native.find_tool("msamp-opt"), "--msamp-o0"],
                         input=graph.text, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    draws = [line for line in out.stdout.splitlines() if "msamp.random_uniform" in line]
    assert len(draws) == 3, draws
    assert "tensor<4x1xf64>" in draws[0]  # DropPath: one number per sample
    assert "ml_program" not in out.stdout
