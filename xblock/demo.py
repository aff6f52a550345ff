"""`xblock demo` / `make demo`: every example compiled for every target, run where it can run,
diffed against the sim (and the sim against numpy), and AscendC exported to a folder."""

from __future__ import annotations

import importlib
import os
import sys
import time
from pathlib import Path

import numpy as np

from .backends import REFERENCE, TargetUnavailable, get_backend
from .backends import targets as all_targets
from .errors import XBlockError
from .numdiff import compare, diff

DEMO_SIZES = {"add": 98432, "softmax": (823, 781), "layernorm": (97, 3001), "rmsnorm": (64, 1000),
              "matmul": (300, 200, 333), "gelu": 98432, "argmax": (64, 1000), "cumsum": (64, 1000),
              "transpose": (300, 200), "colsum": (1000, 97)}


def _examples():
    root = Path(__file__).resolve().parents[1]
    if (root / "examples").is_dir() and str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module("examples").EXAMPLES


def _cell(status: str) -> str:
    return status if len(status) <= 44 else status[:41] + "..."


def _compile(case, target: str, dest: Path, exported: list) -> tuple:
    """Compile (and export, where the target can) one example: (error cell or None, seconds, failed)."""
    t0 = time.perf_counter()
    try:
        backend = get_backend(target)
        ck = case.kernel.warmup(*case.args, target=target, **case.meta)  # the diff reuses this kernel
    except TargetUnavailable as e:
        return "n/a: " + _cell(str(e).replace(f"target '{target}' ", "")), 0.0, False
    except XBlockError as e:
        return _cell("compile error: " + str(e).splitlines()[0]), 0.0, True
    if backend.export is not None:
        try:
            ck.export(dest)
            exported.append(target)
        except Exception as e:  # export problems are reported, the demo goes on
            return _cell(f"export failed: {e}"), 0.0, False
    return None, time.perf_counter() - t0, False


def _verdict(diffs: list, seconds: float) -> tuple:
    ok = all(d.ok for d in diffs)
    err = max(d.max_abs for d in diffs)
    return f"{'ok' if ok else 'FAIL'} err={err:.1e} {seconds * 1e3:.0f}ms", ok


def _example_row(name: str, case, targets, out_dir: Path, exported: list) -> tuple:
    """The demo's cells for one example (one per target) and its number of failures."""
    cells, seconds, failures = {}, {}, 0
    for target in targets:
        cell, seconds[target], failed = _compile(case, target, out_dir / target / name, exported)
        if cell is not None:
            cells[target] = cell
            failures += failed
    others = [t for t in targets if t not in cells and t != REFERENCE]
    outputs = list(case.outputs.values())
    try:
        rep = diff(case.kernel, case.grid, *case.args, targets=others, reference=REFERENCE, outputs=outputs,
                   atol=case.atol, rtol=case.rtol, **case.meta)
    except XBlockError as e:  # the reference itself fails: nothing can be compared
        return [cells.get(t, _cell("run error: " + str(e).splitlines()[0])) for t in targets], failures + 1
    if REFERENCE in targets and REFERENCE not in cells:  # the reference against numpy
        diffs = [compare(REFERENCE, o, rep.reference_outputs[i], case.expected[o], case.atol, case.rtol)
                 for o, i in case.outputs.items()]
        cells[REFERENCE], ok = _verdict(diffs, seconds[REFERENCE] + rep.reference_seconds)
        failures += not ok
    for st in rep.statuses:
        if st.status == "skipped":
            cells[st.target] = _cell(f"compiled; not run: {st.reason}")
        elif st.status == "error":
            cells[st.target] = _cell("run error: " + st.reason)
            failures += 1
        else:
            cells[st.target], ok = _verdict([r for r in rep.rows if r.target == st.target],
                                            seconds[st.target] + st.seconds)
            failures += not ok
    return [cells[t] for t in targets], failures


def run_demo(out_dir: str = "out/demo", targets=None) -> int:
    """Run the demo; returns the process exit code (1 if any target that ran disagrees)."""
    targets = targets or all_targets()
    failures = 0
    rows = []
    exported: list = []
    print(f"xblock demo: examples x targets ({', '.join(targets)}); reference: numpy, then the {REFERENCE}")
    for name in _examples():
        mod = importlib.import_module("examples." + name)
        size = DEMO_SIZES.get(name, mod.SIZES[-1])
        dtype = mod.DTYPES[0]
        case = mod.case(size, dtype)
        row = [name, "x".join(map(str, size)) if isinstance(size, tuple) else str(size), np.dtype(dtype).name
               if not isinstance(dtype, str) else dtype]
        cells, failed = _example_row(name, case, targets, Path(out_dir), exported)
        rows.append(row + cells)
        failures += failed
    head = ["example", "size", "dtype"] + [f"{t} (vs {'numpy' if t == REFERENCE else REFERENCE})" for t in targets]
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    for target in sorted(set(exported)):
        print(f"{target} projects exported under {os.path.join(out_dir, target)}/ ({exported.count(target)} kernels)")
    print("demo: " + ("all targets that ran agree" if not failures else f"{failures} failure(s)"))
    return 1 if failures else 0
