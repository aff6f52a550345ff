"""Cube tile planning: baseM/baseN/baseK and buffer depths from the block sizes and the SoC's L1/L0.

xblock computes what CANN's host tiling library would put in a `TCubeTiling` (that library is
CANN-licensed and needs the platform info, so it is not used). One xb program instance computes
a BLOCK_M x BLOCK_N tile: the accumulator (fp32; int32 for int8 inputs) lives whole in L0C; each
step of the kernel's K loop brings a BLOCK_M x BLOCK_K slice of A and a BLOCK_K x BLOCK_N slice of B
into L1 (ND -> NZ), and `LoadData` moves baseK-wide pieces of them into L0A/L0B for `Mmad`. Buffers
are doubled where the capacity allows, so the next copy overlaps the current multiply. `deepen` makes
the L1 tile several K steps deep (`k_depth`; one copy of A and of B for them), chosen from the shapes
and the SoC, not the user's BLOCK_K; the lowering uses it where cube/depth.py proves the steps lie
side by side. Element sizes: a fractal is 512 B
(16 x 16 f16/bf16, 16 x 8 f32, 16 x 32 i8), L0A/L0B 64 KB, L0C 128 KB and L1 512 KB - 128 B on the
910B (REFERENCE.md 2.1). Pure Python: no MLIR needed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..options import SOCS

ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1}
FRACTAL = 16  # rows of a fractal: every fractal is 16 rows of 32 bytes = 512 B (16 x 16 b16, 16 x 8 b32, 16 x 32 b8)
# Mmad's type combos on Atlas A2 (asc-devkit Mmad.md): the L0C accumulator of each input type
ACC_DTYPE = {"f16": "f32", "bf16": "f32", "f32": "f32", "i8": "i32"}
# What the B operand's LoadDataWithTranspose moves as one square (asc-devkit LoadDataWithTranspose.md): b32 joins
# two 16 x 8 fractals into 16 x 16, b8 two 16 x 32 fractals into 32 x 32; b16 LoadData transposes one 16 x 16.
# So K and N are padded to these (K: 16 rows of b32 per square, 32 of b8; N: 32 columns of b8).
K_ALIGN = {"f16": 16, "bf16": 16, "f32": 16, "i8": 32}
N_ALIGN = {"f16": 16, "bf16": 16, "f32": 16, "i8": 32}


def k0_of(in_dtype: str) -> int:
    """Elements in one 32-byte fractal row: the K width of one fractal in L0A/L0B."""
    return 32 // ELEM_BYTES[in_dtype]


@dataclass(frozen=True)
class CubeSoc:
    """Cube-side facts of one part (shared/ascendc/REFERENCE.md §2.1)."""

    name: str
    cube_cores: int
    l1_bytes: int = 512 * 1024 - 128  # TOTAL_L1_SIZE minus the 128 B KFC reserve
    l0a_bytes: int = 64 * 1024
    l0b_bytes: int = 64 * 1024
    l0c_bytes: int = 128 * 1024
    l1_align: int = 32
    l0ab_align: int = 512
    l0c_align: int = 64
    macs_per_cycle: int = 16 * 16 * 16  # fp16 cube: 16x16x16 multiply-accumulates per cycle per AIC
    clock_hz: float = 1.8e9  # assumed AI Core clock for estimates (not in the reference; see BENCHMARKS.md)


CUBE_SOCS = {k: CubeSoc(p.name, cube_cores=p.cube_cores) for k, p in SOCS.items() if p.cube_cores}


class CubeLimit(ValueError):
    """No legal tiling: the message says which buffer and the numbers."""


def round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


# The event-id pool of an AIC's TPipe (docs/ASCEND_MODEL.md section 9): each HardEvent has 8 ids on Atlas A2
# (QUE_MAX_EVENT, asc-devkit impl/basic_api/kernel_macros.h); the pipe holds M_MTE1 ids 0-2 for the whole
# kernel (impl/basic_api/kernel_tpipe_impl.h, TPipe::Init); a queue buffer freed and not yet allocated again
# holds one id of its free event (impl/basic_api/kernel_tquebind_impl.h, FreeTensor), which is, by the memory
# its buffers live in (impl/basic_api/kernel_event.h, GetQueEvt): L1 (A1/B1/C1) MTE1_MTE2, L0A/L0B/BiasTable
# (A2/B2/C2) M_MTE1, L0C (CO1) FIX_M. One id of each is left for the enqueue event of a buffer in flight.
QUE_MAX_EVENT = 8
FREE_EVENTS = {"MTE1_MTE2": (("A1", "B1", "C1"), 0), "M_MTE1": (("A2", "B2", "C2"), 3), "FIX_M": (("CO1",), 0)}


def event_ids_over(buffers: dict) -> dict:
    """{free event: ids needed} for the events whose queue buffers (`{position: num}`) and the pipe's own
    ids would need more than the pool's 8 ids at once; empty when the plan fits."""
    over = {}
    for event, (positions, pipe_ids) in FREE_EVENTS.items():
        need = pipe_ids + sum(buffers.get(p, 0) for p in positions)
        if need > QUE_MAX_EVENT:
            over[event] = need
    return over


