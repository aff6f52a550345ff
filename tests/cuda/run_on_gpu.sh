#!/usr/bin/env bash
# The GPU run of the cuda target, on a machine with torch and triton but no MLIR wheels.
# Prepared where MLIR is:  python -m tests.cuda.prepare_device .xblock_cache/device --bench
# Then, on the GPU machine, from the repository root (OUT: where logs go, default ./out):
#   bash tests/cuda/run_on_gpu.sh [all|numerics|bench] [extra benchmark args...]
# Cache keys hash xblock's own sources: run the same tree that compiled the bundle. When the tree
# changes under you, prepare inside a copy (.xblock_cache/device/tree) and run from that copy with
# DEVICE_DIR pointing at the bundle (see docs/BENCHMARKS.md, CUDA section).
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export XBLOCK_CACHE_DIR=${XBLOCK_CACHE_DIR:-/tmp/xblock-cache}
DEVICE_DIR=${DEVICE_DIR:-$PWD/.xblock_cache/device}
export XBLOCK_SIM_REFS=$DEVICE_DIR/sim_refs.npz
export PYTHONUNBUFFERED=1
what=${1:-all}; shift || true
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import sys, torch, triton, numpy; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)"
  python3 -c "import importlib.util as u; print('mlir importable:', u.find_spec('mlir') is not None)"
  python3 -c "from xblock.runtime.bundle import import_bundle; print('bundle entries imported:', import_bundle('$DEVICE_DIR/bundle.tar.gz'))"
} 2>&1 | tee "$OUT/env.log"
if [ "$what" = all ] || [ "$what" = numerics ]; then
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/numerics/test_cuda.py tests/cuda/test_gpu_launch.py 2>&1 | tee "$OUT/numerics.log" | tail -25
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  timeout 400 python3 benchmarks/cuda_vs_triton.py --json "$OUT/bench.json" "$@" 2>&1 | tee "$OUT/bench.log"
fi
