"""msamp.export runs torch-mlir's lowering in a child process
(msamp/export_child.py): an op that crashes torch-mlir (torch.sort: an
LLVM abort; torch.topk: a segmentation fault) is an ExportError naming the
op that kills the lowering, and the exporting process lives on."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp.export import ExportError  # noqa: E402

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")


class Sorted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.sort(self.fc(x), dim=-1).values


def test_crashing_op_is_an_export_error():
    model = Sorted()
    x, t = torch.randn(2, 4), torch.randn(2, 4)
    with pytest.raises(ExportError, match=r"torch-mlir crashed .*aten\.\w+"):
        msamp.export(model, torch.nn.functional.mse_loss, (x, t))
    # The process is alive and exports a model without the op.
    model.forward = lambda x: model.fc(x)
    g = msamp.export(model, torch.nn.functional.mse_loss, (x, t))
    assert 'msamp.kind = "forward_backward"' in g.text