@dataclass(frozen=True)
class CubePlan:
    """The tiling of one xb `dot` K loop on the Cube unit (all sizes in elements unless `_bytes`)."""

    soc: CubeSoc
    in_dtype: str
    block_m: int
    block_n: int
    block_k: int
    base_m: int  # BLOCK_M rounded up to whole fractals: the L0A/L0C rows
    base_n: int
    k_pad: int  # BLOCK_K rounded up to whole fractals: the L1 slice width
    base_k: int  # the K width of one LoadData/Mmad step (divides k_pad, or a multiple of it: deepen_l0)
    depth_a1: int  # L1 buffers for A (2 = the next K step's copy overlaps this one's LoadData)
    depth_b1: int
    db_l0a: int  # L0A buffers
    db_l0b: int
    k_depth: int = 1  # steps of the kernel's K loop one L1 tile holds (deepen(): one copy of A and of B per k_depth)
    join: int = 1  # programs of a core whose K loops run together (join(): a slot of each buffer per program)
    # 0, or (a pooled join of 8 programs, join()) the tile slots of each operand side in L0A and L0B: the
    # programs' distinct tiles share them, and one L1 pool of POOL_TILES tiles holds both sides' copies
    slots: int = 0

    @property
    def l0_slots(self) -> int:
        """Tiles of each operand side an L0A / L0B buffer holds: one per program, or the pool's `slots`."""
        return self.slots or self.join

    @property
    def pool_bytes(self) -> int:
        """Bytes of one L1 pool buffer (a pooled plan): POOL_TILES tiles, up to `slots` of either side."""
        other = POOL_TILES - self.slots
        return max(self.slots * self.a1_bytes + other * self.b1_bytes,
                   other * self.a1_bytes + self.slots * self.b1_bytes)

    def l1_need(self) -> int:
        """L1 bytes of A1 and B1 (a pooled plan: its pool), double-buffered."""
        if self.slots:
            return 2 * self.pool_bytes
        return 2 * self.join * (self.a1_bytes + self.b1_bytes)

    @property
    def l1_k(self) -> int:
        """The K of one L1 tile: k_depth slices of k_pad."""
        return self.k_depth * self.k_pad

    @property
    def esize(self) -> int:
        return ELEM_BYTES[self.in_dtype]

    @property
    def k0(self) -> int:
        return k0_of(self.in_dtype)

    @property
    def frac_elems(self) -> int:
        """Elements in one 512-byte fractal."""
        return 512 // self.esize

    @property
    def acc_dtype(self) -> str:
        return ACC_DTYPE[self.in_dtype]

    @property
    def slice_k(self) -> int:
        """The K the Cube's loop over one L1 tile steps by: a k_pad-wide slice (one step of the kernel's K
        loop), or baseK when an L0 step spans several slices of a deep tile (deepen_l0)."""
        return max(self.k_pad, self.base_k)

    @property
    def k_steps(self) -> int:
        """LoadData/Mmad steps per slice_k of K (per step of the kernel's K loop unless deepen_l0 widened them)."""
        return self.slice_k // self.base_k

    @property
    def a1_bytes(self) -> int:
        return self.base_m * self.l1_k * self.esize

    @property
    def b1_bytes(self) -> int:
        return self.l1_k * self.base_n * self.esize

    @property
    def a2_bytes(self) -> int:
        return round_up(self.base_m * self.base_k * self.esize, self.soc.l0ab_align)

    @property
    def b2_bytes(self) -> int:
        return round_up(self.base_k * self.base_n * self.esize, self.soc.l0ab_align)

    @property
    def c1_bytes(self) -> int:
        return round_up(self.base_m * self.base_n * 4, self.soc.l0c_align)

    @property
    def tiles(self) -> tuple:
        """(baseM, baseN, baseK, the K of one L1 tile): what the plan report shows (AscendPlan.cube_tiles)."""
        return (self.base_m, self.base_n, self.base_k, self.l1_k)

    def usage(self) -> dict:
        """Bytes planned per buffer against its capacity (a joined plan: `join` slots in each buffer)."""
        s, j, t = self.soc, self.join, self.l0_slots
        l1 = self.depth_a1 * self.pool_bytes if self.slots else \
            j * (self.depth_a1 * self.a1_bytes + self.depth_b1 * self.b1_bytes)
        return {
            "L1": (l1, s.l1_bytes),
            "L0A": (t * self.db_l0a * self.a2_bytes, s.l0a_bytes),
            "L0B": (t * self.db_l0b * self.b2_bytes, s.l0b_bytes),
            "L0C": (j * self.c1_bytes, s.l0c_bytes),
        }

    def describe(self) -> str:
        if self.base_k > self.k_pad:
            parts = [f"baseM={self.base_m} baseN={self.base_n} baseK={self.base_k} ({self.base_k // self.k_pad} "
                     f"slices of BLOCK_K {self.block_k} a step)"]
        else:
            parts = [f"baseM={self.base_m} baseN={self.base_n} baseK={self.base_k} (BLOCK_K {self.block_k} in "
                     f"{self.k_steps} step{'s' * (self.k_steps > 1)})"]
        if self.k_depth > 1:
            parts.append(f"K depth in L1 {self.l1_k} ({self.k_depth} of the kernel's K steps per copy)")
        if self.slots:
            parts.append(f"{self.join} programs of a core joined (their K loops run together, their distinct operand "
                         f"tiles copied once into an L1 pool of {POOL_TILES} and {self.slots} L0 slots a side, one "
                         "L0C accumulator each)")
        elif self.join > 1:
            parts.append(f"{self.join} programs of a core joined (their K loops run together, shared operand tiles "
                         "copied once, one L0C accumulator each)")
        parts += [
                 f"depthA1={self.depth_a1} depthB1={self.depth_b1} L0A x{self.db_l0a} L0B x{self.db_l0b}"]
        parts += [f"{k} {u} / {c} B" for k, (u, c) in self.usage().items()]
        return "; ".join(parts)


