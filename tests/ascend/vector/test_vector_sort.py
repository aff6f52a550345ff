"""tl.sort and tl.topk of float16/float32 rows on ascend's vector unit (AscendC Sort and Extract,
vector/sort.py), against numpy and the sim: ascending and descending rows of 32 to 1024 elements with
ties, -0.0, 0.0 and infinities, the row-wise sort of a 2-D block, and a two-stage top-k in the style of
FlagGems' (chunk top-k, then a top-k of the candidates). The generated C++ sorts with Sort/Extract and
no scalar loop; integer keys and rows shorter than 32 keep the bitonic network (scalar, with a warning).

Equal elements keep their order (the sort is stable, as the dev kit documents Sort32 and MrgSort), so
-0.0 and 0.0 come out in input order: bit for bit numpy's stable sort. The sim runs the library's
bitonic network, which can give -0.0 and 0.0 in another order or number: equal as values."""

from __future__ import annotations

import numpy as np
import pytest

import xblock
import xblock.language as xl

from .._helpers import run_ascend

DTYPES = [np.float32, np.float16]


@xblock.jit
def sort_row(x_ptr, asc_ptr, desc_ptr, N: xl.constexpr):
    offs = xl.arange(0, N)
    x = xl.load(x_ptr + offs)
    xl.store(asc_ptr + offs, xl.sort(x))
    xl.store(desc_ptr + offs, xl.sort(x, descending=True))


@xblock.jit
def sort_rows(x_ptr, y_ptr, R: xl.constexpr, N: xl.constexpr, DESC: xl.constexpr):
    offs = xl.arange(0, R)[:, None] * N + xl.arange(0, N)[None, :]
    xl.store(y_ptr + offs, xl.sort(xl.load(x_ptr + offs) * 2, dim=1, descending=DESC))


@xblock.jit
def topk_stage1(x_ptr, cand_ptr, n, CHUNK: xl.constexpr, K: xl.constexpr):
    """FlagGems' first stage: each program keeps the top K of one chunk of a row (masked lanes -inf)."""
    row, chunk = xl.program_id(0), xl.program_id(1)
    cols = chunk * CHUNK + xl.arange(0, CHUNK)
    x = xl.load(x_ptr + row * n + cols, mask=cols < n, other=-float("inf"))
    out = (row * xl.num_programs(1) + chunk) * K + xl.arange(0, K)
    xl.store(cand_ptr + out, xl.topk(x, K))


@xblock.jit
def topk_stage2(cand_ptr, y_ptr, C: xl.constexpr, K: xl.constexpr):
    """The second stage: the top K of the row's C candidates."""
    row = xl.program_id(0)
    c = xl.load(cand_ptr + row * C + xl.arange(0, C))
    xl.store(y_ptr + row * K + xl.arange(0, K), xl.topk(c, K))


