"""Back to PyTorch: msamp.state_dict / msamp.export_weights and
msamp-run --export-weights (docs/Python.md "Back to PyTorch").

A small LM with a tied head (GPT-2's lm_head = wte), a persistent f32
buffer the forward reads and a non-persistent one is exported, trained a few
steps by msamp.Trainer and loaded back with ``load_state_dict(strict=True)``:

* the state_dict has the module's keys in its order, the tied head under
  its own name, the buffer with its values;
* after loading, every parameter equals the session's f32 value
  (Session.param: the runtime's decoding, f16 weights with their scales at
  O2) exactly, and at O0 PyTorch's loss on a batch equals msamp's eval loss
  within 1e-5;
* a checkpoint gives the same bytes as the live session, and msamp-run
  --export-weights the same bytes as the Python call (also after --resume);
* two ranks at O3 under mpirun export complete weights (every param the
  FP16 master of its owner rank, over its scale), the same bytes from the
  run and from the sharded checkpoint;
* bad inputs are refused with the reason: a checkpoint of another model, a
  missing or single rank file, an init file of another model, a checkpoint
  without names and without its step, an unwritable output.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native, checkpoint  # noqa: E402

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch_mlir  # noqa: F401
    HAVE_TORCH, TORCH_WHY = True, ""
except ImportError as e:
    HAVE_TORCH, TORCH_WHY = False, f"torch / torch-mlir not installed ({e})"

_OK, _WHY = _native.available()
pytestmark = [pytest.mark.skipif(not HAVE_TORCH, reason=TORCH_WHY),
              pytest.mark.skipif(not _OK, reason=_WHY)]

VOCAB, DIM, SEQ, BATCH = 16, 32, 8, 4

if HAVE_TORCH:
    class TiedLM(nn.Module):
        """Embedding, a Linear + GELU + LayerNorm block, and a head tied to
        the embedding; ``pos`` is a persistent buffer (in the state_dict),
        ``gain`` a non-persistent one (not in it, but read by forward)."""

        def __init__(self, dim=DIM):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, dim)
            self.fc = nn.Linear(dim, dim)
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, VOCAB, bias=False)
            self.head.weight = self.emb.weight
            self.register_buffer("pos", 0.5 * torch.randn(SEQ, dim))
            # Not in the state_dict: every instance computes the same value
            # (as transformers' position_ids).
            self.register_buffer("gain", torch.linspace(0.5, 1.5, dim), persistent=False)

        def forward(self, ids):
            h = self.emb(ids) + self.pos
            return self.head(self.norm(F.gelu(self.fc(h))) * self.gain)

    def lm_loss(logits, targets):
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def _batches(count, seed=1):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, VOCAB, size=(count, BATCH, SEQ), dtype=np.int64)
    # Predict the previous token: learnable, so training moves the weights.
    return [{"ids": x, "targets": np.roll(x, 1, axis=1)} for x in ids]


def _export(tmp, dim=DIM, name="m"):
    torch.manual_seed(0)
    model = TiedLM(dim)
    batch = {k: torch.from_numpy(v) for k, v in _batches(1)[0].items()}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    init = tmp / f"{name}-init.safetensors"
    g = msamp.export(model, lm_loss, batch, optimizer=opt, init_file=init)
    return model, g, init


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("weights")
    model, g, init = _export(tmp)
    g.write(tmp / "m.mlir")
    steps = {level: msamp.compile(g, opt_level=level) for level in ("O0", "O2")}
    return {"tmp": tmp, "model": model, "graph": g, "init": init, "steps": steps}


def _trained(lm, level, steps=4):
    trainer = msamp.Trainer(lm["steps"][level], init_file=lm["init"])
    trainer.fit(_batches(3), steps=steps)
    return trainer


def _torch_batch(batch):
    return {k: torch.from_numpy(v) for k, v in batch.items()}


def test_export_records_the_state_dict_layout(lm):
    model, g = lm["model"], lm["graph"]
    keys = list(model.state_dict())
    assert [k for k, _ in g.state_dict_layout] == keys
    layout = dict(g.state_dict_layout)
    assert layout["head.weight"] == "emb.weight"       # tied: one param
    assert "head.weight" not in [a.name for a in g.params]
    assert layout["pos"] == "pos" and "gain" not in layout
    # Buffers start from their values (the init file holds them).
    tensors, meta = checkpoint.read(lm["init"])
    assert np.array_equal(tensors["pos"], model.pos.numpy())
    assert np.array_equal(tensors["gain"], model.gain.numpy())
    assert json.loads(meta["msamp_state_dict"]) == [list(e) for e in g.state_dict_layout]


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_trained_weights_load_into_pytorch(lm, level):
    trainer = _trained(lm, level)
    s = trainer.session
    sd = msamp.state_dict(trainer)
    assert list(sd) == list(lm["model"].state_dict())
    assert all(t.dtype == torch.float32 for t in sd.values())

    torch.manual_seed(123)                     # other initial values
    fresh = TiedLM()
    fresh.load_state_dict(sd, strict=True)
    assert fresh.head.weight is fresh.emb.weight
    params = dict(fresh.named_parameters())
    assert sorted(params) == sorted(s.param_names)
    for name in s.param_names:
        value = s.param(name)
        assert np.array_equal(params[name].detach().numpy(), value), name
    # Tied: both names, the one trained value.
    assert np.array_equal(sd["head.weight"].numpy(), s.param("emb.weight"))
    # Trained (the test would pass vacuously on the initial values).
    assert not np.array_equal(s.param("fc.weight"), lm["graph"].param_values["fc.weight"])
    # The buffer: the model's value, as the session holds it.
    assert np.array_equal(fresh.pos.numpy(), lm["model"].pos.numpy())
    assert np.array_equal(s.tensor("pos"), lm["model"].pos.numpy())

    if level == "O0":
        for batch in _batches(2, seed=7):
            with torch.no_grad():
                ours = s.eval(batch)
                theirs = lm_loss(fresh(_torch_batch(batch)["ids"]),
                                 _torch_batch(batch)["targets"]).item()
            assert abs(ours - theirs) <= 1e-5, (ours, theirs)


def test_numpy_without_torch_conversion(lm):
    trainer = _trained(lm, "O0", steps=1)
    arrays = msamp.state_dict(trainer, as_numpy=True)
    assert isinstance(arrays["fc.weight"], np.ndarray)
    assert np.array_equal(arrays["fc.weight"], trainer.session.param("fc.weight"))


def test_checkpoint_gives_the_session_bytes(lm):
    tmp = lm["tmp"]
    trainer = _trained(lm, "O2")
    trainer.save(tmp / "ck.safetensors")
    live = msamp.export_weights(trainer, tmp / "live.safetensors")
    from_ck = msamp.export_weights(tmp / "ck.safetensors", tmp / "ck-w.safetensors",
                                   step_dir=lm["steps"]["O2"])
    alone = msamp.export_weights(tmp / "ck.safetensors", tmp / "ck-alone.safetensors")
    data = open(live, "rb").read()
    assert data == open(from_ck, "rb").read() == open(alone, "rb").read()
    # A resumed session keeps the names (the layout travels in checkpoints).
    with msamp.Session(lm["steps"]["O2"]) as s:
        s.load(tmp / "ck.safetensors")
        assert open(msamp.export_weights(s, tmp / "resumed.safetensors"), "rb").read() == data


def _msamp_run():
    return _native.find_tool("msamp-run")


def _run(args, env=None, check=True):
    proc = subprocess.run([_msamp_run(), *map(str, args)], capture_output=True,
                          text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"msamp-run failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def _data_file(path, batches):
    from safetensors.numpy import save_file
    save_file({k: np.stack([b[k] for b in batches]) for k in batches[0]}, str(path))
    return path


def test_msamp_run_export_weights_equals_the_python_call(lm):
    tmp = lm["tmp"]
    step = lm["steps"]["O2"]
    data = _data_file(tmp / "data.safetensors", _batches(3))
    _run([step.dir, "--init", lm["init"], "--data", data, "--steps", 5, "--quiet",
          "--save", tmp / "run-ck.safetensors",
          "--export-weights", tmp / "run.safetensors"])
    trainer = msamp.Trainer(step, init_file=lm["init"])
    trainer.fit(str(data), steps=5)
    py = msamp.export_weights(trainer, tmp / "py.safetensors")
    run_bytes = open(tmp / "run.safetensors", "rb").read()
    assert run_bytes == open(py, "rb").read()
    # Converting a checkpoint: --resume with no steps.
    _run([step.dir, "--resume", tmp / "run-ck.safetensors", "--steps", 0, "--quiet",
          "--export-weights", tmp / "resumed.safetensors"])
    assert open(tmp / "resumed.safetensors", "rb").read() == run_bytes


def test_msamp_run_refuses_an_unwritable_output_before_training(lm):
    proc = _run([lm["steps"]["O0"].dir, "--synthetic", "--steps", 1,
                 "--export-weights", lm["tmp"] / "no-such-dir" / "w.safetensors"],
                check=False)
    assert proc.returncode == 1
    assert "--export-weights" in proc.stderr and "cannot write" in proc.stderr
    assert "step 1" not in proc.stdout


def test_errors_are_explained(lm, tmp_path):
    # A checkpoint of another model, checked against this model's step.
    _, other, other_init = _export(tmp_path, dim=16, name="other")
    other_step = msamp.compile(other, opt_level="O2")
    t = msamp.Trainer(other_step, init_file=other_init)
    t.save(tmp_path / "other.safetensors")
    with pytest.raises(msamp.SessionError, match="another model") as e:
        msamp.state_dict(tmp_path / "other.safetensors", step_dir=lm["steps"]["O2"])
    assert e.value.status == "MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT"
    with pytest.raises(msamp.SessionError, match="level O2, the compiled step .* level O0"):
        msamp.state_dict(tmp_path / "other.safetensors", step_dir=lm["steps"]["O0"])
    # Its init file does not fit this model either.
    with msamp.Session(lm["steps"]["O0"]) as s:
        with pytest.raises(msamp.SessionError, match=r"shape \[16, 16\], expected \[16, 32\]"):
            s.init(init_file=other_init)
    # Tensors the model does not have; a buffer of another dtype.
    from safetensors.numpy import save_file
    save_file({"bogus": np.zeros(3, np.float32)}, str(tmp_path / "bogus.safetensors"))
    save_file({"pos": np.zeros((SEQ, DIM), np.float64)}, str(tmp_path / "f64.safetensors"))
    with msamp.Session(lm["steps"]["O0"]) as s:
        with pytest.raises(msamp.SessionError, match="'bogus': not a param or buffer"):
            s.init(init_file=tmp_path / "bogus.safetensors")
        with pytest.raises(msamp.SessionError, match="'pos': dtype F64, expected F32"):
            s.init(init_file=tmp_path / "f64.safetensors")
    # A layout naming state the model does not have.
    save_file({}, str(tmp_path / "bad-layout.safetensors"),
              metadata={"msamp_state_dict": json.dumps([["x.weight", "nope"]])})
    with msamp.Session(lm["steps"]["O0"]) as s:
        with pytest.raises(msamp.SessionError, match="'x.weight' comes from 'nope'"):
            s.init(init_file=tmp_path / "bad-layout.safetensors")
    # No names recorded (seeded init, no export init file) and no step dir.
    t = msamp.Trainer(lm["steps"]["O0"], seed=0)
    t.save(tmp_path / "plain.safetensors")
    with pytest.raises(msamp.SessionError, match="records no state_dict layout"):
        msamp.state_dict(tmp_path / "plain.safetensors")
    # With the step: params then buffers under the graph's names.
    sd = msamp.state_dict(tmp_path / "plain.safetensors", step_dir=lm["steps"]["O0"])
    assert list(sd) == t.session.param_names + ["pos", "gain"]


def _mpirun():
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        return None
    runtime = os.path.join(_native.find_library_dir(), "libmsamp_runtime.so")
    ldd = subprocess.run(["ldd", runtime], capture_output=True, text=True).stdout
    if "libmpi" not in ldd:
        return None
    return [mpirun, "--allow-run-as-root", "--oversubscribe",
            "--mca", "mpi_yield_when_idle", "1", "--mca", "btl", "self,vader"]


def test_o3_two_ranks_export_complete_weights(lm):
    mpirun = _mpirun()
    if mpirun is None:
        pytest.skip("needs mpirun and a runtime built with MPI")
    tmp = lm["tmp"]
    data = _data_file(tmp / "data2.safetensors", _batches(4))
    env = dict(os.environ, MSAMP_CACHE_DIR=str(tmp / "cache"), TMPDIR="/tmp",
               OMPI_MCA_mpi_yield_when_idle="1")

    def run(*args):
        proc = subprocess.run([*mpirun, "-np", "2", _msamp_run(), tmp / "m.mlir",
                               "--init", lm["init"], "--data", data, "--steps", "4",
                               "--quiet", *map(str, args)],
                              capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc

    run("--opt-level", "O3", "--export-weights", tmp / "o3.safetensors")
    run("--opt-level", "O3", "--save", tmp / "o3-ck.safetensors",
        "--export-weights", tmp / "o3-saved.safetensors")
    # The temporary checkpoint of the gather is gone.
    assert sorted(p.name for p in tmp.glob("o3.*")) == ["o3.safetensors"]
    o3, meta = checkpoint.read(tmp / "o3.safetensors")
    assert meta["level"] == "O3" and meta["step"] == "4"
    assert sorted(o3) == sorted(lm["model"].state_dict())
    assert open(tmp / "o3.safetensors", "rb").read() == \
        open(tmp / "o3-saved.safetensors", "rb").read()

    # Each value is the FP16 master over its scale (decoded here with numpy:
    # the ranks' pieces of the flattened master joined at the offsets their
    # shard records, the scale replicated), a replicated FP16 weight over its
    # scale, or the replicated f32 param. The FP8 copies every rank holds
    # are not what is exported.
    replicated, _ = checkpoint.read(tmp / "o3-ck.safetensors")
    shards = [checkpoint.read(tmp / f"o3-ck.rank{r}.safetensors") for r in (0, 1)]

    def offsets(meta):
        items = meta.get("shard_offsets", "").split(";")
        return {k: int(v) for k, v in (i.rsplit("=", 1) for i in items if i)}

    holders = set()
    for key, source in lm["graph"].state_dict_layout:
        name = source + ".master"
        pieces = sorted((offsets(meta)[name], r, sh[name])
                        for r, (sh, meta) in enumerate(shards) if name in sh)
        if pieces:
            starts = [p[0] for p in pieces]
            sizes = [p[2].size for p in pieces]
            assert starts == [sum(sizes[:i]) for i in range(len(sizes))], key
            master = np.concatenate([p[2] for p in pieces])
            expect = (master.astype(np.float32)
                      * (np.float32(1) / replicated[name + ".scale"]))
            expect = expect.reshape(replicated[source].shape)
            assert replicated[source].dtype == np.uint8          # FP8 bits
            holders.update(p[1] for p in pieces)
        elif replicated[source].dtype == np.float16:
            # A weight read by more than FP8 GEMMs (the tied embedding)
            # stays FP16 + scale on every rank (docs/Design.md "O3").
            expect = (replicated[source].astype(np.float32)
                      * (np.float32(1) / replicated[source + ".scale"]))
        else:
            expect = replicated[source]
        assert expect.dtype == np.float32
        assert np.array_equal(o3[key], expect), key
    # Even flat shards: both ranks hold pieces of the masters.
    assert holders == {0, 1} and all(sh for sh, _ in shards)
    assert np.array_equal(o3["head.weight"], o3["emb.weight"])
    assert not np.array_equal(o3["fc.weight"], lm["graph"].param_values["fc.weight"])
    # From the sharded checkpoint in Python: the same bytes as the run's.
    assert (open(msamp.export_weights(tmp / "o3-ck.safetensors", tmp / "py3.safetensors"),
                 "rb").read() == open(tmp / "o3-saved.safetensors", "rb").read())
    fresh = TiedLM()
    fresh.load_state_dict(msamp.state_dict(tmp / "o3-ck.safetensors"), strict=True)

    # A rank file instead of the checkpoint, and a missing rank file.
    with pytest.raises(msamp.SessionError, match="one rank's shard"):
        msamp.state_dict(tmp / "o3-ck.rank1.safetensors")
    os.remove(tmp / "o3-ck.rank1.safetensors")
    with pytest.raises(msamp.SessionError, match="rank 1's is missing"):
        msamp.state_dict(tmp / "o3-ck.safetensors")


def test_integer_buffers_and_scaled_weights_from_a_checkpoint(tmp_path):
    """The checkpoint path on a hand-written checkpoint: an i64 buffer
    (position ids, BatchNorm's num_batches_tracked) keeps its dtype and
    values, an f16 weight is decoded over its scale, a master wins over its
    param, keys follow the recorded layout."""
    from safetensors.numpy import save_file
    w16 = np.array([[1.5, -2.25], [0.125, 3.0]], np.float16)
    ids = np.arange(6, dtype=np.int64).reshape(1, 6)
    layout = [["position_ids", "position_ids"], ["w", "w"], ["tied", "w"], ["m", "m"]]
    save_file({"position_ids": ids, "w": w16, "w.scale": np.array(4.0, np.float32),
               "m": np.array([9, 9], np.float16), "m.master": np.array([0.5, -1], np.float16),
               "m.master.scale": np.array(0.5, np.float32)},
              str(tmp_path / "ck.safetensors"),
              metadata={"level": "O2", "step": "7", "msamp_state_dict": json.dumps(layout)})
    sd = msamp.state_dict(tmp_path / "ck.safetensors", as_numpy=True)
    assert list(sd) == ["position_ids", "w", "tied", "m"]
    assert sd["position_ids"].dtype == np.int64 and np.array_equal(sd["position_ids"], ids)
    assert sd["w"].dtype == np.float32
    assert np.array_equal(sd["w"], w16.astype(np.float32) / 4)
    assert np.array_equal(sd["tied"], sd["w"])
    assert np.array_equal(sd["m"], np.array([1.0, -2.0], np.float32))
    # A layout naming a tensor the checkpoint lacks.
    save_file({"w": w16}, str(tmp_path / "bad.safetensors"),
              metadata={"level": "O0", "step": "1",
                        "msamp_state_dict": json.dumps([["x", "missing"]])})
    with pytest.raises(msamp.SessionError, match="'x' comes from 'missing'"):
        msamp.state_dict(tmp_path / "bad.safetensors")
    # Not a checkpoint at all.
    save_file({"w": w16}, str(tmp_path / "plain.safetensors"))
    with pytest.raises(msamp.SessionError, match="not a checkpoint written by msamp"):
        msamp.state_dict(tmp_path / "plain.safetensors")
