"""Session.step on hostile input (issue 16): a bad learning rate, an index
input outside its valid range, non-finite data and an update that leaves
non-finite state are refused, and a refused step leaves the state (and a
checkpoint written after it) byte for byte as it was.

Graphs come from msamp.graphs; skipped with the reason when the C++ build
cannot be found (ctest sets MSAMP_BUILD_DIR).
"""

import math
import re
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native, graphs  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)

VOCAB = 16
TINY_LM = dict(dim=16, heads=2, seq=4, batch=2, ffn=32, vocab=VOCAB, layers=1)
MLP_BATCH = {"x": [[1, 2, 3], [0.5, -1, 2], [-1, 0, 1], [2, 1, -1]],
             "y": [[1, 0], [0, 1], [0.5, 0.5], [-1, 2]]}


@pytest.fixture(scope="module")
def lm():
    return msamp.compile_all(graphs.build("transformer-lm", **TINY_LM),
                             ("O0", "O2"))


@pytest.fixture(scope="module")
def mlp():
    return msamp.compile_all(graphs.build("mlp"), ("O0", "O2"))


def _lm_batch(seed=0):
    rng = np.random.default_rng(seed)
    return {name: rng.integers(0, VOCAB, (2, 4)).astype(np.int64)
            for name in ("input_ids", "targets")}


def _same_state(a, b):
    return sorted(a) == sorted(b) and all(
        a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes()
        for k in a)


def _checkpoint_bytes(session, path):
    session.save(path)
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("name,where,value", [
    ("input_ids", (1, 3), VOCAB),       # == vocab
    ("input_ids", (0, 0), -1),
    ("targets", (0, 2), VOCAB + 5),
    ("targets", (1, 1), -100),          # this graph's loss has no ignore_index
])
def test_bad_index_is_refused_and_state_kept(tmp_path, lm, level, name, where,
                                             value):
    with lm[level].session() as s:
        s.init(seed=1)
        s.step(_lm_batch(0))
        before = s.state_dict()
        ck_before = _checkpoint_bytes(s, tmp_path / "before.safetensors")
        bad = _lm_batch(1)
        bad[name][where] = value
        for skip in (False, True):
            with pytest.raises(msamp.SessionError) as e:
                s.step(bad, skip_nonfinite=skip)
            assert not isinstance(e.value, msamp.NonFiniteLossError)
            assert (f"step 2: the runtime reported error 1: msamp_train_step: "
                    f"input '{name}': value {value} at [{where[0]}, {where[1]}] "
                    f"is outside the valid range [0, {VOCAB})") in str(e.value)
        assert s.global_step == 1 and s.num_skipped == 0
        assert _same_state(before, s.state_dict())
        assert _checkpoint_bytes(s, tmp_path / "after.safetensors") == ck_before
        # Every index in range: the step runs.
        ok = _lm_batch(1)
        ok[name][where] = VOCAB - 1
        assert math.isfinite(s.step(ok))
        assert s.global_step == 2


@pytest.mark.parametrize("lr", [float("nan"), float("inf"), float("-inf"),
                                -1.0, 1e39])
def test_bad_learning_rate_is_refused(mlp, lr):
    with mlp["O2"].session() as s:
        s.init(seed=0)
        before = s.state_dict()
        for skip in (False, True):
            with pytest.raises(msamp.SessionError,
                               match="INVALID_ARGUMENT: step 1: the learning "
                                     "rate must be finite and >= 0, got"):
                s.step(MLP_BATCH, lr=lr, skip_nonfinite=skip)
        assert s.global_step == 0 and s.num_skipped == 0
        assert _same_state(before, s.state_dict())


def test_zero_learning_rate_is_allowed(mlp):
    with mlp["O0"].session() as s:
        s.init(seed=0)
        params = s.state_dict(roles=["param"])
        assert math.isfinite(s.step(MLP_BATCH, lr=0.0))
        assert s.global_step == 1
        after = s.state_dict(roles=["param"])
        assert all(np.array_equal(params[k], after[k]) for k in params)


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("value,spelled", [(np.inf, "inf"), (-np.inf, "-inf"),
                                           (np.nan, "nan")])
