"""Ascend target options and the SoC profiles whose limits the compiler checks."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import BaseOptions


@dataclass(frozen=True)
class SocProfile:
    """What xblock needs to know about one Ascend part (facts from shared/ascendc/REFERENCE.md §2)."""

    name: str
    vector_cores: int
    ub_bytes: int  # unified buffer per vector core
    ub_usable: int  # minus the space the AscendC APIs reserve for themselves
    has_data_copy_pad: bool
    npu_arch: str  # the bisheng --npu-arch of CANN 9, for the exported project
    vector_dtypes: tuple = ("f16", "f32", "i16", "i32")
    ub_align: int = 32
    repeat_bytes: int = 256


_910B = dict(ub_bytes=192 * 1024, ub_usable=184 * 1024, has_data_copy_pad=True, npu_arch="dav-2201")
SOCS = {
    "910B1": SocProfile("Ascend910B1", vector_cores=48, **_910B),
    "910B2": SocProfile("Ascend910B2", vector_cores=48, **_910B),
    "910B3": SocProfile("Ascend910B3", vector_cores=40, **_910B),
    "910B4": SocProfile("Ascend910B4", vector_cores=40, **_910B),
    # 310P: coupled architecture, 256 KB UB (248 KB usable), no DataCopyPad; its core count is not
    # in the reference, 8 is the Atlas 300I Duo's per-chip AI Core count and only sizes the grid.
    "310P": SocProfile("Ascend310P3", vector_cores=8, ub_bytes=256 * 1024, ub_usable=248 * 1024,
                       has_data_copy_pad=False, npu_arch="dav-2002"),
}


@dataclass(frozen=True)
class AscendOptions(BaseOptions):
    """Options of `xblock.compile(..., target="ascend")`.

    Attributes:
        soc: one of SOCS ("910B1", "910B2", "910B3", "910B4", "310P").
        buffer_num: buffers per TQue; 2 overlaps the copy-in of one program with another's compute.
        line_directives: emit `#line` directives (off: the source line is a comment above its code).
    """

    soc: str = "910B3"
    buffer_num: int = 2
    line_directives: bool = False

    def __post_init__(self):
        if self.soc not in SOCS:
            raise TypeError(f"unknown Ascend soc '{self.soc}' (known: {', '.join(SOCS)})")
        if self.buffer_num not in (1, 2):
            raise TypeError("buffer_num must be 1 or 2")

    @property
    def profile(self) -> SocProfile:
        return SOCS[self.soc]
