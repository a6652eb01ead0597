"""The CUDA backend of the Python package: a program as a --emit=lib library
(backend/emit_lib.c) called through its generic entry table
(NAME_entry_table: one thunk per entry on GpucLibValue components), over the
gpuc runtime (libgpuc_runtime.so of the package, loaded with ctypes; it finds
libcuda and NVRTC with dlopen at first use).

Build: the lib source and the kernels' CUDA C come from the in-process
compiler; the kernels are compiled by NVRTC (the runtime's
gpuc_compile_cuda_to_image) for the device's sm, written as images.h the way
`gpuc --emit=lib` writes it (driver/build_exe.c), and the lib source is
compiled with $CC into a shared object cached like the C backend's (key: the
sources, the arch, the compiler, the flags). A cached object is only opened.

Calls: arrays with __cuda_array_interface__ or __dlpack__ (CuPy, PyTorch,
Numba, JAX) are passed by device pointer; NumPy arrays are copied to the
device and results back. The call runs on the framework's current stream,
in a gpuc context over the device's primary context (the one CuPy and
PyTorch use). Results are made by the framework of the first device
argument (cupy.empty, torch.empty) when their sizes are known before the
call; unknown sizes are allocated by the library and handed to the
framework zero-copy through an owner object (DeviceBuffer) that frees them.
"""

import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import weakref

import numpy as np

from . import _cbackend, _paths, _types

builds = 0   # libraries built by this process (tests read it)

# ---- the runtime through ctypes --------------------------------------------


class _Config(ctypes.Structure):      # GpucConfig (runtime/gpuc.h)
    _fields_ = [("device", ctypes.c_int), ("cu_context", ctypes.c_void_p), ("cu_stream", ctypes.c_void_p),
                ("debug", ctypes.c_int), ("profile", ctypes.c_int), ("pool_limit", ctypes.c_size_t),
                ("error_handler", ctypes.c_void_p), ("error_user", ctypes.c_void_p),
                ("profile_out", ctypes.c_void_p)]


class _DeviceInfo(ctypes.Structure):  # GpucDeviceInfo
    _fields_ = [("name", ctypes.c_char * 256), ("ordinal", ctypes.c_int), ("cc_major", ctypes.c_int),
                ("cc_minor", ctypes.c_int), ("multiprocessors", ctypes.c_int), ("total_memory", ctypes.c_size_t),
                ("l2_bytes", ctypes.c_int), ("max_threads_per_block", ctypes.c_int),
                ("max_shared_per_block", ctypes.c_int), ("max_shared_per_block_optin", ctypes.c_int),
                ("warp_size", ctypes.c_int), ("mps_enabled", ctypes.c_int)]


class _Scalar(ctypes.Union):
    _fields_ = [("b", ctypes.c_bool), ("i32", ctypes.c_int32), ("i64", ctypes.c_int64), ("u32", ctypes.c_uint32),
                ("u64", ctypes.c_uint64), ("f32", ctypes.c_float), ("f64", ctypes.c_double)]


class LibValue(ctypes.Structure):     # GpucLibValue (the header of an --emit=lib library)
    _fields_ = [("kind", ctypes.c_int), ("rank", ctypes.c_int), ("shape", ctypes.c_int64 * 2),
                ("data", ctypes.c_uint64), ("scalar", _Scalar)]


_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(LibValue),
                         ctypes.POINTER(LibValue))


class _EntryInfo(ctypes.Structure):   # GpucLibEntryInfo
    _fields_ = [("name", ctypes.c_char_p), ("num_params", ctypes.c_int),
                ("param_names", ctypes.POINTER(ctypes.c_char_p)), ("param_types", ctypes.POINTER(ctypes.c_char_p)),
                ("result_type", ctypes.c_char_p), ("num_args", ctypes.c_int), ("num_results", ctypes.c_int),
                ("call", _CALL)]


_rt = None
_rt_lock = threading.Lock()


