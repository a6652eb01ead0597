"""gpuc.Comm: an NCCL communicator for sharded entries (docs/sharding.md,
docs/python.md "Sharded entries"), made from what a multi-GPU Python job
already has: torch.distributed, an mpi4py communicator, or an ncclComm_t.

A Comm wraps the runtime's GpucComm (runtime/gpuc_comm.h, over libnccl loaded
with dlopen by gpuc_comm_nccl.c) through ctypes. from_torch and from_mpi4py
use NCCL's own bootstrap: rank 0 makes the 128-byte unique id
(gpuc_comm_nccl_unique_id), the job's channel carries it to every rank (one
all-gather, which also carries each rank's NCCL load status, so that a rank
without libnccl makes every rank raise instead of leaving the others waiting
in ncclCommInitRank), and each rank calls gpuc_comm_nccl_init_rank on its
CUDA device. Nothing here imports torch or mpi4py unless from_torch is called
(mpi4py is only used through the communicator object passed in).

A module bound to a Comm (gpuc.compile(..., comm=), Module.with_comm) makes
its library with NAME_new_comm on the Comm's ncclComm_t; close() frees those
libraries first, then the communicator."""

import ctypes
import os
import sys
import weakref

from . import _cuda

UNIQUE_ID_BYTES = 128   # ncclUniqueId


def _error(what, status):
    from . import Error
    rt = _cuda.runtime()
    return Error("%s: %s: %s" % (what, rt.gpuc_status_name(status).decode(),
                                 (rt.gpuc_last_error() or b"").decode(errors="replace")))


def _use_loaded_nccl():
    """Before the runtime's first look for libnccl: when this process already
    has one loaded (by PyTorch or CuPy) and GPUC_NCCL_LIBRARY is not set, name
    that file, so that a caller's ncclComm_t (from_nccl) is used by the
    library that made it, and the process holds one NCCL. Linux: from
    /proc/self/maps; elsewhere, or when none is loaded, the runtime's search."""
    if os.environ.get("GPUC_NCCL_LIBRARY"):
        return
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[5].strip() if len(line.split(None, 5)) == 6 else ""
                if os.path.basename(path).startswith("libnccl.so"):
                    os.environ["GPUC_NCCL_LIBRARY"] = path
                    return
    except OSError:
        pass


def _load_status():
    """(0, "") when libnccl loads in this process, else (status, the runtime's message)."""
    _use_loaded_nccl()
    rt = _cuda.runtime()
    st = rt.gpuc_comm_nccl_load()
    return (0, "") if st == 0 else (st, "%s: %s" % (rt.gpuc_status_name(st).decode(),
                                                  (rt.gpuc_last_error() or b"").decode(errors="replace")))


def check_comm(comm, what):
    """TypeError unless comm is an open gpuc.Comm."""
    if not isinstance(comm, Comm):
        raise TypeError("%s: comm must be a gpuc.Comm (gpuc.Comm.from_torch, from_mpi4py or from_nccl), not %s"
                        % (what, type(comm).__name__))
    comm._check_open(what)


def _check_device(device, what):
    if device is None:
        return None
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise TypeError("%s: device must be a CUDA device ordinal (an int >= 0) or None, not %r" % (what, device))
    return device


