"""What an exported project reproduces besides the kernel: one launch of it (a case).

`xblock export` and the demo export a compiled kernel together with the launch it was compiled
for (a `Case`: grid, arguments, constexprs); a target's export writes that launch's data and
golden outputs. The cases of an example file are named `DTYPE-SIZE` after its `case(size, dtype)`,
`SIZES` and `DTYPES` (e.g. `float16-823x781`), as the numerics tests name them.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import os
import textwrap
from pathlib import Path

import numpy as np

from .errors import UnknownNameError


def dtype_name(dtype) -> str:
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def size_text(size) -> str:
    return "x".join(map(str, size)) if isinstance(size, (tuple, list)) else str(size)


def case_name(size, dtype) -> str:
    """The name of the case `case(size, dtype)`, e.g. `float32-98432` or `float16-823x781`."""
    return f"{dtype_name(dtype)}-{size_text(size)}"


def case_names(mod) -> dict:
    """name -> (size, dtype) of every case a kernel file declares (its SIZES x DTYPES)."""
    return {case_name(s, d): (s, d) for d in getattr(mod, "DTYPES", []) for s in getattr(mod, "SIZES", [])}


def case_by_name(mod, name: str) -> tuple:
    """(size, dtype) of the named case of a kernel file.

    Raises:
        UnknownNameError (a ValueError): naming the cases the file has.
    """
    names = case_names(mod)
    if name not in names:
        shown = ", ".join(names) or "none (the file has no SIZES and DTYPES)"
        raise UnknownNameError(f"no case '{name}' in {Path(mod.__file__).name}; its cases are: {shown}")
    return names[name]


def grid_formula(case_fn) -> str | None:
    """The grid expression of a `case()` function's `Case(...)`, as written (None when not found)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(case_fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    assigned = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
    for node in ast.walk(tree):
        callee = getattr(node, "func", None)
        if not isinstance(node, ast.Call) or getattr(callee, "id", getattr(callee, "attr", None)) != "Case":
            continue
        expr = next((k.value for k in node.keywords if k.arg == "grid"), node.args[1] if len(node.args) > 1 else None)
        if isinstance(expr, ast.Name) and expr.id in assigned:
            expr = assigned[expr.id]
        return ast.unparse(expr) if expr is not None else None
    return None


def _json_value(v):
    return v if isinstance(v, (bool, int, float, str)) or v is None else str(v)


def _spec_dict(spec) -> dict:
    return {"constexprs": {k: _json_value(v) for k, v in spec.constexprs.items()},
            "arg_types": dict(spec.arg_types),
            "divisible_by_16": sorted(n for n, d in spec.divisibility.items() if d == 16),
            "equal_to_1": sorted(spec.equal_to_1)}


def specialization(kernel, case, target: str, options=None) -> dict | None:
    """What the kernel compiled for `case` is specialized on: constexprs, argument types, and the integer
    facts (divisible by 16, equal to 1) the compiler may have used. None for kernels that cannot say."""
    plan = getattr(kernel, "plan", None)
    if plan is None:
        return None
    _, spec, _ = plan(tuple(case.args), target, {**case.meta, **(options or {})})
    return _spec_dict(spec)


def signature_specialization(kernel, signature, constexprs) -> dict:
    """The specialization `xblock.compile(kernel, signature=..., constexprs=...)` compiles: no integer facts."""
    from .frontend.source import source_of
    from .runtime.compiler import parse_signature

    return _spec_dict(parse_signature(source_of(kernel), signature, constexprs))


def source_label(path) -> str:
    """A kernel file as an export may name it: relative to the working folder, else its name only."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.relative_to(Path(os.getcwd())).as_posix()
    except ValueError:
        return p.name


def export_with_case(ck, directory, case=None, **info) -> None:
    """`ck.export(directory)`, with the launch `case` the project's data and golden outputs come from.

    Args:
        ck: a compiled kernel of a target that exports.
        directory: the project folder.
        case: the Case `ck` was compiled for (its kernel is run on the reference target for the golden);
            None exports the kernel alone (with `spec`, the README states the specialization).
        **info: `name` (the case's name), `source` (the kernel file), `grid_formula`, `spec`
            (from `specialization`), shown in the project's README and kernel.json.
    """
    if case is not None or info:
        ck = dataclasses.replace(ck, metadata={**ck.metadata, "export_case": {"case": case, **info}})
    ck.export(directory)


def export(kernel, grid, *args, directory, target: str | None = None, **meta):
    """Export the launch `kernel[grid](*args, **meta)` as a buildable project in `directory`, with its own
    data: the arrays passed are the project's inputs (copied to `data/`, which `scripts/gen_data.py`
    writes to `input/`), and the golden outputs are the reference simulator's on them. The arrays are
    not written. A call after a launch reproduces it:

        add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, target="ascend")
        xblock.export(add_kernel, grid, x, y, out, n, BLOCK_SIZE=1024, directory="add_ascendc")

    Args:
        kernel: an `@xblock.jit` or `@triton.jit` kernel (or a plain function).
        grid: the launch grid (a tuple, or a callable of the meta-parameters).
        *args: the launch's arguments (numpy arrays, torch CPU tensors, scalars).
        directory: the project folder (created).
        target: the target to export for (default: the first that exports, ascend).
        **meta: constexprs and target options.
    """
    from .backends import exporting_targets
    from .numdiff import host_copy, written_arguments
    from .runtime.jit import jit
    from .testing import Case

    kernel = jit(kernel)
    target = target or exporting_targets()[0]
    args = tuple(host_copy(a) for a in args)  # the caller's arrays are never written
    params = kernel.source.params
    outputs = {params[i]: i for i in written_arguments(kernel, args, meta)}
    case = Case(kernel, grid, args, dict(meta), outputs=outputs)
    ck = kernel.warmup(*args, target=target, **meta)
    export_with_case(ck, directory, case, name="the launch's own arrays", source=source_label(kernel.source.file),
                     spec=specialization(kernel, case, target), given=True)
