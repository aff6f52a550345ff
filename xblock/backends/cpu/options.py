"""Options of the cpu target."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import BaseOptions


@dataclass(frozen=True)
class CpuOptions(BaseOptions):
    """Triton's launch options are accepted and ignored; `num_threads` 0 means every core."""

    num_threads: int = 0
    num_ctas: int = 1
    debug: bool = False
