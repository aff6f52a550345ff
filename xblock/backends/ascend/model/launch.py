"""Run generated AscendC on xblock's CPU model: build it with g++, load it, launch on numpy arrays.

The model (emu/, docs/ASCEND_MODEL.md) compiles kernel.cpp as an NPU build of CANN 9 would: no
host library names, the CANN 9 API spellings. A kernel that could build differently with CANN 8.x
(it has a preprocessor conditional, or names an API only CANN 9 declares) is also checked, syntax
only, as a CANN 8.3/8.5 build: the old names only, `__NPU_ARCH__` predefined. Model errors
that carry the kernel.cpp line of the failing call (`[at kernel.cpp:N]`) are reported at the Python
line whose `// file.py:N:` comment precedes it.

Libraries live under the cache's `ascend-emu/` folder, named by their bytes' digest
(`common.native`). A build is also found by the hash of everything that goes into it (the kernel
source, the tiling header, the model's headers, the compiler command), through a link to the
library, so kernels that differ only in a specialization the generated code does not use share
one build.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ....errors import BUFFERS_HINT, ArgumentError, ExecutionError, LaunchArgumentError, LaunchError
from ...common.cachedir import CacheWarning, build_folder, cache_dir
from ...common.extra_buffers import unique_buffers
from ...common.native import library_path, load_library
from ..emit.api_surface import CANN
from ..emit.api_surface import TABLE as API_TABLE
from ..emit.cpp import tiling_header, tiling_struct_name
from ..options import SOCS, STATUS_SLOT, launch_blocks, launch_cores, row_groups_for, rows_per_instance

KIND = "ascend-emu"  # the cache folder of the emulator's libraries
EMU_DIR = Path(__file__).parent / "emu"
CXX = os.environ.get("CXX", "g++")
# Unoptimized by default: g++ -O2 takes 2.4x as long to build a kernel, and the model's runs are
# milliseconds either way; XBLOCK_ASCEND_EMU_OPT=-O2 for long runs on the model (the numerics are
# the same: ISO C++ mode contracts no floating-point expressions at any level).
CXXFLAGS = ["-std=c++17", "-Wall", "-Werror", os.environ.get("XBLOCK_ASCEND_EMU_OPT", "-O0"), "-shared", "-fPIC"]
# the counters of a launch, kept on its launcher (`load`): `launcher.last_counters`, the totals of
# its last launch (these, the DataCopy totals of BLOCK_COUNTERS, "block_dim", "programs" and
# "unique_read_bytes"), and `launcher.last_block_counters`, per-core counters (emu_launch.h
# kBlockCounters, in its order): one dict per model core, with its "block" and "core" ("AIC",
# "AIV0", "AIV1" for the cores of a mixed kernel's block, "AIV" for a vector kernel's, "AIC" for a
# cube-only kernel's), in block order; each also carries "l1_to_l0_bytes", the sum of its L1 -> L0A and
# L1 -> L0B bytes (counted apart: LoadData moves them at different rates, model/cost.py)
_COUNTERS = ("gm_read_bytes", "gm_write_bytes", "vector_instructions", "vector_repeats", "scalar_ub_accesses",
             "scalar_gm_accesses")
CORE_NAMES = ("AIV", "AIC", "AIV0", "AIV1")  # emu_launch.h's core codes
BLOCK_COUNTERS = _COUNTERS + ("datacopy_in_calls", "datacopy_out_calls", "datacopy_in_bytes", "datacopy_out_bytes",
                              "cube_ops", "mmad_calls", "gm_to_l1_bytes", "gm_to_l1_calls", "l1_to_l0a_bytes",
                              "l1_to_l0b_bytes", "load_data_calls", "l0c_to_gm_bytes", "fixpipe_calls",
                              "cross_core_sets")


def shim_source(metadata: dict) -> str:
    """The C entry point ctypes calls: it runs every block of one launch on the model."""
    name = metadata["name"]
    n_gm = sum(1 for t in metadata["arg_types"] if t.startswith("*")) + len(extra_gm_args(metadata))
    args = ", ".join([f"bufs[{i}]" for i in range(n_gm)] + ["t"])
    return (
        f'#include "kernel.cpp"\n#include "emu_launch.h"\n\n'
        f'extern "C" int xblock_emu_run(int64_t block_dim, uint8_t** bufs, const uint64_t* sizes,\n'
        f'                              const char* const* names, int nbufs, const uint64_t* hosts,\n'
        f'                              const void* tiling, const uint32_t* soc, char* err, int errlen,\n'
        f'                              uint64_t* counters) {{\n'
        f'    const {tiling_struct_name(name)}& t = *static_cast<const {tiling_struct_name(name)}*>(tiling);\n'
        f'    return xbemu::run(block_dim, bufs, sizes, names, nbufs, hosts, soc, err, errlen, counters,\n'
        f'                      [&]() {{ {name}({args}); }});\n}}\n')


def extra_gm_args(metadata: dict) -> list:
    """GM arguments the lowering added after the kernel's own, in order (`workspace`, `assertStatus`)."""
    return metadata.get("extra_gm_args") or (["workspace"] if metadata.get("workspace_bytes") else [])


