"""`xblock demo` / `make demo`: every example compiled for every target, run where it can run,
diffed against the sim (and the sim against numpy), and AscendC exported to a folder."""

from __future__ import annotations

import importlib
import os
import sys
import time
from pathlib import Path

import numpy as np

from .backends import TargetUnavailable, get_backend
from .backends import targets as all_targets
from .errors import XBlockError
from .numdiff import compare

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


def run_demo(out_dir: str = "out/demo", targets=None) -> int:
    """Run the demo; returns the process exit code (1 if any target that ran disagrees)."""
    from .cli import compile_case

    targets = targets or all_targets()
    failures = 0
    rows = []
    exported = []
    print(f"xblock demo: examples x targets ({', '.join(targets)}); reference: numpy, then the sim")
    for name in _examples():
        mod = importlib.import_module("examples." + name)
        size = DEMO_SIZES.get(name, mod.SIZES[-1])
        dtype = mod.DTYPES[0]
        case = mod.case(size, dtype)
        row = [name, "x".join(map(str, size)) if isinstance(size, tuple) else str(size), np.dtype(dtype).name
               if not isinstance(dtype, str) else dtype]
        sim_out = None
        for target in targets:
            t0 = time.perf_counter()
            try:
                backend = get_backend(target)
                ck = compile_case(case.kernel, case, target)  # the launch below reuses this kernel
            except TargetUnavailable as e:
                row.append("n/a: " + _cell(str(e).replace(f"target '{target}' ", "")))
                continue
            except XBlockError as e:
                failures += 1
                row.append(_cell("compile error: " + str(e).splitlines()[0]))
                continue
            if target == "ascend" and backend.export is not None:
                dest = Path(out_dir) / "ascend" / name
                try:
                    ck.export(dest)
                    exported.append(str(dest))
                except Exception as e:  # export problems are reported, the demo goes on
                    row.append(_cell(f"export failed: {e}"))
                    continue
            reason = backend.availability()
            if reason:
                row.append(_cell(f"compiled; not run: {reason}"))
                continue
            args = [backend.to_device(a.copy()) if isinstance(a, np.ndarray) else a for a in case.args]
            try:
                case.kernel[case.grid](*args, target=target, **case.meta)
            except XBlockError as e:
                failures += 1
                row.append(_cell("run error: " + str(e).splitlines()[0]))
                continue
            host = [np.asarray(backend.to_host(a)) if isinstance(c, np.ndarray) else a
                    for a, c in zip(args, case.args)]
            verdicts = []
            for out_name, idx in case.outputs.items():
                ref = case.expected[out_name] if target == "sim" else sim_out[idx]
                d = compare(target, out_name, host[idx], ref, case.atol, case.rtol)
                verdicts.append(d)
            if target == "sim":
                sim_out = host
            ok = all(d.ok for d in verdicts)
            failures += 0 if ok else 1
            err = max(d.max_abs for d in verdicts)
            ms = (time.perf_counter() - t0) * 1e3
            row.append(f"{'ok' if ok else 'FAIL'} err={err:.1e} {ms:.0f}ms")
        rows.append(row)
    head = ["example", "size", "dtype"] + [f"{t} ({'vs numpy' if t == 'sim' else 'vs sim'})" for t in targets]
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    if exported:
        print(f"AscendC projects exported under {os.path.join(out_dir, 'ascend')}/ ({len(exported)} kernels)")
    print("demo: " + ("all targets that ran agree" if not failures else f"{failures} failure(s)"))
    return 1 if failures else 0
