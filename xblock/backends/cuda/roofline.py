"""The cuda target's roofline constants (an NVIDIA H200 SXM), for the autotuner's cost model
(`backends/common/roofline.py`).

From NVIDIA's H200 datasheet (dense figures, no sparsity): 132 SMs at up to 1.98 GHz, HBM3e at
4.8 TB/s, 67 TFLOPS fp32 and fp64 (tensor), 989 TFLOPS fp16/bf16, 495 TFLOPS tf32, 1979 TFLOPS
fp8 and 1979 TOPS int8 on the tensor cores; per SM below. The per-SM bandwidth and the program
cost are assumptions. Other GPUs get the same constants: they rank configs of one kernel, and
the ratios of these figures are alike across recent NVIDIA parts.
"""

from __future__ import annotations

from ..common.roofline import Roofline

SMS = 132
BANDWIDTH = 4.8e12  # B/s, HBM3e
SM_BANDWIDTH = 1.5e11  # assumption: B/s one SM draws when few programs run (latency-bound loads)
LANE_OPS = 128 * 1.98e9  # lane ops/s of one SM: 128 fp32 lanes a cycle
TENSOR = 989.4e12 / SMS  # fp16/bf16 dense tensor-core flop/s of one SM
DOT_FLOPS = {
    ("f16", ""): TENSOR, ("bf16", ""): TENSOR,
    ("f32", "tf32"): TENSOR / 2, ("f32", "tf32x3"): TENSOR / 6, ("f32", "ieee"): 2 * LANE_OPS, ("f32", ""): TENSOR / 2,
    ("f8E4M3FN", ""): 2 * TENSOR, ("f8E5M2", ""): 2 * TENSOR, ("i8", ""): 2 * TENSOR,
    ("f64", ""): 66.9e12 / SMS,
    ("", ""): TENSOR,
}
PROGRAM_S = 0.1e-6  # assumption: a program's start and prologue, amortized over the programs an SM holds


def roofline() -> Roofline:
    return Roofline("NVIDIA H200 SXM (constants of xblock/backends/cuda/roofline.py)", SMS, BANDWIDTH, SM_BANDWIDTH,
                    LANE_OPS, DOT_FLOPS, PROGRAM_S, 0.0, 1.0)
