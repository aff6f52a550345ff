"""README.md of an exported project: the specialization it was exported for, how to build and run it,
and what was (and was not) checked where it was generated."""

from __future__ import annotations

from ...emit.api_surface import SUPPORTED
from ...emit.cpp import workspace_const_name
from ...model.launch import extra_gm_args
from ...options import SOCS, launch_cores
from ...plan.plan import AscendPlan
from .host import host_arguments, usage

_NP_NAMES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "i1": "bool",
             "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
             "u32": "uint32", "u64": "uint64"}


def _arg_rows(meta: dict) -> list:
    rows = []
    for n, t in zip(meta["arg_names"], meta["arg_types"]):
        if t.startswith("*"):
            rows.append(f"| `{n}` | GM buffer of {_NP_NAMES.get(t[1:], t[1:])} | `{n.upper()}_BYTES` |")
        else:
            rows.append(f"| `{n}` | {_NP_NAMES.get(t, t)} scalar, in the tiling struct | `{n.upper()}` |")
    for extra in extra_gm_args(meta):
        what = (f"GM workspace, {meta.get('workspace_bytes')} B per block (`{workspace_const_name(meta['name'])}`)"
                if extra == "workspace" else "GM status of the device_asserts, one int64 per block")
        rows.append(f"| `{extra}` | {what} | allocated by main.cpp |")
    return rows


