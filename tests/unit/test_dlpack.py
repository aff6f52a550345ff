"""Arguments that only speak DLPack are accepted (host buffers become numpy views, not copies)."""

import numpy as np

import xblock
import xblock.language as xl


class DLPackOnly:
    """A host buffer reachable only through the DLPack protocol."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@xblock.jit
def double(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    m = offs < n
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=m) * 2, mask=m)


def test_dlpack_inputs_and_outputs():
    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    double[(1,)](DLPackOnly(x), DLPackOnly(out), 10, BLOCK=16, target="sim")
    np.testing.assert_array_equal(out, 2 * x)
