"""The sim's memory model: argument kinds, pointer arithmetic across buffers, bool/bf16 storage, alignment,
race checks across chunks of programs, and copy-back only on success."""

import ml_dtypes
import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock.sim import executor


@xblock.jit
def scalars(out_ptr, a, b, c, d, e):
    xl.store(out_ptr + 0, a.to(xl.float64))
    xl.store(out_ptr + 1, b.to(xl.float64))
    xl.store(out_ptr + 2, c.to(xl.float64))
    xl.store(out_ptr + 3, d.to(xl.float64))
    xl.store(out_ptr + 4, e.to(xl.float64))
    xl.static_assert(a.dtype == xl.int32 and b.dtype == xl.int64 and c.dtype == xl.uint32, "int args")
    xl.static_assert(d.dtype == xl.float32 and e.dtype == xl.int1, "float and bool args")


def test_scalar_arguments_take_triton_types():
    out = np.zeros(5, np.float64)
    scalars[(1,)](out, -7, 2**40, 2**31 + 5, 1.5, True, target="sim")
    np.testing.assert_array_equal(out, [-7, 2**40, 2**31 + 5, 1.5, 1])


@xblock.jit
def reverse_copy(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    m = offs < n
    x = xl.load(x_ptr + (n - 1 - offs), mask=m)  # offsets counted down from the end
    xl.store(out_ptr + offs.to(xl.int64), x, mask=m)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.int64, np.uint16, np.bool_, ml_dtypes.bfloat16])
def test_element_types_round_trip(dt):
    x = (np.arange(37) % 5).astype(dt) if dt is not np.bool_ else np.arange(37) % 3 == 0
    out = np.zeros(37, dt)
    reverse_copy[(3,)](x, out, 37, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, x[::-1])


def test_two_dimensional_arrays_pass_as_flat_pointers():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.zeros((4, 6), np.float32)
    reverse_copy[(2,)](x, out, 24, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out.ravel(), x.ravel()[::-1])


def test_empty_arrays():
    x, out = np.zeros(0, np.float32), np.zeros(0, np.float32)
    reverse_copy[(1,)](x, out, 0, BLOCK=16, target="sim")


@xblock.jit
def misaligned(x_ptr, out_ptr):
    p = (x_ptr + 1).to(xl.pointer_type(xl.int32))  # one byte past the start, read as int32
    xl.store(out_ptr, xl.load(p))


def test_misaligned_access_is_an_error():
    x, out = np.zeros(16, np.int8), np.zeros(1, np.int32)
    with pytest.raises(xblock.ExecutionError, match="misaligned"):
        misaligned[(1,)](x, out, target="sim")


@xblock.jit
def gather_scatter(x_ptr, idx_ptr, out_ptr, N: xl.constexpr):
    offs = xl.program_id(0) * N + xl.arange(0, N)
    i = xl.load(idx_ptr + offs)
    xl.store(out_ptr + i, xl.load(x_ptr + offs))  # a permutation: distinct addresses, no race


def test_scatter_through_a_permutation_is_not_a_race():
    rng = np.random.default_rng(0)
    perm = rng.permutation(64).astype(np.int32)
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    gather_scatter[(4,)](x, perm, out, N=16, target="sim")
    want = np.zeros(64, np.float32)
    want[perm] = x
    np.testing.assert_array_equal(out, want)


def test_scatter_with_a_collision_is_a_race():
    perm = np.arange(64, dtype=np.int32)
    perm[40] = 3  # program 2 writes element 3, which program 0 also writes
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with pytest.raises(xblock.ExecutionError, match="write-write race: programs 0 and 2"):
        gather_scatter[(4,)](x, perm, out, N=16, target="sim")
    np.testing.assert_array_equal(out, 0)


@xblock.jit
def last_writes_first(out_ptr, P, N: xl.constexpr):
    pid = xl.program_id(0)
    offs = xl.arange(0, N)
    xl.store(out_ptr + pid * N + offs, 1.0)
    if pid == P - 1:
        xl.store(out_ptr + offs, 2.0)  # the last program writes program 0's elements


def test_race_is_caught_across_chunks_of_programs(monkeypatch):
    monkeypatch.setattr(executor, "CHUNK_ELEMENTS", 64)  # run 4 programs of 16 lanes at a time
    P = 40
    out = np.zeros(P * 16, np.float32)
    with pytest.raises(xblock.ExecutionError, match="write-write race"):
        last_writes_first[(P,)](out, P, N=16, target="sim")
    np.testing.assert_array_equal(out, 0)


def test_chunked_launch_gives_the_same_result(monkeypatch):
    x = np.arange(1000, dtype=np.float32)
    ref = np.zeros(1000, np.float32)
    reverse_copy[(63,)](x, ref, 1000, BLOCK=16, target="sim")
    monkeypatch.setattr(executor, "CHUNK_ELEMENTS", 48)
    out = np.zeros(1000, np.float32)
    reverse_copy[(63,)](x, out, 1000, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out, x[::-1])


@xblock.jit
def shared_reads(x_ptr, out_ptr, N: xl.constexpr):
    pid = xl.program_id(0)
    offs = xl.arange(0, N)
    xl.store(out_ptr + pid * N + offs, xl.load(x_ptr + offs) + pid)  # every program reads the same row


def test_many_programs_reading_the_same_elements():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros((10, 8), np.float32)
    shared_reads[(10,)](x, out, N=8, target="sim")
    np.testing.assert_array_equal(out, x[None, :] + np.arange(10)[:, None])


@xblock.jit
def assert_in_branch(x_ptr, out_ptr, N: xl.constexpr):
    pid = xl.program_id(0)
    offs = pid * N + xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    if pid == 2:
        xl.device_assert(x < 0, "only program 2 checks")
    xl.store(out_ptr + offs, x)


def test_device_assert_only_where_executed():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    with pytest.raises(xblock.ExecutionError, match=r"program \(2, 0, 0\): only program 2 checks"):
        assert_in_branch[(4,)](x, out, N=8, target="sim")
    x[16:24] = -1
    assert_in_branch[(4,)](x, out, N=8, target="sim")
    np.testing.assert_array_equal(out, x)


@xblock.jit
def store_then_fail(out_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    xl.store(out_ptr + offs, 5.0)
    xl.store(out_ptr + offs + N, 6.0)  # out of bounds: the launch fails after the first store


def test_failed_launch_writes_nothing_back():
    out = np.zeros(8, np.float32)
    with pytest.raises(xblock.ExecutionError):
        store_then_fail[(1,)](out, N=8, target="sim")
    np.testing.assert_array_equal(out, 0)


@xblock.jit
def read_only_input(x_ptr, out_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs) * 2)


def test_inputs_are_not_written_back():
    base = np.arange(16, dtype=np.float32)
    x = np.lib.stride_tricks.as_strided(base, (16,), (4,), writeable=False)  # a read-only view
    out = np.zeros(16, np.float32)
    read_only_input[(1,)](x, out, N=16, target="sim")
    np.testing.assert_array_equal(out, base * 2)


@xblock.jit
def atomic_fp16(acc_ptr, N: xl.constexpr):
    xl.atomic_add(acc_ptr + xl.arange(0, N), 0.5)


def test_fp16_atomic_add_under_contention():
    acc = np.zeros(4, np.float16)
    atomic_fp16[(100,)](acc, N=4, target="sim")
    np.testing.assert_array_equal(acc, 50.0)
