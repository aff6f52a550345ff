"""Tensor descriptors on cuda, without a GPU: on sm_90 they reach Triton as its descriptor ops and the
PTX uses TMA (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`) as Triton's own compile of the
same kernel does; on sm_80 (no TMA) the frontend lowers them to masked pointer accesses, as Triton's
RewriteTensorDescriptorToPointer does there. Host `TensorDescriptor` arguments become Triton's
`!tt.tensordesc` arguments, and the launcher regroups their parts for Triton's launcher."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

import xblock
from tests.conformance.test_tensor_descriptors import (
    gather_rows,
    host_descriptor_copy,
    matmul_descriptors,
    overlapping_counts,
    split_k_matmul,
)
from xblock.backends.cuda.launch import group_descriptors, triton_signature
from xblock.backends.cuda.precompile import TensorSpec, precompile
from xblock.runtime.args import TensorDescriptor

triton = pytest.importorskip("triton")
pytest.importorskip("mlir")  # compiling needs the MLIR bindings
tl = triton.language

TMA_LOAD = "cp.async.bulk.tensor"
TMA_REDUCE = "cp.reduce.async.bulk.tensor"
MATMUL = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)


def _matmul(arch, dtype=np.float16):
    a, b, c = np.zeros((64, 96), dtype), np.zeros((96, 48), dtype), np.zeros((64, 48), dtype)
    return precompile(matmul_descriptors, (a, b, c, 64, 48, 96), MATMUL, arch=arch)


def _host_copy(arch, shape=(33, 32), block=(32, 16)):
    x, y = TensorSpec(shape, "float32"), TensorSpec(shape, "float32")
    strides = [shape[1], 1]
    return precompile(host_descriptor_copy, (TensorDescriptor(x, shape, strides, block),
                                             TensorDescriptor(y, shape, strides, block), 2.0),
                      {"BM": block[0], "BN": block[1]}, arch=arch)


def _tma_instructions(ptx: str) -> set:
    return set(re.findall(r"cp\.(?:reduce\.)?async\.bulk\.tensor[\w.:]*", ptx))


def test_in_kernel_descriptors_use_tma_on_sm90():
    ck = _matmul(90)
    ttir = ck.asm["ttir"]
    assert ttir.count("tt.make_tensor_descriptor") == 3 and "tt.descriptor_load" in ttir
    assert "tt.descriptor_store" in ttir and "tt.load" not in ttir
    assert TMA_LOAD in ck.asm["ptx"] and ck.asm["cubin"][:4] == b"\x7fELF"
    # each program writes its descriptors into global scratch: the launcher must provide it
    assert ck.metadata["triton"]["global_scratch_size"] >= 3 * 128
    assert ck.metadata["host_descriptors"] == []


def test_in_kernel_descriptors_match_tritons_own_tma_instructions():
    ck = _matmul(90)
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    sig.update({k: "constexpr" for k in MATMUL})
    theirs = triton.compile(ASTSource(matmul_descriptors, sig, constexprs=MATMUL), target=GPUTarget("cuda", 90, 32))
    assert _tma_instructions(ck.asm["ptx"]) == _tma_instructions(theirs.asm["ptx"]) != set()


def test_host_descriptors_are_tensordesc_arguments_on_sm90():
    ck = _host_copy(90)
    ttir = ck.asm["ttir"]
    head = next(line for line in ttir.splitlines() if "tt.func public" in line)
    assert "%x_desc_base: !tt.tensordesc<tensor<32x16xf32>>" in head
    assert "%y_desc_base: !tt.tensordesc<tensor<32x16xf32>>" in head
    assert "%x_desc_shape0: i32" in head and "%x_desc_stride0: i64" in head  # Triton's layout: desc, shape, strides
    assert "tt.make_tensor_descriptor" not in ttir  # the host builds the CUtensorMap
    assert TMA_LOAD in ck.asm["ptx"]
    meta = ck.metadata
    assert meta["triton"]["global_scratch_size"] == 0 and len(meta["triton"]["tensordesc_meta"]) == 2
    assert meta["host_descriptors"] == [
        {"index": 0, "ndim": 2, "padding": "zero", "signature": "tensordesc<fp32[32, 16]>"},
        {"index": 5, "ndim": 2, "padding": "zero", "signature": "tensordesc<fp32[32, 16]>"}]


def test_descriptor_atomic_add_is_a_tma_reduction_on_sm90():
    a, b, c = np.zeros((64, 96), np.float32), np.zeros((96, 48), np.float32), np.zeros((64, 48), np.float32)
    ck = precompile(split_k_matmul, (a, b, c, 64, 48, 96), MATMUL, arch=90)
    assert "tt.descriptor_reduce add" in ck.asm["ttir"] and "tt.atomic_rmw" not in ck.asm["ttir"]
    assert TMA_REDUCE in ck.asm["ptx"]
    counts = np.zeros(64, np.int32)
    ck = precompile(overlapping_counts, (counts, 64, 0, 16), {"BM": 16}, arch=90)
    assert TMA_REDUCE in ck.asm["ptx"]


@triton.jit
def _half_max(x_desc, BM: tl.constexpr, BN: tl.constexpr):
    x_desc.atomic_max([0, 0], tl.full((BM, BN), 1.0, tl.float16))


def test_half_atomic_max_needs_tma():
    x = TensorSpec((64, 64), "float16")
    d = TensorDescriptor(x, [64, 64], [64, 1], [64, 64])
    ck = precompile(_half_max, (d,), {"BM": 64, "BN": 64}, arch=90)
    assert "tt.descriptor_reduce max" in ck.asm["ttir"] and TMA_REDUCE in ck.asm["ptx"]
    with pytest.raises(xblock.CompilationError, match=r"test_tma\.py:\d+:.*needs native TMA \(cuda from sm_90\)"):
        precompile(_half_max, (d,), {"BM": 64, "BN": 64}, arch=80)


def test_sm80_falls_back_to_pointer_accesses():
    for ck in (_matmul(80), _host_copy(80)):
        ttir, ptx = ck.asm["ttir"], ck.asm["ptx"]
        assert "tensordesc" not in ttir and "tt.descriptor_load" not in ttir
        assert "tt.load" in ttir and "tt.store" in ttir
        assert not _tma_instructions(ptx) and ("ld.global" in ptx or "cp.async.cg.shared.global" in ptx)
        assert ck.metadata["host_descriptors"] == [] and ck.metadata["triton"]["global_scratch_size"] == 0


@triton.jit
def _carried_descriptor(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A descriptor reassigned in a loop (rebuilt from its parts there) and chosen in an `if`."""
    desc = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    out = tl.make_tensor_descriptor(y_ptr, [M, N], [N, 1], [BM, BN])
    acc = tl.zeros((BM, BN), tl.float32)
    for i in range(0, 4):
        acc += desc.load([i * BM, 0])
        desc = tl.make_tensor_descriptor(x_ptr, [M - i, N], [N, 1], [BM, BN])
    if M > 64:
        out = tl.make_tensor_descriptor(y_ptr + N, [M - 1, N], [N, 1], [BM, BN])
    out.store([0, 0], acc + desc.load([0, 0]))


