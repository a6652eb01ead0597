/* lib_comm_client.c: a --emit=lib library's NAME_new_comm and shard table
 * without a GPU (tests/shard/lib-comm.test):
 *   lib_comm_client table   every entry: sharded or why not, which components are split
 *   lib_comm_client new     lc_new_comm on a (fake) ncclComm_t: NCCL is looked for
 *                           first (GPUC_ERROR_NO_NCCL), then the context (no GPU here)
 *   lib_comm_client boot    gpuc_comm_nccl_unique_id and _init_rank (NCCL's bootstrap) */
#include <stdio.h>
#include <string.h>

#include "gpuc_comm.h"
#include "lc.h"

static void report(const char *what, int st, const char *msg) {
    printf("%s: %s: %s\n", what, gpuc_status_name((GpucStatus)st), st ? msg : "ok");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "table";
    if (strcmp(mode, "table") == 0) {
        int n = 0, m = 0;
        const GpucLibShardInfo *s = lc_shard_table(&n);
        const GpucLibEntryInfo *t = lc_entry_table(&m);
        printf("%d entries, %d in the entry table\n", n, m);
        for (int i = 0; i < n; i++) {
            printf("%s %s:", s[i].name, strcmp(s[i].name, t[i].name) == 0 ? "(same order)" : "(OTHER ORDER)");
            if (!s[i].sharded) {
                printf(" plain: %s\n", s[i].why_not);
                continue;
            }
            printf(" sharded, args");
            for (int a = 0; a < t[i].num_args; a++) { printf(" %d", s[i].arg_split[a]); }
            printf(", results");
            for (int r = 0; r < t[i].num_results; r++) { printf(" %d", s[i].result_split[r]); }
            printf("\n");
        }
        return s[n].name == NULL ? 0 : 1;
    }
    if (strcmp(mode, "new") == 0) {
        lc_lib *lib = (lc_lib *)&lib;
        report("NULL comm", lc_new_comm(NULL, NULL, &lib), lc_last_error());
        printf("lib %s\n", lib ? "set" : "NULL");
        int fake_comm[2] = { 0, 1 };  /* fake_nccl.c's communicator: {rank, size} */
        report("new_comm", lc_new_comm(NULL, fake_comm, &lib), lc_last_error());
        printf("lib %s\n", lib ? "set" : "NULL");
        return 0;
    }
    char id[128];
    memset(id, 1, sizeof id);
    report("unique_id", gpuc_comm_nccl_unique_id(id), gpuc_last_error());
    printf("id[0] = %d\n", id[0]);
    GpucComm *c = NULL;
    report("rank 3 of 2", gpuc_comm_nccl_init_rank(id, 3, 2, &c), gpuc_last_error());
    int st = gpuc_comm_nccl_init_rank(id, 0, 1, &c);
    report("init_rank", st, gpuc_last_error());
    if (st == 0) {
        printf("rank %d of %d\n", c->rank, c->size);
        gpuc_comm_nccl_free(c);
    }
    return 0;
}
