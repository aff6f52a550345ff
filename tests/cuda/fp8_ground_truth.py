"""What Triton itself computes for float8 casts on a GPU: the record xblock's fp8 tests compare with.

Run where there is a GPU, torch and Triton (xblock is not needed):
    OUT=dir python tests/cuda/fp8_ground_truth.py
writes dir/gt.npz (every result), dir/fp8_sm90.npz (the part tests/conformance/golden/ keeps) and
dir/meta.json (the conversions Triton refuses, each tried in a process of its own: some abort it).
The f32 inputs are sign x exponent x the top 10 mantissa bits x 6 patterns of the low 13 bits (exact
values, the ties of every fp8 format and the values next to them), then 200,000 random bit patterns.
"""

import json
import os
import subprocess
import sys

import numpy as np
import torch
import triton
import triton.language as tl

OUT = os.environ.get("OUT", ".")
DEV = os.environ.get("GT_DEV", "cuda")  # "cpu" with TRITON_INTERPRET=1 tries the script without a GPU
EXPONENTS = list(range(96, 161)) + [0, 1, 254, 255]
GOLDEN_EXPONENTS = list(range(104, 146)) + [0, 1, 254, 255]
FP8 = {"e4nv": tl.float8e4nv, "e5": tl.float8e5, "e4b15": tl.float8e4b15, "e4b8": tl.float8e4b8,
       "e5b16": tl.float8e5b16}
TYPES = {"f16": tl.float16, "bf16": tl.bfloat16, "f32": tl.float32, "f64": tl.float64, **FP8}


def f32_inputs():
    sign = np.array([0, 1], np.uint32)
    exps = np.array(EXPONENTS, np.uint32)
    top = np.arange(1024, dtype=np.uint32)
    low = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    bits = (sign[:, None, None, None] << 31) | (exps[None, :, None, None] << 23) | (top[None, None, :, None] << 13) \
        | low[None, None, None, :]
    noise = np.random.default_rng(0).integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.ravel(), noise]).view(np.float32)


@triton.jit
def narrow(x_ptr, o_ptr, n, DST: tl.constexpr, RND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if RND == "rtz":
        y = x.to(DST, fp_downcast_rounding="rtz")
    else:
        y = x.to(DST)
    if DST.primitive_bitwidth == 8:
        tl.store(o_ptr + offs, y.to(tl.uint8, bitcast=True), mask=m)
    else:
        tl.store(o_ptr + offs, y.to(tl.int16, bitcast=True), mask=m)


@triton.jit
def widen(x_ptr, o_ptr, n, SRC: tl.constexpr, DST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m).to(SRC, bitcast=True).to(DST), mask=m)


@triton.jit
def one_cast(x_ptr, o_ptr, SRC: tl.constexpr, DST: tl.constexpr, RND: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if SRC.primitive_bitwidth == 8:
        x = x.to(SRC, bitcast=True)
    else:
        x = x.to(SRC)
    if RND == "rtz":
        y = x.to(DST, fp_downcast_rounding="rtz")
    else:
        y = x.to(DST)
    tl.store(o_ptr + tl.arange(0, 16), y.to(tl.float32))


def run_narrow(values, as_type, dst, rnd):
    x = torch.from_numpy(values.view(np.int16) if values.dtype.itemsize == 2 else values).to(DEV)
    if as_type is not None:
        x = x.view(as_type)
    n = x.numel()
    o = torch.empty(n, dtype=torch.uint8 if TYPES[dst].primitive_bitwidth == 8 else torch.int16, device=DEV)
    narrow[(triton.cdiv(n, 1024),)](x, o, n, DST=TYPES[dst], RND=rnd, BLOCK=1024)
    return o.cpu().numpy()


def main():
    res, errors = {}, {}
    f32 = f32_inputs()
    all16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    res["f32_in"] = f32
    for dst in ("e4nv", "e5", "e4b15"):
        for name, values, as_type in (("f32", f32, None), ("f16", all16, torch.float16),
                                      ("bf16", all16, torch.bfloat16)):
            try:
                res[f"{name}_to_{dst}"] = run_narrow(values, as_type, dst, "rtne")
            except Exception as e:  # bf16 -> fp8e4b15: Triton's routine takes f16 and f32 only
                errors[f"{name}_to_{dst}"] = repr(e)[:400]
    for dst in ("e5", "f16", "bf16"):
        res[f"f32_to_{dst}_rtz"] = run_narrow(f32, None, dst, "rtz")
    b = torch.arange(256, dtype=torch.int32).to(torch.uint8).to(DEV)
    for src in ("e4nv", "e5", "e4b15"):
        for dst, dtype, bits in (("f16", torch.float16, torch.int16), ("bf16", torch.bfloat16, torch.int16),
                                 ("f32", torch.float32, torch.int32)):
            o = torch.empty(256, dtype=dtype, device=DEV)
            widen[(1,)](b, o, 256, SRC=FP8[src], DST=TYPES[dst], BLOCK=256)
            res[f"{src}_to_{dst}"] = o.view(bits).cpu().numpy()
    np.savez_compressed(os.path.join(OUT, "gt.npz"), **res)
    keep = np.isin(np.array(EXPONENTS), np.array(GOLDEN_EXPONENTS))
    idx = np.flatnonzero(np.broadcast_to(keep[None, :, None, None], (2, len(EXPONENTS), 1024, 6)).ravel())
    golden = {k: res[k][idx] for k in ("f32_to_e4nv", "f32_to_e5", "f32_to_e4b15", "f32_to_e5_rtz")}
    golden.update({k: v for k, v in res.items() if not k.startswith("f32") and k != "bf16_to_e4b15"})
    np.savez_compressed(os.path.join(OUT, "fp8_sm90.npz"), **golden)
    refused = {}
    for case in ("f16_e4nv_rtz", "bf16_e5_rtz", "f16_e5_rtz", "f32_e4nv_rtz", "f64_e4nv", "e4nv_f64", "e4nv_e5",
                 "bf16_e4b15", "f32_e4b8", "f32_e5b16"):
        p = subprocess.run([sys.executable, __file__, case], capture_output=True, text=True, timeout=120)
        refused[case] = {"rc": p.returncode, "out": (p.stdout + p.stderr)[-600:]}
    meta = {"errors": errors, "refused": refused, "torch": torch.__version__, "triton": triton.__version__,
            "capability": torch.cuda.get_device_capability() if DEV == "cuda" else None}
    with open(os.path.join(OUT, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def one(case: str):
    src, dst, *rnd = case.split("_")
    xin = torch.zeros(16, dtype=torch.uint8 if src in FP8 else torch.float32, device=DEV)
    o = torch.empty(16, dtype=torch.float32, device=DEV)
    one_cast[(1,)](xin, o, SRC=TYPES[src], DST=TYPES[dst], RND=rnd[0] if rnd else "rtne")
    print("compiled and ran", o[:2].cpu())


if __name__ == "__main__":
    one(sys.argv[1]) if len(sys.argv) > 1 else main()
