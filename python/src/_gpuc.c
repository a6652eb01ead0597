/* _gpuc.c: the C extension behind `import gpuc` (python/src/gpuc/). Two jobs:
 *
 *  - compile(): .gdsl text or a path through the compiler library
 *    (compiler/gpuc_compiler.h), in this process, giving the emitted texts
 *    and the diagnostics back as Python objects;
 *  - Program: a program's shared object (the generated C of --emit=program,
 *    compiled by gpuc/_cbackend.py) opened with dlopen, whose GpucProgram
 *    table (runner/gpuc_program.h) is the one calling convention of every
 *    entry: call_c() runs an entry on host components.
 *
 * Argument checking, flattening and result building are in Python
 * (gpuc/_types.py); this file only moves component buffers. Written against
 * the CPython limited API (3.9), so one abi3 wheel serves every Python >= 3.9:
 * no buffer protocol, so arrays arrive as addresses the caller keeps alive. */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
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

static PyMethodDef module_methods[] = {
    { "compile", py_compile, METH_VARARGS, "compile(emit, path, source, source_name, stdlib_dir, defines, lib_name, archs)" },
    { "load_program", py_load_program, METH_VARARGS, "load_program(path) -> Program" },
    { "version", py_version, METH_NOARGS, "the compiler's version" },
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
    return m;
}
