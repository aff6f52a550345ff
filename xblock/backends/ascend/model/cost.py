"""A per-pipe cost model of AscendC kernels run on xblock's CPU model: counters -> busy cycles -> time.

**An estimate, not a measurement.** No Ascend hardware is available here: the model turns the
counters the CPU model records for each launched block (bytes and calls of every DataCopy,
vector instructions and repeats, scalar accesses, Cube fractals, Fixpipe) into busy cycles per
pipe with the constants of `CONSTANTS` below. Some constants come from public specifications,
others are assumptions (marked so); the figures are meant to rank two generated variants of one
kernel and to show which pipe limits it, not to predict microseconds on a 910B.

Pipes of one core (AscendC's instruction queues; shared/ascendc/REFERENCE.md §2.1):
- MTE2: GM -> UB (DataCopy/DataCopyPad) and GM -> L1 (Nd2Nz DataCopy) transfers;
- MTE3: UB -> GM transfers;
- MTE1: L1 -> L0A/L0B (LoadData; L0B at half the L0A rate, the dev kit's Cube table);
- V: vector instructions;
- Cube: Mmad fractals (16x16x16 multiply-accumulates);
- Fixpipe: L0C -> GM;
- Scalar: instruction issue, and scalar UB/GM accesses (GetValue/SetValue).

A transfer costs `datacopy_fixed_cycles` plus its bytes at the core's rate: reads that hit L2 at the
per-core L2 read rate, the rest at the core's share of HBM (min(32 B/cycle, HBM / reading cores)),
writes at the per-core write rate; a row of a DMA that touches a 512-B GM window more than its length needs
(it starts off a 512-B boundary and crosses one) costs that window's bytes more. Vector
repeats cost one cycle, those of Exp/Ln/Sqrt/Div, the reductions, Gather and GatherMask what the dev
kit's table says (the profile build counts them per class: model/profile_shim.py). Sources and the
calibration against published 910B times: docs/ASCEND_MODEL.md, "The cost model: sources and
calibration". **L2:** when the launch's footprint (its array arguments and the mixed kernels'
workspace), or its largest buffer, fits in L2, every byte read more than once is taken to hit: a
fraction `1 - unique / bytes read` of the reads (at least 0), the same for every core, where
`unique` is the bytes of each buffer the launch read at least once (the CPU model counts the reads
of every buffer). The launch also takes at least its HBM bytes (the reads that miss and the writes
written back during the launch) over the HBM bandwidth; the bound is "HBM" when that sets its time.
**L2 bypass:** reads through a GlobalTensor whose L2 hint is CACHE_MODE_DISABLE (the profile build counts
them per core: `uncached_read_bytes`) never hit, put nothing in L2 and do not share the core's GM port
with its writes (below). The launch's writes are written back to HBM during it in proportion to what
overflows L2: writes x max(0, L2 in - L2) / L2 in, where L2 in = the reads through L2 that miss + writes
(`l2_writeback`); the reads through L2 of a launch without writes do not write back.

The unit of the overlap rule is a program, except on an AIC whose L1 holds two K steps of its dot:
there, each step of the K loop (a GM -> L1 copy of A and B, then LoadData and Mmad) overlaps the
next, so the unit is the K step.

Cores: a vector kernel's block is one AIV, a cube-only kernel's one AIC; a mixed kernel's block is
its AIC and its one or two AIVs, each a core of its own with its own pipes (they run in parallel;
the cross-core waits between them are not modelled). The estimate is the slowest core's.

**Overlap rule** (per core; the launch takes the slowest core). The queues let the pipes of one
program overlap those of the next when every TQue has two buffers (`buffer_num=2`): with P
programs on the core, stage times per program p_i = pipe_i / P, a software pipeline takes
(P - 1) * max_i p_i + sum_i p_i. With one buffer per queue the pipes of consecutive programs
cannot overlap: the sum. Scalar UB/GM accesses (read-backs of reductions, scalar loops) wait for
the vector pipe and stall the next vector instruction (V->S / S->V syncs): their cycles are added
serially, outside the overlap. `core_time` adds to the rule the GM port that MTE3 and the reads of MTE2
through L2 share and the
GM latency a program waits for; the estimate adds the device-side start-up of the launch (not the
host's enqueue).

The roofline floor is the larger of the minimum GM bytes (every array argument moved once) over
the bandwidth the launch's cores can draw, and the Cube MACs issued over the peak of the cube
cores the launch uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....errors import XBlockError
from ..options import SOCS
from ..plan.plan import AscendPlan


class ProfileError(XBlockError, ValueError):
    """A profile that cannot be made (an unknown SoC, a target without a cost model)."""


@dataclass(frozen=True)
class Constant:
    """One number of the cost model, with where it comes from ('assumption: ...' when it is one)."""

    value: float
    unit: str
    source: str


_INI = ("CANN platform_config/Ascend910B*.ini, [AICoreSpec] cube_freq, as quoted in public repositories "
        "(Ascend910B2.ini: cube_freq=1800; Ascend910B4.ini: cube_freq=1500, [AICoreMemoryRates] ddr_rate=32)")

_ADK_VEC = ("asc-devkit (cannmirror/asc-devkit@be8552e1) docs/zh/api/附录/Vector指令理论性能汇总.md")
_ADD_HP = ("asc-devkit (cannmirror/asc-devkit@0156b0f4) examples/01_simd_cpp_api/05_best_practices/00_vector_compute/"
           "add_high_performance/README_en.md (shared/ascendc/PUBLISHED_PERF.md)")
_ADK_CUBE = ("asc-devkit (hicann/asc-devkit@14068705; the same in mirror-cann/asc-devkit@013c151f) "
             "docs/zh/api/附录/Cube指令理论性能汇总.md")
_COPY_HP = ("asc-devkit examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md "
            "(shared/ascendc/PUBLISHED_PERF.md)")

# Every constant of the model. Per-SoC values are in SOC_CONSTANTS; the rest apply to all 910B parts.
CONSTANTS: dict[str, Constant] = {
    "vector_cycles_per_repeat": Constant(
        1, "cycle", f"simple ops (Add/Mul/Max/Adds/Cast/Compare/Select/Duplicate...) move 256 B a cycle: 128 half "
        f"or 64 float elements per cycle in {_ADK_VEC}, tables 3-7 and 10"),
    "vector_issue_cycles": Constant(
        8, "cycles", "assumption: start-up of one vector instruction (issue, operand fetch, pipeline fill)"),
    "trans_elems_per_cycle": Constant(
        32, "elements/cycle", f"Exp, Ln, Sqrt, Div (half and float): 32 elements a cycle ({_ADK_VEC}, table 3): "
        "a 256-B repeat takes 4 cycles in half, 2 in float"),
    "reduce_cycles_per_repeat": Constant(
        7, "cycles", f"ReduceRepeat (WholeReduceSum/Max/Min): 128/7 half or 64/7 float elements a cycle, i.e. 7 "
        f"cycles a repeat ({_ADK_VEC}, table 8); the count-form ReduceSum/Max/Min are built of them "
        "('软仿指令'), priced the same per repeat; BlockReduceSum/Max/Min (ReduceDataBlock) in half too (128/7), "
        "in float at 64 elements a cycle: one cycle a repeat, as the simple ops (model/profile_shim.py)"),
    "gather_elems_per_cycle": Constant(5, "elements/cycle", f"Gather: 5 elements a cycle ({_ADK_VEC}, table 12)"),
    "gathermask_cycles_per_repeat": Constant(
        2, "cycles", f"GatherMask: 64 half or 32 float elements a cycle ({_ADK_VEC}, table 6): 2 cycles a repeat"),
    "datacopy_fixed_cycles": Constant(
        16, "cycles", "issue cost of one DMA (DataCopy/DataCopyPad/Nd2Nz/Fixpipe): back-to-back 128-B copies of the "
        f"[1,64]-tile read-only copy ran at 20.7 cycles each on 48 AIVs, 7 of them moving the bytes ({_COPY_HP})"),
    "dma_latency_cycles": Constant(
        220, "cycles", "GM latency a single-buffered program waits once per direction (copy in, copy out); a fit of "
        f"the Add with 8 KB and 32 KB copies on 48 AIVs, one buffer (cases 2 and 3: 568 and 1941 cycles per "
        f"iteration's two loads), {_ADD_HP}; hidden by double buffering"),
    "mte_bytes_per_cycle": Constant(
        32, "B/cycle", "per-core GM -> UB/L1 rate: [AICoreMemoryRates] ddr_rate=32 in Ascend910B4.ini as quoted in "
        f"a public test fixture; the single-AIV Add (case 1: 8 KB reads in 341 cycles) agrees, {_ADD_HP}"),
    "mte3_bytes_per_cycle": Constant(
        28, "B/cycle", f"per-core UB -> GM rate: 8 KB writes in 287 cycles on one AIV and on 48 (cases 1-2), 32 KB in "
        f"1215 (case 3): about 28 B/cycle with no fixed cost, {_ADD_HP}; writes land in L2"),
    "l2_writeback": Constant(
        1, "rule", "when the bytes a launch puts in L2 (its reads through L2 that miss, and its writes) exceed L2, "
        "lines are "
        "replaced, and a replaced line that was written goes back to HBM first, taking HBM bandwidth "
        "(asc-devkit (cannmirror/asc-devkit@0da921b9) docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/"
        "设置合理的L2-CacheMode.md): with lines replaced oldest first, the launch writes back its writes times "
        "the excess over what it put in L2; reads kept out of L2 (SetL2CacheHint(CACHE_MODE_DISABLE)) put "
        f"nothing there. {_ADD_HP} case 5: the Add with its inputs out of L2 ran 187.7 us against 264.0"),
    "l2_read_bytes_per_cycle": Constant(
        110, "B/cycle", "per-core rate of reads that hit L2: [AICoreMemoryRates] l2_read_rate=110 of Ascend910B1.ini "
        "(CANN 9.0 platform_config) as quoted in a public analysis of a 910B; taken for every 910B part (assumption)"),
    "unaligned_rate": Constant(
        0.7, "x", "a DMA row is priced per 512-B GM window it touches: a row of n bytes at offset o of its buffer "
        "touches ceil((o mod 512 + n) / 512) windows, and the ones beyond ceil(n / 512) add their share of its "
        "time, at most down to this rate (the CPU model counts them per row as bytes' worth: "
        "window_excess_*_bytes). hiascend CANN 9.0.0 best practices 'GM地址尽量512B对齐' "
        "(atlas_ascendc_best_practices_10_0014): a 32-B but not 512-B aligned DMA moves at down to 70%; the "
        "read-only copy with 12287-element rows (2 KB row pieces, 5 windows for 4) ran 1.28x longer, and 128-B "
        "copies inside one window (the [1,64] tile) cost as aligned ones"),
    "same_address_window": Constant(
        512, "B", "MTE2/MTE3/Scalar GM requests are handled per 512-B window; requests of several cores inside one "
        "window are served one after another: hiascend CANN 8.5.0 best practices 'Avoiding Same-Address Access' "
        "(atlas_ascendc_best_practices_10_00013)"),
    "l0a_load_bytes_per_cycle": Constant(
        256, "B/cycle", f"L1 -> L0A: LoadData (2D) and LoadDataWithTranspose at 256 B/cycle ({_ADK_CUBE}, table 3, "
        "NPU arch 2201); the table leaves out the per-instruction overhead (its Delta T), taken as "
        "vector_issue_cycles a call (assumption)"),
    "l0b_load_bytes_per_cycle": Constant(
        128, "B/cycle", "L1 -> L0B: LoadData (2D) and LoadDataWithTranspose at 128 B/cycle, half the L0A rate "
        f"({_ADK_CUBE}, table 3, NPU arch 2201)"),
    "fixpipe_bytes_per_cycle": Constant(
        32, "B/cycle", "assumption, bounded by sources (no sourced L0C -> GM rate): L0C -> GM at the per-core GM "
        f"rate (mte_bytes_per_cycle, ddr_rate=32). The dev kit's table of Fixpipe rates ({_ADK_CUBE}, table 7, "
        "NPU arch 2201) gives the L0C side only, for L0C -> L1: 64 elements a cycle (128 B/cycle of half "
        "output), four times this; it has no L0C -> GM row (nor do the Fixpipe API pages), and the GM side is "
        "the limit (UB -> GM writes measured 28 B/cycle: mte3_bytes_per_cycle)"),
    "scalar_ub_cycles": Constant(
        10, "cycles", "assumption: one GetValue/SetValue on UB from the scalar unit, including the V->S / S->V "
        "synchronisation it needs next to vector code"),
    "scalar_gm_cycles": Constant(
        100, "cycles", "assumption: one GetValue/SetValue on GM through the core's DataCache (hits and misses "
        "averaged; a miss is a GM round trip of several hundred cycles)"),
    "scalar_issue_cycles": Constant(
        2, "cycles", "assumption: scalar-unit cycles to issue one vector, DMA or cube instruction"),
    "cube_macs_per_cycle": Constant(
        16 * 16 * 16, "MAC/cycle", "16x16x16 fp16/bf16 MACs per cycle per AIC (cube_m/n/k = 16/16/16): asc-devkit "
        "(hicann/asc-devkit@b31101c6, unchanged @14068705) docs/zh/api/附录/Cube指令理论性能汇总.md, table 1"),
    "cube_f32_cycles_per_fractal": Constant(
        2, "cycles", "an fp32 fractal (16 x 8 x 16; k0 = 8) takes 2 cycles: cube_k = 4 for float in the same table "
        "(a quarter of the fp16 MAC rate); the model's cube_ops counts one per fractal, and a fp16/bf16 (k0 = "
        "cube_k = 16) or int8 (k0 = cube_k = 32) fractal takes one cycle, as the table gives; HF32 (cube_k = 8) "
        "is not emitted"),
    "mmad_fixed_cycles": Constant(
        16, "cycles", "assumption: start-up of one Mmad instruction (the dev kit's Mmad formula has a head cost, "
        "its Delta t, without a value)"),
    "launch_us": Constant(
        2.0, "us", "device-side start and end of a kernel of one core kind: the smallest kernels measured take "
        "1.5-3 us (shared/ascendc/PUBLISHED_PERF.md, 'Launch and fixed costs'); host enqueue not included"),
    "mix_launch_us": Constant(
        18.0, "us", "the same for a kernel on both Cube and vector cores (MIX): about 18 us in CATLASS's "
        "measurements (hicann/catlass example 52 docs, via shared/ascendc/PUBLISHED_PERF.md)"),
}


_L2 = Constant(192 * 2 ** 20, "B", "l2_size=201326592 of Ascend910B1.ini (CANN 9.0 platform_config) as quoted in a "
               "public analysis of a 910B; the same taken for the other 910B parts (assumption)")


@dataclass(frozen=True)
class SocCost:
    """The per-SoC constants: clock, HBM bandwidth and L2 capacity."""

    clock: Constant
    hbm: Constant
    l2: Constant = _L2

    @property
    def hz(self) -> float:
        return self.clock.value * 1e6


_HBM_B = Constant(1.5e12, "B/s", "GM reads of all cores together: the Add on 48 AIVs read at 1.46-1.55 TB/s "
                  "(cases 2-3, a fit of its 8 KB and 32 KB copies) and the read-only copy at 1.40-1.49 TB/s "
                  "(" + _COPY_HP + "); "
                  "writes go to L2 (" + _ADD_HP + ": 2.4 TB/s of writes)")
SOC_CONSTANTS: dict[str, SocCost] = {
    "910B1": SocCost(Constant(1850, "MHz", "910B1: 24 AIC at 1.85 GHz (363.7 fp16 TFLOPS), shared/ascendc/"
                              "PUBLISHED_PERF.md 'Chip facts'"), _HBM_B),
    "910B2": SocCost(Constant(1800, "MHz", _INI), _HBM_B),
    "910B3": SocCost(Constant(1800, "MHz", "assumption: as 910B2 (" + _INI + "); PUBLISHED_PERF.md's 294.9 TFLOPS "
                              "on 20 AIC implies 1.8 GHz"), _HBM_B),
    "910B4": SocCost(Constant(1500, "MHz", _INI),
                     Constant(0.96e12, "B/s", "20 AI cores x ddr_rate 32 B/cycle x 1500 MHz from Ascend910B4.ini "
                              "(the derivation public roofline tools use); an upper bound")),
}

PIPES = ("MTE2", "MTE3", "MTE1", "V", "Cube", "Fixpipe", "Scalar")


def soc_cost(soc: str) -> SocCost:
    if soc not in SOC_CONSTANTS:
        known = ", ".join(SOC_CONSTANTS)
        extra = " (a known Ascend SoC, but the cost model has no constants for it)" if soc in SOCS else ""
        raise ProfileError(f"unknown soc '{soc}' for the Ascend cost model{extra}; known: {known}")
    return SOC_CONSTANTS[soc]


def _c(name: str) -> float:
    return CONSTANTS[name].value


def vector_class_cycles(b: dict) -> float:
    """Cycles beyond one a repeat of the instruction classes the dev kit prices slower (the profile build's
    per-core counts, model/profile_shim.py; 0 for counters without them)."""
    trans = _c("trans_elems_per_cycle")
    gather = _c("gather_elems_per_cycle")
    return (b.get("trans_repeats_b16", 0) * (128 / trans - 1) + b.get("trans_repeats_b32", 0) * (64 / trans - 1) +
            b.get("reduce_repeats", 0) * (_c("reduce_cycles_per_repeat") - 1) +
            b.get("gather_repeats_b16", 0) * (128 / gather - 1) + b.get("gather_repeats_b32", 0) * (64 / gather - 1) +
            b.get("gathermask_repeats", 0) * (_c("gathermask_cycles_per_repeat") - 1))


def l0_load_cycles(b: dict) -> float:
    """The cycles LoadData moves a core's L1 -> L0 bytes in: L0A's at 256 B/cycle, L0B's at 128 (the dev
    kit's table 3; `l0a_load_bytes_per_cycle`, `l0b_load_bytes_per_cycle`)."""
    return b["l1_to_l0a_bytes"] / _c("l0a_load_bytes_per_cycle") + b["l1_to_l0b_bytes"] / _c("l0b_load_bytes_per_cycle")


