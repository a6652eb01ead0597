"""shard_lib_gpu.py: a --emit=lib library's sharded entries on one GPU
(docs/library.md, docs/sharding.md), run by tests/gpu/shard_lib_gpu.sh.

    python3 shard_lib_gpu.py RUNTIME_SO LIB_DIR NAME...

For each library DIR/libNAME.so: one handle from NAME_new (plain) and one from
NAME_new_comm over a 1-rank communicator made by NCCL's own bootstrap
(gpuc_comm_nccl_unique_id, gpuc_comm_nccl_init_rank: ncclCommInitRank) in
the same context; every entry the shard table marks sharded is called
through the entry table on both, on random inputs of several sizes, and the
results compared (integers exactly, floats within 1e-5 relative). Prints one
line per library and `shard_lib_gpu: PASS` or `FAIL`."""

import ctypes
import json
import os
import sys

import numpy as np

KINDS = ["bool", "i32", "i64", "u32", "u64", "f32", "f64"]   # ORDER KIND
DTYPES = {"bool": np.bool_, "i32": np.int32, "i64": np.int64, "u32": np.uint32, "u64": np.uint64,
          "f32": np.float32, "f64": np.float64}


class Scalar(ctypes.Union):
    _fields_ = [("b", ctypes.c_bool), ("i32", ctypes.c_int32), ("i64", ctypes.c_int64), ("u32", ctypes.c_uint32),
                ("u64", ctypes.c_uint64), ("f32", ctypes.c_float), ("f64", ctypes.c_double)]


class Value(ctypes.Structure):      # GpucLibValue
    _fields_ = [("kind", ctypes.c_int), ("rank", ctypes.c_int), ("shape", ctypes.c_int64 * 2),
                ("data", ctypes.c_uint64), ("scalar", Scalar)]


CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(Value), ctypes.POINTER(Value))


class EntryInfo(ctypes.Structure):  # GpucLibEntryInfo
    _fields_ = [("name", ctypes.c_char_p), ("num_params", ctypes.c_int), ("param_names", ctypes.c_void_p),
                ("param_types", ctypes.c_void_p), ("result_type", ctypes.c_char_p), ("num_args", ctypes.c_int),
                ("num_results", ctypes.c_int), ("call", CALL)]


class ShardInfo(ctypes.Structure):  # GpucLibShardInfo
    _fields_ = [("name", ctypes.c_char_p), ("sharded", ctypes.c_int), ("why_not", ctypes.c_char_p),
                ("arg_split", ctypes.POINTER(ctypes.c_int)), ("result_split", ctypes.POINTER(ctypes.c_int))]


P = ctypes.c_void_p


