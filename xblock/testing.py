"""Test and benchmark helpers: the `Case` every example exposes, and tolerances per dtype."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Case:
    """One launch of an example kernel with its numpy reference.

    Attributes:
        kernel: the jitted kernel.
        grid: a launch grid (tuple, or a callable of the meta-parameters).
        args: positional kernel arguments (numpy arrays are written in place).
        meta: constexpr keyword arguments (BLOCK sizes...).
        outputs: name -> index into `args` of each array the kernel writes.
        expected: name -> numpy array the output must match.
        atol, rtol: tolerances of the comparison.
    """

    kernel: Any
    grid: Any
    args: tuple
    meta: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    expected: dict = field(default_factory=dict)
    atol: float = 1e-5
    rtol: float = 1e-5

    def run(self, target: str, args: tuple | None = None) -> None:
        self.kernel[self.grid](*(self.args if args is None else args), target=target, **self.meta)

    def copy_args(self) -> tuple:
        return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.args)


def default_tolerance(dtype) -> tuple[float, float]:
    """(atol, rtol) for comparing results of the given numpy dtype against a reference."""
    name = np.dtype(dtype).name
    return {
        "float16": (1e-2, 1e-2),
        "bfloat16": (4e-2, 4e-2),
        "float32": (1e-5, 1e-5),
        "float64": (1e-12, 1e-12),
    }.get(name, (0.0, 0.0))


def bf16():
    """numpy's bfloat16 dtype (from ml_dtypes)."""
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def _as_comparable(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else a


def check(case: Case, args: tuple, atol: float | None = None, rtol: float | None = None) -> None:
    """Assert every output of `case` in `args` matches its expected array."""
    for name, idx in case.outputs.items():
        np.testing.assert_allclose(_as_comparable(args[idx]), _as_comparable(case.expected[name]),
                                   atol=case.atol if atol is None else atol,
                                   rtol=case.rtol if rtol is None else rtol, err_msg=f"output {name}")


def do_bench(fn, warmup: int = 2, rep: int = 10, quantiles=(0.2, 0.5, 0.8)) -> dict:
    """Time `fn()` after `warmup` calls: median and quantiles in seconds.

    When torch with CUDA is loaded and initialized, each call is timed with CUDA events (device
    time, as triton.testing.do_bench); otherwise with the wall clock.
    """
    import sys
    import time

    torch = sys.modules.get("torch")
    gpu = torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized()
    for _ in range(warmup):
        fn()
    times = []
    if gpu:
        torch.cuda.synchronize()
        for _ in range(max(1, rep)):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
    else:
        for _ in range(max(1, rep)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    q = np.quantile(np.array(times), quantiles)
    return {"p20": float(q[0]), "median": float(q[1]), "p80": float(q[2]), "n": len(times)}
