/* _gpuc.c: the C extension behind `import gpuc` (python/src/gpuc/). Two jobs:
 *
 *  - compile(): .gdsl text or a path through the compiler library
 *    (compiler/gpuc_compiler.h), in this process, giving the emitted texts
 *    and the diagnostics back as Python objects;
 *  - Program: a program's shared object (the generated C of --emit=program,
 *    compiled by gpuc/_cbackend.py) opened with dlopen, whose GpucProgram
 *    table (runner/gpuc_program.h) is the one calling convention of every
 *    entry: call_c() runs an entry on host components;
 *  - LibEntry: the CUDA backend's call of one --emit=lib entry, decoded,
 *    checked and run in C (the hot path of gpuc/_cudamodule.py; anything
 *    unusual falls back to the Python path).
 *
 * On the C backend, argument checking, flattening and result building are
 * in Python (gpuc/_types.py); call_c only moves component buffers. Written against
 * the CPython limited API (3.9), so one abi3 wheel serves every Python >= 3.9:
 * no buffer protocol, so arrays arrive as addresses the caller keeps alive. */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpuc_compiler.h"
#include "gpuc_program.h"

/* ---- compile ------------------------------------------------------------ */

/* A Python list of dicts, one per diagnostic of r. */
static PyObject *diagnostics_list(const GpucCompileResult *r)
{
    int n = gpuc_compiler_result_diagnostic_count(r);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        const GpucDiagnostic *d = gpuc_compiler_result_diagnostic(r, i);
        PyObject *rec = Py_BuildValue("{s:z,s:i,s:i,s:s,s:s,s:s}", "file", d->file, "line", d->line, "column",
                                      d->col, "severity", d->severity ? d->severity : "error", "message",
                                      d->message ? d->message : "", "rendered", d->rendered ? d->rendered : "");
        if (!rec || PyList_Append(list, rec) != 0) {
            Py_XDECREF(rec);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(rec);
    }
    return list;
}

/* compile(emit, path, source, source_name, stdlib_dir, defines, lib_name, archs)
 *   -> (status, {output name: str}, [diagnostic dict], rendered str, [files read])
 * emit is a --emit name ("program", "cuda", "manifest", "lib"); path or source
 * (the other None). The GIL is released while the compiler runs. */
static PyObject *py_compile(PyObject *self, PyObject *args)
{
    const char *emit_name, *path, *source, *source_name, *stdlib_dir, *lib_name, *archs;
    PyObject *defines;
    if (!PyArg_ParseTuple(args, "szzzzOzz", &emit_name, &path, &source, &source_name, &stdlib_dir, &defines,
                          &lib_name, &archs)) {
        return NULL;
    }
    int emit = gpuc_compiler_emit_kind(emit_name);
    if (emit < 0) {
        PyErr_Format(PyExc_ValueError, "unknown emit kind '%s'", emit_name);
        return NULL;
    }
    PyObject *seq = PySequence_Fast(defines, "defines must be a sequence of 'NAME=VALUE' strings");
    if (!seq) {
        return NULL;
    }
    Py_ssize_t ndef = PySequence_Size(seq);
    const char **defs = calloc((size_t)ndef + 1, sizeof *defs);
    PyObject *encoded = PyList_New(0);   /* the UTF-8 bytes the pointers point into */
    if (!defs || !encoded) {
        free(defs);
        Py_XDECREF(encoded);
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < ndef; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        PyObject *bytes = item ? PyUnicode_AsUTF8String(item) : NULL;
        Py_XDECREF(item);
        if (!bytes || PyList_Append(encoded, bytes) != 0) {
            Py_XDECREF(bytes);
            free(defs);
            Py_DECREF(encoded);
            Py_DECREF(seq);
            return NULL;
        }
        defs[i] = PyBytes_AsString(bytes);
        Py_DECREF(bytes);
    }
    GpucCompileOptions o;
    gpuc_compiler_options_init(&o);
    o.path = path;
    o.source = source;
    o.source_name = source_name;
    o.stdlib_dir = stdlib_dir;
    o.defines = defs;
    o.ndefines = (int)ndef;
    o.lib_name = lib_name;
    o.archs = archs;
    GpucCompileResult *r = NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gpuc_compiler_compile(&o, (GpucEmit)emit, &r);
    Py_END_ALLOW_THREADS
    free(defs);
    Py_DECREF(encoded);
    Py_DECREF(seq);
    if (!r) {
        PyErr_SetString(PyExc_RuntimeError, "gpuc: the compiler returned no result");
        return NULL;
    }
    PyObject *outputs = PyDict_New();
    static const char *const names[] = { "source", "header", "manifest" };
    for (int i = 0; outputs && i < 3; i++) {
        size_t len = 0;
        const char *text = gpuc_compiler_result_output(r, names[i], &len);
        if (text) {
            PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
            if (!s || PyDict_SetItemString(outputs, names[i], s) != 0) {
                Py_XDECREF(s);
                Py_CLEAR(outputs);
            }
            Py_XDECREF(s);
        }
    }
    PyObject *files = PyList_New(0);
    for (int i = 0; files && i < gpuc_compiler_result_file_count(r); i++) {
        PyObject *s = PyUnicode_DecodeFSDefault(gpuc_compiler_result_file(r, i));
        if (!s || PyList_Append(files, s) != 0) {
            Py_CLEAR(files);
        }
        Py_XDECREF(s);
    }
    PyObject *diags = diagnostics_list(r);
    const char *rendered = gpuc_compiler_result_rendered(r);
    PyObject *result = NULL;
    if (outputs && files && diags) {
        result = Py_BuildValue("(iOOsO)", status, outputs, diags, rendered ? rendered : "", files);
    }
    Py_XDECREF(outputs);
    Py_XDECREF(files);
    Py_XDECREF(diags);
    gpuc_compiler_result_free(r);
    return result;
}

/* write_images(path, [(arch, bytes)]): images.h through the compiler library's
 * writer (compiler/images.c), the one gpuc --emit=lib uses. */
static PyObject *py_write_images(PyObject *self, PyObject *args)
{
    PyObject *path_obj, *list;
    if (!PyArg_ParseTuple(args, "O&O", PyUnicode_FSConverter, &path_obj, &list)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(list, "write_images takes a list of (arch, bytes)");
    Py_ssize_t n = seq ? PySequence_Size(seq) : -1;
    GpucImageData *images = n >= 0 ? calloc((size_t)n + 1, sizeof *images) : NULL;
    int ok = images != NULL;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        char *data = NULL;
        Py_ssize_t size = 0;
        PyObject *bytes = NULL;
        ok = item && PyArg_ParseTuple(item, "sS", &images[i].name, &bytes) && PyBytes_AsStringAndSize(bytes, &data, &size) == 0;
        images[i].data = data;   /* borrowed from the list's items, alive until the end */
        images[i].size = (size_t)size;
        Py_XDECREF(item);
    }
    if (ok && gpuc_compiler_write_images(PyBytes_AsString(path_obj), images, (int)n) != 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path_obj);
        ok = 0;
    }
    if (!images && seq) {
        PyErr_NoMemory();
    }
    free(images);
    Py_XDECREF(seq);
    Py_DECREF(path_obj);
    if (!ok) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(gpuc_compiler_version());
}