def test_nonfinite_data_is_a_nonfinite_step(mlp, level, value, spelled):
    with mlp[level].session() as s:
        s.init(seed=0)
        before = s.state_dict()
        bad = {k: np.array(v, np.float32) for k, v in MLP_BATCH.items()}
        bad["x"][2, 1] = value
        with pytest.raises(msamp.NonFiniteLossError,
                           match=f"non-finite input at step 1: 'x' holds "
                                 f"{spelled} at element 7"):
            s.step(bad)
        assert s.global_step == 0
        assert _same_state(before, s.state_dict())
        s.step(bad, skip_nonfinite=True)
        assert s.global_step == 1 and s.num_skipped == 1
        after = s.state_dict()
        assert all(after[k].tobytes() == before[k].tobytes()
                   for k in before if k != "step")
        with pytest.raises(msamp.NonFiniteLossError, match="non-finite input"):
            s.eval(bad)


def _overflowing_steps(session, skip):
    """Steps at lr 1e5 at O2 until one has a finite loss and gradient norm
    but overflows the f16 second moment; returns (state before it, its
    number, the error or None when skipped)."""
    rng = np.random.default_rng(0)
    for _ in range(30):
        before = session.state_dict()
        number = session.global_step + 1
        batch = {"x": rng.normal(size=(4, 3)), "y": rng.normal(size=(4, 2))}
        try:
            session.step(batch, lr=1e5, skip_nonfinite=skip)
        except msamp.NonFiniteLossError as e:
            if "non-finite state after the update" in str(e):
                return before, number, e
            raise
        if skip and "non-finite state" in session.last_skip_reason:
            return before, number, None
    pytest.fail("no update overflowed the state")


def test_nonfinite_update_is_undone_when_skipping(tmp_path, mlp):
    """lr 1e5 at O2: a finite loss whose update overflows the f16 second
    moment. Under skip_nonfinite the update is undone and the state can
    be saved."""
    with mlp["O2"].session() as s:
        s.init(seed=0)
        before, number, _ = _overflowing_steps(s, skip=True)
        assert s.last_skip_reason.startswith(
            f"non-finite state after the update at step {number}: '")
        assert "holds inf" in s.last_skip_reason
        assert s.last_skip_reason.endswith("(the update was undone)")
        assert s.global_step == number and s.consecutive_skipped >= 1
        after = s.state_dict()
        assert all(after[k].tobytes() == before[k].tobytes()
                   for k in before if k != "step")
        s.save(tmp_path / "ck.safetensors")


def test_nonfinite_update_is_an_error_and_undone(tmp_path, mlp):
    """Without skip_nonfinite the overflowing update is an error and is
    undone as well: every state tensor (the step counter included) holds
    its bytes from before the step, so the state can be saved."""
    with mlp["O2"].session() as s:
        s.init(seed=0)
        before, number, error = _overflowing_steps(s, skip=False)
        assert (f"non-finite state after the update at step {number}: '"
                in str(error))
        assert str(error).endswith("(the update was undone)")
        assert s.global_step == number - 1 and s.num_skipped == 0
        assert _same_state(before, s.state_dict())
        ck = _checkpoint_bytes(s, tmp_path / "ck.safetensors")
        s.load(tmp_path / "ck.safetensors")
        assert _same_state(before, s.state_dict())
        assert _checkpoint_bytes(s, tmp_path / "again.safetensors") == ck


def test_checkpoint_of_nonfinite_state_is_refused(tmp_path, mlp):
    """State can hold an infinity only through a checkpoint that does (init
    files are checked); such state is never written back."""
    from safetensors.numpy import load_file, save_file
    from safetensors import safe_open
    with mlp["O0"].session() as s:
        s.init(seed=0)
        good = tmp_path / "good.safetensors"
        s.save(good)
        tensors = load_file(good)
        with safe_open(good, "np") as f:
            meta = f.metadata()
        tensors["fc2.bias"][1] = np.inf
        poisoned = tmp_path / "poisoned.safetensors"
        save_file(tensors, poisoned, metadata=meta)
        s.load(poisoned)
        path = tmp_path / "ck.safetensors"
        with pytest.raises(msamp.NonFiniteLossError,
                           match="refusing to write a checkpoint of non-finite "
                                 "state: 'fc2.bias' holds inf at element 1"):
            s.save(path)
        assert not path.exists()


