"""Time xblock's numpy simulator against Triton's interpreter (TRITON_INTERPRET=1) on the same kernels.

For each benchmark below it reports:
  sim      `case.run("sim")`, best of --repeat runs after one warm-up launch (compile excluded);
  interp   the same kernel under Triton's interpreter, best of --repeat after one warm-up, measured in a
           subprocess of --triton-python (Triton 3.6's interpreter breaks with numpy 2.4, so it
           usually lives in another environment); by default the xblock example itself runs there,
           with `xblock.language` mapped onto `triton.language` (--variant triton runs the
           unmodified Triton versions in examples/triton/ instead);
  compile  `xblock.compile(kernel, target="sim", ...)` (else first launch minus a warm launch) in a
           fresh process with an empty XBLOCK_CACHE_DIR, after compiling a primer kernel that takes
           the one-time process setup;
  hit      the same in a second fresh process that finds the kernels in that cache.

Usage: python benchmarks/sim_vs_triton_interpreter.py [--triton-python PY] [--only softmax,matmul]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRITON_PYTHON = "/tmp/tvenv/bin/python"

# name, example module, size, dtype, speed-up goal over the interpreter (None: no goal)
BENCHES = [
    ("softmax", "softmax", (823, 781), "float32", 50),
    ("layernorm", "layernorm", (97, 3001), "float32", 50),
    ("matmul", "matmul", (300, 200, 333), "float16", 10),
    ("add", "add", 98432, "float32", None),
]
PRIMER = ("gelu", 1, "float16")  # compiled first in a probe, to absorb one-time process setup


def _best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:160]


# ---------------------------------------------------------------------------------------------
# (a) xblock's simulator, in this process


def _use_repo() -> None:
    """Make `xblock` and `examples` importable from this checkout, whatever the working directory."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))


def _example_case(module: str, size, dtype):
    mod = importlib.import_module(f"examples.{module}")
    return mod.case(size, dtype)


def time_sim(benches, repeat: int) -> dict:
    """{name: {"s": seconds, "ok": bool}} or {name: {"error": text}}."""
    _use_repo()
    out = {}
    for name, module, size, dtype, _ in benches:
        try:
            from xblock.testing import check

            case = _example_case(module, size, dtype)
            case.run("sim")  # warm-up: compiles
            seconds = _best_of(lambda: case.run("sim"), repeat)
            try:
                check(case, case.args)
                ok = True
            except AssertionError:
                ok = False
            out[name] = {"s": seconds, "ok": ok}
        except Exception as e:  # the simulator may not exist yet: report and go on
            out[name] = {"error": _first_line(e)}
    return out


_SIG = {
    "float64": "fp64",
    "float32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "bool": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint32": "u32",
}


def _signature(case) -> list:
    """Triton-style signature strings of a case's runtime arguments ("*fp32", "i32", "fp32")."""
    sig = []
    for a in case.args:
        if hasattr(a, "dtype") and hasattr(a, "shape"):
            sig.append("*" + _SIG[a.dtype.name])
        elif isinstance(a, bool):
            sig.append("i1")
        elif isinstance(a, int):
            sig.append("i32" if -(2**31) <= a < 2**31 else "i64")
        else:
            sig.append("fp32")
    return sig


def probe_compile(benches) -> dict:
    """Run in a fresh process, for the primer and every bench: {name: {"compile": s} or {"first", "warm"}}.

    With `xblock.compile` it times compiling alone (frontend, passes, the sim's stages); without it,
    the first launch and the best warm launch, whose difference is the compile time.
    """
    _use_repo()
    import xblock

    out = {}
    primer = [("_primer", PRIMER[0], PRIMER[1], PRIMER[2], None)]
    for name, module, size, dtype, _ in primer + list(benches):
        try:
            case = _example_case(module, size, dtype)
            if hasattr(xblock, "compile"):
                t0 = time.perf_counter()
                xblock.compile(case.kernel, target="sim", signature=_signature(case), constexprs=case.meta)
                out[name] = {"compile": time.perf_counter() - t0}
                continue
            t0 = time.perf_counter()
            case.run("sim")
            first = time.perf_counter() - t0
            out[name] = {"first": first, "warm": _best_of(lambda: case.run("sim"), 3)}
        except Exception as e:
            out[name] = {"error": _first_line(e)}
    return out


