/* oob_threads.c: ranks as threads of one process each have their own
 * out-of-bounds record (oob-threads.test, docs/sharding.md). Two ranks run
 * gpuc_shard_pick of oob_threads.gdsl (--emit=c-shard, included as
 * GPUC_SHARD_FILE) over the CPU collectives; only rank 1's shard indexes
 * the table out of bounds. Rank 1 must fail with the out-of-bounds code and
 * rank 0 must succeed with its shard and the sum over both shards (rank 1's
 * bad read gives 0), although rank 1 hit its bad read before the sum's
 * collective that rank 0 waits in. Prints one line per rank. */
#include GPUC_SHARD_FILE
#include "gpuc_comm.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const int64_t table[4] = { 10, 20, 30, 40 };
static const int64_t shard0[3] = { 0, 1, 2 };
static const int64_t shard1[2] = { 3, 9 };  /* 9: out of bounds */

static int run_rank(const GpucComm *comm, void *arg, int rank) {
    int *rcs = (int *)arg;
    int64_t *out = NULL, out_shape[2] = { 0, 0 }, total = -1;
    const int64_t *x = rank == 0 ? shard0 : shard1;
    int64_t n = rank == 0 ? 3 : 2;
    rcs[rank] = gpuc_shard_pick(comm, n, x, table, &out, out_shape, &total);
    if (rcs[rank] == 0) {
        printf("rank %d: rc 0, shard", rank);
        for (int64_t i = 0; i < out_shape[0]; i++) { printf(" %" PRId64, out[i]); }
        printf(", sum %" PRId64 "\n", total);
        free(out);
    }
    return 0;
}

int main(void) {
    int rcs[2] = { -1, -1 };
    if (gpuc_comm_threads_run(2, run_rank, rcs) != 0) {
        printf("oob_threads: the threads did not run\n");
        return 1;
    }
    for (int r = 0; r < 2; r++) {
        if (rcs[r] != 0) { printf("rank %d: rc %d%s\n", r, rcs[r], rcs[r] == 2 ? " (index out of bounds)" : ""); }
    }
    return 0;
}
