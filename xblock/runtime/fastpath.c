#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
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

/* What the codes and the cuda launch read of a tensor, through the C functions behind its type's
   descriptors (getters, METH_NOARGS and METH_VARARGS|METH_KEYWORDS methods, as torch's are) without
   the attribute lookup (it saves 10-45 ns an access on torch 2.11). The descriptors are looked up
   again whenever the type changes (its version tag); anything else (a property, a Python method, a
   type with its own __getattribute__) goes through getattr. Unlike getattr, a method set on the
   instance itself (`x.data_ptr = ...`) is not seen. */
enum { XB_IS_CUDA, XB_DTYPE, XB_DATA_PTR, XB_IS_CONTIGUOUS, XB_NATTRS };
static PyObject **attr_names[XB_NATTRS] = {&s_is_cuda, &s_dtype, &s_data_ptr, &s_is_contiguous};
#define XB_ATTR_TYPES 4
static struct { PyTypeObject *type; unsigned int tag; PyObject *descr[XB_NATTRS]; } attr_cache[XB_ATTR_TYPES];
static int attr_next;
static PyObject *empty_tuple;

static PyObject **descriptors(PyTypeObject *t) {
    int i;
    for (i = 0; i < XB_ATTR_TYPES; i++)
        if (attr_cache[i].type == t) break;
    if (i < XB_ATTR_TYPES && (t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) && t->tp_version_tag == attr_cache[i].tag)
        return attr_cache[i].descr;
    if (t->tp_getattro != PyObject_GenericGetAttr) return NULL; /* a __getattr(ibute)__: ask it */
    if (i == XB_ATTR_TYPES) i = attr_next++ % XB_ATTR_TYPES;
    attr_cache[i].type = NULL;
    for (int k = 0; k < XB_NATTRS; k++) {
        PyObject *d = _PyType_Lookup(t, *attr_names[k]); /* borrowed; sets the version tag */
        Py_XSETREF(attr_cache[i].descr[k], Py_XNewRef(d));
    }
    if (!(t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) return NULL;
    attr_cache[i].type = t; /* not owned: a type freed and another at its address has another tag */
    attr_cache[i].tag = t->tp_version_tag;
    return attr_cache[i].descr;
}

static PyObject *tensor_attr(PyObject *v, int which) {
    PyObject **descr = descriptors(Py_TYPE(v));
    PyObject *d = descr ? descr[which] : NULL;
    if (d && Py_IS_TYPE(d, &PyGetSetDescr_Type)) { /* a data descriptor: it wins over the instance dict */
        PyGetSetDef *g = ((PyGetSetDescrObject *)d)->d_getset;
        if (g->get) return g->get(v, g->closure);
    } else if (d && Py_IS_TYPE(d, &PyMethodDescr_Type)) {
        PyMethodDef *m = ((PyMethodDescrObject *)d)->d_method;
        if (m->ml_flags == METH_NOARGS) return m->ml_meth(v, NULL);
        if (m->ml_flags == (METH_VARARGS | METH_KEYWORDS))
            return ((PyCFunctionWithKeywords)(void (*)(void))m->ml_meth)(v, empty_tuple, NULL);
        return PyObject_Vectorcall(d, &v, 1, NULL);
    }
    return which >= XB_DATA_PTR ? PyObject_CallMethodNoArgs(v, *attr_names[which])
                                : PyObject_GetAttr(v, *attr_names[which]);
}

/* (type, dtype, aligned, True, contiguous) of a CUDA tensor, as spec_other computes it; NULL with
   no error set when spec_other must say (a tensor on another device). */
static PyObject *tensor_code(PyObject *v, int mode) {
    PyObject *cuda = tensor_attr(v, XB_IS_CUDA);
    if (!cuda) return NULL;
    int is_cuda = cuda == Py_True;
    Py_DECREF(cuda);
    if (!is_cuda) return other(v, mode);
    PyObject *dtype = tensor_attr(v, XB_DTYPE);
    if (!dtype) return NULL;
    PyObject *aligned = Py_False;
    if (mode == 0) {
        PyObject *ptr = tensor_attr(v, XB_DATA_PTR);
        if (!ptr) { Py_DECREF(dtype); return NULL; }
        unsigned long long p = PyLong_AsUnsignedLongLongMask(ptr);
        Py_DECREF(ptr);
        if (PyErr_Occurred()) { Py_DECREF(dtype); return NULL; }
        aligned = (p & 15) == 0 ? Py_True : Py_False;
    }
    PyObject *contiguous = tensor_attr(v, XB_IS_CONTIGUOUS);
    if (!contiguous) { Py_DECREF(dtype); return NULL; }
    PyObject *r = PyTuple_Pack(5, (PyObject *)Py_TYPE(v), dtype, aligned, Py_True, contiguous);
    Py_DECREF(dtype);
    Py_DECREF(contiguous);
    return r;
}


/* The code of an int (module docstring): 1 with *code set; 0 beyond 64 bits (no error set); -1 on error. */
static int int_class(PyObject *v, int mode, long *code) {
    int overflow, cls;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0) {
        if (x == -1 && PyErr_Occurred()) return -1;
        cls = (x >= -2147483648LL && x < 2147483648LL) ? 0 : (x >= 0 && x < 4294967296LL) ? 1 : 2;
    } else if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        x = (long long)u;
        cls = 3;
    } else {
        return 0;
    }
    *code = (mode <= 1 && x == 1 && cls == 0) ? 2 : (mode == 0 && (x & 15) == 0) ? cls * 3 + 1 : cls * 3;
    return 1;
}

static PyObject *int_code(PyObject *v, int mode) {
    long c;
    int r = int_class(v, mode, &c);
    if (r < 0) return NULL;
    return r ? PyLong_FromLong(c) : other(v, mode);
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
        empty_tuple = PyTuple_New(0);
    }
    Py_RETURN_NONE;
}

static PyObject *set_tensor_type(PyObject *self, PyObject *t) {
    if (!PyType_Check(t)) { PyErr_SetString(PyExc_TypeError, "expected a type"); return NULL; }
    Py_XSETREF(tensor_type, (PyTypeObject *)Py_NewRef(t));
    Py_RETURN_NONE;
}

typedef void (*xb_entry)(uint64_t *, int32_t, int32_t, int32_t, int64_t, int64_t);

/* What cpu_run says: the kernel ran, an argument needs the Python launcher (nothing ran), a device
   assert failed (the kernel ran; *status holds the failure), or an error is set. */
enum { XB_RAN, XB_NOT_TAKEN, XB_ASSERTED, XB_ERROR };

/* Pack the arguments into 8-byte slots and run programs [0, g0*g1*g2) of a cpu kernel on this thread,
   without the GIL. kinds: a byte per argument: 'p' array, 'i' integer, 'f' fp32, 'd' fp64; written: 1
   for the arrays the kernel writes; itemsizes: element bytes of each array. status_slot/bounds_slot:
   where (after the arguments) the assert status word and the arrays' [start, end) table go, or -1. */