/* ---- Program: a dlopen'ed program and its table -------------------------- */

/* Bytes of one element; as gpuc_kind_size (runner/rn_util.c), which lives in
 * the program's copy of the runner, not in this module. grep "ORDER KIND". */
static size_t kind_size(GpucKind kind)
{
    static const size_t sizes[] = { 1, 4, 8, 4, 8, 4, 8 };
    return (unsigned)kind < 7 ? sizes[kind] : 1;
}

/* Zeroed storage for a result of known shape (a 1-byte block when empty). */
static int value_alloc(GpucValue *v)
{
    int64_t count = v->rank == 0 ? 1 : v->rank == 1 ? v->shape[0] : v->shape[0] * v->shape[1];
    if (count < 0) {
        return -1;
    }
    v->data = calloc(count ? (size_t)count : 1, kind_size(v->kind));
    return v->data ? 0 : -1;
}

typedef struct ProgramObject {
    PyObject_HEAD
    void *handle;                 /* dlopen handle */
    const GpucProgram *program;   /* its table */
    pthread_mutex_t lock;         /* the C backend keeps its out-of-bounds record in globals */
} ProgramObject;

static void program_dealloc(PyObject *obj)
{
    ProgramObject *p = (ProgramObject *)obj;
    /* The handle stays open: entries of other objects may still point into it,
     * and unloading code at interpreter exit gains nothing. */
    pthread_mutex_destroy(&p->lock);
    PyTypeObject *type = Py_TYPE(obj);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(obj);
    Py_DECREF(type);
}

/* entries() -> [(name, [(param name, type string)], result type, has C, has CUDA)] */
static PyObject *program_entries(PyObject *obj, PyObject *unused)
{
    const GpucProgram *prog = ((ProgramObject *)obj)->program;
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < prog->num_entries; i++) {
        const GpucEntry *e = &prog->entries[i];
        PyObject *params = PyList_New(0);
        for (int j = 0; params && j < e->num_params; j++) {
            PyObject *pair = Py_BuildValue("(ss)", e->params[j].name, e->params[j].type);
            if (!pair || PyList_Append(params, pair) != 0) {
                Py_CLEAR(params);
            }
            Py_XDECREF(pair);
        }
        PyObject *rec = params ? Py_BuildValue("(sOsOO)", e->name, params, e->result_type,
                                               e->run_c ? Py_True : Py_False, e->run_cuda ? Py_True : Py_False)
                               : NULL;
        Py_XDECREF(params);
        if (!rec || PyList_Append(list, rec) != 0) {
            Py_CLEAR(list);
        }
        Py_XDECREF(rec);
    }
    return list;
}

/* Read (kind, rank, rows, cols, address) tuples into values[]. */
static int read_components(PyObject *list, GpucValue *values, Py_ssize_t n, int with_data)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(list, i);
        if (!item) {
            return -1;
        }
        int kind, rank;
        long long rows, cols;
        PyObject *addr = NULL;
        int ok = PyArg_ParseTuple(item, "iiLL|O", &kind, &rank, &rows, &cols, &addr);
        Py_DECREF(item);
        if (!ok) {
            return -1;
        }
        if (kind < GPUC_KIND_BOOL || kind > GPUC_KIND_F64 || rank < 0 || rank > 2) {
            PyErr_SetString(PyExc_ValueError, "gpuc: bad component descriptor");
            return -1;
        }
        values[i].kind = (GpucKind)kind;
        values[i].rank = rank;
        values[i].shape[0] = rank >= 1 ? rows : 0;
        values[i].shape[1] = rank >= 2 ? cols : 0;
        values[i].data = NULL;
        if (with_data) {
            values[i].data = addr ? PyLong_AsVoidPtr(addr) : NULL;
            if (!values[i].data) {
                if (!PyErr_Occurred()) {
                    PyErr_SetString(PyExc_ValueError, "gpuc: an argument component has no data");
                }
                return -1;
            }
        }
    }
    return 0;
}

static void free_values(GpucValue *values, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; values && i < n; i++) {
        free(values[i].data);
    }
    free(values);
}

/* call_c(entry index, [arg (kind, rank, rows, cols, address)], [result (kind, rank, rows, cols)])
 *   -> [(rows, cols, bytearray)] per result component, or a str: the entry's error message.
 * Result sizes of -1 are unknown (the entry allocates). The GIL is released
 * during the call; calls of one program are serialised by its lock. */
static PyObject *program_call_c(PyObject *obj, PyObject *args)
{
    ProgramObject *p = (ProgramObject *)obj;
    int index;
    PyObject *arg_list, *res_list;
    if (!PyArg_ParseTuple(args, "iOO", &index, &arg_list, &res_list)) {
        return NULL;
    }
    if (index < 0 || index >= p->program->num_entries || !p->program->entries[index].run_c) {
        PyErr_SetString(PyExc_ValueError, "gpuc: no C backend for this entry");
        return NULL;
    }
    Py_ssize_t nargs = PySequence_Size(arg_list), nres = PySequence_Size(res_list);
    if (nargs < 0 || nres < 0) {
        return NULL;
    }
    GpucValue *in = calloc((size_t)nargs + 1, sizeof *in);
    GpucValue *out = calloc((size_t)nres + 1, sizeof *out);
    if (!in || !out) {
        free(in);
        free(out);
        return PyErr_NoMemory();
    }
    if (read_components(arg_list, in, nargs, 1) != 0 || read_components(res_list, out, nres, 0) != 0) {
        free(in);
        free(out);
        return NULL;
    }
    /* Known-size results get zeroed storage, as the runner gives them; unknown
     * sizes (-1) stay NULL for the entry to allocate. */
    for (Py_ssize_t i = 0; i < nres; i++) {
        GpucValue *v = &out[i];
        int known = !(v->rank >= 1 && v->shape[0] < 0) && !(v->rank == 2 && v->shape[1] < 0);
        if (known && value_alloc(v) != 0) {
            free(in);
            free_values(out, nres);
            return PyErr_NoMemory();
        }
    }
    char err[1024] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&p->lock);
    rc = p->program->entries[index].run_c(in, out, err, sizeof err);
    pthread_mutex_unlock(&p->lock);
    Py_END_ALLOW_THREADS
    free(in);
    if (rc != 0) {
        free_values(out, nres);
        return PyUnicode_FromString(err[0] ? err : "the entry failed");
    }
    PyObject *list = PyList_New(0);
    for (Py_ssize_t i = 0; list && i < nres; i++) {
        GpucValue *v = &out[i];
        int64_t count = v->rank == 0 ? 1 : v->rank == 1 ? v->shape[0] : v->shape[0] * v->shape[1];
        size_t bytes = (size_t)count * kind_size(v->kind);
        PyObject *buf = PyByteArray_FromStringAndSize(v->data ? (const char *)v->data : "", v->data ? (Py_ssize_t)bytes : 0);
        PyObject *rec = buf ? Py_BuildValue("(LLO)", (long long)v->shape[0], (long long)v->shape[1], buf) : NULL;
        Py_XDECREF(buf);
        if (!rec || PyList_Append(list, rec) != 0) {
            Py_CLEAR(list);
        }
        Py_XDECREF(rec);
    }
    free_values(out, nres);
    return list;
}