def time_compile(benches) -> dict:
    """{name: {"compile": s, "hit": s}}: two fresh processes sharing one new XBLOCK_CACHE_DIR."""
    names = ",".join(b[0] for b in benches)
    passes = []
    with tempfile.TemporaryDirectory(prefix="xblock-bench-cache-") as cache:
        env = dict(os.environ, XBLOCK_CACHE_DIR=cache)
        for _ in range(2):  # cold cache, then warm cache
            cmd = [sys.executable, __file__, "--probe", "--only", names]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
            try:
                passes.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            except (json.JSONDecodeError, IndexError):
                err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                return {b[0]: {"error": f"probe failed: {err}"[:160]} for b in benches}
    out = {}
    for name, *_ in benches:
        cold, hot = passes[0].get(name, {}), passes[1].get(name, {})
        if "compile" in cold and "compile" in hot:
            out[name] = {"compile": cold["compile"], "hit": hot["compile"]}
        elif "first" in cold and "first" in hot:
            out[name] = {"compile": cold["first"] - cold["warm"], "hit": hot["first"] - hot["warm"]}
        else:
            out[name] = {"error": cold.get("error") or hot.get("error") or "missing"}
    return out


# ---------------------------------------------------------------------------------------------
# (b) Triton's interpreter, in a subprocess of --triton-python

# Runs under TRITON_INTERPRET=1. argv: repo, variant ("xblock" or "triton"), repeat, benches as JSON.
# A stand-in `xblock` package makes the examples import: `xblock.jit` keeps the Triton function,
# `xblock.language` is `triton.language`, `xblock.testing` is the real (numpy-only) module.
TRITON_CHILD = r"""
import importlib.util, json, sys, time, types
repo, variant, repeat, benches = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
import numpy as np
import torch
import triton
import triton.language as tl
import triton.runtime.jit as tjit

# the interpreter recompiles kernels with postponed annotations: "xl.constexpr" arrives as a string
_norm = tjit._normalize_ty
tjit._normalize_ty = lambda ty: _norm(ty[3:] if isinstance(ty, str) and ty.startswith("xl.") else ty)

class Jit:
    def __init__(self, fn):
        self.fn = fn if hasattr(fn, "run") else triton.jit(fn)
    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

xb = types.ModuleType("xblock")
xb.__path__ = []
xb.jit, xb.language, xb.cdiv = Jit, tl, triton.cdiv
sys.modules["xblock"], sys.modules["xblock.language"] = xb, tl
spec = importlib.util.spec_from_file_location("xblock.testing", f"{repo}/xblock/testing.py")
xb.testing = sys.modules["xblock.testing"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(xb.testing)

def torch_arg(a):
    if not isinstance(a, np.ndarray):
        return a
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(a)  # shares memory: results land in the numpy array

result = {}
for name, module, size, dtype in benches:
    try:
        path = f"{repo}/examples/{'triton/' if variant == 'triton' else ''}{module}.py"
        spec = importlib.util.spec_from_file_location(f"_bench_{module}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        case = mod.case(tuple(size) if isinstance(size, list) else size, dtype)
        args = [torch_arg(a) for a in case.args]
        launch = lambda: case.kernel.fn[case.grid](*args, **case.meta)
        launch()
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            launch()
            best = min(best, time.perf_counter() - t0)
        try:
            xb.testing.check(case, case.args)
            ok = True
        except AssertionError:
            ok = False
        result[name] = {"s": best, "ok": ok}
    except Exception as e:
        result[name] = {"error": f"{type(e).__name__}: {str(e).strip()[:150]}"}
print(json.dumps(result))
"""


