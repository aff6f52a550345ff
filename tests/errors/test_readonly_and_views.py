"""Arrays a kernel may not write, and views it cannot read in order, are refused the same way on
every target that runs here; inputs that are read-only are fine (and left untouched)."""

import numpy as np
import pytest

import xblock
import xblock.language as xl

TARGETS = ["sim", "cpu", "ascend"]


@xblock.jit
def copy(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(out_ptr + offs, xl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _frozen(a):
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_output_is_refused(target):
    out = _frozen(np.zeros(8, np.float32))
    with pytest.raises(xblock.LaunchError, match=r"test_readonly_and_views.py:\d+: copy: argument 'out_ptr' is "
                       r"read-only but the kernel writes to it"):
        copy[(1,)](np.arange(8, dtype=np.float32), out, 8, BLOCK=8, target=target)
    assert not out.any()


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_input_is_fine(target):
    x = _frozen(np.arange(8, dtype=np.float32))
    out = np.zeros(8, np.float32)
    copy[(1,)](x, out, 8, BLOCK=8, target=target)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("target", TARGETS)
def test_views_are_refused_with_one_message(target):
    x = np.arange(16, dtype=np.float32).reshape(4, 4).T
    with pytest.raises(xblock.LaunchError, match="argument 'x_ptr' is not contiguous"):
        copy[(1,)](x, np.zeros(16, np.float32), 16, BLOCK=16, target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_torch_cpu_tensors_everywhere(target):
    torch = pytest.importorskip("torch")
    x = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(8)
    copy[(1,)](x, out, 8, BLOCK=8, target=target)
    assert torch.equal(out, x)
    with pytest.raises(xblock.LaunchError, match="argument 'x_ptr' is not contiguous"):
        copy[(1,)](x.reshape(2, 4).T, out, 8, BLOCK=8, target=target)
