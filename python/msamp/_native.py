"""Finding and loading msamp's native parts: the tools and the two libraries.

The package is pure Python; everything that compiles or runs a training step
is C++ built by CMake (README "Building by hand"):

* ``msamp-compile`` (run as a subprocess: the upstream MLIR Python bindings
  are not available, and the tool and the files it writes are the stable
  interface; ``msamp-opt`` is found the same way for tests and scripts),
* ``libmsamp_runtime.so`` (the kernels' C ABI) and ``libmsamp_session.so``
  (open / init / step / save a compiled step), loaded with ctypes.

Where they are looked for, first match wins:

1. ``$MSAMP_BUILD_DIR`` (``bin/`` and ``lib/`` of a CMake build dir or install
   prefix). When set it is the only place searched: a test run that names a
   build must never silently use another one. ``$MSAMP_COMPILE`` and
   ``$MSAMP_OPT`` override single tools (msamp-run honours ``$MSAMP_COMPILE``
   too; it never runs msamp-opt).
2. An installed location: ``sys.prefix`` (a virtualenv the tools were
   installed into with ``cmake --install build --prefix $VIRTUAL_ENV``), the
   prefix of an ``msamp-compile`` on ``PATH``, ``/usr/local``.
3. The ``build/`` directory of the checkout the package comes from: the
   source tree itself (``PYTHONPATH=python``, editable installs) or, for a
   ``pip install ./python``, the directory pip recorded in the installation's
   ``direct_url.json`` (PEP 610).

The runtime is loaded with ``RTLD_GLOBAL`` before the session library: the
compiled ``train_step.so`` that the session dlopens resolves its
``msamp_rt_*`` calls against the global scope, and loading both from the same
prefix keeps the session from pulling in a second, different runtime.
"""

import ctypes
import json
import os
import shutil
import sys
import urllib.parse
import urllib.request
from pathlib import Path

RUNTIME_LIB = "libmsamp_runtime.so"
SESSION_LIB = "libmsamp_session.so"
TOOL_ENV = {"msamp-compile": "MSAMP_COMPILE", "msamp-opt": "MSAMP_OPT",
            "msamp-run": "MSAMP_RUN"}


class NativeNotFoundError(FileNotFoundError):
    """A tool or library of the C++ build is missing; the message lists where
    it was looked for and how to provide it."""


def _checkouts():
    """Repository roots this package may come from (step 3 above)."""
    roots = []
    here = Path(__file__).resolve().parent  # .../python/msamp
    if (here.parent.parent / "CMakeLists.txt").is_file():
        roots.append(here.parent.parent)
    try:
        from importlib import metadata
        text = metadata.distribution("msamp").read_text("direct_url.json")
    except Exception:  # not installed by pip, or no metadata: nothing to add
        text = None
    if text:
        url = json.loads(text).get("url", "")
        if url.startswith("file:"):
            src = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
            # pip was pointed at python/ (or at the repository root).
            for root in (src.parent, src):
                if (root / "CMakeLists.txt").is_file() and root not in roots:
                    roots.append(root)
    return roots


def search_prefixes():
    """(prefix, why) pairs in search order; see the module docstring."""
    build = os.environ.get("MSAMP_BUILD_DIR")
    if build:
        return [(Path(build), "$MSAMP_BUILD_DIR")]
    prefixes = [(Path(sys.prefix), "sys.prefix")]
    on_path = shutil.which("msamp-compile")
    if on_path:
        prefixes.append((Path(on_path).resolve().parent.parent, "msamp-compile on PATH"))
    prefixes.append((Path("/usr/local"), "/usr/local"))
    for root in _checkouts():
        prefixes.append((root / "build", f"checkout {root}"))
    return prefixes


def _missing(what, looked):
    places = "\n".join(f"  {p}  ({why})" for p, why in looked)
    hint = ("set MSAMP_BUILD_DIR to a build directory, or build the targets: "
            "ninja -C build msamp-compile msamp_runtime msamp_session")
    return NativeNotFoundError(f"{what} not found; looked in:\n{places}\n{hint}")


def find_tool(name):
    """Absolute path of an msamp tool (``msamp-compile``, ``msamp-opt``...)."""
    env = TOOL_ENV.get(name)
    if env and os.environ.get(env):
        return os.environ[env]
    looked = search_prefixes()
    for prefix, _ in looked:
        candidate = prefix / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise _missing(name, [(p / "bin", why) for p, why in looked])


def find_library_dir():
    """The ``lib/`` directory holding both libraries. Both must come from the
    same prefix: the session library was linked against that runtime."""
    looked = search_prefixes()
    for prefix, _ in looked:
        lib = prefix / "lib"
        if (lib / RUNTIME_LIB).is_file() and (lib / SESSION_LIB).is_file():
            return lib
    raise _missing(f"{RUNTIME_LIB} and {SESSION_LIB}",
                   [(p / "lib", why) for p, why in looked])


