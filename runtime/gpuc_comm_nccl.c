/* gpuc_comm_nccl.c: the NCCL implementation of gpuc_comm.h (docs/sharding.md).
 *
 * libnccl is loaded with dlopen at first use, like libcuda (rt_loader.c):
 * nothing links against it and no NCCL header is needed, so a program that
 * never runs a sharded entry on the GPU never looks for it. The few NCCL
 * calls used are declared here with NCCL's stable C ABI (nccl.h, 2.x):
 * ncclComm_t is a pointer, the enums are ints, ncclUniqueId is 128 bytes.
 *
 * Search order: $GPUC_NCCL_LIBRARY (a path), libnccl.so.2, libnccl.so, then
 * the nvidia-nccl wheel's nvidia/nccl/lib/libnccl.so.2 under a Python
 * install ($VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr, /opt/conda).
 *
 * Buffers passed to all_gather and all_reduce are device pointers; `stream`
 * is a CUstream (NULL: the legacy default stream). Errors: a nonzero return
 * and the message in gpuc_last_error() (the calling thread's).
 */
#include "gpuc_comm.h"

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* ---- NCCL's ABI: only what is used (nccl.h) ---- */
typedef void *NcclComm;                              /* ncclComm_t */
typedef struct { char internal[128]; } NcclUniqueId; /* ncclUniqueId (NCCL_UNIQUE_ID_BYTES) */
enum { NCCL_SUCCESS = 0 };                           /* ncclResult_t */
enum { NCCL_INT8 = 0, NCCL_UINT8 = 1, NCCL_INT32 = 2, NCCL_UINT32 = 3, NCCL_INT64 = 4, NCCL_UINT64 = 5,
       NCCL_FLOAT32 = 7, NCCL_FLOAT64 = 8 };        /* ncclDataType_t */
enum { NCCL_SUM = 0, NCCL_MAX = 2, NCCL_MIN = 3 };   /* ncclRedOp_t */

/* grep "ORDER NCCL": one row per field in nccl_syms below. */
typedef struct {
    int (*get_unique_id)(NcclUniqueId *id);
    int (*comm_init_rank)(NcclComm *comm, int nranks, NcclUniqueId id, int rank);
    int (*comm_init_all)(NcclComm *comms, int ndev, const int *devlist);
    int (*comm_destroy)(NcclComm comm);
    int (*comm_count)(NcclComm comm, int *count);
    int (*comm_user_rank)(NcclComm comm, int *rank);
    int (*all_gather)(const void *send, void *recv, size_t count, int type, NcclComm comm, void *stream);
    int (*all_reduce)(const void *send, void *recv, size_t count, int type, int op, NcclComm comm, void *stream);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*get_error_string)(int result);
} Nccl;

static const struct { const char *name; size_t offset; } nccl_syms[] = {
    { "ncclGetUniqueId", offsetof(Nccl, get_unique_id) },
    { "ncclCommInitRank", offsetof(Nccl, comm_init_rank) },
    { "ncclCommInitAll", offsetof(Nccl, comm_init_all) },
    { "ncclCommDestroy", offsetof(Nccl, comm_destroy) },
    { "ncclCommCount", offsetof(Nccl, comm_count) },
    { "ncclCommUserRank", offsetof(Nccl, comm_user_rank) },
    { "ncclAllGather", offsetof(Nccl, all_gather) },
    { "ncclAllReduce", offsetof(Nccl, all_reduce) },
    { "ncclGroupStart", offsetof(Nccl, group_start) },
    { "ncclGroupEnd", offsetof(Nccl, group_end) },
    { "ncclGetErrorString", offsetof(Nccl, get_error_string) },
};

static Nccl nccl;
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static int nccl_status = GPUC_ERROR_NO_NCCL;
static char nccl_msg[RT_MSG_MAX];

