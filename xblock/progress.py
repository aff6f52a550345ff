"""Progress of the steps a user waits on (compiles, autotuning, the demo), shown with rich.

A step shows nothing for its first second (`XBLOCK_PROGRESS_DELAY`, in seconds), so cache hits
and quick compiles stay silent. A longer step shows a spinner with its current stage (a compile's
`ttir`, `so`, ...) or its count (an autotuner's configs and the best so far) and, when it ends,
one line: the time of each stage, or the best config. Progress goes to stderr, and only where
stderr is a terminal: `XBLOCK_QUIET=1` (or `xblock --quiet`) silences it, and `XBLOCK_PROGRESS=1`
shows it anyway (as plain lines where stderr is not a terminal). Compile workers are always quiet.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

_LOCAL = threading.local()  # .steps: this thread's open steps, innermost last; .transient: no end lines


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def enabled() -> bool:
    """Whether progress is shown: not quiet, and stderr a terminal or XBLOCK_PROGRESS=1."""
    if _flag("XBLOCK_QUIET"):
        return False
    if _flag("XBLOCK_PROGRESS"):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def set_quiet() -> None:
    """Silence progress in this process and in the processes it starts (`xblock --quiet`)."""
    os.environ["XBLOCK_QUIET"] = "1"


def _delay() -> float:
    try:
        return float(os.environ.get("XBLOCK_PROGRESS_DELAY", "1.0"))
    except ValueError:
        return 1.0


class Step:
    """One long step: a title, an optional count of `total` items, and named stages with their times."""

    def __init__(self, title: str, total: int | None, transient: bool):
        self.title, self.total, self.transient = title, total, transient
        self.start = time.perf_counter()
        self.stages: list = []  # [name, seconds], seconds None while the stage runs
        self._stage_start = self.start
        self.count, self.note = 0, ""
        self.shown = self.closed = False
        self.task = None  # the rich task id, while a live display shows this step
        self.summary: str | None = None

    def stage(self, name: str) -> None:
        """Start stage `name` (the previous one ends)."""
        self._end_stage()
        self.stages.append([name, None])
        self._stage_start = time.perf_counter()
        _DISPLAY.update(self)

    def advance(self, note: str = "") -> None:
        """One more item done; `note` says where things stand (e.g. the best config so far)."""
        self.count += 1
        self.note = note
        _DISPLAY.update(self, line=True)

    def done(self, summary: str) -> None:
        """The line printed when the step ends, if it was shown (default: its time and its stages')."""
        self.summary = summary

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def stage_times(self) -> str:
        """`xb 0.2 s, ttir 0.1 s, ...`: the time of each stage."""
        return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.stages if seconds is not None)

    def describe(self) -> str:
        text = self.title
        if self.stages and not self.closed:
            text += f": {self.stages[-1][0]}"
        if self.total:
            text += f" [{self.count}/{self.total}]"
        return text + (f", {self.note}" if self.note else "")

    def _end_stage(self) -> None:
        if self.stages and self.stages[-1][1] is None:
            self.stages[-1][1] = time.perf_counter() - self._stage_start

    def close(self) -> None:
        self._end_stage()
        self.closed = True
        if self.summary is None:
            times = self.stage_times()
            self.summary = f"{self.title}: {self.elapsed():.1f} s" + (f" ({times})" if times else "")
        _DISPLAY.finish(self)


class _Null:
    """The step of a process that shows no progress: every call does nothing."""

    def stage(self, name):
        pass

    def advance(self, note=""):
        pass

    def done(self, summary):
        pass


NULL = _Null()


class _Display:
    """The process's one live display (rich allows one at a time), shared by every open step."""

    def __init__(self):
        self.lock = threading.RLock()
        self.progress = None
        self.console = None

    def _console(self):
        if self.console is None:
            from rich.console import Console

            self.console = Console(stderr=True, highlight=False)
        return self.console

    def show(self, step: Step) -> None:
        """The step has run for a second: a spinner line on a terminal, a plain line elsewhere."""
        with self.lock:
            if step.closed:
                return
            step.shown = True
            console = self._console()
            if not console.is_terminal:
                console.print(step.describe() + " ...", markup=False, soft_wrap=True)
                return
            if self.progress is None:
                self.progress = _live_progress(console)
                self.progress.start()
            step.task = self.progress.add_task(step.describe(), total=None, step=step)

    def update(self, step: Step, line: bool = False) -> None:
        if not step.shown:
            return
        with self.lock:
            if step.task is not None and self.progress is not None:
                self.progress.update(step.task, description=step.describe())
            elif line and not step.closed:  # plain output: one line per item counted
                self._console().print(step.describe(), markup=False, soft_wrap=True)

    def finish(self, step: Step) -> None:
        with self.lock:
            if step.task is not None and self.progress is not None:
                self.progress.remove_task(step.task)
                step.task = None
                if not self.progress.tasks:
                    self.progress.stop()
                    self.progress = None
            if step.shown and not step.transient and step.summary:
                self._console().print(step.summary, markup=False, soft_wrap=True)


def _live_progress(console):
    """A rich display of one line per shown step: a spinner, what it is doing, and since when."""
    from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn
    from rich.text import Text

    class Seconds(ProgressColumn):
        def render(self, task):
            return Text(f"{task.fields['step'].elapsed():.0f} s", style="progress.elapsed")

    return Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), Seconds(), console=console,
                    transient=True, redirect_stdout=_stdout_is_terminal())


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


_DISPLAY = _Display()


def _open_steps() -> list:
    if not hasattr(_LOCAL, "steps"):
        _LOCAL.steps = []
    return _LOCAL.steps


@contextlib.contextmanager
def step(title: str, total: int | None = None):
    """A long step: shown after a second if progress is on; yields an object with `stage(name)`,
    `advance(note)` and `done(summary)` (all no-ops when progress is off)."""
    if not enabled():
        yield NULL
        return
    s = Step(title, total, transient=getattr(_LOCAL, "transient", False))
    delay = _delay()
    timer = threading.Timer(delay, _DISPLAY.show, (s,))
    timer.daemon = True
    if delay > 0:
        timer.start()
    else:
        _DISPLAY.show(s)
    steps = _open_steps()
    steps.append(s)
    try:
        yield s
    except BaseException:
        s.done("")  # a failed step leaves no line: its error says what happened
        raise
    finally:
        timer.cancel()
        steps.remove(s)
        s.close()


def stage(name: str) -> None:
    """Start stage `name` of this thread's innermost open step (nothing when there is none)."""
    steps = getattr(_LOCAL, "steps", None)
    if steps:
        steps[-1].stage(name)


def note(text: str) -> None:
    """Print a line now where progress is shown (what the autotuner's cost model pruned)."""
    if enabled():
        with _DISPLAY.lock:
            _DISPLAY._console().print(text, markup=False, soft_wrap=True)


@contextlib.contextmanager
def transient():
    """Steps opened inside leave no line when they end (the demo prints its own table)."""
    before = getattr(_LOCAL, "transient", False)
    _LOCAL.transient = True
    try:
        yield
    finally:
        _LOCAL.transient = before
