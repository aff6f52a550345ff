"""Counter-based random numbers (`xl.rand`, `xl.randn`, `xl.randint`, `xl.philox`), as `triton.language`.

The generator is Philox 4x32 with 10 rounds by default (Salmon et al., "Parallel random numbers:
as easy as 1, 2, 3", SC'11), keyed by the seed and counting with the offsets, the scheme Triton
uses: the same seed and offsets give the same bits on every target, so a seeded dropout draws
the same mask everywhere. These functions are written in the block language itself; the
frontend specializes and inlines them like any helper, so every target runs them with the
integer ops it already has (32x32->64-bit high multiply, xor, add).

The integer outputs (`randint`, `randint4x`, `philox`) are bit-exact across targets. `rand` is
too (an int32 -> fp32 conversion and one multiply, both correctly rounded). `randn` adds a log,
a square root and a sine or cosine (Box-Muller), so it agrees to the targets' math accuracy.
"""

from . import core as xl

N_ROUNDS_DEFAULT = 10
# the Philox 4x32 multipliers and Weyl key increments (the published constants)
PHILOX_ROUND_A = 0xD2511F53
PHILOX_ROUND_B = 0xCD9E8D57
PHILOX_KEY_A = 0x9E3779B9
PHILOX_KEY_B = 0xBB67AE85
TWO_PI = 6.283185307179586
INT32_TO_UNIT = 4.6566127342e-10  # about 2**-31: the largest int32 maps to just under 1


def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """`n_rounds` Philox rounds on the uint32 counter (c0, c1, c2, c3) with key (k0, k1)."""
    for _ in xl.static_range(n_rounds):
        a, b = c0, c2
        c0 = xl.umulhi(PHILOX_ROUND_B, b) ^ c1 ^ k0
        c2 = xl.umulhi(PHILOX_ROUND_A, a) ^ c3 ^ k1
        c1 = PHILOX_ROUND_B * b
        c3 = PHILOX_ROUND_A * a
        k0 = k0 + PHILOX_KEY_A
        k1 = k1 + PHILOX_KEY_B
    return c0, c1, c2, c3


def philox(seed, c0, c1, c2, c3, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """Four uint32 blocks of random bits from a 64-bit seed and four 32-bit counters."""
    seed = xl.to_tensor(seed)
    xl.static_assert(seed.dtype.is_int(), "philox: the seed must be an integer")
    seed = seed.to(xl.uint64)
    xl.static_assert(c0.dtype.primitive_bitwidth == 32, "philox: xblock implements the 32-bit counters")
    seed_hi = ((seed >> 32) & 0xFFFFFFFF).to(xl.uint32)
    seed_lo = (seed & 0xFFFFFFFF).to(xl.uint32)
    c0 = c0.to(xl.uint32, bitcast=True)
    c1 = c1.to(xl.uint32, bitcast=True)
    c2 = c2.to(xl.uint32, bitcast=True)
    c3 = c3.to(xl.uint32, bitcast=True)
    return philox_impl(c0, c1, c2, c3, seed_lo, seed_hi, n_rounds)


def randint4x(seed, offset, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for each offset (the counter is (offset, 0, 0, 0))."""
    offset = offset.to(xl.uint32, bitcast=True)
    zero = offset * 0
    return philox(seed, offset, zero, zero, zero, n_rounds)


def randint(seed, offset, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """A block of random uint32, one per offset (the first word of `randint4x`)."""
    r0, _, _, _ = randint4x(seed, offset, n_rounds)
    return r0


def uint_to_uniform_float(x):
    """Random 32-bit integers to fp32 uniform in [0, 1)."""
    xl.static_assert(x.dtype.primitive_bitwidth == 32, "uint_to_uniform_float: xblock takes 32-bit integers")
    x = x.to(xl.int32, bitcast=True)
    x = xl.where(x < 0, -x - 1, x)
    return x * INT32_TO_UNIT


def rand(seed, offset, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """A block of fp32 uniform in [0, 1), one per offset."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


def rand4x(seed, offsets, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of fp32 uniform in [0, 1) per offset."""
    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)
    return uint_to_uniform_float(i1), uint_to_uniform_float(i2), uint_to_uniform_float(i3), uint_to_uniform_float(i4)


def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniform blocks to two standard normal blocks."""
    u1 = xl.maximum(1.0e-7, u1)
    th = TWO_PI * u2
    r = xl.sqrt(-2.0 * xl.log(u1))
    return r * xl.cos(th), r * xl.sin(th)


def randn(seed, offset, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """A block of fp32 standard normal numbers, one per offset."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    n1, _ = pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))
    return n1


def randn4x(seed, offset, n_rounds: xl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of fp32 standard normal numbers per offset."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4


__all__ = ["philox_impl", "philox", "randint4x", "randint", "uint_to_uniform_float", "rand", "rand4x",
           "pair_uniform_to_normal", "randn", "randn4x"]
