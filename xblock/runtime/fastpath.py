"""The launch hot path: per-argument specialization codes and the cpu target's direct launch.

Each runtime argument of a launch maps to a small hashable *code* that holds everything the full
path of `JITFunction.run` reads from it (type, dtype, 16-byte alignment, contiguity, int range,
`== 1`); a launch whose codes were seen before reuses that launch's kernel without binding,
describing or hashing anything else. The codes come from a C helper (compiled once with the host
C compiler into the cache, loaded as a Python extension) or, where it cannot be built, from the
Python functions below, which compute the same codes.

Codes: an int in 0..11 (int range class * 3 + 0, 1 for `% 16 == 0`, 2 for `== 1`), 12 for a bool,
13 for a float, 16 + ((type_num * 2 + aligned) * 2 + c_contiguous) for a numpy array, None for
None; any other argument gets a tuple from `spec_other`, or `NoFastPath` when the launch must take
the full path (host tensor descriptors, DLPack-only objects).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import threading

import numpy as np

MODES = {"all": 0, "no_align": 1, "none": 2}  # what of a value is specialized: Triton's three policies
_LITTLE = sys.byteorder == "little"


class NoFastPath(Exception):
    """The launch has an argument the hot path does not describe: it takes the full path."""


# ------------------------------------------------------------------------------ Python codes
def int_code(v: int, mode: int = 0):
    if -0x80000000 <= v < 0x80000000:
        cls = 0
    elif 0 <= v < 0x100000000:
        cls = 1
    elif -0x8000000000000000 <= v < 0x8000000000000000:
        cls = 2
    elif 0 <= v < 0x10000000000000000:
        cls = 3
    else:
        raise NoFastPath  # beyond 64 bits: the full path refuses it
    if mode <= 1 and v == 1 and cls == 0:
        return 2
    if mode == 0 and v & 15 == 0:
        return cls * 3 + 1
    return cls * 3


def _array_code(v, mode: int):
    if v.dtype.byteorder == (">" if _LITTLE else "<"):
        raise NoFastPath  # a byte-swapped array: the full path
    aligned = mode == 0 and v.__array_interface__["data"][0] & 15 == 0
    return 16 + ((v.dtype.num * 2 + aligned) * 2 + v.flags.c_contiguous)


def spec_py(v, mode: int = 0):
    """The code of one runtime argument (see the module's docstring); the C helper's twin."""
    t = type(v)
    if t is int:
        return int_code(v, mode)
    if t is np.ndarray:
        return _array_code(v, mode)
    if t is bool:
        return 12
    if t is float:
        return 13
    if v is None:
        return None
    return spec_other(v, mode)


def spec_other(v, mode: int = 0):
    """Code of an argument that is not an exact int, bool, float, numpy array or None."""
    t = type(v)
    if isinstance(v, np.integer) and not isinstance(v, np.bool_):
        return (t, int_code(int(v), mode))
    if isinstance(v, (np.floating, np.bool_)):
        return (t,)
    if isinstance(v, np.ndarray):  # a subclass (np.memmap, ...): the Python launchers take it
        return (t, _array_code(v, mode))
    try:  # a tensor: what describe() and the targets' claims read
        code = (t, v.dtype, mode == 0 and v.data_ptr() & 15 == 0, True if v.is_cuda else str(v.device),
                v.is_contiguous())
    except AttributeError:
        raise NoFastPath from None
    if t.__name__ == "Tensor" and t.__module__.startswith("torch") and _HELPER and _HELPER[0] is not None:
        _HELPER[0].set_tensor_type(t)  # the helper computes these codes from now on
    return code


def constexpr_code(v):
    """A constexpr's part of the key: the value, with its type where `==` would mix 1, 1.0 and True."""
    return v if type(v) is int else (type(v), v)


# ------------------------------------------------------------------------------ the C helper
C_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The leading fields of numpy's PyArray_Descr and PyArrayObject (the same in numpy 1.x and 2.x);
   checked against numpy's own view of an array when the module is loaded. */
typedef struct { PyObject_HEAD void *typeobj; char kind, type, byteorder, flags0; int type_num; } xb_descr;
typedef struct { PyObject_HEAD char *data; int nd; Py_ssize_t *dims; Py_ssize_t *strides; PyObject *base;
                 xb_descr *descr; int flags; } xb_array;
#define XB_C_CONTIGUOUS 0x1
#define XB_WRITEABLE 0x400
#define XB_MAX_SLOTS 64

static PyTypeObject *ndarray_type;
static PyTypeObject *tensor_type;  /* torch.Tensor, once spec_other has seen one */
static PyObject *spec_other;
static PyObject *s_dtype, *s_data_ptr, *s_is_cuda, *s_is_contiguous;
static char swapped_order;

static PyObject *other(PyObject *v, int mode) {
    PyObject *m = PyLong_FromLong(mode);
    if (!m) return NULL;
    PyObject *r = PyObject_CallFunctionObjArgs(spec_other, v, m, NULL);
    Py_DECREF(m);
    return r;
}

/* (type, dtype, aligned, True, contiguous) of a CUDA tensor, as spec_other computes it; NULL with
   no error set when spec_other must say (a tensor on another device). */
static PyObject *tensor_code(PyObject *v, int mode) {
    PyObject *cuda = PyObject_GetAttr(v, s_is_cuda);
    if (!cuda) return NULL;
    int is_cuda = cuda == Py_True;
    Py_DECREF(cuda);
    if (!is_cuda) return other(v, mode);
    PyObject *dtype = PyObject_GetAttr(v, s_dtype);
    if (!dtype) return NULL;
    PyObject *aligned = Py_False;
    if (mode == 0) {
        PyObject *ptr = PyObject_CallMethodNoArgs(v, s_data_ptr);
        if (!ptr) { Py_DECREF(dtype); return NULL; }
        unsigned long long p = PyLong_AsUnsignedLongLongMask(ptr);
        Py_DECREF(ptr);
        if (PyErr_Occurred()) { Py_DECREF(dtype); return NULL; }
        aligned = (p & 15) == 0 ? Py_True : Py_False;
    }
    PyObject *contiguous = PyObject_CallMethodNoArgs(v, s_is_contiguous);
    if (!contiguous) { Py_DECREF(dtype); return NULL; }
    PyObject *r = PyTuple_Pack(5, (PyObject *)Py_TYPE(v), dtype, aligned, Py_True, contiguous);
    Py_DECREF(dtype);
    Py_DECREF(contiguous);
    return r;
}


static PyObject *int_code(PyObject *v, int mode) {
    int overflow, cls;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0) {
        if (x == -1 && PyErr_Occurred()) return NULL;
        cls = (x >= -2147483648LL && x < 2147483648LL) ? 0 : (x >= 0 && x < 4294967296LL) ? 1 : 2;
    } else if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return other(v, mode); }
        x = (long long)u;
        cls = 3;
    } else {
        return other(v, mode);
    }
    if (mode <= 1 && x == 1 && cls == 0) return PyLong_FromLong(2);
    if (mode == 0 && (x & 15) == 0) return PyLong_FromLong(cls * 3 + 1);
    return PyLong_FromLong(cls * 3);
}

