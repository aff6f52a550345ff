"""The AscendC API-surface table (backends/ascend/emit/api_surface.py) and its checker.

Every AscendC name the generator emits must be an entry of the table, whose facts (declaring header,
signature, CANN versions) were read from Huawei's asc-devkit and the CANN 8.1.RC1 headers; the
checker runs on every ascend compile (pipeline.make_cpp). These tests keep the table well formed,
compile the examples and the ascend test kernels and find every name they use in it, plant unknown
names and see them refused, and pin the CANN-8/CANN-9 version switch of the renamed APIs.
"""

from __future__ import annotations

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
        assert a.versions and set(a.versions) <= set(S.BOTH), where
        assert set(a.emitted_in) <= set(a.versions), where
        assert HEX40.match(a.adk), where
        assert a.declared_by in ("adk", "compiler"), where
        if a.c81:  # a path inside the CANN 8.1.RC1 upload, read at commit S.C81
            assert a.c81.split("/")[0] in ("interface", "impl") and a.c81.endswith(".h"), where
            assert "8.x" in a.versions, where
        if "8.x" in a.versions and not a.c81:
            assert a.note, f"{where}: 8.x claimed without a C81 path needs a note saying why"
        if not a.verified or a.declared_by == "compiler":
            assert a.note or a.header.startswith("docs/"), f"{where}: say where the name comes from"
        if "::" in a.name and a.kind in ("method", "field", "enumerator"):
            owner = a.name.split("::")[0]
            assert owner in S.TABLE and S.TABLE[owner].kind in S.TYPE_KINDS, where
        if a.pair:
            other = S.TABLE[a.pair]
            assert other.pair == a.name and set(a.emitted_in).isdisjoint(other.emitted_in), where
    assert S.C81.startswith("leideng/CANN-8.1.RC1@") and len(S.C81.split("@")[1]) == 40


def test_renames_and_version_facts():
    """REFERENCE 0/0.1: CompareScalar -> Compares and SetAtomicNone -> DisableDmaAtomic in CANN 9 (old
    names still declared there, deprecated; new names absent from CANN 8.1)."""
    for old, new in (("CompareScalar", "Compares"), ("SetAtomicNone", "DisableDmaAtomic")):
        assert S.TABLE[old].versions == S.BOTH and S.TABLE[old].emitted_in == ("8.x",)
        assert S.TABLE[new].versions == ("9.x",) and S.TABLE[new].pair == old
    assert S.TABLE["KERNEL_TYPE_AIV_ONLY"].versions == S.BOTH
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
        used |= {u.name for u in s.uses if u.name in S.TABLE}
    # the sources exercise the vector path, the scalar/sync path, atomics, and the Cube + mixed path
    for name in ("kernel_operator.h", "GM_ADDR", "TPipe", "TQue::AllocTensor", "TBuf::GetWithOffset", "DataCopyPad",
                 "DataCopyPadExtParams", "ReduceMax", "Cast", "RoundMode::CAST_RINT", "Select", "Compares",
                 "CompareScalar", "SetAtomicAdd", "SetAtomicNone", "DisableDmaAtomic", "HardEvent::V_S", "event_t",
                 "GlobalTensor::GetValue", "DataCacheCleanAndInvalid", "KERNEL_TYPE_AIV_ONLY",
                 "KERNEL_TYPE_MIX_AIC_1_2", "GetSubBlockIdx", "GetSubBlockNum", "KERNEL_TYPE_AIC_ONLY", "Nd2NzParams",
                 "LoadData2DParams", "Mmad", "DataCopyParams", "TPosition::C1", "TPosition::C2",
                 "FixpipeParamsV220::quantPre", "QuantMode_t::F322F16", "CrossCoreSetFlag", "CrossCoreWaitFlag",
                 "PIPE_FIX", "ASCEND_IS_AIC", "ASCEND_IS_AIV", "ShiftLeft", "__NPU_ARCH__"):
        assert name in used, name


def test_renamed_apis_are_spelled_per_version():
    """Each CANN 8 spelling sits in the #else branch of a version switch whose #if branch spells the CANN 9
    name (the emitter's by_version)."""
    checked = 0
    for name, src in _sources().items():
        lines = src.split("\n")
        where = S._branches(lines)
        for i, line in enumerate(lines):
            for old, new in (("CompareScalar(", "Compares("), ("SetAtomicNone(", "DisableDmaAtomic(")):
                if old not in line:
                    continue
                checked += 1
                group, branch = where[i][-1]
                assert branch == 1, f"{name}:{i + 1}: {old} not in an #else branch"
                first = [ln for ln, c in zip(lines, where) if c and c[-1] == (group, 0)]
                assert any(new in ln for ln in first), f"{name}:{i + 1}: no {new} in the #if branch"
    assert checked >= 2


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
    S.check_source("#define MY_API 9\n#if MY_API >= 9 && defined(__NPU_ARCH__)\n#endif\n" + KERNEL % "")


def test_version_specific_names_need_their_switch():
    assert "CompareScalar" in _refusal("    CompareScalar(x, x, v, CMPMODE::LT, 64);")
    assert "DisableDmaAtomic" in _refusal("    DisableDmaAtomic();")
    guarded = "#define MY_API 9\n#if MY_API >= 9\n    Compares(x, x, v, CMPMODE::LT, 64);\n#else\n" \
              "    CompareScalar(x, x, v, CMPMODE::LT, 64);\n#endif"
    assert _refusal(guarded) is None
    assert "has no Compares" in _refusal(guarded.replace("Compares(", "Adds("))


def test_the_pipeline_checks_every_emitted_source(monkeypatch):
    class _Module:
        context = type("Ctx", (), {"__enter__": lambda s: s, "__exit__": lambda s, *a: None})()

    monkeypatch.setattr(pipeline, "parse_ascendc", lambda text: _Module())
    monkeypatch.setattr(pipeline, "emit", lambda module, meta, opts: KERNEL % "    FooBar(x);")
    with pytest.raises(S.ApiSurfaceError, match="FooBar"):
        pipeline.make_cpp("", {}, None)
    monkeypatch.setattr(pipeline, "emit", lambda module, meta, opts: KERNEL % "")
    assert pipeline.make_cpp("", {}, None) == KERNEL % ""