static PyMethodDef program_methods[] = {
    { "entries", program_entries, METH_NOARGS, "the program table: (name, params, result type, has C, has CUDA) per entry" },
    { "call_c", program_call_c, METH_VARARGS, "run an entry on the C backend" },
    { NULL, NULL, 0, NULL },
};

static PyType_Slot program_slots[] = {
    { Py_tp_dealloc, (void *)program_dealloc },
    { Py_tp_methods, program_methods },
    { Py_tp_doc, (void *)"A compiled gpuc program loaded from its shared object." },
    { 0, NULL },
};

static PyType_Spec program_spec = {
    "gpuc._gpuc.Program", sizeof(ProgramObject), 0, Py_TPFLAGS_DEFAULT, program_slots,
};

static PyObject *program_type;   /* set by the module's init */

/* load_program(path of a shared object) -> Program. The object must define
 * `const GpucProgram *gpuc_python_program(void)` (gpuc/_cbackend.py adds it). */
static PyObject *py_load_program(PyObject *self, PyObject *args)
{
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj)) {
        return NULL;
    }
    const char *path = PyBytes_AsString(path_obj);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        PyErr_Format(PyExc_OSError, "gpuc: cannot load '%s': %s", path, dlerror());
        Py_DECREF(path_obj);
        return NULL;
    }
    const GpucProgram *(*get)(void) = (const GpucProgram *(*)(void))dlsym(handle, "gpuc_python_program");
    if (!get) {
        PyErr_Format(PyExc_OSError, "gpuc: '%s' is not a gpuc program (no gpuc_python_program)", path);
        dlclose(handle);
        Py_DECREF(path_obj);
        return NULL;
    }
    Py_DECREF(path_obj);
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)program_type, Py_tp_alloc);
    ProgramObject *p = (ProgramObject *)alloc((PyTypeObject *)program_type, 0);
    if (!p) {
        return NULL;
    }
    p->handle = handle;
    p->program = get();
    pthread_mutex_init(&p->lock, NULL);
    return (PyObject *)p;
}

/* ---- LibEntry: the CUDA backend's per-call hot path ---------------------- */

/* One entry of a --emit=lib library on one device, set up once by
 * gpuc/_cudamodule.py: a call decodes the positional arguments (device arrays
 * of CuPy, PyTorch or any __cuda_array_interface__ object; Python numbers),
 * checks kinds, ranks, contiguity and sizes, allocates the results through
 * the framework, and calls the table's thunk with the GIL released, all
 * without Python code in between. On anything it does not handle exactly as
 * the Python path would (keywords are left to the caller; NumPy arrays,
 * non-contiguous or empty arrays, mixed frameworks, other devices, any
 * mismatch) it returns the FALLBACK sentinel before calling anything, and the
 * Python path (gpuc/_types.py, _cudamodule.py) takes over with its messages. */

/* GpucLibValue of the generated header (backend/emit_lib.c); grep "ORDER KIND". */
typedef struct LibValue {
    int kind;
    int rank;
    int64_t shape[2];
    uint64_t data;
    union { bool b; int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; float f32; double f64; } scalar;
} LibValue;
typedef int (*LibCall)(void *lib, void *cu_stream, const LibValue *args, LibValue *results);

enum { KIND_BOOL, KIND_I32, KIND_I64, KIND_U32, KIND_U64, KIND_F32, KIND_F64, KIND_COUNT };
enum { FW_NONE = -1, FW_CAI, FW_CUPY, FW_TORCH };   /* where the call's arrays come from */
enum { FAST_MAX = 16 };                              /* params, results, size variables */

/* A dimension code of the spec: >= 0 a size variable's slot, -1 "_" (any),
 * <= -2 the constant -(code + 2). */
#define DIM_ANY (-1)

typedef struct FastComp {
    int kind;       /* KIND_* */
    int rank;       /* 0 (a scalar), 1 or 2 */
    int dims[2];    /* dimension codes */
    int size_slot;  /* parameters: an i64 scalar that is a size variable's slot, else -1 */
} FastComp;

typedef struct LibEntryObject {
    PyObject_HEAD
    PyObject *fallback;    /* called with a call's arguments when the C path declines (None: return FALLBACK) */
    int ready;             /* install() was called: the fields below are set */
    LibCall call;          /* the table's thunk (NULL: decode only) */
    void *lib;             /* the device's NAME_lib * */
    int device;            /* the device lib is on */
    int nparams, nresults, nslots;
    int result_tuple;      /* the result is a tuple of its leaves (else one leaf) */
    FastComp params[FAST_MAX];
    FastComp results[FAST_MAX];
    PyObject *on_error;    /* called (no arguments) on a nonzero status: raises the error */
    /* What the calls need of the frameworks, read from install()'s hooks
     * once, so that a call does no dict lookup (NULL: not imported). */
    PyObject *cupy_type;           /* cupy.ndarray: the type test and the allocator (shape, dtype) */
    PyObject *cupy_get_device;     /* cupy.cuda.runtime.getDevice */
    PyObject *cupy_get_stream;     /* cupy.cuda.get_current_stream (its .ptr) */
    int cupy_ptds;                 /* CuPy's null stream is the per-thread default stream (2) */
    PyObject *cupy_dtypes[KIND_COUNT];   /* per kind: its NumPy dtype */
    PyObject *torch_type;          /* torch.Tensor */
    PyObject *torch_empty;         /* torch.empty(shape, dtype=, device=) */
    PyObject *torch_stream;        /* device -> the raw CUstream of torch's current stream */
    PyObject *torch_dtypes[KIND_COUNT];  /* per kind: its torch dtype (None where torch has none) */
    PyObject *torch_kw[FAST_MAX];  /* per result: torch.empty's keyword arguments */
    PyObject *cai_device;          /* device address -> its device ordinal (other CAI objects) */
} LibEntryObject;

static PyObject *fallback_sentinel;   /* _gpuc.FALLBACK */
static PyObject *str_cai, *str_data, *str_shape, *str_strides, *str_typestr, *str_stream, *str_device, *str_id,
                *str_data_ptr, *str_dtype, *str_get_device, *str_ptr, *str_device_id,
                *str_c_contiguous, *str_is_contiguous;

/* What one call decoded: the values for the thunk, the bound sizes, where the arrays are. */
typedef struct Decoded {
    LibValue args[FAST_MAX];
    int64_t sizes[FAST_MAX];
    int bound[FAST_MAX];
    int framework;   /* FW_*: of every array argument */
    int device;
    void *stream;
} Decoded;

/* 1: decoded; 0: fall back; -1: a Python error is set. */
#define DECODE_OK 1
#define DECODE_FALLBACK 0

static int kind_of_typestr(PyObject *typestr)
{
    static const char *const names[KIND_COUNT] = { "|b1", "<i4", "<i8", "<u4", "<u8", "<f4", "<f8" };
    for (int k = 0; PyUnicode_Check(typestr) && k < KIND_COUNT; k++) {
        if (PyUnicode_CompareWithASCIIString(typestr, names[k]) == 0) {
            return k;
        }
    }
    return -1;
}

