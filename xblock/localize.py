"""Find the first op, in program order, whose values differ between a target and the reference.

Both run the kernel instrumented by the xb-record-values pass (an xb -> xb transformation, so
every backend records the same values); the records are compared in program order.
"""

from __future__ import annotations

import numpy as np

from .backends import get_backend
from .numdiff import compare
from .passes import record_values
from .runtime.compiler import _normalize_grid, compile_specialization
from .testing import default_tolerance


def _recorded(kernel, grid, args, meta, target, per):
    bound = kernel.bind(args, meta)
    _, spec, runtime = kernel.specialize(bound)
    transform = (f"{record_values.NAME}:{per}", lambda m, md: record_values.run(m, md, per))
    ck = compile_specialization(kernel.source, spec, target, {}, transform=transform)
    grid3 = _normalize_grid(grid, bound)
    n_programs = grid3[0] * grid3[1] * grid3[2]
    size = max(ck.metadata["record_size"], 1) * n_programs
    backend = get_backend(target)
    rec = np.full(size, np.nan, dtype=np.float32)
    dev = [backend.to_device(a.copy()) if isinstance(a, np.ndarray) else a for a in runtime]
    dev_rec = backend.to_device(rec)
    ck.launcher(grid3, dev + [dev_rec])
    out = np.asarray(backend.to_host(dev_rec)).reshape(n_programs, -1)
    return ck.metadata["records"], out


def localize(kernel, grid, args, meta, target, reference="sim", atol=None, rtol=None, per="line") -> dict:
    """The first recorded op whose values on `target` diverge from `reference` beyond tolerance."""
    records, got = _recorded(kernel, grid, args, meta, target, per)
    _, want = _recorded(kernel, grid, args, meta, reference, per)
    for r in records:
        n = int(np.prod(r["shape"])) if r["shape"] else 1
        sl = slice(r["offset"], r["offset"] + n)
        dt = {"f16": np.float16, "f64": np.float64}.get(r["dtype"], np.float32)
        d_atol, d_rtol = default_tolerance(dt)
        if r["dtype"] == "bf16":
            d_atol, d_rtol = 4e-2, 4e-2
        res = compare(target, r["op"], got[:, sl], want[:, sl], d_atol if atol is None else atol,
                      d_rtol if rtol is None else rtol)
        if not res.ok:
            return {"target": target, "op": r["op"], "file": r["file"], "line": r["line"],
                    "where": f"{r['file']}:{r['line']}", "max_abs": res.max_abs, "mismatches": res.mismatches,
                    "program": res.first_bad[0] if res.first_bad else None}
    return {"target": target, "op": None, "where": "no recorded value diverges (the difference is in the "
            "final stores)", "max_abs": 0.0, "file": None, "line": None}
