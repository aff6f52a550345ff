"""The C launch of cuda kernels (fastpath.C_SOURCE, `CudaLaunch`), without a GPU: the driver's entry
points are ctypes fakes, tensors are stand-ins. It must pack each parameter as the kernel takes it,
launch on the stream torch says is current, and hand everything it does not cover to the Python
launch (which, on a GPU, launches through Triton and says what is wrong).
"""

from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest

from xblock.backends.cuda import launch as cuda_launch
from xblock.errors import LaunchError
from xblock.runtime import fastpath

LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)
CONTEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
PARAM_INFO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
                              ctypes.POINTER(ctypes.c_size_t))
FUNCTION, CONTEXT_0 = 0xF00D, 0xC0DE


class FakeTensor:
    def __init__(self, ptr, cuda=True):
        self.ptr, self.is_cuda = ptr, cuda

    def data_ptr(self):
        if self.ptr is None:
            raise RuntimeError("no storage")
        return self.ptr


class FakeDriver:
    """cuLaunchKernel, cuCtxGetCurrent and cuFuncGetParamInfo, recording launches."""

    def __init__(self, sizes):
        self.sizes, self.launches, self.context, self.status = sizes, [], CONTEXT_0, 0
        self.fns = (LAUNCH(self._launch), CONTEXT(self._context), PARAM_INFO(self._info))  # kept alive

    def _launch(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        if self.status:
            return self.status
        raw = [ctypes.string_at(params[i], n) for i, n in enumerate(self.sizes)]
        self.launches.append({"f": f, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                              "stream": stream or 0, "params": raw})
        return 0

    def _context(self, out):
        out[0] = self.context
        return 0

    def _info(self, f, i, offset, size):
        if i >= len(self.sizes):
            return 1  # CUDA_ERROR_INVALID_VALUE: no such parameter
        offset[0], size[0] = 8 * i, self.sizes[i]
        return 0

    def addresses(self):
        return [ctypes.cast(f, ctypes.c_void_p).value for f in self.fns]


class Recorder:
    """The Python side of a launcher: what the C launch hands back."""

    def __init__(self):
        self.fallbacks, self.checked = [], []

    def launch_python(self, grid, args):
        self.fallbacks.append((grid, args))

    def _check_devices(self, args):
        self.checked.append(args)
        if any(getattr(a, "ptr", 0) == 0xBAD for a in args):
            raise LaunchError("k.py", 1, "k", "argument on another device")


@pytest.fixture(scope="module")
def helper():
    mod = fastpath.helper()
    if mod is None:
        pytest.skip("no C compiler or Python headers here")
    return mod


SIGS = ["*fp32", "*fp16", "i32", "i64", "u32", "u64", "i1", "fp32", "fp64", "fp16", "bf16"]
ARGS = [FakeTensor(0x7F0000001000), FakeTensor(0x7F0000002000), -5, -(2**40), 2**31 + 7, 2**64 - 3, True, 1.5,
        np.float64(-2.25), 0.5, 3.0]
WANT = [struct.pack("<Q", 0x7F0000001000), struct.pack("<Q", 0x7F0000002000), struct.pack("<i", -5),
        struct.pack("<q", -(2**40)), struct.pack("<I", 2**31 + 7), struct.pack("<Q", 2**64 - 3), b"\x01",
        struct.pack("<f", 1.5), struct.pack("<d", -2.25), struct.pack("<e", 0.5), struct.pack("<f", 3.0)[2:],
        bytes(8), bytes(8)]
TMETA = {"triton_version": "3.6.0", "num_ctas": 1, "num_warps": 4, "shared": 0, "global_scratch_size": 0,
         "profile_scratch_size": 0, "tensordesc_meta": [], "launch_cooperative_grid": False, "launch_pdl": False}


def armed(helper, sigs=SIGS, streams=None, device=None, check=False, driver=None):
    kinds, sizes = cuda_launch.c_launch_kinds(TMETA, sigs)
    driver = driver or FakeDriver(list(sizes) + [8, 8])
    launcher = type("L", (helper.CudaLaunch, Recorder), {})()
    Recorder.__init__(launcher)
    streams = streams if streams is not None else {0: 0x5000}
    assert launcher.arm(kinds, sizes, 128, 1024, FakeTensor, lambda d: streams[d], device, check,
                        *driver.addresses())
    return launcher, driver


def test_parameters_are_packed_as_the_kernel_takes_them(helper):
    launcher, driver = armed(helper)
    launcher((3, 1, 1), ARGS)
    assert len(launcher.fallbacks) == 1 and driver.launches == []  # no function on this device yet
    assert launcher.set_function(0, FUNCTION)
    launcher((3, 2, 1), ARGS)
    launcher([7, 1, 1], tuple(ARGS))
    assert len(launcher.fallbacks) == 1
    first, second = driver.launches
    assert first["params"] == WANT and first["f"] == FUNCTION
    assert (first["grid"], first["block"], first["shared"], first["stream"]) == ((3, 2, 1), (128, 1, 1), 1024, 0x5000)
    assert second["grid"] == (7, 1, 1)


def test_the_current_stream_is_read_at_every_launch(helper):
    streams = {0: 0}
    launcher, driver = armed(helper, streams=streams)
    launcher.set_function(0, FUNCTION)
    for s in (0, 0xABC, 0, 0xDEF):
        streams[0] = s
        launcher((1, 1, 1), ARGS)
    assert [x["stream"] for x in driver.launches] == [0, 0xABC, 0, 0xDEF]


def test_the_current_device_picks_the_function_and_devices_are_checked(helper):
    current = [0]
    launcher, driver = armed(helper, streams={0: 0x10, 1: 0x11}, device=lambda: current[0], check=True)
    launcher.set_function(0, FUNCTION)
    launcher((1, 1, 1), ARGS)
    current[0] = 1
    launcher((1, 1, 1), ARGS)  # no function loaded on device 1: the Python launch loads it
    assert len(launcher.fallbacks) == 1
    driver.context = 0xC1
    launcher.set_function(1, FUNCTION + 1)
    launcher((1, 1, 1), ARGS)
    assert [(x["f"], x["stream"]) for x in driver.launches] == [(FUNCTION, 0x10), (FUNCTION + 1, 0x11)]
    assert len(launcher.checked) == 3
    with pytest.raises(LaunchError, match="another device"):
        launcher((1, 1, 1), [FakeTensor(0xBAD), *ARGS[1:]])


@pytest.mark.parametrize("case", ["host tensor", "not a tensor", "no storage", "i32 too big", "u32 negative",
                                  "a string for fp32", "too few args", "grid y too big", "negative grid",
                                  "grid of floats", "grid of 2", "another context", "driver error"])
def test_what_the_c_launch_does_not_take_goes_to_python(helper, case):
    launcher, driver = armed(helper)
    launcher.set_function(0, FUNCTION)
    args, grid = list(ARGS), (2, 1, 1)
    if case == "host tensor":
        args[1] = FakeTensor(0x1000, cuda=False)
    elif case == "not a tensor":
        args[0] = np.zeros(4, np.float32)
    elif case == "no storage":
        args[0] = FakeTensor(None)
    elif case == "i32 too big":
        args[2] = 2**31
    elif case == "u32 negative":
        args[4] = -1
    elif case == "a string for fp32":
        args[7] = "1.5"
    elif case == "too few args":
        args = args[:-1]
    elif case == "grid y too big":
        grid = (1, 65536, 1)
    elif case == "negative grid":
        grid = (-1, 1, 1)
    elif case == "grid of floats":
        grid = (2.0, 1, 1)
    elif case == "grid of 2":
        grid = (2, 1)
    elif case == "another context":
        driver.context = 0xD1FF
    elif case == "driver error":
        driver.status = 1
    launcher(grid, args)
    assert driver.launches == [] and launcher.fallbacks == [(grid, args)]


def test_numpy_scalars_are_packed_and_an_empty_grid_launches_nothing(helper):
    launcher, driver = armed(helper)
    launcher.set_function(0, FUNCTION)
    args = list(ARGS)
    args[2], args[7] = np.int32(-5), np.float32(1.5)
    launcher((0, 1, 1), args)
    launcher((1, 1, 1), args)
    assert launcher.fallbacks == [] and len(driver.launches) == 1 and driver.launches[0]["params"] == WANT


def test_a_kernel_whose_parameters_differ_is_never_launched_in_c(helper):
    kinds, sizes = cuda_launch.c_launch_kinds(TMETA, SIGS)
    for wrong in (list(sizes) + [8], list(sizes) + [8, 8, 8], [4] + list(sizes[1:]) + [8, 8]):
        launcher, driver = armed(helper, driver=FakeDriver(wrong))
        assert not launcher.set_function(0, FUNCTION) and not launcher.c_launch_armed
        launcher((1, 1, 1), ARGS)
        assert driver.launches == [] and len(launcher.fallbacks) == 1


def test_an_unarmed_launcher_is_the_python_launch(helper):
    launcher = type("L", (helper.CudaLaunch, Recorder), {})()
    Recorder.__init__(launcher)
    assert not launcher.c_launch_armed and not launcher.set_function(0, FUNCTION)
    launcher((1, 1, 1), ARGS)
    assert launcher.fallbacks == [((1, 1, 1), ARGS)]
    with pytest.raises(TypeError):
        launcher((1, 1, 1))


def test_kinds_of_signatures_and_kernels_left_to_triton():
    assert cuda_launch.c_launch_kinds(TMETA, ["*bf16", "i1", "i8", "u16", "i64", "fp16"]) == (
        b"piiuih", bytes([8, 1, 1, 2, 8, 2]))
    for change in ({"triton_version": "3.5.1"}, {"num_ctas": 2}, {"global_scratch_size": 64},
                   {"profile_scratch_size": 8}, {"launch_pdl": True}, {"launch_cooperative_grid": True},
                   {"tensordesc_meta": [{"block": [8]}]}):
        assert cuda_launch.c_launch_kinds({**TMETA, **change}, ["*fp32"]) is None
    assert cuda_launch.c_launch_kinds(TMETA, ["nvTmaDesc"]) is None


def test_loaded_launchers_launch_in_c_and_report_through_python(helper):
    cls = cuda_launch.launcher_class()
    assert issubclass(cls, cuda_launch.CudaLauncher) and issubclass(cls, helper.CudaLaunch)
    metadata = {"name": "k", "file": "k.py", "line": 3, "arg_names": ["x"], "arg_types": ["*fp32"],
                "triton": dict(TMETA)}
    launcher = cuda_launch.load({"cubin": b""}, metadata)
    assert type(launcher) is cls and not launcher.c_launch_armed
    try:
        import torch  # noqa: F401
    except ImportError:  # the first call binds in Python, which says what is missing
        with pytest.raises(LaunchError, match="needs torch"):
            launcher((1, 1, 1), [FakeTensor(16)])


def test_launch_hooks_are_seen_in_triton_hook_chains():
    from types import SimpleNamespace

    class Chain:  # Triton 3.6's HookChain: never None, hooks in `calls`
        def __init__(self, calls):
            self.calls = calls

    def knobs(enter, exit):
        return SimpleNamespace(runtime=SimpleNamespace(launch_enter_hook=enter, launch_exit_hook=exit))

    assert not cuda_launch.launch_hooks(knobs(None, None))
    assert not cuda_launch.launch_hooks(knobs(Chain([]), Chain([])))
    assert cuda_launch.launch_hooks(knobs(Chain([print]), Chain([])))
    assert cuda_launch.launch_hooks(knobs(None, print))
    triton = pytest.importorskip("triton")
    if triton.__version__.startswith("3.6."):
        from triton import knobs as triton_knobs

        assert not cuda_launch.launch_hooks(triton_knobs)


CTENSOR = r"""
#include <Python.h>
#include <stddef.h>
typedef struct { PyObject_HEAD unsigned long long ptr; int cuda, contiguous; PyObject *dict; } ct;
static PyObject *get_cuda(PyObject *o, void *c) { return PyBool_FromLong(((ct *)o)->cuda); }
static PyObject *get_dtype(PyObject *o, void *c) { return PyUnicode_FromString("torch.float32"); }
static PyObject *get_device(PyObject *o, void *c) { return PyUnicode_FromString(((ct *)o)->cuda ? "cuda:0" : "cpu"); }
static PyObject *data_ptr(PyObject *o, PyObject *unused) { return PyLong_FromUnsignedLongLong(((ct *)o)->ptr); }
static PyObject *is_contiguous(PyObject *o, PyObject *a, PyObject *k) { return PyBool_FromLong(((ct *)o)->contiguous); }
static int init(PyObject *o, PyObject *a, PyObject *k) {
    ct *t = (ct *)o;
    return PyArg_ParseTuple(a, "Kii", &t->ptr, &t->cuda, &t->contiguous) ? 0 : -1;
}
static PyGetSetDef getset[] = {{"is_cuda", get_cuda}, {"dtype", get_dtype}, {"device", get_device}, {NULL}};
static PyMethodDef methods[] = {{"data_ptr", data_ptr, METH_NOARGS},
    {"is_contiguous", (PyCFunction)(void (*)(void))is_contiguous, METH_VARARGS | METH_KEYWORDS}, {NULL}};
static PyTypeObject type = {PyVarObject_HEAD_INIT(NULL, 0) .tp_name = "ctensor.TensorBase",
    .tp_basicsize = sizeof(ct), .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, .tp_new = PyType_GenericNew,
    .tp_init = init, .tp_getset = getset, .tp_methods = methods, .tp_dictoffset = offsetof(ct, dict)};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "ctensor", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_ctensor(void) {
    if (PyType_Ready(&type) < 0) return NULL;
    PyObject *m = PyModule_Create(&mod);
    PyModule_AddObject(m, "TensorBase", (PyObject *)&type);
    return m;
}
"""


@pytest.fixture(scope="module")
def ctensor(helper, tmp_path_factory):
    """A tensor type built as torch's is: a C base with getters and C methods, a Python subclass."""
    import importlib.machinery
    import importlib.util
    import subprocess
    import sysconfig

    d = tmp_path_factory.mktemp("ctensor")
    (d / "ctensor.c").write_text(CTENSOR)
    so = d / ("ctensor" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"], str(d / "ctensor.c"),
                    "-o", str(so)], check=True, capture_output=True)
    loader = importlib.machinery.ExtensionFileLoader("ctensor", str(so))
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("ctensor", loader))
    loader.exec_module(mod)

    class Tensor(mod.TensorBase):
        pass

    return Tensor