/* A Python int (exactly int, not bool) into *out; 0 when it is not one or out of range. */
static int int_value(PyObject *v, long long *out)
{
    if (!PyLong_CheckExact(v)) {
        return 0;
    }
    int overflow = 0;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* Read a tuple of n ints (a shape or strides) into out; 0 when it is not one. */
static int read_ints(PyObject *seq, int n, long long *out)
{
    if (!seq || !PyTuple_Check(seq) || PyTuple_Size(seq) != n) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (!int_value(PyTuple_GetItem(seq, i), &out[i])) {
            return 0;
        }
    }
    return 1;
}

static int c_contiguous(int rank, const long long *shape, const long long *strides, int itemsize)
{
    long long want = itemsize;
    for (int i = rank - 1; i >= 0; i--) {
        if (shape[i] > 1 && strides[i] != want) {
            return 0;
        }
        want *= shape[i];
    }
    return 1;
}

static const int kind_bytes[KIND_COUNT] = { 1, 4, 8, 4, 8, 4, 8 };

/* A scalar parameter from a Python number, as _types._scalar_value accepts it
 * (bool for bool; int in range for integers; int or float for floats). */
static int decode_scalar(const FastComp *p, PyObject *v, LibValue *a)
{
    long long i;
    a->kind = p->kind;
    a->rank = 0;
    switch (p->kind) {
    case KIND_BOOL:
        if (v != Py_True && v != Py_False) {
            return DECODE_FALLBACK;
        }
        a->scalar.b = v == Py_True;
        return DECODE_OK;
    case KIND_I32:
        if (!int_value(v, &i) || i < INT32_MIN || i > INT32_MAX) {
            return DECODE_FALLBACK;
        }
        a->scalar.i32 = (int32_t)i;
        return DECODE_OK;
    case KIND_I64:
        if (!int_value(v, &i)) {
            return DECODE_FALLBACK;
        }
        a->scalar.i64 = i;
        return DECODE_OK;
    case KIND_U32:
        if (!int_value(v, &i) || i < 0 || i > UINT32_MAX) {
            return DECODE_FALLBACK;
        }
        a->scalar.u32 = (uint32_t)i;
        return DECODE_OK;
    case KIND_U64:
        if (!int_value(v, &i) || i < 0) {   /* values above INT64_MAX take the Python path */
            return DECODE_FALLBACK;
        }
        a->scalar.u64 = (uint64_t)i;
        return DECODE_OK;
    default: {
        double d;
        if (PyFloat_CheckExact(v)) {
            d = PyFloat_AsDouble(v);
        } else if (int_value(v, &i)) {
            d = (double)i;
        } else {
            return DECODE_FALLBACK;
        }
        if (p->kind == KIND_F32) {
            a->scalar.f32 = (float)d;
        } else {
            a->scalar.f64 = d;
        }
        return DECODE_OK;
    }
    }
}

static int bind_size(Decoded *d, int code, long long value)
{
    if (code == DIM_ANY) {
        return 1;
    }
    if (code <= -2) {
        return value == -(long long)(code + 2);
    }
    if (d->bound[code]) {
        return d->sizes[code] == value;
    }
    d->bound[code] = 1;
    d->sizes[code] = value;
    return 1;
}

/* The CAI stream entry as the Python path reads it: absent/None/1 -> 0 (1 is
 * the legacy default stream), else the handle. 0 when it is not an int, or
 * absent where it is required (CuPy exporting CAI version 2 has none: its
 * current stream is then only known to the Python path). */
static int cai_stream(PyObject *cai, int required, void **stream)
{
    PyObject *s = PyDict_GetItemWithError(cai, str_stream);
    if (!s) {
        if (PyErr_Occurred() || required) {
            PyErr_Clear();
            return 0;
        }
        *stream = NULL;
        return 1;
    }
    if (s == Py_None) {
        *stream = NULL;
        return 1;
    }
    long long v;
    if (!int_value(s, &v)) {
        return 0;
    }
    *stream = v == 1 ? NULL : (void *)(intptr_t)v;
    return 1;
}

/* An array through __cuda_array_interface__ (CuPy and any CAI object). */
static int decode_cai(LibEntryObject *e, PyObject *v, int framework, Decoded *d, LibValue *a, long long *shape,
                      int rank, int first)
{
    PyObject *cai = PyObject_GetAttr(v, str_cai);
    if (!cai) {
        PyErr_Clear();
        return DECODE_FALLBACK;
    }
    int ok = PyDict_Check(cai);
    PyObject *data = ok ? PyDict_GetItemWithError(cai, str_data) : NULL;
    PyObject *shp = ok ? PyDict_GetItemWithError(cai, str_shape) : NULL;
    PyObject *strides = ok ? PyDict_GetItemWithError(cai, str_strides) : NULL;
    PyObject *typestr = ok ? PyDict_GetItemWithError(cai, str_typestr) : NULL;
    long long ptr = 0, st[2];
    ok = ok && data && typestr && shp && PyTuple_Check(data) && PyTuple_Size(data) >= 1
         && int_value(PyTuple_GetItem(data, 0), &ptr) && ptr != 0
         && kind_of_typestr(typestr) == a->kind && read_ints(shp, rank, shape)
         && (!strides || strides == Py_None || (read_ints(strides, rank, st)
                                                && c_contiguous(rank, shape, st, kind_bytes[a->kind])));
    if (ok && first) {
        ok = cai_stream(cai, framework == FW_CUPY, &d->stream);
    }
    PyErr_Clear();
    Py_DECREF(cai);
    if (!ok) {
        return DECODE_FALLBACK;
    }
    a->data = (uint64_t)ptr;
    if (framework == FW_CUPY) {   /* the Python path's value.device.id */
        PyObject *dev = PyObject_GetAttr(v, str_device);
        PyObject *id = dev ? PyObject_GetAttr(dev, str_id) : NULL;
        long long n = -1;
        ok = id && int_value(id, &n);
        Py_XDECREF(dev);
        Py_XDECREF(id);
        PyErr_Clear();
        if (!ok) {
            return DECODE_FALLBACK;
        }
        d->device = (int)n;
    } else {   /* the device the address belongs to (cuPointerGetAttribute, gpuc/_cuda.py) */
        PyObject *id = e->cai_device ? PyObject_CallFunction(e->cai_device, "K", (unsigned long long)ptr) : NULL;
        long long n = -1;
        ok = id && int_value(id, &n) && n >= 0;
        Py_XDECREF(id);
        PyErr_Clear();
        if (!ok) {   /* not device memory CUDA knows: the Python path says so */
            return DECODE_FALLBACK;
        }
        d->device = (int)n;
    }
    return DECODE_OK;
}

/* Whether dtype is want: the same object (NumPy's and torch's built-in dtypes
 * are singletons), else equal (a NumPy dtype made another way). */
static int same_dtype(PyObject *dtype, PyObject *want)
{
    if (!dtype || !want) {
        return 0;
    }
    if (dtype == want) {
        return 1;
    }
    int eq = PyObject_RichCompareBool(dtype, want, Py_EQ);
    PyErr_Clear();
    return eq == 1;
}