/* The wheel's library under Python installs (pip install nvidia-nccl-cu12/13). */
static void *open_from_wheel(void) {
    const char *home = getenv("HOME"), *venv = getenv("VIRTUAL_ENV"), *conda = getenv("CONDA_PREFIX");
    const char *roots[] = { venv, conda, home ? home : NULL, "/usr/local", "/usr", "/opt/conda" };
    const char *subs[] = { "lib/python3*/site-packages", "lib/python3*/dist-packages", ".local/lib/python3*/site-packages" };
    for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++) {
        if (!roots[r] || !*roots[r]) { continue; }
        for (size_t s = 0; s < sizeof subs / sizeof subs[0]; s++) {
            char pattern[1024];
            snprintf(pattern, sizeof pattern, "%s/%s/nvidia/nccl/lib/libnccl.so.2", roots[r], subs[s]);
            glob_t g;
            if (glob(pattern, 0, NULL, &g) != 0) { continue; }
            void *lib = NULL;
            for (size_t i = 0; i < g.gl_pathc && !lib; i++) { lib = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL); }
            globfree(&g);
            if (lib) { return lib; }
        }
    }
    return NULL;
}

static void load_nccl_once(void) {
    const char *env = getenv("GPUC_NCCL_LIBRARY");
    void *lib = NULL;
    if (env && *env) {
        lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *why = dlerror();
            snprintf(nccl_msg, sizeof nccl_msg, "NCCL not found: cannot load $GPUC_NCCL_LIBRARY=%s (%s)", env,
                     why ? why : "dlopen failed");
            return;
        }
    }
    if (!lib) { lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL); }
    if (!lib) { lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL); }
    if (!lib) { lib = open_from_wheel(); }
    if (!lib) {
        snprintf(nccl_msg, sizeof nccl_msg,
                 "NCCL not found: sharded entries on the GPU need libnccl (tried libnccl.so.2, libnccl.so and the "
                 "nvidia-nccl wheel's nvidia/nccl/lib under Python installs; set GPUC_NCCL_LIBRARY to its path)");
        return;
    }
    for (size_t i = 0; i < sizeof nccl_syms / sizeof nccl_syms[0]; i++) {
        void *f = dlsym(lib, nccl_syms[i].name);
        if (!f) {
            snprintf(nccl_msg, sizeof nccl_msg, "NCCL not usable: libnccl lacks %s", nccl_syms[i].name);
            memset(&nccl, 0, sizeof nccl);
            dlclose(lib);
            return;
        }
        memcpy((char *)&nccl + nccl_syms[i].offset, &f, sizeof f);
    }
    nccl_status = GPUC_SUCCESS;
}

int gpuc_comm_nccl_load(void) {
    pthread_once(&nccl_once, load_nccl_once);
    if (nccl_status != GPUC_SUCCESS) { rt_set_last_error("%s", nccl_msg); }
    return nccl_status;
}

/* A failed NCCL call: its name and NCCL's words in the thread's last error. */
static int nccl_failed(const char *call, int r) {
    const char *why = nccl.get_error_string ? nccl.get_error_string(r) : NULL;
    rt_set_last_error("%s failed: %s (ncclResult_t %d)", call, why ? why : "unknown error", r);
    return GPUC_ERROR_CUDA;
}

/* ---- the vtable ---- */

typedef struct {
    NcclComm comm;
    int owned;          /* made by gpuc (init_all): destroyed by gpuc_comm_nccl_free */
    CUdeviceptr word;   /* 4 bytes for the barrier's all-reduce, allocated at first use */
    GpucComm vt;
} CommNccl;

static CommNccl *state(const GpucComm *c) { return (CommNccl *)c->impl; }

static int nccl_all_gather(const GpucComm *c, const void *send, void *recv, size_t bytes, void *stream) {
    if (bytes == 0) { return 0; }
    int r = nccl.all_gather(send, recv, bytes, NCCL_UINT8, state(c)->comm, stream);
    return r == NCCL_SUCCESS ? 0 : nccl_failed("ncclAllGather", r);
}