static PyObject *code(PyObject *v, int mode) {
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyLong_Type) return int_code(v, mode);
    if (t == ndarray_type) {
        xb_array *a = (xb_array *)v;
        if (a->descr->byteorder == swapped_order) return other(v, mode);
        long aligned = mode == 0 && ((uintptr_t)a->data & 15) == 0;
        long contiguous = a->flags & XB_C_CONTIGUOUS ? 1 : 0;
        return PyLong_FromLong(16 + ((a->descr->type_num * 2L + aligned) * 2 + contiguous));
    }
    if (t == &PyBool_Type) return PyLong_FromLong(12);
    if (t == &PyFloat_Type) return PyLong_FromLong(13);
    if (v == Py_None) Py_RETURN_NONE;
    if (t == tensor_type) return tensor_code(v, mode);
    return other(v, mode);
}

static PyObject *spec(PyObject *self, PyObject *v) { return code(v, 0); }
static PyObject *spec_no_align(PyObject *self, PyObject *v) { return code(v, 1); }
static PyObject *spec_none(PyObject *self, PyObject *v) { return code(v, 2); }

/* array_info(a) -> (data address, type_num, flags): what the loader compares with numpy's view. */
static PyObject *array_info(PyObject *self, PyObject *v) {
    if (Py_TYPE(v) != ndarray_type) { PyErr_SetString(PyExc_TypeError, "expected an ndarray"); return NULL; }
    xb_array *a = (xb_array *)v;
    return Py_BuildValue("(Kii)", (unsigned long long)(uintptr_t)a->data, a->descr->type_num, a->flags);
}

static PyObject *init(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    if (n != 3 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "init(ndarray, spec_other, swapped byte order)");
        return NULL;
    }
    Py_XSETREF(ndarray_type, (PyTypeObject *)Py_NewRef(args[0]));
    Py_XSETREF(spec_other, Py_NewRef(args[1]));
    swapped_order = (char)PyLong_AsLong(args[2]);
    if (!s_dtype) {
        s_dtype = PyUnicode_InternFromString("dtype");
        s_data_ptr = PyUnicode_InternFromString("data_ptr");
        s_is_cuda = PyUnicode_InternFromString("is_cuda");
        s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
    }
    Py_RETURN_NONE;
}

