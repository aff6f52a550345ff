"""A timeline (per pipe, per core) of a range of programs, drawn from a cost-model `Profile`.

**The cost model's overlap rule drawn out: an estimate from averaged counters, not a trace.** The
CPU model records counters per core for the whole launch; `cost.py` turns them into busy cycles per
pipe (`Profile.block_pipes`, one dict per model core, labelled by `Profile.cores`, with
`Profile.core_programs` programs each). Here every program of a core is taken to be the average one:
its time on a pipe is the core's busy cycles on that pipe divided by the core's programs. Nothing of
the real order of instructions inside a program is known, so the drawing shows how the pipes of
consecutive programs can overlap, not what a device would do.

Stages of one program, in order (a pipe with 0 cycles is skipped):
- a vector core (label with "AIV"): Scalar -> MTE2 -> V -> MTE3;
- a cube core (label with "AIC"): Scalar -> MTE2 -> MTE1 -> Cube -> Fixpipe;
- a core of unknown kind (a Profile without `cores`: one summed entry per block):
  Scalar -> MTE2 -> MTE1 -> Cube -> Fixpipe -> V -> MTE3.
A pipe with cycles that its kind's order lacks goes last, in `cost.PIPES` order.
Scalar is drawn as the first stage: the scalar unit issues a program's instructions before its
queues run them. That is how the cost model counts it (one more pipe in the overlap), so with two
buffers the schedule of all of a core's programs ends at `cost.overlap(pipes, 0, P, True)` cycles;
the serial part of Scalar (V->S / S->V syncs) that the model adds outside the overlap is not told
apart in a Profile and is drawn within the Scalar stage.

**Rule** (a flow shop with D buffers per queue; D = 2 when `Profile.double_buffered`, else 1): stage
s of program j starts at the latest of
- the end of stage s-1 of program j (its input is ready),
- the end of stage s of program j-1 (the pipe is free),
- the end of stage s+1 of program j-D (the buffer it writes is free once the consumer of the
  program D before is done).
With D = 2 the slowest pipe runs back to back: (P - 1) * max + sum, the cost model's figure. With
D = 1 stage s of program j+1 still overlaps stages s+2.. of program j, so the drawing can end before
the cost model's single-buffered figure (the plain sum), which is the more conservative of the two.
The cores of a mixed kernel's block (AIC, AIV0, AIV1) are each drawn from time 0 on their own: their
cross-core waits are not modelled. Nor is the HBM share: when the Profile is bound by "HBM" (a core's
GM bytes over its slice of the bandwidth take longer than its pipes), the estimate is longer than
the drawing.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

from . import cost

VECTOR_ORDER = ("Scalar", "MTE2", "V", "MTE3")
CUBE_ORDER = ("Scalar", "MTE2", "MTE1", "Cube", "Fixpipe")
ANY_ORDER = ("Scalar", "MTE2", "MTE1", "Cube", "Fixpipe", "V", "MTE3")

# one colour per program index modulo 10 (a qualitative palette, readable with black text)
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9",
           "#bc80bd")


@dataclass(frozen=True)
class Span:
    """One stage of one program on one pipe: [start_cycle, end_cycle) from the core's start."""

    pipe: str
    program: int
    start_cycle: float
    end_cycle: float


