"""gpuc from Python: compile .gdsl programs at run time and call their entries.

    import gpuc, numpy
    m = gpuc.compile('entry f(x: f32[n]) -> f32[n] = x * 2.0;')
    m.f(numpy.arange(4, dtype=numpy.float32))      # array([0., 2., 4., 6.], dtype=float32)

The compiler runs in this process (the extension gpuc._gpuc over the compiler
library, compiler/gpuc_compiler.h). On the C backend an entry's generated C
is compiled once with the system C compiler and cached on disk
(gpuc/_cbackend.py); arguments are NumPy arrays and Python numbers, checked
and flattened by gpuc/_types.py. docs/python.md is the user's guide.
"""

import inspect
import json
import os
import pathlib
import threading

import numpy as np

from . import _cbackend, _compcache, _paths, _types

__all__ = ["compile", "load", "Comm", "Error", "CompileError", "ExecutionError", "Module", "version"]


class Error(Exception):
    """Every error gpuc raises (besides TypeError/ValueError for bad arguments)."""


class CompileError(Error):
    """The program did not compile. str() is the compiler's clang-style text
    (file:line:col: error: message, the source line, a caret); .diagnostics is
    a list of dicts with file, line, column, severity, message, rendered."""

    def __init__(self, rendered, diagnostics):
        super().__init__(rendered.rstrip("\n"))
        self.diagnostics = diagnostics


class ExecutionError(Error):
    """An entry failed while running (e.g. an index out of bounds); .entry names it."""

    def __init__(self, entry, message):
        super().__init__("%s: %s" % (entry, message))
        self.entry = entry


def _ext():
    from . import _gpuc
    return _gpuc


def version():
    """The compiler's version string."""
    return _ext().version()


def _define_value(value):
    if isinstance(value, bool):
        raise TypeError("gpuc: a template parameter is an integer or a scalar type, not a bool")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError("gpuc: template parameter value %r is not an integer or a scalar type" % (value,))
    for kind, d in _types.DTYPES.items():
        if d == dt:
            return kind
    raise TypeError("gpuc: %s is not a gdsl scalar type (bool, i32, i64, u32, u64, f32, f64)" % dt)


def _defines(defines):
    """defines as gpuc's -D strings: a dict {NAME or ENTRY.NAME: value} or a list of 'NAME=VALUE'."""
    if defines is None:
        return []
    if isinstance(defines, dict):
        return ["%s=%s" % (k, _define_value(v)) for k, v in defines.items()]
    if isinstance(defines, str):
        return [defines]
    return [str(d) for d in defines]


def _source_args(source):
    """(path, text, name) for gpuc._gpuc.compile from compile()'s first argument."""
    if isinstance(source, pathlib.PurePath):
        return os.fspath(source), None, None
    if not isinstance(source, str):
        raise TypeError("gpuc.compile: source must be .gdsl text, a path string or a pathlib.Path, not %s"
                        % type(source).__name__)
    if "\n" not in source and len(source) < 4096 and os.path.isfile(source):
        return source, None, None
    return None, source, None


def _compile_text(emit, source, defines, lib_name=None, archs=None):
    path, text, name = _source_args(source)
    status, outputs, diags, rendered, files = _ext().compile(
        emit, path, text, name, _paths.stdlib_dir(), _defines(defines), lib_name, archs)
    if status != 0:
        if not rendered:
            rendered = "gpuc: error: compilation failed (status %d)" % status
        raise CompileError(rendered, diags)
    return outputs, files