def test_descriptors_carried_through_control_flow():
    x, y = np.zeros((256, 64), np.float32), np.zeros((256, 64), np.float32)
    ck = precompile(_carried_descriptor, (x, y, 256, 64), {"BM": 32, "BN": 64}, arch=90)
    assert TMA_LOAD in ck.asm["ptx"] and "tt.descriptor_store" in ck.asm["ttir"]


def test_gather_through_a_host_descriptor_keeps_its_base_a_pointer():
    @triton.jit
    def gather_host(x_desc, idx_ptr, out_ptr, R: tl.constexpr, BN: tl.constexpr):
        rows = tl.load(idx_ptr + tl.arange(0, R))
        tile = x_desc.gather(rows, 0)
        x_desc.store([0, 0], tl.zeros((1, BN), tl.float32))
        tl.store(out_ptr + tl.arange(0, R)[:, None] * BN + tl.arange(0, BN)[None, :], tile)

    x = TensorSpec((20, 32), "float32")
    d = TensorDescriptor(x, [20, 32], [32, 1], [1, 32])
    ck = precompile(gather_host, (d, np.zeros(8, np.int32), np.zeros((8, 32), np.float32)), {"R": 8, "BN": 32},
                    arch=90)
    assert "%x_desc_base: !tt.ptr<f32>" in ck.asm["ttir"]  # read as a pointer: made in the kernel instead
    assert "tt.make_tensor_descriptor" in ck.asm["ttir"] and ck.metadata["host_descriptors"] == []
    assert TMA_LOAD in ck.asm["ptx"] or "st.global" in ck.asm["ptx"]