_TRACE = re.compile(r"\s*// (\S+\.py):(\d+): ?(.*)$")
_LINE_DIRECTIVE = re.compile(r'\s*#line (\d+) "([^"]+)"')
_CPP_SITE = re.compile(r"\b(kernel\.cpp):(\d+)(?::\d+)?")
_NPU_MISSING = re.compile(r"XBEMU_NPU_BUILD_HAS_NO_(\w+)")


def python_line(cpp: str, line: int, metadata: dict) -> tuple[str, int, str] | None:
    """(file, line, source text) of the kernel source that produced line `line` (1-based) of the
    generated C++: the nearest `// file.py:N: source` comment (or `#line` directive) above it."""
    lines = cpp.splitlines()
    for i in range(min(line, len(lines)) - 1, -1, -1):
        m = _TRACE.match(lines[i])
        if m:
            file, n, src = m.group(1), int(m.group(2)), m.group(3)
            break
        m = _LINE_DIRECTIVE.match(lines[i])
        if m:
            file, n, src = m.group(2), int(m.group(1)) + line - i - 2, ""
            break
    else:
        return None
    full = metadata.get("file") or ""
    if os.path.basename(full) == os.path.basename(file):
        file = full
    return file, n, src


def map_sites(message: str, cpp: str, metadata: dict) -> tuple[str | None, str]:
    """The message with every `kernel.cpp:N` replaced by the Python line it came from, and the
    `file:line` of the call the message is about (`[at kernel.cpp:N]`), if any."""
    at = None

    def sub(m):
        nonlocal at
        loc = python_line(cpp, int(m.group(2)), metadata) if cpp else None
        if loc is None:
            return m.group(0)
        text = f"{os.path.basename(loc[0])}:{loc[1]}"
        if at is None and message[max(0, m.start() - 4):m.start()] == "[at ":
            at = f"{loc[0]}:{loc[1]}"
        return text

    text = _CPP_SITE.sub(sub, message)
    return at, text


def compile_error(metadata: dict, cpp: str, stderr: str, what: str) -> ExecutionError:
    """The ExecutionError for a kernel that does not compile on the model: the compiler's words,
    a hint for names an NPU build lacks, at the Python line of the first error if it can be found."""
    missing = sorted(set(_NPU_MISSING.findall(stderr)))
    hint = ""
    if missing:
        hint = (f"\nkernel code uses {', '.join(missing)}, which an NPU build of kernel_operator.h does not "
                "declare: device code has no <cmath>, <cstdio>, <cstdlib>, <cstring> or std:: (spell special "
                "values as __builtin_inff() / __builtin_nanf(\"\") or bit patterns; docs/ASCEND_MODEL.md)")
    loc = f"{metadata['file']}:{metadata['line']}"
    m = re.search(r"kernel\.cpp:(\d+):\d+: (?:error|note: in expansion)", stderr)
    if m and (py := python_line(cpp, int(m.group(1)), metadata)):
        loc = f"{py[0]}:{py[1]}"
    return ExecutionError(f"{loc}: the generated AscendC for {metadata['name']} does not compile against "
                          f"xblock's AscendC model{what}:{hint}\n{stderr[-4000:]}")