static PyObject *set_tensor_type(PyObject *self, PyObject *t) {
    if (!PyType_Check(t)) { PyErr_SetString(PyExc_TypeError, "expected a type"); return NULL; }
    Py_XSETREF(tensor_type, (PyTypeObject *)Py_NewRef(t));
    Py_RETURN_NONE;
}

typedef void (*xb_entry)(uint64_t *, int32_t, int32_t, int32_t, int64_t, int64_t);

/* cpu_launch(entry, kinds, written, itemsizes, args, g0, g1, g2, status_slot, bounds_slot): pack the
   arguments into 8-byte slots and run programs [0, g0*g1*g2) of a cpu kernel on this thread, without
   the GIL. kinds: a byte per argument: 'p' array, 'i' integer, 'f' fp32, 'd' fp64; written: 1 for
   the arrays the kernel writes; itemsizes: element bytes of each array. status_slot/bounds_slot:
   where (after the arguments) the assert status word and the arrays' [start, end) table go, or -1.
   Returns None when the kernel ran, the status word when an assert failed, and NotImplemented
   when an argument needs the Python launcher (which also reports what is wrong with it). */
static PyObject *cpu_launch(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    uint64_t slots[XB_MAX_SLOTS + 8] = {0};  /* the runtime slots after the arguments stay 0 */
    uint64_t extents[2 * XB_MAX_SLOTS];
    uint64_t status = ~0ULL;
    if (n != 10) { PyErr_SetString(PyExc_TypeError, "cpu_launch takes 10 arguments"); return NULL; }
    void *entry = PyLong_AsVoidPtr(args[0]);
    const char *kinds = PyBytes_AsString(args[1]);
    const char *written = PyBytes_AsString(args[2]);
    const char *itemsizes = PyBytes_AsString(args[3]);
    long status_slot = PyLong_AsLong(args[8]), bounds_slot = PyLong_AsLong(args[9]);
    if (!kinds || !written || !itemsizes || PyErr_Occurred()) return NULL;
    PyObject *seq = args[4];
    Py_ssize_t nargs = PyBytes_GET_SIZE(args[1]), npointers = 0;
    PyObject **items;
    if (PyTuple_CheckExact(seq) && PyTuple_GET_SIZE(seq) == nargs) items = &PyTuple_GET_ITEM(seq, 0);
    else if (PyList_CheckExact(seq) && PyList_GET_SIZE(seq) == nargs) items = &PyList_GET_ITEM(seq, 0);
    else Py_RETURN_NOTIMPLEMENTED;
    if (nargs > XB_MAX_SLOTS || status_slot > 7 || bounds_slot > 7) Py_RETURN_NOTIMPLEMENTED;
    long long g[3];
    for (int d = 0; d < 3; d++) {
        if (!PyLong_CheckExact(args[5 + d])) Py_RETURN_NOTIMPLEMENTED;
        g[d] = PyLong_AsLongLong(args[5 + d]);
        if (g[d] == -1 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NOTIMPLEMENTED; }
        if (g[d] < 0 || g[d] > 0x7fffffffLL) Py_RETURN_NOTIMPLEMENTED;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *v = items[i];
        switch (kinds[i]) {
        case 'p': {
            if (Py_TYPE(v) != ndarray_type) Py_RETURN_NOTIMPLEMENTED;
            xb_array *a = (xb_array *)v;
            if (!(a->flags & XB_C_CONTIGUOUS)) Py_RETURN_NOTIMPLEMENTED;
            if (written[i] && !(a->flags & XB_WRITEABLE)) Py_RETURN_NOTIMPLEMENTED;
            slots[i] = (uint64_t)(uintptr_t)a->data;
            uint64_t count = 1;
            for (int d = 0; d < a->nd; d++) count *= (uint64_t)a->dims[d];
            extents[2 * npointers] = slots[i];
            extents[2 * npointers + 1] = slots[i] + count * (uint64_t)(unsigned char)itemsizes[i];
            npointers++;
            break;
        }
        case 'i':
            if (!PyLong_Check(v)) Py_RETURN_NOTIMPLEMENTED;
            slots[i] = PyLong_AsUnsignedLongLongMask(v);
            if (slots[i] == (uint64_t)-1 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NOTIMPLEMENTED; }
            break;
        case 'f': case 'd': {
            if (!PyFloat_Check(v) && !PyLong_CheckExact(v)) Py_RETURN_NOTIMPLEMENTED;
            double x = PyFloat_AsDouble(v);
            if (x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NOTIMPLEMENTED; }
            if (kinds[i] == 'f') { float f = (float)x; uint32_t b; memcpy(&b, &f, 4); slots[i] = b; }
            else memcpy(&slots[i], &x, 8);
            break;
        }
        default:
            Py_RETURN_NOTIMPLEMENTED;
        }
    }
    if (status_slot >= 0) slots[nargs + status_slot] = (uint64_t)(uintptr_t)&status;
    if (bounds_slot >= 0) slots[nargs + bounds_slot] = (uint64_t)(uintptr_t)extents;
    long long total = g[0] * g[1] * g[2];
    if (total > 0) {
        Py_BEGIN_ALLOW_THREADS
        ((xb_entry)entry)(slots, (int32_t)g[0], (int32_t)g[1], (int32_t)g[2], 0, total);
        Py_END_ALLOW_THREADS
    }
    if (status != ~0ULL) return PyLong_FromUnsignedLongLong(status);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"spec", spec, METH_O, "the code of one runtime argument"},
    {"spec_no_align", spec_no_align, METH_O, "its code without alignment (do_not_specialize_on_alignment)"},
    {"spec_none", spec_none, METH_O, "its code without value specialization (do_not_specialize)"},
    {"array_info", array_info, METH_O, "(address, type_num, flags) of an array, as the helper reads them"},
    {"init", (PyCFunction)(void (*)(void))init, METH_FASTCALL, "init(ndarray, spec_other, swapped byte order)"},
    {"cpu_launch", (PyCFunction)(void (*)(void))cpu_launch, METH_FASTCALL, "launch a cpu kernel directly"},
    {"set_tensor_type", set_tensor_type, METH_O, "the tensor type whose codes the helper computes"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "xblock_fastpath", NULL, -1, methods};