def plan_cube(block_m: int, block_n: int, block_k: int, in_dtype: str, soc: CubeSoc) -> CubePlan:
    """Choose the tiles of a BLOCK_M x BLOCK_N x BLOCK_K dot for `soc`; CubeLimit when none is legal."""
    if in_dtype not in ELEM_BYTES:
        raise CubeLimit(f"dot of {in_dtype} blocks has no Cube unit type on {soc.name} (Mmad multiplies f16, bf16, "
                        "f32 and i8 blocks): convert the operands with .to(tl.float16), .to(tl.bfloat16) or "
                        ".to(tl.float32)")
    es = ELEM_BYTES[in_dtype]
    base_m = round_up(max(block_m, 1), FRACTAL)
    base_n = round_up(max(block_n, 1), N_ALIGN[in_dtype])
    k_pad = round_up(max(block_k, 1), K_ALIGN[in_dtype])
    if max(base_m, base_n, k_pad) > 4095:
        raise CubeLimit(f"block {block_m} x {block_n} x {block_k} exceeds Mmad's 4095 limit on m, n and k")
    c1 = round_up(base_m * base_n * 4, soc.l0c_align)
    if c1 > soc.l0c_bytes:
        raise CubeLimit(f"the {ACC_DTYPE[in_dtype]} accumulator of a {block_m} x {block_n} block needs {c1} B of L0C, "
                        f"which holds {soc.l0c_bytes} B on {soc.name}: use BLOCK_M * BLOCK_N <= {soc.l0c_bytes // 4}")
    base_k, db = _choose_base_k(base_m, base_n, k_pad, in_dtype, soc)
    a1, b1 = base_m * k_pad * es, k_pad * base_n * es
    if a1 + b1 > soc.l1_bytes:
        raise CubeLimit(f"one K step of a {block_m} x {block_n} x {block_k} dot needs {a1 + b1} B of L1 "
                        f"({a1} B for A, {b1} B for B), which holds {soc.l1_bytes} B on {soc.name}: use a "
                        "smaller BLOCK_K")
    depth = 2 if 2 * (a1 + b1) <= soc.l1_bytes else 1
    return CubePlan(soc, in_dtype, block_m, block_n, block_k, base_m, base_n, k_pad, base_k, depth, depth, db, db)