def _emu_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(EMU_DIR.glob("*.h")):
        h.update(p.read_bytes())
    return h.hexdigest()


_FIRST_DIRECTIVE = re.compile(r"^\s*#.*$|\Z", re.M)
PCH_NAME, PCH8_NAME, RUNTIME_NAME, LINK_NAME = "xbemu_pch.h", "xbemu_pch8.h", "xbemu_runtime.o", "link-flags"
PREBUILT = "-DXBEMU_PREBUILT_RUNTIME=1"
# the CANN 8 check of a kernel (`_differs_on_cann8`): a syntax-only pass over the CANN 8 API generation
CANN8_FLAGS = [*CXXFLAGS[:3], "-fsyntax-only", "-DXBEMU_CANN_VERSION=8"]


def _prebuilt() -> Path | None:
    """The model's parts every kernel build shares, built once per model version and compiler flags
    into a folder of the cache: the object of the model's out-of-line functions (the XBEMU_RT ones of
    emu/*.h), copies of the headers with those functions' definitions elided (`elide_runtime`: a
    kernel's build sees their declarations only and links the object, so it neither compiles them nor
    instantiates the templates their bodies use) and a precompiled kernel_operator.h of those copies.
    A kernel's build takes about a seventh of the time it would take whole (docs/ASCEND_MODEL.md, §1).
    None where they cannot be built: the kernel is then built whole, the same program (the kernel's
    own build reports a broken header). Only at -O0 (the default), where g++ inlines none of the
    XBEMU_RT functions: at -O2 an inlined copy of one would have static locals of its own
    (XBLOCK_ASCEND_EMU_OPT builds are built whole)."""
    if "-O0" not in CXXFLAGS:
        return None
    key = hashlib.sha256("\0".join([CXX, *CXXFLAGS, _emu_digest(), _PREBUILT_FORMAT]).encode()).hexdigest()[:16]
    folder = cache_dir() / KIND / f"prebuilt-{key}"
    if str(folder) in _CHECKED:
        return folder
    if folder.is_dir():
        if _intact(folder):
            _CHECKED.add(str(folder))
            return folder
        warnings.warn(f"the AscendC model's prebuilt runtime in the cache ({folder}) was damaged; it is built "
                      "again", CacheWarning, stacklevel=2)
        shutil.rmtree(folder, ignore_errors=True)
    if not build_folder(folder, _build_prebuilt):
        return None
    for old in folder.parent.glob("prebuilt-*"):  # those of other model versions
        if old.name != folder.name:
            shutil.rmtree(old, ignore_errors=True)
    if not _intact(folder):
        return None
    _CHECKED.add(str(folder))
    return folder


