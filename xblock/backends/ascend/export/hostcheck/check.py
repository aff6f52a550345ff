"""Checks of an exported project without CANN: main.cpp against its kernel, and the whole project on a
model toolkit (CANN's layout, xblock's AscendC CPU model and ACL model inside)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .....errors import XBlockError
from ....common.cachedir import build_folder, cache_dir
from ...options import SOCS
from .launch_header import launch_header, model_launch_source, parse_entries

HERE = Path(__file__).parent
ACL_INCLUDE = HERE / "include"
MODEL_DIR = HERE / "model"
EMU_DIR = HERE.parents[1] / "model" / "emu"
CXX = os.environ.get("CXX", "g++")
HOST_FLAGS = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
CMAKE_DIR = Path("compiler") / "tikcpp" / "ascendc_kernel_cmake"  # where CANN 8 keeps ascendc.cmake


class HostCheckError(XBlockError):
    """An exported project that does not hold together (its host program and its kernel disagree)."""


def soc_by_version(version: str):
    """The SocProfile whose CANN name (SOC_VERSION, e.g. Ascend910B3) is `version`."""
    for soc in SOCS.values():
        if soc.name.lower() == version.lower():
            return soc
    raise HostCheckError(f"SOC_VERSION {version} is not one xblock models ({', '.join(s.name for s in SOCS.values())})")


def write_launch_files(kernel: Path, header_dir: Path, source_dir: Path | None = None, soc=None) -> list:
    """Write aclrtlaunch_<entry>.h for every entry of `kernel` (and, with `source_dir`, its model launch TU).

    Returns the entries.
    """
    entries = parse_entries(kernel)
    header_dir.mkdir(parents=True, exist_ok=True)
    for e in entries:
        (header_dir / e.header_name).write_text(launch_header(e))
        if source_dir is not None:
            source_dir.mkdir(parents=True, exist_ok=True)
            (source_dir / f"{Path(kernel).stem}_{e.name}_launch.cpp").write_text(model_launch_source(e, kernel, soc))
    return entries


def check_host(project) -> str:
    """Compile the project's main.cpp (syntax and types, -Wall -Wextra -Werror) against the launch header
    derived from its kernel.cpp and xblock's ACL declarations.

    Returns:
        The command, for the record (paths relative to the project).
    Raises:
        HostCheckError: with the compiler's messages.
    """
    project = Path(project)
    with tempfile.TemporaryDirectory(prefix="xblock-hostcheck-") as tmp:
        try:
            write_launch_files(project / "kernel.cpp", Path(tmp))
        except ValueError as e:
            raise HostCheckError(str(e)) from None
        pch = _host_pch((project / "main.cpp").read_text())
        cmd = [CXX, *HOST_FLAGS, *(["-include", str(pch)] if pch else []), "-I", str(project), "-I", tmp, "-I",
               str(ACL_INCLUDE), str(project / "main.cpp")]
        res = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if res.returncode != 0:
        raise HostCheckError(f"main.cpp of {project.name} does not compile against the launch header of its "
                             f"kernel.cpp and the ACL declarations:\n{res.stderr[:4000]}")
    return f"{CXX} {' '.join(HOST_FLAGS)} main.cpp"


# main.cpp's leading lines up to its last include of a standard header or of acl/acl.h (comments and blank
# lines in between): what every exported main.cpp shares, precompiled once (`_host_pch`)
_SHARED_INCLUDES = re.compile(r'\A(?:[ \t]*(?://[^\n]*)?\n|[ \t]*#include[ \t]*(?:<[\w./]+>|"acl/acl\.h")[^\n]*\n)+')


@functools.lru_cache(maxsize=1)
def _acl_digest() -> str:
    """The digest of xblock's ACL declarations (read once a process: every export checks its host program)."""
    h = hashlib.sha256()
    for p in sorted(ACL_INCLUDE.rglob("*.h")):
        h.update(p.read_bytes())
    return h.hexdigest()


def _host_pch(main_cpp: str) -> Path | None:
    """A precompiled header of main.cpp's leading standard and ACL includes, in the compile cache.

    They are most of the host check's time (0.4 s of g++ against 0.15 s with the header precompiled);
    main.cpp includes the same headers again at the same place (include guards make that a no-op), so
    the check sees the same program. None where main.cpp starts otherwise or the header cannot be built:
    the check then compiles main.cpp whole."""
    m = _SHARED_INCLUDES.match(main_cpp)
    includes = "".join(line.strip() + "\n" for line in (m[0] if m else "").splitlines() if "#include" in line)
    if not includes:
        return None
    key = hashlib.sha256("\0".join([CXX, *HOST_FLAGS, includes, _acl_digest()]).encode()).hexdigest()[:16]
    folder = cache_dir() / "ascend-hostcheck" / key
    header = folder / "host_pch.h"
    if (folder / "done").is_file():
        return header

    def build(tmp: Path) -> bool:
        (tmp / header.name).write_text(includes)
        flags = [f for f in HOST_FLAGS if f != "-fsyntax-only"]
        res = subprocess.run([CXX, *flags, "-x", "c++-header", "-I", str(ACL_INCLUDE), header.name, "-o",
                              header.name + ".gch"], cwd=tmp, capture_output=True)
        (tmp / "done").write_text("")
        return res.returncode == 0

    build_folder(folder, build)
    return header if (folder / "done").is_file() else None


def model_toolkit(directory) -> Path:
    """A folder laid out like a CANN toolkit (ASCEND_HOME_PATH) whose ascendc.cmake, ACL headers and
    lib64/libascendcl.a are xblock's models: an exported project builds and runs against it unmodified.

    Raises:
        HostCheckError: the ACL model does not build.
    """
    root = Path(directory).resolve()
    shutil.copytree(ACL_INCLUDE, root / "include", dirs_exist_ok=True)
    lib = root / "lib64"
    lib.mkdir(parents=True, exist_ok=True)
    obj = lib / "acl_model.o"
    for cmd in ([CXX, "-std=c++17", "-Wall", "-Werror", "-O1", "-fPIC", "-I", str(root / "include"), "-I",
                 str(MODEL_DIR), "-c", str(MODEL_DIR / "acl_model.cpp"), "-o", str(obj)],
                ["ar", "rcs", str(lib / "libascendcl.a"), str(obj)]):
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise HostCheckError(f"the ACL model does not build:\n{res.stderr[-4000:]}")
    obj.unlink()
    text = (MODEL_DIR / "ascendc.cmake.in").read_text()
    for key, value in {"PYTHON": sys.executable, "EMU_DIR": EMU_DIR, "MODEL_DIR": MODEL_DIR, "TOOLKIT": root}.items():
        text = text.replace(f"@{key}@", str(value))
    (root / CMAKE_DIR).mkdir(parents=True, exist_ok=True)
    (root / CMAKE_DIR / "ascendc.cmake").write_text(text)
    (root / "set_env.sh").write_text(f'export ASCEND_HOME_PATH="{root}"\n')
    return root


def run_project(project, toolkit, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the project's run.sh (build, gen_data, run, verify) against a model toolkit."""
    env = dict(os.environ, ASCEND_HOME_PATH=str(toolkit), PYTHON=sys.executable)
    env.pop("ASCEND_TOOLKIT_HOME", None)
    return subprocess.run(["bash", "run.sh"], cwd=project, env=env, capture_output=True, text=True, timeout=timeout)