class _Libraries:
    """The loaded runtime and session libraries with their prototypes."""

    def __init__(self, lib_dir):
        self.lib_dir = Path(lib_dir)
        self.runtime = ctypes.CDLL(str(self.lib_dir / RUNTIME_LIB),
                                   mode=ctypes.RTLD_GLOBAL)
        self.session = ctypes.CDLL(str(self.lib_dir / SESSION_LIB))
        _declare_runtime(self.runtime)
        _declare_session(self.session)
        # The libraries' enumerations, read once here and never restated in
        # Python: {MLIR spelling: msamp_rt_dtype code}, the manifest roles
        # and the memory-report categories (msamp_vocabulary.h), in order,
        # msamp_session_step's flags {name: bit} and the learning-rate
        # schedules {name: msamp_lr_schedule} (msamp_session.h).
        self.dtype_codes = {name: code for code, name in enumerate(
            _enumerate(self.session.msamp_dtype_name))}
        self.role_names = _enumerate(self.session.msamp_role_name)
        self.memory_categories = _enumerate(
            self.session.msamp_memory_category_name)
        self.step_flags = {name: self.session.msamp_step_flag_bit(i)
                           for i, name in enumerate(_enumerate(
                               self.session.msamp_step_flag_name))}
        self.lr_schedules = {name: code for code, name in enumerate(
            _enumerate(self.session.msamp_lr_schedule_name))}


def _enumerate(fn):
    """(fn(0), fn(1), ...) decoded, up to the first NULL."""
    names = []
    while (name := fn(len(names))) is not None:
        names.append(name.decode())
    return tuple(names)


_LOADED = None


def libraries():
    """Loads (once per process) and returns the libraries."""
    global _LOADED
    if _LOADED is None:
        _LOADED = _Libraries(find_library_dir())
    return _LOADED


# ---------------------------------------------------------------------------
# C declarations (msamp_session.h, msamp_runtime.h). Kept next to the loader
# so that every ctypes user sees the same prototypes.
# ---------------------------------------------------------------------------

c_int64_p = ctypes.POINTER(ctypes.c_int64)


class TensorInfo(ctypes.Structure):
    """msamp_tensor_info."""

    _fields_ = [("name", ctypes.c_char_p), ("role", ctypes.c_char_p),
                ("dtype", ctypes.c_char_p), ("rank", ctypes.c_int32),
                ("shape", c_int64_p), ("num_elements", ctypes.c_int64),
                ("num_bytes", ctypes.c_int64), ("data", ctypes.c_void_p)]


class MemoryCategory(ctypes.Structure):
    """msamp_memory_category."""

    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("bytes", ctypes.c_int64)]


class UnrankedMemRef(ctypes.Structure):
    """msamp_rt_unranked_memref."""

    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


_FREED_MEMORY_KEPT = False


def keep_freed_memory():
    """Makes glibc keep freed memory in the heap, as msamp-run does.

    A compiled step allocates and frees hundreds of temporaries of up to a
    few MiB every step; with glibc's defaults the large ones are mmap'ed and
    unmapped (or trimmed) each time, and every step page-faults its working
    set in again: measured on the benchmark LM at O0, 175 against 92 ms per
    step from Python. This raises the mmap threshold to glibc's maximum
    (32 MiB) and the trim threshold to 1 GiB for the whole process, once.
    ``MSAMP_KEEP_FREED_MEMORY=0`` in the environment leaves malloc alone.
    Returns whether the settings were applied (False off glibc)."""
    global _FREED_MEMORY_KEPT
    if _FREED_MEMORY_KEPT:
        return True
    if os.environ.get("MSAMP_KEEP_FREED_MEMORY", "1") == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
    _FREED_MEMORY_KEPT = bool(mallopt(M_MMAP_THRESHOLD, 32 << 20)) and \
        bool(mallopt(M_TRIM_THRESHOLD, 1 << 30))
    return _FREED_MEMORY_KEPT


