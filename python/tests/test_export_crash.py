"""msamp.export runs torch-mlir's lowering in a child process
(msamp/export_child.py): an op that crashes torch-mlir (torch.sort: an
LLVM abort; torch.topk: a segmentation fault; boolean-mask indexing: it
allocates until the cap stops it) is an ExportError naming the op that kills
the lowering, and the exporting process lives on."""

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


class BooleanMask(torch.nn.Module):
    """``y[x > 0]``: boolean-mask indexing (aten.index.Tensor with a bool
    index), whose lowering makes torch-mlir allocate until it is stopped."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        return y[x > 0]


def _cap_near_current(monkeypatch, extra_gib=1.0):
    """Caps the export child's address space ``extra_gib`` above this
    process's (the default cap, half the machine's memory on top, is right
    for users but makes torch-mlir swap a CI machine before it dies)."""
    with open("/proc/self/statm") as f:
        vsz = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    monkeypatch.setenv("MSAMP_EXPORT_MEMORY_GB", str(vsz / (1 << 30) + extra_gib))


def test_boolean_mask_is_an_export_error(monkeypatch):
    _cap_near_current(monkeypatch)
    torch.manual_seed(0)
    model = BooleanMask()
    x = torch.randn(2, 4)
    t = model(x).detach()
    with pytest.raises(ExportError) as info:
        msamp.export(model, torch.nn.functional.mse_loss, (x, t))
    text = str(info.value)
    # Names the op (alone, it kills the lowering too) and what to do.
    assert "torch-mlir crashed" in text, text
    assert "lowering aten.index.Tensor alone kills it too" in text, text
    assert "boolean-mask indexing" in text and "rewrite the module" in text, text
    assert "Traceback" not in text and "torch.aten" not in text, text
    # The process is alive and exports the model without the mask.
    model.forward = lambda x: model.fc(x)
    g = msamp.export(model, torch.nn.functional.mse_loss, (x, model.fc(x).detach()))
    assert 'msamp.kind = "forward_backward"' in g.text


def test_child_out_of_memory_is_a_death():
    """A MemoryError in the child (Python, not LLVM, hit the cap) is
    reported like a crash: what is left of the address space may not pickle
    an answer, and it is not an error the lowering could explain."""
    from msamp import export_child

    def exhausted():
        raise MemoryError()
    with pytest.raises(export_child.ChildDied, match="ran out of memory"):
        export_child.run(exhausted)


def test_lowering_out_of_memory_is_a_crash(monkeypatch):
    """torch-mlir's lowering raising MemoryError is a crash of the lowering
    (an ExportError naming the ops that exhaust it alone), never "failed to
    lower the traced step: " with an empty reason."""
    import torch_mlir.fx

    def exhausted(*args, **kwargs):
        raise MemoryError()
    monkeypatch.setattr(torch_mlir.fx, "stateless_fx_import", exhausted)
    model = Sorted()
    model.forward = lambda x: model.fc(x)
    x, t = torch.randn(2, 4), torch.randn(2, 4)
    with pytest.raises(ExportError,
                       match=r"torch-mlir crashed .*ran out of memory.*aten\.\w+"):
        msamp.export(model, torch.nn.functional.mse_loss, (x, t))
