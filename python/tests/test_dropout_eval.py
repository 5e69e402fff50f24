"""Evaluation runs with dropout off, as PyTorch's model.eval() does (issue
15, docs/Randomness.md 3).

GPT-2 and BERT (tiny configs of stock_families.py, their default dropout
0.1) are exported in training mode, so the step draws dropout masks; the
step's `training` input (--msamp-dropout-training) turns every dropout into
the identity when the session evaluates. At O0 the compiled step computes
PyTorch's f32 forward (test_stock_models.py), so:

* ``Trainer.evaluate`` equals PyTorch's ``model.eval()`` loss on the same
  weights within 1e-5 (relative), and ``msamp-run --eval`` on the same
  init and data prints the same number;
* a training step on the same batch and weights still applies dropout: its
  loss is PyTorch's train-mode kind, far from the eval loss.

Runtime: one export and one O0 compile per model (~30 s each on 2 busy
cores).
"""

import os
import re
import subprocess
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

BATCH, DISTINCT = 4, 3


def _torch_eval_loss(family, model, data):
    lf = families.loss_fn(family)
    inp, tgt = list(data[0])
    model.eval()
    with torch.no_grad():
        losses = [lf(model(b[inp]), b[tgt]).item() for b in data]
    model.train()
    return float(np.mean(losses))


@pytest.mark.parametrize("name", sorted(families.DROPOUT_FAMILIES))
def test_eval_turns_dropout_off(tmp_path, name):
    torch.set_num_threads(1)
    family = families.DROPOUT_FAMILIES[name]
    data = families.batches(family, DISTINCT, BATCH)
    model = families.model(family, 0)
    graph = msamp.export(model, families.loss_fn(family), data[0],
                         optimizer=families.optimizer(family, model))
    step = msamp.compile(graph, "O0", out_dir=tmp_path / "o0")
    manifest_inputs = {s["name"]: s for s in step.inputs}
    assert manifest_inputs["training"]["role"] == "hyperparam"

    init = tmp_path / "init.safetensors"
    graph.write_init(init)
    batches = [{k: v.numpy() for k, v in b.items()} for b in data]
    reference = _torch_eval_loss(family, model, data)

    trainer = msamp.Trainer(step, init_file=str(init), seed=0)
    evaluated = trainer.evaluate(batches)
    print(f"\n{name}: msamp O0 eval {evaluated:.7f}, PyTorch eval {reference:.7f}, "
          f"relative {abs(evaluated - reference) / abs(reference):.1e}")
    assert abs(evaluated - reference) <= 1e-5 * abs(reference), (evaluated, reference)
    # Evaluating changes nothing: twice the same number.
    assert trainer.evaluate(batches) == evaluated

    # The same weights, one training step on batch 0: dropout is on (10% of
    # every activation dropped moves the loss far more than 1e-3).
    train_loss = trainer.fit(batches[:1], steps=1)[0]
    first = _torch_eval_loss(family, model, data[:1])
    print(f"  training step on batch 0: {train_loss:.5f} (eval {first:.5f})")
    assert abs(train_loss - first) > 1e-3 * abs(first), (train_loss, first)

    # msamp-run --eval: the same init, the same batches (a leading batch
    # dimension), the same number.
    from safetensors.numpy import save_file
    stacked = {k: np.stack([b[k] for b in batches]) for k in batches[0]}
    save_file(stacked, str(tmp_path / "data.safetensors"))
    out = subprocess.run(
        [_native.find_tool("msamp-run"), str(step.dir), "--init", str(init),
         "--data", str(tmp_path / "data.safetensors"), "--eval", "--quiet"],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    match = re.search(r"eval loss ([0-9.]+) \(mean of 3 batches\)", out.stdout)
    assert match, out.stdout
    assert abs(float(match.group(1)) - evaluated) <= 1e-6 * abs(evaluated), (
        out.stdout, evaluated)
