# -*- Python -*-
# lit configuration for the msamp regression tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MSAMP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.msamp_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%msamp_src_root", config.msamp_src_root))
# The input-contract MLP example, as the repo keeps it (tests never read
# files outside the checkout: CI runs on a fresh clone).
config.substitutions.append(("%mlp_example",
                             os.path.join(config.msamp_src_root, "test",
                                          "Transforms", "Inputs", "mlp.mlir")))

# The MLIR runner libraries (printF64 & co.), for tests that execute a
# lowered pass output with mlir-runner.
config.substitutions.append(
    ("%llvm_lib_dir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))

# One Python environment for everything (scripts/python-env.sh): the one
# CMake was configured with. lit itself must run in it too, so that a test
# can never pass on packages of some other interpreter (lit's own shebang
# names /usr/bin/python3); ctest starts lit that way.
if os.path.realpath(sys.prefix) != os.path.realpath(config.python_prefix):
    lit_config.fatal(
        "lit runs under %s (environment %s), but the build was configured with "
        "%s (environment %s). Run the tests through ctest, or as: %s %s %s"
        % (sys.executable, sys.prefix, config.python_executable,
           config.python_prefix, config.python_executable, sys.argv[0],
           " ".join(sys.argv[1:])))
config.substitutions.append(("%python", config.python_executable))
# The training log without its peak-memory fields: they sit on the last
# training step's line and differ between a run and its resumed halves, or a
# CPU and a GPU-pipeline build, whose losses must still agree byte for byte.
config.substitutions.append(
    ("%strip-peaks", "sed -E 's/, \"(planned_)?peak_bytes\": [0-9]+//g'"))
config.environment["PYTHONPATH"] = os.path.join(config.msamp_src_root, "python")

llvm_config.use_default_substitutions()
llvm_config.with_system_environment(["HOME", "TMPDIR"])

tool_dirs = [config.msamp_tools_dir, config.llvm_tools_dir]
tools = ["msamp-opt", "msamp-compile", "msamp-run", "split-file", "not", "count", "mlir-opt", "mlir-runner", "mlir-translate", "llvm-nm", "msamp-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if config.msamp_have_cuda:
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.cuda_compiler))
    ptxas = os.path.join(os.path.dirname(config.cuda_compiler), "ptxas")
    config.substitutions.append(("%ptxas", ptxas))
