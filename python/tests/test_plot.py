"""python -m msamp.plot: loss curves of several levels and amax histories to
a PNG. matplotlib is optional: the PNG tests skip without it (visibly), and
the command must then fail with a message before training anything."""

import json
import os
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PYTHON_DIR)

from msamp import _native, graphs, plot  # noqa: E402

_OK, _WHY = _native.available()
needs_build = pytest.mark.skipif(not _OK, reason=_WHY)
needs_matplotlib = pytest.mark.skipif(not plot.have_matplotlib(),
                                      reason="matplotlib not installed")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_command_says_so(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(plot, "have_matplotlib", lambda: False)
    out = tmp_path / "x.png"
    assert plot.main(["--model", "mlp", "--steps", "1", "-o", str(out)]) == 2
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert not out.exists()


@needs_build
def test_run_levels_records_losses_and_amax():
    g = graphs.build("mlp")
    results = plot.run_levels(g, ("O0", "O2"), steps=6)
    assert [e["step"] for e in results["O0"]["log"]] == list(range(1, 7))
    assert results["O0"]["amax"] == {}  # no FP8, no delayed scaling
    amax = results["O2"]["amax"]
    assert "fc1.fprop.input" in amax and len(amax["fc1.fprop.input"]) == 6
    assert all(v > 0 for v in amax["fc1.fprop.input"])


@needs_build
@needs_matplotlib
def test_cli_trains_levels_and_writes_png(tmp_path):
    out = tmp_path / "levels.png"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "msamp.plot", "--model", "mlp", "--levels", "O0,O1,O2",
         "--steps", "15", "--save-logs", str(tmp_path / "log-"), "-o", str(out)],
        capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "O2: final loss" in proc.stdout
    assert out.read_bytes()[:8] == PNG_MAGIC and out.stat().st_size > 10_000
    # The saved logs plot again without training.
    again = tmp_path / "again.png"
    args = ["-o", str(again)]
    for level in ("O0", "O2"):
        log = tmp_path / f"log-{level}.jsonl"
        assert len(log.read_text().splitlines()) == 15
        args += ["--log-json", f"{level}={log}"]
    assert plot.main(args) == 0
    assert again.read_bytes()[:8] == PNG_MAGIC


@needs_matplotlib
def test_plot_of_msamp_run_logs(tmp_path):
    """--log-json files as msamp-run writes them, a null loss included."""
    log = tmp_path / "run.jsonl"
    lines = [{"step": 1, "loss": 2.0, "lr": 1e-3, "nonfinite": False},
             {"step": 2, "loss": None, "lr": 1e-3, "nonfinite": True},
             {"step": 3, "loss": 1.5, "lr": 1e-3, "nonfinite": False}]
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "run.png"
    assert plot.main(["--log-json", f"O2={log}", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
