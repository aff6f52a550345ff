"""The Ascend cost model (xblock.profile) on every example: estimated time, roofline floor, bound pipe.

For each example's case, the kernel runs once on the AscendC CPU model and the cost model
(xblock/backends/ascend/cost.py) turns its counters into busy cycles per pipe. The figures are
estimates from documented constants, several of them assumptions, not hardware measurements.

Usage: python benchmarks/ascend_profile.py [--soc 910B3] [--examples add,softmax]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import xblock  # noqa: E402

CASES = [("add", 98432, "float32"), ("gelu", 98432, "float16"), ("softmax", (823, 781), "float32"),
         ("softmax", (4096, 1024), "float32"), ("layernorm", (97, 3001), "float32"),
         ("rmsnorm", (4096, 1024), "float16"), ("argmax", (823, 781), "float32"),
         ("cumsum", (823, 781), "float32"), ("transpose", (1024, 1024), "float32"),
         ("colsum", (3001, 130), "float32"), ("matmul", (512, 512, 512), "float16")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--soc", default="910B3")
    ap.add_argument("--examples", help="comma-separated example names (default: all)")
    a = ap.parse_args()
    only = set(a.examples.split(",")) if a.examples else None
    print("| kernel | case | estimate (us) | floor (us) | ratio | bound | GM bytes / minimum | B per DataCopy "
          "| DataCopy calls | scalar accesses (UB + GM) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, size, dtype in CASES:
        if only and name not in only:
            continue
        case = importlib.import_module("examples." + name).case(size, dtype)
        p = xblock.profile(case.kernel, case.grid, *case.copy_args(), soc=a.soc, **case.meta)
        c = p.counters
        moved = c["gm_read_bytes"] + c["gm_write_bytes"]
        shape = "x".join(map(str, size)) if isinstance(size, tuple) else str(size)
        print(f"| {name} | {dtype} {shape} | {p.estimate_us:.1f} | {p.floor_us:.1f} | {p.ratio:.1f}x | {p.bound} | "
              f"{moved / c['min_gm_bytes']:.2f}x | {c['bytes_per_datacopy']:.0f} | {c['datacopy_calls']} | "
              f"{c['scalar_ub_accesses'] + c['scalar_gm_accesses']} |", flush=True)


if __name__ == "__main__":
    main()