def _row(n, dtype, seed=0):
    x = (np.random.default_rng(seed + n).standard_normal(n) * 8).astype(dtype)
    x[: n // 8] = x[0]  # a run of ties
    x[n // 4: n // 4 + 3] = [np.inf, -np.inf, np.inf]
    x[n // 2: n // 2 + 4] = [-0.0, 0.0, -0.0, 0.0]
    return np.random.default_rng(seed).permutation(x)


def _stable(x, descending=False, axis=-1):
    """numpy's stable sort (descending: of -x, negated back, so ties keep their input order too)."""
    return -np.sort(-x, axis=axis, kind="stable") if descending else np.sort(x, axis=axis, kind="stable")


def _bits(a):
    return a.view(np.uint16 if a.dtype == np.float16 else np.uint32)


def _cpp(kernel, args, **meta) -> str:
    return kernel.warmup(*args, target="ascend", **meta).asm["cpp"]


def _vector_only(cpp: str, warns) -> None:
    assert "Sort<" in cpp and "Extract(" in cpp
    assert "GetValue" not in cpp  # no scalar loop (SetValue only fills the index iota's first 8 lanes)
    assert not [w for w in warns if "scalar" in w], warns


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [32, 64, 128, 512, 1024])
def test_sort_row(n, dtype):
    x = _row(n, dtype)
    asc, desc = np.zeros_like(x), np.zeros_like(x)
    warns = run_ascend(sort_row, (x, asc, desc), N=n)
    np.testing.assert_array_equal(_bits(asc), _bits(_stable(x)))  # -0.0/0.0 in input order
    np.testing.assert_array_equal(_bits(desc), _bits(_stable(x, True)))
    s_asc, s_desc = np.zeros_like(x), np.zeros_like(x)
    sort_row[(1,)](x, s_asc, s_desc, N=n, target="sim")  # the bitonic network: equal as values
    np.testing.assert_array_equal(asc, s_asc)
    np.testing.assert_array_equal(desc, s_desc)
    _vector_only(_cpp(sort_row, (x, asc, desc), N=n), warns)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_matches_sim_bits_without_signed_zeros(dtype):
    x = np.random.default_rng(3).permutation(np.arange(-64, 64)).astype(dtype) * 0.5
    x[x == 0] = 1.5  # no zeros: every tie is of identical bits
    asc, desc, s_asc, s_desc = (np.zeros_like(x) for _ in range(4))
    sort_row[(1,)](x, asc, desc, N=128, target="ascend")
    sort_row[(1,)](x, s_asc, s_desc, N=128, target="sim")
    np.testing.assert_array_equal(_bits(asc), _bits(s_asc))
    np.testing.assert_array_equal(_bits(desc), _bits(s_desc))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("R,N,desc", [(4, 32, 0), (4, 64, 1), (2, 256, 0), (8, 128, 1)])
def test_sort_rows_of_2d_block(R, N, desc, dtype):
    x = np.stack([_row(N, dtype, seed=r) for r in range(R)])
    y = np.zeros_like(x)
    warns = run_ascend(sort_rows, (x, y), R=R, N=N, DESC=desc)
    np.testing.assert_array_equal(_bits(y), _bits(_stable(x * 2, bool(desc))))
    s = np.zeros_like(x)
    sort_rows[(1,)](x, s, R=R, N=N, DESC=desc, target="sim")
    np.testing.assert_array_equal(y, s)
    _vector_only(_cpp(sort_rows, (x, y), R=R, N=N, DESC=desc), warns)


# (dtype, K, chunk): K a multiple of 32 extracts straight into the result; 8 floats / 16 halves are one
# 32-byte block (a UB->UB DataCopy); 4 floats or halves are copied by the scalar unit (K scalars a row, no
# scalar sort). Stage 2 sorts chunks * K >= 32 candidates.
TOPK_CASES = [(np.float32, 32, 256), (np.float32, 8, 128), (np.float16, 64, 256), (np.float16, 16, 128),
              (np.float16, 4, 128), (np.float32, 4, 128)]


@pytest.mark.parametrize("dtype,K,chunk", TOPK_CASES)
def test_two_stage_topk(dtype, K, chunk):
    rows, n = 3, 1000
    chunks = -(-n // chunk)
    x = (np.random.default_rng(K).standard_normal((rows, n)) * 100).astype(dtype)
    x[1, 10:40] = x[1, 5]  # ties across the top
    cand = np.zeros((rows, chunks * K), dtype)
    y = np.zeros((rows, K), dtype)
    for target in ("ascend", "sim"):
        cand[:], y[:] = 0, 0
        topk_stage1[(rows, chunks)](x, cand, n, CHUNK=chunk, K=K, target=target)
        topk_stage2[(rows,)](cand, y, C=chunks * K, K=K, target=target)
        np.testing.assert_array_equal(y, np.sort(x, 1)[:, ::-1][:, :K], err_msg=target)
    for kernel, args, meta in ((topk_stage1, (x, cand, n), {"CHUNK": chunk, "K": K}),
                               (topk_stage2, (cand, y), {"C": chunks * K, "K": K})):
        cpp = _cpp(kernel, args, **meta)
        assert "Sort<" in cpp and "Extract(" in cpp
        assert ("GetValue" in cpp) == (K * np.dtype(dtype).itemsize < 32)


@pytest.mark.parametrize("dtype,n", [(np.int32, 32), (np.float32, 16)])
def test_outside_the_vector_sort_is_the_bitonic_network(dtype, n):
    """Integer keys and rows shorter than 32: the bitonic network of Gathers and GatherMasks, no scalar
    loop (tests/ascend/vector/test_static_moves.py)."""
    x = np.random.default_rng(n).permutation(n).astype(dtype)
    asc, desc = np.zeros_like(x), np.zeros_like(x)
    warns = run_ascend(sort_row, (x, asc, desc), N=n)
    np.testing.assert_array_equal(asc, np.sort(x))
    np.testing.assert_array_equal(desc, np.sort(x)[::-1])
    assert not any("scalar GetValue/SetValue" in w for w in warns)
    cpp = _cpp(sort_row, (x, asc, desc), N=n)
    assert "Sort<" not in cpp and "Gather(" in cpp


def test_model_refuses_nan_scores():
    x = _row(64, np.float32)
    x[7] = np.nan
    with pytest.raises(xblock.errors.XBlockError, match="NaN score"):
        sort_row[(1,)](x, np.zeros_like(x), np.zeros_like(x), N=64, target="ascend")


def test_ascend_declares_and_lowers_xb_sort():
    from xblock.backends.ascend import BACKEND, AscendOptions
    from xblock.dialects.xb import NATIVE_OPS

    assert "sort" in BACKEND.capabilities(AscendOptions())
    assert set(NATIVE_OPS["sort"]) <= BACKEND.coverage()[0]