def check(rt, lib_dir, name, comm_handle, rng):
    so = ctypes.CDLL(os.path.join(lib_dir, "lib%s.so" % name))
    manifest = json.load(open(os.path.join(lib_dir, name + ".json")))
    err = getattr(so, name + "_last_error")
    err.restype = ctypes.c_char_p
    new, new_comm, context = getattr(so, name + "_new"), getattr(so, name + "_new_comm"), getattr(so, name + "_context")
    new.argtypes, new_comm.argtypes = [P, ctypes.POINTER(P)], [P, P, ctypes.POINTER(P)]
    context.restype, context.argtypes = P, [P]
    plain, sharded = P(), P()
    if new(None, ctypes.byref(plain)) != 0:
        return "FAIL", "%s_new: %s" % (name, err().decode())
    if new_comm(context(plain), comm_handle, ctypes.byref(sharded)) != 0:
        return "FAIL", "%s_new_comm: %s" % (name, err().decode())
    table_fn, shard_fn = getattr(so, name + "_entry_table"), getattr(so, name + "_shard_table")
    table_fn.restype, shard_fn.restype = ctypes.POINTER(EntryInfo), ctypes.POINTER(ShardInfo)
    n = ctypes.c_int()
    table, shards = table_fn(ctypes.byref(n)), shard_fn(None)
    free_device = getattr(so, name + "_free_device")
    free_device.argtypes = [P, ctypes.c_uint64]
    ctx = context(plain)
    cases, skipped, bad = 0, [], []
    for i, e in enumerate(manifest["entries"]):
        if not shards[i].sharded:
            skipped.append(e["name"])
            continue
        comps = [c for p in e["params"] for c in p["components"]]
        for size in (0, 1, 2, 1000, 100003):
            dims = {}
            args = (Value * max(1, len(comps)))()
            hold = []
            for a, c in zip(args, comps):
                a.kind, a.rank = KINDS.index(c["kind"]), c["rank"]
                shape = []
                for d in c["shape"]:
                    if d.isdigit():
                        shape.append(int(d))
                    else:
                        shape.append(dims.setdefault(d, size if not dims else 7))
                if c["rank"] == 0:
                    setattr(a.scalar, "b" if c["kind"] == "bool" else c["kind"], 3 if c["kind"] != "bool" else True)
                    continue
                dt = DTYPES[c["kind"]]
                if c["kind"] in ("f32", "f64"):
                    host = rng.standard_normal(shape).astype(dt)
                elif c["kind"] == "bool":
                    host = rng.random(shape) < 0.5
                else:
                    host = rng.integers(-50 if c["kind"][0] == "i" else 0, 50, shape).astype(dt)
                host = np.ascontiguousarray(host)
                ptr = ctypes.c_uint64()
                rt.gpuc_mem_alloc(ctx, max(1, host.nbytes), ctypes.byref(ptr))
                if host.nbytes:
                    rt.gpuc_memcpy_htod(ctx, ptr, host.ctypes.data, host.nbytes)
                hold.append(ptr.value)
                a.data = ptr.value
                a.shape[0] = shape[0]
                a.shape[1] = shape[1] if len(shape) > 1 else 0
            got = []
            for lib in (plain, sharded):
                outs = e["result"]["components"]
                res = (Value * max(1, len(outs)))()
                for r, c in zip(res, outs):
                    r.kind, r.rank = KINDS.index(c["kind"]), c["rank"]
                st = table[i].call(lib, None, args, res)
                if st != 0:
                    bad.append("%s n=%d: %s" % (e["name"], size, err().decode()))
                    got = None
                    break
                vals = []
                for r, c in zip(res, outs):
                    if c["rank"] == 0:
                        vals.append(np.array(getattr(r.scalar, "b" if c["kind"] == "bool" else c["kind"])))
                        continue
                    shape = (r.shape[0],) if c["rank"] == 1 else (r.shape[0], r.shape[1])
                    host = np.empty(shape, DTYPES[c["kind"]])
                    if host.nbytes:
                        rt.gpuc_memcpy_dtoh(ctx, host.ctypes.data, r.data, host.nbytes)
                    free_device(lib, r.data)
                    vals.append(host)
                got.append(vals)
            for p in hold:
                rt.gpuc_mem_free(ctx, ctypes.c_uint64(p))
            if got is None:
                continue
            cases += 1
            for k, (x, y) in enumerate(zip(*got)):
                same = x.shape == y.shape and (np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)
                                               if x.dtype.kind == "f" else np.array_equal(x, y))
                if not same:
                    bad.append("%s n=%d: result %d differs (plain %s, sharded %s)" % (e["name"], size, k, x.ravel()[:4], y.ravel()[:4]))
    free = getattr(so, name + "_free")
    free.argtypes = [P]
    free(sharded)
    free(plain)
    note = "%d cases equal" % cases + (", plain only: " + " ".join(skipped) if skipped else "")
    return ("FAIL" if bad else "PASS"), note + "".join("\n    " + b for b in bad[:5])


