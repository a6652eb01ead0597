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


def main():
    rt = ctypes.CDLL(sys.argv[1])
    rt.gpuc_mem_alloc.argtypes = [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]
    rt.gpuc_mem_free.argtypes = [P, ctypes.c_uint64]
    rt.gpuc_memcpy_htod.argtypes = [P, ctypes.c_uint64, P, ctypes.c_size_t]
    rt.gpuc_memcpy_dtoh.argtypes = [P, P, ctypes.c_uint64, ctypes.c_size_t]
    rt.gpuc_last_error.restype = ctypes.c_char_p
    rt.gpuc_comm_nccl_init_rank.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(P)]
    rt.gpuc_comm_nccl_handle.restype, rt.gpuc_comm_nccl_handle.argtypes = P, [P]
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
    print("shard_lib_gpu: %s" % ("FAIL" if status else "PASS"))
    return status


if __name__ == "__main__":
    sys.exit(main())
