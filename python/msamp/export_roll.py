"""``aten.roll`` for msamp.export as two slices and a concatenation.

PyTorch's decomposition gathers with ``index_select`` at
``(arange(n) + shift) fmod n``; torch-mlir 20261001 cannot lower
``aten.fmod.Scalar`` on integers (the failure it reports is "failed to
legalize torch.constant.int", the fmod's divisor). Swin's shifted windows
roll twice per block forward and twice in the gradient (the gradient of a
roll is the opposite roll, decomposed the same way). Slices and a concat
lower to plain ``tensor.extract_slice`` / ``tensor.concat`` and need no
index arithmetic at all.
"""


def roll(self, shifts, dims=()):
    """out[i] = self[(i - shift) mod n] along each rolled dim (torch.roll);
    no dims: the flattened tensor is rolled and reshaped back."""
    import torch
    shifts = [int(s) for s in shifts]
    dims = [int(d) for d in dims]
    if not dims:
        if len(shifts) != 1:
            return NotImplemented
        return roll(self.reshape(-1), shifts, [0]).view(self.shape)
    if len(shifts) != len(dims):
        return NotImplemented
    out = self
    for shift, dim in zip(shifts, dims):
        n = out.shape[dim]
        if n == 0:
            continue
        s = shift % n
        if s == 0:
            continue
        out = torch.cat([out.narrow(dim, n - s, s), out.narrow(dim, 0, n - s)], dim)
    # A fresh tensor even when nothing moves, like torch.roll.
    return out.clone() if out is self else out
