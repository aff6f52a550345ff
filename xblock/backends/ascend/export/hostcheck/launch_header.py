"""What CANN's `ascendc_library()` derives from a kernel source, redone from its documented behaviour.

The CMake kernel-launch flow of CANN reads the kernel's entry signatures from the (preprocessed)
source and writes, per entry `NAME`, a header `aclrtlaunch_NAME.h` for the host and the stub that
implements it. Facts, taken from the ADK's `cmake/asc/legacy_modules/util/extract_host_stub.py`
(read for its behaviour; nothing of it is copied here):

- the header includes `acl/acl_base.h`, defines `ACLRT_LAUNCH_KERNEL(k)` as `aclrtlaunch_##k`
  unless it is defined already, and declares
  `extern "C" uint32_t aclrtlaunch_NAME(uint32_t numBlocks, aclrtStream stream, <params>)`;
- a global-memory parameter (`GM_ADDR`, any `__gm__ T*`) becomes `void*`;
- a parameter whose type is a struct defined in the preprocessed source (`struct T {` at the
  start of a line) is declared `T*` and the stub copies the struct from that pointer; the header
  declares no struct type, so host code includes the struct's header before it;
- any other parameter keeps its type;
- the two leading parameters are renamed `_numBlocks` / `_stream` when the kernel has a
  parameter of that name.

This module parses `kernel.cpp` the same way (the entry line, not xblock's metadata), so a host
program that disagrees with the kernel it ships with fails to compile here as it would with CANN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_ENTRY = re.compile(r'extern\s+"C"\s+(?:(?:__global__|__aicore__)\s+){2}void\s+(\w+)\s*\(')
_STRUCT = re.compile(r"^\s*struct\s+(\w+)\s*\{", re.MULTILINE)
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_SKIPPED = {"__restrict__", "__restrict", "struct"}


class KernelSignatureError(ValueError):
    """The kernel source has no entry, or an entry parameter the launch flow cannot pass."""


@dataclass(frozen=True)
class Param:
    """One kernel parameter: `kind` is "gm" (global memory), "struct" (by pointer) or "scalar"."""

    name: str
    ctype: str  # as written in the kernel, without the name
    kind: str

    @property
    def launch_type(self) -> str:
        """The parameter's type in the launch function."""
        if self.kind == "gm":
            return "void*"
        if self.kind == "struct":
            return self.ctype + "*"
        return self.ctype


@dataclass(frozen=True)
class Entry:
    """A kernel entry point and its parameters."""

    name: str
    params: tuple

    @property
    def header_name(self) -> str:
        return f"aclrtlaunch_{self.name}.h"

    def leading_names(self) -> tuple:
        """The names of the launch function's numBlocks and stream parameters."""
        names = {p.name for p in self.params}
        return ("_numBlocks" if "numBlocks" in names else "numBlocks", "_stream" if "stream" in names else "stream")


def _strip_comments(text: str) -> str:
    return _COMMENT.sub(" ", text)


def _closing_paren(text: str, start: int) -> int:
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise KernelSignatureError("unbalanced parentheses in the kernel entry's parameter list")


def _split_params(text: str) -> list:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _param(text: str, structs: set, entry: str) -> Param:
    if "=" in text or "[" in text or "&" in text:
        raise KernelSignatureError(f"{entry}: parameter '{text}' cannot be passed by a kernel launch "
                                   "(no defaults, arrays or references)")
    spaced = re.sub(r"\*", " * ", text)
    tokens = [t for t in spaced.split() if t not in _SKIPPED]
    if len(tokens) < 2 or not re.fullmatch(r"\w+", tokens[-1]):
        raise KernelSignatureError(f"{entry}: cannot read the type and name of parameter '{text}'")
    name, ctype = tokens[-1], " ".join(tokens[:-1]).replace(" *", "*")
    if "GM_ADDR" in tokens or "__gm__" in tokens:
        return Param(name, ctype, "gm")
    if "*" in tokens:
        raise KernelSignatureError(f"{entry}: parameter '{text}' is a pointer outside global memory "
                                   "(mark it __gm__ or pass a GM_ADDR)")
    base = [t for t in tokens[:-1] if t not in ("const", "volatile")]
    if len(base) == 1 and base[0] in structs:
        return Param(name, ctype, "struct")
    return Param(name, ctype, "scalar")


def _sources(kernel: Path, include_dirs) -> list:
    """The kernel and every local header it includes ("..."), transitively; system headers are skipped."""
    seen, todo, texts = set(), [kernel], []
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = _strip_comments(path.read_text())
        texts.append(text)
        for inc in _INCLUDE.findall(text):
            for d in (path.parent, *map(Path, include_dirs)):
                if (d / inc).is_file():
                    todo.append((d / inc).resolve())
                    break
    return texts


