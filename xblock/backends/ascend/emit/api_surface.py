"""The AscendC API surface the generator may emit, each name checked against Huawei's dev kit.

`TABLE` lists every AscendC name (function, method, class or struct and its fields, enum and the
members the generator uses, macro, qualifier, built-in type, header) that `emit.py`/`cube_emit.py`
can write into a kernel. Each `Api` records *facts* read from the dev kit, in xblock's own notation
(no header text is copied; the kits are CANN-licensed, see shared/ascendc/REFERENCE.md 0):

- `header`: the path, inside asc-devkit, of the header (or, for compiler-provided names, the doc
  page or the header that uses it) that declares the name;
- `adk`: the asc-devkit copy and commit that header was read at (the CANN 9.x era sources);
- `c81`: the path inside the CANN 8.1.RC1 toolkit upload (commit `C81`) where the 8.x declaration
  was read, or "" when 8.x is claimed from other evidence (said in `note`);
- `versions`: the CANN releases that declare it, from `CANN` (finer than a major version where the
  facts differ: CANN 9.0 added `Compares`/`DisableDmaAtomic`, 9.1 moved `WholeReduce*` to impl/);
  how each release's facts were obtained is in `EVIDENCE`;
- `pair`: the other generation's name of a renamed API (`CompareScalar` / `Compares`);
- `declared_by`: "adk" for names the kit's headers declare, "compiler" for names the bisheng/ccec
  compiler provides (types, qualifiers, predefined macros, `pipe_t`/`QuantMode_t` enumerators);
- `verified`: False where the declaration could not be pinned to an asc-devkit file (`note` says why).

`check_source(cpp)` extracts the names a generated kernel uses (calls, template and type names,
`Enum::Member`, `object.member`, macros, `#include`s) and refuses any that is neither in the table,
nor C++ (keywords, fixed-width integer types, `__builtin_*`), nor declared by the kernel itself
(locals, parameters, the tiling struct and its fields, `<KERNEL>_WORKSPACE_BYTES`, the kernel
name, its own `#define`s), and any table name that a release in `SUPPORTED` does not declare: the
generator spells each API the one way every supported CANN declares, so kernel.cpp has no version
switch (a compiler-macro probe cannot tell releases apart: CANN 8.3 and 8.5 predefine
`__NPU_ARCH__` as CANN 9 does, and declare neither `Compares` nor `DisableDmaAtomic`). It is
regex-based (no C++ parser) and runs on every ascend compile (pipeline.make_cpp).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ....errors import XBlockError

# CANN releases the table records (the toolkit's version, major.minor); SUPPORTED: those every
# generated kernel must build with (docs/STATUS.md "CANN versions").
CANN = ("8.0", "8.1", "8.2", "8.3", "8.5", "9.0", "9.1")
SUPPORTED = CANN
ALL = CANN
NEW_IN_9 = ("9.0", "9.1")
# where the facts were read (read_file of the search tool's stored copies)
ADK9 = "mirror-cann/asc-devkit@59c87719c4897ca2dae6d5cf6b9af37a45fc4665"
ADK9_IMPL = "mirror-cann/asc-devkit@2e0db4c974267cfa568f248abf1aea415395c7e7"
ADK9_TPIPE = "mirror-cann/asc-devkit@2064b7280e25b388333565e6af3e9e9d34e52e01"
ADK9_EVENT = "mirror-cann/asc-devkit@0d0b09871448195752515cdafe7ea804365cc8df"
ADK9_SYS = "mirror-cann/asc-devkit@5f7c6a4894f28af3c801f516b3ac6dc4d7e5d6fa"
ADK9_GUIDE = "mirror-cann/asc-devkit@013c151f548e5080ef8c82e146914545c49996c2"
ADK9_DOCS = "mirror-cann/asc-devkit@12402351ba53745d271d5129d4f9afa4031436a8"
ADK_ATOMIC_OLD = "cannmirror/asc-devkit@0d78e35affbfd4530add2ff20dd9bdd1fe86188a"
# LoadDataWithTranspose and its params (kernel_struct_mm.h:94)
ADK_CUBE_DTYPES = "cannmirror/asc-devkit@0da921b91aeb2abdc6e8d74423b0bbe7040c3fd1"
C81 = "leideng/CANN-8.1.RC1@4332a0134a96cfea4a4f6673690a81075c1e4dfb"
C81_ROOT = "Ascend/ascend-toolkit/8.1.RC1/aarch64-linux/ascendc/include/basic_api/"
# the asc-devkit release tags every "adk" entry was looked up at (its name in its header, or, where the
# header moved, in the kit's include/ or impl/): a release in an entry's `versions` was read there
ADK_TAGS = {"8.5": "cannmirror/asc-devkit@cc982f3abd7628a2ba3ef61063a0c220c9340c53",  # v8.5.0
            "9.0": "cannmirror/asc-devkit@c8c1b9df6bb9cd61c09751c7ef414b89e06af274",  # v9.0.0 (and v9.0.1)
            "9.1": "cannmirror/asc-devkit@1de5b49f75a2c8f83a238b6ccbb54bf6cf8fb65c"}  # v9.1.0.pre (and HEAD)
CHANGES_DOC = "docs/zh/api/附录/接口变更说明.md"  # the kit's interface-change notes (HEAD)
# how each release's facts were obtained: "read" (its headers), or "inferred" (with the reason)
EVIDENCE = {
    "8.0": ("inferred", "no 8.0 headers are public; the interface-change notes (" + CHANGES_DOC + ") list "
                        "renames from 9.0 on only, relative to 'CANN 8.5.0 and earlier', and the names are "
                        "those of the CANN 6-8 samples (REFERENCE 3.1): taken as declared where 8.1 declares them"),
    "8.1": ("read", C81 + " (the CANN 8.1.RC1 toolkit's basic_api headers, each entry's `c81` path)"),
    "8.2": ("inferred", "between 8.1 and 8.5, both read; the interface-change notes list no change before 9.0"),
    "8.3": ("inferred", "between 8.1 and 8.5, both read; the interface-change notes list no change before 9.0. "
                        "Its compiler predefines __NPU_ARCH__ (2201 on A2/A3): hiascend CANNCommunityEdition "
                        "83RC1alpha001 .../cceintrinsicguide/cceprogram_0014.html"),
    "8.5": ("read", ADK_TAGS["8.5"] + " (v8.5.0); __NPU_ARCH__ predefined: hiascend CANNCommunityEdition "
                    "850alpha001 .../cceintrinsicguide/cceprogram_0014.html"),
    "9.0": ("read", ADK_TAGS["9.0"] + " (v9.0.0; v9.0.1 c3e271c3 the same for these names)"),
    "9.1": ("read", ADK_TAGS["9.1"] + " (v9.1.0.pre; HEAD 0da921b9 the same for these names)"),
}

KINDS = ("function", "method", "class", "struct", "field", "enum", "enumerator", "macro", "type-macro",
         "qualifier", "type", "namespace", "header")
TYPE_KINDS = ("class", "struct", "type", "type-macro", "enum")


@dataclass(frozen=True)
class Api:
    """One AscendC name the generator may emit (see the module docstring for the fields)."""

    name: str  # as spelled in C++: "DataCopyPad", "TPipe::InitBuffer", "HardEvent::V_S", "PIPE_FIX"
    kind: str
    header: str
    signature: str
    versions: tuple = ALL
    adk: str = ADK9
    c81: str = ""
    note: str = ""
    declared_by: str = "adk"
    verified: bool = True
    pair: str = ""  # the other CANN generation's name of this API

    def missing_from(self, releases=SUPPORTED) -> tuple:
        """The releases of `releases` that do not declare this name."""
        return tuple(v for v in releases if v not in self.versions)


_I = "include/basic_api/"
_BIN, _UN, _SCAL = _I + "kernel_operator_vec_binary_intf.h", _I + "kernel_operator_vec_unary_intf.h", \
    _I + "kernel_operator_vec_binary_scalar_intf.h"
_CMPSEL, _RED, _DC = _I + "kernel_operator_vec_cmpsel_intf.h", _I + "kernel_operator_vec_reduce_intf.h", \
    _I + "kernel_operator_data_copy_intf.h"
_TENSOR, _TPIPE, _SDC = _I + "kernel_tensor.h", _I + "kernel_tpipe.h", _I + "kernel_struct_data_copy.h"
_MM, _SMM = _I + "kernel_operator_mm_intf.h", _I + "kernel_struct_mm.h"
_FIX, _SFIX = _I + "kernel_operator_fixpipe_intf.h", _I + "kernel_struct_fixpipe.h"
_SYNC, _ATOMIC = _I + "kernel_operator_block_sync_intf.h", _I + "kernel_operator_set_atomic_intf.h"
_MACROS, _MODE = "impl/basic_api/utils/kernel_utils_macros.h", "impl/basic_api/utils/kernel_utils_mode.h"
_SYSM, _REG = "impl/utils/sys_macros.h", "impl/basic_api/kernel_reg.h"
_BUILTIN_DOC = "docs/zh/guide/编程指南/语言扩展层/SIMD-BuiltIn关键字.md"
_TYPES_DOC = "docs/zh/api/SIMD-API/基础API/数据结构/内置数据类型.md"
_PIPES_DOC = "docs/zh/api/SIMD-API/基础API/同步控制/核内同步/核内同步能力概述.md"
# CANN 8.1.RC1 files (under C81_ROOT)
_C_BIN, _C_UN, _C_SCAL = "interface/kernel_operator_vec_binary_intf.h", "interface/kernel_operator_vec_unary_intf.h", \
    "interface/kernel_operator_vec_binary_scalar_intf.h"
_C_CMPSEL, _C_RED = "interface/kernel_operator_vec_cmpsel_intf.h", "interface/kernel_operator_vec_reduce_intf.h"
_C_DC, _C_SDC = "interface/kernel_operator_data_copy_intf.h", "interface/kernel_struct_data_copy.h"
_C_TENSOR, _C_TPIPE = "interface/kernel_tensor.h", "interface/kernel_tpipe.h"
_C_COMMON, _C_KCOMMON = "interface/kernel_operator_common_intf.h", "interface/kernel_common.h"
_C_MM, _C_SMM = "interface/kernel_operator_mm_intf.h", "interface/kernel_struct_mm.h"
_C_FIX, _C_SFIX = "interface/kernel_operator_fixpipe_intf.h", "interface/kernel_struct_fixpipe.h"
_C_MACROS, _C_MODE = "impl/utils/kernel_utils_macros.h", "impl/utils/kernel_utils_mode.h"
_C_EVENT, _C_REG = "impl/kernel_event.h", "impl/kernel_reg.h"

_COUNT = "(dst, src0, src1, int32 count) [count form]"
_MASKED = _COUNT + "; (dst, src0, src1, uint64 mask, uint8 repeatTime, const BinaryRepeatParams&) [mask/repeat form]"
# the per-row forms (rowvec.py), read at asc-devkit HEAD and at the last tag declaring WholeReduce* in include/
ADK_HEAD = ADK_CUBE_DTYPES
ADK_901 = "cannmirror/asc-devkit@c3e271c396ca036aa76be5745b4b4c242eeb06a2"  # tag v9.0.1
_RED_IMPL = "impl/basic_api/kernel_operator_vec_reduce_intf_impl.h"


_PROPOSAL, _SPROPOSAL = _I + "kernel_operator_proposal_intf.h", _I + "kernel_struct_proposal.h"
_C_PROPOSAL = "interface/kernel_operator_proposal_intf.h"
_SORT_DOCS = "docs/zh/api/SIMD-API/"
_SORT_FAMILY = (  # (name, kind, signature, where the semantics were read)
    ("Sort", "function", "template <T, bool isFullSort> Sort(LocalTensor<T> dst, const LocalTensor<T>& concat, "
     "const LocalTensor<uint32_t>& index, LocalTensor<T>& tmp, int32 repeatTime) [half/float; 32 * repeatTime "
     "scores into 8-byte (score, index) pairs (index in the high 4 bytes), descending; equal scores keep their "
     "order; isFullSort merges all groups through tmp (as large as dst); repeatTime 0..255]",
     _SORT_DOCS + "高阶API/排序操作/Sort.md; A2 impl: Sort32 then MrgSort passes "
     "(impl/basic_api/dav_c220/kernel_operator_proposal_impl.h, DoFullSort)"),
    ("Extract", "function", "template <T> Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& "
     "dstIndex, const LocalTensor<T>& sorted, int32 repeatTime) [32 * repeatTime pairs split into scores and "
     "indices]", _SORT_DOCS + "高阶API/排序操作/Extract.md"),
    ("Concat", "function", "template <T> Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const "
     "LocalTensor<T>& tmp, int32 repeatTime) [A2: concat = src]",
     _SORT_DOCS + "高阶API/排序操作/Concat.md; A2: impl/basic_api/kernel_operator_proposal_intf_impl.h"),
    ("Sort32", "function", "template <T> Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const "
     "LocalTensor<uint32_t>& src1, int32 repeatTime) [groups of 32, descending, stable]",
     _SORT_DOCS + "基础API/Memory矢量计算/排序组合（ISASI）/Sort32.md"),
    ("MrgSort", "function", "template <T> MrgSort(dst, const MrgSortSrcList<T>&, const MrgSort4Info&); "
     "template <T, bool isExhaustedSuspension = false> MrgSort(dst, const MrgSortSrcList<T>&, const uint16 "
     "elementCountList[4], uint32 sortedNum[4], uint16 validBit, int32 repeatTime) [2-4 lists, descending, "
     "stable; lengths 0..4095]", _SORT_DOCS + "基础API/Memory矢量计算/排序组合（ISASI）/MrgSort.md, 高阶API/排序操作/"
     "MrgSort-93.md"),
    ("GetSortOffset", "function", "template <T> uint32 GetSortOffset(uint32 elemOffset) [elements of T: 8 bytes "
     "a pair]", _SORT_DOCS + "高阶API/排序操作/GetSortOffset.md"),
    ("GetSortLen", "function", "template <T> uint32 GetSortLen(uint32 elemCount)",
     _SORT_DOCS + "高阶API/排序操作/GetSortLen.md"),
    ("MrgSortSrcList", "struct", "template <T> struct MrgSortSrcList { LocalTensor<T> src1, src2, src3, src4; }",
     _SORT_DOCS + "基础API/Memory矢量计算/排序组合（ISASI）/MrgSort.md"),
    ("MrgSort4Info", "struct", "struct MrgSort4Info { uint16 elementLengths[4]; bool ifExhaustedSuspension; "
     "uint16 validBit; uint8 repeatTimes; }", _SORT_DOCS + "基础API/Memory矢量计算/排序组合（ISASI）/MrgSort.md"),
)


def _vec(names, header, c81, sig):
    return [Api(n, "function", header, f"{n}{sig}", c81=c81) for n in names]


def _members(enum, names, header, adk, c81, sig="", **kw):
    return [Api(f"{enum}::{n}", "enumerator", header, sig or f"enumerator of {enum}", adk=adk, c81=c81, **kw)
            for n in names]


ENTRIES: list[Api] = [
    # --- the kernel file: header, namespace, qualifiers, macros -----------------------------------
    Api("kernel_operator.h", "header", "include/kernel_operator.h", '#include "kernel_operator.h": the AscendC API',
        note="8.x: the include of every CANN 6-8 kernel sample (REFERENCE 3.1); not located in the C81 copy"),
    Api("AscendC", "namespace", _TENSOR, "namespace AscendC { ... } of every API", c81=_C_TENSOR),
    Api("__global__", "qualifier", _BUILTIN_DOC, "__global__: kernel entry (returns void, launched by the host)",
        adk=ADK9_GUIDE, declared_by="compiler",
        note="bisheng/ccec keyword, documented there; 8.x: `extern \"C\" __global__ __aicore__` of the CANN 6-8 "
             "samples (REFERENCE 1.1)"),
    Api("__aicore__", "qualifier", _SYSM, "#define __aicore__ [aicore]: runs on the AI Core", adk=ADK9_SYS,
        c81=_C_MACROS, note="8.x: qualifies every declaration of the C81 headers"),
    Api("__gm__", "qualifier", _BUILTIN_DOC, "__gm__: address space qualifier, device global memory", adk=ADK9_GUIDE,
        c81=_C_MACROS, declared_by="compiler", note="8.x: used by C81's GM_ADDR definition"),
    Api("GM_ADDR", "type-macro", _MACROS, "#define GM_ADDR __gm__ uint8_t*", adk=ADK9_IMPL, c81=_C_MACROS),
    Api("KERNEL_TASK_TYPE_DEFAULT", "macro", _MACROS, "KERNEL_TASK_TYPE_DEFAULT(KernelMetaType value): kernel type",
        adk=ADK9_IMPL, c81=_C_MACROS, note="9.x: expands to nothing on __NPU_ARCH__ 3003/3113"),
    *[Api(k, "enumerator", _MACROS, f"enum KernelMetaType : uint8_t member ({what})", adk=ADK9_IMPL, c81=_C_MACROS)
      for k, what in (("KERNEL_TYPE_AIV_ONLY", "vector cores only"), ("KERNEL_TYPE_AIC_ONLY", "cube cores only"),
                      ("KERNEL_TYPE_MIX_AIC_1_1", "1 AIC : 1 AIV"), ("KERNEL_TYPE_MIX_AIC_1_2", "1 AIC : 2 AIV"))],
    Api("ASCEND_IS_AIC", "macro", _SYSM, "`if ASCEND_IS_AIC {`: constexpr(g_coreType == AscendC::AIC)", adk=ADK9_SYS,
        c81=_C_MACROS),
    Api("ASCEND_IS_AIV", "macro", _SYSM, "`if ASCEND_IS_AIV {`: constexpr(g_coreType == AscendC::AIV)", adk=ADK9_SYS,
        c81=_C_MACROS),
    # --- built-in types -------------------------------------------------------------------------
    Api("half", "type", _TYPES_DOC, "16-bit IEEE float (FP16)", adk=ADK9_DOCS, c81=_C_TENSOR, declared_by="compiler",
        note="8.x: used by C81's LocalTensor (SymbolOverrideCompare<half>)"),
    Api("bfloat16_t", "type", _TYPES_DOC, "bfloat16 (BF16): 1 sign, 8 exponent, 7 mantissa bits", adk=ADK9_DOCS,
        declared_by="compiler", note="8.x: A2 moves/casts bf16 (REFERENCE 1.7); not re-read in the C81 headers"),
    Api("event_t", "type", "impl/basic_api/kernel_event.h", "event id of SetFlag/WaitFlag: "
        "static_cast<event_t>(pipe.FetchEventID(HardEvent::X))", adk=ADK9_EVENT, declared_by="compiler",
        note=f"compiler type used (not declared) by the ADK (SetFlagInternal(event_t)); the same cast is the "
             f"example of {_BUILTIN_DOC}; 8.x: OPSNN rms_norm idiom (REFERENCE 1.3)"),
    *[Api(p, "enumerator", _PIPES_DOC, f"pipe_t member: {what}", adk=ADK9_GUIDE, c81=_C_EVENT, declared_by="compiler",
          note="compiler enum pipe_t; the ADK uses it (CrossCoreWaitFlag's default PIPE_S, kernel_event.h)")
      for p, what in (("PIPE_S", "scalar"), ("PIPE_MTE2", "GM->L1/UB moves"), ("PIPE_MTE3", "UB->GM moves"),
                      ("PIPE_FIX", "L0C->GM/L1 moves"))],
    # --- tensors and the pipe -------------------------------------------------------------------
    Api("GlobalTensor", "class", _TENSOR, "template <T> class GlobalTensor: a view of GM", c81=_C_TENSOR),
    Api("GlobalTensor::SetGlobalBuffer", "method", _TENSOR, "SetGlobalBuffer(__gm__ T* buffer[, uint64 size])",
        c81=_C_TENSOR),
    Api("GlobalTensor::GetValue", "method", _TENSOR, "T GetValue(uint64 offset) const [scalar pipe]", c81=_C_TENSOR),
    Api("GlobalTensor::SetValue", "method", _TENSOR, "SetValue(uint64 offset, T value)", c81=_C_TENSOR),
    Api("GlobalTensor::SetL2CacheHint", "method", _TENSOR, "template <CacheRwMode rwMode = CacheRwMode::RW> "
        "SetL2CacheHint(CacheMode mode) [after SetGlobalBuffer: it re-derives the address from the buffer's; A2/A3: "
        "DISABLE adds the runtime's l2Cacheoffset to the address]", adk=ADK_HEAD, c81=_C_TENSOR,
        note="read at v8.5.0, v9.0.0, v9.1.0.pre (include/basic_api/kernel_tensor.h) and HEAD; semantics: "
             "docs/zh/api/SIMD-API/基础API/数据结构/GlobalTensor/SetL2CacheHint.md (A2/A3/950 only; not the 310P) and "
             "impl/basic_api/kernel_tensor_impl.h; the --sanitizer build ignores it (AI-Core算子编译基本用法.md)"),
    Api("CacheMode", "enum", _MACROS, "enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, "
        "CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 } (namespace AscendC)", adk=ADK_HEAD, c81=_C_MACROS,
        note="the same members at v8.5.0, v9.0.0, v9.1.0.pre and in C81; 9.1 also declares AscendC::Te::CacheMode "
             "(include/tensor_api/utils/utils.h, the tensor API's), which `CacheMode` under `using namespace "
             "AscendC` does not name"),
    *_members("CacheMode", ("CACHE_MODE_DISABLE",), _MACROS, ADK_HEAD, _C_MACROS,
              sig="the GlobalTensor's reads and writes do not allocate in L2 (SetL2CacheHint.md)"),
    Api("LocalTensor", "class", _TENSOR, "template <T> class LocalTensor: a view of UB/L1/L0", c81=_C_TENSOR),
    Api("LocalTensor::GetValue", "method", _TENSOR, "T GetValue(uint32 index) const [scalar pipe]", c81=_C_TENSOR),
    Api("LocalTensor::SetValue", "method", _TENSOR, "template <S> SetValue(uint32 index, S value) const",
        c81=_C_TENSOR),
    Api("LocalTensor::ReinterpretCast", "method", _TENSOR, "template <U> LocalTensor<U> ReinterpretCast() const",
        c81=_C_TENSOR),
    Api("TPipe", "class", _TPIPE, "class TPipe: owns the queues' and buffers' memory", adk=ADK9_TPIPE, c81=_C_TPIPE),
    Api("TPipe::InitBuffer", "method", _TPIPE, "bool InitBuffer(TQue& que, uint8 num, uint32 bytes); "
        "bool InitBuffer(TBuf<pos>& buf, uint32 bytes)", adk=ADK9_TPIPE, c81=_C_TPIPE),
    Api("TPipe::FetchEventID", "method", _TPIPE, "TEventID FetchEventID(HardEvent evt)", adk=ADK9_TPIPE, c81=_C_TPIPE),
    Api("TQue", "class", _TPIPE, "template <TPosition pos, int32 depth, auto mask = 0> class TQue : TQueBind",
        adk=ADK9_TPIPE, c81=_C_TPIPE),
    *[Api(f"TQue::{m}", "method", _TPIPE, f"{sig} (TQueBind)", adk=ADK9_TPIPE, c81=_C_TPIPE)
      for m, sig in (("AllocTensor", "template <T> LocalTensor<T> AllocTensor()"),
                     ("EnQue", "template <T> bool EnQue(const LocalTensor<T>&)"),
                     ("DeQue", "template <T> LocalTensor<T> DeQue()"),
                     ("FreeTensor", "template <T> void FreeTensor(LocalTensor<T>&)"))],
    Api("TBuf", "class", _TPIPE, "template <TPosition pos = TPosition::LCM> class TBuf", adk=ADK9_TPIPE, c81=_C_TPIPE),
    Api("TBuf::GetWithOffset", "method", _TPIPE, "template <T> LocalTensor<T> GetWithOffset(uint32 count, "
        "uint32 byteOffset)", adk=ADK9_TPIPE, c81=_C_TPIPE),
    Api("TPosition", "enum", "impl/basic_api/common_types.h", "enum class TPosition : uint8_t", adk=ADK9_IMPL,
        c81=_C_EVENT),
    *_members("TPosition", ("VECIN", "VECOUT", "VECCALC", "A1", "B1", "A2", "B2", "CO1"),
              "impl/basic_api/common_types.h", ADK9_IMPL, _C_EVENT),
    *_members("TPosition", ("C1", "C2"), "impl/basic_api/common_types.h", ADK_HEAD, _C_EVENT,
              note="C1: L1 (the bias row on its way); C2: the BiasTable, 1 KB on A2/A3 (docs/zh/api/SIMD-API/"
                   "通用说明和约束.md table 1; .../矩阵数据搬入至L0-Buffer/"
                   "L1ToBiasTable-Buffer数据搬运（DataCopy）.md)"),
    # --- system variables, sync, atomics, cache --------------------------------------------------
    Api("GetBlockIdx", "function", _I + "kernel_operator_sys_var_intf.h", "int64 GetBlockIdx()", c81=_C_COMMON),
    Api("GetBlockNum", "function", _I + "kernel_operator_sys_var_intf.h", "int64 GetBlockNum()", c81=_C_COMMON),
    Api("GetSubBlockIdx", "function", _I + "kernel_operator_sys_var_intf.h", "int64 GetSubBlockIdx()",
        c81=_C_COMMON, note="the AIV's index in its AI Core (0 or 1 in a MIX_AIC_1_2 kernel)"),
    Api("GetSubBlockNum", "function", _I + "kernel_operator_sys_var_intf.h", "int64 GetSubBlockNum()",
        c81=_C_COMMON, note="AIVs per AI Core on an AIV (2 in MIX_AIC_1_2), 1 on an AIC"),
    Api("HardEvent", "enum", "impl/basic_api/kernel_event.h", "enum class HardEvent : uint8_t (SRC_DST pipes)",
        adk=ADK9_EVENT, c81=_C_EVENT),
    # the events of NPU arch 2201 (A2/A3): HardEventAiv and HardEventAic of the same header, both kits
    *_members("HardEvent", ("MTE2_V", "V_MTE2", "MTE3_V", "V_MTE3", "V_V", "S_V", "V_S"),
              "impl/basic_api/kernel_event.h", ADK9_EVENT, _C_EVENT, sig="HardEvent member, AIV (HardEventAiv)"),
    *_members("HardEvent", ("MTE3_MTE2", "MTE2_MTE3", "S_MTE2", "MTE2_S", "S_MTE3", "MTE3_S"),
              "impl/basic_api/kernel_event.h", ADK9_EVENT, _C_EVENT, sig="HardEvent member, AIV and AIC"),
    *_members("HardEvent", ("MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE3_MTE1", "MTE1_MTE3", "MTE2_M",
                            "M_MTE2", "M_FIX", "FIX_M", "MTE2_FIX", "FIX_MTE2", "FIX_S", "M_S", "FIX_MTE3",
                            "MTE1_FIX", "FIX_MTE1", "FIX_FIX"),
              "impl/basic_api/kernel_event.h", ADK9_EVENT, _C_EVENT, sig="HardEvent member, AIC (HardEventAic)"),
    Api("SetFlag", "function", _SYNC, "template <HardEvent e> SetFlag(int32 eventID)", c81=_C_KCOMMON),
    Api("WaitFlag", "function", _SYNC, "template <HardEvent e> WaitFlag(int32 eventID)", c81=_C_KCOMMON),
    Api("PipeBarrier", "function", _SYNC, "template <pipe_t pipe> PipeBarrier()", c81=_C_KCOMMON,
        note="declared beside SetFlag/WaitFlag in both kits; the generator orders overlapping copies to GM with "
             "PipeBarrier<PIPE_MTE3> (docs/api/context/基础数据搬运.md, constraints)"),
    Api("CrossCoreSetFlag", "function", _SYNC, "template <uint8 modeId, pipe_t pipe> CrossCoreSetFlag(uint16 flagId)",
        c81=_C_COMMON),
    Api("CrossCoreWaitFlag", "function", _SYNC, "template <uint8 modeId = 0, pipe_t pipe = PIPE_S> "
        "CrossCoreWaitFlag(uint16 flagId)", c81=_C_COMMON),
    Api("SetAtomicAdd", "function", _ATOMIC, "template <T> SetAtomicAdd(): later GM writes accumulate",
        c81="interface/kernel_operator_set_atomic_intf.h"),
    *[Api(f"SetAtomic{m}", "function", _ATOMIC, f"template <T> SetAtomic{m}(): later copies to GM keep the "
          f"{what} of the copied and the held element [A2: T int8_t/int16_t/half/bfloat16_t/int32_t/float; "
          f"UB/L0C/L1 -> GM; not on 310P]", c81="interface/kernel_operator_set_atomic_intf.h",
          note=f"support and types: ADK docs/zh/api/SIMD-API/基础API/原子操作/SetAtomic{m}(ISASI).md "
               f"({ADK9_DOCS})")
      for m, what in (("Max", "larger"), ("Min", "smaller"))],
    Api("SetAtomicNone", "function", _ATOMIC, "SetAtomicNone(): end the atomic mode",
        c81="interface/kernel_operator_set_atomic_intf.h", pair="DisableDmaAtomic",
        note="declared by every release; 9.0 and 9.1 mark it deprecated by a header comment only ('has been "
             "updated, please use DisableDmaAtomic instead'; no [[deprecated]] attribute, so no warning), and "
             f"{CHANGES_DOC} lists the rename relative to 8.5.0 and earlier; also declared at {ADK_ATOMIC_OLD}"),
    Api("DisableDmaAtomic", "function", _ATOMIC, "DisableDmaAtomic(): end the atomic mode (CANN 9 name)",
        versions=NEW_IN_9, pair="SetAtomicNone",
        note="absent from C81's and v8.5.0's kernel_operator_set_atomic_intf.h; new in 9.0"),
    Api("DataCacheCleanAndInvalid", "function", _I + "kernel_operator_cache_intf.h",
        "template <T, CacheLine, DcciDst> DataCacheCleanAndInvalid(const GlobalTensor<T>&)", c81=_C_KCOMMON),
    Api("CacheLine", "enum", _REG, "enum class CacheLine : uint64_t", adk=ADK9_IMPL, c81=_C_REG),
    *_members("CacheLine", ("SINGLE_CACHE_LINE",), _REG, ADK9_IMPL, _C_REG),
    Api("DcciDst", "enum", _REG, "enum class DcciDst : uint64_t", adk=ADK9_IMPL, c81=_C_REG),
    *_members("DcciDst", ("CACHELINE_OUT",), _REG, ADK9_IMPL, _C_REG),
    # --- data movement ---------------------------------------------------------------------------
    Api("DataCopy", "function", _DC, "DataCopy(Local dst, Global src, uint32 count) [MTE2]; DataCopy(Global dst, "
        "Local src, uint32 count) [MTE3]; DataCopy(Local dst, Global src, const Nd2NzParams&) [GM->L1]; "
        "DataCopy(Local dst, Local src, const DataCopyParams&) [L1 (C1) -> BiasTable (C2) among others]", c81=_C_DC,
        note="L1 -> BiasTable on A2: dst C2 64-B aligned, src L1 32-B aligned, blockLen and dstGap in 64 B, srcGap in "
             "32 B, dst float/int32 (docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/矩阵计算的搬入/"
             "矩阵数据搬入至L0-Buffer/L1ToBiasTable-Buffer数据搬运（DataCopy）.md, read at " + ADK_HEAD + ")"),
    Api("DataCopyParams", "struct", _SDC, "DataCopyParams(uint16 blockCount, uint16 blockLen, uint16 srcStride, "
        "uint16 dstStride); srcGap/dstGap alias the strides", adk=ADK_HEAD, c81=_C_SDC),
    Api("DataCopyPad", "function", _DC, "DataCopyPad(Local dst, Global src, const DataCopyExtParams&, "
        "const DataCopyPadExtParams<T>&) [MTE2]; DataCopyPad(Global dst, Local src, const DataCopyExtParams&) "
        "[MTE3]", c81=_C_DC),
    Api("DataCopyExtParams", "struct", _SDC, "DataCopyExtParams(uint16 blockCount, uint32 blockLen bytes, "
        "uint32 srcStride, uint32 dstStride, uint32 rsv)", c81=_C_SDC),
    Api("DataCopyPadExtParams", "struct", _SDC, "template <T> DataCopyPadExtParams(bool isPad, uint8 leftPadding, "
        "uint8 rightPadding, T paddingValue)", c81=_C_SDC),
    Api("Nd2NzParams", "struct", _SDC, "Nd2NzParams(uint16 ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, "
        "dstNzC0Stride, dstNzNStride, dstNzMatrixStride)", c81=_C_SDC),
    # --- vector compute ----------------------------------------------------------------------------
    *_vec(("Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or"), _BIN, _C_BIN, _MASKED),
    Api("BinaryRepeatParams", "struct", _I + "kernel_struct_binary.h", "BinaryRepeatParams(uint8 dstBlkStride, "
        "src0BlkStride, src1BlkStride, dstRepStride, src0RepStride, src1RepStride) [32-byte blocks]", adk=ADK_HEAD,
        c81="interface/kernel_struct_binary.h"),
    *_vec(("Exp", "Ln", "Abs", "Sqrt", "Rsqrt", "Reciprocal", "Relu", "Not"), _UN, _C_UN,
          "(dst, src, int32 count) [count form]"),
    *_vec(("Adds", "Muls", "Maxs", "Mins"), _SCAL, _C_SCAL, "(dst, src, const T& scalar, int32 count)"),
    *_vec(("ShiftLeft", "ShiftRight"), _SCAL, _C_SCAL, "(dst, src, const T& scalar, int32 count) [scalar shift; "
          "the tensor-shift overload is 3101/5102 only]"),
    Api("Duplicate", "function", _I + "kernel_operator_vec_duplicate_intf.h", "Duplicate(dst, const T& scalar, "
        "int32 count)", c81="interface/kernel_operator_vec_duplicate_intf.h"),
    Api("TransDataTo5HD", "function", _I + "kernel_operator_vec_transpose_intf.h",
        "template <T> TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE], "
        "const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE], const TransDataTo5HDParams&) [16 addresses "
        "each; T int8/uint8/int16/uint16/half/int32/uint32/float on A2; 32-B aligned; per repeat 16-bit: a 16x16 "
        "transpose, 32-bit: 16 rows of 8 -> 8 rows of 16 (dst blocks 2i, 2i+1), 8-bit: half dstHighHalf of dst block "
        "i = element 16 srcHighHalf + i of the 16 src blocks, the other half kept; repeatTimes 1 still adds the "
        "strides once]", adk=ADK_ATOMIC_OLD, c81="interface/kernel_operator_vec_transpose_intf.h",
        note="semantics (the 8-bit rule and its int8_t example) and the repeatTimes == 1 quirk: ADK "
             "docs/api/context/TransDataTo5HD.md "
             "(cannmirror/asc-devkit@0a2e47c191a0733c90577d6aa6b594db668251e4)"),
    Api("TransDataTo5HDParams", "struct", _I + "kernel_struct_transpose.h",
        "TransDataTo5HDParams(bool dstHighHalf, bool srcHighHalf, uint8 repeatTimes, uint16 dstRepStride, "
        "uint16 srcRepStride) [strides in 32-B DataBlocks; the halves apply to 8-bit types only]",
        adk=ADK_ATOMIC_OLD, c81="interface/kernel_struct_transpose.h"),
    Api("Cast", "function", _I + "kernel_operator_vec_vconv_intf.h", "template <T, U> Cast(LocalTensor<T> dst, "
        "LocalTensor<U> src, const RoundMode&, uint32 count)", c81="interface/kernel_operator_vec_vconv_intf.h"),
    Api("RoundMode", "enum", _MODE, "enum class RoundMode : uint8_t", adk=ADK9_IMPL, c81=_C_MODE),
    *_members("RoundMode", ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC"),
              _MODE, ADK9_IMPL, _C_MODE),
    Api("GatherMask", "function", _I + "kernel_operator_vec_gather_mask_intf.h",
        "template <T, mode> GatherMask(LocalTensor<T> dst, LocalTensor<T> src0, const uint8 src1Pattern, "
        "const bool reduceMode, const uint32 mask, const GatherMaskParams&, uint64& rsvdCnt) [built-in pattern "
        "1..7 (1: even, 2: odd, 3-6: one of four, 7: all); A2: 16- and 32-bit T; normal mode reads 256 B a "
        "repeat, counter mode `mask` elements a repeat; picked elements packed from dst[0]]",
        c81="interface/kernel_operator_vec_gather_mask_intf.h",
        note="semantics: ADK docs/zh/api/SIMD-API/基础API/Memory矢量计算/比较与选择/GatherMask.md "
             f"({ADK9_DOCS})"),
    Api("GatherMaskParams", "struct", _I + "kernel_struct_gather.h",
        "GatherMaskParams(uint8 src0BlockStride, uint16 repeatTimes, uint16 src0RepeatStride, uint8 "
        "src1RepeatStride) [strides in 32-B DataBlocks]", c81="interface/kernel_struct_gather.h"),
    # --- the sort family on (score, index) pairs (vector/sort.py); declared by v8.5.0, v9.0.0, v9.1.0.pre and
    # HEAD's kernel_operator_proposal_intf.h and by C81's; semantics from the ADK docs named in `note`
    *[Api(n, kind, _PROPOSAL if kind == "function" else _SPROPOSAL, sig, adk=ADK_HEAD,
          c81=_C_PROPOSAL if kind == "function" else "interface/kernel_struct_proposal.h", note=note)
      for n, kind, sig, note in _SORT_FAMILY],
    Api("Compare", "function", _CMPSEL, "template <T, U> Compare(LocalTensor<U> dstMask, src0, src1, CMPMODE, "
        "uint32 count)", c81=_C_CMPSEL),
    Api("CompareScalar", "function", _CMPSEL, "template <T, U> CompareScalar(LocalTensor<U> dstMask, src0, "
        "const T scalar, CMPMODE, uint32 count)", c81=_C_CMPSEL, pair="Compares",
        note="declared by every release; 9.0 and 9.1 mark it deprecated by a header comment only ('has been "
             f"updated, please use Compares instead'; no attribute); {CHANGES_DOC} lists the rename"),
    Api("Compares", "function", _CMPSEL, "template <T, U> Compares(LocalTensor<U> dstMask, src0, const T scalar, "
        "CMPMODE, uint32 count) (CANN 9 name)", versions=NEW_IN_9, pair="CompareScalar",
        note="absent from C81's and v8.5.0's kernel_operator_vec_cmpsel_intf.h (8.5.0 has only the micro-API "
             "Compares(MaskReg&, ...) of impl/micro_api); new in 9.0"),
    Api("CMPMODE", "enum", _MODE, "enum class CMPMODE : uint8_t", adk=ADK9_IMPL, c81=_C_MODE),
    *_members("CMPMODE", ("LT", "GT", "EQ", "LE", "GE", "NE"), _MODE, ADK9_IMPL, _C_MODE),
    Api("Select", "function", _CMPSEL, "template <T, U> Select(dst, LocalTensor<U> selMask, src0, src1 tensor or T "
        "scalar, SELMODE, uint32 count)", c81=_C_CMPSEL),
    Api("SELMODE", "enum", _MODE, "enum class SELMODE : uint8_t", adk=ADK9_IMPL, c81=_C_MODE),
    *_members("SELMODE", ("VSEL_TENSOR_SCALAR_MODE", "VSEL_TENSOR_TENSOR_MODE"), _MODE, ADK9_IMPL, _C_MODE),
    *[Api(n, "function", _RED, f"{n}(dst, src, sharedTmpBuffer, int32 count{extra}) [count form]", c81=_C_RED)
      for n, extra in (("ReduceSum", ""), ("ReduceMax", ", bool calIndex = 0"), ("ReduceMin", ", bool calIndex = 0"))],
    *[Api(f"WholeReduce{k}", "function", _RED_IMPL, f"template <T, bool isSetMask = true> WholeReduce{k}(dst, src, "
          f"int32 mask, int32 repeatTime, int32 dstRepStride, int32 srcBlkStride, int32 srcRepStride{extra}) [one "
          "result per repeat; A2: half, float]", adk=ADK_HEAD, c81=_C_RED,
          note=f"CANN 9.1 renamed it ReduceRepeat<ReduceType::{k.upper()}> (impl comment: 'has been updated, "
               "please use ReduceRepeat instead') and still defines it in impl/, which its include/ header "
               f"{_RED} includes (so 9.1 declares it); up to v9.0.1 it is declared in "
               f"{_RED} ({ADK_901}), where ReduceRepeat does not exist yet, so it is emitted in every version; "
               "semantics: docs/zh/api/SIMD-API/基础API/Memory矢量计算/归约计算/ReduceRepeat.md")
      for k, extra in (("Sum", ""), ("Max", ", ReduceOrder order = ORDER_VALUE_INDEX"),
                       ("Min", ", ReduceOrder order = ORDER_VALUE_INDEX"))],
    *[Api(f"BlockReduce{k}", "function", _RED_IMPL, f"template <T, bool isSetMask = true> BlockReduce{k}(dst, src, "
          "int32 repeatTime, int32 mask, int32 dstRepStride, int32 srcBlkStride, int32 srcRepStride) [one result per "
          "DataBlock, 8 a repeat; dstRepStride in units of 8 results; A2: half, float]",
          adk="cannmirror/asc-devkit@24c4cc8c894fa181229703ef9241f11f83c77662", c81=_C_RED,
          note=f"CANN 9.1 renamed it ReduceDataBlock<ReduceType::{k.upper()}> and still defines it in impl/ "
               "(comment: 'has been updated, please use ReduceDataBlock instead'), as WholeReduce*; declared in "
               f"{_RED} up to 9.0 (cannmirror/asc-devkit@0a5b3245) and in C81; semantics: hiascend CANN 8.5.0 "
               "BlockReduceMax page (atlasascendc_api_07_0082): dst 16-B (half) / 32-B (float) aligned, src 32-B")
      for k in ("Sum", "Max", "Min")],
    Api("ReduceOrder", "enum", _MODE, "enum class ReduceOrder : uint8_t", adk=ADK_HEAD, c81=_C_MODE),
    *_members("ReduceOrder", ("ORDER_ONLY_VALUE",), _MODE, ADK_HEAD, _C_MODE,
              sig="results are values only: dstRepStride in units of one T (A2 supports all four orders)"),
    Api("Brcb", "function", _I + "kernel_operator_vec_brcb_intf.h", "template <T> Brcb(dst, src0, const uint8 "
        "repeatTime, const BrcbRepeatParams&) [src[8i + j] fills dst block i * dstRepStride + j * dstBlkStride; "
        "A2: 16- and 32-bit T]", adk=ADK_HEAD, c81="interface/kernel_operator_vec_brcb_intf.h",
        note="semantics: docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据填充/Brcb.md"),
    Api("BrcbRepeatParams", "struct", _I + "kernel_struct_brcb.h", "BrcbRepeatParams(uint16 dstBlkStride, uint16 "
        "dstRepStride) [32-byte blocks]", adk=ADK_HEAD, c81="interface/kernel_struct_brcb.h"),
    Api("Copy", "function", _DC, "template <T, bool isSetMask = true> Copy(LocalTensor<T> dst, LocalTensor<T> src, "
        "const uint64 mask, const uint8 repeatTime, const CopyRepeatParams&) [UB->UB on the vector pipe; A2: 16- and "
        "32-bit T]", adk=ADK_HEAD, c81=_C_DC,
        note="semantics: docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运/UB与UB数据搬运/"
             "UBToUB掩码式高维数据搬运(Copy).md"),
    Api("CopyRepeatParams", "struct", _SDC, "CopyRepeatParams(uint16 dstStride, uint16 srcStride, uint16 "
        "dstRepeatSize, uint16 srcRepeatSize) [32-byte blocks; repeat sizes <= 4095]", adk=ADK_HEAD, c81=_C_SDC),
    # --- the Cube unit -------------------------------------------------------------------------------
    Api("LoadData", "function", _MM, "LoadData(LocalTensor<T> dst, LocalTensor<T> src, const LoadData2DParams&) "
        "[L1->L0A/L0B]", c81=_C_MM),
    Api("LoadData2DParams", "struct", _SMM, "LoadData2DParams(uint16 startIndex, uint8 repeatTimes, uint16 srcStride, "
        "uint8 sid, uint16 dstGap, bool ifTranspose, uint8 addrMode)", c81=_C_SMM),
    Api("LoadDataWithTranspose", "function", _MM, "LoadDataWithTranspose(LocalTensor<T> dst, LocalTensor<T> src, "
        "const LoadData2dTransposeParams&) [L1->L0A/L0B; A2: b8, b16, b32]", adk=ADK_CUBE_DTYPES, c81=_C_MM,
        note="A2 support and the b8/b32 square semantics: docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/"
             "矩阵计算的搬入/矩阵数据搬入至L0-Buffer/LoadDataWithTranspose.md; 8.x: its params struct is in C81 "
             "kernel_struct_mm.h"),
    Api("LoadData2dTransposeParams", "struct", _SMM, "LoadData2dTransposeParams(uint16 startIndex, uint8 repeatTimes, "
        "uint16 srcStride, uint16 dstGap, uint16 dstFracGap[, uint8 addrMode])", adk=ADK_CUBE_DTYPES, c81=_C_SMM),
    Api("Mmad", "function", _MM, "Mmad(LocalTensor<T> c, LocalTensor<U> a, LocalTensor<S> b, const MmadParams&); "
        "Mmad(c, a, b, LocalTensor<V> bias, const MmadParams&) [bias in C2: C starts at the bias row]", c81=_C_MM,
        note="the bias overload (A2: f16/bf16/f32 products with a float bias, int8 with int32) takes the C source from "
             "the bias tensor's position, not cmatrixSource; cmatrixInitVal must be false for the bias to count "
             "(docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/Mmad计算/Mmad.md; "
             "impl/basic_api/kernel_operator_mm_base_impl.h MmadImpl; read at " + ADK_HEAD + ")"),
    Api("MmadParams", "struct", _SMM, "MmadParams(uint16 m, uint16 n, uint16 k, uint8 unitFlag, bool cmatrixSource, "
        "bool cmatrixInitVal)", c81=_C_SMM),
    Api("Fixpipe", "function", _FIX, "template <T, U, config = CFG_ROW_MAJOR> Fixpipe(GlobalTensor<T> dst, "
        "LocalTensor<U> src, const FixpipeParamsV220&) [L0C->GM]", c81=_C_FIX),
    Api("FixpipeParamsV220", "struct", _SFIX, "struct FixpipeParamsV220 (default ctor leaves deqScalar unset)",
        c81=_C_SFIX),
    *[Api(f"FixpipeParamsV220::{f}", "field", _SFIX, f"{t} {f}", c81=_C_SFIX)
      for f, t in (("nSize", "uint16"), ("mSize", "uint16"), ("srcStride", "uint16"), ("dstStride", "uint32"),
                   ("quantPre", "QuantMode_t"), ("deqScalar", "uint64"), ("ndNum", "uint16"),
                   ("srcNdStride", "uint16"), ("dstNdStride", "uint16"), ("reluEn", "bool"), ("unitFlag", "uint8"),
                   ("isChannelSplit", "bool"))],
    Api("QuantMode_t", "enum", _SFIX, "enum QuantMode_t: Fixpipe's on-the-fly quantization", c81=_C_SFIX,
        declared_by="compiler", note="a compiler (cce) enum the ADK uses: FixpipeParamsV220::quantPre defaults to "
                                     "QuantMode_t::NoQuant"),
    Api("QuantMode_t::NoQuant", "enumerator", _SFIX, "no quantization (f32 stays f32)", c81=_C_SFIX,
        declared_by="compiler", note="the default of FixpipeParamsV220::quantPre in both kits"),
    *[Api(f"QuantMode_t::{m}", "enumerator", _SFIX, f"quantize f32 -> {to} (CAST_RINT)", declared_by="compiler",
          verified=False, note="compiler enum member; listed by the ADK Fixpipe docs, but no asc-devkit header or "
                               "doc path was pinned down for it (REFERENCE 1.13 quotes Fixpipe F322F16)")
      for m, to in (("F322F16", "half"), ("F322BF16", "bfloat16_t"))],
    # the vector gather of quasi-affine loads from a UB window (gathers.py)
    Api("Gather", "function", _I + "kernel_operator_vec_gather_intf.h",
        "template <T> Gather(LocalTensor<T> dst, LocalTensor<T> src, LocalTensor<uint32> srcOffset, const uint32 "
        "srcBaseAddr, const uint32 count) [count form, UB to UB: dst[i] = the element at byte srcBaseAddr + "
        "srcOffset[i] of src; offsets and base multiples of sizeof(T); A2: int16, uint16, half, bfloat16, int32, "
        "uint32, float; src and dst must not share memory; count 0 is a no-op]",
        adk="cannmirror/asc-devkit@3d5cee08792fc72bc5c3d25d9ceb6d2230a45281",
        c81="interface/kernel_operator_vec_gather_intf.h",
        note="semantics: ADK docs/zh/api/SIMD-API/基础API/Memory矢量计算/离散与聚合/Gather.md "
             "(cannmirror/asc-devkit@c67ec4c014c013df30f7b6f9f2d4e350b900cc39); srcBaseAddr is added to src's UB "
             "address: impl/basic_api/dav_c220/kernel_operator_vec_gather_impl.h "
             "(cannmirror/asc-devkit@40e58b5ac79e2870bd8f2ad9e004b6a1bf54c7c6)"),
]

TABLE: dict = {}
for _api in ENTRIES:
    if _api.name in TABLE:
        raise RuntimeError(f"internal: {_api.name} is twice in the AscendC API table")
    TABLE[_api.name] = _api

# ----- the checker -------------------------------------------------------------------------------

CPP_KEYWORDS = frozenset("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
char16_t char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return
co_yield decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto
if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while xor xor_eq""".split())
FIXED_WIDTH = frozenset(f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64))
PREPROCESSOR_WORDS = frozenset({"defined"})
_BUILTIN_TYPES = frozenset({"bool", "char", "short", "int", "long", "float", "double", "void", "signed", "unsigned",
                            "auto"}) | FIXED_WIDTH
