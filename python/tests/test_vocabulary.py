"""The package reads the libraries' enumerations instead of restating them.

msamp_dtype_name (runtime dtype codes), msamp_role_name, msamp_memory_category_name,
msamp_step_flag_name and msamp_lr_schedule_name (session) enumerate from 0 up
to the first NULL; _native.libraries() reads
them once, and numerics' dtype codes and the memory report's category count
come from there. These tests check the enumeration protocol itself: the
names end exactly where the C enums end, and each name maps back to its code.
"""

import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from msamp import _native, numerics, session  # noqa: E402

_OK, _WHY = _native.available()
pytestmark = pytest.mark.skipif(not _OK, reason=_WHY)


def test_dtype_codes_cover_the_runtime_enum():
    libs = _native.libraries()
    codes = libs.dtype_codes
    assert sorted(codes.values()) == list(range(len(codes)))
    for name, code in codes.items():
        assert libs.runtime.msamp_rt_dtype_size(code) > 0, name
    # The enumeration stops where the runtime stops knowing sizes.
    assert libs.runtime.msamp_rt_dtype_size(len(codes)) == 0
    assert libs.session.msamp_dtype_name(len(codes)) is None
    assert libs.session.msamp_dtype_name(-1) is None
    assert {"f32", "f16", "bf16", "f8E4M3FN", "f8E5M2"} <= set(codes)


def test_formats_take_their_codes_from_the_runtime():
    libs = _native.libraries()
    for f in numerics.FORMATS.values():
        assert libs.session.msamp_dtype_name(f.code).decode() == f.mlir
        assert libs.runtime.msamp_rt_dtype_size(f.code) == \
            (2 if f.name == "f16" else 1)


def test_roles_and_kinds():
    libs = _native.libraries()
    roles = libs.role_names
    assert len(set(roles)) == len(roles)
    kinds = [libs.session.msamp_role_kind_of(i) for i in range(len(roles))]
    assert set(kinds) <= {0, 1, 2}
    by_kind = {k: [r for r, kr in zip(roles, kinds) if kr == k] for k in (0, 1, 2)}
    assert {"param", "master_param", "opt_state", "scaling_state"} <= set(by_kind[0])
    assert {"input", "target", "hyperparam"} <= set(by_kind[1])
    assert "metric" in by_kind[2]
    assert libs.session.msamp_role_kind_of(len(roles)) == -1
    assert libs.session.msamp_role_name(len(roles)) is None


def test_memory_categories():
    libs = _native.libraries()
    cats = libs.memory_categories
    assert cats[0] == "weights" and "optimizer_v" in cats
    assert libs.session.msamp_memory_category_name(len(cats)) is None
    assert libs.session.msamp_memory_category_name(-1) is None


def _session_header():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "include", "MSAMP", "Runtime",
                           "msamp_session.h")) as f:
        return f.read()


def test_step_flags_are_the_headers():
    """msamp_step_flag_name / _bit list exactly msamp_session.h's
    MSAMP_STEP_* bits, which the package no longer restates."""
    libs = _native.libraries()
    flags = libs.step_flags
    defined = {m.group(1).lower(): int(m.group(2), 16) for m in re.finditer(
        r"#define MSAMP_STEP_([A-Z_]+) (0x[0-9a-fA-F]+)u", _session_header())}
    assert flags == defined and {"skip_nonfinite", "eval"} <= set(flags)
    bits = list(flags.values())
    assert all(b and b & (b - 1) == 0 for b in bits) and len(set(bits)) == len(bits)
    assert libs.session.msamp_step_flag_name(len(flags)) is None
    assert libs.session.msamp_step_flag_name(-1) is None
    assert libs.session.msamp_step_flag_bit(len(flags)) == 0
    assert not hasattr(_native, "STEP_EVAL") and not hasattr(_native, "LR_SCHEDULES")


def test_lr_schedules_are_the_headers():
    libs = _native.libraries()
    enum = re.search(r"typedef enum msamp_lr_schedule \{(.*?)\} msamp_lr_schedule;",
                     _session_header(), re.S).group(1)
    defined = {m.group(1).lower(): int(m.group(2))
               for m in re.finditer(r"MSAMP_LR_([A-Z]+) = (\d+)", enum)}
    assert libs.lr_schedules == defined == {"constant": 0, "cosine": 1}
    assert libs.session.msamp_lr_schedule_name(len(defined)) is None
    assert libs.session.msamp_lr_schedule_name(-1) is None
    # The names select the schedules: cosine decays, constant does not.
    assert session.lr_at(10, 1.0, "constant", 0, 10) == 1.0
    assert session.lr_at(10, 1.0, "cosine", 0, 10) < 0.1
    with pytest.raises(ValueError, match="constant"):
        session.lr_at(1, 1.0, "linear")
