"""Export a compiled ascend kernel as a CANN kernel-launch project (kernel, tiling, host, CMake, README).

`kernel.cpp` is byte for byte the source the CPU model compiled (`asm["cpp"]`). The host program
and the CMake file follow the layout of CANN's kernel-launch samples (`ascendc_library` plus an
ACL host executable); they are written here from the API facts, not copied from a sample.
"""

from __future__ import annotations

import json
from pathlib import Path

from .emit import CStyle, tiling_header, tiling_struct_name, workspace_const_name
from .launch import extra_gm_args
from .options import SOCS, launch_cores

FILES = ("kernel.cpp", "{name}_tiling.h", "main.cpp", "CMakeLists.txt", "README.md", "kernel.json")


def _host(meta: dict) -> str:
    name = meta["name"]
    soc = SOCS[meta["soc"]]
    cores, what = launch_cores(meta)
    ptrs = [(n, t[1:]) for n, t in zip(meta["arg_names"], meta["arg_types"]) if t.startswith("*")]
    scalars = [(n, t) for n, t in meta["tiling_fields"][:-3]]
    parse = {"i32": "std::stoi", "i64": "std::stoll", "f32": "std::stof", "f64": "std::stod"}
    lines = [
        f"// Host launcher for {name}: reads inputs, runs the kernel through ACL, writes outputs.",
        f"// Usage: ./{name} GX GY GZ {' '.join(f'{n}_BYTES' for n, _ in ptrs)} "
        f"{' '.join(n.upper() for n, _ in scalars)}",
        "// Each buffer is filled from input/<name>.bin when that file exists (else zeros) and written",
        "// back to output/<name>.bin after the launch.",
        "#include <cstdint>", "#include <cstdio>", "#include <cstdlib>", "#include <fstream>", "#include <string>",
        "#include <vector>", '#include "acl/acl.h"', f'#include "aclrtlaunch_{name}.h"',
        f'#include "{name}_tiling.h"', "",
        "#define CHECK_ACL(x) do { aclError e = (x); if (e != ACL_SUCCESS) { "
        "std::fprintf(stderr, \"%s:%d: %s failed: %d\\n\", __FILE__, __LINE__, #x, (int)e); "
        "std::exit(1); } } while (0)",
        "",
        "static std::vector<uint8_t> ReadFile(const std::string& path, size_t bytes) {",
        "    std::vector<uint8_t> data(bytes, 0);",
        "    std::ifstream f(path, std::ios::binary);",
        "    if (f) f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes));",
        "    return data;",
        "}", "",
        "int main(int argc, char** argv) {",
        f"    if (argc != {4 + len(ptrs) + len(scalars)}) {{",
        f"        std::fprintf(stderr, \"usage: %s GX GY GZ {' '.join(f'{n}_BYTES' for n, _ in ptrs)} "
        f"{' '.join(n.upper() for n, _ in scalars)}\\n\", argv[0]);",
        "        return 2;", "    }",
        "    int arg = 1;",
        "    const int64_t gx = std::stoll(argv[arg++]), gy = std::stoll(argv[arg++]), gz = std::stoll(argv[arg++]);",
    ]
    for n, _ in ptrs:
        lines.append(f"    const size_t {n}Bytes = std::stoull(argv[arg++]);")
    lines.append(f"    {tiling_struct_name(name)} tiling{{}};")
    for n, t in scalars:
        lines.append(f"    tiling.{n} = static_cast<{CStyle.types[t]}>({parse.get(t, 'std::stoll')}(argv[arg++]));")
    lines += [
        "    tiling.numPrograms = gx * gy * gz;",
        "    tiling.gridX = static_cast<int32_t>(gx);",
        "    tiling.gridY = static_cast<int32_t>(gy);",
        f"    // one block per {what} ({cores} on {soc.name}); the kernel loops over the programs",
        f"    const uint32_t blockDim = static_cast<uint32_t>(tiling.numPrograms < {cores} ? "
        f"tiling.numPrograms : {cores});",
        "",
        "    CHECK_ACL(aclInit(nullptr));",
        "    CHECK_ACL(aclrtSetDevice(0));",
        "    aclrtStream stream = nullptr;",
        "    CHECK_ACL(aclrtCreateStream(&stream));",
    ]
    for n, _ in ptrs:
        lines += [
            f"    std::vector<uint8_t> {n}Host = ReadFile(\"input/{n}.bin\", {n}Bytes);",
            f"    uint8_t* {n}Device = nullptr;",
            f"    CHECK_ACL(aclrtMalloc(reinterpret_cast<void**>(&{n}Device), {n}Bytes ? {n}Bytes : 1, "
            f"ACL_MEM_MALLOC_HUGE_FIRST));",
            f"    if ({n}Bytes) CHECK_ACL(aclrtMemcpy({n}Device, {n}Bytes, {n}Host.data(), {n}Bytes, "
            f"ACL_MEMCPY_HOST_TO_DEVICE));",
        ]
    gm_args = [f"{n}Device" for n, _ in ptrs]
    ptrs_free = []
    for extra in extra_gm_args(meta):  # arguments the lowering added, after the kernel's own
        if extra == "workspace":  # a mixed Cube kernel: one accumulator slot per block
            lines += [
                f"    const size_t workspaceBytes = {workspace_const_name(name)} * blockDim;",
                "    uint8_t* workspaceDevice = nullptr;",
                "    CHECK_ACL(aclrtMalloc(reinterpret_cast<void**>(&workspaceDevice), workspaceBytes, "
                "ACL_MEM_MALLOC_HUGE_FIRST));",
            ]
        else:  # device_assert: one int64 per block, -1 until a program fails (backends/ascend/debug.py)
            lines += [
                "    std::vector<int64_t> assertStatusHost(blockDim, -1);",
                "    const size_t assertStatusBytes = blockDim * sizeof(int64_t);",
                "    uint8_t* assertStatusDevice = nullptr;",
                "    CHECK_ACL(aclrtMalloc(reinterpret_cast<void**>(&assertStatusDevice), assertStatusBytes, "
                "ACL_MEM_MALLOC_HUGE_FIRST));",
                "    CHECK_ACL(aclrtMemcpy(assertStatusDevice, assertStatusBytes, assertStatusHost.data(), "
                "assertStatusBytes, ACL_MEMCPY_HOST_TO_DEVICE));",
            ]
        gm_args.append(f"{extra}Device")
        ptrs_free.append(f"{extra}Device")
    args = ", ".join(gm_args + ["tiling"])
    lines += [
        f"    ACLRT_LAUNCH_KERNEL({name})(blockDim, stream, {args});",
        "    CHECK_ACL(aclrtSynchronizeStream(stream));",
    ]
    if "assertStatus" in extra_gm_args(meta):
        lines += [
            "    CHECK_ACL(aclrtMemcpy(assertStatusHost.data(), assertStatusBytes, assertStatusDevice, "
            "assertStatusBytes, ACL_MEMCPY_DEVICE_TO_HOST));",
            "    for (int64_t key : assertStatusHost) {  // (program << 16) | assert id, see the kernel's asserts",
            "        if (key >= 0) std::fprintf(stderr, \"device_assert %lld failed in program %lld\\n\", "
            "static_cast<long long>(key & 0xFFFF), static_cast<long long>(key >> 16));",
            "    }",
        ]
    for n, _ in ptrs:
        lines += [
            f"    if ({n}Bytes) CHECK_ACL(aclrtMemcpy({n}Host.data(), {n}Bytes, {n}Device, {n}Bytes, "
            f"ACL_MEMCPY_DEVICE_TO_HOST));",
            f"    std::ofstream(\"output/{n}.bin\", std::ios::binary).write(reinterpret_cast<const char*>("
            f"{n}Host.data()), static_cast<std::streamsize>({n}Bytes));",
            f"    CHECK_ACL(aclrtFree({n}Device));",
        ]
    lines += [f"    CHECK_ACL(aclrtFree({p}));" for p in ptrs_free]
    lines += ["    CHECK_ACL(aclrtDestroyStream(stream));", "    CHECK_ACL(aclrtResetDevice(0));",
              "    CHECK_ACL(aclFinalize());", "    return 0;", "}", ""]
    return "\n".join(lines)


