"""Regenerate the per-target status table of `triton.language` names in docs/LANGUAGE.md.

Every public name of the installed `triton.language` (and `triton.language.math`) gets a row. For
a name with a probe below, a small unmodified @triton.jit kernel using it is built, and each target
either runs it (sim, cpu, ascend on its CPU model) or compiles it to cubin (cuda); the cell says
"yes" or the first line of the error the user would see. Names without a probe are listed with
what they are. Run `make docs` (or `python tools/language_status.py`) after changing the language
or a backend; `tests/unit/test_language_status.py` fails when the table's names drift from
Triton's.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile
import textwrap
import types
import typing
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "LANGUAGE.md"
BEGIN, END = "<!-- language-status:begin -->", "<!-- language-status:end -->"
TARGETS = ("sim", "cpu", "cuda", "ascend")

# `x`: fp32 block of 16 in (0.5, 1.5); `i`: int32 block 1..16; `a`: fp32 16x16 block; results go
# to `y` (fp32 [16]) and `j` (int32 [16]). `n` is a runtime int32 (16), `p` the fp32 input pointer.
PROBES = {
    "abs": "y = tl.abs(x - 1)",
    "add": "y = tl.add(x, x)",
    "advance": "bp = tl.make_block_ptr(p, (16,), (1,), (0,), (8,), (0,))\n"
               "y = tl.load(tl.advance(bp, (8,)), boundary_check=(0,)).sum(0) + x",
    "arange": "j = tl.arange(0, 16) + i",
    "argmax": "j = i + tl.argmax(x, 0)",
    "argmin": "j = i + tl.argmin(x, 0)",
    "associative_scan": "y = tl.associative_scan(x, 0, _combine_add)",
    "assume": "tl.assume(n > 0)",
    "atomic_add": "tl.atomic_add(iout_ptr + offs, i)",
    "atomic_and": "tl.atomic_and(iout_ptr + offs, i)",
    "atomic_cas": "tl.atomic_cas(iout_ptr + offs, i, i)",
    "atomic_max": "tl.atomic_max(iout_ptr + offs, i)",
    "atomic_min": "tl.atomic_min(iout_ptr + offs, i)",
    "atomic_or": "tl.atomic_or(iout_ptr + offs, i)",
    "atomic_xchg": "tl.atomic_xchg(iout_ptr + offs, i)",
    "atomic_xor": "tl.atomic_xor(iout_ptr + offs, i)",
    "bitonic_merge": "y = tl.reshape(tl.standard.bitonic_merge(tl.reshape(x, (2, 8)), 1, 2), (16,))",
    "broadcast": "y, _ = tl.broadcast(x, x)",
    "broadcast_to": "y = tl.sum(tl.broadcast_to(x[None, :], (2, 16)), 0)",
    "cast": "y = tl.cast(i, tl.float32)",
    "cat": "y = tl.cat(x, x, can_reorder=True).reshape(2, 16).sum(0)",
    "cdiv": "j = tl.cdiv(i, 3)",
    "ceil": "y = tl.ceil(x)",
    "clamp": "y = tl.clamp(x, 0.8, 1.2)",
    "cos": "y = tl.cos(x)",
    "cumprod": "y = tl.cumprod(x, 0)",
    "cumsum": "y = tl.cumsum(x, 0)",
    "debug_barrier": "tl.debug_barrier()",
    "device_assert": "tl.device_assert(x > 0, 'positive')",
    "device_print": "tl.device_print('v', n)",
    "div_rn": "y = tl.div_rn(x, x + 1)",
    "dot": "y = tl.sum(tl.dot(a, a), 1)",
    "dot_scaled": "y = tl.sum(tl.dot_scaled(a, None, 'bf16', a, None, 'bf16'), 1)",
    "erf": "y = tl.erf(x)",
    "exp": "y = tl.exp(x)",
    "exp2": "y = tl.exp2(x)",
    "expand_dims": "y = tl.sum(tl.expand_dims(x, 0), 0)",
    "fdiv": "y = tl.fdiv(x, x + 1)",
    "flip": "y = tl.flip(x, 0)",
    "floor": "y = tl.floor(x)",
    "fma": "y = tl.fma(x, x, x)",
    "full": "y = tl.full((16,), 2.0, tl.float32) + x",
    "gather": "y = tl.gather(x, i - 1, 0)",
    "histogram": "j = tl.histogram(i - 1, 16)",
    "inline_asm_elementwise": "j = tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [i], dtype=tl.int32, "
                              "is_pure=True, pack=1)",
    "interleave": "y = tl.reshape(tl.interleave(x, x), (2, 16)).sum(0)",
    "join": "y = tl.sum(tl.join(x, x), 1)",
    "load": "y = tl.load(p + offs, mask=offs < n, other=0.0)",
    "load_tensor_descriptor": "d = tl.make_tensor_descriptor(p, [16], [1], [16])\n"
                              "y = tl.load_tensor_descriptor(d, [0])",
    "log": "y = tl.log(x)",
    "log2": "y = tl.log2(x)",
    "make_block_ptr": "bp = tl.make_block_ptr(p, (16,), (1,), (0,), (16,), (0,))\ny = tl.load(bp)",
    "make_tensor_descriptor": "d = tl.make_tensor_descriptor(p, [16], [1], [16])\ny = d.load([0])",
    "map_elementwise": "y = tl.map_elementwise(_scalar_twice, x)",
    "max": "y = x + tl.max(x, 0)",
    "max_constancy": "j = tl.max_constancy(i, 16)",
    "max_contiguous": "j = tl.max_contiguous(i, 16)",
    "maximum": "y = tl.maximum(x, 1.0)",
    "min": "y = x + tl.min(x, 0)",
    "minimum": "y = tl.minimum(x, 1.0)",
    "mul": "y = tl.mul(x, x)",
    "multiple_of": "j = tl.multiple_of(i, 1)",
    "num_programs": "j = i + tl.num_programs(0)",
    "pair_uniform_to_normal": "y, _ = tl.pair_uniform_to_normal(x - 0.5, x - 0.5)",
    "permute": "y = tl.sum(tl.permute(a, (1, 0)), 1)",
    "philox": "r0, r1, r2, r3 = tl.philox(n, i, i, i, i)\nj = r0.to(tl.int32, bitcast=True)",
    "philox_impl": "r0, _, _, _ = tl.philox_impl(i.to(tl.uint32), i.to(tl.uint32), i.to(tl.uint32), "
                   "i.to(tl.uint32), i.to(tl.uint32), i.to(tl.uint32))\nj = r0.to(tl.int32, bitcast=True)",
    "program_id": "j = i + tl.program_id(0)",
    "rand": "y = tl.rand(n, offs)",
    "rand4x": "y, _, _, _ = tl.rand4x(n, offs)",
    "randint": "j = tl.randint(n, offs).to(tl.int32, bitcast=True)",
    "randint4x": "r, _, _, _ = tl.randint4x(n, offs)\nj = r.to(tl.int32, bitcast=True)",
    "randn": "y = tl.randn(n, offs)",
    "randn4x": "y, _, _, _ = tl.randn4x(n, offs)",
    "range": "for k in tl.range(0, n):\n    y += 1.0",
    "ravel": "y = tl.sum(tl.reshape(tl.ravel(a), (16, 16)), 1)",
    "reduce": "y = x + tl.reduce(x, 0, _combine_add)",
    "reduce_or": "j = i + tl.reduce_or(i, 0)",
    "reshape": "y = tl.sum(tl.reshape(x, (4, 4)), 1).reshape(4, 1).broadcast_to(4, 4).reshape(16)",
    "rsqrt": "y = tl.rsqrt(x)",
    "sigmoid": "y = tl.sigmoid(x)",
    "sin": "y = tl.sin(x)",
    "softmax": "y = tl.softmax(x)",
    "sort": "y = tl.sort(x, 0)",
    "split": "y, _ = tl.split(tl.reshape(tl.join(x, x), (16, 2)))",
    "sqrt": "y = tl.sqrt(x)",
    "sqrt_rn": "y = tl.sqrt_rn(x)",
    "static_assert": "tl.static_assert(True)",
    "static_print": "tl.static_print('probe')",
    "static_range": "for k in tl.static_range(2):\n    y += 1.0",
    "store": "tl.store(out_ptr + offs, x, mask=offs < n)",
    "store_tensor_descriptor": "d = tl.make_tensor_descriptor(out_ptr, [16], [1], [16])\n"
                               "tl.store_tensor_descriptor(d, [0], x)",
    "sub": "y = tl.sub(x, x)",
    "sum": "y = x + tl.sum(x, 0)",
    "swizzle2d": "pm, pn = tl.swizzle2d(n, n, 4, 4, 2)\nj = i + pm + pn",
    "topk": "y = tl.reshape(tl.topk(tl.reshape(x, (2, 8)), 4, 1), (8,)).reshape(8, 1).broadcast_to(8, 2)"
            ".reshape(16)",
    "trans": "y = tl.sum(tl.trans(a), 1)",
    "umulhi": "j = tl.umulhi(i, i)",
    "uint_to_uniform_float": "y = tl.uint_to_uniform_float(i)",
    "view": "y = tl.sum(tl.view(x, (4, 4)), 1).reshape(4, 1).broadcast_to(4, 4).reshape(16)",
    "where": "y = tl.where(x > 1, x, 0.0)",
    "xor_sum": "j = i + tl.xor_sum(i, 0)",
    "zeros": "y = tl.zeros((16,), tl.float32) + x",
    "zeros_like": "y = tl.zeros_like(x) + x",
}
for _dt in ("bfloat16", "float16", "float32", "float64", "float8e4b15", "float8e4b8", "float8e4nv", "float8e5",
            "float8e5b16", "int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    PROBES[_dt] = f"y = x.to(tl.{_dt}).to(tl.float32)"
for _name in ("PropagateNan",):
    PROBES[_name] = "y = tl.maximum(x, x, propagate_nan=tl.PropagateNan.ALL)"
MATH_PROBES = {"abs": "y = tl.math.abs(x)", "ceil": "y = tl.math.ceil(x)", "cos": "y = tl.math.cos(x)",
               "div_rn": "y = tl.math.div_rn(x, x)", "erf": "y = tl.math.erf(x)", "exp": "y = tl.math.exp(x)",
               "exp2": "y = tl.math.exp2(x)", "fdiv": "y = tl.math.fdiv(x, x)", "floor": "y = tl.math.floor(x)",
               "fma": "y = tl.math.fma(x, x, x)", "log": "y = tl.math.log(x)", "log2": "y = tl.math.log2(x)",
               "rsqrt": "y = tl.math.rsqrt(x)", "sin": "y = tl.math.sin(x)", "sqrt": "y = tl.math.sqrt(x)",
               "sqrt_rn": "y = tl.math.sqrt_rn(x)", "umulhi": "j = tl.math.umulhi(i, i)",
               "cdiv": "j = tl.math.cdiv(i, 3)", "clamp": "y = tl.math.clamp(x, 0.8, 1.2)",
               "maximum": "y = tl.math.maximum(x, 1.0)", "minimum": "y = tl.math.minimum(x, 1.0)",
               "sigmoid": "y = tl.sigmoid(x)", "softmax": "y = tl.softmax(x)"}
WHAT = {  # names that are types, constants or namespaces: described, not probed
    "TRITON_MAX_TENSOR_NUMEL": "a constant", "block_type": "a type", "const": "a type annotation",
    "constexpr": "parameter annotation and wrapper (supported)", "constexpr_type": "a type",
    "dtype": "the dtype class (dtypes are values: see above)", "pi32_t": "a type", "pointer_type": "a type "
    "(supported in casts and `tl.pointer_type(...)`)", "str_to_ty": "a host-side helper",
    "tensor": "the block class", "tensor_descriptor": "a type", "tensor_descriptor_type": "a type",
    "tuple": "a type", "tuple_type": "a type", "void": "a type", "condition": "a loop hint class",
    "slice": "a type",
}

TEMPLATE = '''
import triton
import triton.language as tl


@triton.jit
def _combine_add(a, b):
    return a + b


@triton.jit
def _scalar_twice(v):
    return v * 2


@triton.jit
def probe(p, i_ptr, out_ptr, iout_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(p + offs)
    i = tl.load(i_ptr + offs)
    a = tl.load(p + offs[:, None] * 0 + offs[None, :])
    y = x
    j = i
{body}
    tl.store(out_ptr + offs, y)
    tl.store(iout_ptr + offs, j)
'''


def public_names(module) -> list[str]:
    """Triton's own public names of `module` (not the typing/functools names it imports)."""
    def own(v) -> bool:
        mod = getattr(v, "__module__", None)
        if isinstance(v, (types.ModuleType, typing.TypeVar)):
            return False
        return (mod is None or mod.startswith("triton")
                                                         or not (callable(v) or isinstance(v, type)))

    return sorted(n for n in dir(module) if not n.startswith("_") and own(getattr(module, n)))


