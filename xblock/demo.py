"""`xblock demo` / `make demo`: every example compiled for every target, run where it can run,
diffed against the sim (and the sim against numpy), and AscendC exported to a folder."""

from __future__ import annotations

import difflib
import importlib
import os
import textwrap
import time
from pathlib import Path

import numpy as np

from . import progress
from .backends import REFERENCE, TargetUnavailable, get_backend
from .backends import targets as all_targets
from .errors import UnknownNameError, XBlockError
from .exporting import case_name, export_with_case, grid_formula, specialization
from .numdiff import compare, diff

DEMO_SIZES = {"add": 98432, "softmax": (823, 781), "layernorm": (97, 3001), "rmsnorm": (64, 1000),
              "matmul": (300, 200, 333), "gelu": 98432, "argmax": (64, 1000), "cumsum": (64, 1000),
              "transpose": (300, 200), "colsum": (1000, 97)}


def _examples(names=None) -> list:
    """The demo's examples (`xblock.examples`, the repository's `examples/` shipped in the package):
    all of them, or those named, in the order given."""
    from .examples import EXAMPLES

    for name in names or ():
        if name not in EXAMPLES:
            close = difflib.get_close_matches(name, EXAMPLES, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise UnknownNameError(f"no example '{name}' (the examples: {', '.join(EXAMPLES)}){hint}")
    return list(names or EXAMPLES)


def _size(name: str, mod, small: bool):
    """The demo's size of an example; `small`: its fourth test size (BLOCK+1 or the like), a quick run."""
    if small:
        return mod.SIZES[min(3, len(mod.SIZES) - 1)]
    return DEMO_SIZES.get(name, mod.SIZES[-1])


class _Notes:
    """Reasons too long for a cell: the cell shows `[k]`, the full text follows the table."""

    def __init__(self):
        self.texts: list = []

    def cell(self, status: str, reason: str) -> str:
        if reason not in self.texts:
            self.texts.append(reason)
        return f"{status} [{self.texts.index(reason) + 1}]"


def _compile(case, target: str, dest: Path, exported: list, notes: _Notes, info=None) -> tuple:
    """Compile (and export, where the target can) one example: (error cell or None, seconds, failed).

    `info` names the case for the export (`name`, `source`, `grid_formula`): the project carries
    that launch's data and golden outputs.
    """
    t0 = time.perf_counter()
    try:
        backend = get_backend(target)
        ck = case.kernel.warmup(*case.args, target=target, **case.meta)  # the diff reuses this kernel
    except TargetUnavailable as e:
        return notes.cell("n/a", f"{target}: {e}"), 0.0, False
    except XBlockError as e:
        return notes.cell("compile error", f"{target}: {e}"), 0.0, True
    if backend.export is not None:
        try:
            export_with_case(ck, dest, case, spec=specialization(case.kernel, case, target), **(info or {}))
            exported.append(target)
        except Exception as e:  # export problems are reported, the demo goes on
            return notes.cell("export failed", f"{target}: {e}"), 0.0, False
    return None, time.perf_counter() - t0, False


def _verdict(diffs: list, compile_s: float, run_s: float) -> tuple:
    ok = all(d.ok for d in diffs)
    err = max(d.max_abs for d in diffs)
    return f"{'ok' if ok else 'FAIL'} {err:.1e}", f"{compile_s * 1e3:.0f}", f"{run_s * 1e3:.0f}", ok


def _example_row(name: str, case, targets, out_dir: Path, exported: list, notes: _Notes, info=None) -> tuple:
    """The demo's cells for one example (a verdict and a time per target) and its failures."""
    cells, seconds, failures = {}, {}, 0
    for target in targets:
        progress.stage(f"compiling for {target}")
        cell, seconds[target], failed = _compile(case, target, out_dir / target / name, exported, notes, info)
        if cell is not None:
            cells[target] = (cell, "-", "-")
            failures += failed
    others = [t for t in targets if t not in cells and t != REFERENCE]
    outputs = list(case.outputs.values())
    progress.stage("running and comparing")
    try:
        rep = diff(case.kernel, case.grid, *case.args, targets=others or [REFERENCE], reference=REFERENCE,
                   outputs=outputs, atol=case.atol, rtol=case.rtol, **case.meta)  # (no targets: diff runs all)
    except XBlockError as e:  # the reference itself fails: nothing can be compared
        bad = (notes.cell("run error", f"{REFERENCE}: {e}"), "-", "-")
        return [cells.get(t, bad) for t in targets], failures + 1
    if REFERENCE in targets and REFERENCE not in cells:  # the reference against numpy
        diffs = [compare(REFERENCE, o, rep.reference_outputs[i], case.expected[o], case.atol, case.rtol)
                 for o, i in case.outputs.items()]
        *cells[REFERENCE], ok = _verdict(diffs, seconds[REFERENCE], rep.reference_seconds)
        failures += not ok
    for st in (st for st in rep.statuses if st.target in others):
        if st.status == "skipped":
            cells[st.target] = (notes.cell("compiled, not run", f"{st.target}: {st.reason}"),
                                f"{seconds[st.target] * 1e3:.0f}", "-")
        elif st.status == "error":
            cells[st.target] = (notes.cell("run error", f"{st.target}: {st.reason}"), "-", "-")
            failures += 1
        else:
            *cells[st.target], ok = _verdict([r for r in rep.rows if r.target == st.target], seconds[st.target],
                                             st.seconds)
            failures += not ok
    return [cells[t] for t in targets], failures


# one line per example and target, so the table fits 100 columns with every target
_WIDTHS = (10, 12, 8, 7)  # example, size, dtype, target
_CELL, _TIME = 28, 10


def _line(first: list, cell: tuple) -> str:
    v, c, r = cell
    return "  ".join(str(x).ljust(w) for x, w in zip(first, _WIDTHS)) + f"  {v:<{_CELL}} {c:>{_TIME}} {r:>{_TIME}}"


def _ran(cell: tuple) -> bool:
    """Whether a cell is a verdict of a run (ok or FAIL), not a compile-only or n/a cell."""
    return cell[0].startswith(("ok ", "FAIL "))


def run_demo(out_dir: str = "out/demo", targets=None, examples=None, small: bool = False) -> int:
    """Run the demo; returns the process exit code (1 if any target that ran disagrees).

    Each row is printed as soon as its example has run on every target. A cell is the verdict and
    the largest error against the reference; beside it the compile time and the run time in milliseconds
    (compile is a cache hit after the first demo).

    Args:
        out_dir: where the exported projects go.
        targets: the targets to run (default: all).
        examples: the names of the examples to run (default: all).
        small: run each example at a small size (quick) instead of the demo's.
    """
    names = _examples(examples)
    targets = targets or all_targets()
    failures = 0
    exported: list = []
    notes = _Notes()
    print(f"xblock demo: examples x targets ({', '.join(targets)}); {REFERENCE} against numpy, the others "
          f"against the {REFERENCE}")
    print(_line(["example", "size", "dtype", "target"], ("verdict, max abs error", "compile ms", "run ms")))
    print(_line(["-" * w for w in _WIDTHS], ("-" * _CELL, "-" * _TIME, "-" * _TIME)))
    ran = 0
    for name in names:
        mod = importlib.import_module(f"{__package__}.examples.{name}")
        size = _size(name, mod, small)
        dtype = mod.DTYPES[0]
        case = mod.case(size, dtype)
        first = [name, "x".join(map(str, size)) if isinstance(size, tuple) else str(size), np.dtype(dtype).name
                 if not isinstance(dtype, str) else dtype]
        info = dict(name=case_name(size, dtype), source=f"examples/{name}.py", grid_formula=grid_formula(mod.case))
        with progress.transient(), progress.step(f"demo: {name}"):  # the row is the lasting line
            cells, failed = _example_row(name, case, targets, Path(out_dir), exported, notes, info)
        for k, (target, cell) in enumerate(zip(targets, cells)):
            print(_line((first if k == 0 else ["", "", ""]) + [target], cell), flush=True)
        ran += sum(_ran(c) for c in cells)
        failures += failed
    for k, text in enumerate(notes.texts, 1):
        print(textwrap.fill(f"[{k}] {text}", 100, subsequent_indent="    ", break_long_words=False,
                            break_on_hyphens=False))
    for target in sorted(set(exported)):
        print(f"{target} projects exported under {os.path.join(out_dir, target)}/ ({exported.count(target)} kernels)")
    if failures:
        print(f"demo: {failures} failure(s)")
    elif not ran:
        print("demo: no target ran a kernel here (compiled only, or not available: see the notes); nothing compared")
    else:
        print(f"demo: all targets that ran agree ({ran} runs compared)")
    return 1 if failures else 0