# Words a kernel's own names must not take in the emitted source (emit/cpp.py `fresh` adds "_" to them): C++
# keywords and alternative tokens, the types the emitter spells, and the namespace and helpers it declares.
RESERVED_NAMES = CPP_KEYWORDS | FIXED_WIDTH | PREPROCESSOR_WORDS | frozenset(
    {"half", "bfloat16_t", "AscendC", "std", "main", "NULL", "size_t"})


class ApiSurfaceError(XBlockError):
    """Generated AscendC uses a name the API-surface table does not list (a compiler bug, not a user error)."""


_IDENT = r"[A-Za-z_]\w*"
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*'")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_NUMBER = re.compile(r"(?<![\w.])(?:0[xX][0-9a-fA-F']+|\d[\d']*\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
                     r"[fFlLuU]*")
_QUALIFIED = re.compile(rf"(?<![\w.>])((?:{_IDENT}::)+{_IDENT})")
_MEMBER = re.compile(rf"(\.|->)\s*({_IDENT})")
_WORD = re.compile(_IDENT)
_TARGS = r"<(?:[^<>;{}]|<[^<>;{}]*>)*>"
_DECL = re.compile(rf"(?<![\w.:>])({_IDENT}(?:::{_IDENT})*)\s*(?:{_TARGS})?\s*(?:[*&]\s*)*({_IDENT})\s*(?=[=;,)\[{{(])")
_KERNEL = re.compile(rf"__global__\s+(?:__\w+__\s+)*void\s+({_IDENT})\s*\(([^)]*)\)")
_PP = re.compile(r"^\s*#\s*(\w+)(.*)$")


