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
- MTE1: L1 -> L0A/L0B (LoadData);
- V: vector instructions;
- Cube: Mmad fractals (16x16x16 multiply-accumulates);
- Fixpipe: L0C -> GM;
- Scalar: instruction issue, and scalar UB/GM accesses (GetValue/SetValue).

A transfer costs `DATACOPY_FIXED_CYCLES` plus its bytes at the core's share of the bandwidth:
the smaller of the per-core MTE rate and the HBM bandwidth split over the launch's blocks.

**Overlap rule** (per core; the launch takes the slowest core). The queues let the pipes of one
program overlap those of the next when every TQue has two buffers (`buffer_num=2`): with P
programs on the core, stage times per program p_i = pipe_i / P, a software pipeline takes
(P - 1) * max_i p_i + sum_i p_i. With one buffer per queue the pipes of consecutive programs
cannot overlap: the sum. Scalar UB/GM accesses (read-backs of reductions, scalar loops) wait for
the vector pipe and stall the next vector instruction (V->S / S->V syncs): their cycles are added
serially, outside the overlap. Reads and writes share the core's slice of the HBM bandwidth: a
core takes at least its GM bytes (in and out) over that slice, and the bound is "HBM" when that is
what sets its time. Launch overhead (microseconds on a real device) is not included.

The roofline floor is the larger of the minimum GM bytes (every array argument moved once) over
the bandwidth the launch's cores can draw, and the Cube MACs issued over the peak of the cube
cores the launch uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import XBlockError
from .options import SOCS


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

# Every constant of the model. Per-SoC values are in SOC_CONSTANTS; the rest apply to all 910B parts.
CONSTANTS: dict[str, Constant] = {
    "vector_cycles_per_repeat": Constant(
        1, "cycle", "assumption: one 256-B repeat (8 x 32-B blocks, REFERENCE.md §2.1 'Vector repeat') per cycle "
        "for simple ops; transcendental ops (Exp, Ln, Div) take several in practice"),
    "vector_issue_cycles": Constant(
        8, "cycles", "assumption: start-up of one vector instruction (issue, operand fetch, pipeline fill)"),
    "datacopy_fixed_cycles": Constant(
        300, "cycles", "assumption: fixed cost of one DMA instruction (descriptor issue + GM latency not hidden "
        "by a single in-flight copy); public tuning notes report ~1 KB DMAs reaching about 1/8 of the HBM "
        "roof, which this value reproduces in order of magnitude"),
    "mte_bytes_per_cycle": Constant(
        32, "B/cycle", "per-core GM<->UB/L1 rate: [AICoreMemoryRates] ddr_rate=32 in Ascend910B4.ini as quoted in "
        "a public test fixture; taken for every 910B part and for AIV cores too (assumption)"),
    "mte1_bytes_per_cycle": Constant(
        256, "B/cycle", "assumption: L1 -> L0A/L0B LoadData moves half a 512-B fractal per cycle"),
    "fixpipe_bytes_per_cycle": Constant(
        32, "B/cycle", "assumption: L0C -> GM at the per-core GM rate (mte_bytes_per_cycle)"),
    "scalar_ub_cycles": Constant(
        10, "cycles", "assumption: one GetValue/SetValue on UB from the scalar unit, including the V->S / S->V "
        "synchronisation it needs next to vector code"),
    "scalar_gm_cycles": Constant(
        100, "cycles", "assumption: one GetValue/SetValue on GM through the core's DataCache (hits and misses "
        "averaged; a miss is a GM round trip of several hundred cycles)"),
    "scalar_issue_cycles": Constant(
        2, "cycles", "assumption: scalar-unit cycles to issue one vector, DMA or cube instruction"),
    "cube_macs_per_cycle": Constant(
        16 * 16 * 16, "MAC/cycle", "16x16x16 fp16 MACs per cycle per AIC (REFERENCE.md §2.1 'Cube': cube_m/n/k_size"
        "=16); fp32 runs at half rate (the model's cube_ops already counts an fp32 fractal twice)"),
    "mmad_fixed_cycles": Constant(
        16, "cycles", "assumption: start-up of one Mmad instruction"),
}


