"""Modules on the CUDA backend: gpuc.compile(..., backend="cuda") and
gpuc.load(path). An entry call flattens its arguments (gpuc/_types.py, with
device arrays as gpuc/_cuda.py DeviceArrays), fills GpucLibValues, calls the
library's thunk on the framework's current stream (ctypes releases the GIL)
and builds the results as arrays of the arguments' framework.

The hot path: an entry's module attribute is a gpuc._gpuc.LibEntry
(python/src/_gpuc.c; a _FastFunction here). After the entry's first call on
CuPy or torch arrays it is installed for that device and does all of the
above in C for positional calls on contiguous device arrays of one framework
and Python numbers; on anything else it declines before running anything and
calls the Python path below (Entry.__call__) itself, with no Python frame in
between on the hot path."""

import ctypes
import json
import os

import numpy as np

import sys

from . import CompileError, Entry, EntryFunction, Error, ExecutionError, Module, _compile_text, _types, _cuda

_KIND = {k: i for i, k in enumerate(_types.KINDS)}


def compile_cuda(source, defines, arch):
    """A module on the CUDA backend: from the compile cache (gpuc/_compcache.py)
    without running the compiler, or compiled, built and recorded. With arch
    None a cached build for the device's arch is used without asking the
    driver (no cuInit at compile time); its first call checks the device's
    arch and rebuilds when it differs."""
    from . import _compcache, _defines, _source_args, version
    path, text, _ = _source_args(source)
    key = _compcache.key("cuda", path, text, _defines(defines), arch or "device", version())
    record = _compcache.lookup(key)
    if record is None:
        built_arch = arch or _cuda.device_arch(0)
        lib, files = _compile_text("lib", source, defines, lib_name=_cuda.LIB_NAME, archs=built_arch)
        # the plain kernels and the sharded entries' (NAME_new_comm, gpuc.Comm)
        cuda, _ = _compile_text("cuda-kernels", source, defines)
        so = _cuda.build(lib["source"], lib["header"], cuda["source"], lib["manifest"], built_arch)
        record = {"object": so, "name": files[0] if files else "<string>", "arch": built_arch}
        _compcache.store(key, record, files)
    with open(record["object"][:-3] + ".json") as f:
        manifest = json.load(f)
    module = CudaModule(_cuda.Library(record["object"], _cuda.LIB_NAME), manifest, record["name"])
    if arch is None:
        module._built_for = (record["arch"], source, defines)
    return module


NO_COMM = EntryFunction.not_sharded


