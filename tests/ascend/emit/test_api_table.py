"""The AscendC API-surface table (backends/ascend/emit/api_surface.py) and its checker.

Every AscendC name the generator emits must be an entry of the table, whose facts (declaring header,
signature, CANN versions) were read from Huawei's asc-devkit and the CANN 8.1.RC1 headers; the
checker runs on every ascend compile (pipeline.make_cpp). These tests keep the table well formed,
compile the examples and the ascend test kernels and find every name they use in it, declared by every
supported CANN release (8.0 to 9.1), plant unknown names and names a release lacks and see them refused.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re

import pytest

import xblock
from xblock.backends.ascend import pipeline
from xblock.backends.ascend.emit import api_surface as S
from xblock.dialects import ascendc

HEX40 = re.compile(r"^[\w.-]+/asc-devkit@[0-9a-f]{40}$")


# ----- the table ------------------------------------------------------------------------------------

def test_entries_are_well_formed():
    assert len(S.TABLE) == len(S.ENTRIES) >= 100
    for a in S.ENTRIES:
        where = f"table entry {a.name}"
        assert a.kind in S.KINDS, where
        assert a.header.split("/")[0] in ("include", "impl", "docs", "cmake"), where
        assert a.header.endswith((".h", ".md", ".cmake", ".py")), where
        assert a.signature.strip(), where
        assert a.versions and set(a.versions) <= set(S.CANN), where
        assert list(a.versions) == [v for v in S.CANN if v in a.versions], f"{where}: releases in order"
        assert HEX40.match(a.adk), where
        assert a.declared_by in ("adk", "compiler"), where
        if a.c81:  # a path inside the CANN 8.1.RC1 upload, read at commit S.C81
            assert a.c81.split("/")[0] in ("interface", "impl") and a.c81.endswith(".h"), where
            assert "8.1" in a.versions, where
        if "8.1" in a.versions and not a.c81:
            assert a.note, f"{where}: 8.1 claimed without a C81 path needs a note saying why"
        if not a.verified or a.declared_by == "compiler":
            assert a.note or a.header.startswith("docs/"), f"{where}: say where the name comes from"
        if "::" in a.name and a.kind in ("method", "field", "enumerator"):
            owner = a.name.split("::")[0]
            assert owner in S.TABLE and S.TABLE[owner].kind in S.TYPE_KINDS, where
        if a.pair:
            assert S.TABLE[a.pair].pair == a.name, where
    assert S.C81.startswith("leideng/CANN-8.1.RC1@") and len(S.C81.split("@")[1]) == 40


def test_every_release_says_where_its_facts_come_from():
    assert set(S.EVIDENCE) == set(S.CANN) and set(S.SUPPORTED) <= set(S.CANN)
    for version, (how, source) in S.EVIDENCE.items():
        assert how in ("read", "inferred") and source, version
        if how == "read":  # headers of that release: the 8.1.RC1 upload or a tagged asc-devkit commit
            assert version == "8.1" and S.C81 in source or HEX40.match(S.ADK_TAGS[version]), version
            assert version == "8.1" or S.ADK_TAGS[version] in source, version
    # the releases between two read ones are inferred from both, never from one side only
    read = [v for v in S.CANN if S.EVIDENCE[v][0] == "read"]
    assert read[0] == "8.1" and "8.5" in read and read[-1] == S.CANN[-1]


def test_renames_and_version_facts():
    """asc-devkit's interface-change notes: CANN 9.0 renamed CompareScalar -> Compares and SetAtomicNone ->
    DisableDmaAtomic; the old names stay declared in 9.0 and 9.1 (v9.0.0, v9.1.0.pre), the new ones are
    absent from 8.1 (C81) and 8.5 (v8.5.0). CANN 9.1 moved WholeReduce* to impl/, still included."""
    for old, new in (("CompareScalar", "Compares"), ("SetAtomicNone", "DisableDmaAtomic")):
        assert S.TABLE[old].versions == S.CANN and S.TABLE[old].pair == new
        assert S.TABLE[new].versions == ("9.0", "9.1") and S.TABLE[new].pair == old
        assert S.TABLE[new].missing_from() == ("8.0", "8.1", "8.2", "8.3", "8.5")
    for k in ("Sum", "Max", "Min"):
        assert S.TABLE[f"WholeReduce{k}"].versions == S.CANN
    assert S.TABLE["KERNEL_TYPE_AIV_ONLY"].versions == S.CANN
    assert "__NPU_ARCH__" not in S.TABLE  # predefined by CANN 8.3, 8.5 and 9 alike: no version probe
    unverified = sorted(a.name for a in S.ENTRIES if not a.verified)
    assert unverified == ["QuantMode_t::F322BF16", "QuantMode_t::F322F16"], unverified


def test_every_api_of_the_dialect_is_in_the_table():
    for op in ascendc.OPS:
        for api in op.api:
            if not api or api.endswith("operator[]"):
                continue
            assert api in S.TABLE, f"ascendc.{op.name} prints {api}, which the API table lacks"


# ----- the generated sources ----------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _sources() -> dict:
    """The AscendC of the examples (vector and Cube) and of the ascend tests' API kernels."""
    from tests.ascend.cube.kernels import dot_kernel
    from tests.ascend.cube.test_cube_bias import _compile as bias_compile
    from tests.ascend.cube.test_cube_golden import DOT_META, DOT_SIG, MM_SIG, UNIT
    from tests.ascend.emit.test_api_surface import BIT_CASES, CASES
    from tests.lit.test_ascend_golden import KERNELS
    from tests.lit.test_ascend_golden import ascendc as example

    out = {name: example(name) for name in KERNELS}
    for kernel, sig, consts in CASES + BIT_CASES:
        out[kernel.__name__] = xblock.compile(kernel, target="ascend", signature=sig, constexprs=consts).asm["cpp"]
    mm = importlib.import_module("examples.matmul")
    out["matmul"] = xblock.compile(mm.matmul_kernel, target="ascend", signature=MM_SIG,
                                   constexprs=dict(mm.META, **UNIT)).asm["cpp"]
    out["dot_relu"] = xblock.compile(dot_kernel, target="ascend", signature=DOT_SIG, constexprs=DOT_META).asm["cpp"]
    out["dot_bias"] = bias_compile("float32", (64, 64, 32), 1, 0).asm["cpp"]  # the BiasTable (C1 -> C2, bias Mmad)
    return out