static int nccl_all_reduce(const GpucComm *c, const void *send, void *recv, size_t count, GpucCommType type,
                           GpucCommOp op, void *stream) {
    static const int types[] = { NCCL_INT32, NCCL_INT64, NCCL_UINT32, NCCL_UINT64, NCCL_FLOAT32, NCCL_FLOAT64 }; /* ORDER COMM TYPE */
    static const int ops[] = { NCCL_SUM, NCCL_MIN, NCCL_MAX };
    if ((unsigned)type > GPUC_COMM_F64 || (unsigned)op > GPUC_COMM_MAX) {
        rt_set_last_error("gpuc_comm all_reduce: type %d or operator %d out of range", (int)type, (int)op);
        return GPUC_ERROR_INVALID_VALUE;
    }
    if (count == 0) { return 0; }
    int r = nccl.all_reduce(send, recv, count, types[type], ops[op], state(c)->comm, stream);
    return r == NCCL_SUCCESS ? 0 : nccl_failed("ncclAllReduce", r);
}

/* A one-word all-reduce on the default stream, then a wait for it. */
static int nccl_barrier(const GpucComm *c) {
    CommNccl *s = state(c);
    char msg[RT_MSG_MAX];
    if (rt_load_cuda(msg) != GPUC_SUCCESS) {
        rt_set_last_error("%s", msg);
        return GPUC_ERROR_NO_DRIVER;
    }
    if (!s->word) {
        CUresult cr = rt_cu.mem_alloc(&s->word, 4);
        if (cr != CUDA_SUCCESS) {
            rt_set_last_error("gpuc_comm barrier: cuMemAlloc failed (%s)", rt_cu_error_name(cr));
            return rt_status_of(cr);
        }
    }
    int r = nccl.all_reduce((const void *)s->word, (void *)s->word, 1, NCCL_INT32, NCCL_SUM, s->comm, NULL);
    if (r != NCCL_SUCCESS) { return nccl_failed("ncclAllReduce (barrier)", r); }
    CUresult cr = rt_cu.stream_synchronize(NULL);
    if (cr != CUDA_SUCCESS) {
        rt_set_last_error("gpuc_comm barrier: cuStreamSynchronize failed (%s)", rt_cu_error_name(cr));
        return rt_status_of(cr);
    }
    return 0;
}

static int wrap(NcclComm comm, int owned, GpucComm **out) {
    int rank = 0, size = 0, r;
    if ((r = nccl.comm_user_rank(comm, &rank)) != NCCL_SUCCESS) { return nccl_failed("ncclCommUserRank", r); }
    if ((r = nccl.comm_count(comm, &size)) != NCCL_SUCCESS) { return nccl_failed("ncclCommCount", r); }
    CommNccl *s = calloc(1, sizeof *s);
    if (!s) {
        rt_set_last_error("gpuc_comm: out of host memory");
        return GPUC_ERROR_OUT_OF_MEMORY;
    }
    s->comm = comm;
    s->owned = owned;
    s->vt = (GpucComm){ .rank = rank, .size = size, .impl = s, .all_gather = nccl_all_gather,
                        .all_reduce = nccl_all_reduce, .barrier = nccl_barrier };
    *out = &s->vt;
    return 0;
}

int gpuc_comm_from_nccl(void *nccl_comm, GpucComm **out) {
    if (!out) {
        rt_set_last_error("gpuc_comm_from_nccl: out is NULL");
        return GPUC_ERROR_INVALID_VALUE;
    }
    *out = NULL;
    if (!nccl_comm) {
        rt_set_last_error("gpuc_comm_from_nccl: the ncclComm_t is NULL");
        return GPUC_ERROR_INVALID_VALUE;
    }
    int st = gpuc_comm_nccl_load();
    return st != GPUC_SUCCESS ? st : wrap(nccl_comm, 0, out);
}