def test_exported_cross_entropy_keeps_its_ignore_index(tmp_path):
    """torch's F.cross_entropy (ignore_index=-100) through msamp.export:
    -100 targets train, a target or token id == vocab is refused."""
    torch = pytest.importorskip("torch")
    nn, F = torch.nn, torch.nn.functional

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, 8)
            self.head = nn.Linear(8, VOCAB)

        def forward(self, ids):
            return self.head(self.tok(ids))

    def loss(logits, targets):
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))

    torch.manual_seed(0)
    model = Tiny()
    ids = torch.randint(0, VOCAB, (2, 4))
    graph = msamp.export(model, loss,
                         {"input_ids": ids, "targets": torch.roll(ids, 1, 1)},
                         optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    step = msamp.compile(graph, "O0", out_dir=tmp_path / "o0")
    with step.session() as s:
        s.init(seed=0)
        batch = {"input_ids": ids.numpy(), "targets": torch.roll(ids, 1, 1).numpy()}
        batch["targets"][0, 1] = -100
        assert math.isfinite(s.step(batch))
        for name, message in (
                ("targets", f"input 'targets': value {VOCAB} at [1, 2] is "
                            f"outside the valid range [0, {VOCAB}) (or -100, "
                            f"the loss's ignore_index)"),
                ("input_ids", f"input 'input_ids': value {VOCAB} at [1, 2] "
                              f"is outside the valid range [0, {VOCAB})")):
            bad = {k: v.copy() for k, v in batch.items()}
            bad[name][1, 2] = VOCAB
            with pytest.raises(msamp.SessionError, match=re.escape(message)):
                s.step(bad)
        assert s.global_step == 1


_COMPUTED_INDEX = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "test", "Tools", "msamp-run", "Inputs", "computed-index.mlir")


def _shifted_ids(seed, bad=None):
    """input_ids for computed-index.mlir (which gathers ids + 3 from 10
    rows): in range below 7; `bad` at [1, 2]."""
    ids = np.random.default_rng(seed).integers(0, 7, (2, 4)).astype(np.int64)
    if bad is not None:
        ids[1, 2] = bad
    return {"input_ids": ids}


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_computed_index_is_refused_and_state_kept(tmp_path, level):
    """An index computed in the graph out of range is found mid-step: the
    step is refused with the reading op's location, the value and the
    range, and the state is byte for byte the state before it, with and
    without skip_nonfinite."""
    step = msamp.compile(_COMPUTED_INDEX, level, out_dir=tmp_path / level)
    with step.session() as s:
        s.init(seed=1)
        s.step(_shifted_ids(0))
        before = s.state_dict()
        for skip in (False, True):
            for bad, value in ((8, 11), (-4, -1)):
                with pytest.raises(msamp.SessionError) as e:
                    s.step(_shifted_ids(1, bad), skip_nonfinite=skip)
                assert not isinstance(e.value, msamp.NonFiniteLossError)
                assert re.search(
                    r"step 2: the runtime reported error 1: msamp_train_step: "
                    r"index computed at \S*\.mlir:25:10: value "
                    + str(value) + r" at \[1, 2\] is outside the valid range "
                    r"\[0, 10\)", str(e.value)), str(e.value)
                assert s.global_step == 1 and s.num_skipped == 0
                assert _same_state(before, s.state_dict())
        assert math.isfinite(s.step(_shifted_ids(1)))
        assert s.global_step == 2


def test_computed_index_checks_keep_losses_bit_identical(tmp_path):
    """The checks and clamps change nothing for indices in range: the graph
    that computes ids + 3 trains bit for bit like the same graph fed the
    shifted ids as its input (checked at the entry only)."""
    with open(_COMPUTED_INDEX) as f:
        text = f.read()
    fed = re.sub(r"%pos = linalg\.generic \{.*?\} -> tensor<2x4xi64>",
                 "%pos = tensor.cast %ids : tensor<2x4xi64> to tensor<2x4xi64>",
                 text, flags=re.S)
    assert fed != text
    graph = tmp_path / "fed.mlir"
    graph.write_text(fed)
    for level in ("O0", "O2"):
        computed = msamp.compile(_COMPUTED_INDEX, level,
                                 out_dir=tmp_path / ("c" + level))
        direct = msamp.compile(str(graph), level,
                               out_dir=tmp_path / ("d" + level))
        assert "check_index" not in (tmp_path / ("d" + level) /
                                     "train_step.mlir").read_text()
        with computed.session() as a, direct.session() as b:
            a.init(seed=3)
            b.init(seed=3)
            for k in range(4):
                batch = _shifted_ids(k)
                la = a.step(batch)
                lb = b.step({"input_ids": batch["input_ids"] + 3})
                assert np.float32(la).tobytes() == np.float32(lb).tobytes()
            assert _same_state(a.state_dict(), b.state_dict())