class Entry:
    """One entry point of a compiled program (what module attributes hold)."""

    def __init__(self, module, index, name, params, result, where):
        self.module = module
        self.index = index
        self.name = name
        self.params = [(p, _types.parse_type(t)) for p, t in params]
        self.param_types = params
        self.result_text = result
        self.result = _types.parse_type(result)
        self.result_leaves = _types.leaves(self.result)    # computed once: calls read it
        self.where = where
        self.size_params = set()
        dims = set()
        for _, t in self.params + [(None, self.result)]:
            for _, _, d in _types.leaves(t):
                dims.update(d)
        for p, t in self.params:
            if isinstance(t, _types.Scalar) and t.kind == "i64" and p in dims:
                self.size_params.add(p)

    def signature_text(self):
        return "%s(%s) -> %s" % (self.name, ", ".join("%s: %s" % pt for pt in self.param_types), self.result_text)

    def doc(self):
        return ("%s\n\ngpuc entry defined at %s, on the %s backend.\n"
                "Arrays are NumPy arrays of exactly the dtype and rank of the type (non-contiguous ones are "
                "copied); scalars are Python numbers; structs are dicts or NumPy structured arrays; tuples "
                "are tuples." % (self.signature_text(), self.where or "<unknown>", self.module.backend))

    def __call__(self, *args, **kwargs):
        name = self.name
        names = [p for p, _ in self.params]
        options = {k: kwargs.pop(k) for k in ("out", "sync") if k in kwargs and k not in names}
        if len(args) > len(self.params):
            raise TypeError("%s() takes %d argument%s (%d given): %s" % (
                name, len(self.params), "" if len(self.params) == 1 else "s", len(args), self.signature_text()))
        values = list(args) + [None] * (len(self.params) - len(args))
        given = [True] * len(args) + [False] * (len(self.params) - len(args))
        for k, v in kwargs.items():
            names = [p for p, _ in self.params]
            if k not in names:
                raise TypeError("%s() got an unexpected keyword argument '%s'" % (name, k))
            i = names.index(k)
            if given[i]:
                raise TypeError("%s() got multiple values for argument '%s'" % (name, k))
            values[i], given[i] = v, True
        missing = [p for (p, _), g in zip(self.params, given) if not g]
        if missing:
            raise TypeError("%s() missing argument%s: %s" % (name, "s" if len(missing) > 1 else "",
                                                            ", ".join("'%s'" % m for m in missing)))
        sizes = _types.Sizes(name, self.module._device_view)
        comps = []
        for (p, t), v in zip(self.params, values):
            _types.flatten(t, v, "argument '%s'" % p, name, sizes, comps)
        for (p, t), v in zip(self.params, values):
            if p in self.size_params:
                if v < 0:
                    raise ValueError("%s: argument '%s' is a size and must not be negative, got %d" % (name, p, v))
                sizes.bind(p, int(v), "argument '%s'" % p)
        return self.module._run(self, comps, sizes, **options)


class EntryFunction:
    """What a module attribute holds: call it like a function (help() shows
    the gdsl signature and place); subscript it for a template instance:
    m.dot[numpy.float64, 512] or m.dot[dict(T=numpy.float64, BLOCK=512)].
    sharded: whether it runs on this rank's shards (a module with comm=);
    not_sharded: why not ("" when it is)."""

    sharded = False
    not_sharded = "the module has no communicator (gpuc.compile(..., comm=) or module.with_comm(comm))"

    def __init__(self, entry):
        self.entry = entry
        self.__name__ = self.__qualname__ = entry.name
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p, _ in entry.params])

    def __call__(self, *args, **kwargs):
        return self.entry(*args, **kwargs)

    def __getitem__(self, key):
        return self.entry.module._instance(self.entry.name, key)

    def __repr__(self):
        return "<gpuc entry %s>" % self.entry.signature_text()


def _make_function(entry):
    """An EntryFunction of a class of its own whose docstring is the entry's (for help())."""
    cls = type(entry.name, (EntryFunction,), {"__doc__": entry.doc()})
    return cls(entry)


