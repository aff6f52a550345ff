"""Host-side integer helpers kernels and launch code share (as `triton.cdiv`, `triton.next_power_of_2`)."""


def cdiv(a: int, b: int) -> int:
    """Ceiling division of two Python integers."""
    return (a + b - 1) // b


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()