def _cmake(meta: dict) -> str:
    name = meta["name"]
    soc = SOCS[meta["soc"]]
    return f"""# Kernel-launch project for {name} (layout of CANN's kernel-launch samples).
cmake_minimum_required(VERSION 3.16)
project({name}_ascendc LANGUAGES CXX)

set(SOC_VERSION "{soc.name}" CACHE STRING "the Ascend part to build for")
set(ASCEND_CANN_PACKAGE_PATH "$ENV{{ASCEND_HOME_PATH}}" CACHE PATH "CANN toolkit installation")
if(NOT ASCEND_CANN_PACKAGE_PATH)
    set(ASCEND_CANN_PACKAGE_PATH "/usr/local/Ascend/ascend-toolkit/latest")
endif()

# CANN ships the AscendC kernel CMake support under one of these directories, by version
foreach(dir tools/tikcpp/ascendc_kernel_cmake compiler/tikcpp/ascendc_kernel_cmake
            ascendc_devkit/tikcpp/samples/cmake)
    if(EXISTS ${{ASCEND_CANN_PACKAGE_PATH}}/${{dir}})
        set(ASCENDC_CMAKE_DIR ${{ASCEND_CANN_PACKAGE_PATH}}/${{dir}})
        break()
    endif()
endforeach()
if(NOT ASCENDC_CMAKE_DIR)
    message(FATAL_ERROR "AscendC CMake support not found under ${{ASCEND_CANN_PACKAGE_PATH}}")
endif()
include(${{ASCENDC_CMAKE_DIR}}/ascendc.cmake)

# device code: kernel.cpp -> a library plus the generated aclrtlaunch_{name}.h
ascendc_library(kernels STATIC kernel.cpp)
ascendc_include_directories(kernels PRIVATE ${{CMAKE_CURRENT_SOURCE_DIR}})

# host code
add_executable({name} main.cpp)
target_include_directories({name} PRIVATE ${{CMAKE_CURRENT_SOURCE_DIR}}
                           ${{ASCEND_CANN_PACKAGE_PATH}}/include)
target_link_directories({name} PRIVATE ${{ASCEND_CANN_PACKAGE_PATH}}/lib64)
target_link_libraries({name} PRIVATE kernels ascendcl)
"""