def _proto(lib, name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


def _declare_session(lib):
    vp, i64, cp = ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p
    status = ctypes.c_int
    info_p = ctypes.POINTER(TensorInfo)
    _proto(lib, "msamp_last_error_message", cp)
    _proto(lib, "msamp_version", cp)
    _proto(lib, "msamp_status_name", cp, status)
    _proto(lib, "msamp_dtype_name", cp, ctypes.c_int32)
    _proto(lib, "msamp_role_name", cp, ctypes.c_int32)
    _proto(lib, "msamp_role_kind_of", ctypes.c_int32, ctypes.c_int32)
    _proto(lib, "msamp_memory_category_name", cp, ctypes.c_int32)
    _proto(lib, "msamp_step_flag_name", cp, ctypes.c_int32)
    _proto(lib, "msamp_step_flag_bit", ctypes.c_uint32, ctypes.c_int32)
    _proto(lib, "msamp_lr_schedule_name", cp, ctypes.c_int32)
    _proto(lib, "msamp_session_open", status, cp, ctypes.POINTER(vp))
    _proto(lib, "msamp_session_close", None, vp)
    _proto(lib, "msamp_session_level", cp, vp)
    _proto(lib, "msamp_session_world_size", i64, vp)
    _proto(lib, "msamp_session_graph_hash", cp, vp)
    _proto(lib, "msamp_session_default_lr", ctypes.c_double, vp)
    _proto(lib, "msamp_session_num_state", i64, vp)
    _proto(lib, "msamp_session_state_info", status, vp, i64, info_p)
    _proto(lib, "msamp_session_num_inputs", i64, vp)
    _proto(lib, "msamp_session_input_info", status, vp, i64, info_p)
    _proto(lib, "msamp_session_find", status, vp, cp, info_p)
    _proto(lib, "msamp_session_read_param", status, vp, cp,
           ctypes.POINTER(ctypes.c_float), i64)
    _proto(lib, "msamp_session_init", status, vp, ctypes.c_uint64, cp, c_int64_p)
    _proto(lib, "msamp_session_save", status, vp, cp)
    _proto(lib, "msamp_session_export_weights", status, vp, cp)
    _proto(lib, "msamp_export_checkpoint_weights", status, cp, cp, cp)
    _proto(lib, "msamp_session_load", status, vp, cp)
    _proto(lib, "msamp_session_set_input", status, vp, cp, vp, i64)
    _proto(lib, "msamp_session_open_data", status, vp, cp, c_int64_p, c_int64_p)
    _proto(lib, "msamp_session_select_batch", status, vp, i64)
    _proto(lib, "msamp_session_synthetic_batch", status, vp, ctypes.c_uint64,
           i64, i64)
    _proto(lib, "msamp_session_step", status, vp, ctypes.c_float,
           ctypes.c_uint32, ctypes.POINTER(ctypes.c_float))
    _proto(lib, "msamp_session_get_step", i64, vp)
    _proto(lib, "msamp_session_num_skipped", i64, vp)
    _proto(lib, "msamp_session_num_consecutive_skipped", i64, vp)
    _proto(lib, "msamp_session_last_skip_reason", ctypes.c_char_p, vp)
    _proto(lib, "msamp_lr_at", ctypes.c_double, ctypes.c_int, ctypes.c_double,
           i64, i64, i64)
    _proto(lib, "msamp_session_memory_report", status, vp,
           ctypes.POINTER(MemoryCategory), c_int64_p)
    _proto(lib, "msamp_session_peak_bytes", status, vp, c_int64_p, c_int64_p)


def _declare_runtime(lib):
    umr = ctypes.POINTER(UnrankedMemRef)
    i32 = ctypes.c_int32
    _proto(lib, "msamp_rt_abi_version", i32)
    _proto(lib, "msamp_rt_dtype_size", i32, i32)
    _proto(lib, "msamp_rt_get_last_error", ctypes.c_int)
    _proto(lib, "msamp_rt_get_last_error_message", ctypes.c_char_p)
    _proto(lib, "msamp_rt_clear_error", None)
    _proto(lib, "msamp_rt_set_backend", ctypes.c_int, ctypes.c_char_p)
    _proto(lib, "msamp_rt_get_backend", ctypes.c_char_p)
    _proto(lib, "msamp_rt_set_num_threads", None, i32)
    _proto(lib, "_mlir_ciface_msamp_rt_quantize", None, umr, umr, umr, i32, i32)
    _proto(lib, "_mlir_ciface_msamp_rt_dequantize", None, umr, umr, umr, i32, i32)
    _proto(lib, "_mlir_ciface_msamp_rt_amax", None, umr, umr, i32)
    _proto(lib, "_mlir_ciface_msamp_rt_quantize_jit", None, umr, umr, umr, umr,
           umr, umr, i32, i32, i32, i32, i32)
    _proto(lib, "_mlir_ciface_msamp_rt_quantize_transpose", None, umr, umr,
           umr, umr, i32, i32)
    _proto(lib, "_mlir_ciface_msamp_rt_quantize_scale_update", None,
           *([umr] * 10), *([i32] * 7))


def available():
    """(True, "") when the tools and libraries can be found, else (False,
    the reason): lets tests skip visibly instead of failing on a machine
    without a build."""
    try:
        find_tool("msamp-compile")
        find_library_dir()
    except NativeNotFoundError as e:
        return False, str(e).splitlines()[0] + " (set MSAMP_BUILD_DIR)"
    return True, ""
