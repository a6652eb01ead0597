/* fake_nccl.c: a stand-in libnccl for tests/shard/nccl-vtable.test. One
 * process, host memory: a communicator is a pointer to {rank, size}; the
 * collectives copy (all ranks' data is this rank's) and print the NCCL type
 * and operator codes they were given, so the test sees gpuc_comm_nccl.c's
 * mapping onto NCCL's ABI without a GPU. */
#include <stdio.h>
#include <string.h>

typedef struct { int rank, size; } FakeComm;
static FakeComm fake = { 0, 1 };
static const size_t width[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8 };  /* ncclDataType_t */

int ncclGetUniqueId(void *id) { memset(id, 0, 128); return 0; }
int ncclCommInitRank(void **comm, int n, char id[128], int rank) { (void)n; (void)id; (void)rank; *comm = &fake; return 0; }
int ncclCommInitAll(void **comms, int n, const int *devs) { (void)devs; for (int i = 0; i < n; i++) { comms[i] = &fake; } return 0; }
int ncclCommDestroy(void *comm) { (void)comm; printf("fake ncclCommDestroy\n"); return 0; }
int ncclCommCount(void *comm, int *n) { *n = ((FakeComm *)comm)->size; return 0; }
int ncclCommUserRank(void *comm, int *r) { *r = ((FakeComm *)comm)->rank; return 0; }
int ncclGroupStart(void) { return 0; }
int ncclGroupEnd(void) { return 0; }
const char *ncclGetErrorString(int r) { return r == 5 ? "invalid usage (fake)" : "fake error"; }

int ncclAllGather(const void *send, void *recv, size_t count, int type, void *comm, void *stream) {
    (void)comm;
    printf("fake ncclAllGather count=%zu type=%d stream=%p\n", count, type, stream);
    memmove(recv, send, count * width[type]);
    return 0;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, void *comm, void *stream) {
    (void)comm;
    printf("fake ncclAllReduce count=%zu type=%d op=%d stream=%p\n", count, type, op, stream);
    if (count == 99) { return 5; }  /* the test's way to see an error reported */
    memmove(recv, send, count * width[type]);
    return 0;
}