static int cpu_run(void *entry, const char *kinds, const char *written, const char *itemsizes, Py_ssize_t nargs,
                   PyObject *const *items, const long long g[3], long status_slot, long bounds_slot,
                   uint64_t *status_out) {
    uint64_t slots[XB_MAX_SLOTS + 8] = {0};  /* the runtime slots after the arguments stay 0 */
    uint64_t extents[2 * XB_MAX_SLOTS];
    uint64_t status = ~0ULL;
    Py_ssize_t npointers = 0;
    if (nargs > XB_MAX_SLOTS || status_slot > 7 || bounds_slot > 7) return XB_NOT_TAKEN;
    for (int d = 0; d < 3; d++)
        if (g[d] < 0 || g[d] > 0x7fffffffLL) return XB_NOT_TAKEN;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *v = items[i];
        switch (kinds[i]) {
        case 'p': {
            if (Py_TYPE(v) != ndarray_type) return XB_NOT_TAKEN;
            xb_array *a = (xb_array *)v;
            if (!(a->flags & XB_C_CONTIGUOUS)) return XB_NOT_TAKEN;
            if (written[i] && !(a->flags & XB_WRITEABLE)) return XB_NOT_TAKEN;
            slots[i] = (uint64_t)(uintptr_t)a->data;
            uint64_t count = 1;
            for (int d = 0; d < a->nd; d++) count *= (uint64_t)a->dims[d];
            extents[2 * npointers] = slots[i];
            extents[2 * npointers + 1] = slots[i] + count * (uint64_t)(unsigned char)itemsizes[i];
            npointers++;
            break;
        }
        case 'i':
            if (!PyLong_Check(v)) return XB_NOT_TAKEN;
            slots[i] = PyLong_AsUnsignedLongLongMask(v);
            if (slots[i] == (uint64_t)-1 && PyErr_Occurred()) { PyErr_Clear(); return XB_NOT_TAKEN; }
            break;
        case 'f': case 'd': {
            if (!PyFloat_Check(v) && !PyLong_CheckExact(v)) return XB_NOT_TAKEN;
            double x = PyFloat_AsDouble(v);
            if (x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return XB_NOT_TAKEN; }
            if (kinds[i] == 'f') { float f = (float)x; uint32_t b; memcpy(&b, &f, 4); slots[i] = b; }
            else memcpy(&slots[i], &x, 8);
            break;
        }
        default:
            return XB_NOT_TAKEN;
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
    if (status == ~0ULL) return XB_RAN;
    *status_out = status;
    return XB_ASSERTED;
}

/* cpu_launch(entry, kinds, written, itemsizes, args, g0, g1, g2, status_slot, bounds_slot): cpu_run from
   Python. Returns None when the kernel ran, the status word when an assert failed, and NotImplemented
   when an argument needs the Python launcher (which also reports what is wrong with it). */
static PyObject *cpu_launch(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    if (n != 10) { PyErr_SetString(PyExc_TypeError, "cpu_launch takes 10 arguments"); return NULL; }
    void *entry = PyLong_AsVoidPtr(args[0]);
    const char *kinds = PyBytes_AsString(args[1]);
    const char *written = PyBytes_AsString(args[2]);
    const char *itemsizes = PyBytes_AsString(args[3]);
    long status_slot = PyLong_AsLong(args[8]), bounds_slot = PyLong_AsLong(args[9]);
    if (!kinds || !written || !itemsizes || PyErr_Occurred()) return NULL;
    PyObject *seq = args[4];
    Py_ssize_t nargs = PyBytes_GET_SIZE(args[1]);
    PyObject **items;
    if (PyTuple_CheckExact(seq) && PyTuple_GET_SIZE(seq) == nargs) items = &PyTuple_GET_ITEM(seq, 0);
    else if (PyList_CheckExact(seq) && PyList_GET_SIZE(seq) == nargs) items = &PyList_GET_ITEM(seq, 0);
    else Py_RETURN_NOTIMPLEMENTED;
    long long g[3];
    for (int d = 0; d < 3; d++) {
        if (!PyLong_CheckExact(args[5 + d])) Py_RETURN_NOTIMPLEMENTED;
        g[d] = PyLong_AsLongLong(args[5 + d]);
        if (g[d] == -1 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NOTIMPLEMENTED; }
    }
    uint64_t status;
    switch (cpu_run(entry, kinds, written, itemsizes, nargs, items, g, status_slot, bounds_slot, &status)) {
    case XB_RAN: Py_RETURN_NONE;
    case XB_ASSERTED: return PyLong_FromUnsignedLongLong(status);
    default: Py_RETURN_NOTIMPLEMENTED;
    }
}

/* ------------------------------------------------------------------------------ the cuda launch
   CudaLaunch is the C base of cuda launchers (backends/cuda/launch.py): calling one launches the
   kernel with cuLaunchKernel on the current torch stream, or, for anything it does not cover, calls
   the instance's Python `launch_python(grid, args)`, which launches through Triton and reports
   what is wrong. The driver's entry points come as addresses (libcuda through ctypes, or test fakes). */
typedef int (*xb_cu_launch)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shared, void *stream, void **params, void **extra);
typedef int (*xb_cu_ctx)(void **ctx);
typedef int (*xb_cu_param_info)(void *f, size_t index, size_t *offset, size_t *size);
#define XB_MAX_DEVICES 64
#define XB_SCRATCH 2 /* Triton 3.6 kernels end with the global and profile scratch pointers */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int armed, nargs, check_devices;
    unsigned block_x, shared;
    char kinds[XB_MAX_SLOTS];           /* 'p' tensor, 'i'/'u' signed/unsigned int, 'f' fp32, 'd' fp64,
                                           'h' fp16, 'b' bf16 */
    unsigned char widths[XB_MAX_SLOTS]; /* bytes of each kernel parameter */
    PyTypeObject *tensor;
    PyObject *get_stream, *get_device;  /* get_device: NULL on a one-GPU machine (device 0) */
    xb_cu_launch launch;
    xb_cu_ctx ctx_get_current;
    xb_cu_param_info param_info;
    void *functions[XB_MAX_DEVICES], *contexts[XB_MAX_DEVICES];
} xb_cuda_launch;

static PyObject *s_launch_python, *s_check_devices;

static PyObject *cl_fallback(xb_cuda_launch *self, PyObject *grid, PyObject *args) {
    PyObject *a[3] = {(PyObject *)self, grid, args};
    return PyObject_VectorcallMethod(s_launch_python, a, 3, NULL);
}

/* An int in the range of its parameter type into the low bytes of a slot; 0 (no error set) otherwise. */
static int pack_int(PyObject *v, char kind, int width, uint64_t *slot) {
    PyObject *n = PyLong_Check(v) ? Py_NewRef(v) : PyNumber_Index(v);
    if (!n) { PyErr_Clear(); return 0; }
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (overflow > 0 && kind == 'u' && width == 8) {
        unsigned long long u = PyLong_AsUnsignedLongLong(n);
        Py_DECREF(n);
        if (PyErr_Occurred()) { PyErr_Clear(); return 0; }
        *slot = u;
        return 1;
    }
    Py_DECREF(n);
    if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    if (overflow) return 0;
    int bits = 8 * width;
    if (kind == 'i' && bits < 64 && (x < -(1LL << (bits - 1)) || x >= (1LL << (bits - 1)))) return 0;
    if (kind == 'u' && (x < 0 || (bits < 64 && x >= (1LL << bits)))) return 0;
    *slot = (uint64_t)x & (bits < 64 ? (1ULL << bits) - 1 : ~0ULL);
    return 1;
}

static int pack_float(PyObject *v, char kind, uint64_t *slot) {
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    float f = (float)x;
    uint32_t b;
    switch (kind) {
    case 'd': memcpy(slot, &x, 8); return 1;
    case 'f': memcpy(&b, &f, 4); *slot = b; return 1;
    case 'b': memcpy(&b, &f, 4); *slot = b >> 16; return 1; /* as Triton's launcher: truncated */
    case 'h':
        *slot = 0;
#if PY_VERSION_HEX < 0x030B0000
        if (_PyFloat_Pack2(x, (unsigned char *)slot, 1) < 0) { PyErr_Clear(); return 0; }
#else
        if (PyFloat_Pack2(x, (char *)slot, 1) < 0) { PyErr_Clear(); return 0; }
#endif
        return 1;
    }
    return 0;
}

