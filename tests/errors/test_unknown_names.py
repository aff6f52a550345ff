"""Names Triton does not have are errors naming what the kernel wrote (issue 28, item 8): a
`triton.language` name or submodule that Triton itself lacks is not looked up in xblock's wider
namespace, and a vendor's `triton.language.*` module is refused, each at the kernel's line."""

import types

import pytest

from ._helpers import compile_error

triton = pytest.importorskip("triton")
tl = triton.language

# a module as a vendor's fork of Triton ships it (triton-ascend's `tl.extra.ascend`): not Triton's
ascend = types.ModuleType("triton.language.extra.ascend")
ascend.exp = lambda x: x

SIG = {"x_ptr": "*fp32"}


@triton.jit
def uses_get_element(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, tl.get_element(x, (0,)))  # ERR


@triton.jit
def uses_vendor_attribute(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.extra.ascend.libdevice.exp(x))  # ERR


@triton.jit
def uses_vendor_module(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, ascend.exp(x))  # ERR


@triton.jit
def uses_xblock_only_name(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.tanh(x))  # ERR


@triton.jit
def uses_libdevice_missing_name(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.extra.cuda.libdevice.lrint(x).to(tl.float32))  # ERR


@triton.jit
def max_of_two_scalars(x_ptr, y_ptr):
    a = tl.load(x_ptr)
    b = tl.load(y_ptr)
    tl.store(x_ptr, tl.max(a, b))  # ERR


def test_a_name_triton_language_lacks():
    compile_error(uses_get_element, SIG, match=r"'triton\.language' has no attribute 'get_element'")


def test_a_vendor_submodule_of_triton_language():
    compile_error(uses_vendor_attribute, SIG, match=r"'triton\.language\.extra' has no attribute 'ascend'")


def test_a_vendor_module_read_as_a_global():
    compile_error(uses_vendor_module, SIG, match=r"triton\.language\.extra\.ascend is not supported by xblock")


def test_an_xblock_name_is_not_reachable_through_triton_language():
    compile_error(uses_xblock_only_name, SIG, match=r"'triton\.language' has no attribute 'tanh'")


def test_a_libdevice_name_triton_lacks():
    compile_error(uses_libdevice_missing_name, SIG,
                  match=r"'triton\.language\.extra\.cuda\.libdevice' has no attribute 'lrint'")


def test_max_of_two_scalars_is_refused_as_in_triton():
    # Triton 3.6 takes the second argument as the reduction axis and rejects a scalar input
    compile_error(max_of_two_scalars, {"x_ptr": "*fp32", "y_ptr": "*fp32"},
                  match=r"tl\.max reduces a block along an axis .*tl\.maximum\(a, b\)")