@dataclass(frozen=True)
class SocCost:
    """The per-SoC constants: clock and HBM bandwidth."""

    clock: Constant
    hbm: Constant

    @property
    def hz(self) -> float:
        return self.clock.value * 1e6


_HBM_B = Constant(1.6e12, "B/s", "assumption: 1.6 TB/s, the HBM2e figure commonly quoted for 910B (64 GB, 4 stacks); "
                  "public figures for the 910B family range from 0.4 to 1.6 TB/s and Huawei publishes none per SKU")
SOC_CONSTANTS: dict[str, SocCost] = {
    "910B1": SocCost(Constant(1800, "MHz", "assumption: as 910B2 (" + _INI + ")"), _HBM_B),
    "910B2": SocCost(Constant(1800, "MHz", _INI), _HBM_B),
    "910B3": SocCost(Constant(1800, "MHz", "assumption: as 910B2 (" + _INI + "); no public ini quote for 910B3"),
                     _HBM_B),
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


def core_pipes(b: dict, bytes_per_cycle: float) -> tuple[dict, float]:
    """(busy cycles per pipe, the serial part of Scalar) of one block from its counters."""
    fixed = _c("datacopy_fixed_cycles")
    issued = b["vector_instructions"] + b["datacopy_in_calls"] + b["datacopy_out_calls"] + b["gm_to_l1_calls"] + \
        b["mmad_calls"] + b["load_data_calls"] + b["fixpipe_calls"]
    sync = b["scalar_ub_accesses"] * _c("scalar_ub_cycles") + b["scalar_gm_accesses"] * _c("scalar_gm_cycles")
    pipes = {
        "MTE2": (b["datacopy_in_calls"] + b["gm_to_l1_calls"]) * fixed +
                (b["datacopy_in_bytes"] + b["gm_to_l1_bytes"]) / bytes_per_cycle,
        "MTE3": b["datacopy_out_calls"] * fixed + b["datacopy_out_bytes"] / bytes_per_cycle,
        "MTE1": b["load_data_calls"] * _c("vector_issue_cycles") + b["l1_to_l0_bytes"] / _c("mte1_bytes_per_cycle"),
        "V": b["vector_repeats"] * _c("vector_cycles_per_repeat") +
             b["vector_instructions"] * _c("vector_issue_cycles"),
        "Cube": b["cube_ops"] * (16 ** 3 / _c("cube_macs_per_cycle")) + b["mmad_calls"] * _c("mmad_fixed_cycles"),
        "Fixpipe": b["fixpipe_calls"] * fixed + b["l0c_to_gm_bytes"] / min(bytes_per_cycle,
                                                                          _c("fixpipe_bytes_per_cycle")),
        "Scalar": issued * _c("scalar_issue_cycles") + sync,
    }
    return pipes, sync


def overlap(pipes: dict, sync: float, programs: int, double_buffered: bool) -> float:
    """Cycles of one core under the overlap rule of the module docstring."""
    stream = dict(pipes, Scalar=pipes["Scalar"] - sync)
    total = sum(stream.values())
    if not double_buffered or programs <= 1:
        return total + sync
    return (programs - 1) / programs * max(stream.values()) + total / programs + sync


@dataclass
class Profile:
    """What `xblock.profile` returns: the model's counters and the cost model's estimate (see
    `xblock.backends.ascend.cost`: an estimate from documented constants and assumptions).

    counters: launch totals (bytes, calls, instructions; `bytes_per_datacopy` the average transfer).
    pipes: busy cycles per pipe of the busiest core (the one that sets the estimate).
    bound: the busiest pipe of that core, or "HBM" when its share of the HBM bandwidth sets its time.
    estimate_us: estimated kernel time (overlap rule in the module docstring), no launch overhead.
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
    block_pipes: list = field(default_factory=list, repr=False)

    @property
    def ratio(self) -> float:
        return self.estimate_us / self.floor_us if self.floor_us else float("inf")

    def report(self) -> str:
        c = self.counters
        lines = [f"{self.kernel} on the {self.soc} cost model (an estimate; constants in "
                 f"xblock/backends/ascend/cost.py): {self.programs} programs on {self.blocks} blocks, "
                 f"{'double' if self.double_buffered else 'single'}-buffered",
                 f"  estimate {self.estimate_us:.2f} us, roofline floor {self.floor_us:.2f} us "
                 f"({self.ratio:.1f}x), bound by {self.bound}",
                 "  busiest core, busy cycles per pipe: " +
                 ", ".join(f"{p} {self.pipes[p]:.0f}" for p in PIPES)]
        lines.append(f"  GM bytes {c['gm_read_bytes'] + c['gm_write_bytes']} (minimum {c['min_gm_bytes']}), "
                     f"{c['datacopy_calls']} DataCopy calls, {c['bytes_per_datacopy']:.0f} B per call")
        lines.append("  counters: " + ", ".join(f"{k}={v}" for k, v in c.items() if k not in
                                                ("bytes_per_datacopy",)))
        return "\n".join(lines)


def estimate(metadata: dict, totals: dict, blocks: list, min_bytes: int, soc: str) -> Profile:
    """The Profile of one launch from the model's counters (launch.LAST_COUNTERS, LAST_BLOCK_COUNTERS)."""
    sc = soc_cost(soc)
    n_blocks, programs = totals["block_dim"], totals["programs"]
    hbm_per_cycle = sc.hbm.value / sc.hz
    per_core = min(_c("mte_bytes_per_cycle"), hbm_per_cycle / n_blocks)
    double = _double_buffered(metadata)
    worst, worst_pipes, worst_hbm, all_pipes = -1.0, None, False, []
    for i, b in enumerate(blocks):
        pipes, sync = core_pipes(b, per_core)
        progs = (programs - i + n_blocks - 1) // n_blocks
        t = overlap(pipes, sync, progs, double)
        # reads and writes share the core's slice of HBM: MTE2 and MTE3 overlap each other, not that
        gm = b["datacopy_in_bytes"] + b["datacopy_out_bytes"] + b["gm_to_l1_bytes"] + b["l0c_to_gm_bytes"]
        hbm_bound = gm / per_core > t
        t = max(t, gm / per_core)
        all_pipes.append(pipes)
        if t > worst:
            worst, worst_pipes, worst_hbm = t, pipes, hbm_bound
    counters = _totals(metadata, totals, blocks, min_bytes)
    bw = min(sc.hbm.value, n_blocks * _c("mte_bytes_per_cycle") * sc.hz)
    cube_cores = n_blocks if counters["cube_ops"] else 0
    floor = min_bytes / bw
    if cube_cores:
        floor = max(floor, counters["cube_ops"] * 16 ** 3 / (cube_cores * _c("cube_macs_per_cycle") * sc.hz))
    bound = "HBM" if worst_hbm else max(PIPES, key=lambda p: worst_pipes[p])
    return Profile(metadata["name"], soc, counters, worst_pipes, bound, worst / sc.hz * 1e6, floor * 1e6,
                   n_blocks, programs, double, all_pipes)


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
    s = {k: sum(b[k] for b in blocks) for k in blocks[0]} if blocks else {}
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
        "l1_to_l0_bytes": s.get("l1_to_l0_bytes", 0),
        "l0c_to_gm_bytes": s.get("l0c_to_gm_bytes", 0),
        "fixpipe_calls": s.get("fixpipe_calls", 0),
        "workspace_bytes": int(metadata.get("workspace_bytes") or 0) * totals["block_dim"],
        "kernel_type": metadata.get("kernel_type", ""),
    }