/* The device address of a CUDA tensor; 0 (no error set) for anything else. */
static int pack_pointer(xb_cuda_launch *self, PyObject *v, uint64_t *slot) {
    if (!PyObject_TypeCheck(v, self->tensor)) return 0;
    PyObject *cuda = tensor_attr(v, XB_IS_CUDA);
    if (!cuda) { PyErr_Clear(); return 0; }
    int is_cuda = cuda == Py_True;
    Py_DECREF(cuda);
    if (!is_cuda) return 0; /* a host tensor: the Python launch says so */
    PyObject *ptr = tensor_attr(v, XB_DATA_PTR);
    if (!ptr) { PyErr_Clear(); return 0; }
    *slot = PyLong_Check(ptr) ? PyLong_AsUnsignedLongLongMask(ptr) : (uint64_t)-1;
    Py_DECREF(ptr);
    if (PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return *slot != (uint64_t)-1;
}

/* The current device (0 without get_device), or -1 when the Python launch must say. */
static long cl_device(xb_cuda_launch *self) {
    if (!self->get_device) return 0;
    PyObject *d = PyObject_CallNoArgs(self->get_device);
    long device = d ? PyLong_AsLong(d) : -1;
    Py_XDECREF(d);
    if (PyErr_Occurred()) { PyErr_Clear(); return -1; }
    return device;
}

static int cl_stream(xb_cuda_launch *self, long device, void **stream) {
    PyObject *d = PyLong_FromLong(device);
    if (!d) { PyErr_Clear(); return 0; }
    PyObject *s = PyObject_CallOneArg(self->get_stream, d);
    Py_DECREF(d);
    if (!s) { PyErr_Clear(); return 0; }
    *stream = PyLong_AsVoidPtr(s);
    Py_DECREF(s);
    if (PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return 1;
}

/* The Python launch of what the C launch does not take; `grid` and `args` are made from g and items
   where the caller has no such objects. */
static PyObject *cl_fallback_items(xb_cuda_launch *self, PyObject *grid, const long long g[3], PyObject *args,
                                   PyObject *const *items, Py_ssize_t n) {
    PyObject *own_grid = NULL, *own_args = NULL, *r;
    if (!grid) grid = own_grid = Py_BuildValue("(LLL)", g[0], g[1], g[2]);
    if (grid && !args) {
        args = own_args = PyTuple_New(n);
        for (Py_ssize_t i = 0; args && i < n; i++) PyTuple_SET_ITEM(args, i, Py_NewRef(items[i]));
    }
    r = grid && args ? cl_fallback(self, grid, args) : NULL;
    Py_XDECREF(own_grid);
    Py_XDECREF(own_args);
    return r;
}

#define XB_FALLBACK return cl_fallback_items(self, grid, g, args, items, n)

/* Launch with grid g on the runtime arguments items[0..n): in C, or through `launch_python` (given
   `grid`/`args` where the caller has them, else made here). ptrs, where not NULL, holds the device
   address of each CUDA tensor among items as the caller read it (0: read it here). */
static PyObject *cl_launch(xb_cuda_launch *self, const long long g[3], PyObject *grid, PyObject *const *items,
                           Py_ssize_t n, PyObject *args, const uint64_t *ptrs) {
    if (!self->armed) XB_FALLBACK;
    if (g[0] < 0 || g[0] > 0x7fffffffLL || g[1] < 0 || g[1] > 65535 || g[2] < 0 || g[2] > 65535)
        XB_FALLBACK; /* beyond CUDA's limits: the Python launch reports it */
    if (n != self->nargs) XB_FALLBACK;
    if (self->check_devices) { /* several GPUs: every tensor on the current one, or a LaunchError */
        PyObject *own = NULL;
        if (!args) {
            args = own = PyTuple_New(n);
            for (Py_ssize_t i = 0; own && i < n; i++) PyTuple_SET_ITEM(own, i, Py_NewRef(items[i]));
        }
        PyObject *r = args ? PyObject_CallMethodOneArg((PyObject *)self, s_check_devices, args) : NULL;
        if (!r) { Py_XDECREF(own); return NULL; }
        Py_DECREF(r);
        if (own) { args = NULL; Py_DECREF(own); }
    }
    long device = cl_device(self);
    if (device < 0 || device >= XB_MAX_DEVICES || !self->functions[device]) XB_FALLBACK;
    void *ctx = NULL;
    if (self->ctx_get_current(&ctx) != 0 || ctx != self->contexts[device]) XB_FALLBACK;
    uint64_t slots[XB_MAX_SLOTS + XB_SCRATCH];
    void *params[XB_MAX_SLOTS + XB_SCRATCH];
    for (int i = 0; i < self->nargs; i++) {
        char k = self->kinds[i];
        int ok;
        if (k == 'p' && ptrs && ptrs[i] && PyObject_TypeCheck(items[i], self->tensor)) { slots[i] = ptrs[i]; ok = 1; }
        else ok = k == 'p' ? pack_pointer(self, items[i], &slots[i])
               : (k == 'i' || k == 'u') ? pack_int(items[i], k, self->widths[i], &slots[i])
               : pack_float(items[i], k, &slots[i]);
        if (!ok) XB_FALLBACK;
        params[i] = &slots[i];
    }
    for (int i = self->nargs; i < self->nargs + XB_SCRATCH; i++) {
        slots[i] = 0; /* no scratch memory (kernels that need some are never armed) */
        params[i] = &slots[i];
    }
    void *stream;
    if (!cl_stream(self, device, &stream)) XB_FALLBACK;
    if (g[0] * g[1] * g[2] == 0) Py_RETURN_NONE; /* as Triton: an empty grid launches nothing */
    if (self->launch(self->functions[device], (unsigned)g[0], (unsigned)g[1], (unsigned)g[2], self->block_x, 1, 1,
                     self->shared, stream, params, NULL))
        XB_FALLBACK; /* nothing was launched: the Python launch retries and reports the failure */
    Py_RETURN_NONE;
}

static int grid_dim(PyObject *v, long long *out) {
    if (!PyLong_CheckExact(v)) return 0;
    *out = PyLong_AsLongLong(v);
    if (*out == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return 1;
}

/* launcher(grid, args): the grid a tuple or list of 3 ints, the arguments a tuple or list. */
static PyObject *cl_run(xb_cuda_launch *self, PyObject *grid, PyObject *args) {
    PyObject **gv, **items = NULL;
    Py_ssize_t n = 0;
    long long g[3] = {-1, -1, -1};
    if (PyTuple_CheckExact(args)) { items = &PyTuple_GET_ITEM(args, 0); n = PyTuple_GET_SIZE(args); }
    else if (PyList_CheckExact(args)) { items = &PyList_GET_ITEM(args, 0); n = PyList_GET_SIZE(args); }
    else return cl_fallback(self, grid, args);
    if (PyTuple_CheckExact(grid) && PyTuple_GET_SIZE(grid) == 3) gv = &PyTuple_GET_ITEM(grid, 0);
    else if (PyList_CheckExact(grid) && PyList_GET_SIZE(grid) == 3) gv = &PyList_GET_ITEM(grid, 0);
    else return cl_fallback(self, grid, args);
    if (!grid_dim(gv[0], &g[0]) || !grid_dim(gv[1], &g[1]) || !grid_dim(gv[2], &g[2]))
        return cl_fallback(self, grid, args);
    return cl_launch(self, g, grid, items, n, args, NULL);
}

static PyObject *cl_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (PyVectorcall_NARGS(nargsf) != 2 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "a launcher takes (grid, args)");
        return NULL;
    }
    return cl_run((xb_cuda_launch *)self, args[0], args[1]);
}

static PyObject *cl_call(PyObject *self, PyObject *args, PyObject *kw) {
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 2 || (kw && PyDict_GET_SIZE(kw))) {
        PyErr_SetString(PyExc_TypeError, "a launcher takes (grid, args)");
        return NULL;
    }
    return cl_run((xb_cuda_launch *)self, PyTuple_GET_ITEM(args, 0), PyTuple_GET_ITEM(args, 1));
}

static PyObject *cl_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    xb_cuda_launch *self = (xb_cuda_launch *)type->tp_alloc(type, 0);
    if (self) self->vectorcall = cl_vectorcall;
    return (PyObject *)self;
}

static void cl_dealloc(PyObject *o) {
    xb_cuda_launch *self = (xb_cuda_launch *)o;
    Py_CLEAR(self->tensor);
    Py_CLEAR(self->get_stream);
    Py_CLEAR(self->get_device);
    Py_TYPE(o)->tp_free(o);
}

/* arm(kinds, widths, block_x, shared, tensor_type, get_stream, get_device or None, check_devices,
       cuLaunchKernel, cuCtxGetCurrent, cuFuncGetParamInfo or 0): launch in C from now on, once
   set_function has given the kernel's function on a device. */
static PyObject *cl_arm(PyObject *o, PyObject *const *args, Py_ssize_t n) {
    xb_cuda_launch *self = (xb_cuda_launch *)o;
    if (n != 11 || !PyBytes_Check(args[0]) || !PyBytes_Check(args[1]) || !PyType_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "arm(kinds, widths, block_x, shared, tensor_type, get_stream, get_device, "
                                         "check_devices, launch, ctx_get_current, param_info)");
        return NULL;
    }
    Py_ssize_t nargs = PyBytes_GET_SIZE(args[0]);
    if (nargs > XB_MAX_SLOTS || PyBytes_GET_SIZE(args[1]) != nargs) Py_RETURN_FALSE;
    long block_x = PyLong_AsLong(args[2]), shared = PyLong_AsLong(args[3]);
    int check = PyObject_IsTrue(args[7]);
    void *launch = PyLong_AsVoidPtr(args[8]), *ctx = PyLong_AsVoidPtr(args[9]), *info = PyLong_AsVoidPtr(args[10]);
    if (PyErr_Occurred()) return NULL;
    if (!launch || !ctx || block_x <= 0 || shared < 0) Py_RETURN_FALSE;
    const char *kinds = PyBytes_AS_STRING(args[0]);
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (!kinds[i] || !strchr("piufdhb", kinds[i])) Py_RETURN_FALSE;
    memcpy(self->kinds, kinds, nargs);
    memcpy(self->widths, PyBytes_AS_STRING(args[1]), nargs);
    self->nargs = (int)nargs;
    self->block_x = (unsigned)block_x;
    self->shared = (unsigned)shared;
    Py_XSETREF(self->tensor, (PyTypeObject *)Py_NewRef(args[4]));
    Py_XSETREF(self->get_stream, Py_NewRef(args[5]));
    Py_XSETREF(self->get_device, args[6] == Py_None ? NULL : Py_NewRef(args[6]));
    self->check_devices = check;
    self->launch = (xb_cu_launch)launch;
    self->ctx_get_current = (xb_cu_ctx)ctx;
    self->param_info = (xb_cu_param_info)info;
    memset(self->functions, 0, sizeof self->functions);
    self->armed = 1;
    Py_RETURN_TRUE;
}