def test_every_name_the_generated_sources_use_is_in_the_table():
    used = set()
    for name, src in _sources().items():
        s = S.scan(src)
        assert not s.unknown, f"{name}: {[(u.name, u.line, u.text) for u in s.unknown]}"
        assert not S.version_problems(src, s.uses), name
        assert not re.search(r"^\s*#\s*if", src, re.M), f"{name}: kernel.cpp is the same for every CANN"
        used |= {u.name for u in s.uses if u.name in S.TABLE}
    # the sources exercise the vector path, the scalar/sync path, atomics, and the Cube + mixed path
    for name in ("kernel_operator.h", "GM_ADDR", "TPipe", "TQue::AllocTensor", "TBuf::GetWithOffset", "DataCopyPad",
                 "DataCopyPadExtParams", "ReduceMax", "Cast", "RoundMode::CAST_RINT", "Select", "WholeReduceSum",
                 "CompareScalar", "SetAtomicAdd", "SetAtomicNone", "HardEvent::V_S", "event_t",
                 "GlobalTensor::GetValue", "DataCacheCleanAndInvalid", "KERNEL_TYPE_AIV_ONLY",
                 "KERNEL_TYPE_MIX_AIC_1_2", "GetSubBlockIdx", "GetSubBlockNum", "KERNEL_TYPE_AIC_ONLY", "Nd2NzParams",
                 "LoadData2DParams", "Mmad", "DataCopyParams", "TPosition::C1", "TPosition::C2",
                 "FixpipeParamsV220::quantPre", "QuantMode_t::F322F16", "CrossCoreSetFlag", "CrossCoreWaitFlag",
                 "PIPE_FIX", "ASCEND_IS_AIC", "ASCEND_IS_AIV", "ShiftLeft"):
        assert name in used, name
    for name in sorted(used):  # the build of every supported release declares each of them
        assert S.TABLE[name].missing_from(S.SUPPORTED) == (), f"{name} is missing from a supported CANN"


def test_renamed_apis_are_spelled_the_way_every_release_declares():
    """CompareScalar and SetAtomicNone, never their CANN 9 names, and no version switch around them."""
    calls = {"CompareScalar(": 0, "SetAtomicNone(": 0}
    for name, src in _sources().items():
        assert "Compares(" not in src and "DisableDmaAtomic(" not in src and "__NPU_ARCH__" not in src, name
        for call in calls:
            calls[call] += src.count(call)
    assert all(calls.values()), calls


# ----- the checker ----------------------------------------------------------------------------------

KERNEL = """#include "kernel_operator.h"
#include "k_tiling.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k(GM_ADDR x_ptr, KTilingData tiling)
{
    TPipe pipe;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float *)x_ptr);
    const int64_t n = tiling.numPrograms;
    TQue<TPosition::VECIN, 1> inQueueX;
    pipe.InitBuffer(inQueueX, 2, 256);
    LocalTensor<float> x = inQueueX.AllocTensor<float>();
    DataCopy(x, xGm[n * 64], 64);
    const float v = x.GetValue(0) + 1.5e-3f;
%s
}
"""