# The GM row of one L1 tile of A the planner aims for: a 512-B burst (the GM request window; CATLASS's fp16 L1
# tile is 256 deep for the same reason). Deeper tiles cut the copies further but make the first one (not
# overlapped) longer and take L1 from double buffering.
L1_ROW_BYTES = 512


def deepen(plan: CubePlan, reserved_l1: int = 0) -> CubePlan:
    """The plan with the deepest L1 K tile (a power of two of the kernel's K steps) whose GM rows of A reach
    L1_ROW_BYTES at most, A1 and B1 double-buffered within L1 (less `reserved_l1`, the bias row's queue); the
    plan itself when no depth above 1 fits or BLOCK_K is not whole fractals (the K steps would not lie side by
    side in L1). Chosen from the block shape, the dtype and the SoC, not from the K loop's trip count (a runtime
    value): a K shorter than the tile leaves part of it unused."""
    if plan.k_pad != plan.block_k or plan.depth_a1 < 2:
        return plan
    best = plan
    depth = 2
    while depth * plan.k_pad * plan.esize <= L1_ROW_BYTES:
        deeper = _with_depth(plan, depth)
        if deeper.l1_need() + reserved_l1 > plan.soc.l1_bytes or \
                deeper.l1_k > 4095:
            break
        best, depth = deeper, depth * 2
    return best


def deepen_l0(plan: CubePlan) -> CubePlan:
    """The plan with the deepest L0 step (baseK) of whole k_pad slices of a deep L1 tile (a power of two of them
    dividing k_depth) whose L0A and L0B tiles keep the plan's buffering (`join` slots each) and LoadData's 255
    fractals a call; the plan itself when no deeper one fits. One Mmad then spans several of the kernel's K
    steps: fewer Mmads, each paying its start-up once (a 64 x 64 x 32 fp16 Mmad is 32 fractal cycles). The K
    of a deep tile is a prefix (cube/depth.py), so a step's valid K is min(K left, baseK), as for one slice.
    b16 operands only (the b32 and b8 L0B loads keep one slice a step)."""
    if plan.k_depth < 2 or plan.base_k != plan.k_pad or plan.esize != 2:
        return plan
    s, best, g = plan.soc, plan, 2
    while plan.k_depth % g == 0:
        deeper = replace(plan, base_k=g * plan.k_pad)
        if plan.l0_slots * plan.db_l0a * deeper.a2_bytes > s.l0a_bytes or \
                plan.l0_slots * plan.db_l0b * deeper.b2_bytes > s.l0b_bytes or deeper.base_k // plan.k0 > 255 or \
                deeper.base_k > 4095:
            break
        best, g = deeper, g * 2
    return best


# Program joining (docs/DESIGN.md, "Program joining"): a core runs up to JOIN_MAX programs of a small-tile dot
# together when their accumulators fit half of L0C, each with a slot of its own in every buffer. POOLED programs
# (all of L0C) run together when their distinct tiles fit a pool: two 2 x 2 groups side by side (a 4 x 2 block
# of tiles: 4 distinct tiles of one operand and 2 of the other) share an L1 pool of POOL_TILES tiles and
# POOL_SIDE L0 slots a side, so 64 x 64 programs keep 256-deep L1 tiles double-buffered (384 KB).
JOIN_MAX = 4
POOLED = 8
POOL_SIDE = 4
POOL_TILES = 6