def _names(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _assumptions(spec: dict | None) -> list:
    if spec is None:
        return ["- what the compiler assumed about integer arguments (divisible by 16, equal to 1) is not "
                "recorded: this export was made without its launch arguments."]
    is_ptr = {n: t.startswith("*") for n, t in spec["arg_types"].items()}
    lines = []
    scalars = [n for n in spec.get("divisible_by_16", []) if not is_ptr.get(n)]
    if scalars:
        lines.append(f"- {_names(scalars)} divisible by 16 (main.cpp refuses other values);")
    if spec.get("equal_to_1"):
        lines.append(f"- {_names(spec['equal_to_1'])} equal to 1 (main.cpp refuses other values);")
    ptrs = [n for n in spec.get("divisible_by_16", []) if is_ptr.get(n)]
    if ptrs:
        lines.append(f"- {_names(ptrs)} 16-byte aligned (aclrtMalloc returns 64-byte aligned memory).")
    return lines or ["- nothing about the values of the arguments."]


def _specialization(meta: dict, spec: dict | None, launch: dict | None) -> list:
    soc = SOCS[meta["soc"]]
    cores, what = launch_cores(meta)
    consts = (spec or {}).get("constexprs", meta.get("constexprs", {}))
    _, scalars = host_arguments(meta)
    grid = "given on main.cpp's command line"
    if launch:
        grid = f"`{tuple(launch['grid'])}` in the exported case"
        if launch.get("grid_formula"):
            grid += f"; its `case()` computes it as `{launch['grid_formula']}`"
    return [
        "## Specialization", "",
        "Compiled once for these; changing any of them means exporting again:", "",
        f"- kernel `{meta['name']}`, `{meta.get('kernel_type', 'KERNEL_TYPE_AIV_ONLY')}`, for {soc.name} "
        f"(`SOC_VERSION`; `--npu-arch={soc.npu_arch}` for CANN 9's bisheng);",
        *_plan(meta),
        f"- constexprs: {', '.join(f'`{k} = {v}`' for k, v in consts.items()) or 'none'};",
        "- argument types:", "",
        "| argument | type | main.cpp argument |", "|---|---|---|", *_arg_rows(meta), "",
        "The compiled code also assumes:", "", *_assumptions(spec), "",
        "At run time main.cpp takes the grid, the size of every buffer and the scalar arguments "
        f"({_names(n for n, _ in scalars) or 'none'}) from its command line: `{usage(meta)}`. One build serves "
        "other sizes: any grid and scalar values for which the Python kernel, with the constexprs above, stays "
        f"inside the buffers it is given. The grid is {grid}.", "",
        "Each program instance of the grid is one iteration of the kernel's loop "
        "`for (pid = GetBlockIdx(); pid < GX*GY*GZ; pid += GetBlockNum())`; main.cpp launches "
        f"`min(GX*GY*GZ, {cores})` blocks, one per {what}.", "",
    ]


def _plan(meta: dict) -> list:
    """The plan xblock's planner chose (plan/plan.py), when the metadata has one."""
    if not meta.get("plan"):
        return []
    return [f"- the plan: {AscendPlan.from_dict(meta['plan']).describe()} (`plan` in kernel.json);"]


def _case(launch: dict, kernel: str) -> list:
    rows = []
    for b in launch["buffers"]:
        data = ("the launch's own array (`data/`)" if b.get("data") == "given" and b["role"] == "input"
                else f"uniform in [{b['low']}, {b['high']}]" if b["role"] == "input"
                else f"compared: atol {b['atol']}, rtol {b['rtol']}")
        rows.append(f"| `{b['name']}` | {b['dtype']} | {tuple(b['shape'])} | {b['bytes']} | {b['role']} | {data} |")
    scalars = ", ".join(f"`{k} = {v}`" for k, v in launch["scalars"].items()) or "none"
    which = f"case `{launch['case']}`" if launch.get("case") else "the case"
    return [
        "## The exported case", "",
        f"Exported with {which} of `{launch.get('source') or 'the kernel file'}`: grid "
        f"`{tuple(launch['grid'])}`, scalars {scalars}.", "",
        "| buffer | dtype | shape | bytes | role | data |", "|---|---|---|---|---|---|", *rows, "",
        ("`scripts/gen_data.py` writes the inputs: it copies the launch's own arrays from `data/` (an export "
         "of a launch, `xblock.export`). " if any(b.get("data") == "given" for b in launch["buffers"]) else
         "`scripts/gen_data.py` writes the inputs (a fixed-seed generator: the same bytes with any numpy; outputs "
         "start as zeros). ") + "`golden/` holds the outputs xblock's reference simulator computed from exactly those "
        "inputs. `scripts/verify_result.py` compares the outputs with them within the tolerances above. "
        f"run.sh runs the program as `./build/{kernel} {' '.join(launch['command'])}`.", "",
        *_comparison(launch),
    ]


def _comparison(launch: dict) -> list:
    """How verify_result.py compares: the per-op-class rule and what this kernel's budget counted."""
    basis = sorted({b["tolerance"] for b in launch["buffers"] if b["role"] == "output" and "tolerance" in b})
    return [
        "### How the outputs are compared", "",
        "An element passes when `|out - golden| <= atol + rtol * |golden|` (NaN matches NaN, an infinity itself); "
        "integer and bool outputs must be equal. An NPU does not compute bit for bit what the reference "
        "simulator computes (Exp, Ln, Div and Sqrt are accurate to about an ulp, subnormals flush to zero, "
        "reductions and atomic adds sum in another order), so each output's tolerance comes from the classes "
        "of floating-point ops the kernel uses, in units of the epsilon of the type each op computes in: "
        "copies, selects, compares, max/min and integer ops are exact; add, sub, mul, fma and narrowing casts "
        "1 ulp each; div, sqrt, rsqrt 2 ulp; exp/log and other transcendental functions 4 ulp plus the error "
        "of their argument (times the input scale for exp); a reduction (sum, scan, dot, atomic add) of n "
        "elements 2*ceil(log2 n) ulp, and n ulp of the output's largest magnitude as an absolute term. "
        "`rtol` is the sum plus one ulp of the output type; `atol` is the sum with the absolute terms, times "
        "the output's largest golden magnitude (at least 1), and at least the type's smallest normal. "
        "A kernel with no inexact floating-point op is compared exactly. Where the exported case itself "
        "accepts more (its own atol/rtol), that is kept.", "",
        *(f"This kernel: {b}." for b in basis), "",
    ]


def _files(name: str, launch: dict | None) -> list:
    lines = [
        "Files:", "",
        f"- `kernel.cpp`: the AscendC kernel (`extern \"C\" __global__ __aicore__ void {name}(...)`), the source "
        "xblock compiled and ran on its CPU model of AscendC;",
        f"- `{name}_tiling.h`: the tiling struct (the scalar arguments and the grid), which the kernel takes by "
        "value and the generated launch function by pointer;",
        f"- `main.cpp`: the ACL host program (`ACLRT_LAUNCH_KERNEL({name})`);",
        "- `CMakeLists.txt`: a CANN kernel-launch project (`ascendc_library` for the kernel, an executable for the "
        "host);",
        "- `kernel.json`: the specialization, the signature, the unified-buffer plan"
        + (", the exported case;" if launch else "."),
    ]
    if launch:
        lines.append("- `scripts/gen_data.py`, `scripts/verify_result.py`, `golden/`, `run.sh`: the exported case's "
                     "inputs, golden outputs and the build-run-verify sequence.")
    return lines + [""]


def _build(meta: dict, launch: dict | None) -> list:
    name, soc = meta["name"], SOCS[meta["soc"]]
    first = ("`bash run.sh` builds, generates the inputs, runs and verifies. Step by step:" if launch else
             "This export has no launch case (no input data, golden outputs or run.sh; export with `--case` or "
             "`--size` for those). Step by step:")
    steps = ["source <CANN toolkit>/set_env.sh        # sets ASCEND_HOME_PATH",
             f"cmake -B build -DSOC_VERSION={soc.name}", "cmake --build build -j"]
    if launch:
        steps += ["python3 scripts/gen_data.py", "mkdir -p output", f"./build/{name} {' '.join(launch['command'])}",
                  "python3 scripts/verify_result.py"]
    else:
        steps += ["mkdir -p input output   # input/<buffer>.bin: raw little-endian arrays",
                  f"./build/{name} {usage(meta)}"]
    return [f"## Build and run (needs a CANN toolkit, {SUPPORTED[0]} to {SUPPORTED[-1]})", "", first, "",
            "```sh", *steps, "```", "",
            f"kernel.cpp spells every AscendC API the way each CANN from {', '.join(SUPPORTED)} declares it "
            "(xblock checks each name against the dev kit's headers of those releases), so it has no version "
            "switch: the same file builds with each.", "",
            f"With CANN 9 (`bisheng`) the kernel also builds on its own: "
            f"`bisheng -x asc kernel.cpp -c --npu-arch={soc.npu_arch}`.", ""]


def readme(meta: dict, spec: dict | None, launch: dict | None, host_check: str) -> str:
    """The README text.

    Args:
        meta: the kernel's metadata, with `source_name` (the kernel's file name, no folder).
        spec: the specialization (constexprs, argument types, divisible-by-16 and equal-to-1 names) or None.
        launch: kernel.json's "launch" entry, or None for a project without a launch case.
        host_check: what the host check at export found, one sentence.
    """
    name = meta["name"]
    plan = meta.get("ub_plan", {})
    head = [
        f"# {name} for {SOCS[meta['soc']].name} (AscendC, generated by xblock)", "",
        f"Generated by xblock from `{meta.get('source_name', '?')}:{meta.get('line', '?')}`.", "",
        "**No CANN toolkit built or ran this project where it was generated.** " + host_check + " xblock's "
        "tests also build exports like this one, with this CMakeLists.txt and run.sh, against a model toolkit "
        "(xblock's CPU model of AscendC and of ACL instead of CANN) and compare the outputs with the golden. "
        "Whether CANN's compiler accepts kernel.cpp is known only once a CANN toolkit builds it.", "",
    ]
    ub = [f"Unified buffer: {plan.get('total', '?')} of {plan.get('usable', '?')} B usable per vector core.", ""]
    body = head + _files(name, launch) + ub + _specialization(meta, spec, launch)
    body += (_case(launch, name) if launch else []) + _build(meta, launch)
    return "\n".join(body)
