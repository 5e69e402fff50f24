"""msamp.compile(graph, accelerate_config=...): an Accelerate config, as a
YAML file or a dict, chooses the level and its options through the one
mapping msamp-compile --recipe applies (lib/Support/AccelerateRecipe.cpp;
docs/Levels.md, "Accelerate recipes"). The compiled step shows that the
options arrived: the manifest's level, the amax history length of its
scaling state, and the FP8 formats of its GEMMs.
"""

import math
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import msamp  # noqa: E402
from msamp import _native, graphs  # noqa: E402
from msamp.compiler import CompileError  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)


def history_lengths(step):
    return {s["shape"][0] for s in step.manifest["state"]
            if s["name"].endswith(".amax_history")}


def test_dict_te_config_sets_level_and_options():
    config = {"compute_environment": "LOCAL_MACHINE", "mixed_precision": "fp8",
              "fp8_config": {"backend": "TE", "fp8_format": "E4M3",
                             "amax_history_len": 16,
                             "override_linear_precision": [False, False, True]}}
    step = msamp.compile(graphs.build("mlp"), accelerate_config=config)
    assert step.level == "te"
    assert history_lengths(step) == {16}
    assert "amax-history-len=16" in step.options.split()
    assert "wgrad-hp=true" in step.options.split()
    gemms = step.gemms()
    # E4M3 everywhere (no E5M2 output gradients), wgrad kept in f32.
    assert {g.kind for g in gemms if g.fp8} == {"fprop", "dgrad"}
    assert all("f8E5M2" not in (g.lhs, g.rhs) for g in gemms)
    assert not any(g.fp8 for g in gemms if g.kind == "wgrad")
    assert "fp8_config.amax_history_len: 16 -> amax-history-len=16" in step.recipe_mapping
    assert "note: ignored compute_environment" in step.recipe_mapping
    # The step trains.
    trainer = msamp.Trainer(step)
    losses = list(trainer.fit(msamp.data.task_batches(
        graphs.build("mlp").data, 2, 2), steps=2))
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    trainer.close()


def test_yaml_file_msamp_backend(tmp_path):
    path = tmp_path / "accelerate.yaml"
    path.write_text("mixed_precision: fp8\nfp8_config:\n  backend: MSAMP\n"
                    "  opt_level: O1\n")
    step = msamp.compile(graphs.build("mlp"), accelerate_config=str(path))
    assert step.level == "O1"
    # Accelerate's TE default history (1024) is not applied to MS-AMP's
    # levels: O1 keeps its own 16-step window.
    assert history_lengths(step) == {16}
    # The same level named twice is fine; another one is refused.
    assert msamp.compile(graphs.build("mlp"), "O1",
                         accelerate_config=path).level == "O1"
    with pytest.raises(CompileError, match="--opt-level O2 disagrees with "
                       "--recipe .*accelerate.yaml, which asks for level O1"):
        msamp.compile(graphs.build("mlp"), "O2", accelerate_config=path)


def test_bad_configs_name_the_key():
    bad = {"mixed_precision": "fp8",
           "fp8_config": {"backend": "TE", "fp8_format": "E5M2"}}
    with pytest.raises(CompileError, match="fp8_config.fp8_format: E5M2 is "
                       "not supported"):
        msamp.compile(graphs.build("mlp"), accelerate_config=bad)
    typo = {"mixed_precision": "fp8", "fp8_config": {"backend": "TE",
                                                     "amax_histroy_len": 4}}
    with pytest.raises(CompileError, match="unknown key "
                       "fp8_config.amax_histroy_len"):
        msamp.compile(graphs.build("mlp"), accelerate_config=typo)
    with pytest.raises(CompileError, match="--pipeline-options sets 'margin'"):
        msamp.compile(graphs.build("mlp"), margin=1, accelerate_config={
            "mixed_precision": "fp8", "fp8_config": {"backend": "TE"}})
    with pytest.raises(TypeError, match="a file path or a dict"):
        msamp.compile(graphs.build("mlp"), accelerate_config=["fp8"])
    with pytest.raises(FileNotFoundError, match="no such file"):
        msamp.compile(graphs.build("mlp"), accelerate_config="/nonexistent.yaml")
