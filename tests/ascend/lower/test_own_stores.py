"""A kernel that reads back what it stored: the copy-in waits for the copy-out (MTE3 -> MTE2), and a
scalar read waits for MTE3 and drops its DataCache line first (GetValue reads through the core's
DataCache, which a DataCopy to GM does not update). Kernels that never read what they store get none
of these waits."""

from __future__ import annotations

import numpy as np

import xblock
import xblock.language as xl
from examples.add import add_kernel

F32 = "*fp32"


@xblock.jit
def read_back(x_ptr, t_ptr, o_ptr, BLOCK: xl.constexpr):
    pid = xl.program_id(0)
    offs = pid * BLOCK + xl.arange(0, BLOCK)
    xl.store(t_ptr + offs, xl.load(x_ptr + offs) * 2)
    first = xl.load(t_ptr + pid * BLOCK)  # a scalar read of what this program stored
    rev = xl.load(t_ptr + pid * BLOCK + (BLOCK - 1 - xl.arange(0, BLOCK)))  # a gather of it
    again = xl.load(t_ptr + offs)  # a tile copy-in of it
    xl.store(o_ptr + offs, rev + first + again)


def test_reading_back_own_stores_matches_numpy(recwarn):
    x = np.random.default_rng(3).random(5 * 64, dtype=np.float32)
    t, o = np.zeros_like(x), np.zeros_like(x)
    read_back[(5,)](x, t, o, BLOCK=64, target="ascend")
    r = (x * 2).reshape(5, 64)
    np.testing.assert_array_equal(o.reshape(5, 64), r[:, ::-1] + r[:, :1] + r)


def test_the_waits_are_where_the_kernel_reads_its_own_stores():
    src = xblock.compile(read_back, target="ascend", signature={"x_ptr": F32, "t_ptr": F32, "o_ptr": F32},
                         constexprs={"BLOCK": 64}).asm["cpp"]
    body = src[src.index("test_own_stores.py:"):]  # the kernel body, from its first line comment
    x_load = body.index("xGm[")
    assert "MTE3_MTE2" not in body[:x_load], "x is never stored: its copy-in needs no wait"
    gather = body.index("(BLOCK - 1 - xl.arange", body.index("for (int64_t pid"))  # (iotas are made before)
    t_copy = body.index("DataCopy", gather)  # the gather's window (DataCopyPad), or the next copy-in
    assert "WaitFlag<HardEvent::MTE3_MTE2>" in body[gather:t_copy]
    first = body.index("tGm.GetValue(")
    assert "WaitFlag<HardEvent::MTE3_S>" in body[:first]
    assert "DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(tGm[" \
        in body[:first]


def test_a_kernel_that_never_reads_its_stores_has_no_such_waits():
    src = xblock.compile(add_kernel, target="ascend", signature={"x_ptr": F32, "y_ptr": F32, "out_ptr": F32,
                                                                  "n": "i32"}, constexprs={"BLOCK": 1024}).asm["cpp"]
    assert "MTE3_MTE2" not in src and "MTE3_S" not in src and "DataCacheCleanAndInvalid" not in src
