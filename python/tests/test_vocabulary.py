"""The package reads the libraries' enumerations instead of restating them.

msamp_dtype_name (runtime dtype codes), msamp_role_name and msamp_memory_category_name
(session) enumerate from 0 up to the first NULL; _native.libraries() reads
them once, and numerics' dtype codes and the memory report's category count
come from there. These tests check the enumeration protocol itself: the
names end exactly where the C enums end, and each name maps back to its code.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from msamp import _native, numerics  # noqa: E402

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