def parse_entries(kernel: Path, include_dirs=()) -> list:
    """Every `extern "C" __global__ __aicore__ void NAME(...)` entry of a kernel source, in order.

    Args:
        kernel: the kernel source (`kernel.cpp` of an export).
        include_dirs: where its quoted includes are searched after its own folder.
    Returns:
        A list of Entry; struct parameters are those whose type a `struct T {` in the sources defines.
    Raises:
        KernelSignatureError: no entry, or a parameter a launch cannot pass.
    """
    kernel = Path(kernel).resolve()
    texts = _sources(kernel, include_dirs)
    structs = {m for t in texts for m in _STRUCT.findall(t)}
    text = texts[0] if texts else ""
    entries = []
    for m in _ENTRY.finditer(text):
        close = _closing_paren(text, m.end())
        params = tuple(_param(p, structs, m.group(1)) for p in _split_params(text[m.end():close]))
        entries.append(Entry(m.group(1), params))
    if not entries:
        raise KernelSignatureError(f'{kernel.name} has no extern "C" __global__ __aicore__ void entry')
    return entries


def launch_signature(entry: Entry) -> str:
    """`uint32_t aclrtlaunch_NAME(uint32_t numBlocks, aclrtStream stream, ...)`, without `extern "C"`."""
    blocks, stream = entry.leading_names()
    params = [f"uint32_t {blocks}", f"aclrtStream {stream}"] + [f"{p.launch_type} {p.name}" for p in entry.params]
    return f"uint32_t aclrtlaunch_{entry.name}({', '.join(params)})"


def launch_header(entry: Entry) -> str:
    """The text of `aclrtlaunch_NAME.h` for one entry, as the launch flow would declare it."""
    guard = f"XBLOCK_MODEL_ACLRTLAUNCH_{entry.name.upper()}_H"
    return "\n".join([
        f"// {entry.header_name}: the launch function of kernel {entry.name}, declared as CANN's",
        "// ascendc_library() declares it. Written by xblock's host check, not by CANN.",
        f"#ifndef {guard}",
        f"#define {guard}",
        '#include "acl/acl_base.h"',
        "",
        "#ifndef ACLRT_LAUNCH_KERNEL",
        "#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func",
        "#endif",
        "",
        f'extern "C" {launch_signature(entry)};',
        "",
        f"#endif  // {guard}",
        "",
    ])


def model_launch_source(entry: Entry, kernel: Path, soc) -> str:
    """C++ that implements the launch function on xblock's AscendC model (one TU with the kernel).

    Args:
        entry: the kernel entry.
        kernel: the kernel source, included whole.
        soc: the SocProfile whose unified buffer the model enforces.
    """
    blocks, stream = entry.leading_names()
    gm = [p for p in entry.params if p.kind == "gm"]
    lines = [
        f"// The launch function of {entry.name} on xblock's AscendC CPU model: the blocks run one after",
        "// another on the host, on the buffers aclrtMalloc handed out (see xblock_acl_model.h). The",
        "// kernel comes first and is compiled as for an NPU: no host library names after it.",
        f'#include "{Path(kernel).resolve()}"',
        f'#include "{entry.header_name}"',
        '#include "xblock_acl_model.h"',
        "",
        f'extern "C" {launch_signature(entry)} {{',
    ]
    call = []
    for p in entry.params:
        if p.kind == "struct":
            value_type = " ".join(t for t in p.ctype.split() if t != "const")
            lines += [f"    {value_type} {p.name}Value;",
                      f"    __builtin_memcpy(&{p.name}Value, {p.name}, sizeof({p.name}Value));"]
            call.append(f"{p.name}Value")
        elif p.kind == "gm":
            call.append(f"({p.ctype}){p.name}")
        else:
            call.append(p.name)
    # one element more than there are GM parameters: an array cannot be empty
    ptrs = ", ".join([p.name for p in gm] + ["nullptr"])
    names = ", ".join([f'"{p.name}"' for p in gm] + ["nullptr"])
    lines += [
        f"    void* const buffers[] = {{{ptrs}}};",
        f"    const char* const names[] = {{{names}}};",
        f"    const uint32_t soc[3] = {{{soc.ub_bytes}u, {soc.ub_usable}u, {int(soc.has_data_copy_pad)}u}};",
        f'    return xbacl::run_blocks("{entry.name}", {blocks}, {stream}, buffers, names, {len(gm)}, soc,',
        f"                             [&]() {{ {entry.name}({', '.join(call)}); }});",
        "}",
        "",
    ]
    return "\n".join(lines)