class Comm:
    """An NCCL communicator that gpuc's sharded entries combine through.

    Make one with Comm.from_torch(group=None), Comm.from_mpi4py(comm) or
    Comm.from_nccl(ptr); rank and size are NCCL's; device is the CUDA device
    the communicator is on (None when it was not known: then the first call's
    arrays decide). close() (or a with block) frees it and the libraries
    bound to it; otherwise it is freed with the object."""

    def __init__(self, ptr, device, what):
        """Use the from_* constructors. ptr: a GpucComm * the runtime made."""
        self._ptr = ptr
        self.device = device
        self._what = what
        rank_size = ctypes.cast(ptr, ctypes.POINTER(ctypes.c_int * 2)).contents   # GpucComm {rank, size, ...}
        self.rank, self.size = rank_size[0], rank_size[1]
        self._libraries = weakref.WeakSet()   # _cuda.Library objects bound to this communicator

    # ---- constructors ----

    @classmethod
    def from_nccl(cls, ptr, device=None):
        """Wrap a caller's ncclComm_t without owning it: ptr is its address as an
        int, or an object with .ptr or .comm holding it (and .device_id(), as
        cupy.cuda.nccl.NcclCommunicator has). The caller destroys it after close()."""
        what = "gpuc.Comm.from_nccl"
        device = _check_device(device, what)
        handle = next((a for a in ("ptr", "comm") if hasattr(ptr, a)), None) if not isinstance(ptr, int) else None
        if handle:   # CuPy's NcclCommunicator keeps its ncclComm_t as .comm
            if device is None and callable(getattr(ptr, "device_id", None)):
                device = ptr.device_id()
            ptr = getattr(ptr, handle)
        if isinstance(ptr, bool) or not isinstance(ptr, int):
            raise TypeError("%s: ptr must be the address of an ncclComm_t as an int (e.g. cupy.cuda.nccl."
                            "NcclCommunicator(...).comm), not %s" % (what, type(ptr).__name__))
        if ptr <= 0 or ptr >= 1 << 64:
            raise ValueError("%s: %d is not the address of an ncclComm_t" % (what, ptr))
        _use_loaded_nccl()
        out = ctypes.c_void_p()
        st = _cuda.runtime().gpuc_comm_from_nccl(ptr, ctypes.byref(out))
        if st != 0:
            raise _error(what, st)
        return cls(out.value, device if device is not None else _cuda.current_device(), what)

    @classmethod
    def unique_id(cls):
        """NCCL's bootstrap, step 1 (rank 0): a new ncclUniqueId as 128 bytes, to
        send to every rank by any channel and pass to Comm.from_unique_id."""
        _use_loaded_nccl()
        buf = ctypes.create_string_buffer(UNIQUE_ID_BYTES)
        st = _cuda.runtime().gpuc_comm_nccl_unique_id(buf)
        if st != 0:
            raise _error("gpuc.Comm.unique_id", st)
        return buf.raw

    @classmethod
    def from_unique_id(cls, uid, rank, size, device=None):
        """NCCL's bootstrap, step 2 (every rank): rank of size ranks from rank 0's
        unique id, on device (made current first), else on the current CUDA
        device. Collective: every rank must call it."""
        what = "gpuc.Comm.from_unique_id"
        if not isinstance(uid, (bytes, bytearray)) or len(uid) != UNIQUE_ID_BYTES:
            raise TypeError("%s: the unique id must be the %d bytes of Comm.unique_id(), not %s"
                            % (what, UNIQUE_ID_BYTES, type(uid).__name__ if not isinstance(uid, (bytes, bytearray))
                               else "%d bytes" % len(uid)))
        return cls._init_rank(bytes(uid), rank, size, _check_device(device, what), what)

    @classmethod
    def _init_rank(cls, uid, rank, size, device, what, make_current=True):
        for name, v in (("rank", rank), ("size", size)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("%s: %s must be an int, not %s" % (what, name, type(v).__name__))
        if device is not None and make_current:
            _cuda.set_current_device(device, what)
        elif device is None:
            device = _cuda.current_device()
        _use_loaded_nccl()
        out = ctypes.c_void_p()
        st = _cuda.runtime().gpuc_comm_nccl_init_rank(uid, rank, size, ctypes.byref(out))
        if st != 0:
            raise _error(what, st)
        return cls(out.value, device, what)

    @classmethod
    def _bootstrap(cls, what, rank, size, all_gather, device, make_current=True):
        """from_torch and from_mpi4py: every rank loads NCCL, rank 0 makes the
        id; one all_gather(obj) -> [obj of rank 0, 1, ...] carries both; any
        rank's failure raises on every rank, naming the rank."""
        status, message = _load_status()
        uid = None
        if status == 0 and rank == 0:
            try:
                uid = cls.unique_id()
            except Exception as e:   # sent to the others: they must not wait for an id that never comes
                status, message = -1, str(e)
        gathered = all_gather((status, message, uid))
        from . import Error
        if not isinstance(gathered, (list, tuple)) or len(gathered) != size:
            got = "%d values" % len(gathered) if isinstance(gathered, (list, tuple)) else type(gathered).__name__
            raise Error("%s: the all-gather over the %d ranks returned %s, not one value per rank" % (what, size, got))
        for r, (st, msg, _) in enumerate(gathered):
            if st != 0:
                raise Error("%s: rank %d: %s" % (what, r, msg))
        return cls._init_rank(gathered[0][2], rank, size, device, what, make_current)

    @classmethod
    def from_torch(cls, group=None, device=None):
        """A communicator over the ranks of torch.distributed's group (None: the
        default group), on device (default: torch.cuda.current_device(); made
        torch's current device). torch.distributed must be initialised; every
        rank of the group must call it."""
        what = "gpuc.Comm.from_torch"
        device = _check_device(device, what)
        try:
            import torch
            import torch.distributed as dist
        except ImportError as e:
            raise ImportError("%s needs PyTorch (import torch.distributed failed: %s)" % (what, e))
        if not dist.is_available() or not dist.is_initialized():
            from . import Error
            raise Error("%s: torch.distributed is not initialised: call torch.distributed.init_process_group "
                        "first (backend 'nccl' or 'gloo') on every rank" % what)
        rank, size = dist.get_rank(group), dist.get_world_size(group)
        if rank < 0:
            from . import Error
            raise Error("%s: this process is not a member of the group" % what)
        if device is None:
            device = torch.cuda.current_device()
        torch.cuda.set_device(device)

        def all_gather(obj):
            out = [None] * size
            dist.all_gather_object(out, obj, group=group)
            return out

        return cls._bootstrap(what, rank, size, all_gather, device, make_current=False)   # torch made it current

    @classmethod
    def from_mpi4py(cls, comm, device=None):
        """A communicator over the ranks of an mpi4py communicator (every rank
        calls it), on device (made current first), else on the current CUDA
        device (set it per rank first: e.g. cupy.cuda.Device(local_rank).use())."""
        what = "gpuc.Comm.from_mpi4py"
        device = _check_device(device, what)
        if not all(callable(getattr(comm, m, None)) for m in ("Get_rank", "Get_size", "allgather")):
            raise TypeError("%s: comm must be an mpi4py communicator (mpi4py.MPI.Comm, e.g. MPI.COMM_WORLD), "
                            "not %s" % (what, type(comm).__name__))
        return cls._bootstrap(what, comm.Get_rank(), comm.Get_size(), comm.allgather, device)

    # ---- use ----

    @property
    def closed(self):
        return self._ptr is None

    @property
    def nccl_comm(self):
        """The ncclComm_t's address (an int)."""
        self._check_open("nccl_comm")
        return _cuda.runtime().gpuc_comm_nccl_handle(self._ptr) or 0

    def _check_open(self, what):
        if self._ptr is None:
            from . import Error
            raise Error("gpuc: %s: the communicator was closed" % what)

    def _bind(self, library):
        self._check_open("binding a module")
        self._libraries.add(library)

    def close(self):
        """Free the libraries bound to this communicator, then the communicator
        (its ncclComm_t too when gpuc made it; from_nccl's stays the caller's).
        Closing twice is allowed."""
        if self._ptr is None:
            return
        for library in list(self._libraries):
            library.release()
        ptr, self._ptr = self._ptr, None
        _cuda.runtime().gpuc_comm_nccl_free(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_ptr", None) is not None and not sys.is_finalizing():
            self.close()

    def __repr__(self):
        state = "closed" if self._ptr is None else "device %s" % self.device
        return "<gpuc.Comm rank %d of %d, %s>" % (self.rank, self.size, state)