def _build_prebuilt(tmp: Path) -> bool:
    """Fill `tmp` with the parts `_prebuilt` describes; False where one does not build."""
    (tmp / INCLUDE).mkdir()
    for h in EMU_DIR.glob("*.h"):
        (tmp / INCLUDE / h.name).write_text(elide_runtime(h.read_text()))
    (tmp / PCH_NAME).write_text('#include "kernel_operator.h"\n')
    (tmp / PCH8_NAME).write_text('#include "kernel_operator.h"\n')
    (tmp / "runtime.cpp").write_text('#define XBEMU_RUNTIME_TU 1\n#include "kernel_operator.h"\n')
    flags = [f for f in CXXFLAGS if f != "-shared"]
    for cmd in ([*flags, PREBUILT, "-I", INCLUDE, "-x", "c++-header", PCH_NAME, "-o", PCH_NAME + ".gch"],
                [*flags, "-c", "runtime.cpp", "-o", RUNTIME_NAME],
                [*[f for f in CANN8_FLAGS if f != "-fsyntax-only"], "-x", "c++-header", PCH8_NAME, "-o",
                 PCH8_NAME + ".gch"]):
        if subprocess.run([CXX, *cmd, "-I", str(EMU_DIR)], cwd=tmp, capture_output=True).returncode:
            return False
    # gold, where the toolchain has it, links a kernel's library in a third of GNU ld's time
    gold = [CXX, "-shared", "-fPIC", "-fuse-ld=gold", RUNTIME_NAME, "-o", "probe.so"]
    ok = subprocess.run(gold, cwd=tmp, capture_output=True).returncode == 0
    (tmp / "probe.so").unlink(missing_ok=True)
    (tmp / LINK_NAME).write_text("-fuse-ld=gold\n" if ok else "")
    (tmp / MANIFEST).write_text("".join(f"{_digest(tmp / n)} {n}\n" for n in _parts()))
    return True


MANIFEST = "manifest"  # the digest of each part, written last: a folder without a matching one is rebuilt
INCLUDE = "include"  # the headers of a kernel build that links the runtime object (elide_runtime)
_PREBUILT_FORMAT = "3"  # the folder's layout and elide_runtime's rules: a change builds it again


def _parts() -> list:
    return [PCH_NAME, PCH_NAME + ".gch", PCH8_NAME, PCH8_NAME + ".gch", RUNTIME_NAME, LINK_NAME,
            *sorted(f"{INCLUDE}/{h.name}" for h in EMU_DIR.glob("*.h"))]


_RT_DEF = re.compile(r"^XBEMU_RT\b", re.M)
_MEMBER = re.compile(r"\w\s*::\s*~?\w+\s*$")  # a declarator `Class::name` (or `Class::~Class`)


def elide_runtime(src: str) -> str:
    """Header text without the bodies of the XBEMU_RT functions defined in it: each definition (it
    starts a line with XBEMU_RT) becomes its declaration, a member function's out-of-class one
    nothing (its class declares it), padded with newlines so that every line keeps its number.
    Comments, string and character literals are skipped when braces are matched."""
    out, pos = [], 0
    for m in _RT_DEF.finditer(src):
        if m.start() < pos:
            continue  # inside a definition elided already
        i, depth = _skip(src, m.end(), "({;"), 0
        while not (depth == 0 and src[i] in "{;"):  # the declarator, up to its body (or `;`)
            depth += {"(": 1, ")": -1}.get(src[i], 0)
            i = _skip(src, i + 1, "(){;")
        if src[i] == ";":
            continue  # a declaration
        j, depth = i, 0
        while True:
            depth += {"{": 1, "}": -1}.get(src[j], 0)
            if depth == 0:
                break
            j = _skip(src, j + 1, "{}")
        head = src[m.start():i]
        keep = "" if _MEMBER.search(head.split("(")[0]) else head.rstrip() + ";"
        out += [src[pos:m.start()], keep, "\n" * (src.count("\n", m.start(), j + 1) - keep.count("\n"))]
        pos = j + 1
    return "".join(out) + src[pos:]


def _skip(src: str, i: int, stops: str) -> int:
    """The index of the next character of `stops` at or after i outside comments and literals."""
    while src[i] not in stops:
        if src.startswith("//", i):
            i = src.index("\n", i)
        elif src.startswith("/*", i):
            i = src.index("*/", i) + 2
        elif src[i] in "\"'":
            q, i = src[i], i + 1
            while src[i] != q:
                i += 2 if src[i] == "\\" else 1
            i += 1
        else:
            i += 1
    return i