def _probe_module(body: str, folder: str, name: str):
    path = Path(folder) / f"probe_{re.sub(r'[^A-Za-z0-9_]', '_', name)}.py"
    path.write_text(TEMPLATE.format(body=textwrap.indent(body, "    ")))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.probe


def _cell(exc: BaseException) -> str:
    line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    line = re.sub(r"^\S*probe_\w+\.py:\d+(:\d+)?: ", "", line).replace(str(ROOT) + "/", "")
    line = line.replace("|", "\\|")
    return line if len(line) <= 110 else line[:107] + "..."


def run_probe(kernel, target: str) -> str:
    import xblock
    from xblock.backends.cuda.precompile import precompile

    x = np.linspace(0.5, 1.5, 16, dtype=np.float32)
    i = np.arange(1, 17, dtype=np.int32)
    args = (x, i, np.zeros(16, np.float32), np.zeros(16, np.int32), 16)
    try:
        if target == "cuda":
            precompile(kernel, args)
        else:
            xblock.jit(kernel)[(1,)](*args, target=target)
        return "yes"
    except Exception as e:  # every failure is a cell: the user-facing message
        return _cell(e)


def table() -> str:
    import triton.language as tl

    rows = ["| name | " + " | ".join(TARGETS) + " |", "|---|" + "---|" * len(TARGETS)]
    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, folder)
        for prefix, names, probes in (("tl.", public_names(tl), PROBES),
                                      ("tl.math.", public_names(tl.math), MATH_PROBES)):
            for name in names:
                if name in probes:
                    try:
                        kernel = _probe_module(probes[name], folder, prefix + name)
                        cells = [run_probe(kernel, t) for t in TARGETS]
                    except Exception as e:
                        cells = [_cell(e)] * len(TARGETS)
                else:
                    what = WHAT.get(name, "not probed")
                    cells = [what] * len(TARGETS)
                rows.append(f"| `{prefix}{name}` | " + " | ".join(cells) + " |")
                print(rows[-1], flush=True)
    return "\n".join(rows)


def main() -> int:
    os.environ.setdefault("XBLOCK_CACHE_DIR", str(ROOT / ".xblock_cache" / "docs"))
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    import triton

    intro = (f"\nGenerated by `tools/language_status.py` against Triton {triton.__version__}: each name's "
             "probe kernel either runs (sim, cpu, ascend on its CPU model) or compiles to cubin (cuda); "
             "a cell is `yes` or the error users get.\n\n")
    DOC.write_text(head + BEGIN + intro + table() + "\n" + END + tail)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
