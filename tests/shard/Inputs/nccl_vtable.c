/* nccl_vtable.c: drives gpuc_comm_nccl.c without a GPU (tests/shard/nccl-vtable.test).
 *   nccl_vtable wrap   GpucComm over a (fake) ncclComm_t, every collective once
 *   nccl_vtable load   only load libnccl and print the status and message
 *   nccl_vtable all N  gpuc_comm_nccl_init_all(N) and print the status and message */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuc.h"
#include "gpuc_comm.h"

static int report(const char *what, int st) {
    printf("%s: %s: %s\n", what, gpuc_status_name((GpucStatus)st), st ? gpuc_last_error() : "ok");
    return st;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "load") == 0) {
        report("load", gpuc_comm_nccl_load());
        report("load again", gpuc_comm_nccl_load());
        GpucComm *c = NULL;
        report("wrap", gpuc_comm_from_nccl((void *)&c, &c));
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "all") == 0) {
        GpucComm *comms[8];
        report("init_all", gpuc_comm_nccl_init_all(atoi(argv[2]), comms));
        return 0;
    }
    GpucComm *c = NULL;
    report("wrap NULL", gpuc_comm_from_nccl(NULL, &c));
    int fake_comm[2] = { 2, 3 };  /* fake_nccl.c's communicator: {rank, size} */
    if (report("wrap", gpuc_comm_from_nccl(fake_comm, &c))) { return 1; }
    printf("rank %d of %d, handle %s\n", c->rank, c->size, gpuc_comm_nccl_handle(c) == fake_comm ? "kept" : "lost");
    int64_t a[3] = { 1, 2, 3 }, b[3] = { 0 };
    report("all_gather", c->all_gather(c, a, b, sizeof a, (void *)0x10));
    printf("gathered %lld %lld %lld\n", (long long)b[0], (long long)b[1], (long long)b[2]);
    static const char *types[] = { "i32", "i64", "u32", "u64", "f32", "f64" };  /* ORDER COMM TYPE */
    static const char *ops[] = { "sum", "min", "max" };
    for (int t = GPUC_COMM_I32; t <= GPUC_COMM_F64; t++) {
        printf("%s %s: ", types[t], ops[t % 3]);
        fflush(stdout);
        c->all_reduce(c, a, b, 1, (GpucCommType)t, (GpucCommOp)(t % 3), NULL);
    }
    report("bad type", c->all_reduce(c, a, b, 1, (GpucCommType)9, GPUC_COMM_SUM, NULL));
    report("failing call", c->all_reduce(c, a, b, 99, GPUC_COMM_I32, GPUC_COMM_SUM, NULL));
    gpuc_comm_nccl_free(c);  /* not owned: no ncclCommDestroy */
    printf("done\n");
    return 0;
}
