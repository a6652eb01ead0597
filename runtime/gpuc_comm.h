/* gpuc_comm.h: the collectives sharded entries combine through (docs/sharding.md).
 *
 * A GpucComm is a small vtable over a communicator of `size` ranks. Generated
 * sharded entries (gpuc --emit=c-shard) call only these members. The CPU
 * implementation (gpuc_comm_threads.c) runs ranks as threads of one process;
 * the NCCL implementation (gpuc_comm_nccl.c) fills the same members from an ncclComm_t:
 *   all_gather = ncclAllGather(send, recv, bytes, ncclUint8, comm, stream)
 *   all_reduce = ncclAllReduce(send, recv, count, type, op, comm, stream)
 * `stream` is a cudaStream_t / CUstream there, NULL on the CPU.
 * Every member returns 0 on success, nonzero on failure.
 */
#ifndef GPUC_COMM_H
#define GPUC_COMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The vtable. Generated code carries this block as it is, under the same
 * guard, so that generated programs need no header beyond the runner's: the
 * build embeds the lines from `#ifndef GPUC_COMM_VTABLE` to its `#endif` in
 * the compiler (backend/CMakeLists.txt, emit_c.c be_shard_prelude; grep
 * "ORDER COMM VTABLE"). Keep both marker lines as they are. */
#ifndef GPUC_COMM_VTABLE
#define GPUC_COMM_VTABLE
/* Element types of all_reduce. grep "ORDER COMM TYPE" (gpuc_comm_threads.c). */
typedef enum GpucCommType {
    GPUC_COMM_I32,   /* int32_t, sums wrap */
    GPUC_COMM_I64,   /* int64_t, sums wrap */
    GPUC_COMM_U32,   /* uint32_t */
    GPUC_COMM_U64,   /* uint64_t */
    GPUC_COMM_F32,   /* float */
    GPUC_COMM_F64,   /* double */
} GpucCommType;

/* Built-in reduction operators of all_reduce (NCCL's ncclSum, ncclMin, ncclMax). */
typedef enum GpucCommOp {
    GPUC_COMM_SUM,
    GPUC_COMM_MIN,
    GPUC_COMM_MAX,
} GpucCommOp;

typedef struct GpucComm GpucComm;
struct GpucComm {
    int rank;           /* this rank, 0 .. size-1 */
    int size;           /* number of ranks */
    void *impl;         /* the implementation's state (shared by all ranks on the CPU) */
    /* recv[r * bytes .. (r + 1) * bytes) = rank r's send[0 .. bytes), for every r. */
    int (*all_gather)(const GpucComm *comm, const void *send, void *recv, size_t bytes, void *stream);
    /* recv[k] = op over ranks of send[k], k < count; the same on every rank.
     * send and recv may be the same buffer. */
    int (*all_reduce)(const GpucComm *comm, const void *send, void *recv, size_t count, GpucCommType type,
                      GpucCommOp op, void *stream);
    /* Returns once every rank has called it. */
    int (*barrier)(const GpucComm *comm);
};
#endif /* GPUC_COMM_VTABLE */

/* ---- the CPU implementation: ranks are threads of one process ---- */
typedef struct GpucCommThreads GpucCommThreads;
/* N ranks sharing one state; NULL if size < 1 or out of memory. */
GpucCommThreads *gpuc_comm_threads_new(int size);
void gpuc_comm_threads_free(GpucCommThreads *t);
/* Rank r's communicator, to be used by one thread only. */
const GpucComm *gpuc_comm_threads_rank(GpucCommThreads *t, int rank);
/* Run fn(rank's comm, arg, rank) on `size` threads and join them; returns the
 * first nonzero fn result in rank order, or -1 if threads could not start. */
int gpuc_comm_threads_run(int size, int (*fn)(const GpucComm *comm, void *arg, int rank), void *arg);

/* ---- TCP (gpuc_comm_tcp.c): ranks are processes, on one host or several ----
 * A star through rank 0: rank 0 listens on `port` (every interface), the
 * others connect to host:port, retrying for timeout_s seconds (size 1 needs
 * no network). 0, or a GpucStatus with a message naming the rank, host,
 * port and cause in err (and gpuc_last_error()). Buffers are host memory;
 * `stream` is ignored. */
int gpuc_comm_tcp_new(const char *host, const char *port, int rank, int size, double timeout_s, GpucComm **out,
                      char *err, size_t errlen);
void gpuc_comm_tcp_free(GpucComm *comm);
/* Every rank's bytes (any length) to rank 0, concatenated in rank order:
 * on rank 0 *recv is malloc'd (the caller frees it) with *recv_bytes; NULL elsewhere. */
int gpuc_comm_tcp_gather(const GpucComm *comm, const void *send, size_t bytes, void **recv, size_t *recv_bytes);
/* Rank 0's `bytes` of buf to every rank (the same count on all ranks). */
int gpuc_comm_tcp_broadcast(const GpucComm *comm, void *buf, size_t bytes);
/* What made a collective fail ("rank 1: all_gather: rank 0 closed the connection ..."), or NULL. */
const char *gpuc_comm_tcp_error(const GpucComm *comm);

/* ---- NCCL (gpuc_comm_nccl.c): libnccl loaded with dlopen at first use ----
 * Buffers are device pointers and `stream` a CUstream. Each function returns
 * 0 or a GpucStatus (gpuc.h) with the message in gpuc_last_error():
 * GPUC_ERROR_NO_NCCL when libnccl cannot be loaded ($GPUC_NCCL_LIBRARY,
 * libnccl.so.2, libnccl.so, the nvidia-nccl wheel under a Python install). */
int gpuc_comm_nccl_load(void);
/* Wrap the caller's ncclComm_t (rank and size from NCCL); the caller keeps
 * it and destroys it after gpuc_comm_nccl_free. */
int gpuc_comm_from_nccl(void *nccl_comm, GpucComm **out);
/* ncclCommInitAll over devices 0 .. n-1: out[r] is rank r on device r, owning
 * its communicator. More ranks than devices: GPUC_ERROR_NO_DEVICE. */
int gpuc_comm_nccl_init_all(int n, GpucComm **out);
/* NCCL's own bootstrap over any channel (torch.distributed, mpi4py, a
 * file): rank 0 gets the 128 bytes of an ncclUniqueId, sends them to every
 * rank, and each calls init_rank (ncclCommInitRank on the calling thread's
 * current CUDA device; *out owns the communicator). */
int gpuc_comm_nccl_unique_id(char out[128]);
int gpuc_comm_nccl_init_rank(const char id[128], int rank, int size, GpucComm **out);
/* Frees the wrapper (and the communicator if gpuc made it). NULL is ok. */
void gpuc_comm_nccl_free(GpucComm *comm);
/* The ncclComm_t under a GpucComm made by the functions above. */
void *gpuc_comm_nccl_handle(const GpucComm *comm);

#ifdef __cplusplus
}
#endif

#endif /* GPUC_COMM_H */
