"""Regenerates test/Tools/msamp-translate/Inputs/ort_mlp/ with onnxruntime-training.

A real ONNX Runtime training export, committed as small fixtures: the MLP of
onnx_models.mlp_forward (batch fixed to 4, opset 17, IR 8) run through
``onnxruntime.training.artifacts.generate_artifacts`` with MSELoss and AdamW.
ORT writes training_model.onnx (forward + ORT's backward + InPlaceAccumulatorV2),
eval_model.onnx, optimizer_model.onnx (AdamWOptimizer) and checkpoint (ORT's
flatbuffer; not used by msamp-translate, param values come from
``onnx_models.mlp_params`` through --weights-in).

How it was run (2026-11, this machine):

    python3 -m venv /tmp/ortvenv
    /tmp/ortvenv/bin/pip install onnxruntime-training==1.19.2 "numpy<2" onnx
    /tmp/ortvenv/bin/python scripts/onnx/make_ort_fixture.py \
        test/Tools/msamp-translate/Inputs/ort_mlp

torch was NOT installed: PyPI's torch for x86-64 is a multi-GB CUDA build.
``onnxruntime.training/__init__.py`` imports torch unconditionally (for
ORTModule and the FP16 optimizer), although generate_artifacts on an ONNX
ModelProto never calls it, so this script installs an import stub for
``torch`` (a MagicMock module reporting version 2.4.0) before importing
onnxruntime.training. The artifacts themselves are ORT's own output.
"""

import importlib.abc
import importlib.machinery
import os
import sys
from unittest import mock


class _TorchStub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Satisfies `import torch...` inside onnxruntime.training's __init__."""

    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = mock.MagicMock()
        module.__path__ = []
        module.__spec__ = spec
        module.__name__ = spec.name
        module.__version__ = "2.4.0"
        return module

    def exec_module(self, module):
        pass


def main(out_dir):
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.meta_path.insert(0, _TorchStub())
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from onnxruntime.training import artifacts

    import onnx_models

    model = onnx_models.mlp_forward()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = onnx_models.N
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = onnx_models.N
    model.opset_import[0].version = 17
    model.ir_version = 8
    os.makedirs(out_dir, exist_ok=True)
    artifacts.generate_artifacts(
        model, requires_grad=list(onnx_models.mlp_params()),
        loss=artifacts.LossType.MSELoss, optimizer=artifacts.OptimType.AdamW,
        artifact_directory=out_dir)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ort_mlp")