def _blank(m: re.Match) -> str:
    """The match replaced by spaces (newlines kept), so positions still map to lines."""
    return "".join(c if c == "\n" else " " for c in m.group(0))


def _strip(cpp: str) -> str:
    """Comments, strings and numbers blanked out; preprocessor lines blanked (checked apart)."""
    text = _COMMENT.sub(_blank, cpp)
    text = "\n".join(" " * len(ln) if ln.lstrip().startswith("#") else ln for ln in text.split("\n"))
    text = _STRING.sub(_blank, text)
    return _NUMBER.sub(_blank, text)


@dataclass
class Use:
    """A name the kernel uses: `name` as looked up in TABLE, where (1-based line), and the line's text."""

    name: str
    line: int
    text: str


class _Scan:
    """One pass over a kernel's source: its own declarations and the AscendC names it uses."""

    def __init__(self, cpp: str, declared=()):
        self.cpp = cpp
        self.lines = cpp.split("\n")
        self.code = _strip(cpp)
        self._starts = [0] + [m.end() for m in re.finditer("\n", self.code)]
        self.declared: set = set(declared)  # names the kernel defines (locals, params, own macros, structs)
        self.var_types: dict = {}  # variable -> its type's (unqualified) name
        self.objects: set = set()  # variables of the kernel's own struct types: their fields are the kernel's
        self.uses: list = []  # Use of AscendC candidates
        self.unknown: list = []  # Use of names that are nothing known
        self.kernel = ""
        self._kernel()
        self._preprocessor()
        self._declarations()
        self._names()

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self._starts, pos)

    def _use(self, name: str, pos: int) -> None:
        ln = self.line_of(pos)
        u = Use(name, ln, self.lines[ln - 1].strip() if ln <= len(self.lines) else "")
        (self.uses if name in TABLE else self.unknown).append(u)

    def _kernel(self) -> None:
        """The kernel entry: its name, its parameters, the tiling struct and the workspace constant."""
        m = _KERNEL.search(self.code)
        if not m:
            return
        name = self.kernel = m.group(1)
        self.declared |= {name, name.upper() + "_WORKSPACE_BYTES"}
        for param in m.group(2).split(","):
            words = _WORD.findall(param)
            if len(words) < 2:
                continue
            typ, var = words[-2], words[-1]
            self.declared.add(var)
            if typ not in TABLE and typ not in _BUILTIN_TYPES:  # the kernel's tiling struct
                self.declared.add(typ)
                self.objects.add(var)
            self.var_types[var] = typ

    def _preprocessor(self) -> None:
        """`#include`s must name the AscendC header or the kernel's own tiling header; `#if` conditions use
        macros the table lists or the kernel defines; `#define`d names are the kernel's."""
        conds = []
        for i, raw in enumerate(self.lines):
            m = _PP.match(_COMMENT.sub("", raw))
            if not m:
                continue
            directive, rest = m.group(1), m.group(2).strip()
            if directive == "include":
                header = rest.strip('"<> ')
                own = f"{self.kernel}_tiling.h" if self.kernel else None
                if header in TABLE:
                    self.uses.append(Use(header, i + 1, raw.strip()))
                elif header != own:
                    self.unknown.append(Use(header, i + 1, raw.strip()))
            elif directive in ("define", "undef"):
                words = _WORD.findall(rest)
                if words:
                    self.declared.add(words[0])
            elif directive in ("if", "ifdef", "ifndef", "elif"):
                conds.append((i, rest))
        for i, rest in conds:  # after every #define is known
            for w in _WORD.findall(_NUMBER.sub(" ", rest)):
                if w in PREPROCESSOR_WORDS or w in self.declared:
                    continue
                if w in TABLE:
                    self.uses.append(Use(w, i + 1, self.lines[i].strip()))
                else:
                    self.unknown.append(Use(w, i + 1, self.lines[i].strip()))

    def _known_type(self, name: str) -> bool:
        base = name.split("::")[-1]
        return name in _BUILTIN_TYPES or base in self.declared or (
            base in TABLE and TABLE[base].kind in TYPE_KINDS)

    def _declarations(self) -> None:
        """`Type name` with a known type: the kernel's locals (and their types, for member checks)."""
        for m in _DECL.finditer(self.code):
            typ, var = m.group(1), m.group(2)
            if typ in CPP_KEYWORDS and typ not in _BUILTIN_TYPES or not self._known_type(typ):
                continue
            self.declared.add(var)
            base = typ.split("::")[-1]
            self.var_types.setdefault(var, base)
            if base in self.declared and base not in TABLE:
                self.objects.add(var)

    def _receiver(self, pos: int) -> str | None:
        """The variable whose member is accessed at `pos` (the `.`), through `x[...]`; None if not a name."""
        j = pos - 1
        while j >= 0 and self.code[j] == " ":
            j -= 1
        while j >= 0 and self.code[j] == "]":  # x[i].m, x[i][j].m
            depth = 0
            while j >= 0:
                depth += {"]": 1, "[": -1}.get(self.code[j], 0)
                j -= 1
                if depth == 0:
                    break
            while j >= 0 and self.code[j] == " ":
                j -= 1
        end = j + 1
        while j >= 0 and (self.code[j].isalnum() or self.code[j] == "_"):
            j -= 1
        word = self.code[j + 1:end]
        return word if word and not word[0].isdigit() else None

    def _names(self) -> None:
        code = self.code
        members = {n.split("::", 1)[1] for n, a in TABLE.items() if a.kind in ("method", "field")}
        masked = list(code)

        def mask(a: int, b: int) -> None:
            masked[a:b] = " " * (b - a)

        for m in _QUALIFIED.finditer(code):
            parts = m.group(1).split("::")
            if parts[0] == "AscendC":
                self._use("AscendC", m.start())
                parts = parts[1:]
            qual = "::".join(parts)
            if len(parts) == 1:
                self._bare(parts[0], m.start())
            else:
                self._use(qual, m.start())
            mask(m.start(), m.end())
        for m in _MEMBER.finditer(code):
            member = m.group(2)
            recv = self._receiver(m.start())
            mask(m.start(), m.end())
            if recv in self.objects:  # a field of the kernel's own (tiling) struct
                continue
            cls = self.var_types.get(recv) if recv else None
            if cls in TABLE:
                self._use(f"{cls}::{member}", m.start(2))
            elif member in members:  # receiver not a plain variable: any AscendC class member will do
                self.uses.append(Use(member, self.line_of(m.start(2)), ""))
            else:
                self._use(f"?::{member}", m.start(2))
        for m in _WORD.finditer("".join(masked)):
            self._bare(m.group(0), m.start())

    def _bare(self, w: str, pos: int) -> None:
        if w in CPP_KEYWORDS or w in FIXED_WIDTH or w.startswith("__builtin_") or w in self.declared:
            return
        self._use(w, pos)


