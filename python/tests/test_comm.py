"""gpuc.Comm and modules bound to it (docs/python.md "Sharded entries"),
without a GPU: argument errors, the constructors' errors without
torch.distributed / mpi4py, a missing libnccl (GPUC_NCCL_LIBRARY=/nonexistent:
the runtime's GPUC_ERROR_NO_NCCL message), and NCCL's bootstrap driven through
the stand-in libnccl of tests/shard (tests/shard/Inputs/fake_nccl.c: rank and
size read from the communicator's {rank, size}, ncclCommDestroy prints).
Libnccl is loaded once per process, so each NCCL case runs in a subprocess;
GPUC_CUDA_LIBRARY=/nonexistent keeps the stand-in away from a real GPU.
comm_gpu.sh runs sharded entries on a GPU."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import gpuc

REPO = pathlib.Path(__file__).resolve().parents[2]
SRC = "entry twice(x: f32[n]) -> f32[n] = x * 2.0;\n"


def _run(code, **env):
    full = dict(os.environ, GPUC_CUDA_LIBRARY="/nonexistent", **env)
    prelude = textwrap.dedent("""
        import ctypes, pathlib, sys, types
        import gpuc

        class Mpi:      # what from_mpi4py uses of an mpi4py communicator
            def __init__(self, rank=0, size=1, others=None):
                self.rank, self.size, self.others = rank, size, others or {}
            def Get_rank(self): return self.rank
            def Get_size(self): return self.size
            def allgather(self, obj):
                return [obj if r == self.rank else self.others[r] for r in range(self.size)]

        def fake_torch(initialised=True, size=1):
            torch = types.ModuleType("torch")
            dist = types.ModuleType("torch.distributed")
            dist.is_available = lambda: True
            dist.is_initialized = lambda: initialised
            dist.get_rank = lambda group=None: 0
            dist.get_world_size = lambda group=None: size
            def all_gather_object(out, obj, group=None):
                out[:] = [obj] * len(out)
            dist.all_gather_object = all_gather_object
            torch.distributed = dist
            torch.cuda = types.SimpleNamespace(current_device=lambda: 0, set_device=lambda d: None)
            sys.modules["torch"], sys.modules["torch.distributed"] = torch, dist

        def err(f):
            try:
                f()
            except Exception as e:
                print(type(e).__name__ + ":", e)
            else:
                print("no error")
        """)
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300, env=full)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.fixture(scope="module")
def fake_nccl(tmp_path_factory):
    out = tmp_path_factory.mktemp("nccl") / "libfake_nccl.so"
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-shared", "-fPIC", str(REPO / "tests/shard/Inputs/fake_nccl.c"), "-o", str(out)],
                   check=True)
    return str(out)


# ---- argument errors (no NCCL needed: checked before the runtime is asked) ----

@pytest.mark.parametrize("call, kind, text", [
    (lambda: gpuc.Comm.from_nccl("0x10"), TypeError,
     "gpuc.Comm.from_nccl: ptr must be the address of an ncclComm_t as an int (e.g. cupy.cuda.nccl."
     "NcclCommunicator(...).comm), not str"),
    (lambda: gpuc.Comm.from_nccl(True), TypeError, "ptr must be the address of an ncclComm_t as an int"),
    (lambda: gpuc.Comm.from_nccl(0), ValueError, "gpuc.Comm.from_nccl: 0 is not the address of an ncclComm_t"),
    (lambda: gpuc.Comm.from_nccl(16, device="cuda:0"), TypeError,
     "gpuc.Comm.from_nccl: device must be a CUDA device ordinal (an int >= 0) or None, not 'cuda:0'"),
    (lambda: gpuc.Comm.from_mpi4py(None), TypeError,
     "gpuc.Comm.from_mpi4py: comm must be an mpi4py communicator (mpi4py.MPI.Comm, e.g. MPI.COMM_WORLD), "
     "not NoneType"),
    (lambda: gpuc.Comm.from_unique_id(b"short", 0, 1), TypeError,
     "gpuc.Comm.from_unique_id: the unique id must be the 128 bytes of Comm.unique_id(), not 5 bytes"),
    (lambda: gpuc.Comm.from_unique_id(bytes(128), 0.0, 1), TypeError,
     "gpuc.Comm.from_unique_id: rank must be an int, not float"),
    (lambda: gpuc.compile(SRC, backend="c", comm="world"), TypeError,
     "gpuc.compile: comm must be a gpuc.Comm (gpuc.Comm.from_torch, from_mpi4py or from_nccl), not str"),
    (lambda: gpuc.compile(SRC, backend="c").with_comm(7), TypeError,
     "with_comm: comm must be a gpuc.Comm (gpuc.Comm.from_torch, from_mpi4py or from_nccl), not int"),
])
def test_argument_errors(call, kind, text):
    with pytest.raises(kind) as e:
        call()
    assert text in str(e.value)


def test_entries_of_plain_modules_are_not_sharded():
    m = gpuc.compile(SRC, backend="c")
    assert m.twice.sharded is False
    assert m.twice.not_sharded == \
        "the module has no communicator (gpuc.compile(..., comm=) or module.with_comm(comm))"


def test_from_torch_without_torch_distributed():
    out = _run("""
        sys.modules["torch"] = None      # not installed
        err(gpuc.Comm.from_torch)
        del sys.modules["torch"]
        fake_torch(initialised=False)
        err(gpuc.Comm.from_torch)
        """)
    assert out[0].startswith("ImportError: gpuc.Comm.from_torch needs PyTorch (import torch.distributed failed: ")
    assert out[1] == ("Error: gpuc.Comm.from_torch: torch.distributed is not initialised: call "
                      "torch.distributed.init_process_group first (backend 'nccl' or 'gloo') on every rank")


def test_no_torch_or_mpi4py_imported():
    out = _run("""
        m = gpuc.compile("entry f(x: f32[n]) -> f32[n] = x;", backend="c")
        c = gpuc.Comm
        print("torch" in sys.modules, "mpi4py" in sys.modules)
        """)
    assert out == ["False False"]


# ---- no libnccl: the runtime's GPUC_ERROR_NO_NCCL ----

def test_no_nccl():
    out = _run("""
        err(lambda: gpuc.Comm.from_nccl(4096))
        err(gpuc.Comm.unique_id)
        err(lambda: gpuc.Comm.from_mpi4py(Mpi()))
        fake_torch()
        err(gpuc.Comm.from_torch)
        """, GPUC_NCCL_LIBRARY="/nonexistent")
    why = "GPUC_ERROR_NO_NCCL: NCCL not found: cannot load $GPUC_NCCL_LIBRARY=/nonexistent ("
    assert out[0].startswith("Error: gpuc.Comm.from_nccl: " + why)
    assert out[1].startswith("Error: gpuc.Comm.unique_id: " + why)
    assert out[2].startswith("Error: gpuc.Comm.from_mpi4py: rank 0: " + why)
    assert out[3].startswith("Error: gpuc.Comm.from_torch: rank 0: " + why)
    assert len(out) == 4


# ---- NCCL's bootstrap through the stand-in libnccl ----

def test_bootstrap_with_stand_in_nccl(fake_nccl):
    out = _run("""
        print(gpuc.Comm.unique_id() == bytes(128))
        c = gpuc.Comm.from_mpi4py(Mpi())
        print(c.rank, c.size, c.closed, c.nccl_comm != 0)
        c.close()
        c.close()                       # once only: the destroy prints once
        print(c.closed)
        err(lambda: c.nccl_comm)
        fake_torch()
        with gpuc.Comm.from_torch() as t:
            print(t.rank, t.size, t.device)
        print("torch closed", t.closed)
        err(lambda: gpuc.Comm.from_unique_id(bytes(128), 3, 2))
        """, GPUC_NCCL_LIBRARY=fake_nccl)
    assert out == ["True",
                   "0 1 False True",
                   "fake ncclCommDestroy",
                   "True",
                   "Error: gpuc: nccl_comm: the communicator was closed",
                   "0 1 0",
                   "fake ncclCommDestroy",
                   "torch closed True",
                   "Error: gpuc.Comm.from_unique_id: GPUC_ERROR_INVALID_VALUE: gpuc_comm_nccl_init_rank: "
                   "rank 3 of 2 ranks is out of range"]


def test_a_rank_without_nccl_fails_every_rank(fake_nccl):
    # this process is rank 0 of 2 (NCCL loads); rank 1 reports that it could not load NCCL
    out = _run("""
        err(lambda: gpuc.Comm.from_mpi4py(Mpi(0, 2, {1: (5, "GPUC_ERROR_NO_NCCL: NCCL not found", None)})))
        class Short(Mpi):
            def allgather(self, obj): return [obj]
        err(lambda: gpuc.Comm.from_mpi4py(Short(0, 2)))
        """, GPUC_NCCL_LIBRARY=fake_nccl)
    assert out == ["Error: gpuc.Comm.from_mpi4py: rank 1: GPUC_ERROR_NO_NCCL: NCCL not found",
                   "Error: gpuc.Comm.from_mpi4py: the all-gather over the 2 ranks returned 1 values, "
                   "not one value per rank"]


def test_from_nccl_wraps_without_owning(fake_nccl):
    # the stand-in's ncclComm_t is {rank, size}: rank 2 of 5
    out = _run("""
        comm = (ctypes.c_int * 2)(2, 5)
        c = gpuc.Comm.from_nccl(ctypes.addressof(comm), device=0)
        print(c, c.nccl_comm == ctypes.addressof(comm))
        class Cupyish:       # cupy.cuda.nccl.NcclCommunicator's .ptr and .device_id()
            ptr = ctypes.addressof(comm)
            def device_id(self): return 3
        d = gpuc.Comm.from_nccl(Cupyish())
        print(d.rank, d.size, d.device)
        c.close(); d.close()
        print("closed")
        """, GPUC_NCCL_LIBRARY=fake_nccl)
    assert out == ["<gpuc.Comm rank 2 of 5, device 0> True", "2 5 3", "closed"]    # no destroy


def test_modules_with_comm(fake_nccl):
    lib_comm = REPO / "tests/shard/Inputs/lib_comm.gdsl"
    out = _run("""
        import numpy
        c = gpuc.Comm.from_mpi4py(Mpi())
        err(lambda: gpuc.compile(%r, backend="c", comm=c))
        m = gpuc.compile(pathlib.Path(%r), backend="cuda", arch="sm_90", comm=c)
        for name in m.entries:
            f = getattr(m, name)
            print(name, f.sharded, repr(f.not_sharded))
        plain = gpuc.compile(pathlib.Path(%r), backend="cuda", arch="sm_90")
        print("plain", plain.saxpy.sharded, plain.with_comm(c).saxpy.sharded)
        # no GPU here (GPUC_CUDA_LIBRARY=/nonexistent): the library cannot be made
        err(lambda: m.total(numpy.ones(4)))
        c.close()
        err(lambda: m.total(numpy.ones(4)))
        err(lambda: plain.with_comm(c))
        err(lambda: gpuc.compile(%r, backend="cuda", arch="sm_90", comm=c))
        """ % (SRC, str(lib_comm), str(lib_comm), SRC), GPUC_NCCL_LIBRARY=fake_nccl)
    out = [line for line in out if line != "fake ncclCommDestroy"]
    assert out[0] == ("ValueError: gpuc.compile: comm= needs backend='cuda' (or 'auto'): ranks are processes with "
                      "a GPU each, combined through NCCL, and the C backend has no NCCL")
    assert out[1:9] == [
        "saxpy True ''", "total True ''", "prefix True ''", "positive True ''", "scaled_rows True ''",
        "affine_prefix True ''",
        "table_prefix False 'not on the GPU yet: a sharded scan with a post that reads an array'",
        "neighbours False 'it reads or writes across shards; gpuc --emit=c-shard names the construct'"]
    assert out[9] == "plain False True"
    assert out[10].startswith("Error: gpuc: the CUDA backend needs a GPU: GPUC_ERROR_NO_DRIVER: ")
    assert out[11:] == ["Error: total: the module's communicator was closed (gpuc.Comm.close)",
                        "Error: gpuc: with_comm: the communicator was closed",
                        "Error: gpuc: gpuc.compile: the communicator was closed"]


def test_the_libnccl_already_loaded_is_used(fake_nccl, tmp_path):
    # a process where PyTorch or CuPy loaded libnccl: gpuc uses that file (the
    # caller's ncclComm_t belongs to it), not its own search (which finds none here)
    lib = tmp_path / "libnccl.so.2"
    lib.write_bytes(pathlib.Path(fake_nccl).read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "GPUC_NCCL_LIBRARY"}
    code = """
        import ctypes, os, gpuc
        ctypes.CDLL(%r)
        comm = (ctypes.c_int * 2)(2, 5)
        c = gpuc.Comm.from_nccl(ctypes.addressof(comm))
        print(c.rank, c.size, os.environ["GPUC_NCCL_LIBRARY"] == %r)
        """ % (str(lib), str(lib))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300,
                          env=dict(env, GPUC_CUDA_LIBRARY="/nonexistent"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "5", "True"]


def test_load_with_comm(fake_nccl, tmp_path):
    from gpuc import _paths
    r = subprocess.run([_paths.bin_path(), "--emit=lib", "--arch=sm_90", str(REPO / "tests/shard/Inputs/lib_comm.gdsl"),
                        "-o", str(tmp_path / "liblc")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout
    out = _run("""
        with gpuc.Comm.from_mpi4py(Mpi()) as c:
            m = gpuc.load(%r, comm=c)
            print(m.saxpy.sharded, m.neighbours.sharded, gpuc.load(%r).saxpy.sharded)
        err(lambda: gpuc.load(%r, comm=c))
        """ % ((str(tmp_path / "lc.json"),) * 3), GPUC_NCCL_LIBRARY=fake_nccl)
    assert out == ["True False False", "fake ncclCommDestroy", "Error: gpuc: gpuc.load: the communicator was closed"]
