"""PTX and cubin for every example on sm_90 and sm_80, without a GPU; global access widths as Triton's.

Each example is compiled once per arch, specialized as a launch on torch CUDA tensors. For the
kernels that exist in both languages, xblock's PTX must use the same global load/store (and
cp.async) vector widths as Triton's own compile of the Triton version: the proof that argument
specialization and the TTIR reach Triton's vectorizer intact.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from .support import EXAMPLES, compile_case, example_case

pytest.importorskip("triton")
pytest.importorskip("mlir")  # compiling needs the MLIR bindings

ARCHS = (90, 80)
STAGES = ["xb", "ttir", "ttgir", "llir", "ptx", "cubin"]


@pytest.fixture(scope="module")
def compiled():
    """example -> arch -> CompiledKernel, each compiled once for the whole module."""
    return {name: {arch: compile_case(example_case(name), {"arch": arch}) for arch in ARCHS} for name in EXAMPLES}


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_stage_for_sm90_and_sm80(compiled, name):
    for arch in ARCHS:
        ck = compiled[name][arch]
        assert list(ck.asm) == STAGES
        target = "sm_90a" if arch == 90 else "sm_80"
        assert f".target {target}" in ck.asm["ptx"]
        assert f".visible .entry {ck.metadata['triton']['name']}(" in ck.asm["ptx"]
        assert ck.asm["cubin"][:4] == b"\x7fELF"
        assert ck.metadata["triton"]["target"]["arch"] == arch
        assert "tt.func public @" in ck.asm["ttir"] and "ttg.num-warps" in ck.asm["ttgir"]


_ACCESS = re.compile(r"\b(ld\.global|st\.global|cp\.async\.c[ag]\.shared\.global)((?:\.[\w:]+)*)(?:\s|$)")


def global_access_widths(ptx: str) -> Counter:
    """(instruction, bytes per thread) of every global load, store and cp.async in the PTX."""
    out = Counter()
    for m in re.finditer(r"^\s*(?:@%p\d+\s+)?((?:ld|st)\.global[\w.:]*|cp\.async\.c[ag]\.shared\.global[\w.:]*)"
                         r"\s.*?(?:,\s*(\d+)\s*(?:,|;))?", ptx, flags=re.M):
        instr = m.group(1)
        kind = instr.split(".")[0] + ("" if not instr.startswith("cp") else ".async")
        if instr.startswith("cp.async"):
            line = ptx[m.start():ptx.index("\n", m.start())]
            size = int(re.search(r"\],\s*(0x[0-9a-fA-F]+|\d+)\s*(?:,|;)", line).group(1), 0)
        else:
            vec = re.search(r"\.v(\d)", instr)
            bits = int(re.search(r"\.[bsuf](\d+)$", instr).group(1))
            size = (int(vec.group(1)) if vec else 1) * bits // 8
        out[(kind, size)] += 1
    return out


def test_access_width_parser():
    ptx = """
	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
	ld.global.b16 %rs1, [ %rd2 + 0 ];
	@%p2 st.global.v2.b32 [ %rd3 + 0 ], { %r5, %r6 };
	@%p3 cp.async.cg.shared.global [ %r7 + 0 ], [ %rd4 + 0 ], 0x10, %r8;
	cp.async.ca.shared.global [ %r9 + 0 ], [ %rd5 + 0 ], 4, %r10;
"""
    assert global_access_widths(ptx) == Counter(
        {("ld", 16): 1, ("ld", 2): 1, ("st", 8): 1, ("cp.async", 16): 1, ("cp.async", 4): 1})


# (xblock example, Triton twin in examples/triton): the same algorithm in both languages
TWINS = [("add", "triton.add"), ("layernorm", "triton.layernorm"), ("triton.add", "triton.add"),
         ("triton.softmax", "triton.softmax"), ("triton.matmul", "triton.matmul"),
         ("triton.layernorm", "triton.layernorm")]


def _triton_native_ptx(name: str, arch: int, tmp_path) -> str:
    """Triton's own compile of examples/<name>'s @triton.jit kernel, specialized like xblock's."""
    import os

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from xblock.frontend.source import unwrap_function

    from .support import fake_args

    case = example_case(name)
    k = case.kernel
    _, spec, _ = k.specialize(k.bind(fake_args(case.args), dict(case.meta)))
    fn = unwrap_function(k.fn) if not hasattr(k.fn, "arg_names") else k.fn
    tfn = getattr(__import__("examples." + name, fromlist=["x"]), fn.__name__)
    params = tfn.arg_names
    signature = {p: spec.arg_types.get(p, "constexpr") for p in params}
    constexprs = {p: case.meta[p] for p in params if p in case.meta}
    attrs = {(params.index(p),): [["tt.divisibility", 16]] for p in spec.divisibility}
    os.environ["TRITON_CACHE_DIR"] = str(tmp_path)
    ck = triton.compile(ASTSource(tfn, signature, constexprs, attrs), target=GPUTarget("cuda", arch, 32))
    return ck.asm["ptx"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("ours,twin", TWINS, ids=[f"{a}-vs-{b}" for a, b in TWINS])
def test_same_vector_widths_as_triton(compiled, tmp_path, ours, twin, arch):
    got = global_access_widths(compiled[ours][arch].asm["ptx"])
    want = global_access_widths(_triton_native_ptx(twin, arch, tmp_path))
    assert got, "no global accesses found in xblock's PTX"
    assert set(got) == set(want), f"xblock {dict(got)} vs Triton {dict(want)}"