def scan(cpp: str, declared=()) -> _Scan:
    """Scan a generated kernel: `.uses` (AscendC names found in TABLE) and `.unknown` (anything else)."""
    return _Scan(cpp, declared)


def used_names(cpp: str) -> set:
    """The TABLE names a generated kernel uses."""
    return {u.name for u in scan(cpp).uses if u.name in TABLE}


def version_problems(cpp: str, uses=None, releases=SUPPORTED) -> list:
    """Uses of table names that a CANN release of `releases` does not declare, one line each (the kernel
    must build with every supported release, and a compiler-macro probe cannot tell them apart)."""
    uses = scan(cpp).uses if uses is None else uses
    problems, seen = [], set()
    for u in uses:
        api = TABLE.get(u.name)
        missing = api.missing_from(releases) if api else ()
        if missing and u.name not in seen:
            seen.add(u.name)
            also = f"; CANN {'/'.join(missing)} spell it {api.pair}" if api.pair else ""
            problems.append(f"{u.name} is not declared by CANN {', '.join(missing)} (line {u.line}: `{u.text}`"
                            f"{also})")
    return problems


def check_source(cpp: str, declared=(), versions: bool = True) -> None:
    """Raise ApiSurfaceError if generated AscendC `cpp` uses a name that is not in TABLE (nor C++, nor
    the kernel's own), or (with `versions`) one that a supported CANN release does not declare."""
    s = scan(cpp, declared)
    bad = []
    seen = set()
    for u in s.unknown:
        if u.name in seen:
            continue
        seen.add(u.name)
        name = u.name.replace("?::", ".")
        bad.append(f"{name} (line {u.line}: `{u.text}`)")
    if bad:
        raise ApiSurfaceError(
            "internal: the generated AscendC uses names that are not in the API-surface table "
            "(xblock/backends/ascend/emit/api_surface.py, each entry checked against asc-devkit): " + "; ".join(bad))
    if versions:
        problems = version_problems(cpp, s.uses)
        if problems:
            raise ApiSurfaceError(f"internal: the generated AscendC must build with CANN {', '.join(SUPPORTED)}, "
                                  "but uses a name one of them lacks: " + "; ".join(problems))