/* The kernel's parameters are the arguments, then the two scratch pointers (where the driver can say). */
static int cl_params_match(xb_cuda_launch *self, void *f) {
    size_t offset, size;
    if (!self->param_info || self->param_info(f, 0, &offset, &size) != 0) return 1; /* an older driver */
    for (int i = 0; i < self->nargs + XB_SCRATCH; i++) {
        if (self->param_info(f, i, &offset, &size) != 0) return 0;
        if (size != (i < self->nargs ? self->widths[i] : 8)) return 0;
    }
    return self->param_info(f, self->nargs + XB_SCRATCH, &offset, &size) != 0;
}

/* set_function(device, CUfunction) -> whether the C launch takes that device from now on (the function
   must have been loaded in the context current now). A kernel whose parameters are not the expected
   ones disarms the C launch. */
static PyObject *cl_set_function(PyObject *o, PyObject *const *args, Py_ssize_t n) {
    xb_cuda_launch *self = (xb_cuda_launch *)o;
    if (n != 2) { PyErr_SetString(PyExc_TypeError, "set_function(device, function)"); return NULL; }
    long device = PyLong_AsLong(args[0]);
    void *f = PyLong_AsVoidPtr(args[1]);
    if (PyErr_Occurred()) return NULL;
    void *ctx = NULL;
    if (!self->armed || device < 0 || device >= XB_MAX_DEVICES || !f) Py_RETURN_FALSE;
    if (!cl_params_match(self, f)) { self->armed = 0; Py_RETURN_FALSE; }
    if (self->ctx_get_current(&ctx) != 0 || !ctx) Py_RETURN_FALSE;
    self->functions[device] = f;
    self->contexts[device] = ctx;
    Py_RETURN_TRUE;
}

static PyObject *cl_armed(PyObject *o, void *closure) { return PyBool_FromLong(((xb_cuda_launch *)o)->armed); }

