"""Unsupported Python syntax and undefined names: a CompilationError at the offending kernel line."""

import xblock
import xblock.language as xl

from ._helpers import compile_error, line_of

SIG = {"x_ptr": "*fp32", "n": "i32"}


@xblock.jit
def k_break(x_ptr, n):
    for i in range(n):
        break  # ERR


def test_break():
    compile_error(k_break, SIG, match="break")


@xblock.jit
def k_continue(x_ptr, n):
    for i in range(n):
        continue  # ERR


def test_continue():
    compile_error(k_continue, SIG, match="continue")


@xblock.jit
def k_lambda(x_ptr, n):
    f = lambda v: v + 1  # ERR  # noqa: E731
    xl.store(x_ptr, f(1.0))


def test_lambda():
    compile_error(k_lambda, SIG, match="Lambda")


@xblock.jit
def k_with(x_ptr, n):
    with open("f"):  # ERR
        pass


def test_with():
    compile_error(k_with, SIG, match="With")


@xblock.jit
def k_nested_def(x_ptr, n):
    def inner(v):  # ERR
        return v

    xl.store(x_ptr, inner(1.0))


def test_nested_def():
    compile_error(k_nested_def, SIG, match="FunctionDef")


@xblock.jit
def k_try(x_ptr, n):
    try:  # ERR
        xl.store(x_ptr, 1.0)
    except ValueError:
        pass


def test_try():
    compile_error(k_try, SIG, match="Try")


@xblock.jit
def k_slice_bounds(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    y = x[1:4]  # ERR
    xl.store(x_ptr + xl.arange(0, 3), y)


def test_slice_with_bounds():
    compile_error(k_slice_bounds, SIG, match="full slices")


@xblock.jit
def k_undefined(x_ptr, n):
    offs = xl.arange(0, 16)
    xl.store(x_ptr + offs, undefined_value)  # ERR  # noqa: F821


def test_undefined_name():
    compile_error(k_undefined, SIG, match="name 'undefined_value' is not defined")


@xblock.jit
def k_undefined_attr(x_ptr, n):
    y = xl.no_such_builtin(1.0)  # ERR
    xl.store(x_ptr, y)


def test_unknown_language_attribute():
    compile_error(k_undefined_attr, SIG, match="no_such_builtin")


@xblock.jit
def k_block_attr(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr, x.no_such_method())  # ERR


def test_unknown_block_attribute():
    compile_error(k_block_attr, SIG, match="no attribute 'no_such_method'")


@xblock.jit
def k_chained_compare(x_ptr, n):
    offs = xl.arange(0, 16)
    m = 0 < offs < n  # ERR
    xl.store(x_ptr + offs, 1.0, mask=m)


def test_chained_comparison():
    compile_error(k_chained_compare, SIG, match="chained")


@xblock.jit
def k_for_else(x_ptr, n):
    for i in range(n):  # ERR
        xl.store(x_ptr + i, 1.0)
    else:
        pass


def test_for_else():
    compile_error(k_for_else, SIG, match="else")


@xblock.jit
def k_subscript_store(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    x[0] = 1.0  # ERR


def test_item_assignment():
    compile_error(k_subscript_store, SIG, match="immutable")


@xblock.jit
def k_comprehension(x_ptr, n):
    vals = [i for i in range(4)]  # ERR
    xl.store(x_ptr, vals[0])


def test_list_comprehension():
    compile_error(k_comprehension, SIG, match="ListComp")


@xblock.jit
def k_return_value(x_ptr, n):
    x = xl.load(x_ptr)
    return x  # ERR


def test_kernel_returns_value():
    compile_error(k_return_value, SIG, match="cannot return")


@xblock.jit
def k_pow(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr + xl.arange(0, 16), x ** 2)  # ERR


def test_pow_on_block():
    compile_error(k_pow, SIG, match="Pow")


@xblock.jit
def k_host_call(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    xl.store(x_ptr, sorted(x))  # ERR


def test_host_function_on_block():
    compile_error(k_host_call, SIG, match="sorted")


@xblock.jit
def k_block_if(x_ptr, n):
    x = xl.load(x_ptr + xl.arange(0, 16))
    if x > 0:  # ERR
        xl.store(x_ptr, 1.0)


def test_if_on_block_condition():
    compile_error(k_block_if, SIG, match="scalar")


@xblock.jit
def k_while_python_cond(x_ptr, n):
    i = 0
    while True:  # ERR
        i += 1


def test_while_with_python_condition():
    compile_error(k_while_python_cond, SIG, match="while")


@xblock.jit
def k_unpack(x_ptr, n):
    a, b = (1, 2, 3)  # ERR
    xl.store(x_ptr, a + b)


def test_tuple_unpack_mismatch():
    compile_error(k_unpack, SIG, match="unpack")


@xblock.jit
def _return_in_loop(x, n):
    for i in range(n):
        if x > i:
            return x  # ERR-HELPER
    return x * 2


@xblock.jit
def k_return_in_runtime_if(x_ptr, n):
    xl.store(x_ptr, _return_in_loop(xl.load(x_ptr), n))


def test_return_inside_runtime_if_in_a_loop():
    """Early returns are structured control flow, but not out of a loop (as compiled Triton)."""
    compile_error(k_return_in_runtime_if, SIG, line=line_of(_return_in_loop, "# ERR-HELPER"),
                  match="`return` inside a `for` or `while` loop is not supported")


@xblock.jit
def k_statement_after_return(x_ptr, n):
    xl.store(x_ptr, _after_return(xl.load(x_ptr)))


@xblock.jit
def _after_return(x):
    return x
    x = x + 1  # ERR-AFTER


def test_statement_after_return():
    compile_error(k_statement_after_return, SIG, line=line_of(_after_return, "# ERR-AFTER"), match="after `return`")


@xblock.jit
def k_global_stmt(x_ptr, n):
    global GLOBAL_THING  # ERR
    xl.store(x_ptr, 1.0)


def test_global_statement():
    compile_error(k_global_stmt, SIG, match="Global")
