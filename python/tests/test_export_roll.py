"""msamp.export's aten.roll (msamp/export_roll.py): slices + concat
instead of PyTorch's fmod-indexed gather, which torch-mlir cannot lower
("failed to legalize torch.constant.int"; Swin's shifted windows).

* the decomposition equals torch.roll for positive, negative, wrapping,
  zero and multi-dim shifts and the flattened (no dims) form;
* a module that rolls exports (before: ExportError) and its O0 step gives
  PyTorch's loss and gradients (the gradient of a roll is a roll back).
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native  # noqa: E402

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
from msamp.export_roll import roll  # noqa: E402

_OK, _WHY = _native.available()


@pytest.mark.parametrize("shifts,dims", [
    ((2,), (1,)), ((-3,), (2,)), ((9,), (1,)), ((0,), (0,)), ((5,), (0,)),
    ((1, -2), (1, 2)), ((-1, 3), (-1, -2)), ((7,), ()), ((-13,), ()),
])
def test_roll_equals_torch(shifts, dims):
    x = torch.arange(2 * 5 * 4, dtype=torch.float32).reshape(2, 5, 4)
    got = roll(x, list(shifts), list(dims))
    want = torch.roll(x, shifts, dims if dims else None)
    assert torch.equal(got, want), (shifts, dims)
    assert got.data_ptr() != x.data_ptr()


class Rolled(torch.nn.Module):
    """Swin's pattern: shift, mix, shift back."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 6)

    def forward(self, x):
        y = torch.roll(x, shifts=(-2, 1), dims=(1, 2))
        y = self.fc(y)
        return torch.roll(y, shifts=(2, -1), dims=(1, 2))


@pytest.mark.skipif(not _OK, reason=_WHY)
def test_rolled_module_trains_like_pytorch(tmp_path):
    torch.manual_seed(0)
    model = Rolled()
    x = torch.randn(3, 5, 6)
    target = torch.randn(3, 5, 6)
    weight = torch.linspace(0.5, 2.0, 5 * 6).reshape(5, 6)

    def loss_fn(out, t):
        # Position-dependent, so a roll in the wrong direction shows.
        return ((out - t) ** 2 * weight).mean()

    init = tmp_path / "init.safetensors"
    g = msamp.export(model, loss_fn, (x, target),
                     optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
                     init_file=init)
    loss = loss_fn(model(x), target)
    loss.backward()
    step = msamp.compile(g, opt_level="O0")
    with step.session(init_file=init) as s:
        before = {n: s.param(n) for n, _ in model.named_parameters()}
        got = s.step({"x": x.numpy(), "y": target.numpy()}, lr=1.0)
        assert got == pytest.approx(loss.item(), rel=1e-5)
        for n, p in model.named_parameters():
            np.testing.assert_allclose(before[n] - s.param(n), p.grad.numpy(),
                                       rtol=1e-5, atol=1e-6, err_msg=n)
