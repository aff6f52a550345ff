"""The examples on an NVIDIA GPU through the cuda target, against numpy and the sim.

Arrays go to the GPU as torch tensors and come back. The sim's outputs come from running the sim
here when MLIR is installed, else from `sim_refs.npz` (written by `tests/cuda/prepare_device.py`
where MLIR is, and carried with the cache bundle: the GPU machine has no MLIR wheels).
Skips without torch or a CUDA GPU, saying which.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

from xblock.testing import check

from .base import ExampleNumerics, example_params

SIM_REFS = os.environ.get("XBLOCK_SIM_REFS", "")
ACCUMULATE = {"colsum"}  # examples whose outputs are inputs too (atomic_add into zeros): not poisoned


def _gpu_skip_reason():
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU visible to torch"
    return None


def to_torch(args):
    import torch

    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            if a.dtype.name == "bfloat16":
                t = torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16)
            else:
                t = torch.from_numpy(np.ascontiguousarray(a))
            out.append(t.cuda())
        else:
            out.append(a)
    return out


def to_numpy(t, like: np.ndarray) -> np.ndarray:
    import torch

    t = t.detach().cpu()
    if like.dtype.name == "bfloat16":
        return t.view(torch.int16).numpy().view(like.dtype)
    return t.numpy()


def ref_key(name, size, dtype, out) -> str:
    dname = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    return f"{name}|{size}|{dname}|{out}"


_REFS = None


def sim_outputs(case, name, size, dtype):
    """name -> the sim's output array, or None when neither MLIR nor stored references are here."""
    global _REFS
    try:
        import mlir  # noqa: F401
    except ImportError:
        if not SIM_REFS or not os.path.exists(SIM_REFS):
            return None
        if _REFS is None:
            _REFS = dict(np.load(SIM_REFS, allow_pickle=False))
        return {o: _REFS[ref_key(name, size, dtype, o)].view(case.args[i].dtype)
                for o, i in case.outputs.items()}
    args = case.copy_args()
    case.run("sim", args)
    return {o: args[i] for o, i in case.outputs.items()}


class TestCudaExamples(ExampleNumerics):
    TARGET = "cuda"

    def skip_reason(self):
        return _gpu_skip_reason()

    @pytest.mark.parametrize("name,size,dtype", example_params())
    def test_example(self, name, size, dtype):
        reason = self.skip_reason()
        if reason:
            pytest.skip(reason)
        import torch

        mod = importlib.import_module("examples." + name)
        case = mod.case(size, dtype)
        host = case.copy_args()
        dev = to_torch(host)
        for i in case.outputs.values():  # poison outputs: every element must be written
            if dev[i].dtype.is_floating_point and name not in ACCUMULATE:
                dev[i].fill_(float("nan"))
        case.run("cuda", tuple(dev))
        torch.cuda.synchronize()
        got = list(host)
        for i in case.outputs.values():
            got[i] = to_numpy(dev[i], host[i])
        check(case, got)
        ref = sim_outputs(case, name, size, dtype)
        if ref is None:
            pytest.skip("checked against numpy only: no MLIR for the sim and no stored sim outputs")
        for out_name, i in case.outputs.items():
            g, w = got[i], ref[out_name]
            if g.dtype.kind in "iub":
                np.testing.assert_array_equal(g, w, err_msg=f"{out_name}: cuda vs sim")
            else:
                np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), atol=case.atol,
                                           rtol=case.rtol, err_msg=f"{out_name}: cuda vs sim")