PyMODINIT_FUNC PyInit_xblock_fastpath(void) { return PyModule_Create(&module); }
"""

_HELPER: list = []  # [module or None], once per process
_LOCK = threading.Lock()


def _build(path) -> None:
    """Compile C_SOURCE into the extension module at `path` (atomically: written aside, then renamed)."""
    include = sysconfig.get_paths()["include"]
    src = path.with_suffix(f".{os.getpid()}.c")
    part = path.with_suffix(f".{os.getpid()}.part")
    src.write_text(C_SOURCE)
    try:
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-O2", "-shared", "-fPIC", f"-I{include}", str(src), "-o", str(part)], check=True,
                       capture_output=True, timeout=120)
        os.replace(part, path)
    finally:
        for p in (src, part):
            try:
                p.unlink()
            except OSError:
                pass


def _load_helper():
    from .cache import cache_dir

    if os.environ.get("XBLOCK_NO_C_HELPER"):
        return None
    tag = f"{sys.implementation.cache_tag}-{np.__version__}-{sys.platform}"
    digest = hashlib.sha256((C_SOURCE + tag).encode()).hexdigest()[:16]
    path = cache_dir() / ".ext" / f".fastpath-{digest}.so"  # hidden: not a cache entry
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            _build(path)
        loader = importlib.machinery.ExtensionFileLoader("xblock_fastpath", str(path))
        spec = importlib.util.spec_from_loader("xblock_fastpath", loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
    except (OSError, subprocess.SubprocessError, ImportError):
        return None  # no compiler, no headers, or a cache that cannot hold it: the Python codes serve
    mod.init(np.ndarray, spec_other, ord(">" if _LITTLE else "<"))
    return mod if _agrees(mod) else None


def _agrees(mod) -> bool:
    """The helper reads arrays as numpy does, and computes the Python codes (else it is not used)."""
    probes = [np.zeros(5, np.float32), np.zeros((3, 4), np.int64).T, np.zeros(7, np.uint8)[1:],
              np.zeros(2, np.float16), 0, 1, 16, -16, 2**31, 2**32 + 16, 2**63, -(2**63), True, 1.5, None]
    a = probes[1]
    ro = np.zeros(3)
    ro.flags.writeable = False
    for arr in (*probes[:4], ro):
        addr, num, flags = mod.array_info(arr)
        if (addr, num) != (arr.__array_interface__["data"][0], arr.dtype.num):
            return False
        if bool(flags & 1) != arr.flags.c_contiguous or bool(flags & 0x400) != arr.flags.writeable:
            return False
    del a
    for mode, fn in enumerate((mod.spec, mod.spec_no_align, mod.spec_none)):
        if any(fn(v) != spec_py(v, mode) for v in probes):
            return False
    return True


def helper():
    """The C helper module, built and loaded on first use; None where it cannot be."""
    if not _HELPER:
        with _LOCK:
            if not _HELPER:
                _HELPER.append(_load_helper())
    return _HELPER[0]


def spec_functions() -> tuple:
    """(spec, spec_no_align, spec_none): the C helper's functions, or the Python ones."""
    mod = helper()
    if mod is not None:
        return mod.spec, mod.spec_no_align, mod.spec_none
    return spec_py, (lambda v: spec_py(v, 1)), (lambda v: spec_py(v, 2))


def cpu_launch():
    """The helper's direct cpu launch (see C_SOURCE), or None."""
    mod = helper()
    return None if mod is None else mod.cpu_launch
