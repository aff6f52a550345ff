"""Options of the cpu target."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import BaseOptions


@dataclass(frozen=True)
class CpuOptions(BaseOptions):
    """Triton's launch options are accepted and ignored; `num_threads` 0 means every core;
    `bounds_check` checks every global access against the launch's arrays (bounds.py)."""

    num_threads: int = 0
    bounds_check: bool = True
    num_ctas: int = 1
    debug: bool = False