class Module:
    """A compiled program: each entry (and exported instance) is an attribute."""

    _device_view = None     # the C backend takes NumPy arrays only

    def __init__(self, program, backend, entries, name):
        """entries: [name, "file:line"] of each entry and exported instance (from
        the manifest); the program table's other functions (the helper fns it
        has for test blocks) are not attributes."""
        self._program = program
        self._origin = None     # (source, defines, arch) for template instances
        self.backend = backend
        self.name = name
        where = dict(entries)
        self.entries = {}
        for i, (ename, params, result, has_c, has_cuda) in enumerate(program.entries()):
            if ename not in where:
                continue
            entry = Entry(self, i, ename, params, result, where[ename])
            self.entries[ename] = entry
            if not hasattr(type(self), ename):
                setattr(self, ename, _make_function(entry))

    def __repr__(self):
        return "<gpuc module %s (%s backend): %s>" % (self.name, self.backend, ", ".join(self.entries))

    def __dir__(self):
        return list(self.entries) + ["backend", "entries", "name"]

    _comm = None    # the gpuc.Comm a CUDA module is bound to (with_comm)

    def with_comm(self, comm):
        """This module bound to a gpuc.Comm (CUDA backend only)."""
        from ._comm import check_comm
        check_comm(comm, "with_comm")
        raise Error("gpuc: with_comm needs the CUDA backend (this module is on the %s backend): ranks are "
                    "processes with a GPU each, and the C backend has no NCCL" % self.backend)

    def _instance(self, entry_name, key):
        """The entry of a template instance, compiled once per process (and cached on disk)."""
        if self._origin is None:
            raise Error("gpuc: %s: template instances need a module made by gpuc.compile" % entry_name)
        source, defines, arch = self._origin
        params = _template_params(source, defines, entry_name)
        if isinstance(key, dict):
            values = key
        else:
            key = key if isinstance(key, tuple) else (key,)
            if len(key) > len(params):
                raise TypeError("%s has %d template parameter%s (%s), got %d values"
                                % (entry_name, len(params), "" if len(params) == 1 else "s", ", ".join(params),
                                   len(key)))
            values = dict(zip(params, key))
        unknown = [k for k in values if k not in params]
        if unknown:
            raise TypeError("%s has no template parameter %s (it has: %s)"
                            % (entry_name, ", ".join(map(str, unknown)), ", ".join(params) or "none"))
        merged = _define_list(defines) + ["%s.%s=%s" % (entry_name, k, _define_value(v)) for k, v in values.items()]
        ckey = (self.backend, _source_key(source), arch, tuple(merged), id(self._comm))
        with _instances_lock:
            module = _instances.get(ckey)
        if module is None:
            module = compile(source, defines=merged, arch=arch, backend=self.backend, comm=self._comm)
            with _instances_lock:
                _instances[ckey] = module
        return getattr(module, entry_name)

    def _run(self, entry, comps, sizes, out=None, sync=True):
        if out is not None:
            raise TypeError("%s: out= needs the CUDA backend (device arrays)" % entry.name)
        args, keep = [], []
        for a in comps:
            rows = a.shape[0] if a.ndim >= 1 else 0
            cols = a.shape[1] if a.ndim >= 2 else 0
            data = a
            if a.size == 0:
                data = np.zeros(1, dtype=a.dtype)   # data is never NULL, even for an empty array
                keep.append(data)
            args.append((_KIND_INDEX[a.dtype.kind, a.dtype.itemsize], a.ndim, rows, cols, data.ctypes.data))
        results = []
        for _, kind, dims in _types.leaves(entry.result):
            known = [sizes.get(d) for d in dims]
            shape = [-1 if s is None else s for s in known] + [0, 0]
            results.append((_types.KINDS.index(kind), len(dims), shape[0], shape[1]))
        out = self._program.call_c(entry.index, args, results)
        del keep
        if isinstance(out, str):
            raise ExecutionError(entry.name, out)
        arrays = []
        for (kind, rank, _, _), (rows, cols, buf) in zip(results, out):
            a = np.frombuffer(buf, dtype=_types.DTYPES[_types.KINDS[kind]])
            arrays.append(a.reshape(() if rank == 0 else (rows,) if rank == 1 else (rows, cols)))
        return _types.unflatten(entry.result, arrays)


_KIND_INDEX = {(_types.DTYPES[k].kind, _types.DTYPES[k].itemsize): i for i, k in enumerate(_types.KINDS)}


_instances = {}
_instances_lock = threading.Lock()
_template_cache = {}


def _define_list(defines):
    return _defines(defines)


