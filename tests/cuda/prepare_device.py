"""Prepare a GPU run on a machine without MLIR: precompile, record sim outputs, bundle them.

Usage (where MLIR is installed; no GPU needed):
    python -m tests.cuda.prepare_device OUT_DIR [--bench] [--snapshot]
writes OUT_DIR/bundle.tar.gz (the cache entries of every numerics case for sm_90, plus the
benchmark's kernels with --bench) and OUT_DIR/sim_refs.npz (the sim's outputs of every case).
On the GPU machine: `import_bundle("OUT_DIR/bundle.tar.gz")`, then
`XBLOCK_SIM_REFS=OUT_DIR/sim_refs.npz pytest tests/numerics/test_cuda.py` (tests/cuda/run_on_gpu.sh does both).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from xblock.runtime.bundle import export_bundle

from ..numerics.test_cuda import ref_key
from .support import all_cases, compile_case


def snapshot(out: str, argv) -> int:
    """Copy the tree to OUT/tree and prepare from there: cache keys hash xblock's sources, so the
    GPU run must use the very sources that compiled the bundle (run from OUT/tree there)."""
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[2]
    tree = Path(out).resolve() / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    for d in ("xblock", "examples", "tests", "benchmarks"):
        shutil.copytree(root / d, tree / d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    args = [a for a in argv if a != "--snapshot"]
    args[args.index(out)] = str(Path(out).resolve())
    return subprocess.run([sys.executable, "-m", "tests.cuda.prepare_device", *args], cwd=tree).returncode


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--bench", action="store_true", help="also precompile benchmarks/cuda_vs_triton.py")
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--snapshot", action="store_true", help="prepare inside a copy of the tree, OUT/tree")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    if a.snapshot:
        return snapshot(a.out, argv)
    cache = os.environ.setdefault("XBLOCK_CACHE_DIR", tempfile.mkdtemp(prefix="xblock-prep-"))
    refs = {}
    t0 = time.time()
    for name, size, dtype in all_cases():
        mod = importlib.import_module("examples." + name)
        case = mod.case(size, dtype)
        compile_case(case, {"arch": a.arch})
        args = case.copy_args()
        case.run("sim", args)
        for out, i in case.outputs.items():
            arr = np.ascontiguousarray(args[i])
            refs[ref_key(name, size, dtype, out)] = arr.view(f"u{arr.dtype.itemsize}") if arr.dtype.name == "bfloat16" \
                else arr
    print(f"numerics cases compiled and simulated in {time.time() - t0:.1f} s")
    from .test_gpu_launch import precompile_for_tests

    precompile_for_tests()
    if a.bench:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
        import cuda_vs_triton

        t0 = time.time()
        cuda_vs_triton.precompile(arch=a.arch)
        print(f"benchmark kernels compiled in {time.time() - t0:.1f} s")
    np.savez_compressed(os.path.join(a.out, "sim_refs.npz"), **refs)
    n = export_bundle(os.path.join(a.out, "bundle.tar.gz"), targets={"cuda"}, cache_dir=cache)
    print(f"{n} cuda kernels bundled from {cache} into {a.out}/bundle.tar.gz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
