"""`xblock.diff`: run a kernel on several targets and compare every written buffer to a reference.

Each target gets its own copies of the inputs. Outputs are the arguments the kernel stores to
(found in its xb module) unless given. A target that cannot run here, or fails to compile, is
reported with the reason and does not stop the others.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from .backends import REFERENCE, TargetUnavailable, get_backend
from .backends import targets as all_targets
from .errors import XBlockError
from .runtime.compiler import _normalize_grid, compile_specialization
from .runtime.jit import jit
from .testing import default_tolerance


@dataclass
class OutputDiff:
    """How one output of one target compares with the reference."""

    target: str
    output: str
    max_abs: float
    max_rel: float
    max_ulp: float
    mismatches: int
    size: int
    first_bad: tuple | None
    ok: bool
    mask: object = field(default=None, repr=False, compare=False)  # where values mismatch


@dataclass
class TargetStatus:
    target: str
    status: str  # "ran", "skipped", "error"
    reason: str = ""
    seconds: float = 0.0  # compiling (on a cache miss) and running


@dataclass
class DiffReport:
    """Per target and output: errors against the reference, mismatches, verdict."""

    kernel: str
    reference: str
    rows: list = field(default_factory=list)
    statuses: list = field(default_factory=list)
    localized: dict | None = None
    reference_outputs: dict = field(default_factory=dict, repr=False)  # arg index -> the reference's array
    reference_seconds: float = 0.0
    notes: list = field(default_factory=list)  # differences by design at a kernel line (precision_notes)

    @property
    def ok(self) -> bool:
        """True when every target that ran matches (skipped targets do not count; errors do)."""
        return all(r.ok for r in self.rows) and not any(s.status == "error" for s in self.statuses)

    def to_json(self) -> str:
        return json.dumps({"kernel": self.kernel, "reference": self.reference, "ok": self.ok,
                           "rows": [{k: v for k, v in asdict(r).items() if k != "mask"} for r in self.rows],
                           "targets": [asdict(s) for s in self.statuses], "localized": self.localized,
                           "notes": self.notes},
                          default=str, indent=2)

    def __str__(self) -> str:
        head = ["target", "output", "max abs err", "max rel err", "max ULP", "mismatches", "first bad",
                "verdict"]
        lines = []
        for r in self.rows:
            lines.append([r.target, r.output, f"{r.max_abs:.3g}", f"{r.max_rel:.3g}", f"{r.max_ulp:.3g}",
                          f"{r.mismatches}/{r.size}", str(r.first_bad) if r.first_bad is not None else "-",
                          "ok" if r.ok else "FAIL"])
        for s in self.statuses:
            if s.status != "ran":
                lines.append([s.target, "-", "-", "-", "-", "-", "-", f"{s.status}: {s.reason}"])
        widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)] if lines else [len(h) for h in head]
        fmt = "  ".join("{:<%d}" % w for w in widths[:-1]) + "  {}"
        out = [f"diff of {self.kernel} against {self.reference}", fmt.format(*head),
               fmt.format(*["-" * w for w in widths[:-1]], "-" * len(head[-1]))]
        out += [fmt.format(*row) for row in lines]
        if self.localized:
            loc = self.localized
            out.append(f"first divergence ({loc['target']}): {loc['op']} at {loc['where']} "
                       f"(max abs err {loc['max_abs']:.3g})")
        out += [f"note: {n}" for n in self.notes]
        out.append("verdict: " + ("ok" if self.ok else "FAIL" + (" (see the notes: differences by design)"
                                                                 if self.notes else "")))
        return "\n".join(out)


def ulp_distance(got: np.ndarray, ref: np.ndarray, dtype) -> np.ndarray:
    """|got - ref| in units of the last place of `ref` in `dtype`."""
    name = np.dtype(dtype).name
    r = np.abs(ref.astype(np.float64))
    if name == "bfloat16":
        with np.errstate(divide="ignore"):
            exp = np.floor(np.log2(np.where(r > 0, r, 2.0**-126)))
        spacing = 2.0 ** (np.maximum(exp, -126) - 7)
    elif name in ("float16", "float32", "float64"):
        spacing = np.spacing(r.astype(dtype)).astype(np.float64)
    else:
        spacing = np.ones_like(r)
    with np.errstate(all="ignore"):
        return np.abs(got.astype(np.float64) - ref.astype(np.float64)) / spacing


def compare(target, name, got, ref, atol, rtol) -> OutputDiff:
    g = np.asarray(got)
    r = np.asarray(ref)
    is_float = r.dtype.kind == "f" or r.dtype.name == "bfloat16"
    if is_float:
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        both_nan = np.isnan(g64) & np.isnan(r64)
        with np.errstate(all="ignore"):
            abs_err = np.where(both_nan, 0.0, np.abs(g64 - r64))
            rel_err = np.where(both_nan, 0.0, abs_err / np.maximum(np.abs(r64), np.finfo(np.float64).tiny))
        bad = ~(np.isclose(g64, r64, atol=atol, rtol=rtol) | both_nan)
        ulp = np.where(both_nan, 0.0, ulp_distance(g, r, r.dtype))
    else:
        g64, r64 = g.astype(np.int64), r.astype(np.int64)
        abs_err = np.abs(g64 - r64).astype(np.float64)
        rel_err = abs_err / np.maximum(np.abs(r64), 1)
        bad = g64 != r64
        ulp = abs_err
    first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape)) if bad.any() else None

    def mx(a):
        a = np.nan_to_num(a, nan=np.inf)
        return float(a.max()) if a.size else 0.0

    return OutputDiff(target, name, mx(abs_err), mx(rel_err), mx(ulp), int(bad.sum()), int(bad.size), first,
                      not bad.any(), bad)


def written_arguments(kernel, args, meta) -> list[int]:
    """Indices (into `args`) of the arrays the kernel stores to.

    Compiling the reference's specialization records them (the xb-written-args analysis, in the
    kernel's metadata); when a store's pointer cannot be traced, every array argument counts.
    """
    ck = kernel.warmup(*args, target=REFERENCE, **meta)
    params = kernel.source.params
    runtime_positions = [params.index(n) for n in ck.metadata["arg_names"]]
    written = ck.metadata.get("written_args")
    if written is None:
        return [i for i in runtime_positions if i < len(args) and isinstance(args[i], np.ndarray)]
    return [runtime_positions[k] for k in written]


def host_copy(a):
    """A numpy copy of an array-like argument (numpy, torch on any device, DLPack), else `a` itself.

    diff runs every target on copies of the caller's arrays: a torch tensor that every target wrote
    in place would make the reference and the targets compare one memory with itself.
    """
    if isinstance(a, np.ndarray):
        return a.copy()
    if hasattr(a, "detach") and hasattr(a, "data_ptr"):  # torch: bf16 and fp8 travel as their bits
        t = a.detach().cpu().contiguous()
        name = str(t.dtype)[len("torch."):]
        if name == "bfloat16" or name.startswith("float8"):
            import ml_dtypes
            import torch

            bits = torch.int16 if name == "bfloat16" else torch.uint8
            return t.view(bits).numpy().copy().view(getattr(ml_dtypes, name))
        return t.numpy().copy()
    if hasattr(a, "__dlpack__") and not isinstance(a, (int, float, bool)):
        return np.from_dlpack(a).copy()
    return a


def _run_target(kernel, grid, args, meta, target, out_idx):
    backend = get_backend(target)
    reason = backend.availability()
    if reason:
        raise TargetUnavailable(reason)
    dev_args = [backend.to_device(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    ck = kernel.run(*dev_args, grid=grid, target=target, **meta)
    return {i: np.asarray(backend.to_host(dev_args[i])) for i in out_idx}, ck


_EXPLAINED = {"ieee": "whole f32 operands", "tf32": "operands rounded to tf32 (10 mantissa bits, as tensor cores "
              "read f32)", "tf32x3": "three tf32 products", "bf16x3": "three bf16 products",
              "bf16x6": "six bf16 products"}


def precision_notes(target: str, reference: str, metadata: dict) -> list[str]:
    """Why `target` may differ from `reference` by design: each f32 `tl.dot` whose input precision
    one of them computes otherwise than asked (Backend.dot_precision)."""
    try:
        mine, theirs = get_backend(target).dot_precision, get_backend(reference).dot_precision
    except XBlockError:
        return []
    notes = []
    for d in metadata.get("float_dots") or ():
        asked = d["precision"]
        got = mine(asked) if mine else asked
        ref = theirs(asked) if theirs else asked
        if got != ref:
            notes.append(f"{d['file']}:{d['line']}: tl.dot of f32 operands, input_precision '{asked}': {target} "
                         f"computes it as '{got}' ({_EXPLAINED.get(got, got)}), {reference} as '{ref}' "
                         f"({_EXPLAINED.get(ref, ref)}); the products differ by design, about 1e-3 relative "
                         "for tf32 against ieee")
    return notes


def diff(kernel, grid, *args, targets=None, reference: str = REFERENCE, outputs=None,
         atol: float | None = None, rtol: float | None = None, localize: bool = False,
         **meta) -> DiffReport:
    """Run `kernel[grid](*args, **meta)` on each target and compare its outputs to `reference`.

    Args:
        kernel: an @xblock.jit kernel (or a function / triton kernel, wrapped on the fly).
        grid: the launch grid.
        *args: kernel arguments; arrays (numpy, torch on any device, DLPack) are copied for every target
            and never written.
        targets: target names (default: every registered target).
        reference: the target (default "sim") or a dict {arg index: expected array}.
        outputs: indices of the output arguments (default: inferred from the kernel's stores).
        atol, rtol: tolerances (default: per output dtype).
        localize: also find the first op whose values diverge (see `localize`).
        **meta: constexpr arguments.
    Returns:
        A DiffReport.
    """
    kernel = jit(kernel)
    args = tuple(host_copy(a) for a in args)  # the caller's arrays are never written
    wanted = list(targets or all_targets())
    out_idx = list(outputs) if outputs is not None else written_arguments(kernel, args, meta)
    arg_names = kernel.source.params
    if isinstance(reference, dict):
        ref, ref_name = {int(k): np.asarray(v) for k, v in reference.items()}, "the given reference"
        ref_seconds = 0.0
    else:
        t0 = time.perf_counter()
        ref, _ = _run_target(kernel, grid, args, meta, reference, out_idx)
        ref_name, ref_seconds = reference, time.perf_counter() - t0
    report = DiffReport(kernel.__name__, ref_name, reference_outputs=ref, reference_seconds=ref_seconds)
    for target in wanted:
        t0 = time.perf_counter()
        try:
            got, ck = _run_target(kernel, grid, args, meta, target, out_idx)
        except TargetUnavailable as e:
            report.statuses.append(TargetStatus(target, "skipped", str(e)))
            continue
        except XBlockError as e:
            report.statuses.append(TargetStatus(target, "error", str(e).splitlines()[0]))
            continue
        except Exception as e:  # a backend bug is reported, and the other targets still run
            report.statuses.append(TargetStatus(target, "error", f"{type(e).__name__}: {e}"))
            continue
        report.statuses.append(TargetStatus(target, "ran", seconds=time.perf_counter() - t0))
        failed = False
        for i in out_idx:
            d_atol, d_rtol = default_tolerance(ref[i].dtype)
            report.rows.append(compare(target, arg_names[i], got[i], ref[i],
                                       d_atol if atol is None else atol, d_rtol if rtol is None else rtol))
            failed |= not report.rows[-1].ok
        if failed and not isinstance(reference, dict):
            report.notes += precision_notes(target, reference, ck.metadata)
    if localize and not report.ok and not isinstance(reference, dict):
        bad = [s.target for s in report.statuses if s.status == "ran"
               and any(not r.ok for r in report.rows if r.target == s.target)]
        if bad:
            try:
                report.localized = localize_divergence(kernel, grid, args, meta, bad[0], reference, atol, rtol)
            except XBlockError as e:  # the instrumented kernel did not compile or run there
                report.localized = {"target": bad[0], "op": None, "file": None, "line": None, "max_abs": 0.0,
                                    "where": f"cannot localize on {bad[0]}: the instrumented kernel failed: "
                                             + str(e).splitlines()[0]}
    return report


# ------------------------------------------------------------------------------ localization
def _recorded(kernel, grid, args, meta, target, per):
    """(records, values) of a run instrumented by xb-record-values: one row of values per program."""
    from .passes import record_values  # MLIR: only when localizing, which compiles anew

    bound = kernel.bind(args, meta)
    _, spec, runtime = kernel.specialize(bound)
    transform = (f"{record_values.NAME}:{per}", lambda m, md: record_values.run(m, md, per))
    ck = compile_specialization(kernel.source, spec, target, {}, transform=transform)
    grid3 = _normalize_grid(grid, bound)
    n_programs = grid3[0] * grid3[1] * grid3[2]
    size = max(ck.metadata["record_size"], 1) * n_programs
    backend = get_backend(target)
    rec = np.full(size, np.nan, dtype=np.float32)
    dev = [backend.to_device(a.copy()) if isinstance(a, np.ndarray) else a for a in runtime]
    dev_rec = backend.to_device(rec)
    ck.launcher(grid3, dev + [dev_rec])
    out = np.asarray(backend.to_host(dev_rec)).reshape(n_programs, -1)
    return ck.metadata["records"], out


def localize_divergence(kernel, grid, args, meta, target, reference=REFERENCE, atol=None, rtol=None,
                        per="line") -> dict:
    """The first op, in program order, whose values on `target` diverge from `reference`.

    Both run the kernel instrumented by the xb-record-values pass (an xb -> xb transformation, so
    every backend records the same values); the records are compared in program order.
    """
    args = tuple(host_copy(a) for a in args)
    records, got = _recorded(kernel, grid, args, meta, target, per)
    _, want = _recorded(kernel, grid, args, meta, reference, per)
    if records and np.isnan(got).all() and not np.isnan(want).all():
        return {"target": target, "op": None, "where": f"cannot localize on {target}: its run recorded no value "
                "(the instrumented kernel's records never reached the host)", "max_abs": 0.0, "file": None,
                "line": None}
    for r in records:
        n = int(np.prod(r["shape"])) if r["shape"] else 1
        sl = slice(r["offset"], r["offset"] + n)
        dt = {"f16": np.float16, "f64": np.float64}.get(r["dtype"], np.float32)
        d_atol, d_rtol = default_tolerance(dt)
        if r["dtype"] == "bf16":
            d_atol, d_rtol = 4e-2, 4e-2
        res = compare(target, r["op"], got[:, sl], want[:, sl], d_atol if atol is None else atol,
                      d_rtol if rtol is None else rtol)
        if not res.ok:
            return {"target": target, "op": r["op"], "file": r["file"], "line": r["line"],
                    "where": f"{r['file']}:{r['line']}", "max_abs": res.max_abs, "mismatches": res.mismatches,
                    "program": res.first_bad[0] if res.first_bad else None}
    return {"target": target, "op": None, "where": "no recorded value diverges (the difference is in the "
            "final stores)", "max_abs": 0.0, "file": None, "line": None}


__all__ = ["diff", "DiffReport", "OutputDiff"]
