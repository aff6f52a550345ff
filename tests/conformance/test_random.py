"""tl.rand/randn/randint/philox (and the 4x forms): Philox 4x32-10 bit for bit (published known
answers and a numpy model written from the algorithm's definition), so a seeded dropout draws the
same mask on every target that runs it. ascend, whose vector unit has no high-half multiply, builds
umulhi from 16-bit pieces (docs/DESIGN.md, "Integer bit operations")."""

import numpy as np
import pytest

import xblock
from xblock.backends.cuda.precompile import precompile

triton = pytest.importorskip("triton")
tl = triton.language

RUN_TARGETS = ["sim", "cpu", "ascend"]
M32 = 0xFFFFFFFF


def philox_numpy(c, k, rounds=10):
    """Philox 4x32 (Salmon et al. 2011) on uint64 arrays holding 32-bit words."""
    c = [np.asarray(x, np.uint64) & M32 for x in c]
    k0, k1 = (np.asarray(x, np.uint64) & M32 for x in k)
    for _ in range(rounds):
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & M32, p1 & M32, ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & M32, p0 & M32]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M32, (k1 + np.uint64(0xBB67AE85)) & M32
    return [x.astype(np.uint32) for x in c]


def uniform_numpy(bits):
    x = bits.view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x).astype(np.int32)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


@triton.jit
def philox_block(out_ptr, seed, c0_ptr, c1_ptr, c2_ptr, c3_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    a, b, c, d = tl.philox(seed, tl.load(c0_ptr + i), tl.load(c1_ptr + i), tl.load(c2_ptr + i),
                           tl.load(c3_ptr + i))
    tl.store(out_ptr + i * 4, a)
    tl.store(out_ptr + i * 4 + 1, b)
    tl.store(out_ptr + i * 4 + 2, c)
    tl.store(out_ptr + i * 4 + 3, d)


@triton.jit
def seeded_dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    keep = tl.rand(seed, offsets) > p
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@triton.jit
def draws(u_ptr, n_ptr, i_ptr, seed, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(u_ptr + offsets, tl.rand(seed, offsets), mask=mask)
    tl.store(n_ptr + offsets, tl.randn(seed, offsets), mask=mask)
    tl.store(i_ptr + offsets, tl.randint(seed, offsets), mask=mask)


KNOWN = [  # counter, key -> output: the published Philox4x32-10 known-answer vectors
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32, M32, M32, M32), (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
]


def test_numpy_model_matches_the_known_answers():
    for c, k, want in KNOWN:
        got = philox_numpy([np.array([v]) for v in c], k)
        assert [int(g[0]) for g in got] == list(want)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_philox_is_bit_exact(target):
    rng = np.random.default_rng(5)
    n = 16
    cs = [rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32) for _ in range(4)]
    cs[0][0] = cs[1][0] = cs[2][0] = cs[3][0] = 0  # the first known answer (key 0) rides along
    seed = 0
    out = np.zeros(4 * n, np.uint32)
    xblock.jit(philox_block)[(1,)](out, seed, *cs, N=n, target=target)
    want = philox_numpy(cs, (seed & M32, seed >> 32))
    np.testing.assert_array_equal(out.reshape(n, 4), np.stack(want, 1))
    assert tuple(out[:4]) == KNOWN[0][2]


@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("n", [1, 255, 256, 257])
def test_rand_randn_randint(target, n):
    seed = 0x1234_5678_9
    u, g, i = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.uint32)
    xblock.jit(draws)[(triton.cdiv(n, 256),)](u, g, i, seed, n, BLOCK=256, target=target)
    offs = np.arange(n, dtype=np.uint64)
    w = philox_numpy([offs, 0 * offs, 0 * offs, 0 * offs], (seed & M32, seed >> 32))
    np.testing.assert_array_equal(i, w[0])
    np.testing.assert_array_equal(u, uniform_numpy(w[0]))
    u1, u2 = np.maximum(np.float32(1e-7), uniform_numpy(w[0])), uniform_numpy(w[1])
    normal = np.sqrt(-2.0 * np.log(u1.astype(np.float64))) * np.cos(2 * np.pi * u2.astype(np.float64))
    np.testing.assert_allclose(g, normal, rtol=1e-4, atol=1e-4)
    assert ((u >= 0) & (u < 1)).all()


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_seeded_dropout_mask_is_the_same_everywhere(target):
    n, p, seed = 1000, 0.3, 123
    x = np.random.default_rng(6).standard_normal(n).astype(np.float32) + 5  # no zeros of its own
    out = np.zeros(n, np.float32)
    xblock.jit(seeded_dropout)[(triton.cdiv(n, 256),)](x, out, n, p, seed, BLOCK=256, target=target)
    offs = np.arange(n, dtype=np.uint64)
    keep = uniform_numpy(philox_numpy([offs, 0 * offs, 0 * offs, 0 * offs], (seed, 0))[0]) > np.float32(p)
    np.testing.assert_array_equal(out != 0, keep)
    np.testing.assert_allclose(out[keep], x[keep] / np.float32(1 - p), rtol=1e-6)


def test_dropout_compiles_for_cuda():
    x = np.zeros(256, np.float32)
    assert "cubin" in precompile(seeded_dropout, (x, x, 256, 0.5, 7), {"BLOCK": 256}).asm


@triton.jit
def draws4x(i_ptr, out_ptr, seed, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    i0, i1, i2, i3 = tl.randint4x(seed, offsets)
    tl.store(i_ptr + offsets, i0)
    tl.store(i_ptr + BLOCK + offsets, i1)
    tl.store(i_ptr + 2 * BLOCK + offsets, i2)
    tl.store(i_ptr + 3 * BLOCK + offsets, i3)
    u0, u1, u2, u3 = tl.rand4x(seed, offsets)
    tl.store(out_ptr + offsets, u0)
    tl.store(out_ptr + BLOCK + offsets, u1)
    tl.store(out_ptr + 2 * BLOCK + offsets, u2)
    tl.store(out_ptr + 3 * BLOCK + offsets, u3)
    n0, n1, n2, n3 = tl.randn4x(seed, offsets)
    tl.store(out_ptr + 4 * BLOCK + offsets, n0)
    tl.store(out_ptr + 5 * BLOCK + offsets, n1)
    tl.store(out_ptr + 6 * BLOCK + offsets, n2)
    tl.store(out_ptr + 7 * BLOCK + offsets, n3)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_the_4x_forms(target):
    n, seed = 128, 0xDEAD_BEEF_01
    i, out = np.zeros(4 * n, np.uint32), np.zeros(8 * n, np.float32)
    xblock.jit(draws4x)[(1,)](i, out, seed, BLOCK=n, target=target)
    out = out.reshape(8, n)
    offs = np.arange(n, dtype=np.uint64)
    w = philox_numpy([offs, 0 * offs, 0 * offs, 0 * offs], (seed & M32, seed >> 32))
    np.testing.assert_array_equal(i.reshape(4, n), np.stack(w))
    u = np.stack([uniform_numpy(x) for x in w])
    np.testing.assert_array_equal(out[:4], u)
    normal = []
    for a, b in ((u[0], u[1]), (u[2], u[3])):
        r = np.sqrt(-2.0 * np.log(np.maximum(np.float32(1e-7), a).astype(np.float64)))
        normal += [r * np.cos(2 * np.pi * b.astype(np.float64)), r * np.sin(2 * np.pi * b.astype(np.float64))]
    np.testing.assert_allclose(out[4:], np.stack(normal), rtol=1e-4, atol=1e-4)
