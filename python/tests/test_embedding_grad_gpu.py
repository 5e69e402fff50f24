"""The GPU pipeline's embedding gradient against numpy and the CPU.

msamp-gpu-one-hot-scatter runs the token embedding's gradient as a scatter
kernel: the vocabulary in chunks of rows, one thread per (chunk, feature),
each scanning the token ids in order. `msamp-compile --target
cuda-host-emulation` runs those loops on the host. One SGD step at lr = 1
(the update is the gradient) of an LM whose 8,194-token vocabulary splits
into 2,732 chunks of 3 rows (the last chunk 1 row) over 16 features, on ids
with repeats and with 0 and 8,193 (the last row, alone in the last chunk):

* the embedding's gradient matches numpy's (np.add.at in
  msamp.graphs.reference, f64) to f32 rounding;
* the emulated step's parameters are bit-identical to the CPU step's, whose
  embedding gradient is a sequential scatter (the same terms in the same
  order).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from msamp import graphs  # noqa: E402
from msamp.graphs import reference  # noqa: E402

BUILD = os.environ.get("MSAMP_BUILD_DIR",
                       os.path.join(os.path.dirname(os.path.dirname(HERE)), "build"))
MSAMP_RUN = os.path.join(BUILD, "bin", "msamp-run")
MSAMP_COMPILE = os.path.join(BUILD, "bin", "msamp-compile")
MSAMP_OPT = os.path.join(BUILD, "bin", "msamp-opt")

safetensors = pytest.importorskip("safetensors.numpy",
                                  reason="needs the safetensors package")
if not all(os.path.exists(t) for t in (MSAMP_RUN, MSAMP_COMPILE, MSAMP_OPT)):
    pytest.skip(f"needs a build with msamp-run, msamp-compile and msamp-opt "
                f"({BUILD})", allow_module_level=True)

VOCAB = 8194
SIZES = dict(dim=16, heads=2, seq=8, batch=2, ffn=32, vocab=VOCAB, layers=1)
# Repeats (5 three times, 0 and the last row twice) and both ends.
IDS = np.array([[0, VOCAB - 1, 5, 5, 4097, 0, 12, 5],
                [VOCAB - 1, 3, 4096, 4097, 8190, 8191, 8192, 2]], np.int64)


def run_step(tmp_path, g, target, init, data):
    out = tmp_path / target
    subprocess.run([MSAMP_COMPILE, str(tmp_path / "graph.mlir"), "--opt-level",
                    "O0", "--target", target, "-o", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, MSAMP_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([MSAMP_RUN, str(out), "--steps", "1", "--lr", "1.0",
                    "--init", str(init), "--data", str(data), "--quiet",
                    "--save", str(out / "ck.safetensors")],
                   check=True, env=env)
    return safetensors.load_file(str(out / "ck.safetensors"))


def test_embedding_gradient_matches_numpy_and_cpu(tmp_path):
    g = graphs.build("transformer-lm", optimizer="sgd", lr=1.0, **SIZES)
    (tmp_path / "graph.mlir").write_text(g.text)
    values = graphs.init_values(g.args, seed=5)
    values["input_ids"] = IDS
    _, grads = reference.loss_and_grads(g, values)
    params = {a.name: np.asarray(values[a.name], np.float32)
              for a in g.args if a.role == "param"}
    data = {a.name: np.asarray(values[a.name]).astype(np.int64)[None]
            for a in g.args if a.role in ("input", "target")}
    safetensors.save_file(params, str(tmp_path / "init.safetensors"))
    safetensors.save_file(data, str(tmp_path / "data.safetensors"))
    emu = run_step(tmp_path, g, "cuda-host-emulation",
                   tmp_path / "init.safetensors", tmp_path / "data.safetensors")
    cpu = run_step(tmp_path, g, "cpu", tmp_path / "init.safetensors",
                   tmp_path / "data.safetensors")

    # The emulated step did run the scatter kernel, in the chunks above
    # (without it the one-hot reduction would give the same numbers).
    remarks = subprocess.run(
        [MSAMP_OPT, str(tmp_path / "cpu" / "train_step.mlir"),
         "--msamp-lower-to-gpu=host-emulation=true", "--remarks-filter=msamp",
         "-o", os.devnull], check=True, capture_output=True, text=True).stderr
    assert ("one-hot reduction over 16 ids into a 8194-row output runs as "
            "2732 chunks of 3 rows x 16 threads") in remarks, remarks

    name = "tok_emb.weight"
    want = grads[name]
    got = params[name].astype(np.float64) - emu[name].astype(np.float64)
    rows = np.unique(IDS)
    # The rows the ids name, and only those, have a gradient.
    assert np.all(want[np.setdiff1d(np.arange(VOCAB), rows)] == 0)
    assert np.all(got[np.setdiff1d(np.arange(VOCAB), rows)] == 0)
    scale = np.abs(want).max()
    assert scale > 0
    err = np.abs(got - want).max() / scale
    assert err < 1e-4, f"{name}: gradient error {err:.2e}"
    # Row 5 sums three tokens' gradients, row 0 and the last row two.
    for r in (0, 5, VOCAB - 1):
        assert np.abs(got[r]).max() > 0, r

    for key in cpu:
        assert cpu[key].tobytes() == emu[key].tobytes(), key
