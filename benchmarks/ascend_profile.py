"""The Ascend cost model (xblock.profile) on every example: estimated time, roofline floor, bound pipe.

For each example's case, the kernel runs on the AscendC CPU model and the cost model
(xblock/backends/ascend/model/cost.py) turns its counters into busy cycles per pipe. The figures are
estimates from documented constants, several of them assumptions, not hardware measurements.

Each case runs twice: "before" with the structural optimisations of the ascend backend switched off
(`BEFORE`: one program per instance, every load from GM each time it is made) and "after" with the
defaults.

Usage: python benchmarks/ascend_profile.py [--soc 910B3] [--examples add,softmax] [--no-before]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import xblock  # noqa: E402

# (example, size, dtype, meta overrides)
CASES = [("add", 98432, "float32", {}), ("gelu", 98432, "float16", {}), ("softmax", (823, 781), "float32", {}),
         ("softmax", (4096, 1024), "float32", {}), ("layernorm", (97, 3001), "float32", {}),
         ("layernorm", (97, 3001), "float32", {"BLOCK": 512}), ("rmsnorm", (4096, 1024), "float16", {}),
         ("argmax", (823, 781), "float32", {}), ("cumsum", (823, 781), "float32", {}),
         ("transpose", (1024, 1024), "float32", {}), ("colsum", (3001, 130), "float32", {}),
         ("matmul", (512, 512, 512), "float16", {}),
         ("matmul", (1024, 1024, 1024), "float16", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 256})]
BEFORE = {"coarsen": False, "resident": False}  # launch options that switch the optimisations off


def _row(p) -> tuple:
    c = p.counters
    moved = c["gm_read_bytes"] + c["gm_write_bytes"]
    return (f"{p.estimate_us:.1f}", p.bound, f"{moved / c['min_gm_bytes']:.2f}x",
            f"{c['hbm_bytes'] / c['min_gm_bytes']:.2f}x", f"{c['bytes_per_datacopy']:.0f}",
            str(c["scalar_ub_accesses"] + c["scalar_gm_accesses"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--soc", default="910B3")
    ap.add_argument("--examples", help="comma-separated example names (default: all)")
    ap.add_argument("--no-before", action="store_true", help="only the defaults")
    a = ap.parse_args()
    only = set(a.examples.split(",")) if a.examples else None
    head = "| kernel | case | estimate (us) | floor (us) | ratio | bound | GM bytes / minimum | HBM bytes / minimum " \
           "| B per DataCopy | scalar accesses (UB + GM) |"
    if not a.no_before:
        head += " before: estimate | bound | GM / min | HBM / min | B per DataCopy | scalar accesses |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for name, size, dtype, extra in CASES:
        if only and name not in only:
            continue
        case = importlib.import_module("examples." + name).case(size, dtype)
        meta = dict(case.meta, **extra)
        grid = case.grid
        if name == "matmul" and extra:  # other tiles: as many programs as tiles
            grid = (xblock.cdiv(size[0], meta["BLOCK_M"]) * xblock.cdiv(size[1], meta["BLOCK_N"]),)
        p = xblock.profile(case.kernel, grid, *case.copy_args(), soc=a.soc, **meta)
        shape = "x".join(map(str, size)) if isinstance(size, tuple) else str(size)
        label = f"{dtype} {shape}" + "".join(f", {k} {v}" for k, v in extra.items())
        est, bound, gm, hbm, per_copy, scalar = _row(p)
        line = (f"| {name} | {label} | {est} | {p.floor_us:.1f} | {p.ratio:.1f}x | {bound} | {gm} | {hbm} | {per_copy} "
                f"| {scalar} |")
        if not a.no_before:
            q = xblock.profile(case.kernel, grid, *case.copy_args(), soc=a.soc, **meta, **BEFORE)
            line += " " + " | ".join(_row(q)) + " |"
        print(line, flush=True)


if __name__ == "__main__":
    main()