/* An integer attribute of obj (an int, not a bool); 0 when missing or not one. */
static int int_attr(PyObject *obj, PyObject *name, long long *out)
{
    PyObject *v = obj ? PyObject_GetAttr(obj, name) : NULL;
    int ok = v && int_value(v, out);
    Py_XDECREF(v);
    return ok;
}

/* A CuPy array through its attributes: cheaper than its
 * __cuda_array_interface__, which builds a dict (and the dtype's descr list)
 * on every access. A CuPy without the attributes goes through CAI. */
static int decode_cupy(LibEntryObject *e, PyObject *v, Decoded *d, LibValue *a, long long *shape, int rank, int first)
{
    PyObject *contiguous = PyObject_GetAttr(v, str_c_contiguous);
    if (!contiguous) {
        PyErr_Clear();
        return decode_cai(e, v, FW_CUPY, d, a, shape, rank, first);
    }
    int ok = contiguous == Py_True;
    Py_DECREF(contiguous);
    PyObject *obj = ok ? PyObject_GetAttr(v, str_dtype) : NULL;
    ok = obj && same_dtype(obj, e->cupy_dtypes[a->kind]);
    Py_XDECREF(obj);
    obj = ok ? PyObject_GetAttr(v, str_shape) : NULL;
    ok = obj && read_ints(obj, rank, shape);
    Py_XDECREF(obj);
    PyObject *mem = ok ? PyObject_GetAttr(v, str_data) : NULL;   /* a cupy.cuda.MemoryPointer */
    long long ptr = 0, dev = -1;
    ok = mem && int_attr(mem, str_ptr, &ptr) && ptr != 0 && int_attr(mem, str_device_id, &dev) && dev >= 0;
    Py_XDECREF(mem);
    if (ok && first) {   /* CuPy's current stream on the current device (checked to be this one) */
        PyObject *stream = e->cupy_get_stream ? PyObject_CallObject(e->cupy_get_stream, NULL) : NULL;
        long long h = 0;
        ok = stream && int_attr(stream, str_ptr, &h);
        Py_XDECREF(stream);
        d->stream = (void *)(intptr_t)(h == 0 && e->cupy_ptds ? 2 : h);   /* 2: CU_STREAM_PER_THREAD */
    }
    PyErr_Clear();
    if (!ok) {
        return DECODE_FALLBACK;
    }
    a->data = (uint64_t)ptr;
    d->device = (int)dev;
    return DECODE_OK;
}

/* A torch tensor through its methods (torch's __cuda_array_interface__ is Python code). */
static int decode_torch(LibEntryObject *e, PyObject *v, Decoded *d, LibValue *a, long long *shape, int rank, int first)
{
    PyObject *dtype = PyObject_GetAttr(v, str_dtype);
    int ok = dtype && dtype == e->torch_dtypes[a->kind];   /* torch dtypes are singletons */
    Py_XDECREF(dtype);
    long long dev = -1, ptr = 0;
    PyObject *obj = ok ? PyObject_CallMethodObjArgs(v, str_get_device, NULL) : NULL;
    ok = obj && int_value(obj, &dev) && dev >= 0;
    Py_XDECREF(obj);
    obj = ok ? PyObject_GetAttr(v, str_shape) : NULL;
    ok = obj && read_ints(obj, rank, shape);
    Py_XDECREF(obj);
    obj = ok ? PyObject_CallMethodObjArgs(v, str_is_contiguous, NULL) : NULL;
    ok = obj == Py_True;
    Py_XDECREF(obj);
    obj = ok ? PyObject_CallMethodObjArgs(v, str_data_ptr, NULL) : NULL;
    ok = obj && int_value(obj, &ptr) && ptr != 0;
    Py_XDECREF(obj);
    PyErr_Clear();
    if (!ok) {
        return DECODE_FALLBACK;
    }
    a->data = (uint64_t)ptr;
    d->device = (int)dev;
    if (first) {   /* the raw CUstream of torch's current stream */
        PyObject *s = e->torch_stream ? PyObject_CallFunction(e->torch_stream, "i", (int)dev) : NULL;
        long long h = 0;
        ok = s && int_value(s, &h);
        Py_XDECREF(s);
        PyErr_Clear();
        if (!ok) {
            return DECODE_FALLBACK;
        }
        d->stream = (void *)(intptr_t)h;
    }
    return DECODE_OK;
}

static int framework_of(LibEntryObject *e, PyObject *v)
{
    if (e->cupy_type && PyObject_TypeCheck(v, (PyTypeObject *)e->cupy_type)) {
        return FW_CUPY;
    }
    if (e->torch_type && PyObject_TypeCheck(v, (PyTypeObject *)e->torch_type)) {
        return FW_TORCH;
    }
    if (PyLong_Check(v) || PyFloat_Check(v)) {
        return FW_NONE;
    }
    int has = PyObject_HasAttr(v, str_cai);
    return has ? FW_CAI : FW_NONE;
}
/* Decode args (a tuple) into d: DECODE_OK, DECODE_FALLBACK or -1 (error set). */
static int decode_args(LibEntryObject *e, PyObject *args, Decoded *d)
{
    memset(d, 0, sizeof *d);
    d->framework = FW_NONE;
    if (!e->ready || PyTuple_Size(args) != e->nparams) {
        return DECODE_FALLBACK;
    }
    int seen_array = 0;
    for (int i = 0; i < e->nparams; i++) {
        const FastComp *p = &e->params[i];
        PyObject *v = PyTuple_GetItem(args, i);
        LibValue *a = &d->args[i];
        if (p->rank == 0) {
            if (decode_scalar(p, v, a) != DECODE_OK) {
                return DECODE_FALLBACK;
            }
            continue;
        }
        int fw = framework_of(e, v);
        if (fw == FW_NONE || (seen_array && fw != d->framework)) {
            return DECODE_FALLBACK;
        }
        int device = d->device;
        long long shape[2] = { 0, 0 };
        a->kind = p->kind;
        a->rank = p->rank;
        int st = fw == FW_TORCH ? decode_torch(e, v, d, a, shape, p->rank, !seen_array)
               : fw == FW_CUPY ? decode_cupy(e, v, d, a, shape, p->rank, !seen_array)
                               : decode_cai(e, v, fw, d, a, shape, p->rank, !seen_array);
        if (st != DECODE_OK || (seen_array && d->device != device)) {
            return DECODE_FALLBACK;
        }
        for (int k = 0; k < p->rank; k++) {
            if (shape[k] <= 0 || !bind_size(d, p->dims[k], shape[k])) {   /* empty arrays: the Python path */
                return DECODE_FALLBACK;
            }
        }
        a->shape[0] = shape[0];
        a->shape[1] = p->rank == 2 ? shape[1] : 0;
        d->framework = fw;
        seen_array = 1;
    }
    /* size parameters bind after the arrays, as Entry.__call__ binds them */
    for (int i = 0; i < e->nparams; i++) {
        int slot = e->params[i].size_slot;
        if (slot >= 0 && (d->args[i].scalar.i64 < 0 || !bind_size(d, slot, d->args[i].scalar.i64))) {
            return DECODE_FALLBACK;
        }
    }
    return seen_array ? DECODE_OK : DECODE_FALLBACK;
}