def core_pipes(b: dict, bytes_per_cycle: float, l2_hit: float = 0.0, cube_cycles: float = 1.0,
               serial_bytes: float = 0.0) -> tuple[dict, float]:
    """(busy cycles per pipe, the serial part of Scalar) of one core from its counters; `l2_hit` is the
    fraction of its reads that hit L2, `bytes_per_cycle` the rate of those that miss (the core's share of
    HBM), `cube_cycles` the cycles of one counted fractal, `serial_bytes` the reads that wait for other
    cores' requests to the same 512-B windows."""
    fixed = _c("datacopy_fixed_cycles")
    reads = b["datacopy_in_bytes"] + b["gm_to_l1_bytes"]
    issued = b["vector_instructions"] + b["datacopy_in_calls"] + b["datacopy_out_calls"] + b["gm_to_l1_calls"] + \
        b["mmad_calls"] + b["load_data_calls"] + b["fixpipe_calls"]
    sync = b["scalar_ub_accesses"] * _c("scalar_ub_cycles") + b["scalar_gm_accesses"] * _c("scalar_gm_cycles")
    l2 = _c("l2_read_bytes_per_cycle")
    pipes = {
        "MTE2": (b["datacopy_in_calls"] + b["gm_to_l1_calls"]) * fixed + reads * (1 - l2_hit) / bytes_per_cycle +
                reads * l2_hit / l2 + serial_bytes / l2 +
                b.get("window_excess_read_bytes", 0) * ((1 - l2_hit) / bytes_per_cycle + l2_hit / l2),
        "MTE3": b["datacopy_out_calls"] * fixed +
                (b["datacopy_out_bytes"] + b.get("window_excess_write_bytes", 0)) / _c("mte3_bytes_per_cycle"),
        "MTE1": b["load_data_calls"] * _c("vector_issue_cycles") + l0_load_cycles(b),
        "V": b["vector_repeats"] * _c("vector_cycles_per_repeat") + vector_class_cycles(b) +
             b["vector_instructions"] * _c("vector_issue_cycles"),
        "Cube": b["cube_ops"] * (16 ** 3 / _c("cube_macs_per_cycle")) * cube_cycles +
                b["mmad_calls"] * _c("mmad_fixed_cycles"),
        "Fixpipe": b["fixpipe_calls"] * fixed + b["l0c_to_gm_bytes"] / _c("fixpipe_bytes_per_cycle"),
        "Scalar": issued * _c("scalar_issue_cycles") + sync,
    }
    return pipes, sync


