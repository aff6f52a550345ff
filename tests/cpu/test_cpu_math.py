"""The cpu target's vectorized math (exp, exp2, log, log2, sin, cos, erf, tanh, sigmoid) against
numpy over the whole fp32 range: random bit patterns (every exponent, denormals, NaN), zeros,
infinities, and dense sweeps where each function changes regime. Errors are counted in units in
the last place of the correctly rounded fp32 result."""

import math

import numpy as np
import pytest

import xblock
import xblock.language as xl

FUNCS = ["exp", "exp2", "log", "log2", "sin", "cos", "erf", "tanh", "sigmoid"]
MAX_ULP = 2  # measured: 1 (exp, exp2, log, log2, sin, tanh), 2 (cos, erf, sigmoid)


@xblock.jit
def _math(x_ptr, out_ptr, n, BLOCK: xl.constexpr):
    offs = xl.program_id(0) * BLOCK + xl.arange(0, BLOCK)
    mask = offs < n
    x = xl.load(x_ptr + offs, mask=mask)
    xl.store(out_ptr + offs, xl.exp(x), mask=mask)
    xl.store(out_ptr + n + offs, xl.exp2(x), mask=mask)
    xl.store(out_ptr + 2 * n + offs, xl.log(x), mask=mask)
    xl.store(out_ptr + 3 * n + offs, xl.log2(x), mask=mask)
    xl.store(out_ptr + 4 * n + offs, xl.sin(x), mask=mask)
    xl.store(out_ptr + 5 * n + offs, xl.cos(x), mask=mask)
    xl.store(out_ptr + 6 * n + offs, xl.erf(x), mask=mask)
    xl.store(out_ptr + 7 * n + offs, xl.math.tanh(x), mask=mask)
    xl.store(out_ptr + 8 * n + offs, xl.sigmoid(x), mask=mask)


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    tiny = np.float32(1.1754944e-38)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1e-40, -3e-39, tiny, 3.4e38,
               -3.4e38, 88.72, 88.7229, -87.4, -103.9, -104.0, 127.9, 128.0, -149.5, -150.0, 0.625, 1.0, 3.93,
               9.02, 117435.99, 117436.0, 1e30, -1e30, math.pi, -math.pi / 2, 2 * math.pi, 1e4 * math.pi]
    parts = [
        np.array(special, np.float32),
        rng.integers(0, 2**32, 60000, dtype=np.uint64).astype(np.uint32).view(np.float32),  # every exponent
        np.nextafter(np.float32(1), np.float32(2)) + np.arange(-500, 500, dtype=np.float32) * np.float32(2**-23),
        rng.uniform(-200, 200, 30000), rng.uniform(-12, 12, 30000), rng.uniform(-1.2, 1.2, 20000),
        rng.uniform(-2e5, 2e5, 20000), np.exp(rng.uniform(-100, 88, 20000)),
        np.arange(1, 5000) * (math.pi / 2),  # near the zeros of sin and cos
    ]
    return np.concatenate([p.astype(np.float32) for p in parts])


def _erf(x):
    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def _reference(name: str, x: np.ndarray, dtype=np.float32) -> np.ndarray:
    """The result computed in float64 and rounded to `dtype` (sigmoid: exp rounded first, as written)."""
    with np.errstate(all="ignore"):
        d = x.astype(np.float64)
        fn = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
              "erf": _erf, "tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v).astype(x.dtype))}[name]
        return fn(d).astype(dtype)


def ulp_error(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the last place of `want`; NaN/inf must match exactly (else inf)."""
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.spacing(np.abs(want)).astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    err[same] = 0.0
    err[~np.isfinite(err)] = np.inf
    return err


@pytest.fixture(scope="module")
def results():
    x = _inputs()
    n = x.size
    out = np.full(len(FUNCS) * n, np.nan, np.float32)
    _math[(xblock.cdiv(n, 1024),)](x, out, n, BLOCK=1024, target="cpu")
    return x, out.reshape(len(FUNCS), n)


@pytest.mark.parametrize("name", FUNCS)
def test_fp32_ulp_error(results, name):
    x, out = results
    got, want = out[FUNCS.index(name)], _reference(name, x)
    err = ulp_error(got, want)
    worst = int(np.argmax(err))
    assert err.max() <= MAX_ULP, f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"
    # the tolerance of the numerics tests, as numpy would check it
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-6, atol=1e-37)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_float_types(dtype):
    """fp64 calls libm; fp16 computes in fp32 and rounds once."""
    x = np.concatenate([np.linspace(-20, 20, 3001), [0.0, np.inf, -np.inf, np.nan, 1e-6, 60000.0]]).astype(dtype)
    n = x.size
    out = np.zeros(len(FUNCS) * n, dtype)
    _math[(xblock.cdiv(n, 256),)](x, out, n, BLOCK=256, target="cpu")
    for k, name in enumerate(FUNCS):
        got, want = out[k * n : (k + 1) * n], _reference(name, x, dtype)
        if dtype == np.float64:
            np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300, err_msg=name)
        else:
            assert ulp_error(got, want).max() <= 1, name