def load_lib(path):
    path = os.fspath(path)
    if path.endswith(".json"):
        manifest_path = path
    else:
        d, base = os.path.split(path)
        base = base[3:] if base.startswith("lib") else base
        for suffix in (".so", ".a"):
            if base.endswith(suffix):
                base = base[:-len(suffix)]
        manifest_path = os.path.join(d, base + ".json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except OSError as e:
        raise Error("gpuc.load: cannot read the library's manifest %s: %s" % (manifest_path, e.strerror))
    if manifest.get("format") != "gpuc-lib-1":
        raise Error("gpuc.load: %s is not a gpuc library manifest" % manifest_path)
    so = os.path.join(os.path.dirname(os.path.abspath(manifest_path)), manifest["shared_library"])
    return CudaModule(_cuda.Library(so, manifest["name"]), manifest, manifest_path)


class CudaModule(Module):
    """A program on the CUDA backend (a --emit=lib library)."""

    _device_view = staticmethod(_cuda.device_view)
    _built_for = None   # (arch, source, defines): checked against the device at the first call

    def __init__(self, library, manifest, name):
        self._library = library
        self._manifest = manifest
        self._comm = library.comm
        self._origin = None
        self.backend = "cuda"
        self.name = name
        source = manifest.get("source", name)
        lines = {e["name"]: "%s:%s" % (source, e.get("line")) for e in manifest.get("entries", [])}
        shards = {e["name"]: e for e in manifest.get("entries", [])}
        self.entries = {}
        self._calls = []
        self._functions = []    # per entry: its _FastFunction (what the module attribute holds)
        for i, (ename, params, result, call) in enumerate(library.entries):
            entry = Entry(self, i, ename, params, result, lines.get(ename))
            self.entries[ename] = entry
            self._calls.append(call)
            fn = type(ename, (_FastFunction,), {"__doc__": entry.doc()})(entry)   # LibEntry(fallback=entry)
            if self._comm is None:
                fn.sharded, fn.not_sharded = False, NO_COMM
            else:
                info = shards.get(ename, {})
                fn.sharded = bool(info.get("sharded"))
                fn.not_sharded = "" if fn.sharded else info.get("not_sharded", "no sharded form was built")
            self._functions.append(fn)
            if not hasattr(type(self), ename):
                setattr(self, ename, fn)

    def with_comm(self, comm):
        """This module bound to a gpuc.Comm: the same compiled library, made with
        NAME_new_comm on the communicator (its sharded entries then take and
        return this rank's shards; the others run plain on each rank)."""
        from ._comm import check_comm
        check_comm(comm, "with_comm")
        if not any("sharded" in e for e in self._manifest.get("entries", [])):
            raise Error("gpuc: %s was built by a gpuc without sharded entries (its manifest says nothing of "
                        "sharding); rebuild it with gpuc --emit=lib" % self.name)
        module = CudaModule(_cuda.Library(self._library.path, self._library.name, comm=comm), self._manifest,
                            self.name)
        module._origin, module._built_for = self._origin, self._built_for
        return module

    def _run(self, entry, comps, sizes, out=None, sync=True):
        views = [c for c in comps if isinstance(c, _cuda.DeviceArray)]
        if not sync and not views and any(not dims for _, _, dims in entry.result_leaves):
            raise TypeError("%s: sync=False keeps scalar results on the device as 0-d arrays of the arguments' "
                            "framework: it needs a device array argument (CuPy, torch, __cuda_array_interface__)"
                            % entry.name)
        for v in views:   # __cuda_array_interface__ objects: the device of their address
            if v.device is None and v.ptr:
                v.device = _cuda.pointer_device(v.ptr, entry.name)
        known = [v.device for v in views if v.device is not None]
        for v in views:   # an empty one has no address: any device
            if v.device is None:
                v.device = known[0] if known else 0
        first = views[0] if views else None
        device = first.device if first else 0
        if first is None and self._comm is not None and self._comm.device is not None:
            device = self._comm.device      # NumPy arguments only: the communicator's device
        stream = first.stream if first else 0
        for v in views:
            if v.device != device:
                raise ValueError("%s: the device arrays are on devices %d and %d; put them on one"
                                 % (entry.name, device, v.device))
        if self._built_for is not None:
            self._check_arch(device)
        ctx, lib = self._library.handle(device, entry.name)
        rt = _cuda.runtime()
        n_in = len(comps)
        leaves = entry.result_leaves
        args = (_cuda.LibValue * max(1, n_in))()
        results = (_cuda.LibValue * max(1, len(leaves)))()
        temps = []      # device copies of NumPy arguments, freed after the call
        keep = []       # what keeps argument and result memory alive during the call
        try:
            for i, c in enumerate(comps):
                a = args[i]
                if isinstance(c, _cuda.DeviceArray):
                    a.kind, a.rank, a.data = _KIND[_kind_of(c.dtype)], c.ndim, c.ptr
                    a.shape[0] = c.shape[0] if c.ndim >= 1 else 0
                    a.shape[1] = c.shape[1] if c.ndim >= 2 else 0
                    keep.append(c.owner)
                elif c.ndim == 0:
                    kind = _kind_of(c.dtype)
                    a.kind, a.rank = _KIND[kind], 0
                    setattr(a.scalar, "b" if kind == "bool" else kind, c[()].item())
                else:
                    a.kind, a.rank = _KIND[_kind_of(c.dtype)], c.ndim
                    a.shape[0] = c.shape[0]
                    a.shape[1] = c.shape[1] if c.ndim >= 2 else 0
                    a.data = self._upload(ctx, c, temps)
            out_views = self._out_views(entry, out, leaves)
            made = []   # per result leaf: a framework array made before the call, or None
            for i, (_, kind, dims) in enumerate(leaves):
                r = results[i]
                r.kind, r.rank = _KIND[kind], len(dims)
                known = [sizes.get(d) for d in dims]
                if not dims and sync:
                    made.append(None)
                    continue
                if not dims:   # sync=False: the scalar is written to a 0-d device array, no wait
                    array, ptr = self._device_scalar(first, kind, ctx)
                    r.data = ptr
                    made.append(array)
                    continue
                if out_views is not None:
                    v = out_views[i]
                    if any(k is not None and k != s for k, s in zip(known, v.shape)):
                        raise ValueError("%s: out= component %d has shape %s but the result's is %s"
                                         % (entry.name, i, v.shape, tuple(known)))
                    array, ptr, shape = out_views[i].owner, v.ptr, v.shape
                elif first is not None and first.framework in ("cupy", "torch") and None not in known:
                    array = _empty(first, kind, known)
                    ptr = array.data.ptr if first.framework == "cupy" else array.data_ptr()
                    shape = known
                else:
                    made.append(None)
                    continue
                r.data = ptr
                r.shape[0] = shape[0]
                r.shape[1] = shape[1] if len(shape) >= 2 else 0
                made.append(array)
            status = self._calls[entry.index](lib, stream, args, results)
            if status != 0:
                raise ExecutionError(entry.name, self._library.message())
            values = []
            for i, (_, kind, dims) in enumerate(leaves):
                r = results[i]
                dt = _types.DTYPES[kind]
                if not dims and made[i] is not None:
                    values.append(made[i])
                    continue
                if not dims:
                    values.append(np.array(getattr(r.scalar, "b" if kind == "bool" else kind), dtype=dt))
                    continue
                shape = (r.shape[0],) if len(dims) == 1 else (r.shape[0], r.shape[1])
                if made[i] is not None:
                    values.append(made[i])
                elif first is None:
                    host = np.empty(shape, dtype=dt)
                    if host.nbytes:
                        st = rt.gpuc_memcpy_dtoh(ctx, host.ctypes.data, r.data, host.nbytes)
                        if st != 0:
                            self._library.free_device(lib, r.data)
                            raise _cuda._rt_error("%s: reading a result" % entry.name, st)
                    self._library.free_device(lib, r.data)
                    values.append(host)
                else:
                    buf = _cuda.DeviceBuffer(self._library, lib, r.data, dt, shape)
                    values.append(_wrap(first, buf))
        finally:
            for p in temps:
                rt.gpuc_mem_free(ctx, p)
        if out is None and first is not None and first.framework in ("cupy", "torch"):
            fn = self._functions[entry.index]
            if fn._fast_device != device or first.framework not in fn._fast_frameworks:
                self._install_fast(entry, fn, device, lib)
        if out is not None:
            return out
        return _unflatten(entry.result, values, device=first is not None)

    def _install_fast(self, entry, fn, device, lib):
        """Give fn a LibEntry of entry on device (after a call through the
        Python path succeeded there), for the frameworks imported so far."""
        spec = fast_spec(entry)
        if spec is None:
            fn._fast_device = device
            fn._fast_frameworks = frozenset(("cupy", "torch"))   # never: the C path cannot take this entry
            return
        params, results, result_tuple = spec
        hooks = framework_hooks(device)
        name, library = entry.name, self._library

        def on_error():
            raise ExecutionError(name, library.message())

        call = ctypes.cast(self._calls[entry.index], ctypes.c_void_p).value
        fn.install(call, lib.value or 0, device, params, results, result_tuple, hooks, on_error)
        self._library.fast.add(fn)
        fn._fast_device = device
        fn._fast_frameworks = {f for f in ("cupy", "torch") if f + "_type" in hooks}

    def _device_scalar(self, like, kind, ctx):
        """(0-d device array, its address) for a scalar result kept on the
        device: of like's framework (CuPy, torch), else a DeviceBuffer."""
        if like.framework in ("cupy", "torch"):
            array = _empty(like, kind, ())
            return array, array.data.ptr if like.framework == "cupy" else array.data_ptr()
        rt = _cuda.runtime()
        dt = _types.DTYPES[kind]
        ptr = ctypes.c_uint64(0)
        st = rt.gpuc_mem_alloc(ctx, dt.itemsize, ctypes.byref(ptr))
        if st != 0:
            raise _cuda._rt_error("allocating a scalar result on the device", st)
        _, lib = self._library.handle(like.device)
        return _cuda.DeviceBuffer(self._library, lib, ptr.value, dt, ()), ptr.value

    def _check_arch(self, device):
        """Once, before the first call of a module compiled for "the device's
        arch" from the cache: rebuild it when the device is another arch."""
        built, source, defines = self._built_for
        actual = _cuda.device_arch(device)
        if actual != built:
            fresh = compile_cuda(source, defines, actual)
            if self._comm is not None:
                fresh = fresh.with_comm(self._comm)
            self._library, self._calls = fresh._library, fresh._calls
        self._built_for = None

    def _upload(self, ctx, array, temps):
        rt = _cuda.runtime()
        ptr = ctypes.c_uint64(0)
        st = rt.gpuc_mem_alloc(ctx, max(1, array.nbytes), ctypes.byref(ptr))
        if st != 0:
            raise _cuda._rt_error("copying an argument to the device", st)
        temps.append(ptr.value)
        if array.nbytes:
            st = rt.gpuc_memcpy_htod(ctx, ptr.value, array.ctypes.data, array.nbytes)
            if st != 0:
                raise _cuda._rt_error("copying an argument to the device", st)
        return ptr.value

    def _out_views(self, entry, out, leaves):
        if out is None:
            return None
        sizes = _types.Sizes(entry.name, _cuda.device_view)
        comps = []
        _types.flatten(entry.result, out, "out=", entry.name, sizes, comps)
        if len(comps) != len(leaves) or not all(isinstance(c, _cuda.DeviceArray) for c in comps):
            raise TypeError("%s: out= must be device arrays of the result type %s" % (entry.name, entry.result_text))
        return comps


def _ext():
    from . import _gpuc
    return _gpuc


class _FastFunction(_ext().LibEntry, EntryFunction):
    """A CUDA module's entry attribute: a LibEntry whose fallback is the
    Entry (the Python path), with EntryFunction's help, repr and template
    subscript. Calls go straight to LibEntry's C call (it comes first)."""

    _fast_device = None           # the device install() was last called for
    _fast_frameworks = frozenset()


def fast_spec(entry):
    """(params, results, result_tuple) for gpuc._gpuc.LibEntry, or None when
    the entry has a parameter or result the C path does not take (structs,
    tuples of arrays as arguments, rank > 2). A component is (kind index,
    dimension codes, size slot): a dimension code is a size variable's slot
    (>= 0), -1 for "_", or -(2 + n) for the constant n; the size slot of an
    i64 parameter that is a size variable, else -1."""
    slots = {}

    def code(d):
        if d == "_":
            return -1
        if d.isdigit():
            return -2 - int(d)
        return slots.setdefault(d, len(slots))

    params = []
    for p, t in entry.params:
        if isinstance(t, _types.Scalar):
            params.append((_KIND[t.kind], (), code(p) if p in entry.size_params else -1))
        elif isinstance(t, _types.Array) and isinstance(t.elem, _types.Scalar) and len(t.dims) <= 2:
            params.append((_KIND[t.elem.kind], tuple(code(d) for d in t.dims), -1))
        else:
            return None
    r = entry.result
    simple = (_types.Scalar, _types.Array)
    if isinstance(r, _types.Tuple) and all(isinstance(s, simple) for s in r.items):
        items, result_tuple = r.items, True
    elif isinstance(r, simple):
        items, result_tuple = [r], False
    else:
        return None
    results = []
    for t in items:
        if isinstance(t, _types.Scalar):
            results.append((_KIND[t.kind], (), -1))
        elif isinstance(t.elem, _types.Scalar) and len(t.dims) <= 2:
            results.append((_KIND[t.elem.kind], tuple(code(d) for d in t.dims), -1))
        else:
            return None
    if max(len(params), len(results), len(slots)) > 16:
        return None
    return params, results, result_tuple


def framework_hooks(device):
    """What LibEntry.install needs of CuPy and torch (those already imported):
    their array types (cupy.ndarray is also the allocator: ndarray(shape,
    dtype) is what cupy.empty calls), the dtypes per kind, CuPy's current
    device and stream, torch.empty, the result device and torch's raw current
    stream; and for other __cuda_array_interface__ objects, the device of an
    address."""
    hooks = {"cai_device": _cuda.pointer_device}
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        hooks["cupy_type"] = cupy.ndarray
        hooks["cupy_dtypes"] = [_types.DTYPES[k] for k in _types.KINDS]
        hooks["cupy_get_device"] = cupy.cuda.runtime.getDevice
        hooks["cupy_get_stream"] = cupy.cuda.get_current_stream
        hooks["cupy_ptds"] = _cuda.cupy_ptds()
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "Tensor"):
        names = {"bool": "bool", "i32": "int32", "i64": "int64", "u32": "uint32", "u64": "uint64",
                 "f32": "float32", "f64": "float64"}
        hooks["torch_type"] = torch.Tensor
        hooks["torch_empty"] = torch.empty
        hooks["torch_dtypes"] = [getattr(torch, names[k], None) for k in _types.KINDS]
        hooks["torch_device"] = torch.device("cuda", device)
        hooks["torch_stream"] = lambda d: _cuda._torch_stream(torch, d)
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            hooks["torch_stream"] = raw
    return hooks


