"""Shared test setup: a per-session cache directory and the examples importable as `examples.*`."""

import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ.setdefault("XBLOCK_CACHE_DIR", tempfile.mkdtemp(prefix="xblock-test-cache-"))

import pytest  # noqa: E402

# The longest tests on the 2-core VM, each repeating what a faster test already covers (one export
# run per example where three suffice, ascend sorts of 16 lanes beside those of 2 to 8, the process
# race, the wheel install...). `make test` leaves them out to stay near ten minutes; `make
# test-slow` runs them, and CI (`.ci/run`) runs both. A node id matches by prefix.
SLOW = (
    *(f"tests/ascend/export/test_export_run.py::test_exported_example_builds_runs_and_matches_its_golden[{n}]"
      for n in ("cumsum", "gelu", "colsum", "argmax", "rmsnorm", "transpose", "softmax", "matmul",
                "triton.layernorm", "triton.softmax", "triton.add")),
    "tests/conformance/test_shape_ops.py::test_sort_topk[ascend-16-",
    "tests/conformance/test_shape_ops.py::test_standard_helpers[ascend]",
    "tests/runtime/test_cache_faults.py::test_eight_processes_compile_an_uncompiled_kernel_once",
    "tests/unit/test_pipeline.py::test_a_hand_edited_ascendc_source_is_compiled_and_run",
    "tests/install/test_wheel.py::",
    "tests/unit/test_triton_autotune.py::test_compile_with_config_on_other_targets[ascend]",
    "tests/conformance/test_autotuned_matmul.py::test_autotuned_matmul_on_ascend[shape1]",
    "tests/conformance/test_large_offsets.py::test_int64_offsets_past_2_31[ascend]",
    # the row cache, resident loads and vector row reductions at every size: make test keeps the
    # boundary sizes (1 and 513 columns, 97 rows; one row length per dtype), the rest is here
    *(f"tests/ascend/plan/test_row_cache.py::test_layernorm_fp32[{c}-" for c in ("511", "512", "3001")),
    *(f"tests/ascend/plan/test_row_cache.py::test_layernorm_half[{r}-" for r in ("7-1023", "97-3001")),
    *(f"tests/ascend/vector/test_row_vectors.py::test_row_sum_max_min_match_numpy[{n}-" for n in ("8", "64", "1000")),
    *(f"tests/ascend/vector/test_row_vectors.py::test_softmax_of_rows_matches_numpy[{n}-" for n in ("8", "64")),
    "tests/ascend/vector/test_row_vectors.py::test_rmsnorm_of_half_rows_matches_numpy[1000-",
    *(f"tests/ascend/plan/test_resident_loads.py::test_rmsnorm_numerics[{n}-" for n in ("3-127", "45-128")),
    *(f"tests/ascend/plan/test_resident_loads.py::test_bias_rows[float16-{n}-" for n in ("7-130", "45-64", "101-33")),
    *(f"tests/ascend/plan/test_row_cache.py::test_different_others[{n}-" for n in ("63", "200")),
    # masked loads without `other` on ascend: make test keeps the boundary shapes of each form
    *(f"tests/conformance/test_masked_loads.py::test_every_dtype_reads_zero[{s}-{d}-ascend]"
      for s in ("37-32-0", "200-64-5", "90-64-3")
      for d in ("float32", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool")),
    *(f"tests/conformance/test_masked_loads.py::test_cumsum_part_sums_of_a_partial_block[256-{d}-ascend]"
      for d in ("float32", "float16", "bfloat16", "int32")),
    *(f"tests/conformance/test_masked_loads.py::test_2d_row_sums_and_tiles[16-32-{d}-ascend]"
      for d in ("float32", "float16", "int32", "int8", "bool")),
    *(f"tests/conformance/test_masked_loads.py::test_block_pointers_without_padding_option[16-16-{d}-ascend]"
      for d in ("float32", "float16", "int32", "int8")),
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
