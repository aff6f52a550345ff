"""GM bytes, vector instructions and scalar accesses of each example on the AscendC CPU model.

For each example's case: the bytes the generated kernel moved between GM and UB (from the model's
counters) against the minimum (each input read once, each output written once), and the UB the
kernel planned (from the generated source's header) against the SoC's usable UB.

Usage: python benchmarks/ascend_counts.py [--soc 910B3]
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CASES = [("add", 98432, "float32"), ("softmax", (823, 781), "float32"), ("layernorm", (97, 3001), "float32"),
         ("rmsnorm", (33, 4096), "float16"), ("gelu", 98432, "float16"), ("argmax", (823, 781), "float32"),
         ("cumsum", (823, 781), "float32"), ("transpose", (300, 200), "float32"),
         ("colsum", (3001, 130), "float32")]


def minimum_bytes(case) -> int:
    """Every array argument moved once: inputs read once, outputs written once (whole arrays, so
    softmax's row padding of 3 elements counts here although the kernel never reads it)."""
    return sum(a.nbytes for a in case.args if isinstance(a, np.ndarray))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--soc", default="910B3")
    soc = ap.parse_args().soc
    print("| kernel | case | GM bytes | minimum | ratio | UB planned (B) | vector instrs | scalar UB accesses |")
    print("|---|---|---|---|---|---|---|---|")
    for name, size, dtype in CASES:
        mod = importlib.import_module("examples." + name)
        case = mod.case(size, dtype)
        ck = case.kernel.warmup(*case.args, target="ascend", soc=soc, **case.meta)
        args = case.copy_args()
        case.kernel[case.grid](*args, target="ascend", soc=soc, **case.meta)
        c = ck.launcher.last_counters  # the model's counters of that launch
        moved = c["gm_read_bytes"] + c["gm_write_bytes"]
        low = minimum_bytes(case)
        ub = re.search(r"; (\d+) of (\d+) B\.", ck.asm["cpp"])
        print(f"| {name} | {dtype} {size} | {moved} | {low} | {moved / low:.2f}x | "
              f"{ub.group(1) + ' / ' + ub.group(2) if ub else '?'} | {c['vector_instructions']} | "
              f"{c['scalar_ub_accesses']} |")


if __name__ == "__main__":
    main()