def cores(profile) -> list[tuple[str, dict, int]]:
    """(label, busy cycles per pipe, programs) of each model core of the launch.

    A Profile without per-core labels (`cores`, `core_programs`) has one summed entry per block in
    `block_pipes`: labelled "block i", with the programs the cost model gives block i."""
    pipes = list(getattr(profile, "block_pipes", None) or [])
    labels = getattr(profile, "cores", None)
    progs = getattr(profile, "core_programs", None)
    if not pipes:
        pipes = [profile.pipes]
    if not labels or len(labels) != len(pipes):
        labels = [f"block {i}" for i in range(len(pipes))]
    if not progs or len(progs) != len(pipes):
        n = max(int(profile.blocks), 1)
        progs = [(profile.programs - i + n - 1) // n for i in range(len(pipes))]
    return list(zip(labels, pipes, (int(p) for p in progs)))


def stage_order(label: str, pipes: dict) -> list[str]:
    """The pipes of one core with busy cycles, in the stage order of its kind (module docstring)."""
    order = VECTOR_ORDER if "AIV" in label else CUBE_ORDER if "AIC" in label else ANY_ORDER
    order = list(order) + [p for p in cost.PIPES if p not in order]
    return [p for p in order if pipes.get(p, 0) > 0]


def _block_of(label: str) -> int | None:
    parts = label.split()
    return int(parts[1]) if len(parts) >= 2 and parts[0] == "block" and parts[1].isdigit() else None


def block_cores(profile, block: int) -> list[int]:
    """Indices (into `cores(profile)`) of the cores of one block, AIC first, then AIV0, AIV1."""
    found = [i for i, (label, _, _) in enumerate(cores(profile)) if _block_of(label) == block]
    if not found:
        raise cost.ProfileError(f"no core of block {block} in the profile of {profile.kernel} "
                         f"({profile.blocks} blocks)")
    return found


def schedule(profile, core: int, first: int = 0, count: int = 8) -> list[Span]:
    """The spans of programs first .. first+count-1 (clamped to the core's programs) of model core
    `core` (an index into `profile.cores`) under the rule of the module docstring, in cycles from
    the core's start; ordered by program, then stage."""
    if first < 0 or count < 0:
        raise cost.ProfileError(f"schedule: first ({first}) and count ({count}) must be >= 0")
    label, pipes, programs = cores(profile)[core]
    stages = stage_order(label, pipes)
    last = min(first + count, programs)
    if not stages or programs <= 0 or first >= last:
        return []
    per = [pipes[p] / programs for p in stages]
    depth = 2 if profile.double_buffered else 1
    n = len(stages)
    ends: list[list[float]] = []  # ends[j][s]
    spans = []
    for j in range(last):
        row: list[float] = []
        for s in range(n):
            start = max(row[s - 1] if s else 0.0,
                        ends[j - 1][s] if j >= 1 else 0.0,
                        ends[j - depth][s + 1] if j >= depth and s + 1 < n else 0.0)
            row.append(start + per[s])
            if j >= first:
                spans.append(Span(stages[s], j, start, start + per[s]))
        ends.append(row)
    return spans


def _rows(profile, block: int, first: int, count: int) -> list[tuple[str, str, list[Span]]]:
    """(core label, pipe, spans) of each row of a block's chart: its cores, each core's pipes in stage order."""
    rows = []
    all_cores = cores(profile)
    for i in block_cores(profile, block):
        label, pipes, _ = all_cores[i]
        spans = schedule(profile, i, first, count)
        for p in stage_order(label, pipes):
            rows.append((label, p, [s for s in spans if s.pipe == p]))
    return rows


def _title(profile, block: int, rows) -> str:
    shown = sorted({s.program for _, _, spans in rows for s in spans})
    what = "no programs" if not shown else f"program {shown[0]}" if len(shown) == 1 else \
        f"programs {shown[0]}..{shown[-1]}"
    return (f"{profile.kernel} on {profile.soc}: estimate {profile.estimate_us:.2f} us, bound by {profile.bound}; "
            f"{what} of block {block}, "
            f"{'double' if profile.double_buffered else 'single'}-buffered (cost-model estimate from averaged "
            f"counters, not a trace)")


def _span_range(rows) -> tuple[float, float]:
    spans = [s for _, _, ss in rows for s in ss]
    if not spans:
        return 0.0, 1.0
    t0, t1 = min(s.start_cycle for s in spans), max(s.end_cycle for s in spans)
    return t0, t1 if t1 > t0 else t0 + 1.0


def _nice_step(span: float, ticks: int = 8) -> float:
    import math

    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def render_svg(profile, path=None, block: int = 0, first: int = 0, count: int = 8) -> str:
    """An SVG timeline of programs first .. first+count-1 of each core of `block`: one row per pipe
    per core, time in microseconds, a rectangle per stage coloured by program (its number inside when
    it fits). Written to `path` when given; returned."""
    import math

    hz = cost.soc_cost(profile.soc).hz
    rows = _rows(profile, block, first, count)
    t0, t1 = _span_range(rows)
    us0, us1 = t0 / hz * 1e6, t1 / hz * 1e6
    step = _nice_step(us1 - us0)
    lo, hi = math.floor(us0 / step) * step, math.ceil(us1 / step) * step
    if hi <= lo:
        hi = lo + step
    label_w, plot_w, row_h, top, pad = 170, 900, 22, 58, 12
    width = label_w + plot_w + 2 * pad
    height = top + row_h * max(len(rows), 1) + 44

    def x(cycles: float) -> float:
        return label_w + pad + (cycles / hz * 1e6 - lo) / (hi - lo) * plot_w

    title = _title(profile, block, rows)
    head, sub = title.split("; ", 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f"<title>{escape(title)}</title>",
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
           f'<text x="{pad}" y="18" font-size="13" font-weight="bold">{escape(head)}</text>',
           f'<text x="{pad}" y="36" fill="#444">{escape(sub)}</text>']
    bottom = top + row_h * len(rows)
    # the time axis: grid lines and tick labels
    n_ticks = int(round((hi - lo) / step))
    for k in range(n_ticks + 1):
        us = lo + k * step
        xx = label_w + pad + k * plot_w / n_ticks
        out.append(f'<line x1="{xx:.1f}" y1="{top - 4}" x2="{xx:.1f}" y2="{bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{xx:.1f}" y="{bottom + 14}" text-anchor="middle">{us:g}</text>')
    out.append(f'<text x="{label_w + pad + plot_w / 2:.1f}" y="{bottom + 32}" text-anchor="middle">'
               "time (us, from the core's start)</text>")
    prev_core = None
    for r, (core, pipe, spans) in enumerate(rows):
        y = top + r * row_h
        if core != prev_core and r:
            out.append(f'<line x1="{pad}" y1="{y}" x2="{width - pad}" y2="{y}" stroke="#888"/>')
        prev_core = core
        out.append(f'<text class="row" x="{pad}" y="{y + row_h / 2 + 4:.1f}">{escape(f"{core} {pipe}")}</text>')
        for s in spans:
            x0, x1 = x(s.start_cycle), x(s.end_cycle)
            w = max(x1 - x0, 0.5)
            tip = f"program {s.program}, {pipe}: {s.start_cycle:.0f}-{s.end_cycle:.0f} cycles"
            out.append(f'<rect x="{x0:.2f}" y="{y + 3}" width="{w:.2f}" height="{row_h - 6}" '
                       f'fill="{PALETTE[s.program % len(PALETTE)]}" stroke="#333" stroke-width="0.5">'
                       f"<title>{escape(tip)}</title></rect>")
            text = str(s.program)
            if w >= 7 * len(text) + 4:
                out.append(f'<text x="{(x0 + x1) / 2:.2f}" y="{y + row_h / 2 + 4:.1f}" text-anchor="middle">'
                           f"{text}</text>")
    out.append("</svg>")
    svg = "\n".join(out) + "\n"
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
    return svg


def render_text(profile, block: int = 0, first: int = 0, count: int = 8, width: int = 100) -> str:
    """The timeline of `render_svg` as ASCII: one line per core and pipe, `width` time slots, each
    showing the program (modulo 10) busy on that pipe then, '.' when idle."""
    hz = cost.soc_cost(profile.soc).hz
    width = max(int(width), 1)
    rows = _rows(profile, block, first, count)
    t0, t1 = _span_range(rows)
    dt = (t1 - t0) / width
    names = [f"{core} {pipe}" for core, pipe, _ in rows]
    pad = max((len(n) for n in names), default=0)
    lines = [_title(profile, block, rows)]
    for name, (_, _, spans) in zip(names, rows):
        # a slot shows the program busiest in it when that fills at least half the slot; a span too
        # short to fill half of any slot still shows in the slot of its midpoint when that one is idle
        best = [(0.0, -1)] * width
        for s in spans:
            a, b = int((s.start_cycle - t0) / dt), int((s.end_cycle - t0) / dt)
            for k in range(max(a, 0), min(b, width - 1) + 1):
                cover = min(s.end_cycle, t0 + (k + 1) * dt) - max(s.start_cycle, t0 + k * dt)
                if cover > best[k][0]:
                    best[k] = (cover, s.program)
        cells = [str(prog % 10) if cover >= dt / 2 else "." for cover, prog in best]
        for s in spans:
            if str(s.program % 10) not in cells[max(int((s.start_cycle - t0) / dt), 0):
                                                min(int((s.end_cycle - t0) / dt), width - 1) + 1]:
                mid = min(int(((s.start_cycle + s.end_cycle) / 2 - t0) / dt), width - 1)
                if cells[mid] == ".":
                    cells[mid] = str(s.program % 10)
        lines.append(f"{name:<{pad}} |{''.join(cells)}|")
    left, right = f"{t0 / hz * 1e6:.3g} us", f"{t1 / hz * 1e6:.3g} us"
    lines.append(f"{'':<{pad}}  {left}{right:>{max(width - len(left), len(right))}}")
    return "\n".join(lines)
