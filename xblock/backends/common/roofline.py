"""A target's roofline constants and the time they give a launch's counted work (the autotuner's cost model).

The counts come from `passes/work_counts.py` (bytes, elementwise lanes and dot flops per program,
and the number of programs); `runtime/cost_model.py` ranks autotune configs by `Roofline.seconds`.
The figure ranks configs of one kernel; it is not a prediction of the kernel's time.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Roofline:
    """The machine constants of one target (each backend documents where its numbers come from).

    Attributes:
        machine: what the constants describe.
        units: programs that run at once (cores, SMs).
        bandwidth: bytes per second the whole machine moves.
        unit_bandwidth: bytes per second one unit draws alone.
        lane_ops: elementwise lane operations per second of one unit.
        dot_flops: (input element type, input_precision) -> dot flops per second of one unit;
            the key (element type, "") and then ("", "") are the fallbacks.
        program_s: the cost of one program (start, index math, a pipeline fill), on its unit.
        spread_s: the cost of a launch of more than one program (handing the grid to threads).
        overlap: 1 when memory and compute overlap fully (the time is the larger), 0 when they add.
    """

    machine: str
    units: int
    bandwidth: float
    unit_bandwidth: float
    lane_ops: float
    dot_flops: dict = field(default_factory=dict)
    program_s: float = 0.0
    spread_s: float = 0.0
    overlap: float = 1.0

    def dot_rate(self, key: tuple) -> float:
        for k in (key, (key[0], ""), ("", "")):
            if k in self.dot_flops:
                return self.dot_flops[k]
        return self.lane_ops

    def seconds(self, work) -> float:
        """The time of a launch of `work` (a `work_counts.Work`): memory and compute of the busy units,
        the programs' own cost, and the cost of spreading the grid."""
        programs = work.programs
        if programs <= 0:
            return 0.0
        used = min(programs, self.units)
        bandwidth = min(self.bandwidth, used * self.unit_bandwidth)
        memory = programs * work.bytes / bandwidth
        compute = programs * (work.ops / self.lane_ops + sum(f / self.dot_rate(k) for k, f in work.dot_flops.items()))
        compute /= used
        waves = -(-programs // used)
        both = max(memory, compute) + (1.0 - self.overlap) * min(memory, compute)
        return both + waves * self.program_s + (self.spread_s if programs > 1 else 0.0)
