"""Every example, exported and run as a CANN user would, on a model toolkit instead of CANN.

For each example: `xblock export --case NAME` (which runs the host check: main.cpp against the launch
header derived from kernel.cpp) -> the project's own run.sh with ASCEND_HOME_PATH at xblock's model
toolkit: its CMakeLists.txt builds main.cpp and kernel.cpp (on the AscendC CPU model, with the ACL
model), scripts/gen_data.py writes the inputs, the program runs, scripts/verify_result.py compares
with the golden the export stored. No CANN toolkit is involved: this proves the project is
consistent and runs on the model, not that CANN's compiler accepts it.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

import examples
from xblock.backends.ascend.export.hostcheck import model_toolkit, run_project
from xblock.cli import main

pytestmark = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("cmake") is None,
                                reason="the model toolkit builds with cmake and g++")
ROOT = Path(__file__).resolve().parents[3]

# example -> the case exported: small sizes (one g++ build of the kernel each), and the dtypes spread
# over fp32, fp16, bf16 and int8 inputs; triton.add at 1024 makes main.cpp check `n % 16`
CASES = {"add": "bfloat16-1023", "softmax": "float32-3x127", "layernorm": "float32-4x1023",
         "rmsnorm": "float16-3x127", "matmul": "float16-17x33x65", "gelu": "float16-1025",
         "argmax": "float32-3x127", "cumsum": "float32-3x127", "transpose": "int8-63x31", "colsum": "float16-63x65",
         "triton.add": "float32-1024", "triton.softmax": "float32-3x127", "triton.layernorm": "float32-4x1023",
         "triton.matmul": "float16-17x33x65"}


def test_every_example_with_cases_is_exported_here():
    names = set(examples.EXAMPLES) | {f"triton.{n}" for n in examples.TRITON_EXAMPLES}
    files = {p.stem for p in (ROOT / "examples").glob("*.py") if "def case(" in p.read_text()}
    files |= {f"triton.{p.stem}" for p in (ROOT / "examples" / "triton").glob("*.py") if "def case(" in p.read_text()}
    assert files <= names and set(CASES) == names


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory):
    return model_toolkit(tmp_path_factory.mktemp("toolkit"))


@pytest.mark.parametrize("example", sorted(CASES))
def test_exported_example_builds_runs_and_matches_its_golden(example, toolkit, tmp_path):
    mod = importlib.import_module(f"examples.{example}")
    kernel = mod.case(mod.SIZES[0], mod.DTYPES[0]).kernel.source.name
    source = Path("examples", *example.split(".")).with_suffix(".py").as_posix()
    proj = tmp_path / example
    assert main(["export", f"{source}:{kernel}", "-o", str(proj), "--case", CASES[example]]) == 0
    assert "At export, main.cpp compiled cleanly" in (proj / "README.md").read_text()  # the host check passed
    res = run_project(proj, toolkit)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    outputs = [line for line in res.stdout.splitlines() if line.startswith("PASS: ")]
    assert outputs and outputs[-1].split()[1] == outputs[-1].split()[3], out[-3000:]  # "PASS: k of k outputs"