def time_triton_interpreter(benches, python: str, variant: str, repeat: int) -> dict:
    """{name: {"s": seconds, "ok": bool}} or {name: {"error": text}}, from a subprocess of `python`."""
    spec = [[name, module, size, dtype] for name, module, size, dtype, _ in benches]
    env = dict(os.environ, TRITON_INTERPRET="1")
    cmd = [python, "-c", TRITON_CHILD, str(REPO), variant, str(repeat), json.dumps(spec)]
    try:
        with tempfile.TemporaryDirectory() as cwd:  # not the repo root: the real xblock must not import
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=cwd)
    except OSError as e:
        return {b[0]: {"error": f"cannot run {python}: {e}"[:160]} for b in benches}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {b[0]: {"error": f"interpreter subprocess failed: {err}"[:160]} for b in benches}


# ---------------------------------------------------------------------------------------------
# report


def _fmt(entry: dict, key: str, scale: float = 1.0, unit: str = "s") -> str:
    if key in entry:
        mark = "" if entry.get("ok", True) else " (wrong)"
        return f"{entry[key] * scale:.4f}{unit}{mark}" if unit == "s" else f"{entry[key] * scale:.1f}{unit}"
    return "-"


def print_table(benches, sim, interp, comp) -> None:
    head = ["kernel", "size", "sim", "triton interp", "speed-up", "goal", "met", "compile", "cache hit"]
    rows = [head]
    for name, _, size, dtype, goal in benches:
        s, t, c = sim.get(name, {}), interp.get(name, {}), comp.get(name, {})
        ratio = t["s"] / s["s"] if "s" in s and "s" in t and s["s"] > 0 else None
        rows.append(
            [
                name,
                f"{'x'.join(map(str, size)) if isinstance(size, tuple) else size} {dtype}",
                _fmt(s, "s"),
                _fmt(t, "s"),
                f"{ratio:.1f}x" if ratio else "-",
                f"{goal}x" if goal else "-",
                ("yes" if ratio >= goal else "NO") if ratio and goal else "-",
                _fmt(c, "compile"),
                _fmt(c, "hit", 1e3, "ms"),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    for label, res in (("sim", sim), ("triton interp", interp), ("compile", comp)):
        for name, entry in res.items():
            if "error" in entry:
                print(f"{label} {name}: {entry['error']}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--triton-python",
        default=DEFAULT_TRITON_PYTHON if Path(DEFAULT_TRITON_PYTHON).exists() else None,
        help="python with triton, torch and numpy<2.4 (default: %(default)s)",
    )
    p.add_argument(
        "--variant",
        choices=["xblock", "triton"],
        default="xblock",
        help="run the xblock examples under the interpreter (default) or examples/triton/",
    )
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", help="comma-separated benchmark names")
    p.add_argument("--skip-sim", action="store_true", help="only time Triton's interpreter")
    p.add_argument("--skip-compile", action="store_true")
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)  # internal: time_compile
    args = p.parse_args(argv)

    benches = [b for b in BENCHES if not args.only or b[0] in args.only.split(",")]
    if args.probe:
        print(json.dumps(probe_compile(benches)))
        return 0

    sim = {} if args.skip_sim else time_sim(benches, args.repeat)
    sim_works = any("s" in e for e in sim.values())
    comp = time_compile(benches) if sim_works and not args.skip_compile else {}
    if args.triton_python:
        interp = time_triton_interpreter(benches, args.triton_python, args.variant, args.repeat)
    else:
        print(f"no Triton interpreter: {DEFAULT_TRITON_PYTHON} does not exist; pass --triton-python")
        interp = {}
    print_table(benches, sim, interp, comp)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"sim": sim, "triton_interpreter": interp, "compile": comp}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