_CHECKED: set = set()  # the prebuilt folders this process found intact


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _intact(folder: Path) -> bool:
    try:
        return (folder / MANIFEST).read_text() == "".join(f"{_digest(folder / n)} {n}\n" for n in _parts())
    except (OSError, UnicodeDecodeError):
        return False


def prebuilt_flags(cpp: str) -> tuple[list, list]:
    """(flags before the sources, link inputs after them) of a kernel build that uses `_prebuilt()`: its
    headers (before the model's own), the precompiled header only where kernel.cpp's first directive
    includes kernel_operator.h (generated kernels do), so that the header comes first as it would
    anyway (#pragma once); the runtime object, and the linker the folder found (`link-flags`)."""
    folder = _prebuilt()
    if folder is None:
        return [], []
    link = (folder / LINK_NAME).read_text().split()
    return [PREBUILT, "-I", str(folder / INCLUDE), *_pch(folder, PCH_NAME, cpp)], [str(folder / RUNTIME_NAME), *link]


def _pch(folder: Path | None, name: str, cpp: str) -> list:
    """`-include` of a precompiled header of the prebuilt folder, where kernel.cpp starts with the header."""
    first = _FIRST_DIRECTIVE.search(cpp)[0].strip()
    return ["-include", str(folder / name)] if folder is not None and first == '#include "kernel_operator.h"' else []


def build_emulator_library(cpp: str, metadata: dict) -> bytes:
    """Compile kernel.cpp + its tiling header + the launch shim; returns the shared library's bytes."""
    header = tiling_header(metadata["name"], metadata["tiling_fields"], metadata.get("workspace_bytes", 0))
    files = {"kernel.cpp": cpp, f"{metadata['name']}_tiling.h": header,
             "shim.cpp": shim_source(metadata)}
    key = hashlib.sha256(("\0".join([CXX, *CXXFLAGS, _emu_digest()] + [f"{k}\0{v}" for k, v in
                                                                       sorted(files.items())])).encode())
    built = cache_dir() / KIND / (key.hexdigest()[:32] + ".so")  # a link to the library
    try:  # the link's target is named by its bytes' digest: a truncated or changed one is built again
        data = built.read_bytes()
        if os.readlink(built) == hashlib.sha256(data).hexdigest()[:32] + ".so":
            return data
    except OSError:
        pass
    tmp = Path(tempfile.mkdtemp(prefix="xblock-ascend-"))
    try:
        for k, v in files.items():
            (tmp / k).write_text(v)
        pre, objects = prebuilt_flags(cpp)
        cmd = [CXX, *CXXFLAGS, *pre, "-I", str(EMU_DIR), "-I", str(tmp), str(tmp / "shim.cpp"), *objects, "-o",
               str(tmp / "k.so")]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise compile_error(metadata, cpp, res.stderr, "")
        if _differs_on_cann8(cpp):
            cmd8 = [CXX, *CANN8_FLAGS, *_pch(_prebuilt(), PCH8_NAME, cpp), "-I", str(EMU_DIR), "-I", str(tmp),
                    str(tmp / "shim.cpp")]
            res = subprocess.run(cmd8, capture_output=True, text=True)
            if res.returncode != 0:
                raise compile_error(metadata, cpp, res.stderr, " as a CANN 8 build (XBEMU_CANN_VERSION=8)")
        data = (tmp / "k.so").read_bytes()
        _link(built, library_path(data, KIND))
        return data
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _differs_on_cann8(cpp: str) -> bool:
    """Whether a CANN 8 compiler could see other code or miss a name: a conditional, or a CANN-9-only API."""
    if _CONDITIONAL.search(cpp):
        return True
    code = _COMMENT.sub(" ", cpp)  # a name in a comment (the emitter's notes on spellings) builds nothing
    return any(w in _CANN9_ONLY for w in set(re.findall(r"\b[A-Za-z_]\w*\b", code)))


