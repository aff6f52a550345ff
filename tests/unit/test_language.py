"""The `xblock.language` surface: dtypes, constexpr, builtins, signature strings, and parity of names and
argument names with `triton.language`."""

import inspect

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.frontend.types import parse_signature_type, python_scalar_dtype, signature_string

# The surface the architecture lists (section 2), as names of triton.language
SURFACE = ["program_id", "num_programs", "arange", "zeros", "zeros_like", "full", "load", "store", "where",
           "reshape", "view", "trans", "permute", "expand_dims", "broadcast_to", "broadcast", "cast", "exp",
           "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "abs", "erf", "sigmoid", "maximum",
           "minimum", "fma", "cdiv", "clamp", "floor", "ceil", "sum", "max", "min", "argmax", "argmin", "reduce",
           "xor_sum", "cumsum", "cumprod", "associative_scan", "dot", "atomic_add", "atomic_max", "atomic_min",
           "atomic_xchg", "atomic_cas", "atomic_and", "atomic_or", "atomic_xor", "static_assert", "static_print",
           "device_print", "device_assert", "multiple_of", "max_contiguous", "max_constancy", "umulhi", "fdiv",
           "div_rn", "debug_barrier"]
DTYPES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "bfloat16", "float32", "float64"]


def _params(fn) -> list:
    fn = inspect.unwrap(getattr(fn, "fn", fn))
    return [p for p in inspect.signature(fn).parameters if p not in ("_semantic", "_generator", "_builder")]


def test_surface_exists():
    missing = [n for n in SURFACE + DTYPES + ["constexpr", "range", "static_range", "PropagateNan", "pointer_type",
                                             "dtype", "tensor"] if not hasattr(xl, n)]
    assert not missing


def test_names_and_argument_names_match_triton():
    tl = pytest.importorskip("triton.language")
    diffs = {n: (_params(getattr(tl, n)), _params(getattr(xl, n))) for n in SURFACE if hasattr(tl, n)}
    diffs = {n: d for n, d in diffs.items() if d[0] != d[1]}
    assert not diffs
    for n in ("range", "static_range"):
        assert _params(getattr(tl, n).__init__) == _params(getattr(xl, n).__init__), n
    assert [d for d in DTYPES if not hasattr(tl, d)] == []


def test_math_namespace():
    for n in ("exp", "log", "sqrt", "rsqrt", "fma", "cdiv", "abs", "floor", "ceil", "maximum", "minimum", "erf"):
        assert getattr(xl.math, n) is getattr(xl, n)


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_properties(name):
    d = getattr(xl, name)
    is_float = name.startswith(("float", "bfloat"))
    assert d.is_floating() == is_float
    assert d.is_int() == (not is_float)
    assert d.is_int_signed() == (name.startswith("int") and name != "int1")
    assert d.is_int_unsigned() == (name.startswith("uint") or name == "int1")
    assert d.is_bool() == (name == "int1")
    bits = 1 if name == "int1" else int("".join(c for c in name if c.isdigit()))
    assert d.primitive_bitwidth == bits
    assert d == getattr(xl, name) and hash(d) == hash(getattr(xl, name))
    assert d == xl.constexpr(d)
    assert not d.is_ptr()
    assert d.kind() == (0 if name == "int1" else 2 if is_float else 1)  # bool < integer < float


def test_dtype_names_print_as_triton():
    assert [str(getattr(xl, n)) for n in ("float16", "bfloat16", "float32", "int8", "uint32", "int1")] == \
        ["float16", "bfloat16", "float32", "int8", "uint32", "int1"]
    assert xl.int8 != xl.uint8 and xl.float16 != xl.bfloat16


def test_pointer_type():
    p = xl.pointer_type(xl.float16)
    assert p.is_ptr() and p.element_ty == xl.float16
    assert p == xl.pointer_type(xl.float16) and p != xl.pointer_type(xl.float32)
    assert not p.is_floating() and not p.is_int()


def test_constexpr():
    c = xl.constexpr(16)
    assert c == 16 and c.value == 16 and bool(c) and hash(c) == hash(16)
    assert xl.constexpr(c).value == 16  # no double wrapping
    assert list(range(c)) == list(range(16))  # __index__
    assert not xl.constexpr(0)


@pytest.mark.parametrize("fn,args", [(xl.program_id, (0,)), (xl.arange, (0, 16)), (xl.load, (None,)),
                                     (xl.sum, (None,)), (xl.atomic_add, (None, 1))])
def test_builtins_only_run_inside_kernels(fn, args):
    with pytest.raises(RuntimeError, match="inside a kernel"):
        fn(*args)


def test_tensor_has_no_truth_value():
    t = xl.tensor(None, xl.int32, (4,))
    assert t.shape == (4,) and t.numel == 4 and t.is_block() and t.dtype == xl.int32
    with pytest.raises(TypeError):
        bool(t)


@pytest.mark.parametrize("text,want", [
    ("*fp32", xl.pointer_type(xl.float32)), ("*fp16", xl.pointer_type(xl.float16)),
    ("*bf16", xl.pointer_type(xl.bfloat16)), ("*i8", xl.pointer_type(xl.int8)), ("*u8", xl.pointer_type(xl.uint8)),
    ("*i1", xl.pointer_type(xl.int1)), ("*kfp32", xl.pointer_type(xl.float32)), ("i32", xl.int32),
    ("i64", xl.int64), ("u32", xl.uint32), ("fp32", xl.float32), ("fp64", xl.float64), ("i1", xl.int1),
])
def test_signature_strings(text, want):
    assert parse_signature_type(text) == want
    if not text.startswith("*k"):
        assert signature_string(want) == text


@pytest.mark.parametrize("bad", ["*fp33", "float", "int", "", "*", 32, None])
def test_bad_signature_strings(bad):
    with pytest.raises(TypeError):
        parse_signature_type(bad)


@pytest.mark.parametrize("value,want", [(True, xl.int1), (0, xl.int32), (-(2**31), xl.int32), (2**31 - 1, xl.int32),
                                        (2**31, xl.uint32), (2**32 - 1, xl.uint32), (2**32, xl.int64),
                                        (-(2**31) - 1, xl.int64), (2**63, xl.uint64), (1.5, xl.float32)])
def test_python_scalar_dtypes_follow_triton(value, want):
    assert python_scalar_dtype(value) == want


def test_python_scalar_too_large():
    with pytest.raises(ValueError):
        python_scalar_dtype(2**64)


def test_host_helpers():
    assert xblock.cdiv(10, 4) == 3 and xblock.cdiv(8, 4) == 2 and xblock.cdiv(0, 4) == 0
    assert [xblock.next_power_of_2(n) for n in (0, 1, 2, 3, 17, 1024)] == [1, 1, 2, 4, 32, 1024]


def test_jit_forms():
    def k(x_ptr):
        pass

    j = xblock.jit(k)
    assert isinstance(j, xblock.JITFunction) and j.fn is k and xblock.jit(j) is j
    deco = xblock.jit(do_not_specialize=["x_ptr"])
    assert deco(k).do_not_specialize == {"x_ptr"}
    with pytest.raises(TypeError):
        xblock.jit(42)


def test_launch_returns_the_compiled_kernel():
    k = xblock.jit(_fill)
    out = np.zeros(4, np.int32)
    ck = k[(1,)](out, 7, N=4, target="sim")
    assert ck.target == "sim" and "xb" in ck.asm and ck.name == "_fill"
    np.testing.assert_array_equal(out, 7)


def _fill(out_ptr, v, N: xl.constexpr):
    xl.store(out_ptr + xl.arange(0, N), v)