def inputs(e, size, rng):
    """Host arrays (or scalars) of entry e's components for a first size `size`."""
    dims, vals = {}, []
    for p in e["params"]:
        for c in p["components"]:
            shape = [int(d) if d.isdigit() else dims.setdefault(d, size if not dims else 7) for d in c["shape"]]
            if c["rank"] == 0:
                vals.append(True if c["kind"] == "bool" else 3)
            elif c["kind"] in ("f32", "f64"):
                vals.append(rng.standard_normal(shape).astype(DTYPES[c["kind"]]))
            elif c["kind"] == "bool":
                vals.append(rng.random(shape) < 0.5)
            else:
                vals.append(rng.integers(-50 if c["kind"][0] == "i" else 0, 50, shape).astype(DTYPES[c["kind"]]))
    return vals


class Handle:
    """One library handle on its own context: a rank (rank of size) of a
    communicator, or the plain library (comm None)."""

    def __init__(self, rt, so, name, device, comm, rank, size):
        self.rt, self.so, self.rank, self.size = rt, so, rank, size
        config = ctypes.create_string_buffer(512)   # GpucConfig: its first member is the device
        rt.gpuc_config_init(config)
        ctypes.c_int.from_buffer(config).value = device
        self.ctx, self.lib = P(), P()
        if rt.gpuc_context_new(config, ctypes.byref(self.ctx)) != 0:
            raise RuntimeError("gpuc_context_new(device %d): %s" % (device, rt.gpuc_last_error().decode()))
        new = getattr(so, name + ("_new_comm" if comm else "_new"))
        new.argtypes = [P, P, ctypes.POINTER(P)] if comm else [P, ctypes.POINTER(P)]
        st = new(self.ctx, comm, ctypes.byref(self.lib)) if comm else new(self.ctx, ctypes.byref(self.lib))
        if st != 0:
            raise RuntimeError("%s_new%s: %s" % (name, "_comm" if comm else "", self.err()))
        self.free_device = getattr(so, name + "_free_device")
        self.free_device.argtypes = [P, ctypes.c_uint64]
        self.name = name

    def err(self):
        f = getattr(self.so, self.name + "_last_error")
        f.restype = ctypes.c_char_p
        return f().decode()

    def call(self, entry, e, vals, split_args):
        """Entry `entry` on this handle with this rank's rows of the split
        values: (results as host arrays, None) or (None, error)."""
        comps = [c for p in e["params"] for c in p["components"]]
        args = (Value * max(1, len(comps)))()
        hold = []
        for k, (a, c, v) in enumerate(zip(args, comps, vals)):
            a.kind, a.rank = KINDS.index(c["kind"]), c["rank"]
            if c["rank"] == 0:
                setattr(a.scalar, "b" if c["kind"] == "bool" else c["kind"], v)
                continue
            if split_args[k]:
                rows = v.shape[0]
                v = v[rows * self.rank // self.size: rows * (self.rank + 1) // self.size]
            host = np.ascontiguousarray(v)
            ptr = ctypes.c_uint64()
            self.rt.gpuc_mem_alloc(self.ctx, max(1, host.nbytes), ctypes.byref(ptr))
            if host.nbytes:
                self.rt.gpuc_memcpy_htod(self.ctx, ptr, host.ctypes.data, host.nbytes)
            hold.append(ptr.value)
            a.data, a.shape[0] = ptr.value, host.shape[0]
            a.shape[1] = host.shape[1] if host.ndim > 1 else 0
        outs = e["result"]["components"]
        res = (Value * max(1, len(outs)))()
        for r, c in zip(res, outs):
            r.kind, r.rank = KINDS.index(c["kind"]), c["rank"]
        st = entry.call(self.lib, None, args, res)
        got, why = None, None
        if st != 0:
            why = self.err()
        else:
            got = []
            for r, c in zip(res, outs):
                if c["rank"] == 0:
                    got.append(np.array(getattr(r.scalar, "b" if c["kind"] == "bool" else c["kind"])))
                    continue
                host = np.empty((r.shape[0],) if c["rank"] == 1 else (r.shape[0], r.shape[1]), DTYPES[c["kind"]])
                if host.nbytes:
                    self.rt.gpuc_memcpy_dtoh(self.ctx, host.ctypes.data, r.data, host.nbytes)
                self.free_device(self.lib, r.data)
                got.append(host)
        for p in hold:
            self.rt.gpuc_mem_free(self.ctx, ctypes.c_uint64(p))
        return got, why

    def close(self):
        free = getattr(self.so, self.name + "_free")
        free.argtypes = [P]
        free(self.lib)
        self.rt.gpuc_context_free(self.ctx)


def same(x, y):
    return x.shape == y.shape and (np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)
                                   if x.dtype.kind == "f" else np.array_equal(x, y))