static PyMethodDef cl_methods[] = {
    {"arm", (PyCFunction)(void (*)(void))cl_arm, METH_FASTCALL, "launch in C from now on (see the source)"},
    {"set_function", (PyCFunction)(void (*)(void))cl_set_function, METH_FASTCALL, "its CUfunction on a device"},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef cl_getset[] = {{"c_launch_armed", cl_armed, NULL, "whether launches run in C", NULL}, {NULL}};

static PyTypeObject xb_cuda_launch_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "xblock_fastpath.CudaLaunch",
    .tp_basicsize = sizeof(xb_cuda_launch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(xb_cuda_launch, vectorcall),
    .tp_call = cl_call,
    .tp_new = cl_new,
    .tp_dealloc = cl_dealloc,
    .tp_methods = cl_methods,
    .tp_getset = cl_getset,
    .tp_doc = "the C launch of a cuda kernel; the base of backends/cuda/launch.py's launchers",
};

/* ------------------------------------------------------------------------------ the launch memo
   Dispatch is a kernel's memo of launches, so that a `kernel[grid](...)` of a kind seen before runs
   without Python. `dispatch[grid]` is a Launch (the memo and the grid; the latest is kept for the
   next `[grid]` of the same grid object). Calling a Launch
   1. binds the arguments to the kernel's parameters as Python binds them (positions, keywords,
      defaults; `target=` and the launch options apart);
   2. makes the launch's key, words on the stack: for a runtime parameter the code `spec` gives its
      value (a CUDA tensor's dtype as a small number), for a constexpr or an option its value (an int
      or a float, or the object itself when it is immutable: the entry keeps it alive, so that its
      address stays its);
   3. evaluates the grid: a tuple of ints or an int without Python, a callable once per distinct value
      of the parameters it reads (GridMemo's analysis, runtime/grids.py);
   4. finds the key in a hash table of entries (the CompiledKernel, its launcher, the positions of the
      runtime arguments) and launches: the C cuda launch, the C cpu launch, or the launcher in Python.
      It returns the CompiledKernel.
   Anything else (a key not seen, an argument without a C code, a grid that is not ints) calls
   `miss(kernel, key or None, grid, args, kwargs)`, the Python path, which `learn`s the key once it
   launched. A key holds all that the Python path's key holds, or more: it never reuses a kernel the
   Python path would not. Nothing is allocated on a hit, except the Launch of a new grid object. */
#define XB_MAX_PARAMS 64
#define XB_MAX_OPTS 8
#define XB_MEMO_SLOTS 256 /* a power of 2 */
#define XB_PROBES 8
#define XB_KEY_WORDS (1 + 2 * XB_MAX_PARAMS + 3 * XB_MAX_OPTS)
#define XB_MAX_OBJS (XB_MAX_PARAMS + 2 * XB_MAX_OPTS)
#define XB_GRID_READS 8
#define XB_GRID_FNS 16
#define XB_GRID_RESULTS 64
#define XB_MAX_DTYPES 64
enum { K_NONE = 1, K_CODE, K_INT, K_FLOAT, K_OBJ, K_TENSOR };
enum { XB_KIND_PY, XB_KIND_CUDA, XB_KIND_CPU };

typedef struct {
    int nwords, nobjs;
    uint64_t w[XB_KEY_WORDS];
    PyObject *objs[XB_MAX_OBJS]; /* borrowed: the objects of the key's K_OBJ words and option names */
    uint64_t ptrs[XB_MAX_PARAMS]; /* per parameter: the device address read for a tensor's code, or 0 */
} xb_key;

typedef struct {
    uint64_t hash;
    int nwords, kind, npos;
    uint64_t *words;
    PyObject *refs, *ck, *launcher; /* refs: a tuple that keeps the key's objects alive */
    unsigned char pos[XB_MAX_PARAMS];
    void *entry; /* the cpu direct launch: see `_with_direct_path` in backends/cpu/launch.py */
    PyObject *kinds, *written, *itemsizes, *report;
    long status_slot, bounds_slot, threads;
} xb_memo_entry;

typedef struct { PyObject *grid; int nread; unsigned char idx[XB_GRID_READS]; } xb_grid_reads;
typedef struct { PyObject *grid, *refs; uint64_t hash; int nwords; uint64_t w[2 * XB_GRID_READS]; long long g[3]; }
    xb_grid_result;

typedef struct {
    PyObject_HEAD
    int nparams;
    unsigned char modes[XB_MAX_PARAMS]; /* a runtime parameter's spec mode (0, 1, 2), or 3 for a constexpr */
    PyObject *names;                    /* the parameters' names, interned */
    PyObject *defaults[XB_MAX_PARAMS];  /* NULL: no default */
    PyObject *options;                  /* keywords that are launch options, `target` among them */
    PyObject *kernel, *miss, *grid_miss, *error_type, *surface;
    PyObject *last;                     /* the latest Launch */
    xb_memo_entry *slots[XB_MEMO_SLOTS];
    xb_grid_reads reads[XB_GRID_FNS];
    xb_grid_result results[XB_GRID_RESULTS];
} xb_dispatch;

typedef struct { PyObject_HEAD vectorcallfunc vectorcall; xb_dispatch *d; PyObject *grid; } xb_launch_obj;

static PyTypeObject xb_dispatch_type, xb_launch_type;
static PyObject *s_target, *s_grid, *s_launcher, *s_c_direct;
static PyObject *dtype_ids[XB_MAX_DTYPES];
static int n_dtype_ids;

/* A small number per dtype (equal dtypes share it); -1 when the table is full. */
static int dtype_id(PyObject *dt) {
    for (int i = 0; i < n_dtype_ids; i++)
        if (dtype_ids[i] == dt) return i;
    for (int i = 0; i < n_dtype_ids; i++) {
        int eq = Py_TYPE(dtype_ids[i]) == Py_TYPE(dt) ? PyObject_RichCompareBool(dtype_ids[i], dt, Py_EQ) : 0;
        if (eq < 0) { PyErr_Clear(); return -1; }
        if (eq) return i;
    }
    if (n_dtype_ids == XB_MAX_DTYPES) return -1;
    dtype_ids[n_dtype_ids] = Py_NewRef(dt);
    return n_dtype_ids++;
}

static uint64_t words_hash(const uint64_t *w, int n, uint64_t h) {
    for (int i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

/* Whether v may be keyed by its identity: a value that cannot change and that Python's key hashes. */
static int immutable(PyObject *v) {
    PyTypeObject *t = Py_TYPE(v);
    if (v == Py_None || t == &PyBool_Type || t == &PyFloat_Type || t == &PyUnicode_Type || t == &PyBytes_Type ||
        t == &PyComplex_Type)
        return 1;
    if (!t->tp_hash || t->tp_hash == PyObject_HashNotImplemented || t == &PyByteArray_Type) return 0;
    if (PyTuple_Check(v) || PyAnySet_Check(v)) { /* a tuple of lists hashes to an error */
        if (PyObject_Hash(v) == -1) { PyErr_Clear(); return 0; }
    }
    return 1;
}

/* The words of a constexpr's or an option's value (K_INT x, K_FLOAT bits, or K_OBJ address); 0 when
   it has none. Ints and floats go by value: one computed afresh for each launch still hits. */
static int value_words(uint64_t *w, int *nw, PyObject **objs, int *nobjs, int max_objs, PyObject *v) {
    if (PyLong_CheckExact(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        if (!overflow) { w[(*nw)++] = K_INT; w[(*nw)++] = (uint64_t)x; return 1; }
    }
    if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        w[(*nw)++] = K_FLOAT;
        memcpy(&w[(*nw)++], &x, sizeof x);
        return 1;
    }
    if (*nobjs == max_objs || !immutable(v)) return 0;
    objs[(*nobjs)++] = v;
    w[(*nw)++] = K_OBJ;
    w[(*nw)++] = (uint64_t)(uintptr_t)v;
    return 1;
}

static int key_value(xb_key *k, PyObject *v) {
    return value_words(k->w, &k->nwords, k->objs, &k->nobjs, XB_MAX_OBJS, v);
}

/* K_TENSOR (dtype number, 16-byte alignment, contiguity) of a CUDA tensor; 0 for any other tensor. */
static int tensor_words(xb_key *k, PyObject *v, int mode, int param) {
    PyObject *x = tensor_attr(v, XB_IS_CUDA);
    if (!x) goto error;
    int is_cuda = x == Py_True;
    Py_DECREF(x);
    if (!is_cuda) return 0;
    if (!(x = tensor_attr(v, XB_DTYPE))) goto error;
    int id = dtype_id(x);
    Py_DECREF(x);
    if (id < 0) return 0;
    uint64_t aligned = 0;
    if (mode == 0) {
        if (!(x = tensor_attr(v, XB_DATA_PTR))) goto error;
        unsigned long long p = PyLong_AsUnsignedLongLongMask(x);
        Py_DECREF(x);
        if (PyErr_Occurred()) goto error;
        aligned = (p & 15) == 0;
        k->ptrs[param] = p;
    }
    if (!(x = tensor_attr(v, XB_IS_CONTIGUOUS))) goto error;
    int contiguous = PyObject_IsTrue(x);
    Py_DECREF(x);
    if (contiguous < 0) goto error;
    k->w[k->nwords++] = K_TENSOR;
    k->w[k->nwords++] = ((uint64_t)id << 2) | (aligned << 1) | (uint64_t)contiguous;
    return 1;
error:
    PyErr_Clear();
    return 0;
}

/* The words of a runtime argument: its code (as `code` computes it), None, or a CUDA tensor's. */
static int key_code(xb_key *k, PyObject *v, int mode, int param) {
    PyTypeObject *t = Py_TYPE(v);
    long c;
    k->ptrs[param] = 0;
    if (t == &PyLong_Type) {
        int r = int_class(v, mode, &c);
        if (r <= 0) { PyErr_Clear(); return 0; }
    } else if (t == ndarray_type) {
        xb_array *a = (xb_array *)v;
        if (a->descr->byteorder == swapped_order) return 0;
        long aligned = mode == 0 && ((uintptr_t)a->data & 15) == 0;
        c = 16 + ((a->descr->type_num * 2L + aligned) * 2 + (a->flags & XB_C_CONTIGUOUS ? 1 : 0));
    } else if (t == &PyBool_Type) {
        c = 12;
    } else if (t == &PyFloat_Type) {
        c = 13;
    } else if (v == Py_None) {
        k->w[k->nwords++] = K_NONE;
        k->w[k->nwords++] = 0;
        return 1;
    } else if (t == tensor_type) {
        return tensor_words(k, v, mode, param);
    } else {
        return 0;
    }
    k->w[k->nwords++] = K_CODE;
    k->w[k->nwords++] = (uint64_t)c;
    return 1;
}

static int param_index(xb_dispatch *d, PyObject *name) {
    for (int i = 0; i < d->nparams; i++)
        if (PyTuple_GET_ITEM(d->names, i) == name) return i;
    for (int i = 0; i < d->nparams; i++)
        if (PyUnicode_Compare(PyTuple_GET_ITEM(d->names, i), name) == 0) return i;
    PyErr_Clear();
    return -1;
}

/* Bind the call's arguments to the parameters (borrowed into bound[]) and make its key; 0 when the
   Python path must bind it (an unknown or repeated keyword, a missing argument, no code). */
static int make_key(xb_dispatch *d, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **bound,
                    xb_key *k) {
    int n = d->nparams, nopts = 0;
    PyObject *opt_names[XB_MAX_OPTS], *opt_values[XB_MAX_OPTS];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > n) return 0;
    for (int i = 0; i < n; i++) bound[i] = i < nargs ? args[i] : NULL;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, j), *v = args[nargs + j];
        if (name == s_grid) return 0;
        int i = name == s_target ? -1 : param_index(d, name);
        if (i >= 0) {
            if (bound[i]) return 0;
            bound[i] = v;
            continue;
        }
        if (name != s_target) {
            int known = PySet_Contains(d->options, name);
            if (known <= 0) { PyErr_Clear(); return 0; }
        }
        if (nopts == XB_MAX_OPTS) return 0;
        opt_names[nopts] = name;
        opt_values[nopts++] = v;
    }
    for (int i = 0; i < n; i++)
        if (!bound[i] && !(bound[i] = d->defaults[i])) return 0;
    k->nwords = k->nobjs = 0;
    k->w[k->nwords++] = (uint64_t)n | ((uint64_t)nopts << 16);
    for (int i = 0; i < n; i++) {
        int ok = d->modes[i] == 3 ? key_value(k, bound[i]) : key_code(k, bound[i], d->modes[i], i);
        if (!ok) return 0;
    }
    for (int j = 0; j < nopts; j++) {
        k->objs[k->nobjs++] = opt_names[j];
        k->w[k->nwords++] = (uint64_t)(uintptr_t)opt_names[j];
        if (!key_value(k, opt_values[j])) return 0;
    }
    return 1;
}

static xb_memo_entry *memo_find(xb_dispatch *d, const xb_key *k, uint64_t h) {
    for (int p = 0; p < XB_PROBES; p++) {
        xb_memo_entry *e = d->slots[(h + p) & (XB_MEMO_SLOTS - 1)];
        if (!e) return NULL;
        if (e->hash == h && e->nwords == k->nwords && !memcmp(e->words, k->w, k->nwords * sizeof(uint64_t)))
            return e;
    }
    return NULL;
}

static void entry_free(xb_memo_entry *e) {
    if (!e) return;
    Py_XDECREF(e->refs);
    Py_XDECREF(e->ck);
    Py_XDECREF(e->launcher);
    Py_XDECREF(e->kinds);
    Py_XDECREF(e->written);
    Py_XDECREF(e->itemsizes);
    Py_XDECREF(e->report);
    PyMem_Free(e->words);
    PyMem_Free(e);
}

/* Insert e: into the first free slot of its probes, over an entry of the same key, or over one of the
   probed entries (the table is a cache: an evicted launch takes the Python path and comes back). */
static void memo_put(xb_dispatch *d, xb_memo_entry *e) {
    int at = -1;
    for (int p = 0; p < XB_PROBES && at < 0; p++) {
        int i = (int)((e->hash + p) & (XB_MEMO_SLOTS - 1));
        xb_memo_entry *cur = d->slots[i];
        if (!cur || (cur->hash == e->hash && cur->nwords == e->nwords &&
                     !memcmp(cur->words, e->words, e->nwords * sizeof(uint64_t))))
            at = i;
    }
    if (at < 0) at = (int)((e->hash + (e->hash >> 40) % XB_PROBES) & (XB_MEMO_SLOTS - 1));
    xb_memo_entry *old = d->slots[at];
    d->slots[at] = e;
    entry_free(old); /* after the table holds e: a finalizer run here sees a consistent table */
}