_KIND_OF = {d: k for k, d in _types.DTYPES.items()}


def _kind_of(dtype):
    """The gdsl kind of a NumPy dtype (a dict lookup: this is on every call's path)."""
    kind = _KIND_OF.get(dtype)
    if kind is None:
        raise TypeError("gpuc: dtype %s is not a gdsl scalar type" % dtype)
    return kind


def _empty(like, kind, shape):
    if like.framework == "cupy":
        import cupy
        with cupy.cuda.Device(like.device):
            return cupy.empty(tuple(shape), dtype=_types.DTYPES[kind])
    import torch
    tdt = {"bool": torch.bool, "i32": torch.int32, "i64": torch.int64, "f32": torch.float32, "f64": torch.float64,
           "u32": getattr(torch, "uint32", None), "u64": getattr(torch, "uint64", None)}[kind]
    return torch.empty(tuple(shape), dtype=tdt, device="cuda:%d" % like.device)


def _wrap(like, buf):
    """A result the library allocated as an array of like's framework (zero copy; buf owns the memory)."""
    if like.framework == "cupy":
        import cupy
        return cupy.asarray(buf)
    if like.framework == "torch":
        import torch
        return torch.as_tensor(buf, device="cuda:%d" % like.device)
    return buf


def _unflatten(t, values, device):
    if not device:
        return _types.unflatten(t, list(values))
    return _unflatten_device(t, list(values))


def _unflatten_device(t, comps):
    """As _types.unflatten, with arrays of structs as dicts of device arrays."""
    if isinstance(t, _types.Scalar):
        v = comps.pop(0)
        return v[()].item() if isinstance(v, np.ndarray) else v    # else sync=False's 0-d device array
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Scalar):
        return comps.pop(0)
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Struct):
        return {name: _unflatten_device(sub if isinstance(sub, _types.Array) else _types.Array(sub, t.dims), comps)
                for name, sub in t.elem.fields}
    if isinstance(t, _types.Array):
        return tuple(_unflatten_device(_types.Array(s, t.dims), comps) for s in t.elem.items)
    if isinstance(t, _types.Tuple):
        return tuple(_unflatten_device(s, comps) for s in t.items)
    return {name: _unflatten_device(s, comps) for name, s in t.fields}
