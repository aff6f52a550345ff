"""The command line: each command on an example, and exit codes scripts can rely on."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def xb(*args, **kw):
    return subprocess.run([sys.executable, "-m", "xblock", *args], capture_output=True, text=True, cwd=ROOT, **kw)


def test_compile_emits_xb_from_case():
    r = xb("compile", "examples/softmax.py:softmax_kernel", "--target", "sim", "--emit", "xb")
    assert r.returncode == 0, r.stderr
    assert '"xb.load"' in r.stdout and 'loc("' in r.stdout


def test_compile_with_explicit_signature(tmp_path):
    out = tmp_path / "add.mlir"
    r = xb("compile", "examples/add.py:add_kernel", "--signature", "x_ptr=*fp16,y_ptr=*fp16,out_ptr=*fp16,n=i32",
           "-D", "BLOCK=256", "--emit", "xb", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "tensor<256xf16>" in out.read_text()


def test_diff_json_and_exit_code():
    r = xb("diff", "examples/add.py:add_kernel", "--targets", "sim", "--size", "1000", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ok"] is True


def test_usage_errors_exit_2():
    assert xb("compile", "examples/add.py:nope").returncode == 2
    assert xb("compile", "no/such/file.py:k").returncode == 2
    r = xb("compile", "examples/add.py:add_kernel", "--emit", "nonexistent-stage")
    assert r.returncode == 2 and "has no stage" in r.stderr


def test_compile_error_exit_3_names_the_line(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("import xblock.language as xl\n\ndef k(p, BLOCK: xl.constexpr):\n    x = undefined_name + 1\n")
    r = xb("compile", f"{f}:k", "--signature", "p=*fp32", "-D", "BLOCK=16")
    assert r.returncode == 3
    assert f"{f}:4:" in r.stderr and "undefined_name" in r.stderr and "codegen.py" not in r.stderr


def test_cache_dir_and_help():
    r = xb("cache", "dir")
    assert r.returncode == 0 and r.stdout.strip()
    h = xb("--help")
    for cmd in ("compile", "export", "diff", "bench", "cache", "demo"):
        assert cmd in h.stdout


def test_diff_from_signature_and_shapes():
    r = xb("diff", "examples/add.py:add_kernel", "--targets", "sim", "--signature",
           "x_ptr=*fp32,y_ptr=*fp32,out_ptr=*fp32,n=i32", "--shape", "x_ptr=1000", "--shape", "y_ptr=1000",
           "--shape", "out_ptr=1000", "--arg", "n=1000", "-D", "BLOCK=256", "--grid", "4")
    assert r.returncode == 0, r.stderr
    assert "out_ptr" in r.stdout and "verdict: ok" in r.stdout
    r = xb("diff", "examples/add.py:add_kernel", "--signature", "x_ptr=*fp32", "--grid", "1")
    assert r.returncode == 2


def test_cache_export_import_roundtrip(tmp_path):
    env = {**__import__("os").environ, "XBLOCK_CACHE_DIR": str(tmp_path / "a")}
    r = xb("compile", "examples/add.py:add_kernel", "--emit", "xb", env=env)
    assert r.returncode == 0, r.stderr
    bundle = tmp_path / "bundle.tar.gz"
    r = xb("cache", "export", str(bundle), env=env)
    assert r.returncode == 0 and "exported 1 compiled kernels" in r.stdout, r.stdout + r.stderr
    env["XBLOCK_CACHE_DIR"] = str(tmp_path / "b")
    r = xb("cache", "import", str(bundle), env=env)
    assert r.returncode == 0 and "imported 1 compiled kernels" in r.stdout, r.stdout + r.stderr


def test_version():
    r = xb("--version")
    assert r.returncode == 0 and r.stdout.startswith("xblock ")


def test_cache_export_without_a_path_names_the_argument():
    r = xb("cache", "export")
    assert r.returncode == 2 and "cache export needs the bundle's path" in r.stderr


def test_cache_clear_says_what_it_removed(tmp_path):
    env = {**__import__("os").environ, "XBLOCK_CACHE_DIR": str(tmp_path)}
    assert xb("diff", "examples/add.py:add_kernel", "--targets", "cpu", "--size", "100", env=env).returncode == 0
    r = xb("cache", "clear", env=env)
    assert r.returncode == 0 and "compiled kernels" in r.stdout and "cpu libraries" in r.stdout


def test_localize_says_when_there_is_nothing_to_localize():
    r = xb("diff", "examples/add.py:add_kernel", "--targets", "sim", "--size", "100", "--localize")
    assert r.returncode == 0 and "nothing to localize" in r.stdout


def test_every_option_has_help():
    from xblock.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sp in sub.choices.items():
        for action in sp._actions:
            if action.dest != "help":
                assert action.help, f"xblock {name}: option {action.dest} has no help text"


def test_doctor_lists_versions_targets_and_cache(tmp_path):
    env = {**__import__("os").environ, "XBLOCK_CACHE_DIR": str(tmp_path)}
    r = xb("doctor", env=env)
    assert r.returncode == 0, r.stderr
    from xblock.backends import targets

    for name in targets():
        assert f"\n  {name} " in r.stdout
    assert "numpy" in r.stdout and f"cache: {tmp_path}" in r.stdout and "g++" in r.stdout


def test_a_misspelled_kernel_name_gets_a_suggestion(capsys):
    from xblock.cli import main

    assert main(["bench", "examples/add.py:add_kernl"]) != 0
    assert "has no kernel named 'add_kernl'; did you mean 'add_kernel'?" in capsys.readouterr().err


def test_a_misspelled_stage_gets_a_suggestion(capsys):
    from xblock.cli import main

    assert main(["compile", "examples/add.py:add_kernel", "--target", "sim", "--emit", "simprg"]) != 0
    assert "has no stage 'simprg'; did you mean 'simprog'?" in capsys.readouterr().err


def test_a_triton_file_without_triton_says_what_to_install(capsys, monkeypatch):
    from xblock.cli import main

    monkeypatch.setitem(sys.modules, "triton", None)  # `import triton` fails as where it is not installed
    monkeypatch.setitem(sys.modules, "triton.language", None)
    assert main(["compile", "examples/triton/add.py:add_kernel", "--target", "sim"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "examples/triton/add.py imports triton, which is not installed" in err[0], err
    assert "pip install 'xblock[cuda]'" in err[0] and "Traceback" not in err[0]


def test_version_and_import_load_no_heavy_module():
    """`import xblock` and `xblock --version` load neither ml_dtypes, MLIR, Triton nor torch, nor any
    backend: those come when a kernel needs them."""
    code = ("import sys\nimport xblock\nfrom xblock.cli import main\ntry:\n    main(['--version'])\n"
            "except SystemExit:\n    pass\nprint(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('ml_dtypes', 'mlir', 'triton', 'torch') or m.startswith('xblock.sim') or "
            "(m.startswith('xblock.backends.') and not m.startswith('xblock.backends.common'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    loaded = r.stdout.strip().splitlines()[-1]
    assert loaded in ("[]", "['xblock.backends.base']"), loaded  # the Backend class: no target's module


def test_doctor_warns_of_a_triton_other_than_the_pinned_one(capsys, monkeypatch):
    from xblock import cli
    from xblock.backends.cuda.options import PINNED_TRITON

    real = cli._version_of
    for fake, warned in (("3.5.1", True), (PINNED_TRITON, False), ("not installed", False)):
        monkeypatch.setattr(cli, "_version_of", lambda d, fake=fake: fake if d == "triton" else real(d))
        assert cli.main(["doctor"]) == 0
        out = capsys.readouterr().out
        assert (f"warning: triton {fake} is installed" in out) == warned, out
        assert (f"tested against triton {PINNED_TRITON}" in out) == warned


def test_bench_on_a_modelled_target_reports_the_estimate(capsys):
    """ascend runs on the CPU model here: bench prints the cost model's estimate, labelled, not the
    model's host time as a median."""
    from xblock.cli import main

    assert main(["bench", "examples/add.py:add_kernel", "--target", "ascend", "--size", "4096"]) == 0
    out = capsys.readouterr().out
    assert "add_kernel on ascend: estimate " in out and "on the 910B3 cost model" in out, out
    assert "an estimate" in out and "median" not in out


def test_profile_and_bench_take_a_signature(capsys):
    """As their error message promises: a kernel without case() is profiled from --signature."""
    from xblock.cli import main

    sig = ["--signature", "*fp32,*fp32,*fp32,i32", "--shape", "x_ptr=1000", "--shape", "y_ptr=1000",
           "--shape", "out_ptr=1000", "--arg", "n=1000", "-D", "BLOCK=256", "--grid", "4"]
    assert main(["profile", "examples/add.py:add_kernel", *sig]) == 0
    assert "add_kernel on the 910B3 cost model" in capsys.readouterr().out
    assert main(["bench", "examples/add.py:add_kernel", "--target", "sim", *sig]) == 0
    assert "add_kernel on sim: median" in capsys.readouterr().out
