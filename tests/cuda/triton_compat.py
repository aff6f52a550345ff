"""Check the emitted TTIR against another Triton version (e.g. the newest on PyPI) in its own venv.

    python -m tests.cuda.triton_compat emit DIR       # here (MLIR + xblock): TTIR of every example
    /tmp/t39/bin/python tests/cuda/triton_compat.py compile DIR   # any Triton, no MLIR needed

`emit` writes each kernel's TTIR in both spellings (Triton < 3.9 and >= 3.9; see emit.TTIRDialect)
plus a kernel with cache modifiers and a pipelined loop; `compile` runs the spelling its Triton
takes through Triton's stages to a cubin for sm_90 and sm_80 and prints a summary.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import xblock  # noqa: E402
import xblock.language as xl  # noqa: E402


@xblock.jit
def cached_copy(x_ptr, y_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    for _ in xl.range(0, 2, num_stages=2):
        x = xl.load(x_ptr + offs, mask=offs < n, cache_modifier=".cg", eviction_policy="evict_last")
        xl.store(y_ptr + offs, x, mask=offs < n, cache_modifier=".cs")


def emit(out: str) -> None:
    from mlir import ir

    from tests.cuda.support import EXAMPLES, example_case, fake_args
    from xblock.backends.cuda.emit import TTIRDialect
    from xblock.backends.cuda.lowering import emit_ttir
    from xblock.backends.cuda.precompile import TensorSpec
    from xblock.dialects import xb
    from xblock.runtime.compiler import compile_specialization

    os.makedirs(out, exist_ok=True)
    t = TensorSpec(4096, "float32")
    launches = [(n, example_case(n)) for n in EXAMPLES]
    meta = {}
    for name, case in launches + [("cached_copy", None)]:
        k, args, m = (cached_copy, (t, t, 4096), {"BLOCK": 1024}) if case is None else \
            (case.kernel, fake_args(case.args), case.meta)
        _, spec, _ = k.specialize(k.bind(args, dict(m)))
        ck = compile_specialization(k.source, spec, "sim", {})
        module = ir.Module.parse(ck.asm["xb"], xb.context())
        for flavour in (False, True):
            with open(os.path.join(out, f"{name}.{int(flavour)}.ttir"), "w") as f:
                f.write(emit_ttir(module, TTIRDialect(cache_policy=flavour)))
        meta[name] = {k: ck.metadata[k] for k in ("name", "file", "line")}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f)
    print(f"{len(meta)} kernels written to {out}")


def compile_all(src: str) -> int:
    import triton

    from xblock.backends.cuda.options import CudaOptions
    from xblock.backends.cuda.pipeline import TritonPipeline, ttir_dialect

    d = ttir_dialect()
    print(f"triton {triton.__version__}: {d}")
    meta = json.load(open(os.path.join(src, "meta.json")))
    ok = failed = 0
    for name, m in meta.items():
        text = open(os.path.join(src, f"{name}.{int(d.cache_policy)}.ttir")).read()
        for arch in (90, 80):
            p, md = TritonPipeline(CudaOptions(arch=arch)), dict(m)
            try:
                prev = p.ttir_from_text(text, md)
                for ext in ("ttgir", "llir", "ptx", "cubin"):
                    prev = getattr(p, f"make_{ext}")(prev, md)
                assert prev[:4] == b"\x7fELF"
                ok += 1
            except Exception as e:  # report every failure, then fail
                failed += 1
                print(f"FAIL {name} sm_{arch}: {str(e)[:600]}")
    print(f"{ok} of {ok + failed} kernel/arch pairs compiled to cubin")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "emit":
        emit(sys.argv[2])
    else:
        sys.exit(compile_all(sys.argv[2]))
