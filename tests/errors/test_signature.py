"""Bad signatures and constexprs given to `xblock.compile`: errors at the kernel's `def` line."""


import xblock
import xblock.language as xl

from ._helpers import compile_error, def_line


@xblock.jit
def kern(x_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, 1.0, mask=offs < n)


def _err(signature, constexprs=None, match=None):
    return compile_error(kern, signature, constexprs, match=match, line=def_line(kern))


def test_unknown_type_string():
    _err({"x_ptr": "*fp33", "n": "i32"}, {"BLOCK": 16}, match="unknown type 'fp33'")


def test_unknown_scalar_type_string():
    _err({"x_ptr": "*fp32", "n": "int"}, {"BLOCK": 16}, match="unknown type 'int'")


def test_type_that_is_not_a_string():
    _err({"x_ptr": "*fp32", "n": 32}, {"BLOCK": 16}, match="strings")


def test_missing_parameter():
    _err({"x_ptr": "*fp32"}, {"BLOCK": 16}, match="'n' is missing")


def test_unknown_parameter():
    _err({"x_ptr": "*fp32", "n": "i32", "m": "i32"}, {"BLOCK": 16}, match="unknown parameters: m")


def test_missing_constexpr():
    _err({"x_ptr": "*fp32", "n": "i32"}, None, match="'BLOCK' needs a value")


def test_constexpr_named_in_signature_without_value():
    _err({"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {}, match="'BLOCK' needs a value")


def test_no_signature():
    _err(None, {"BLOCK": 16}, match="needs a signature")


def test_unknown_constexpr():
    _err({"x_ptr": "*fp32", "n": "i32"}, {"BLOCK": 16, "BLOCKK": 32}, match="BLOCKK")


def test_list_signature_too_long():
    _err(["*fp32", "i32", "constexpr", "i32"], {"BLOCK": 16}, match="signature")


def test_good_list_signature_compiles():
    ck = xblock.compile(kern, target="sim", signature=["*fp32", "i32", "constexpr"], constexprs={"BLOCK": 16})
    assert "xb.kernel" in ck.asm["xb"]