def test_tensors_of_c_types_are_read_through_their_descriptors(helper, ctensor):
    values = [ctensor(4096, 1, 1), ctensor(4100, 1, 1), ctensor(64, 1, 0), ctensor(64, 0, 1)]
    helper.set_tensor_type(ctensor)
    try:
        for _ in range(2):
            for mode, fn in enumerate((helper.spec, helper.spec_no_align, helper.spec_none)):
                assert [fn(v) for v in values] == [fastpath.spec_py(v, mode) for v in values]
            ctensor.data_ptr = lambda self: 8  # the type changes: its descriptors are looked up again
        assert helper.spec(values[0])[2] is False
        del ctensor.data_ptr
        assert helper.spec(values[0])[2] is True
        ctensor.is_contiguous = property(lambda self: lambda: False)  # neither a getter nor a C method
        assert helper.spec(values[0])[4] is False
        del ctensor.is_contiguous
    finally:
        helper.set_tensor_type(type(None))
    kinds, sizes = cuda_launch.c_launch_kinds(TMETA, ["*fp32", "i32"])
    driver = FakeDriver(list(sizes) + [8, 8])
    launcher = type("L", (helper.CudaLaunch, Recorder), {})()
    Recorder.__init__(launcher)
    launcher.arm(kinds, sizes, 128, 0, ctensor.__mro__[1], lambda d: 0, None, False, *driver.addresses())
    launcher.set_function(0, FUNCTION)
    launcher((1, 1, 1), [ctensor(0x7000, 1, 1), 3])
    launcher((1, 1, 1), [ctensor(0x7000, 0, 1), 3])  # a host tensor
    assert [x["params"][0] for x in driver.launches] == [struct.pack("<Q", 0x7000)]
    assert len(launcher.fallbacks) == 1