def overlap(pipes: dict, sync: float, programs: int, double_buffered: bool) -> float:
    """Cycles of one core under the overlap rule of the module docstring (what timeline.py draws)."""
    stream = dict(pipes, Scalar=pipes["Scalar"] - sync)
    total = sum(stream.values())
    if not double_buffered or programs <= 1:
        return total + sync
    return (programs - 1) / programs * max(stream.values()) + total / programs + sync


def core_time(pipes: dict, sync: float, programs: int, double_buffered: bool, uncached: float = 0.0) -> float:
    """Cycles of one core: the overlap rule, with the reads through L2 and the writes sharing the core's
    GM port (overlapped, they take their sum: the Add's MTE2 time grew by a third with double buffering,
    "mixed read-write bandwidth", asc-devkit add_high_performance case 4; with its inputs kept out of L2,
    case 5, MTE2 and MTE3 ran side by side, 176.0 and 160.3 of 185.2 us), and the GM latency a program waits
    for (`dma_latency_cycles`: per program and direction single-buffered, once double-buffered).
    `uncached`: the share of the core's reads kept out of L2 (their part of MTE2 is off the port)."""
    lat = _c("dma_latency_cycles") * ((pipes["MTE2"] > 0) + (pipes["MTE3"] > 0))
    if not double_buffered or programs <= 1:
        return overlap(pipes, sync, programs, double_buffered) + lat * max(programs, 1)
    port = dict(pipes, MTE2=pipes["MTE2"] * (1 - uncached) + pipes["MTE3"], MTE3=0.0)
    extra = (programs - 1) / programs * max(0.0, port["MTE2"] - max(v for k, v in pipes.items() if k != "Scalar"))
    return overlap(pipes, sync, programs, True) + max(0.0, extra) + lat


