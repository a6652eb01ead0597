/* gpuc_comm_threads.c: the CPU implementation of gpuc_comm.h, ranks as threads.
 *
 * Every collective publishes each rank's send pointer in a shared slot,
 * waits at a barrier, lets every rank read all slots (in rank order, so all
 * ranks compute the same bits), and waits again before the slots are reused.
 * Deterministic and simple; this is what CI tests sharded entries with
 * (docs/sharding.md), not a fast path.
 */
#include "gpuc_comm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct GpucCommThreads {
    int size;
    pthread_barrier_t barrier;
    const void **slots;   /* slots[r]: rank r's send buffer during a collective */
    GpucComm *ranks;      /* ranks[r]: rank r's vtable */
};

static GpucCommThreads *state(const GpucComm *c) { return (GpucCommThreads *)c->impl; }

static int wait_all(GpucCommThreads *t) {
    int rc = pthread_barrier_wait(&t->barrier);
    return rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : 1;
}

static int threads_barrier(const GpucComm *c) { return wait_all(state(c)); }

static int threads_all_gather(const GpucComm *c, const void *send, void *recv, size_t bytes, void *stream) {
    (void)stream;
    GpucCommThreads *t = state(c);
    t->slots[c->rank] = send;
    if (wait_all(t)) { return 1; }
    for (int r = 0; r < t->size; r++) {
        if (bytes) { memcpy((char *)recv + (size_t)r * bytes, t->slots[r], bytes); }
    }
    return wait_all(t);
}

/* Integer sums wrap: computed on the unsigned type of the same width. */
#define FOLD(T, U)                                                                 \
    for (size_t k = 0; k < count; k++) {                                           \
        T acc = ((const T *)t->slots[0])[k];                                       \
        for (int r = 1; r < t->size; r++) {                                        \
            T x = ((const T *)t->slots[r])[k];                                     \
            if (op == GPUC_COMM_SUM) { acc = (T)((U)acc + (U)x); }                 \
            else if (op == GPUC_COMM_MIN) { acc = acc < x ? acc : x; }             \
            else { acc = acc > x ? acc : x; }                                      \
        }                                                                          \
        out[k] = acc;                                                              \
    }

static int threads_all_reduce(const GpucComm *c, const void *send, void *recv, size_t count, GpucCommType type,
                              GpucCommOp op, void *stream) {
    (void)stream;
    GpucCommThreads *t = state(c);
    static const size_t width[] = { 4, 8, 4, 8, 4, 8 };  /* ORDER COMM TYPE */
    if ((int)type < 0 || (int)type > GPUC_COMM_F64) { return 1; }
    /* fold into a private buffer: send and recv may alias, and other ranks still read send */
    void *tmp = malloc(count * width[type] + 1);
    if (!tmp) { return 1; }
    t->slots[c->rank] = send;
    if (wait_all(t)) { free(tmp); return 1; }
    switch (type) {
    case GPUC_COMM_I32: { int32_t *out = tmp; FOLD(int32_t, uint32_t) break; }
    case GPUC_COMM_I64: { int64_t *out = tmp; FOLD(int64_t, uint64_t) break; }
    case GPUC_COMM_U32: { uint32_t *out = tmp; FOLD(uint32_t, uint32_t) break; }
    case GPUC_COMM_U64: { uint64_t *out = tmp; FOLD(uint64_t, uint64_t) break; }
    case GPUC_COMM_F32: { float *out = tmp; FOLD(float, float) break; }
    case GPUC_COMM_F64: { double *out = tmp; FOLD(double, double) break; }
    }
    int rc = wait_all(t);
    if (count) { memcpy(recv, tmp, count * width[type]); }
    free(tmp);
    return rc;
}

GpucCommThreads *gpuc_comm_threads_new(int size) {
    if (size < 1) { return NULL; }
    GpucCommThreads *t = calloc(1, sizeof *t);
    if (!t) { return NULL; }
    t->size = size;
    t->slots = calloc((size_t)size, sizeof *t->slots);
    t->ranks = calloc((size_t)size, sizeof *t->ranks);
    if (!t->slots || !t->ranks || pthread_barrier_init(&t->barrier, NULL, (unsigned)size) != 0) {
        free(t->slots);
        free(t->ranks);
        free(t);
        return NULL;
    }
    for (int r = 0; r < size; r++) {
        GpucComm *c = &t->ranks[r];
        c->rank = r;
        c->size = size;
        c->impl = t;
        c->all_gather = threads_all_gather;
        c->all_reduce = threads_all_reduce;
        c->barrier = threads_barrier;
    }
    return t;
}

void gpuc_comm_threads_free(GpucCommThreads *t) {
    if (!t) { return; }
    pthread_barrier_destroy(&t->barrier);
    free(t->ranks);
    free(t->slots);
    free(t);
}

const GpucComm *gpuc_comm_threads_rank(GpucCommThreads *t, int rank) {
    return t && rank >= 0 && rank < t->size ? &t->ranks[rank] : NULL;
}

typedef struct {
    const GpucComm *comm;
    int (*fn)(const GpucComm *, void *, int);
    void *arg;
    int rc;
} ThreadJob;

static void *thread_main(void *p) {
    ThreadJob *j = p;
    j->rc = j->fn(j->comm, j->arg, j->comm->rank);
    return NULL;
}

int gpuc_comm_threads_run(int size, int (*fn)(const GpucComm *comm, void *arg, int rank), void *arg) {
    GpucCommThreads *t = gpuc_comm_threads_new(size);
    if (!t) { return -1; }
    pthread_t *th = calloc((size_t)size, sizeof *th);
    ThreadJob *jobs = calloc((size_t)size, sizeof *jobs);
    if (!th || !jobs) {
        free(th);
        free(jobs);
        gpuc_comm_threads_free(t);
        return -1;
    }
    int started = 0, rc = 0;
    for (int r = 0; r < size; r++) {
        jobs[r] = (ThreadJob){ &t->ranks[r], fn, arg, 0 };
        if (pthread_create(&th[r], NULL, thread_main, &jobs[r]) != 0) { break; }
        started++;
    }
    /* a rank that never started would leave the others waiting at a barrier */
    if (started < size) { abort(); }
    for (int r = 0; r < started; r++) { pthread_join(th[r], NULL); }
    for (int r = 0; r < size && !rc; r++) { rc = jobs[r].rc; }
    free(th);
    free(jobs);
    gpuc_comm_threads_free(t);
    return rc;
}
