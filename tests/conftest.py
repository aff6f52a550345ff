"""Shared test setup: a per-session cache directory and the examples importable as `examples.*`."""

import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
if "XBLOCK_CACHE_DIR" not in os.environ:  # make test names one; a plain pytest run gets its own
    os.environ["XBLOCK_CACHE_DIR"] = tempfile.mkdtemp(prefix="xblock-test-cache-")

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
    # ascend's shifts: each (count, constant) is a build; make test keeps int32, uint16 and int8
    *(f"tests/ascend/lower/test_bitwise.py::test_shifts_by_a_block_a_scalar_and_a_constant[{d}-ascend]"
      for d in ("uint32", "int16")),
    "tests/ascend/lower/test_bitwise.py::test_int8_shifts_by_a_scalar[uint8-ascend]",
    # permutes of rank-3 blocks with unit axes: make test keeps the identity and the reversal of each
    # shape, and every order of the shapes without unit axes
    *(f"tests/ascend/vector/test_permute.py::test_permute3_f32[shape{s}-order{o}]"
      for s in (0, 1, 2, 4) for o in (1, 2, 3, 4)),
    *(f"tests/ascend/vector/test_permute.py::test_permute4_and_reshape[{s}-{d}]"
      for s in ("shape1", "shape2") for d in ("float16", "int32")),
    *(f"tests/ascend/vector/test_permute.py::test_broadcast3[{s}-{d}]"
      for s in ("shape0", "shape2") for d in ("float16", "int32")),
    # one more of the largest builds each: every cast pair at n = 1 (n = 63 and 65 stay), the -O2 UBSan
    # build (the wrap tests stay), an autotuned matmul shape, a sort key type, random streams' sizes
    "tests/ascend/vector/test_casts_all.py::test_every_cast[1]",
    "tests/ascend/emit/test_int32_wrap.py::test_no_undefined_behaviour_at_o2_under_ubsan",
    "tests/conformance/test_autotuned_matmul.py::test_autotuned_matmul_on_ascend[shape2]",
    "tests/conformance/test_sort_topk.py::test_sort_topk[int32-32-8-ascend]",
    "tests/ascend/vector/test_vector_sort.py::test_outside_the_vector_sort_stays_scalar[int32-32]",
    *(f"tests/conformance/test_random.py::test_rand_randn_randint[{n}-ascend]" for n in (1, 256)),
    *(f"tests/ascend/vector/test_column_accesses.py::test_no_lane_by_lane_access[64-64-{d}-"
      for d in ("float16", "int32")),
    # Cube program joining and the attention row split: make test keeps a ragged and an aligned K of each
    # dtype, three of the five program maps, two of the three orders, seq 100 of each attention tile
    *(f"tests/ascend/cube/test_cube_join.py::test_l0_steps_span_k_slices[{c}]"
      for c in ("f16-128", "f16-256", "bf16-95", "bf16-256")),
    *(f"tests/ascend/cube/test_cube_join.py::test_2x2_groups_at_ragged_shapes[{c}]"
      for c in ("ordered-2", "ordered-3")),
    "tests/ascend/cube/test_cube_join.py::test_any_program_order_matches_numpy[1]",
    *(f"tests/ascend/cube/test_row_split.py::test_attention_rows_on_both_vector_cores[{c}-200]"
      for c in ("32-64-False", "64-64-False", "32-32-True")),
    # cpu sorts of long rows: the bitonic network of 64 or 128 lanes is 0.9 MB of LLVM IR, 9-15 s of
    # opt and llc; make test keeps rows of 2 to 32 of each key type
    "tests/conformance/test_shape_ops.py::test_sort_topk[cpu-128-",
    *(f"tests/conformance/test_sort_topk.py::test_sort_topk[{c}-cpu]" for c in ("float32-128-32", "float16-64-16")),
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
