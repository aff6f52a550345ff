"""The profile build of a kernel: the launch shim of `launch.py`, plus what the cost model needs beyond
the model's counters, and a choice of the blocks that run.

`xblock.profile` builds kernel.cpp a second time with this shim (cached like the launcher's build):
- `xblock_profile_select(blocks, n)`: the next launch runs only these blocks (n = 0: every block);
  a block left out starts its core and returns at once, so its counters are zero (the launcher still
  passes the whole launch: blockDim, the tiling, every buffer);
- per core (keyed as the launcher's per-core counters: block, core code), the vector repeats of the
  instruction classes the dev kit prices above one repeat a cycle, the bytes' worth of the 512-byte GM windows
  DMA rows touch beyond the fewest their lengths need (an unaligned row's extra window), and the bytes read
  through a GlobalTensor kept out of L2 (its SetL2CacheHint:
  CACHE_MODE_DISABLE) (`cost.py` prices them). Each priced API call in kernel.cpp is wrapped by a
  macro that reads the model's repeat and GM byte counters around it; the call site
  (`__builtin_LINE()` of the model's APIs) stays the kernel.cpp line of the call.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ...common.cachedir import cache_dir
from ...common.native import library_path
from ..emit.cpp import tiling_header, tiling_struct_name
from . import launch

# the per-core fields of xblock_profile_counters, in order (cost.py reads them by these names)
FIELDS = ("trans_repeats_b16", "trans_repeats_b32", "reduce_repeats", "gather_repeats_b16", "gather_repeats_b32",
          "gathermask_repeats", "window_excess_read_bytes", "window_excess_write_bytes", "uncached_read_bytes")

# API -> class (an index into FIELDS' first columns; the element size picks b16 / b32)
# (BlockReduce*: priced as a reduction in half only; a float one moves 64 elements a cycle, cost.py)
_WRAPPED = {"Exp": "TRANS", "Ln": "TRANS", "Sqrt": "TRANS", "Div": "TRANS", "WholeReduceSum": "REDUCE",
            "WholeReduceMax": "REDUCE", "WholeReduceMin": "REDUCE", "ReduceSum": "REDUCE", "ReduceMax": "REDUCE",
            "ReduceMin": "REDUCE", "Gather": "GATHER", "GatherMask": "GATHERMASK", "BlockReduceSum": "BLOCKREDUCE",
            "BlockReduceMax": "BLOCKREDUCE", "BlockReduceMin": "BLOCKREDUCE"}

_PRELUDE = r"""
#include "kernel_operator.h"

namespace xbprof {
constexpr int kMaxBlocks = 65536, kCores = 4, kFields = %(nfields)d;
enum Cls { TRANS, REDUCE, GATHER, GATHERMASK, BLOCKREDUCE };
static bool g_all = true;
static bool g_sel[kMaxBlocks];
static uint64_t g_count[256][kCores][kFields];  // blocks 0..255 (a sampled run keeps its blocks below 256)

inline int core_code(const xbemu::State& s) { return s.mixed ? 1 + s.slot : s.role == xbemu::ROLE_AIC ? 1 : 0; }
inline uint64_t* fields() {
    const xbemu::State& s = xbemu::st();
    static uint64_t sink[kFields];
    return s.block >= 0 && s.block < 256 ? g_count[s.block][core_code(s)] : sink;
}
inline bool selected() {
    const int64_t b = xbemu::st().block;
    return g_all || (b >= 0 && b < kMaxBlocks && g_sel[b]);
}
template <typename T, typename F>
inline void vec(Cls c, const AscendC::LocalTensor<T>&, F f) {
    const uint64_t before = xbemu::st().vec_repeats;
    f();
    const uint64_t n = xbemu::st().vec_repeats - before;
    uint64_t* v = fields();
    if (c == TRANS) v[sizeof(T) <= 2 ? 0 : 1] += n;
    if (c == REDUCE) v[2] += n;
    if (c == BLOCKREDUCE && sizeof(T) <= 2) v[2] += n;  // half: 7 cycles a repeat, float: 1 (cost.py)
    if (c == GATHER) v[sizeof(T) <= 2 ? 3 : 4] += n;
    if (c == GATHERMASK) v[5] += n;
}
// reads through a GlobalTensor whose L2 hint is CACHE_MODE_DISABLE (they bypass L2: cost.py)
template <typename T> inline bool uncached(const AscendC::GlobalTensor<T>& g) { return g.l2_bypass_; }
template <typename T> inline bool uncached(const AscendC::LocalTensor<T>&) { return false; }
// the model's count of the extra 512-B windows the DMA's rows touch (the launch's buffers start 512-byte
// aligned, as aclrtMalloc'd ones), as bytes' worth: State::gm_read_excess / gm_write_excess
template <typename D, typename S, typename F>
inline void dma(const D&, const S& src, F f) {
    const xbemu::State& s = xbemu::st();
    const uint64_t r0 = s.gm_read;
    const double e0 = s.gm_read_excess, x0 = s.gm_write_excess;
    const bool by = uncached(src);
    f();
    uint64_t* v = fields();
    v[6] += static_cast<uint64_t>(s.gm_read_excess - e0 + 0.5);
    if (by) v[8] += s.gm_read - r0;
    v[7] += static_cast<uint64_t>(s.gm_write_excess - x0 + 0.5);
}
}  // namespace xbprof

