"""The exported launch case: its buffers and scalars, its input data and its golden outputs.

An export made from a launch case (`xblock export --case ...`, the demo) describes that launch in
kernel.json ("launch"), writes scripts/gen_data.py and scripts/verify_result.py (numpy only), the
golden outputs in golden/ and run.sh. The inputs are what gen_data.py generates (the same module,
run here), and the golden is xblock's reference simulator run on them, so the project needs no
xblock on the machine that builds and runs it. Each output's tolerance comes from the classes of
floating-point ops the kernel uses (tolerance.py) and is written into kernel.json.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
from pathlib import Path

import numpy as np

from . import gen_data, tolerance
from .host import kernel_scalars

HERE = Path(__file__).parent
SCRIPTS = ("gen_data.py", "verify_result.py")


def _dtype_name(a: np.ndarray) -> str:
    return a.dtype.name  # "bfloat16" for ml_dtypes' type, "bool", "float16", ...


def _value_range(a: np.ndarray) -> tuple:
    """(low, high) of the finite values of an input array, as JSON numbers."""
    flat = np.asarray(a).reshape(-1)
    if flat.dtype.kind in "biu":
        return (int(flat.min()), int(flat.max())) if flat.size else (0, 0)
    wide = flat.astype(np.float64)
    wide = wide[np.isfinite(wide)]
    return (float(wide.min()), float(wide.max())) if wide.size else (0.0, 0.0)


def _case_floor(case) -> tuple:
    """(atol, rtol) the case itself asks for, where it sets them (a Case's defaults say nothing)."""
    defaults = {f.name: f.default for f in dataclasses.fields(case)} if dataclasses.is_dataclass(case) else {}
    return tuple(float(getattr(case, k, 0.0)) if getattr(case, k, None) != defaults.get(k) else 0.0
                 for k in ("atol", "rtol"))


def _round_up(x: float) -> float:
    """`x` to 3 significant digits, never below it."""
    if x <= 0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return float(f"{math.ceil(x / step - 1e-9) * step:.3g}")


def _input_scale(bufs: list, scalars: dict) -> float:
    """The largest magnitude of the float inputs (their generated range) and float scalars."""
    values = [abs(v) for b in bufs if b["role"] == "input" and b["dtype"] in tolerance.NUMPY_TYPE
              for v in (b["low"], b["high"])]
    values += [abs(v) for v in scalars.values() if isinstance(v, float) and math.isfinite(v)]
    return max(values, default=0.0)


def _set_tolerances(bufs: list, goldens: dict, b: tolerance.Budget, case) -> None:
    floor_atol, floor_rtol = _case_floor(case)
    basis = tolerance.describe(b)
    for buf in bufs:
        if buf["role"] != "output":
            continue
        gold = np.asarray(goldens[buf["name"]])
        gold = gold.astype(np.float64) if gold.dtype.kind == "f" or buf["dtype"] == "bfloat16" else gold
        atol, rtol = tolerance.output_tolerance(b, buf["dtype"], gold)
        if buf["dtype"] not in tolerance.NUMPY_TYPE:
            buf["atol"], buf["rtol"], buf["tolerance"] = 0.0, 0.0, "integer or bool: compared exactly"
            continue
        why = basis
        if floor_atol > atol or floor_rtol > rtol:  # the kernel's own case accepts more: keep its word
            why += f"; no tighter than the case's own atol {floor_atol:g}, rtol {floor_rtol:g}"
            atol, rtol = max(atol, floor_atol), max(rtol, floor_rtol)
        buf["atol"], buf["rtol"], buf["tolerance"] = _round_up(atol), _round_up(rtol), why


def _bf16():
    from .....testing import bf16

    return bf16()


def _scalar_text(value, t: str) -> str:
    """A scalar as main.cpp parses it back to the same value (f32: the float32 value, exactly)."""
    if t.startswith("f") or t.startswith("bf"):
        return repr(float(np.float32(value))) if t == "f32" else repr(float(value))
    return str(int(value))


def _bound(case) -> dict:
    return case.kernel.bind(tuple(case.args), dict(case.meta))


def _grid(case, bound: dict) -> tuple:
    from .....host import normalize_grid

    return normalize_grid(case.grid, bound)


def _buffers(meta: dict, case, bound: dict) -> list:
    params = list(case.kernel.source.params)
    outputs = {params[i] for i in case.outputs.values()}
    bufs = []
    for name, t in zip(meta["arg_names"], meta["arg_types"]):
        if not t.startswith("*"):
            continue
        a = np.ascontiguousarray(bound[name])
        buf = {"name": name, "dtype": _dtype_name(a), "shape": list(a.shape), "bytes": int(a.nbytes),
               "role": "output" if name in outputs else "input"}
        if buf["role"] == "input":
            buf["low"], buf["high"] = _value_range(a)
        bufs.append(buf)
    return bufs


def launch_of(meta: dict, export_case: dict, xb_text: str) -> tuple:
    """The "launch" entry of kernel.json for a compiled kernel and the case it was exported with, and the
    golden outputs (name -> array) of that launch; `xb_text` (the compile's xb stage) sets the tolerances."""
    case = export_case["case"]
    bound = _bound(case)
    grid = _grid(case, bound)
    bufs = _buffers(meta, case, bound)
    scalars = {n: bound[n] for n, _ in kernel_scalars(meta)}
    command = [str(g) for g in grid] + [str(b["bytes"]) for b in bufs]
    command += [_scalar_text(scalars[n], t) for n, t in kernel_scalars(meta)]
    launch = {"case": export_case.get("name"), "source": export_case.get("source"), "grid": list(grid),
              "grid_formula": export_case.get("grid_formula"),
              "scalars": {n: _json_scalar(v) for n, v in scalars.items()}, "command": command, "seed": 0,
              "buffers": bufs}
    given = _given(bufs, bound) if export_case.get("given") else {}
    contents = gen_data.generate_all(launch, given)
    for b in bufs:
        b["sha256"] = hashlib.sha256(contents[b["name"]].tobytes()).hexdigest()
    goldens = golden_outputs(launch, case, given)
    launch["given"] = given  # written to data/ by write_case_files, then dropped from kernel.json
    programs = int(np.prod(grid, dtype=np.int64))
    _set_tolerances(bufs, goldens, tolerance.budget(xb_text, _input_scale(bufs, launch["scalars"]), programs), case)
    return launch, goldens


def _json_scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    return int(v) if isinstance(v, (int, np.integer)) else float(v)


def _as_array(buf: dict, content: np.ndarray) -> np.ndarray:
    """A generated buffer as the array the kernel takes (bfloat16 from its bit patterns)."""
    a = content.view(_bf16()) if buf["dtype"] == "bfloat16" else content
    return a.reshape(buf["shape"]).copy()


def _given(bufs: list, bound: dict) -> dict:
    """name -> bytes of each buffer of the launch's own arrays (all marked "data": "given")."""
    given = {}
    for b in bufs:
        a = np.ascontiguousarray(bound[b["name"]])
        given[b["name"]] = (a.view(np.uint16) if b["dtype"] == "bfloat16" else a).tobytes()
        b["data"] = "given"
    return given


def golden_outputs(launch: dict, case, given=None) -> dict:
    """name -> every output array after the reference target ran the launch on gen_data's inputs."""
    from .... import REFERENCE

    contents = gen_data.generate_all(launch, given)
    arrays = {b["name"]: _as_array(b, contents[b["name"]]) for b in launch["buffers"]}
    params = list(case.kernel.source.params)
    args = [arrays.get(p, a) for p, a in zip(params, case.args)]
    case.kernel[tuple(launch["grid"])](*args, target=REFERENCE, **case.meta)
    return {b["name"]: arrays[b["name"]] for b in launch["buffers"] if b["role"] == "output"}


def run_script(meta: dict, launch: dict) -> str:
    """run.sh: build with CANN, generate the inputs, run, compare with the golden."""
    from ...options import SOCS

    name = meta["name"]
    return f"""#!/usr/bin/env bash
# Build {name} with a CANN toolkit, generate its inputs, run it and compare with the golden
# (see README.md). Needs ASCEND_HOME_PATH (source the toolkit's set_env.sh), cmake, python3 + numpy.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${{PYTHON:-python3}}"
SOC_VERSION="${{SOC_VERSION:-{SOCS[meta['soc']].name}}}"

cmake -S . -B build -DSOC_VERSION="$SOC_VERSION"
cmake --build build -j
"$PYTHON" scripts/gen_data.py
rm -rf output && mkdir -p output
./build/{name} {' '.join(launch['command'])}
"$PYTHON" scripts/verify_result.py
"""


def write_case_files(directory: Path, meta: dict, launch: dict, goldens: dict) -> list:
    """Write scripts/, golden/ (from `goldens`, launch_of's) and run.sh; returns the paths written, relative."""
    (directory / "scripts").mkdir(exist_ok=True)
    for script in SCRIPTS:
        shutil.copyfile(HERE / script, directory / "scripts" / script)
    golden = directory / "golden"
    if golden.exists():
        shutil.rmtree(golden)
    golden.mkdir()
    for name, data in goldens.items():
        (golden / f"{name}.bin").write_bytes(np.ascontiguousarray(data).tobytes())
    written = []
    if launch.get("given"):  # the launch's own arrays, which gen_data.py copies to input/
        (directory / "data").mkdir(exist_ok=True)
        for name, raw in launch["given"].items():
            (directory / "data" / f"{name}.bin").write_bytes(raw)
        written.append("data/")
    run = directory / "run.sh"
    run.write_text(run_script(meta, launch))
    run.chmod(0o755)
    return [f"scripts/{s}" for s in SCRIPTS] + ["golden/", "run.sh"] + written