/* A launch's error: an XBlockError loses xblock's frames (`surface`), as the Python path raises it. */
static PyObject *surfaced(xb_dispatch *d) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb) PyException_SetTraceback(value, tb);
    if (value && d->error_type && PyObject_IsInstance(value, d->error_type) == 1) {
        PyObject *err = PyObject_CallOneArg(d->surface, value);
        if (err) {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            PyException_SetCause(err, NULL); /* `raise ... from None` */
            PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(err)), err, PyException_GetTraceback(err));
            return NULL;
        }
        PyErr_Clear();
    }
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return NULL;
}

static PyObject *items_tuple(PyObject *const *items, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
    return t;
}

static PyObject *call_launcher(PyObject *launcher, const long long g[3], PyObject *const *items, int n) {
    PyObject *grid = Py_BuildValue("(LLL)", g[0], g[1], g[2]), *args = grid ? items_tuple(items, n) : NULL;
    PyObject *r = args ? PyObject_CallFunctionObjArgs(launcher, grid, args, NULL) : NULL;
    Py_XDECREF(grid);
    Py_XDECREF(args);
    return r;
}

/* The cpu kernel's direct launch where its Python launcher would take it (one thread, or one program):
   an argument the C launch does not take goes to the Python launcher, a failed assert to `report`. */
static PyObject *cpu_direct(xb_memo_entry *e, PyObject *launcher, const long long g[3], PyObject *const *items,
                            int n) {
    if (e->threads > 1 && g[0] * g[1] * g[2] > 1) return call_launcher(launcher, g, items, n);
    PyObject *kinds = Py_NewRef(e->kinds), *written = Py_NewRef(e->written), *sizes = Py_NewRef(e->itemsizes);
    PyObject *report = Py_NewRef(e->report), *r = NULL; /* e may be evicted while the kernel runs */
    uint64_t status = 0;
    int ran = cpu_run(e->entry, PyBytes_AS_STRING(kinds), PyBytes_AS_STRING(written), PyBytes_AS_STRING(sizes), n,
                      items, g, e->status_slot, e->bounds_slot, &status);
    if (ran == XB_RAN) {
        r = Py_NewRef(Py_None);
    } else if (ran == XB_ASSERTED) {
        PyObject *st = PyLong_FromUnsignedLongLong(status), *grid = Py_BuildValue("(LLL)", g[0], g[1], g[2]);
        PyObject *args = st && grid ? items_tuple(items, n) : NULL;
        r = args ? PyObject_CallFunctionObjArgs(report, st, grid, args, NULL) : NULL;
        Py_XDECREF(st);
        Py_XDECREF(grid);
        Py_XDECREF(args);
    } else {
        r = call_launcher(launcher, g, items, n);
    }
    Py_DECREF(kinds);
    Py_DECREF(written);
    Py_DECREF(sizes);
    Py_DECREF(report);
    return r;
}

static PyObject *memo_launch(xb_dispatch *d, xb_memo_entry *e, const long long g[3], PyObject **bound,
                             const xb_key *k) {
    PyObject *items[XB_MAX_PARAMS];
    uint64_t ptrs[XB_MAX_PARAMS];
    int n = e->npos;
    for (int i = 0; i < n; i++) {
        items[i] = bound[e->pos[i]];
        ptrs[i] = k->ptrs[e->pos[i]];
    }
    PyObject *ck = Py_NewRef(e->ck), *launcher = Py_NewRef(e->launcher), *r;
    switch (e->kind) {
    case XB_KIND_CUDA: r = cl_launch((xb_cuda_launch *)launcher, g, NULL, items, n, NULL, ptrs); break;
    case XB_KIND_CPU: r = cpu_direct(e, launcher, g, items, n); break;
    default: r = call_launcher(launcher, g, items, n);
    }
    Py_DECREF(launcher);
    if (!r) {
        Py_DECREF(ck);
        return surfaced(d);
    }
    Py_DECREF(r);
    return ck;
}

/* ((words as bytes), (the objects they point to)): the key as `miss` hands it back to `learn`. */
static PyObject *key_object(const xb_key *k) {
    PyObject *w = PyBytes_FromStringAndSize((const char *)k->w, k->nwords * (Py_ssize_t)sizeof(uint64_t));
    PyObject *objs = w ? items_tuple(k->objs, k->nobjs) : NULL;
    PyObject *r = objs ? PyTuple_Pack(2, w, objs) : NULL;
    Py_XDECREF(w);
    Py_XDECREF(objs);
    return r;
}

static PyObject *dispatch_miss(xb_dispatch *d, const xb_key *k, PyObject *grid, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *key = k ? key_object(k) : Py_NewRef(Py_None), *pos = NULL, *kw = NULL, *r = NULL;
    if (!key || !(pos = items_tuple(args, nargs)) || !(kw = PyDict_New())) goto done;
    for (Py_ssize_t j = 0; kwnames && j < PyTuple_GET_SIZE(kwnames); j++)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, j), args[nargs + j]) < 0) goto done;
    r = PyObject_CallFunctionObjArgs(d->miss, d->kernel, key, grid, pos, kw, NULL);
done:
    Py_XDECREF(key);
    Py_XDECREF(pos);
    Py_XDECREF(kw);
    return r;
}

static int grid_int(PyObject *v, long long max, long long *out) {
    if (!PyLong_CheckExact(v)) return 0;
    *out = PyLong_AsLongLong(v);
    if (*out == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return *out >= 0 && *out <= max;
}

static const long long grid_limits[3] = {0x7fffffffLL, 65535, 65535}; /* CUDA's, kept on every target */

/* The words of the values a callable grid reads; 0 when one has none. */
static int read_words(xb_grid_reads *rd, PyObject **bound, uint64_t *w, int *nw, PyObject **objs, int *nobjs) {
    *nw = *nobjs = 0;
    for (int j = 0; j < rd->nread; j++)
        if (!value_words(w, nw, objs, nobjs, XB_GRID_READS, bound[rd->idx[j]])) return 0;
    return 1;
}

/* Evaluate a callable grid in Python (`grid_miss(kernel, grid, values)` -> (grid3, positions read or
   None)) and remember what it read and what it gave. 0 when the Python path must say (no error set). */
static int grid_eval(xb_dispatch *d, PyObject *grid, PyObject **bound, long long g[3], xb_grid_reads *rd) {
    PyObject *vals = items_tuple(bound, d->nparams), *r = NULL;
    if (vals) r = PyObject_CallFunctionObjArgs(d->grid_miss, d->kernel, grid, vals, NULL);
    Py_XDECREF(vals);
    if (!r || !PyTuple_CheckExact(r) || PyTuple_GET_SIZE(r) != 2) goto fail;
    PyObject *g3 = PyTuple_GET_ITEM(r, 0), *reads = PyTuple_GET_ITEM(r, 1);
    if (!PyTuple_CheckExact(g3) || PyTuple_GET_SIZE(g3) != 3) goto fail;
    for (int i = 0; i < 3; i++)
        if (!grid_int(PyTuple_GET_ITEM(g3, i), grid_limits[i], &g[i])) goto fail;
    Py_XSETREF(rd->grid, Py_NewRef(grid));
    rd->nread = -1;
    if (PyTuple_CheckExact(reads) && PyTuple_GET_SIZE(reads) <= XB_GRID_READS) {
        int n = (int)PyTuple_GET_SIZE(reads);
        for (int j = 0; j < n; j++) {
            long i = PyLong_AsLong(PyTuple_GET_ITEM(reads, j));
            if (i < 0 || i >= d->nparams) { PyErr_Clear(); n = -1; break; }
            rd->idx[j] = (unsigned char)i;
        }
        rd->nread = n;
    }
    uint64_t w[2 * XB_GRID_READS];
    PyObject *objs[XB_GRID_READS];
    int nw, no;
    if (rd->nread >= 0 && read_words(rd, bound, w, &nw, objs, &no)) {
        uint64_t h = words_hash(w, nw, (uint64_t)(uintptr_t)grid);
        xb_grid_result *res = &d->results[h % XB_GRID_RESULTS];
        PyObject *refs = items_tuple(objs, no);
        if (!refs) goto fail;
        Py_XSETREF(res->refs, refs);
        Py_XSETREF(res->grid, Py_NewRef(grid));
        res->hash = h;
        res->nwords = nw;
        memcpy(res->w, w, nw * sizeof(uint64_t));
        memcpy(res->g, g, sizeof res->g);
    }
    Py_DECREF(r);
    return 1;
fail:
    Py_XDECREF(r);
    PyErr_Clear();
    return 0;
}

/* 1 with g set; 0 when the Python path must evaluate the grid (no error set). */
static int grid_dims(xb_dispatch *d, PyObject *grid, PyObject **bound, long long g[3]) {
    g[0] = g[1] = g[2] = 1;
    if (PyTuple_CheckExact(grid)) { /* as the Python hot path: non-negative ints, limits left to the launcher */
        Py_ssize_t n = PyTuple_GET_SIZE(grid), i;
        for (i = 0; i < n && n <= 3; i++)
            if (!grid_int(PyTuple_GET_ITEM(grid, i), 0x7fffffffffffffffLL, &g[i])) break;
        if (n >= 1 && i == n) return 1;
    }
    if (PyLong_CheckExact(grid)) return grid_int(grid, grid_limits[0], &g[0]);
    if (PyTuple_CheckExact(grid) || PyList_CheckExact(grid)) { /* numpy ints, a list: as `_normalize_grid` */
        Py_ssize_t n = PySequence_Fast_GET_SIZE(grid);
        if (n < 1 || n > 3) return 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *v = PySequence_Fast_GET_ITEM(grid, i);
            if (PyFloat_Check(v) || !PyIndex_Check(v)) return 0;
            PyObject *x = PyNumber_Index(v);
            int ok = x && grid_int(x, grid_limits[i], &g[i]);
            Py_XDECREF(x);
            if (!ok) { PyErr_Clear(); return 0; }
        }
        return 1;
    }
    if (!PyCallable_Check(grid)) return 0;
    xb_grid_reads *rd = &d->reads[((uintptr_t)grid >> 4) % XB_GRID_FNS];
    uint64_t w[2 * XB_GRID_READS];
    PyObject *objs[XB_GRID_READS];
    int nw, no;
    if (rd->grid == grid && rd->nread >= 0 && read_words(rd, bound, w, &nw, objs, &no)) {
        uint64_t h = words_hash(w, nw, (uint64_t)(uintptr_t)grid);
        xb_grid_result *res = &d->results[h % XB_GRID_RESULTS];
        if (res->grid == grid && res->hash == h && res->nwords == nw && !memcmp(res->w, w, nw * sizeof(uint64_t))) {
            memcpy(g, res->g, sizeof res->g);
            return 1;
        }
    }
    return grid_eval(d, grid, bound, g, rd);
}

