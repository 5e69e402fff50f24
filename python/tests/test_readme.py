"""README.md's stock-model quickstart runs as printed: the ```python block
after the ``readme-stock-snippet`` marker is executed unchanged (export,
compile at O2, train, weights back into PyTorch), so it cannot rot."""

import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from msamp import _native  # noqa: E402

torch = pytest.importorskip("torch")

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)


def readme_snippet():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    match = re.search(r"<!-- readme-stock-snippet\b.*?-->\s*```python\n(.*?)```",
                      text, re.S)
    assert match, "README.md lost its readme-stock-snippet block"
    return match.group(1)


def test_readme_stock_snippet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # it writes init.safetensors
    code = readme_snippet()
    scope = {"__name__": "readme"}
    exec(compile(code, "README.md (readme-stock-snippet)", "exec"), scope)
    import msamp
    # It trained: one batch, 30 steps at O2.
    losses = scope["losses"]
    assert len(losses) == 30 and losses[-1] < 0.6 * losses[0], losses
    # The module now holds exactly the session's trained weights, under the
    # original names (GPT-2's tied lm_head included).
    model, trainer = scope["model"], scope["trainer"]
    trained = msamp.state_dict(trainer)
    state = model.state_dict()
    assert set(trained) == set(state)
    for name, value in trained.items():
        assert torch.equal(state[name], value), name
    assert model.lm_head.weight is model.transformer.wte.weight
    assert (tmp_path / "init.safetensors").is_file()