/* A result's shape from the bound sizes; 0 when a dimension is not known. */
static int result_shape(const FastComp *r, const Decoded *d, long long *shape)
{
    for (int k = 0; k < r->rank; k++) {
        int code = r->dims[k];
        if (code == DIM_ANY || (code >= 0 && !d->bound[code])) {
            return 0;
        }
        shape[k] = code <= -2 ? -(long long)(code + 2) : d->sizes[code];
        if (shape[k] <= 0) {
            return 0;
        }
    }
    return 1;
}

static PyObject *scalar_object(const LibValue *v)
{
    switch (v->kind) {
    case KIND_BOOL: return PyBool_FromLong(v->scalar.b);
    case KIND_I32: return PyLong_FromLong(v->scalar.i32);
    case KIND_I64: return PyLong_FromLongLong(v->scalar.i64);
    case KIND_U32: return PyLong_FromUnsignedLong(v->scalar.u32);
    case KIND_U64: return PyLong_FromUnsignedLongLong(v->scalar.u64);
    case KIND_F32: return PyFloat_FromDouble(v->scalar.f32);
    default: return PyFloat_FromDouble(v->scalar.f64);
    }
}

static PyObject *values_list(const LibValue *v, int n)
{
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        PyObject *rec = v[i].rank == 0
            ? Py_BuildValue("(iiN)", v[i].kind, 0, scalar_object(&v[i]))
            : Py_BuildValue("(iiLLK)", v[i].kind, v[i].rank, (long long)v[i].shape[0], (long long)v[i].shape[1],
                            (unsigned long long)v[i].data);
        if (!rec || PyList_Append(list, rec) != 0) {
            Py_CLEAR(list);
        }
        Py_XDECREF(rec);
    }
    return list;
}

/* decode(*args) -> FALLBACK, or (framework, device, stream, [argument value], {size slot: value})
 * with an argument value (kind, rank, rows, cols, address) or (kind, 0, number): what a call
 * would pass to the thunk, for tests and debugging. */