def _readme(meta: dict) -> str:
    name = meta["name"]
    soc = SOCS[meta["soc"]]
    plan = meta.get("ub_plan", {})
    ptrs = [n for n, t in zip(meta["arg_names"], meta["arg_types"]) if t.startswith("*")]
    scalars = [n for n, _ in meta["tiling_fields"][:-3]]
    cores, what = launch_cores(meta)
    workspace = ""
    if meta.get("workspace_bytes"):
        workspace = (f"\nThe kernel is mixed (`{meta.get('kernel_type')}`): it also takes a GM `workspace` of "
                     f"{meta['workspace_bytes']} B per block\n(`{workspace_const_name(name)}` in the tiling header), "
                     "which `main.cpp` allocates and passes after the buffers.\n")
    return f"""# {name} for {soc.name} (AscendC, generated by xblock)

Generated from `{meta['file']}:{meta['line']}`. Files:

- `kernel.cpp`: the AscendC kernel (`extern "C" __global__ __aicore__ void {name}(...)`); the same
  file xblock compiled and ran on its CPU model of AscendC.
- `{name}_tiling.h`: the tiling struct (scalar arguments and the grid), passed by value.
- `main.cpp`: an ACL host program that allocates device buffers, launches the kernel with
  `ACLRT_LAUNCH_KERNEL({name})` and copies the results back.
- `CMakeLists.txt`: a CANN kernel-launch project (`ascendc_library` for the kernel, an executable
  for the host).
- `kernel.json`: the unified-buffer plan and the kernel's signature, as xblock computed them.

Unified buffer: {plan.get('total', '?')} of {plan.get('usable', '?')} B usable per vector core.

## Build (needs a CANN toolkit, 8.x)

```sh
source /usr/local/Ascend/ascend-toolkit/set_env.sh      # sets ASCEND_HOME_PATH
cmake -B build -DSOC_VERSION={soc.name}
cmake --build build -j
```

With CANN 9 (`bisheng`), the kernel also builds directly:
`bisheng -x asc kernel.cpp -c --npu-arch={soc.npu_arch}` (rename to `.asc` if your version wants it).

## Run

```sh
mkdir -p input output        # put raw little-endian arrays in input/<buffer>.bin
./build/{name} GX GY GZ {' '.join(f'<{n} bytes>' for n in ptrs)} {' '.join(f'<{n}>' for n in scalars)}
```

`GX GY GZ` is the launch grid of the Python kernel; the kernel runs program `pid` for
`pid = GetBlockIdx(); pid < GX*GY*GZ; pid += GetBlockNum()`, so any grid size works with
`min(GX*GY*GZ, {cores})` blocks, one per {what}. Buffers: {', '.join(ptrs)} (written back to `output/`).
{workspace}"""


def export(asm: dict, metadata: dict, directory) -> Path:
    """Write the project for a kernel compiled for target 'ascend' into `directory`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = metadata["name"]
    (d / "kernel.cpp").write_text(asm["cpp"])
    (d / f"{name}_tiling.h").write_text(tiling_header(name, metadata["tiling_fields"],
                                                      metadata.get("workspace_bytes", 0)))
    (d / "main.cpp").write_text(_host(metadata))
    (d / "CMakeLists.txt").write_text(_cmake(metadata))
    (d / "README.md").write_text(_readme(metadata))
    info = {k: metadata[k] for k in ("name", "arg_names", "arg_types", "tiling_fields", "ub_plan", "soc",
                                     "kernel_type", "workspace_bytes", "extra_gm_args", "asserts", "cube", "warnings")
            if k in metadata}
    (d / "kernel.json").write_text(json.dumps(info, indent=2) + "\n")
    return d
