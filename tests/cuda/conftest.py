"""Shared fixtures of the cuda tests."""

import pytest


@pytest.fixture(scope="module")
def torch():
    """torch, or a skip when it or a CUDA GPU is missing (the launch tests need both)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to torch")
    return torch