static PyObject *libentry_decode(PyObject *obj, PyObject *args)
{
    LibEntryObject *e = (LibEntryObject *)obj;
    Decoded d;
    int st = decode_args(e, args, &d);
    if (st < 0) {
        return NULL;
    }
    if (st == DECODE_FALLBACK) {
        Py_INCREF(fallback_sentinel);
        return fallback_sentinel;
    }
    static const char *const fw_names[] = { "cai", "cupy", "torch" };
    PyObject *sizes = PyDict_New();
    for (int i = 0; sizes && i < e->nslots; i++) {
        PyObject *k = PyLong_FromLong(i), *v = d.bound[i] ? PyLong_FromLongLong(d.sizes[i]) : NULL;
        if (!k || (d.bound[i] && (!v || PyDict_SetItem(sizes, k, v) != 0))) {
            Py_CLEAR(sizes);
        }
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    PyObject *values = values_list(d.args, e->nparams);
    if (!sizes || !values) {
        Py_XDECREF(sizes);
        Py_XDECREF(values);
        return NULL;
    }
    return Py_BuildValue("(siKNN)", fw_names[d.framework], d.device, (unsigned long long)(uintptr_t)d.stream, values,
                         sizes);
}

/* A result array of the call's framework, its device address in *ptr; NULL
 * with an error set when the allocator failed, without one when there is no
 * allocator for this result or the array has no address. One call: CuPy's
 * ndarray(shape, dtype) (what cupy.empty calls), torch.empty. */
static PyObject *alloc_result(LibEntryObject *e, int framework, int index, const long long *shape, int rank,
                              uint64_t *ptr)
{
    const FastComp *r = &e->results[index];
    int cupy = framework == FW_CUPY;
    if (cupy ? !e->cupy_dtypes[r->kind] : !e->torch_empty || !e->torch_kw[index]) {
        return NULL;
    }
    PyObject *shp = rank == 1 ? Py_BuildValue("(L)", shape[0]) : Py_BuildValue("(LL)", shape[0], shape[1]);
    PyObject *array = NULL;
    if (shp && cupy) {
        array = PyObject_CallFunctionObjArgs(e->cupy_type, shp, e->cupy_dtypes[r->kind], NULL);
    } else if (shp) {
        PyObject *args = PyTuple_Pack(1, shp);
        array = args ? PyObject_Call(e->torch_empty, args, e->torch_kw[index]) : NULL;
        Py_XDECREF(args);
    }
    Py_XDECREF(shp);
    if (!array) {
        return NULL;
    }
    long long addr = 0;
    int ok;
    if (cupy) {
        PyObject *mem = PyObject_GetAttr(array, str_data);
        ok = mem && int_attr(mem, str_ptr, &addr);
        Py_XDECREF(mem);
    } else {
        PyObject *p = PyObject_CallMethodObjArgs(array, str_data_ptr, NULL);
        ok = p && int_value(p, &addr);
        Py_XDECREF(p);
    }
    PyErr_Clear();
    if (!ok || addr == 0) {
        Py_DECREF(array);
        return NULL;
    }
    *ptr = (uint64_t)addr;
    return array;
}

/* What a call does when the C path declines it: the fallback (the Python
 * path) on the same arguments, or FALLBACK when there is none. */
static PyObject *decline(LibEntryObject *e, PyObject *args, PyObject *kwargs)
{
    if (e->fallback == Py_None) {
        Py_INCREF(fallback_sentinel);
        return fallback_sentinel;
    }
    return PyObject_Call(e->fallback, args, kwargs);
}

static void release_all(PyObject **objs, int n)
{
    for (int i = 0; i < n; i++) {
        Py_CLEAR(objs[i]);
    }
}

/* entry(*args, **kwargs) -> the result, through the C path or the fallback. */
static PyObject *libentry_call(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    LibEntryObject *e = (LibEntryObject *)obj;
    if ((kwargs && PyDict_Size(kwargs) != 0) || !e->call) {
        return decline(e, args, kwargs);
    }
    Decoded d;
    int st = decode_args(e, args, &d);
    if (st < 0) {
        return NULL;
    }
    if (st == DECODE_FALLBACK || d.device != e->device) {
        return decline(e, args, kwargs);
    }
    if (d.framework == FW_CUPY) {   /* CuPy allocates on the current device: it must be this one */
        long long n = -1;
        PyObject *cur = e->cupy_get_device ? PyObject_CallObject(e->cupy_get_device, NULL) : NULL;
        int ok = cur && int_value(cur, &n) && n == e->device;
        Py_XDECREF(cur);
        PyErr_Clear();
        if (!ok) {
            return decline(e, args, kwargs);
        }
    }
    LibValue results[FAST_MAX];
    PyObject *made[FAST_MAX] = { NULL };
    memset(results, 0, sizeof results);
    for (int i = 0; i < e->nresults; i++) {
        const FastComp *r = &e->results[i];
        LibValue *v = &results[i];
        v->kind = r->kind;
        v->rank = r->rank;
        if (r->rank == 0) {
            continue;
        }
        long long shape[2] = { 0, 0 };
        /* unknown sizes and generic CAI arrays: the library allocates, the Python path wraps */
        if (d.framework == FW_CAI || !result_shape(r, &d, shape)) {
            release_all(made, i);
            return decline(e, args, kwargs);
        }
        made[i] = alloc_result(e, d.framework, i, shape, r->rank, &v->data);
        if (!made[i]) {
            release_all(made, i);
            if (PyErr_Occurred()) {   /* the framework's allocator failed */
                return NULL;
            }
            return decline(e, args, kwargs);   /* no allocator for this kind, or no address */
        }
        v->shape[0] = shape[0];
        v->shape[1] = r->rank == 2 ? shape[1] : 0;
    }
    int status;
    LibCall call = e->call;
    void *lib = e->lib;
    Py_BEGIN_ALLOW_THREADS
    status = call(lib, d.stream, d.args, results);
    Py_END_ALLOW_THREADS
    if (status != 0) {
        release_all(made, e->nresults);
        PyObject *r = PyObject_CallObject(e->on_error, NULL);   /* raises the library's message */
        if (r) {
            Py_DECREF(r);
            PyErr_Format(PyExc_RuntimeError, "gpuc: an entry failed with status %d", status);
        }
        return NULL;
    }
    for (int i = 0; i < e->nresults; i++) {
        if (!made[i] && !(made[i] = scalar_object(&results[i]))) {
            release_all(made, e->nresults);
            return NULL;
        }
    }
    if (!e->result_tuple) {
        return made[0];
    }
    PyObject *tuple = PyTuple_New(e->nresults);
    for (int i = 0; i < e->nresults; i++) {
        if (tuple) {
            PyTuple_SetItem(tuple, i, made[i]);   /* steals */
        } else {
            Py_DECREF(made[i]);
        }
    }
    return tuple;
}

/* One component of the spec: (kind, (dimension code, ...), size slot or -1). */
static int read_comp(PyObject *item, FastComp *c)
{
    PyObject *dims;
    if (!PyArg_ParseTuple(item, "iOi", &c->kind, &dims, &c->size_slot)) {
        return -1;
    }
    if (c->kind < 0 || c->kind >= KIND_COUNT || !PyTuple_Check(dims) || PyTuple_Size(dims) > 2
        || c->size_slot >= FAST_MAX) {
        PyErr_SetString(PyExc_ValueError, "gpuc: bad LibEntry component");
        return -1;
    }
    c->rank = (int)PyTuple_Size(dims);
    for (int k = 0; k < c->rank; k++) {
        long code = PyLong_AsLong(PyTuple_GetItem(dims, k));
        if ((code == -1 && PyErr_Occurred()) || code >= FAST_MAX) {
            PyErr_SetString(PyExc_ValueError, "gpuc: bad LibEntry dimension");
            return -1;
        }
        c->dims[k] = (int)code;
    }
    return 0;
}

static int read_comps(PyObject *list, FastComp *out, int *n)
{
    if (!PyList_Check(list) || PyList_Size(list) > FAST_MAX) {
        PyErr_SetString(PyExc_ValueError, "gpuc: LibEntry takes at most 16 components as a list");
        return -1;
    }
    *n = (int)PyList_Size(list);
    for (int i = 0; i < *n; i++) {
        if (read_comp(PyList_GetItem(list, i), &out[i]) != 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *libentry_type;   /* set by the module's init */

/* Every object reference of e beyond the fallback, dropped (install again, clear, dealloc). */
static void libentry_drop_hooks(LibEntryObject *e)
{
    Py_CLEAR(e->on_error);
    Py_CLEAR(e->cupy_type);
    Py_CLEAR(e->cupy_get_device);
    Py_CLEAR(e->cupy_get_stream);
    Py_CLEAR(e->torch_type);
    Py_CLEAR(e->torch_empty);
    Py_CLEAR(e->torch_stream);
    Py_CLEAR(e->cai_device);
    for (int k = 0; k < KIND_COUNT; k++) {
        Py_CLEAR(e->cupy_dtypes[k]);
        Py_CLEAR(e->torch_dtypes[k]);
    }
    for (int i = 0; i < FAST_MAX; i++) {
        Py_CLEAR(e->torch_kw[i]);
    }
    e->ready = 0;
    e->call = NULL;
}

/* hooks[name] as a new reference, or NULL (absent, or None). */
static PyObject *hook(PyObject *hooks, const char *name)
{
    PyObject *v = PyDict_GetItemString(hooks, name);
    if (!v || v == Py_None) {
        return NULL;
    }
    Py_INCREF(v);
    return v;
}

/* A list of KIND_COUNT objects from hooks[name] into out (NULL entries where None). */
static void hook_per_kind(PyObject *hooks, const char *name, PyObject **out)
{
    PyObject *list = PyDict_GetItemString(hooks, name);
    for (int k = 0; list && PyList_Check(list) && k < KIND_COUNT && k < PyList_Size(list); k++) {
        PyObject *v = PyList_GetItem(list, k);
        if (v != Py_None) {
            Py_INCREF(v);
            out[k] = v;
        }
    }
}

/* LibEntry(fallback): what a CUDA module's entry attribute is (gpuc/_cudamodule.py
 * subclasses it). Until install() every call goes to fallback(*args, **kwargs);
 * with fallback None a declined call returns FALLBACK (the tests' decode-only use). */
static PyObject *libentry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *fallback = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &fallback)) {
        return NULL;
    }
    if (fallback != Py_None && !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "gpuc: LibEntry's fallback must be callable or None");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    LibEntryObject *e = (LibEntryObject *)alloc(type, 0);
    if (!e) {
        return NULL;
    }
    Py_INCREF(fallback);
    e->fallback = fallback;
    return (PyObject *)e;
}

/* install(call address, lib address, device, params, results, result_tuple, hooks, on_error):
 * set the entry up for calls on one device. hooks (gpuc/_cudamodule.py framework_hooks):
 * cupy_type, cupy_get_device, cupy_get_stream, cupy_dtypes (per kind), torch_type,
 * torch_empty, torch_stream, torch_dtypes (per kind), torch_device, cai_device. */
static PyObject *libentry_install(PyObject *obj, PyObject *args)
{
    LibEntryObject *e = (LibEntryObject *)obj;
    unsigned long long call, lib;
    int device, result_tuple;
    PyObject *params, *results, *hooks, *on_error;
    if (!PyArg_ParseTuple(args, "KKiOOpOO", &call, &lib, &device, &params, &results, &result_tuple, &hooks,
                          &on_error)) {
        return NULL;
    }
    if (!PyDict_Check(hooks) || !PyCallable_Check(on_error)) {
        PyErr_SetString(PyExc_TypeError, "gpuc: LibEntry's hooks must be a dict and on_error callable");
        return NULL;
    }
    libentry_drop_hooks(e);
    e->nparams = e->nresults = e->nslots = 0;
    if (read_comps(params, e->params, &e->nparams) != 0 || read_comps(results, e->results, &e->nresults) != 0) {
        return NULL;
    }
    e->lib = (void *)(uintptr_t)lib;
    e->device = device;
    e->result_tuple = result_tuple;
    Py_INCREF(on_error);
    e->on_error = on_error;
    for (int i = 0; i < e->nparams; i++) {
        for (int k = 0; k < e->params[i].rank; k++) {
            e->nslots = e->params[i].dims[k] + 1 > e->nslots ? e->params[i].dims[k] + 1 : e->nslots;
        }
        e->nslots = e->params[i].size_slot + 1 > e->nslots ? e->params[i].size_slot + 1 : e->nslots;
    }
    for (int i = 0; i < e->nresults; i++) {
        for (int k = 0; k < e->results[i].rank; k++) {
            e->nslots = e->results[i].dims[k] + 1 > e->nslots ? e->results[i].dims[k] + 1 : e->nslots;
        }
    }
    e->cupy_type = hook(hooks, "cupy_type");
    e->torch_type = hook(hooks, "torch_type");
    if ((e->cupy_type && !PyType_Check(e->cupy_type)) || (e->torch_type && !PyType_Check(e->torch_type))) {
        libentry_drop_hooks(e);
        PyErr_SetString(PyExc_TypeError, "gpuc: LibEntry's cupy_type and torch_type must be types");
        return NULL;
    }
    e->cupy_get_device = hook(hooks, "cupy_get_device");
    e->cupy_get_stream = hook(hooks, "cupy_get_stream");
    PyObject *ptds = PyDict_GetItemString(hooks, "cupy_ptds");
    e->cupy_ptds = ptds && PyObject_IsTrue(ptds) == 1;
    PyErr_Clear();
    e->torch_empty = hook(hooks, "torch_empty");
    e->torch_stream = hook(hooks, "torch_stream");
    e->cai_device = hook(hooks, "cai_device");
    hook_per_kind(hooks, "cupy_dtypes", e->cupy_dtypes);
    hook_per_kind(hooks, "torch_dtypes", e->torch_dtypes);
    PyObject *torch_device = PyDict_GetItemString(hooks, "torch_device");
    for (int i = 0; torch_device && i < e->nresults; i++) {   /* torch.empty(shape, dtype=, device=) */
        PyObject *dt = e->torch_dtypes[e->results[i].kind];
        if (dt && !(e->torch_kw[i] = Py_BuildValue("{sOsO}", "dtype", dt, "device", torch_device))) {
            libentry_drop_hooks(e);
            return NULL;
        }
    }
    e->call = (LibCall)(uintptr_t)call;
    e->ready = 1;
    Py_RETURN_NONE;
}

/* uninstall(): back to the fallback for every call (the library the C path
 * called is gone: its communicator was closed, gpuc/_cuda.py Library.release). */
static PyObject *libentry_uninstall(PyObject *obj, PyObject *unused)
{
    (void)unused;
    libentry_drop_hooks((LibEntryObject *)obj);
    Py_RETURN_NONE;
}

static int libentry_traverse(PyObject *obj, visitproc visit, void *arg)
{
    LibEntryObject *e = (LibEntryObject *)obj;
    Py_VISIT(Py_TYPE(obj));
    Py_VISIT(e->fallback);
    Py_VISIT(e->on_error);
    return 0;
}

static int libentry_clear(PyObject *obj)
{
    LibEntryObject *e = (LibEntryObject *)obj;
    Py_CLEAR(e->fallback);
    libentry_drop_hooks(e);
    return 0;
}

static void libentry_dealloc(PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    PyObject_GC_UnTrack(obj);
    libentry_clear(obj);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(obj);
    Py_DECREF(type);
}

static PyMethodDef libentry_methods[] = {
    { "install", libentry_install, METH_VARARGS,
      "install(call, lib, device, params, results, result_tuple, hooks, on_error): set up the C path" },
    { "uninstall", libentry_uninstall, METH_NOARGS, "uninstall(): every call goes to the fallback again" },
    { "decode", libentry_decode, METH_VARARGS, "decode(*args) -> FALLBACK or (framework, device, stream, values, sizes)" },
    { NULL, NULL, 0, NULL },
};

static PyType_Slot libentry_slots[] = {
    { Py_tp_new, (void *)libentry_new },
    { Py_tp_dealloc, (void *)libentry_dealloc },
    { Py_tp_traverse, (void *)libentry_traverse },
    { Py_tp_clear, (void *)libentry_clear },
    { Py_tp_call, (void *)libentry_call },
    { Py_tp_methods, libentry_methods },
    { Py_tp_doc, (void *)"LibEntry(fallback): one entry of a --emit=lib library, called without ctypes once "
                        "install()ed for a device, else through fallback (see gpuc/_cudamodule.py)." },
    { 0, NULL },
};

static PyType_Spec libentry_spec = {
    "gpuc._gpuc.LibEntry", sizeof(LibEntryObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    libentry_slots,
};

/* The interned attribute names and the FALLBACK sentinel. */
static int libentry_init_module(PyObject *m)
{
    struct { PyObject **slot; const char *text; } names[] = {
        { &str_cai, "__cuda_array_interface__" }, { &str_data, "data" }, { &str_shape, "shape" },
        { &str_strides, "strides" }, { &str_typestr, "typestr" }, { &str_stream, "stream" },
        { &str_device, "device" }, { &str_id, "id" }, { &str_data_ptr, "data_ptr" },
        { &str_dtype, "dtype" }, { &str_get_device, "get_device" }, { &str_ptr, "ptr" },
        { &str_device_id, "device_id" }, { &str_c_contiguous, "_c_contiguous" },
        { &str_is_contiguous, "is_contiguous" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(*names[i].slot = PyUnicode_InternFromString(names[i].text))) {
            return -1;
        }
    }
    fallback_sentinel = PyUnicode_InternFromString("gpuc.FALLBACK");
    libentry_type = PyType_FromSpec(&libentry_spec);
    if (!fallback_sentinel || !libentry_type) {
        return -1;
    }
    Py_INCREF(fallback_sentinel);
    Py_INCREF(libentry_type);
    if (PyModule_AddObject(m, "FALLBACK", fallback_sentinel) != 0 || PyModule_AddObject(m, "LibEntry", libentry_type) != 0) {
        return -1;
    }
    return 0;
}

static PyMethodDef module_methods[] = {
    { "compile", py_compile, METH_VARARGS, "compile(emit, path, source, source_name, stdlib_dir, defines, lib_name, archs)" },
    { "load_program", py_load_program, METH_VARARGS, "load_program(path) -> Program" },
    { "version", py_version, METH_NOARGS, "the compiler's version" },
    { "write_images", py_write_images, METH_VARARGS, "write_images(path, [(arch, bytes)]): images.h" },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "gpuc._gpuc", "The C extension of the gpuc package (see gpuc/__init__.py).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__gpuc(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m) {
        return NULL;
    }
    program_type = PyType_FromSpec(&program_spec);
    if (!program_type || PyModule_AddObject(m, "Program", program_type) != 0) {
        Py_XDECREF(program_type);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(program_type);   /* one reference for the module, one kept here */
    if (libentry_init_module(m) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