_CONDITIONAL = re.compile(r"^\s*#\s*if", re.M)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_CANN9_ONLY = frozenset(n for n, a in API_TABLE.items() if a.missing_from(tuple(v for v in CANN if v < "9")))


def _link(alias: Path, lib: Path) -> None:
    """Point `alias` at `lib` (a relative link in the same folder); another process may win the race."""
    try:
        alias.unlink(missing_ok=True)  # a link whose library was removed
        os.symlink(lib.name, alias)
    except OSError:
        pass


_CTYPE = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double,
          "i16": ctypes.c_int16, "i8": ctypes.c_int8, "i1": ctypes.c_bool}


def _as_numpy(v):
    """A numpy view of an argument: numpy arrays, or torch CPU tensors (sharing their memory)."""
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "detach") and hasattr(v, "device"):
        if str(v.device) != "cpu":
            raise ArgumentError("the ascend target runs on the CPU model: pass numpy arrays or CPU tensors")
        t = v.detach()
        if str(t.dtype) == "torch.bfloat16":
            import ml_dtypes
            import torch

            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return t.numpy()
    raise ArgumentError(f"the ascend target runs on the CPU model: pass numpy arrays, not {type(v).__name__}")


def load(asm: dict, metadata: dict):
    """A launcher(grid, args) that runs the kernel on the CPU model, writing outputs back on success.

    The launcher keeps the model's counters of its last launch (one that ran programs, failed or
    not) in `last_counters` (totals) and `last_block_counters` (per model core); `{}` and `[]`
    before its first."""
    lib = load_library(asm["so"], KIND)
    run = lib.xblock_emu_run
    run.restype = ctypes.c_int
    fields = metadata["tiling_fields"]

    class Tiling(ctypes.Structure):
        _fields_ = [(n, _CTYPE[t]) for n, t in fields]

    soc = SOCS[metadata["soc"]]
    soc_arr = (ctypes.c_uint32 * 3)(soc.ub_bytes, soc.ub_usable, int(soc.has_data_copy_pad))
    names, sigs = metadata["arg_names"], metadata["arg_types"]

    written = metadata.get("written_args")
    pointers = [i for i, s in enumerate(sigs) if s.startswith("*")]  # runtime index of each array argument
    # the arrays copied back after a run: those the kernel writes, or (not traceable) all, if changed
    copy_back = None if written is None else [k for k, i in enumerate(pointers) if i in written]

    def launch(grid, args, buffers=()):
        """`buffers`: the `buffers=` launch option (runtime/args.py): arrays pointer tables point into, run
        on copies as arguments are (an address inside one maps to its copy) and copied back if changed."""
        if len(args) != len(sigs):
            raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                              f"expected {len(sigs)} runtime arguments, got {len(args)}")
        arrays, buf_names, scalars = [], [], {}
        try:
            for n, s, v in zip(names, sigs, args):
                if s.startswith("*"):
                    arrays.append(_as_numpy(v))
                    buf_names.append(n)
                else:
                    scalars[n] = v
        except TypeError as e:
            raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"], str(e)) from None
        for i in written or ():
            if isinstance(args[i], np.ndarray) and not args[i].flags.writeable:
                raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                                  f"argument '{names[i]}' is read-only but the kernel writes to it")
        work = [np.ascontiguousarray(a).copy() for a in arrays]
        grid = coarse_grid(metadata, grid, scalars)
        total = grid[0] * grid[1] * grid[2]
        if total == 0:
            return
        block_dim = launch_blocks(metadata, total, {n: a.nbytes for n, a in zip(buf_names, arrays)})
        for extra in extra_gm_args(metadata):
            if extra == "workspace":  # a mixed cube kernel's per-block slots (backends/ascend/cube/mixed.py)
                work.append(np.zeros(metadata["workspace_bytes"] * block_dim, np.uint8))
            else:  # one 64-byte device_assert slot per block, -1 until a program fails (debug.py)
                work.append(np.full(block_dim * STATUS_SLOT, -1, np.int64))
            buf_names.append(extra)
        n_gm = len(work)
        extra = _extra_buffers(buffers, arrays, metadata)
        for k, b in extra:  # regions of the model, after the kernel's GM arguments: no parameter names them
            work.append(np.ascontiguousarray(b).copy())
            buf_names.append(f"buffers[{k}]")
        t = Tiling(**{n: scalars[n] for n, _ in fields[:-3]}, numPrograms=total, gridX=grid[0], gridY=grid[1])
        keep = [w if w.size else np.zeros(1, np.uint8) for w in work]
        bufs = (ctypes.c_void_p * max(len(keep), 1))(*[w.ctypes.data for w in keep])
        # where the caller's arrays live: the addresses pointer tables hold (emu gm_address maps them)
        host = [a.ctypes.data for a in arrays] + [0] * (n_gm - len(arrays)) + [b.ctypes.data for _, b in extra]
        hosts = (ctypes.c_uint64 * max(len(keep), 1))(*host)
        sizes = (ctypes.c_uint64 * max(len(keep), 1))(*[w.nbytes for w in work])
        cnames = (ctypes.c_char_p * max(len(keep), 1))(*[n.encode() for n in buf_names])
        err = ctypes.create_string_buffer(4096)
        counters = (ctypes.c_uint64 * 6)()
        rc = run(ctypes.c_int64(block_dim), bufs, sizes, cnames, len(keep), hosts, ctypes.byref(t), soc_arr, err,
                 4096, counters)
        totals = dict(zip(_COUNTERS, list(counters)), block_dim=block_dim, programs=total)
        width = 2 + len(BLOCK_COUNTERS)  # block, core, counters
        get = lib.xblock_emu_block_counters
        get.restype = ctypes.c_int64
        per_core = np.zeros(int(get(None, ctypes.c_int64(0))), np.uint64)
        get(per_core.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)), ctypes.c_int64(per_core.size))
        blocks = [dict(zip(BLOCK_COUNTERS, map(int, row[2:])), block=int(row[0]), core=CORE_NAMES[int(row[1])])
                  for row in per_core.reshape(-1, width)]
        for b in blocks:
            b["l1_to_l0_bytes"] = b["l1_to_l0a_bytes"] + b["l1_to_l0b_bytes"]
        for k in BLOCK_COUNTERS[len(_COUNTERS):4 + len(_COUNTERS)]:  # the GM<->UB DataCopy totals
            totals[k] = sum(b[k] for b in blocks)
        reads = (ctypes.c_uint64 * max(len(keep), 1))()
        lib.xblock_emu_region_reads(reads, ctypes.c_int64(len(keep)))
        # bytes of GM that had to be read at least once: each buffer's reads, up to its size
        totals["unique_read_bytes"] = sum(min(int(reads[i]), w.nbytes) for i, w in enumerate(work))
        launch.last_counters, launch.last_block_counters = totals, blocks
        status = work[buf_names.index("assertStatus")] if "assertStatus" in buf_names else ()
        failed = failed_assert(metadata, status, grid)
        if failed:  # an assert that failed is the cause, even when the model stopped the kernel after it
            raise ExecutionError(failed)
        if rc != 0:
            at, msg = map_sites(err.value.decode(errors="replace"), asm.get("cpp", ""), metadata)
            if "is outside every buffer passed to the kernel" in msg:
                msg += f" and of the launch's buffers= option: {BUFFERS_HINT}"
            raise ExecutionError(f"{at or metadata['file'] + ':' + str(metadata['line'])}: {metadata['name']}: the "
                                 f"AscendC model stopped the kernel: {msg}")
        for k in range(len(arrays)) if copy_back is None else copy_back:
            dst, src = arrays[k], work[k]
            if copy_back is None and np.array_equal(np.ascontiguousarray(dst).reshape(-1).view(np.uint8),
                                                    src.reshape(-1).view(np.uint8)):
                continue  # unchanged: a read-only input stays valid
            if not dst.flags.writeable:
                raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                                  "a read-only argument was written by the kernel")
            np.copyto(dst, src)
        for j, (k, dst) in enumerate(extra):
            src = work[n_gm + j]
            if np.array_equal(dst.reshape(-1).view(np.uint8), src.reshape(-1).view(np.uint8)):
                continue
            if not dst.flags.writeable:
                raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                                  f"buffers[{k}] is read-only but the kernel writes to it")
            np.copyto(dst, src)

    launch.last_counters, launch.last_block_counters = {}, []
    launch.takes_buffers = True
    return launch