def test_gather_stays_a_pointer_gather_on_sm90():
    x, rows, out = np.zeros((20, 40), np.float32), np.zeros(8, np.int32), np.zeros((20, 40), np.float32)
    ck = precompile(gather_rows, (x, rows, out, 20, 40, 30), {"R": 8, "BN": 16}, arch=90)
    assert "tt.descriptor_gather" not in ck.asm["ttir"] and "tt.load" in ck.asm["ttir"]


def test_cuda_covers_the_descriptor_ops():
    from xblock.backends import get_backend
    from xblock.dialects.xb import NATIVE_OPS

    covered, _ = get_backend("cuda").coverage()
    assert set(NATIVE_OPS["tensor_descriptors"]) <= covered


# ---------------------------------------------------------------------------------------------- launcher
class _Base:
    def __init__(self, ptr, size=4):
        self.ptr, self.size = ptr, size

    def data_ptr(self):
        return self.ptr

    def element_size(self):
        return self.size


DESCS = [{"index": 1, "ndim": 2, "padding": "nan", "signature": "tensordesc<fp32[32, 16]>"}]
NAMES = ["n", "x_desc_base", "x_desc_shape0", "x_desc_shape1", "x_desc_stride0", "x_desc_stride1", "s"]


def test_launcher_signature_and_arguments_group_each_descriptor():
    types = ["i32", "*fp32", "i32", "i32", "i64", "i64", "fp32"]
    assert triton_signature(types, DESCS) == ["i32", "tensordesc<fp32[32, 16]>", "fp32"]
    base = _Base(0x1000)
    n, d, s = group_descriptors([7, base, 33, 20, 20, 1, 2.0], DESCS, NAMES, ValueError)
    assert (n, s) == (7, 2.0)
    assert (d.base, d.shape, d.strides, d.padding) == (base, [33, 20], [20, 1], "nan")


def test_launcher_refuses_what_tma_cannot_address():
    def error(msg):
        return xblock.LaunchError("k.py", 3, "k", msg)

    with pytest.raises(xblock.LaunchError, match="argument 'x_desc'.*16-byte aligned"):
        group_descriptors([7, _Base(0x1000), 33, 17, 17, 1, 2.0], DESCS, NAMES, error)  # 17 * 4 bytes
    with pytest.raises(xblock.LaunchError, match="k.py:3"):
        group_descriptors([7, _Base(0x1004), 33, 16, 16, 1, 2.0], DESCS, NAMES, error)


def test_triton_reads_the_grouped_descriptor():
    """The grouped object has what Triton 3.6's `make_tensordesc_arg` reads (without building the map)."""
    from triton.backends.nvidia import driver

    base = _Base(0x1000)
    (d,) = group_descriptors([base, 33, 16, 16, 1], [{**DESCS[0], "index": 0}], NAMES[1:6], ValueError)
    assert driver.make_tensordesc_arg(d, None) == [base, 33, 16, 16, 1, True, 33, 16, 16, 1]
    assert SimpleNamespace(**vars(d)) == d
