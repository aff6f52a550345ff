"""Host-side helpers kernels and launch code share: integer helpers (as `triton.cdiv`,
`triton.next_power_of_2`) and the grid of a launch (`normalize_grid`, used by the runtime and by
the targets' exports alike)."""

from .errors import GridError


def cdiv(a: int, b: int) -> int:
    """Ceiling division of two Python integers."""
    return (a + b - 1) // b


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


GRID_LIMITS = (2**31 - 1, 65535, 65535)  # CUDA's (and Triton's) largest grid, kept on every target


def normalize_grid(grid, meta) -> tuple:
    """A launch's grid as three non-negative ints: `grid` an int, a sequence of 1 to 3 ints, or a
    callable of the meta-parameters `meta` returning one; a GridError (at the launch) otherwise."""
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, int):
        grid = (grid,)
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__"):
        raise GridError(f"grid must be 1 to 3 non-negative integers, got {grid!r}")
    for g in grid:
        if isinstance(g, float) or not hasattr(g, "__index__"):
            raise GridError(f"grid sizes must be integers (use triton.cdiv), got {g!r} in {tuple(grid)}")
    grid = tuple(int(g) for g in grid)
    if not 1 <= len(grid) <= 3 or any(g < 0 for g in grid):
        raise GridError(f"grid must be 1 to 3 non-negative sizes, got {grid}")
    for axis, (g, most) in enumerate(zip(grid, GRID_LIMITS)):
        if g > most:
            raise GridError(f"grid axis {axis} has {g} programs, more than the {most} CUDA allows on it "
                            f"(every target keeps CUDA's limits: x < 2**31, y and z < 2**16)")
    return grid + (1,) * (3 - len(grid))