def _extra_buffers(buffers, arrays: list, metadata: dict) -> list:
    """(k, numpy view) of the `buffers=` arrays not inside an argument or an earlier one (one copy per
    memory range); a partial overlap is refused."""
    names = [n for n, s in zip(metadata["arg_names"], metadata["arg_types"]) if s.startswith("*")]
    try:
        views = [_as_numpy(b) for b in buffers]
    except ArgumentError as e:
        raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"], f"buffers=: {e}") from None
    return list(unique_buffers(views, arrays, names, metadata))


def coarse_grid(metadata: dict, grid, scalars: dict) -> tuple:
    """The grid a coarsened kernel launches (`passes/coarsen_programs.py`): ceil(x / Q) programs along
    x, each computing Q <= R programs of the user's grid (R, or fewer where R would leave cores
    idle); x and Q go in the kernel's appended arguments. Other kernels launch the grid as given."""
    groups = metadata.get("row_groups")
    if groups:  # G instances a program, each its G-th of the rows (cube/rowsplit.py): G x x along x
        g = row_groups_for(grid[0] * grid[1] * grid[2], groups["most"], launch_cores(metadata)[0])
        g = g if grid[0] * g < 2**31 else 1  # gridX is an int32
        scalars[groups["arg"]] = g
        return (grid[0] * g, grid[1], grid[2])
    coarse = metadata.get("coarsen")
    if not coarse:
        return tuple(grid)
    per = rows_per_instance(grid[0], coarse["rows"], launch_cores(metadata)[0])
    scalars[coarse["arg"]], scalars[coarse["rows_arg"]] = grid[0], per
    return (-(-grid[0] // per), grid[1], grid[2])


def failed_assert(metadata: dict, status, grid) -> str | None:
    """The sim's message for the lowest failing program recorded in the status slots, or None."""
    keys = [int(k) for k in status if int(k) >= 0]
    if not keys:
        return None
    key = min(keys)
    lin, aid = key >> 16, key & 0xFFFF
    g0, g1, _ = grid
    pid = (lin % g0, lin // g0 % g1, lin // (g0 * g1))
    a = metadata["asserts"][aid]
    return f"{a['file']}:{a['line']}: device_assert failed in program {pid}: {a['message']}"


CUBE_COUNTERS = ("cube_ops", "mmad_calls", "gm_to_l1_bytes", "l1_to_l0a_bytes", "l1_to_l0b_bytes",
                 "l0c_to_gm_bytes", "cross_core_sets", "peak_l1_bytes", "peak_l0a_bytes", "peak_l0b_bytes",
                 "peak_l0c_bytes", "gm_to_l1_calls", "load_data_calls", "fixpipe_calls")


def cube_counters(ck) -> dict:
    """The Cube counters (emu/cube.h) of the last launch of compiled kernel `ck` on the CPU model."""
    out = (ctypes.c_uint64 * len(CUBE_COUNTERS))()
    n = load_library(ck.asm["so"], KIND).xblock_cube_counters(out, len(CUBE_COUNTERS))
    return dict(zip(CUBE_COUNTERS, list(out)[:n]))