def runtime():
    """libgpuc_runtime.so of the package, its functions typed."""
    global _rt
    with _rt_lock:
        if _rt is None:
            rt = ctypes.CDLL(os.path.join(_paths.lib_dir(), "libgpuc_runtime.so"))
            P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
            for name, res, args in [
                    ("gpuc_init", I, []), ("gpuc_device_count", I, [ctypes.POINTER(I)]),
                    ("gpuc_device_info", I, [I, ctypes.POINTER(_DeviceInfo)]),
                    ("gpuc_last_error", ctypes.c_char_p, []), ("gpuc_status_name", ctypes.c_char_p, [I]),
                    ("gpuc_config_init", None, [ctypes.POINTER(_Config)]),
                    ("gpuc_context_new", I, [ctypes.POINTER(_Config), ctypes.POINTER(P)]),
                    ("gpuc_mem_alloc", I, [P, S, ctypes.POINTER(ctypes.c_uint64)]),
                    ("gpuc_mem_free", I, [P, ctypes.c_uint64]),
                    ("gpuc_memcpy_htod", I, [P, ctypes.c_uint64, P, S]),
                    ("gpuc_memcpy_dtoh", I, [P, P, ctypes.c_uint64, S]),
                    ("gpuc_stream_synchronize", I, [P, P]),
                    ("gpuc_context_free", I, [P]),
                    # NCCL communicators (runtime/gpuc_comm.h; gpuc/_comm.py)
                    ("gpuc_comm_nccl_load", I, []),
                    ("gpuc_comm_nccl_unique_id", I, [ctypes.c_char_p]),
                    ("gpuc_comm_nccl_init_rank", I, [ctypes.c_char_p, I, I, ctypes.POINTER(P)]),
                    ("gpuc_comm_from_nccl", I, [P, ctypes.POINTER(P)]),
                    ("gpuc_comm_nccl_free", None, [P]),
                    ("gpuc_comm_nccl_handle", P, [P]),
                    ("gpuc_compile_cuda_to_image", I, [ctypes.c_char_p, ctypes.c_char_p,
                                                       ctypes.POINTER(ctypes.c_char_p), I, ctypes.POINTER(P),
                                                       ctypes.POINTER(S), ctypes.POINTER(ctypes.c_char_p)])]:
                fn = getattr(rt, name)
                fn.restype, fn.argtypes = res, args
            _rt = rt
    return _rt


def _rt_error(what, status):
    from . import Error
    rt = runtime()
    return Error("gpuc: %s: %s: %s" % (what, rt.gpuc_status_name(status).decode(),
                                       (rt.gpuc_last_error() or b"").decode(errors="replace")))


_usable = None


def usable():
    """Whether a GPU can be used: libcuda loads and a device exists (checked once)."""
    global _usable
    if _usable is None:
        try:
            rt = runtime()
            n = ctypes.c_int(0)
            _usable = rt.gpuc_init() == 0 and rt.gpuc_device_count(ctypes.byref(n)) == 0 and n.value > 0
        except OSError:
            _usable = False
    return _usable


_libcuda = None


def pointer_device(ptr, what="gpuc"):
    """The ordinal of the device a device address belongs to (the driver's
    cuPointerGetAttribute, DEVICE_ORDINAL: what a __cuda_array_interface__
    object does not say). ValueError when CUDA does not know the address."""
    if not usable():
        from . import Error
        raise Error("%s: the CUDA backend needs a GPU (libcuda did not load or no device)" % what)
    ordinal = ctypes.c_int(-1)
    st = _driver().cuPointerGetAttribute(ctypes.byref(ordinal), 9, ptr)   # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    if st != 0 or ordinal.value < 0:
        raise ValueError("%s: the __cuda_array_interface__ address 0x%x is not device memory CUDA knows "
                         "(cuPointerGetAttribute: error %d)" % (what, ptr, st))
    return ordinal.value


def _driver():
    """libcuda through ctypes (loaded and initialised by the runtime: usable())."""
    global _libcuda
    if _libcuda is None:
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuPointerGetAttribute.restype = ctypes.c_int
        lib.cuPointerGetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
        for name, args in [("cuCtxGetDevice", [ctypes.POINTER(ctypes.c_int)]),
                           ("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int]),
                           ("cuDevicePrimaryCtxRetain", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]),
                           ("cuCtxSetCurrent", [ctypes.c_void_p])]:
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = ctypes.c_int, args
        _libcuda = lib
    return _libcuda


def current_device():
    """The device of the calling thread's current CUDA context (what the CUDA
    runtime's cudaGetDevice says: 0 when none is current), or None without a
    usable GPU."""
    if not usable():
        return None
    d = ctypes.c_int(0)
    return d.value if _driver().cuCtxGetDevice(ctypes.byref(d)) == 0 else 0


def set_current_device(device, what="gpuc"):
    """Make device's primary context (the one CuPy, PyTorch and the CUDA runtime
    use) current on the calling thread, as cudaSetDevice does."""
    from . import Error
    if not usable():
        raise Error("%s: device %d: the CUDA backend needs a GPU (libcuda did not load or no device)" % (what, device))
    drv = _driver()
    dev, ctx = ctypes.c_int(0), ctypes.c_void_p()
    st = drv.cuDeviceGet(ctypes.byref(dev), device)
    if st == 0:
        st = drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    if st == 0:
        st = drv.cuCtxSetCurrent(ctx)
    if st != 0:
        raise Error("%s: cannot make device %d current (CUDA error %d)" % (what, device, st))