def cube_cycles_per_op(metadata: dict) -> float:
    """Cycles of one counted Cube fractal: 2 when the kernel's dots are fp32, else 1 (fp16, bf16, int8)."""
    dtypes = [c.get("dtype") for c in metadata.get("cube") or []]
    return _c("cube_f32_cycles_per_fractal") if dtypes and all(d == "f32" for d in dtypes) else 1.0


def launch_cycles(metadata: dict, sc: SocCost) -> float:
    """The fixed device-side cost of a launch: MIX kernels start both kinds of core."""
    mixed = str(metadata.get("kernel_type", "")).startswith("KERNEL_TYPE_MIX_AIC_1_")
    return (_c("mix_launch_us") if mixed else _c("launch_us")) * 1e-6 * sc.hz


def serial_read_bytes(buffer_reads: list, cores: int) -> float:
    """Reads of one core that wait behind other cores' requests to the same 512-B windows: a buffer of
    at most 64 KB read k > 1 times over (the same weights read by every core as it starts) makes each
    of its reading cores wait for k - 1 others' reads of it (the module docstring)."""
    out = 0.0
    for read, size in buffer_reads or ():
        k = min(cores, read // size) if size else 0
        if k > 1 and size <= 64 * 1024:
            out += (k - 1) * size
    return out


@dataclass
class Profile:
    """What `xblock.profile` returns: the model's counters and the cost model's estimate (see
    `xblock.backends.ascend.model.cost`: an estimate from documented constants and assumptions).

    counters: launch totals (bytes, calls, instructions; `bytes_per_datacopy` the average transfer).
    pipes: busy cycles per pipe of the busiest core (the one that sets the estimate).
    core_pipes: the same for the busiest core of each kind ("AIV", "AIC"; a mixed kernel has both).
    bound: the busiest pipe of that core, or "HBM" when the launch's HBM bytes set its time.
    estimate_us: estimated kernel time (overlap rule in the module docstring) with the device-side start-up
        (`launch_us`), without the host's enqueue.
    sampled_blocks: when not empty, the launch was priced from these blocks only (model/profile.py:
        the other blocks extrapolated from them).
    floor_us: the roofline floor for the cores the launch uses.
    """

    kernel: str
    soc: str
    counters: dict
    pipes: dict
    bound: str
    estimate_us: float
    floor_us: float
    blocks: int
    programs: int
    double_buffered: bool
    block_pipes: list = field(default_factory=list, repr=False)  # busy cycles per pipe of every core
    cores: list = field(default_factory=list, repr=False)  # their labels ("block 0 AIC", "block 0 AIV0", ...)
    core_programs: list = field(default_factory=list, repr=False)  # programs each of them ran
    core_pipes: dict = field(default_factory=dict, repr=False)
    plan: dict = field(default_factory=dict)  # the AscendPlan the kernel was lowered with (metadata["plan"])
    launch_us: float = 0.0  # the fixed start-up cost included in estimate_us (launch_us / mix_launch_us)
    sampled_blocks: list = field(default_factory=list)  # the blocks run on the model when sampled, else []
    sampled_programs: int = 0  # the programs those blocks ran

    @property
    def extrapolated(self) -> bool:
        return bool(self.sampled_blocks)

    @property
    def ratio(self) -> float:
        return self.estimate_us / self.floor_us if self.floor_us else float("inf")

    def report(self) -> str:
        c = self.counters
        lines = [f"{self.kernel} on the {self.soc} cost model (an estimate; constants in "
                 f"xblock/backends/ascend/model/cost.py): {self.programs} programs on {self.blocks} blocks, "
                 f"{'double' if self.double_buffered else 'single'}-buffered",
                 f"  estimate {self.estimate_us:.2f} us, roofline floor {self.floor_us:.2f} us "
                 f"({self.ratio:.1f}x), bound by {self.bound}",
                 *([f"  plan: {AscendPlan.from_dict(self.plan).describe()}"] if self.plan else []),
                 *([f"  extrapolated from {len(self.sampled_blocks)} of {self.blocks} blocks "
                    f"({self.sampled_programs} of {self.programs} programs run on the model: blocks "
                    f"{', '.join(map(str, self.sampled_blocks))})"] if self.sampled_blocks else []),
                 "  busiest core, busy cycles per pipe: " +
                 ", ".join(f"{p} {self.pipes[p]:.0f}" for p in PIPES)]
        if len(self.core_pipes) > 1:
            lines += [f"  busiest {k}: " + ", ".join(f"{p} {v[p]:.0f}" for p in PIPES if v[p])
                      for k, v in sorted(self.core_pipes.items())]
        lines.append(f"  GM bytes {c['gm_read_bytes'] + c['gm_write_bytes']} (minimum {c['min_gm_bytes']}), "
                     f"{c['datacopy_calls']} DataCopy calls, {c['bytes_per_datacopy']:.0f} B per call")
        lines.append("  counters: " + ", ".join(f"{k}={v}" for k, v in c.items() if k not in
                                                ("bytes_per_datacopy",)))
        return "\n".join(lines)


def k_steps(e: dict, metadata: dict) -> int:
    """The steps an AIC's pipeline overlaps: one per step of its K loops when L1 holds two of them
    (cube_plan's depthA1 = depthB1 = 2: the next step's GM -> L1 copy runs during this one's LoadData
    and Mmad), else 0 (programs are the unit, as on the vector cores)."""
    plans = [c.get("plan", "") for c in metadata.get("cube") or []]
    if not e.get("gm_to_l1_calls") or not plans or not all("depthA1=2 depthB1=2" in p for p in plans):
        return 0
    return e["gm_to_l1_calls"] // 2  # an A and a B copy per step


def l2_hit_fraction(reads: int, footprint: int, sc: SocCost, unique: int | None = None,
                    largest: int | None = None) -> float:
    """The share of a launch's reads that hit L2 (module docstring): all but the first read of each
    byte (`unique`: the bytes of each buffer read at least once, the CPU model's count; the whole
    footprint when unknown), when the footprint fits in L2, or when its largest buffer does (`largest`:
    a buffer read again is re-read about one buffer later, so its reuse distance is about its size)."""
    fits = footprint <= sc.l2.value or (largest is not None and largest <= sc.l2.value)
    if reads <= 0 or not fits:
        return 0.0
    return max(0.0, 1.0 - (footprint if unique is None else unique) / reads)


def l2_writeback_bytes(misses: float, writes: float, sc: SocCost) -> float:
    """The bytes of a launch's writes written back to HBM during it (`l2_writeback`): what overflows L2
    of the bytes the launch puts there (its reads through L2 that miss, and its writes), the written
    share of it."""
    into = misses + writes
    if writes <= 0 or into <= sc.l2.value:
        return 0.0
    return writes * (into - sc.l2.value) / into


def estimate(metadata: dict, totals: dict, entries: list, min_bytes: int, soc: str) -> Profile:
    """The Profile of one launch from the model's counters (its launcher's `last_counters`, and
    `last_block_counters`: one entry per model core, with its "block" and "core"; model/launch.py)."""
    sc = soc_cost(soc)
    n_blocks, programs = totals["block_dim"], totals["programs"]
    double = _double_buffered(metadata)
    workspace = int(metadata.get("workspace_bytes") or 0) * n_blocks
    reads = sum(e["datacopy_in_bytes"] + e["gm_to_l1_bytes"] for e in entries)
    writes = sum(e["datacopy_out_bytes"] + e["l0c_to_gm_bytes"] for e in entries)
    uncached = sum(e.get("uncached_read_bytes", 0) for e in entries)  # reads kept out of L2: never hit
    buffers = totals.get("buffer_reads") or []
    largest = max((size for _, size in buffers), default=None)
    unique = totals.get("unique_read_bytes")
    # the reads through L2, and the bytes of them read at least once (a buffer kept out of L2 is read once
    # by the rule that keeps it out, plan/streaming.py: its reads are its unique bytes)
    cached = reads - uncached
    hit = l2_hit_fraction(cached, min_bytes + workspace, sc, None if unique is None else max(0, unique - uncached),
                          largest)
    readers = sum(1 for e in entries if e["datacopy_in_bytes"] + e["gm_to_l1_bytes"]) or 1
    rate = min(_c("mte_bytes_per_cycle"), sc.hbm.value / sc.hz / readers)  # a core's share of HBM reads
    cube = cube_cycles_per_op(metadata)
    serial = serial_read_bytes(buffers, readers)
    worst, worst_pipes, all_pipes, labels, progs_of, by_kind = -1.0, None, [], [], [], {}
    for i, e in enumerate(entries):
        block, core = e.get("block", i), e.get("core", "AIV")
        core_reads = e["datacopy_in_bytes"] + e["gm_to_l1_bytes"]
        share = min(1.0, e.get("uncached_read_bytes", 0) / core_reads) if core_reads else 0.0
        pipes, sync = core_pipes(e, rate, hit * (1 - share), cube, serial if core_reads else 0.0)
        progs = (programs - block + n_blocks - 1) // n_blocks
        t = core_time(pipes, sync, max(progs, k_steps(e, metadata)), double, share)
        all_pipes.append(pipes)
        labels.append(f"block {block} {core}")
        progs_of.append(progs)
        kind = "AIC" if core == "AIC" else "AIV"
        if t > by_kind.get(kind, (-1.0, None))[0]:
            by_kind[kind] = (t, pipes)
        if t > worst:
            worst, worst_pipes = t, pipes
    # the launch's HBM traffic during it: reads that miss L2, and the writes replaced lines take back to HBM
    # (l2_writeback; the rest is written back after the kernel)
    back = l2_writeback_bytes(cached * (1 - hit), writes, sc)
    hbm_bytes = cached * (1 - hit) + uncached + back
    hbm = hbm_bytes / sc.hbm.value * sc.hz
    counters = _totals(metadata, totals, entries, min_bytes)
    counters["l2_hit_bytes"] = int(cached * hit)
    counters["uncached_read_bytes"] = int(uncached)
    counters["l2_writeback_bytes"] = int(back)
    counters["hbm_bytes"] = int(cached * (1 - hit) + uncached + writes)
    bw = min(sc.hbm.value, n_blocks * _c("mte_bytes_per_cycle") * sc.hz)
    cube_cores = n_blocks if counters["cube_ops"] else 0
    floor = min_bytes / bw
    if cube_cores:
        floor = max(floor, counters["cube_ops"] * 16 ** 3 * cube / (cube_cores * _c("cube_macs_per_cycle") * sc.hz))
    bound = "HBM" if hbm > worst else max(PIPES, key=lambda p: worst_pipes[p])
    start = launch_cycles(metadata, sc)
    p = Profile(metadata["name"], soc, counters, worst_pipes, bound, (max(worst, hbm) + start) / sc.hz * 1e6,
                floor * 1e6, n_blocks, programs, double, all_pipes, labels, progs_of,
                {k: v[1] for k, v in by_kind.items()}, dict(metadata.get("plan") or {}))
    p.launch_us = start / sc.hz * 1e6
    return p


def _double_buffered(metadata: dict) -> bool:
    """Whether every TQue of the kernel has two buffers (its UB plan), else the `buffer_num` option."""
    import ast

    plan = metadata.get("ub_plan")
    if isinstance(plan, str):
        try:
            plan = ast.literal_eval(plan)
        except (ValueError, SyntaxError):
            plan = None
    queues = (plan or {}).get("queues") if isinstance(plan, dict) else None
    if queues:
        return all(q.get("buffers", 1) >= 2 for q in queues.values())
    return (metadata.get("options") or {}).get("buffer_num", 2) >= 2


def _totals(metadata: dict, totals: dict, blocks: list, min_bytes: int) -> dict:
    s = {k: sum(b[k] for b in blocks) for k in blocks[0] if k not in ("block", "core")} if blocks else {}
    calls = s.get("datacopy_in_calls", 0) + s.get("datacopy_out_calls", 0) + s.get("gm_to_l1_calls", 0)
    moved = s.get("datacopy_in_bytes", 0) + s.get("datacopy_out_bytes", 0) + s.get("gm_to_l1_bytes", 0)
    return {
        "gm_read_bytes": totals["gm_read_bytes"],
        "gm_write_bytes": totals["gm_write_bytes"],
        "min_gm_bytes": min_bytes,
        "datacopy_calls": calls,
        "datacopy_bytes": moved,
        "bytes_per_datacopy": moved / calls if calls else 0.0,
        "datacopy_in_calls": s.get("datacopy_in_calls", 0),
        "datacopy_out_calls": s.get("datacopy_out_calls", 0),
        "scalar_ub_accesses": totals["scalar_ub_accesses"],
        "scalar_gm_accesses": totals["scalar_gm_accesses"],
        "vector_instructions": totals["vector_instructions"],
        "vector_repeats": totals["vector_repeats"],
        "mmad_calls": s.get("mmad_calls", 0),
        "cube_ops": s.get("cube_ops", 0),
        "gm_to_l1_bytes": s.get("gm_to_l1_bytes", 0),
        "gm_to_l1_calls": s.get("gm_to_l1_calls", 0),
        "l1_to_l0a_bytes": s.get("l1_to_l0a_bytes", 0),
        "l1_to_l0b_bytes": s.get("l1_to_l0b_bytes", 0),
        "l1_to_l0_bytes": s.get("l1_to_l0a_bytes", 0) + s.get("l1_to_l0b_bytes", 0),
        "l0c_to_gm_bytes": s.get("l0c_to_gm_bytes", 0),
        "fixpipe_calls": s.get("fixpipe_calls", 0),
        "workspace_bytes": int(metadata.get("workspace_bytes") or 0) * totals["block_dim"],
        **{k: s.get(k, 0) for k in ("trans_repeats_b16", "trans_repeats_b32", "reduce_repeats", "gather_repeats_b16",
                                    "gather_repeats_b32", "gathermask_repeats", "window_excess_read_bytes",
                                    "window_excess_write_bytes")},
        "kernel_type": metadata.get("kernel_type", ""),
    }