def _refusal(body: str) -> str | None:
    try:
        S.check_source(KERNEL % body)
    except S.ApiSurfaceError as e:
        return str(e)
    return None


def test_a_clean_kernel_passes():
    assert _refusal("    Adds(x, x, v, 64);") is None
    assert {"DataCopy", "TPipe::InitBuffer", "LocalTensor::GetValue", "TPosition::VECIN"} <= S.used_names(KERNEL % "")


@pytest.mark.parametrize("body,name", [
    ("    FooBar(x);", "FooBar"),
    ("    AscendC::FooBar(x);", "FooBar"),
    ("    pipe.Frobnicate(1);", "TPipe::Frobnicate"),
    ("    x.GetWithOffset<float>(1, 0);", "LocalTensor::GetWithOffset"),
    ("    SetFlag<HardEvent::X_Y>(0);", "HardEvent::X_Y"),
    ("    PairReduceSum(x, x, 1, 64, 1, 1, 8);", "PairReduceSum"),
    ("    Mystery y;", "Mystery"),
    ("    const float w = undeclared + 1;", "undeclared"),
])
def test_unknown_names_are_refused(body, name):
    msg = _refusal(body)
    assert msg and msg.startswith("internal:") and f"{name} (line 15" in msg, msg


def test_unknown_include_and_macro_are_refused():
    with pytest.raises(S.ApiSurfaceError, match="other.h"):
        S.check_source((KERNEL % "").replace('#include "k_tiling.h"', '#include "other.h"'))
    with pytest.raises(S.ApiSurfaceError, match="SOME_MACRO"):
        S.check_source("#if SOME_MACRO\n#endif\n" + KERNEL % "")
    S.check_source("#define MY_API 9\n#if MY_API >= 9\n#endif\n" + KERNEL % "")
    with pytest.raises(S.ApiSurfaceError, match="__NPU_ARCH__"):  # no compiler-macro version probe
        S.check_source("#if defined(__NPU_ARCH__)\n#endif\n" + KERNEL % "")


def test_names_a_supported_release_lacks_are_refused():
    msg = _refusal("    Compares(x, x, v, CMPMODE::LT, 64);")
    assert msg and "Compares is not declared by CANN 8.0, 8.1, 8.2, 8.3, 8.5 (line 15" in msg, msg
    assert "spell it CompareScalar" in msg and "must build with CANN 8.0, 8.1, 8.2, 8.3, 8.5, 9.0, 9.1" in msg
    assert "DisableDmaAtomic is not declared by CANN 8.0" in _refusal("    DisableDmaAtomic();")
    # a version switch does not help: CANN 8.3 and 8.5 take the same branch as CANN 9
    switched = "#define MY_API 9\n#if MY_API >= 9\n    Compares(x, x, v, CMPMODE::LT, 64);\n#else\n" \
               "    CompareScalar(x, x, v, CMPMODE::LT, 64);\n#endif"
    assert "Compares is not declared" in _refusal(switched)
    assert _refusal("    CompareScalar(x, x, v, CMPMODE::LT, 64);\n    SetAtomicNone();") is None


def test_a_name_dropped_by_one_release_is_refused(monkeypatch):
    """Were a release to drop a name the generator emits (as 9.1 moved WholeReduce* out of include/), every
    kernel using it is refused at compile time, naming the release."""
    monkeypatch.setitem(S.TABLE, "Adds", dataclasses.replace(S.TABLE["Adds"], versions=("8.0", "8.1", "8.2", "8.5",
                                                                                       "9.0", "9.1")))
    msg = _refusal("    Adds(x, x, v, 64);")
    assert msg and "Adds is not declared by CANN 8.3 (line 15: `Adds(x, x, v, 64);`)" in msg, msg
    assert S.version_problems(KERNEL % "    Adds(x, x, v, 64);", releases=("9.0", "9.1")) == []


def test_the_pipeline_checks_every_emitted_source(monkeypatch):
    class _Module:
        context = type("Ctx", (), {"__enter__": lambda s: s, "__exit__": lambda s, *a: None})()

    monkeypatch.setattr(pipeline, "parse_ascendc", lambda text: _Module())
    monkeypatch.setattr(pipeline, "emit", lambda module, meta, opts: KERNEL % "    FooBar(x);")
    with pytest.raises(S.ApiSurfaceError, match="FooBar"):
        pipeline.make_cpp("", {}, None)
    monkeypatch.setattr(pipeline, "emit", lambda module, meta, opts: KERNEL % "")
    assert pipeline.make_cpp("", {}, None) == KERNEL % ""