extern "C" void xblock_profile_select(const int64_t* blocks, int64_t n) {
    xbemu::window_excess_cap() = %(window_cap).17g;  // cost.py: 1 / unaligned_rate - 1
    for (int64_t i = 0; i < xbprof::kMaxBlocks; i++) xbprof::g_sel[i] = false;
    for (int64_t i = 0; i < n; i++)
        if (blocks[i] >= 0 && blocks[i] < xbprof::kMaxBlocks) xbprof::g_sel[blocks[i]] = true;
    xbprof::g_all = n == 0;
    for (auto& b : xbprof::g_count)
        for (auto& c : b)
            for (auto& f : c) f = 0;
}

extern "C" int64_t xblock_profile_counters(int64_t block, int64_t core, uint64_t* out, int64_t n) {
    if (block < 0 || block >= 256 || core < 0 || core >= xbprof::kCores) return 0;
    for (int64_t i = 0; i < n && i < xbprof::kFields; i++) out[i] = xbprof::g_count[block][core][i];
    return xbprof::kFields;
}

#define DataCopy(d, s, ...) xbprof::dma(d, s, [&]() { AscendC::DataCopy(d, s, __VA_ARGS__); })
#define DataCopyPad(d, s, ...) xbprof::dma(d, s, [&]() { AscendC::DataCopyPad(d, s, __VA_ARGS__); })
"""


def shim_source(metadata: dict) -> str:
    """The profile build's translation unit (see the module docstring)."""
    name = metadata["name"]
    n_gm = sum(1 for t in metadata["arg_types"] if t.startswith("*")) + len(launch.extra_gm_args(metadata))
    args = ", ".join([f"bufs[{i}]" for i in range(n_gm)] + ["t"])
    wraps = "".join(f"#define {api}(d, ...) xbprof::vec(xbprof::{cls}, d, [&]() {{ AscendC::{api}(d, __VA_ARGS__); "
                    "})\n" for api, cls in _WRAPPED.items())
    undefs = "".join(f"#undef {api}\n" for api in ("DataCopy", "DataCopyPad", *_WRAPPED))
    struct = tiling_struct_name(name)
    from .cost import CONSTANTS
    cap = 1 / CONSTANTS["unaligned_rate"].value - 1
    return (_PRELUDE % {"nfields": len(FIELDS), "window_cap": cap} + wraps + '#include "kernel.cpp"\n' + undefs +
            f'\nextern "C" int xblock_emu_run(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes,\n'
            f'                              const char* const* names, int nbufs, const uint64_t* hosts,\n'
            f'                              const void* tiling, const uint32_t* soc, char* err, int errlen,\n'
            f'                              uint64_t* counters) {{\n'
            f'    const {struct}& t = *static_cast<const {struct}*>(tiling);\n'
            f'    return xbemu::run(block_dim, bufs, sizes, names, nbufs, hosts, soc, err, errlen, counters,\n'
            f'                      [&]() {{ if (xbprof::selected()) {name}({args}); }});\n}}\n')


def build(cpp: str, metadata: dict) -> bytes:
    """The profile build's shared library (cached under the model's cache folder by its inputs' hash)."""
    header = tiling_header(metadata["name"], metadata["tiling_fields"], metadata.get("workspace_bytes", 0))
    files = {"kernel.cpp": cpp, f"{metadata['name']}_tiling.h": header, "profile.cpp": shim_source(metadata)}
    key = hashlib.sha256(("\0".join(["profile", launch.CXX, *launch.CXXFLAGS, launch._emu_digest()] +
                                    [f"{k}\0{v}" for k, v in sorted(files.items())])).encode())
    built = cache_dir() / launch.KIND / ("profile-" + key.hexdigest()[:32] + ".so")
    try:
        data = built.read_bytes()
        if os.readlink(built) == hashlib.sha256(data).hexdigest()[:32] + ".so":
            return data
    except OSError:
        pass
    tmp = Path(tempfile.mkdtemp(prefix="xblock-profile-"))
    try:
        for k, v in files.items():
            (tmp / k).write_text(v)
        pre, objects = launch.prebuilt_flags(_PRELUDE)  # the prelude includes kernel_operator.h first
        cmd = [launch.CXX, *launch.CXXFLAGS, *pre, "-I", str(launch.EMU_DIR), "-I", str(tmp), str(tmp / "profile.cpp"),
               *objects, "-o", str(tmp / "k.so")]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise launch.compile_error(metadata, cpp, res.stderr, " (the profile build, model/profile_shim.py)")
        data = (tmp / "k.so").read_bytes()
        launch._link(built, library_path(data, launch.KIND))
        return data
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