int gpuc_comm_nccl_init_all(int n, GpucComm **out) {
    if (!out || n < 1) {
        rt_set_last_error("gpuc_comm_nccl_init_all: %s", out ? "the rank count must be at least 1" : "out is NULL");
        return GPUC_ERROR_INVALID_VALUE;
    }
    memset(out, 0, sizeof *out * (size_t)n);
    int st = gpuc_comm_nccl_load();
    if (st != GPUC_SUCCESS) { return st; }
    char msg[RT_MSG_MAX];
    if ((st = rt_load_cuda(msg)) != GPUC_SUCCESS) {
        rt_set_last_error("%s", msg);
        return st;
    }
    int devices = 0;
    CUresult cr = rt_cu.device_get_count(&devices);
    if (cr != CUDA_SUCCESS || devices < n) {
        rt_set_last_error("%d ranks need %d GPUs, but %d %s visible", n, n, cr == CUDA_SUCCESS ? devices : 0,
                          devices == 1 ? "is" : "are");
        return GPUC_ERROR_NO_DEVICE;
    }
    NcclComm *comms = calloc((size_t)n, sizeof *comms);
    int *devs = calloc((size_t)n, sizeof *devs);
    if (!comms || !devs) {
        free(comms);
        free(devs);
        rt_set_last_error("gpuc_comm: out of host memory");
        return GPUC_ERROR_OUT_OF_MEMORY;
    }
    for (int d = 0; d < n; d++) { devs[d] = d; }
    int r = nccl.comm_init_all(comms, n, devs);
    free(devs);
    if (r != NCCL_SUCCESS) {
        free(comms);
        return nccl_failed("ncclCommInitAll", r);
    }
    for (int d = 0; d < n; d++) {
        if ((st = wrap(comms[d], 1, &out[d])) != 0) {
            for (int k = 0; k < n; k++) {
                if (out[k]) { gpuc_comm_nccl_free(out[k]); out[k] = NULL; }
                else { nccl.comm_destroy(comms[k]); }
            }
            free(comms);
            return st;
        }
    }
    free(comms);
    return 0;
}

int gpuc_comm_nccl_unique_id(char out[128]) {
    if (!out) {
        rt_set_last_error("gpuc_comm_nccl_unique_id: out is NULL");
        return GPUC_ERROR_INVALID_VALUE;
    }
    int st = gpuc_comm_nccl_load();
    if (st != GPUC_SUCCESS) { return st; }
    NcclUniqueId id;
    int r = nccl.get_unique_id(&id);
    if (r != NCCL_SUCCESS) { return nccl_failed("ncclGetUniqueId", r); }
    memcpy(out, id.internal, sizeof id.internal);
    return 0;
}

int gpuc_comm_nccl_init_rank(const char id[128], int rank, int size, GpucComm **out) {
    if (!out || !id) {
        rt_set_last_error("gpuc_comm_nccl_init_rank: %s is NULL", out ? "the id" : "out");
        return GPUC_ERROR_INVALID_VALUE;
    }
    if (size < 1 || rank < 0 || rank >= size) {
        rt_set_last_error("gpuc_comm_nccl_init_rank: rank %d of %d ranks is out of range", rank, size);
        return GPUC_ERROR_INVALID_VALUE;
    }
    *out = NULL;
    int st = gpuc_comm_nccl_load();
    if (st != GPUC_SUCCESS) { return st; }
    NcclUniqueId uid;
    memcpy(uid.internal, id, sizeof uid.internal);
    NcclComm comm = NULL;
    int r = nccl.comm_init_rank(&comm, size, uid, rank);
    if (r != NCCL_SUCCESS) { return nccl_failed("ncclCommInitRank", r); }
    if ((st = wrap(comm, 1, out)) != 0) { nccl.comm_destroy(comm); }
    return st;
}

void gpuc_comm_nccl_free(GpucComm *c) {
    if (!c) { return; }
    CommNccl *s = state(c);
    if (s->word) { rt_cu.mem_free(s->word); }
    if (s->owned) { nccl.comm_destroy(s->comm); }
    free(s);
}

void *gpuc_comm_nccl_handle(const GpucComm *c) { return c ? state(c)->comm : NULL; }