static PyObject *launch_call(PyObject *o, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    xb_launch_obj *self = (xb_launch_obj *)o;
    xb_dispatch *d = self->d;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *bound[XB_MAX_PARAMS];
    long long g[3];
    xb_key k;
    if (!make_key(d, args, nargs, kwnames, bound, &k)) return dispatch_miss(d, NULL, self->grid, args, nargs, kwnames);
    if (!grid_dims(d, self->grid, bound, g)) return dispatch_miss(d, NULL, self->grid, args, nargs, kwnames);
    xb_memo_entry *e = memo_find(d, &k, words_hash(k.w, k.nwords, 0xcbf29ce484222325ULL));
    if (!e) return dispatch_miss(d, &k, self->grid, args, nargs, kwnames);
    return memo_launch(d, e, g, bound, &k);
}

/* learn(key, ck): launches with `key` (as `miss` got it) run `ck` from now on. */
static PyObject *dispatch_learn(PyObject *o, PyObject *const *args, Py_ssize_t n) {
    xb_dispatch *d = (xb_dispatch *)o;
    if (n != 2 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 2 ||
        !PyBytes_CheckExact(PyTuple_GET_ITEM(args[0], 0)) || !PyTuple_CheckExact(PyTuple_GET_ITEM(args[0], 1))) {
        PyErr_SetString(PyExc_TypeError, "learn(key, compiled kernel)");
        return NULL;
    }
    PyObject *words = PyTuple_GET_ITEM(args[0], 0);
    Py_ssize_t nbytes = PyBytes_GET_SIZE(words);
    if (nbytes % 8 || nbytes / 8 < 1 + 2 * d->nparams || nbytes / 8 > XB_KEY_WORDS) {
        PyErr_SetString(PyExc_ValueError, "not a key of this kernel");
        return NULL;
    }
    PyObject *launcher = PyObject_GetAttr(args[1], s_launcher);
    if (!launcher) return NULL;
    xb_memo_entry *e = PyMem_Calloc(1, sizeof *e);
    if (!e || !(e->words = PyMem_Malloc(nbytes))) {
        PyMem_Free(e);
        Py_DECREF(launcher);
        return PyErr_NoMemory();
    }
    memcpy(e->words, PyBytes_AS_STRING(words), nbytes);
    e->nwords = (int)(nbytes / 8);
    e->hash = words_hash(e->words, e->nwords, 0xcbf29ce484222325ULL);
    e->refs = Py_NewRef(PyTuple_GET_ITEM(args[0], 1));
    e->ck = Py_NewRef(args[1]);
    e->launcher = launcher;
    for (int i = 0; i < d->nparams; i++)
        if (d->modes[i] < 3 && e->words[1 + 2 * i] != K_NONE) e->pos[e->npos++] = (unsigned char)i;
    e->kind = PyObject_TypeCheck(launcher, &xb_cuda_launch_type) ? XB_KIND_CUDA : XB_KIND_PY;
    PyObject *direct = e->kind == XB_KIND_PY ? PyObject_GetAttr(launcher, s_c_direct) : NULL;
    if (!direct) PyErr_Clear();
    /* (entry, kinds, written, itemsizes, status slot, bounds slot, threads, report(status, grid, args)) */
    if (direct && PyTuple_CheckExact(direct) && PyTuple_GET_SIZE(direct) == 8 &&
        PyBytes_CheckExact(PyTuple_GET_ITEM(direct, 1)) && PyBytes_GET_SIZE(PyTuple_GET_ITEM(direct, 1)) == e->npos &&
        PyBytes_CheckExact(PyTuple_GET_ITEM(direct, 2)) && PyBytes_GET_SIZE(PyTuple_GET_ITEM(direct, 2)) == e->npos &&
        PyBytes_CheckExact(PyTuple_GET_ITEM(direct, 3)) && PyBytes_GET_SIZE(PyTuple_GET_ITEM(direct, 3)) == e->npos) {
        e->entry = PyLong_AsVoidPtr(PyTuple_GET_ITEM(direct, 0));
        e->status_slot = PyLong_AsLong(PyTuple_GET_ITEM(direct, 4));
        e->bounds_slot = PyLong_AsLong(PyTuple_GET_ITEM(direct, 5));
        e->threads = PyLong_AsLong(PyTuple_GET_ITEM(direct, 6));
        if (!PyErr_Occurred() && e->entry) {
            e->kinds = Py_NewRef(PyTuple_GET_ITEM(direct, 1));
            e->written = Py_NewRef(PyTuple_GET_ITEM(direct, 2));
            e->itemsizes = Py_NewRef(PyTuple_GET_ITEM(direct, 3));
            e->report = Py_NewRef(PyTuple_GET_ITEM(direct, 7));
            e->kind = XB_KIND_CPU;
        }
        PyErr_Clear();
    }
    Py_XDECREF(direct);
    memo_put(d, e);
    Py_RETURN_NONE;
}

static void dispatch_forget(xb_dispatch *d) {
    for (int i = 0; i < XB_MEMO_SLOTS; i++) {
        xb_memo_entry *e = d->slots[i];
        d->slots[i] = NULL;
        entry_free(e);
    }
    for (int i = 0; i < XB_GRID_FNS; i++) Py_CLEAR(d->reads[i].grid);
    for (int i = 0; i < XB_GRID_RESULTS; i++) {
        Py_CLEAR(d->results[i].grid);
        Py_CLEAR(d->results[i].refs);
    }
    Py_CLEAR(d->last);
}

static PyObject *dispatch_clear_method(PyObject *o, PyObject *unused) {
    dispatch_forget((xb_dispatch *)o);
    Py_RETURN_NONE;
}

static Py_ssize_t dispatch_len(PyObject *o) {
    Py_ssize_t n = 0;
    for (int i = 0; i < XB_MEMO_SLOTS; i++) n += ((xb_dispatch *)o)->slots[i] != NULL;
    return n;
}