def threads_check(rt, lib_dir, name, ranks, rng):
    """Several handles in one process, each called from its own thread at the
    same time: `ranks` is a list of (device, ncclComm_t, rank, size). One
    communicator of several ranks: the shards are split and the results
    gathered in rank order; independent 1-rank communicators: each handle
    computes the whole entry. Every result equal to the plain entry's."""
    import threading
    so = ctypes.CDLL(os.path.join(lib_dir, "lib%s.so" % name))
    manifest = json.load(open(os.path.join(lib_dir, name + ".json")))
    plain = Handle(rt, so, name, ranks[0][0], None, 0, 1)
    handles = [Handle(rt, so, name, d, c, r, n) for d, c, r, n in ranks]
    table_fn, shard_fn = getattr(so, name + "_entry_table"), getattr(so, name + "_shard_table")
    table_fn.restype, shard_fn.restype = ctypes.POINTER(EntryInfo), ctypes.POINTER(ShardInfo)
    n = ctypes.c_int()
    table, shards = table_fn(ctypes.byref(n)), shard_fn(None)
    cases, bad = 0, []
    for i, e in enumerate(manifest["entries"]):
        if not shards[i].sharded:
            continue
        ncomp = sum(len(p["components"]) for p in e["params"])
        nres = len(e["result"]["components"])
        split_args = [shards[i].arg_split[k] for k in range(ncomp)]
        split_res = [shards[i].result_split[k] for k in range(nres)]
        for size in (0, 1, 2, 1000, 100003):
            vals = inputs(e, size, rng)
            want, why = plain.call(table[i], e, vals, [0] * ncomp)
            if why:
                bad.append("%s n=%d: plain: %s" % (e["name"], size, why))
                continue
            out = [None] * len(handles)
            def run(h, k):
                out[k] = h.call(table[i], e, vals, split_args)
            threads = [threading.Thread(target=run, args=(h, k)) for k, h in enumerate(handles)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            if any(t.is_alive() for t in threads):
                bad.append("%s n=%d: a rank did not return within 120 s (a deadlock?)" % (e["name"], size))
                return "FAIL", "; ".join(bad)
            errs = [o[1] for o in out if o[1]]
            if errs:
                bad.append("%s n=%d: %s" % (e["name"], size, errs[0]))
                continue
            cases += 1
            groups = {}
            for (d, c, r, n_), o in zip(ranks, out):
                groups.setdefault(n_, []).append(o[0])
            for n_, results in groups.items():
                for rank_results in ([results] if n_ > 1 else [[x] for x in results]):
                    for k in range(nres):
                        if split_res[k]:
                            got = np.concatenate([x[k] for x in rank_results])
                        else:
                            got = rank_results[0][k]
                            if not all(same(got, x[k]) for x in rank_results):
                                bad.append("%s n=%d: result %d differs between ranks" % (e["name"], size, k))
                        if not same(want[k], got):
                            bad.append("%s n=%d: result %d differs (plain %s, sharded %s)" % (
                                e["name"], size, k, want[k].ravel()[:4], got.ravel()[:4]))
    for h in handles + [plain]:
        h.close()
    return ("FAIL" if bad else "PASS"), "%d cases equal" % cases + "".join("\n    " + b for b in bad[:5])


def main():
    rt = ctypes.CDLL(sys.argv[1])
    rt.gpuc_mem_alloc.argtypes = [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]
    rt.gpuc_mem_free.argtypes = [P, ctypes.c_uint64]
    rt.gpuc_memcpy_htod.argtypes = [P, ctypes.c_uint64, P, ctypes.c_size_t]
    rt.gpuc_memcpy_dtoh.argtypes = [P, P, ctypes.c_uint64, ctypes.c_size_t]
    rt.gpuc_last_error.restype = ctypes.c_char_p
    rt.gpuc_comm_nccl_init_rank.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(P)]
    rt.gpuc_comm_nccl_handle.restype, rt.gpuc_comm_nccl_handle.argtypes = P, [P]
    rt.gpuc_context_new.argtypes = [P, ctypes.POINTER(P)]
    rt.gpuc_context_free.argtypes = [P]
    rt.gpuc_config_init.argtypes = [P]
    rt.gpuc_comm_nccl_init_all.argtypes = [ctypes.c_int, P]
    uid = ctypes.create_string_buffer(128)
    comm = P()
    if rt.gpuc_comm_nccl_unique_id(uid) != 0 or rt.gpuc_comm_nccl_init_rank(uid.raw, 0, 1, ctypes.byref(comm)) != 0:
        print("NCCL bootstrap failed: %s" % rt.gpuc_last_error().decode())
        print("shard_lib_gpu: FAIL")
        return 1
    rng = np.random.default_rng(17)
    status = 0
    print("%-14s %-6s %s" % ("library", "result", "cases"))
    for name in sys.argv[3:]:
        try:
            r, note = check(rt, sys.argv[2], name, rt.gpuc_comm_nccl_handle(comm), rng)
        except Exception as ex:     # a crash of one library is its FAIL line
            r, note = "FAIL", "%s: %s" % (type(ex).__name__, ex)
        status |= r != "PASS"
        print("%-14s %-6s %s" % (name, r, note))
    # several handles in one process, one thread each (docs/library.md): with
    # 2+ GPUs one communicator of a rank per GPU (ncclCommInitAll); with one
    # GPU two independent 1-rank communicators on it (NCCL refuses two ranks
    # of one communicator on one device), called at the same time
    gpus = ctypes.c_int()
    rt.gpuc_device_count(ctypes.byref(gpus))
    if gpus.value >= 2:
        comms = (P * gpus.value)()
        if rt.gpuc_comm_nccl_init_all(gpus.value, comms) != 0:
            print("ncclCommInitAll(%d): %s" % (gpus.value, rt.gpuc_last_error().decode()))
            status = 1
            ranks = []
        else:
            ranks = [(r, rt.gpuc_comm_nccl_handle(comms[r]), r, gpus.value) for r in range(gpus.value)]
        what = "%d ranks in one process (a thread and a GPU each)" % gpus.value
    else:
        ranks = []
        for _ in range(2):
            c = P()
            if rt.gpuc_comm_nccl_unique_id(uid) != 0 or rt.gpuc_comm_nccl_init_rank(uid.raw, 0, 1, ctypes.byref(c)) != 0:
                print("NCCL bootstrap failed: %s" % rt.gpuc_last_error().decode())
                status = 1
                break
            ranks.append((0, rt.gpuc_comm_nccl_handle(c), 0, 1))
        what = "2 handles on one GPU, called at once from 2 threads (1-rank communicators)"
    if ranks:
        print("threads: %s" % what)
        for name in sys.argv[3:]:
            try:
                r, note = threads_check(rt, sys.argv[2], name, ranks, rng)
            except Exception as ex:
                r, note = "FAIL", "%s: %s" % (type(ex).__name__, ex)
            status |= r != "PASS"
            print("%-14s %-6s %s" % (name, r, note))
    print("shard_lib_gpu: %s" % ("FAIL" if status else "PASS"))
    return status


if __name__ == "__main__":
    sys.exit(main())