def device_arch(device=0):
    """sm_XY of a device (raises gpuc.Error without a GPU)."""
    rt = runtime()
    info = _DeviceInfo()
    st = rt.gpuc_device_info(device, ctypes.byref(info))
    if st != 0:
        raise _rt_error("the CUDA backend needs a GPU", st)
    return "sm_%d%d" % (info.cc_major, info.cc_minor)


# ---- building a library ----------------------------------------------------

LIB_NAME = "gpuc_py"
_CFLAGS = ["-std=c11", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-w"]


def _write_images(path, cuda_source, archs):
    """images.h as gpuc --emit=lib writes it (the compiler library's writer,
    compiler/images.c): a cubin per arch, then PTX of the newest."""
    from . import _gpuc
    rt = runtime()
    names = list(archs) + ["compute_" + max(archs, key=lambda a: int(a[3:]))[3:]]
    images = []
    opts = (ctypes.c_char_p * 1)(b"-lineinfo")
    libc = ctypes.CDLL(None)
    for arch in names:
        image, size, log = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_char_p()
        st = rt.gpuc_compile_cuda_to_image(cuda_source.encode(), arch.encode(), opts, 1, ctypes.byref(image),
                                           ctypes.byref(size), ctypes.byref(log))
        if st != 0:
            raise _rt_error("NVRTC could not compile the kernels for %s (a gpuc bug)" % arch, st)
        images.append((arch, ctypes.string_at(image, size.value)))
        libc.free(image)
        if log:
            libc.free(log)
    _gpuc.write_images(path, images)


def build(lib_source, header, cuda_source, manifest, arch):
    """The path of the library's shared object (built when not cached); its
    manifest is written beside it as .json."""
    global builds
    argv, ident = _cbackend._compiler()
    libdir = _paths.lib_dir()
    link = ["-L" + libdir, "-Wl,-rpath," + libdir, "-lgpuc_runtime", "-lm", "-ldl", "-lpthread"]
    flags = _CFLAGS + ["-I" + _paths.include_dir()]
    key = hashlib.sha256("\0".join([lib_source, cuda_source, arch, ident] + flags + link).encode()).hexdigest()[:32]
    directory = _cbackend.cache_dir()
    target = os.path.join(directory, "cuda-" + key + ".so")
    if os.path.exists(target) and os.path.exists(target[:-3] + ".json"):
        return target
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuc-build-", dir=directory) as tmp:
        for name, text in [(LIB_NAME + ".c", lib_source), (LIB_NAME + ".h", header)]:
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        _write_images(os.path.join(tmp, "images.h"), cuda_source, [arch])
        out = os.path.join(tmp, "lib.so")
        cmd = argv + flags + ["-I" + tmp, "-DGPUC_IMAGES=\"images.h\"", os.path.join(tmp, LIB_NAME + ".c"),
                              "-o", out] + link
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            from . import Error
            raise Error("gpuc: the C compiler failed on the generated library (a gpuc bug):\n%s\n%s"
                        % (" ".join(cmd), proc.stdout))
        with open(os.path.join(tmp, "m.json"), "w") as f:
            f.write(manifest)
        os.replace(os.path.join(tmp, "m.json"), target[:-3] + ".json")
        os.replace(out, target)
    builds += 1
    return target


# ---- a loaded library --------------------------------------------------------


class Library:
    """A --emit=lib shared object: its entry table, and a NAME_lib per device;
    with comm (a gpuc.Comm), one NAME_lib made by NAME_new_comm on the
    communicator's device, whose sharded entries run on this rank's shards."""

    closed = False      # the communicator was closed: no more calls (release)

    def __init__(self, so_path, name, comm=None):
        self.path = so_path
        self.name = name
        self.comm = comm
        self.fast = weakref.WeakSet()   # LibEntry functions installed with this library's lib (release)
        runtime()
        self.dll = ctypes.CDLL(so_path, mode=os.RTLD_LOCAL | os.RTLD_NOW)
        try:
            table_fn = getattr(self.dll, name + "_entry_table")
        except AttributeError:
            from . import Error
            raise Error("gpuc: %s has no generic entry table (%s_entry_table): it was built by an older gpuc; "
                        "rebuild it with gpuc --emit=lib" % (so_path, name))
        table_fn.restype = ctypes.POINTER(_EntryInfo)
        table_fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
        n = ctypes.c_int(0)
        table = table_fn(ctypes.byref(n))
        self.entries = []
        for i in range(n.value):
            e = table[i]
            params = [(e.param_names[j].decode(), e.param_types[j].decode()) for j in range(e.num_params)]
            self.entries.append((e.name.decode(), params, e.result_type.decode(), e.call))
        self.last_error = getattr(self.dll, name + "_last_error")
        self.last_error.restype = ctypes.c_char_p
        self.free_device = getattr(self.dll, name + "_free_device")
        self.free_device.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        self._new = getattr(self.dll, name + "_new")
        self._new.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        self._libs = {}      # device -> (GpucContext *, NAME_lib *)
        self._lock = threading.Lock()
        if comm is not None:
            from . import Error
            self._new_comm = getattr(self.dll, name + "_new_comm", None)
            if self._new_comm is None:
                raise Error("gpuc: %s has no %s_new_comm: it was built by a gpuc without sharded entries; rebuild "
                            "it with gpuc --emit=lib" % (so_path, name))
            self._new_comm.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
            self._free = getattr(self.dll, name + "_free")
            self._free.argtypes = [ctypes.c_void_p]
            comm._bind(self)

    def handle(self, device, what="gpuc"):
        """(context, NAME_lib *) on a device, made at first use (kernels loaded once)."""
        with self._lock:
            if self.closed:
                from . import Error
                raise Error("%s: the module's communicator was closed (gpuc.Comm.close)" % what)
            got = self._libs.get(device)
            if got is None and self.comm is not None:
                return self._handle_comm(device, what)
            if got is None:
                got = self._open(device, self._new)
            return got

    def _open(self, device, new_lib):
        """A context on device and new_lib(context, &NAME_lib) in it, kept per device."""
        rt = runtime()
        cfg = _Config()
        rt.gpuc_config_init(ctypes.byref(cfg))
        cfg.device = device
        ctx = ctypes.c_void_p()
        st = rt.gpuc_context_new(ctypes.byref(cfg), ctypes.byref(ctx))
        if st != 0:
            raise _rt_error("the CUDA backend needs a GPU", st)
        lib = ctypes.c_void_p()
        st = new_lib(ctx, ctypes.byref(lib))
        if st != 0:
            rt.gpuc_context_free(ctx)
            from . import Error
            raise Error("gpuc: %s" % (self.last_error() or b"").decode(errors="replace"))
        got = self._libs[device] = (ctx, lib)
        return got

    def _handle_comm(self, device, what):
        """handle() of a library bound to a communicator: on its device only."""
        from . import Error
        comm = self.comm
        if comm.device is None:
            comm.device = device
        if device != comm.device:
            raise ValueError("%s: the arrays are on device %d but the communicator is on device %d; a module "
                             "with comm= runs on the communicator's device" % (what, device, comm.device))
        return self._open(device, lambda ctx, out: self._new_comm(ctx, comm.nccl_comm, out))

    def release(self):
        """The communicator is being closed: no more calls (the C path of the
        entries installed with this library is dropped). The NAME_lib and its
        context are freed with the object, after the last result that the
        library allocated (a DeviceBuffer, which keeps it) is gone."""
        with self._lock:
            self.closed = True
            for fn in list(self.fast):
                fn.uninstall()
            self.fast.clear()

    def __del__(self):
        if getattr(self, "comm", None) is None or not getattr(self, "_libs", None) or sys.is_finalizing():
            return     # a plain library's contexts live as long as the process (as before)
        rt = runtime()
        for ctx, lib in self._libs.values():
            self._free(lib)
            rt.gpuc_context_free(ctx)
        self._libs = {}

    def message(self):
        text = (self.last_error() or b"").decode(errors="replace")
        # "gpuc_py_pick: index 9 ..." -> "index 9 ..."
        head, sep, rest = text.partition(": ")
        return rest if sep and head.startswith(self.name + "_") else text


# ---- device arrays -----------------------------------------------------------

_TORCH_DTYPES = None


def _torch_dtype_name(t):
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch
        _TORCH_DTYPES = {torch.bool: "bool", torch.int32: "int32", torch.int64: "int64", torch.uint32: "uint32",
                         torch.uint64: "uint64", torch.float32: "float32", torch.float64: "float64"} \
            if hasattr(torch, "uint32") else {torch.bool: "bool", torch.int32: "int32", torch.int64: "int64",
                                              torch.float32: "float32", torch.float64: "float64"}
    name = _TORCH_DTYPES.get(t.dtype)
    return np.dtype(name) if name else None


class DeviceArray:
    """One device array argument or result: address, dtype, shape, where it
    came from (framework 'cupy', 'torch', 'dlpack' or 'cai'), device (None
    for 'cai' until the call asks pointer_device), stream, and the object
    that keeps its memory alive."""

    def __init__(self, ptr, dtype, shape, framework, device, stream, owner, contiguous=True, dtype_text=None):
        self.ptr, self.dtype, self.shape = ptr, dtype, tuple(shape)
        self.ndim = len(self.shape)
        self.framework, self.device, self.stream, self.owner = framework, device, stream, owner
        self.contiguous = contiguous
        self.dtype_text = dtype_text or (str(dtype) if dtype is not None else "?")


def _c_contiguous(shape, strides, itemsize):
    if strides is None:
        return True
    want = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n > 1 and s != want:
            return False
        want *= n
    return True


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _from_dlpack(value):
    """A DeviceArray from __dlpack__ (a CUDA device's tensor), or None."""
    try:
        dev_type, dev_id = value.__dlpack_device__()
    except Exception:
        return None
    if dev_type != 2:      # kDLCUDA
        return None
    capsule = value.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    shape = [t.shape[i] for i in range(t.ndim)]
    codes = {(1, 1): "bool", (0, 32): "int32", (0, 64): "int64", (1, 32): "uint32", (1, 64): "uint64",
             (2, 32): "float32", (2, 64): "float64", (6, 8): "bool"}
    name = codes.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    dt = np.dtype(name) if name else None
    strides = [t.strides[i] * (t.dtype.bits // 8) for i in range(t.ndim)] if t.strides else None
    return DeviceArray((t.data or 0) + t.byte_offset, dt, shape, "dlpack", dev_id, 0, (value, capsule),
                       _c_contiguous(shape, strides, max(1, t.dtype.bits // 8)),
                       "code %d bits %d" % (t.dtype.code, t.dtype.bits) if dt is None else None)


def _torch_stream(torch, device):
    """The raw CUstream of torch's current stream on device: through
    torch._C._cuda_getCurrentRawStream where torch has it (what Triton calls:
    torch.cuda.current_stream builds a Stream object, several us a call)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


def cupy_ptds():
    """Whether CuPy's null stream is the per-thread default stream (its
    CUPY_CUDA_PER_THREAD_DEFAULT_STREAM, read at import as CuPy does): its
    stream pointer 0 then means CU_STREAM_PER_THREAD (2), not the legacy one."""
    return os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", "0") not in ("", "0")


def device_view(value):
    """A DeviceArray for a device array object (CuPy, PyTorch on CUDA, any
    __cuda_array_interface__ or CUDA __dlpack__), or None for anything else."""
    mod = type(value).__module__ or ""
    if mod.startswith("torch"):
        if not getattr(value, "is_cuda", False):
            return None
        import torch
        dev = value.get_device()
        return DeviceArray(value.data_ptr(), _torch_dtype_name(value), value.shape, "torch", dev,
                           _torch_stream(torch, dev), value, value.is_contiguous(), str(value.dtype))
    if mod.startswith("cupy"):
        import cupy
        stream = cupy.cuda.get_current_stream().ptr
        return DeviceArray(value.data.ptr, value.dtype, value.shape, "cupy", value.device.id,
                           2 if stream == 0 and cupy_ptds() else stream, value, value.flags.c_contiguous)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        dt = np.dtype(cai["typestr"])
        stream = cai.get("stream") or 0
        stream = 0 if stream == 1 else stream     # 1: the legacy default stream; 2: per-thread (a valid handle)
        # the device is looked up from the address when the call runs (pointer_device)
        return DeviceArray(cai["data"][0], dt, cai["shape"], "cai", None, stream, value,
                           _c_contiguous(cai["shape"], cai.get("strides"), dt.itemsize))
    if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
        return _from_dlpack(value)
    return None


def contiguous(view, value):
    """A contiguous copy of a non-contiguous device array through its framework, or None."""
    if view.framework == "torch":
        return value.contiguous()
    if view.framework == "cupy":
        import cupy
        return cupy.ascontiguousarray(value)
    return None


class DeviceBuffer:
    """Device memory a library call allocated (a result whose size was known
    only after the call), exposed through __cuda_array_interface__ and freed
    by the library when the last reference goes."""

    def __init__(self, library, lib, ptr, dtype, shape):
        self._library, self._lib, self.ptr = library, lib, ptr
        self.dtype, self.shape = dtype, tuple(shape)
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": dtype.str, "data": (ptr, False),
                                         "version": 3, "strides": None, "stream": None}

    def __del__(self):
        if self.ptr:
            self._library.free_device(self._lib, self.ptr)
            self.ptr = 0
