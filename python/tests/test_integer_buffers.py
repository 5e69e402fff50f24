"""Integer buffers through the Python Session (issue #14): Session.init
writes a buffer's value in its own dtype (i64 position ids, an i1 mask),
the session reports and returns them in that dtype, and training matches the
numpy reference of test/Tools/msamp-run/Inputs/integer_buffers.py."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

INPUTS = Path(__file__).resolve().parents[2] / "test" / "Tools" / "msamp-run" / "Inputs"
sys.path.insert(0, str(INPUTS))
import integer_buffers as ref  # noqa: E402


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_integer_buffers_in_session(level, tmp_path):
    step = msamp.compile((INPUTS / "integer-buffers.mlir").read_text(), level,
                         out_dir=tmp_path)
    with step.session() as s:
        assert s.spec("position_ids").dtype == "i64"
        assert s.spec("mask").dtype == "i1"
        n = s.init(params={"pos.weight": ref.POS, "position_ids": ref.IDS,
                           "mask": ref.MASK, "norm.running_mean": ref.RUNNING})
        assert n == 4
        losses = [s.step({"x": ref.X, "y": ref.Y}) for _ in range(3)]
        ids, mask = s.tensor("position_ids"), s.tensor("mask")
        running = s.tensor("norm.running_mean")
        pos = s.param("pos.weight")
    want, want_pos, want_running = ref.reference(3)
    np.testing.assert_allclose(losses, want, rtol=1e-5)
    assert ids.dtype == np.int64 and ids.tolist() == ref.IDS.tolist()
    assert mask.dtype == np.bool_ and mask.tolist() == ref.MASK.tolist()
    np.testing.assert_allclose(running, want_running, rtol=1e-5)
    np.testing.assert_allclose(pos, want_pos, rtol=1e-5, atol=1e-6)
