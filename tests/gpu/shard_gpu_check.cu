/* shard_gpu_check.cu: tests/shard/Inputs/shard_check.c on the GPU: every
 * entry of a `gpuc --emit=cuda-shard` file (GPUC_SHARD_FILE), plain on the
 * whole arrays against sharded over NCCL (runtime/gpuc_comm_nccl.c) with
 * the rank counts of GPUC_SHARD_RANKS (default 1).
 *
 * Ranks: one GPU each, communicators from gpuc_comm_nccl_init_all (made once
 * per rank count). One rank runs on the calling thread. Several ranks need
 * several GPUs and one thread each; the nvcc launchers keep their memory
 * pool in globals (docs/cuda_include.md: not thread-safe), so the ranks'
 * host parts are not run concurrently here: GPUC_SHARD_RANKS above 1 is
 * refused until the launchers take a per-thread pool.
 *
 * Build (tests/gpu/shard_gpu.sh):
 *   nvcc -std=c++17 -arch=sm_90 -I PREFIX/include -I tests/shard/Inputs \
 *     -DGPUC_SHARD_FILE='"x.cu"' tests/gpu/shard_gpu_check.cu PREFIX/lib/libgpuc_runtime.a -ldl -lpthread
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuc.h"
#include "gpuc_comm.h"

#ifndef GPUC_SHARD_RANKS
#define GPUC_SHARD_RANKS 1
#endif

static int gpu_run(int size, int (*fn)(const GpucComm *, void *, int), void *arg);
#define GPUC_SHARD_RUN gpu_run
#define GPUC_SHARD_OOB (-1)  /* the CUDA launchers' index out of bounds */
#include "shard_check.c"

enum { MAX_GPU_RANKS = 8 };

static int gpu_run(int size, int (*fn)(const GpucComm *, void *, int), void *arg) {
    static GpucComm *comms[MAX_GPU_RANKS + 1][MAX_GPU_RANKS];
    if (size < 1 || size > MAX_GPU_RANKS) { return -1; }
    if (size > 1) {
        fprintf(stderr, "shard_gpu_check: %d ranks: the nvcc launchers are not thread-safe (see the file's comment)\n", size);
        return -1;
    }
    if (!comms[size][0]) {
        int st = gpuc_comm_nccl_init_all(size, comms[size]);
        if (st != 0) {
            printf("shard_gpu_check: FAIL: NCCL with %d ranks: %s: %s\n", size, gpuc_status_name((GpucStatus)st),
                   gpuc_last_error());
            exit(1);
        }
    }
    if (cudaSetDevice(0) != cudaSuccess) { return -1; }
    return fn(comms[size][0], arg, 0);
}