static PyObject *dispatch_subscript(PyObject *o, PyObject *grid) {
    xb_dispatch *d = (xb_dispatch *)o;
    if (d->last && ((xb_launch_obj *)d->last)->grid == grid) return Py_NewRef(d->last);
    xb_launch_obj *l = (xb_launch_obj *)xb_launch_type.tp_alloc(&xb_launch_type, 0);
    if (!l) return NULL;
    l->vectorcall = launch_call;
    l->d = (xb_dispatch *)Py_NewRef(o);
    l->grid = Py_NewRef(grid);
    Py_XSETREF(d->last, Py_NewRef((PyObject *)l));
    return (PyObject *)l;
}

static int dispatch_traverse(PyObject *o, visitproc visit, void *arg) {
    xb_dispatch *d = (xb_dispatch *)o;
    Py_VISIT(d->names);
    Py_VISIT(d->options);
    Py_VISIT(d->kernel);
    Py_VISIT(d->miss);
    Py_VISIT(d->grid_miss);
    Py_VISIT(d->error_type);
    Py_VISIT(d->surface);
    Py_VISIT(d->last);
    for (int i = 0; i < d->nparams; i++) Py_VISIT(d->defaults[i]);
    for (int i = 0; i < XB_MEMO_SLOTS; i++) {
        xb_memo_entry *e = d->slots[i];
        if (!e) continue;
        Py_VISIT(e->refs);
        Py_VISIT(e->ck);
        Py_VISIT(e->launcher);
        Py_VISIT(e->report);
    }
    for (int i = 0; i < XB_GRID_FNS; i++) Py_VISIT(d->reads[i].grid);
    for (int i = 0; i < XB_GRID_RESULTS; i++) {
        Py_VISIT(d->results[i].grid);
        Py_VISIT(d->results[i].refs);
    }
    return 0;
}

static int dispatch_tp_clear(PyObject *o) {
    xb_dispatch *d = (xb_dispatch *)o;
    dispatch_forget(d);
    Py_CLEAR(d->names);
    Py_CLEAR(d->options);
    Py_CLEAR(d->kernel);
    Py_CLEAR(d->miss);
    Py_CLEAR(d->grid_miss);
    Py_CLEAR(d->error_type);
    Py_CLEAR(d->surface);
    for (int i = 0; i < d->nparams; i++) Py_CLEAR(d->defaults[i]);
    return 0;
}

static void dispatch_dealloc(PyObject *o) {
    PyObject_GC_UnTrack(o);
    dispatch_tp_clear(o);
    Py_TYPE(o)->tp_free(o);
}

/* dispatch(kernel, names, modes, defaults, no_default, options, miss, grid_miss, error_type, surface). */
static PyObject *make_dispatch(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    if (n != 10 || !PyTuple_CheckExact(args[1]) || !PyBytes_CheckExact(args[2]) || !PyTuple_CheckExact(args[3]) ||
        !PyAnySet_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "dispatch(kernel, names, modes, defaults, no_default, options, miss, "
                                         "grid_miss, error_type, surface)");
        return NULL;
    }
    Py_ssize_t np = PyTuple_GET_SIZE(args[1]);
    if (np > XB_MAX_PARAMS || PyBytes_GET_SIZE(args[2]) != np || PyTuple_GET_SIZE(args[3]) != np) Py_RETURN_NONE;
    xb_dispatch *d = (xb_dispatch *)xb_dispatch_type.tp_alloc(&xb_dispatch_type, 0);
    if (!d) return NULL;
    d->nparams = (int)np;
    d->names = PyTuple_New(np);
    if (!d->names) { Py_DECREF(d); return NULL; }
    for (Py_ssize_t i = 0; i < np; i++) {
        PyObject *name = Py_NewRef(PyTuple_GET_ITEM(args[1], i));
        if (PyUnicode_CheckExact(name)) PyUnicode_InternInPlace(&name);
        PyTuple_SET_ITEM(d->names, i, name);
        d->modes[i] = (unsigned char)PyBytes_AS_STRING(args[2])[i];
        PyObject *dv = PyTuple_GET_ITEM(args[3], i);
        d->defaults[i] = dv == args[4] ? NULL : Py_NewRef(dv);
    }
    d->options = Py_NewRef(args[5]);
    d->kernel = Py_NewRef(args[0]);
    d->miss = Py_NewRef(args[6]);
    d->grid_miss = Py_NewRef(args[7]);
    d->error_type = Py_NewRef(args[8]);
    d->surface = Py_NewRef(args[9]);
    return (PyObject *)d;
}

static PyMethodDef dispatch_methods[] = {
    {"learn", (PyCFunction)(void (*)(void))dispatch_learn, METH_FASTCALL, "learn(key, ck): launches of key run ck"},
    {"clear", dispatch_clear_method, METH_NOARGS, "forget every launch (the next of each takes the Python path)"},
    {NULL, NULL, 0, NULL}};
static PyMappingMethods dispatch_mapping = {.mp_length = dispatch_len, .mp_subscript = dispatch_subscript};

static PyTypeObject xb_dispatch_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "xblock_fastpath.Dispatch",
    .tp_basicsize = sizeof(xb_dispatch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = dispatch_dealloc,
    .tp_traverse = dispatch_traverse,
    .tp_clear = dispatch_tp_clear,
    .tp_as_mapping = &dispatch_mapping,
    .tp_methods = dispatch_methods,
    .tp_doc = "a kernel's memo of launches: dispatch[grid](*args, **kwargs) launches (see the source)",
};

static int launch_traverse(PyObject *o, visitproc visit, void *arg) {
    Py_VISIT(((xb_launch_obj *)o)->d);
    Py_VISIT(((xb_launch_obj *)o)->grid);
    return 0;
}

static int launch_tp_clear(PyObject *o) {
    Py_CLEAR(((xb_launch_obj *)o)->d);
    Py_CLEAR(((xb_launch_obj *)o)->grid);
    return 0;
}

static void launch_dealloc(PyObject *o) {
    PyObject_GC_UnTrack(o);
    launch_tp_clear(o);
    Py_TYPE(o)->tp_free(o);
}

static PyObject *launch_get_grid(PyObject *o, void *closure) { return Py_NewRef(((xb_launch_obj *)o)->grid); }
static PyGetSetDef launch_getset[] = {{"grid", launch_get_grid, NULL, "the launch's grid", NULL}, {NULL}};

static PyTypeObject xb_launch_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "xblock_fastpath.Launch",
    .tp_basicsize = sizeof(xb_launch_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(xb_launch_obj, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = launch_dealloc,
    .tp_traverse = launch_traverse,
    .tp_clear = launch_tp_clear,
    .tp_getset = launch_getset,
    .tp_doc = "kernel[grid]: call it with the launch's arguments",
};

static PyMethodDef methods[] = {
    {"spec", spec, METH_O, "the code of one runtime argument"},
    {"spec_no_align", spec_no_align, METH_O, "its code without alignment (do_not_specialize_on_alignment)"},
    {"spec_none", spec_none, METH_O, "its code without value specialization (do_not_specialize)"},
    {"array_info", array_info, METH_O, "(address, type_num, flags) of an array, as the helper reads them"},
    {"init", (PyCFunction)(void (*)(void))init, METH_FASTCALL, "init(ndarray, spec_other, swapped byte order)"},
    {"cpu_launch", (PyCFunction)(void (*)(void))cpu_launch, METH_FASTCALL, "launch a cpu kernel directly"},
    {"set_tensor_type", set_tensor_type, METH_O, "the tensor type whose codes the helper computes"},
    {"dispatch", (PyCFunction)(void (*)(void))make_dispatch, METH_FASTCALL, "a kernel's memo of launches"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "xblock_fastpath", NULL, -1, methods};
PyMODINIT_FUNC PyInit_xblock_fastpath(void) {
    if (PyType_Ready(&xb_cuda_launch_type) < 0 || PyType_Ready(&xb_dispatch_type) < 0 ||
        PyType_Ready(&xb_launch_type) < 0)
        return NULL;
    s_launch_python = PyUnicode_InternFromString("launch_python");
    s_check_devices = PyUnicode_InternFromString("_check_devices");
    s_target = PyUnicode_InternFromString("target");
    s_grid = PyUnicode_InternFromString("grid");
    s_launcher = PyUnicode_InternFromString("launcher");
    s_c_direct = PyUnicode_InternFromString("c_direct");
    PyObject *m = PyModule_Create(&module);
    if (!m || !s_launch_python || !s_check_devices || !s_target || !s_grid || !s_launcher || !s_c_direct) return NULL;
    if (PyModule_AddObject(m, "CudaLaunch", Py_NewRef((PyObject *)&xb_cuda_launch_type)) < 0) return NULL;
    return m;
}