def _source_key(source):
    return ("path", os.fspath(source)) if isinstance(source, pathlib.PurePath) else ("text", source)


def _template_params(source, defines, entry_name):
    """The template parameter names of an entry, in order (from the manifest)."""
    key = (_source_key(source), tuple(_define_list(defines)))
    manifest = _template_cache.get(key)
    if manifest is None:
        outputs, _ = _compile_text("manifest", source, defines, lib_name="gpuc_py")
        manifest = _template_cache[key] = json.loads(outputs.get("manifest", "{}"))
    for e in manifest.get("entries", []):
        if e["name"] == entry_name:
            return [t["name"] for t in e.get("template", [])]
    raise Error("gpuc: no entry %s" % entry_name)


def _pick_backend(backend):
    if backend not in ("auto", "c", "cuda"):
        raise ValueError("gpuc.compile: backend must be 'auto', 'c' or 'cuda', not %r" % (backend,))
    if backend == "auto":
        from . import _cuda
        return "cuda" if _cuda.usable() else "c"
    return backend


def compile(source, *, defines=None, arch=None, backend="auto", comm=None):
    """Compile a gdsl program: `source` is its text, a path (str naming an existing
    file, or a pathlib.Path). defines sets template parameters ({'TILE': 16,
    'matmul.T': numpy.float64} or ['TILE=16']). backend: 'c', 'cuda' or 'auto'
    (CUDA when a GPU is usable, else C). comm: a gpuc.Comm: the module's sharded
    entries take and return this rank's shards (CUDA backend; see
    docs/python.md). Returns a Module; raises CompileError."""
    if comm is not None:
        _check_comm_backend(comm, backend, "gpuc.compile")
        backend = "cuda"
    which = _pick_backend(backend)
    if which == "cuda":
        from . import _cudamodule
        module = _cudamodule.compile_cuda(source, defines, arch)
    else:
        module = _compile_c(source, defines)
    module._origin = (source, defines, arch)
    if comm is not None:
        module = module.with_comm(comm)
    return module


def _check_comm_backend(comm, backend, what):
    from ._comm import check_comm
    check_comm(comm, what)
    if backend == "c":
        raise ValueError("%s: comm= needs backend='cuda' (or 'auto'): ranks are processes with a GPU each, "
                         "combined through NCCL, and the C backend has no NCCL" % what)
    if backend not in ("auto", "cuda"):
        _pick_backend(backend)    # its error


def _compile_c(source, defines):
    """A module on the C backend: from the compile cache (gpuc/_compcache.py)
    without running the compiler, or compiled, built and recorded."""
    path, text, _ = _source_args(source)
    key = _compcache.key("c", path, text, _defines(defines), None, version())
    record = _compcache.lookup(key)
    if record is None:
        outputs, files = _compile_text("program", source, defines)
        manifest = json.loads(_compile_text("manifest", source, defines, lib_name="gpuc_py")[0]["manifest"])
        record = {"object": _cbackend.build(outputs.get("source", "")), "name": files[0] if files else "<string>",
                  "entries": [[e["name"], "%s:%s" % (manifest.get("source"), e.get("line"))]
                              for e in manifest.get("entries", [])]}
        _compcache.store(key, record, files)
    return Module(_ext().load_program(record["object"]), "c", record["entries"], record["name"])


def load(path, *, comm=None):
    """A library made by `gpuc --emit=lib -o DIR/libNAME`: path is DIR/NAME.json
    (its manifest), DIR/libNAME.so, or DIR/libNAME. Its entries run on the CUDA
    backend as a compiled module's do; nothing is compiled. comm: as compile's."""
    from . import _cudamodule
    if comm is not None:
        _check_comm_backend(comm, "cuda", "gpuc.load")
    module = _cudamodule.load_lib(path)
    return module.with_comm(comm) if comm is not None else module


def __getattr__(name):
    # gpuc.Comm without importing gpuc._comm (and ctypes' runtime) at `import gpuc`
    if name == "Comm":
        from ._comm import Comm
        return Comm
    raise AttributeError("module 'gpuc' has no attribute %r" % name)