def join(plan: CubePlan, pooled: bool = True) -> CubePlan:
    """The plan with `join` programs a core runs together: POOLED of them sharing a tile pool (`slots`) when
    their accumulators fill L0C at most, POOL_SIDE tiles of each side keep L0A/L0B double-buffered and two pool
    buffers (one K step deep) fit L1 (`pooled`); else the most (a power of two up to JOIN_MAX) whose L0C
    accumulators take at most half of L0C and whose L0A/L0B slots keep the plan's double buffering, with A1 and
    B1 (one K step deep) double-buffered in L1; the plan itself when fewer than two fit (a 128 x 128 fp32
    accumulator already takes half of L0C: such tiles are the hardware tile)."""
    s = plan.soc
    if pooled and plan.depth_a1 == 2:
        p = replace(plan, join=POOLED, slots=POOL_SIDE)
        if POOLED * plan.c1_bytes <= s.l0c_bytes and POOL_SIDE * plan.db_l0a * plan.a2_bytes <= s.l0a_bytes and \
                POOL_SIDE * plan.db_l0b * plan.b2_bytes <= s.l0b_bytes and p.l1_need() <= s.l1_bytes:
            return p
    j = JOIN_MAX
    while j > 1:
        if j * plan.c1_bytes <= s.l0c_bytes // 2 and j * plan.db_l0a * plan.a2_bytes <= s.l0a_bytes and \
                j * plan.db_l0b * plan.b2_bytes <= s.l0b_bytes and plan.depth_a1 == 2 and \
                2 * j * (plan.a1_bytes + plan.b1_bytes) <= s.l1_bytes:
            return replace(plan, join=j)
        j //= 2
    return plan


def _with_depth(plan: CubePlan, depth: int) -> CubePlan:
    return replace(plan, k_depth=depth)


def _choose_base_k(base_m: int, base_n: int, k_pad: int, in_dtype: str, soc: CubeSoc) -> tuple:
    """The widest baseK dividing k_pad that fits L0A and L0B, double-buffered if possible (LoadData moves at
    most 255 fractals a call: the K fractals of one row of A)."""
    es, step = ELEM_BYTES[in_dtype], K_ALIGN[in_dtype]
    for db in (2, 1):
        for kf in range(k_pad // step, 0, -1):
            bk = kf * step
            if k_pad % bk:
                continue
            a2 = round_up(base_m * bk * es, soc.l0ab_align)
            b2 = round_up(bk * base_n * es, soc.l0ab_align)
            if db * a2 <= soc.l0a_bytes and db * b2 <= soc.l0b_bytes and bk // k0_of(in_dtype) <= 255:
                return bk, db
    need_a, need_b = base_m * step * es, step * base_n * es
    raise CubeLimit(f"even a {step}-wide K step of a {base_m} x {base_n} block needs {need_a} B of L0A and {need_b} B "
                    f"of L0B, which hold {soc.l0a_bytes} and {soc.l0b_bytes} B on {soc.name}: use smaller "
                    "BLOCK_M / BLOCK_N")


def estimate(plan: CubePlan, M: int, N: int, K: int, out_bytes: int = 2) -> dict:
    """Static figures for an M x N x K matmul with this plan (one program per BLOCK_M x BLOCK_N tile)."""
    soc = plan.soc
    tiles_m, tiles_n = -(-M // plan.block_m), -(-N // plan.block_n)
    k_iters = -(-K // plan.block_k)
    es = plan.esize
    gm_a = tiles_n * M * K * es  # every column of tiles re-reads A
    gm_b = tiles_m * K * N * es
    gm_c = M * N * out_bytes
    minimum = (M * K + K * N) * es + M * N * out_bytes
    # one cube op: a 16 x K0 x 16 fractal product (16x16x16 b16; b32 at half, b8 at double the K per cycle)
    cube_ops = tiles_m * tiles_n * k_iters * (plan.base_m // 16) * (plan.base_n // 16) * (plan.k_pad // plan.k0)
    macs = M * N * K
    ideal_s = macs / (soc.macs_per_cycle * plan.k0 // 16 * soc.cube_cores * soc.clock_hz)
    waves = -(-tiles_m * tiles_n // soc.cube_cores)
    issued_s = waves * k_iters * (plan.base_m // 16) * (plan.base_n // 16) * (plan.k_pad // plan.k0) / soc.clock_hz
    return {"programs": tiles_m * tiles_n, "k_iterations": k_iters, "gm_bytes": gm_a + gm_b + gm_c,
            "gm_min_bytes": minimum, "gm_ratio": (gm_a + gm_b + gm_c) / minimum, "cube_ops": cube_ops,
            "macs": macs, "ideal_s": ideal_s, "cube_bound_s": issued_s, "waves": waves}
