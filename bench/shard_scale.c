/* shard_scale.c: the scaling measurement of issue 17 (docs/sharding.md),
 * built and run by bench/shard_scale.sh on a machine with 1 to 8 GPUs.
 *
 * One process, one thread and one GPU per rank: the library of
 * bench/shard_scale.gdsl (gpuc --emit=lib, header ss.h) with one handle per
 * rank (ss_new_comm on that rank's context and its communicator from
 * ncclCommInitAll), the ranks' entries called at the same time. For each
 * GPU count in the list, each rank makes its 2^LOG2 elements on its GPU
 * (fill, from the global index: no host data), then times the sum, the max,
 * the inclusive scan and the filter (a warm-up and REPS calls, each rank's
 * call from a barrier to the end of its stream; a call's time is the
 * slowest rank's, the median over the calls is printed) and checks every
 * result against its closed form: v(i) = (i * 7919) % 2001 - 1000 takes
 * every value of -1000 .. 1000 once per 2001 consecutive i, so a full period
 * sums to 0, holds 1000 positives and its maximum is 1000 (expect_*).
 * Weak scaling: the elements per GPU stay the same, so the ideal time does
 * not change with the GPU count and the efficiency is t(1) / t(N).
 * Collective bytes: what the sharded launchers all-gather per call (the
 * local sizes, the partials or totals, a filter's count), as received by
 * one GPU; they are a few bytes per rank, so NVLink time is negligible.
 *
 * --big LOG2: afterwards one run on all GPUs of the list's largest count
 * with 2^LOG2 elements per GPU of fill, sum and scan: with 2^34 i32 on 2
 * H200s the input and the scan's result are 256 GB in all, more than one
 * GPU holds; checked the same way.
 *
 * --self-test: the closed forms against a direct loop (no GPU).
 *
 * Output: one table (markdown), then `shard_scale: PASS` or `FAIL`. */
#include "ss.h"
#include "gpuc.h"
#include "gpuc_comm.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PERIOD = 2001, MAX_RANKS = 8, REPS = 5, NOPS = 4, MAX_COUNTS = 8 };
static const char *const op_names[NOPS] = { "sum", "max", "scan (inclusive)", "filter" };
/* bytes one rank sends to the all-gathers of a call: the local size, then
 * the partial (i64 sum, i32 max), the scan total, the filter's count */
static const int op_gather_bytes[NOPS] = { 8 + 8, 8 + 4, 8 + 4, 8 + 8 };

/* ---- the data and the closed forms ---- */

static int32_t value_at(int64_t i) { return (int32_t)(((i * 7919) % PERIOD) - 1000); }

static int64_t partial_sum[PERIOD];     /* sum of v(0 .. r) */
static int32_t partial_max[PERIOD];     /* max of v(0 .. r) */
static int64_t partial_positive[PERIOD]; /* count of v(0 .. r) > 0 */

static void closed_forms_init(void) {
    int64_t s = 0, c = 0;
    int32_t m = INT32_MIN;
    for (int r = 0; r < PERIOD; r++) {
        int32_t v = value_at(r);
        s += v;
        c += v > 0;
        m = v > m ? v : m;
        partial_sum[r] = s;
        partial_positive[r] = c;
        partial_max[r] = m;
    }
}

/* v(i) depends on i mod PERIOD only, and a full period sums to 0 */
static int64_t expect_total(int64_t n) { return n % PERIOD ? partial_sum[n % PERIOD - 1] : 0; }
static int32_t expect_max(int64_t n) { return n >= PERIOD ? partial_max[PERIOD - 1] : partial_max[n - 1]; }
static int32_t expect_prefix(int64_t j) { return (int32_t)(uint32_t)(uint64_t)partial_sum[j % PERIOD]; }
static int64_t expect_count(int64_t n) {
    return partial_positive[PERIOD - 1] * (n / PERIOD) + (n % PERIOD ? partial_positive[n % PERIOD - 1] : 0);
}
/* the first index >= from with v > 0 */
static int64_t first_positive(int64_t from) {
    while (value_at(from) <= 0) { from++; }
    return from;
}

static int self_test(void) {
    int bad = 0;
    int64_t s = 0, c = 0;
    int32_t m = INT32_MIN;
    uint32_t p = 0;
    for (int64_t i = 0; i < 3 * PERIOD + 17; i++) {
        int32_t v = value_at(i);
        s += v;
        c += v > 0;
        m = v > m ? v : m;
        p += (uint32_t)v;
        int64_t n = i + 1;
        if (expect_total(n) != s || expect_count(n) != c || expect_max(n) != m || expect_prefix(i) != (int32_t)p) {
            if (bad++ < 5) { printf("self-test: n %" PRId64 ": closed forms differ from the loop\n", n); }
        }
        if (v > 0 && first_positive(i) != i) { bad++; }
    }
    /* far indices: the period, not the loop */
    int64_t big = ((int64_t)1 << 35) + 12345;
    if (expect_prefix(big) != expect_prefix(big % PERIOD) || value_at(big) != value_at(big % PERIOD)) { bad++; }
    printf("self-test: %s\n", bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}

/* ---- ranks ---- */

typedef struct {
    int rank, size, ops;          /* ops: how many of op_names to run (2 in the big run: sum, scan) */
    int64_t n_local, offset;      /* this rank's elements and its first global index */
    void *nccl;                   /* its ncclComm_t */
    pthread_barrier_t *barrier;
    double ms[NOPS][REPS];        /* each timed call */
    int64_t count;                /* the filter's local count */
    char error[512];              /* the first failure, "" if none */
} Rank;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define FAIL_IF(cond, ...)                                                       \
    do {                                                                         \
        if ((cond) && !r->error[0]) { snprintf(r->error, sizeof r->error, __VA_ARGS__); } \
    } while (0)

/* element j of a device array, or INT32_MIN when it cannot be read */
static int32_t element(GpucContext *ctx, const ss_i32_1d *a, int64_t j) {
    int32_t v = INT32_MIN;
    if (gpuc_memcpy_dtoh(ctx, &v, ss_i32_1d_device(a) + (GpucDevPtr)j * sizeof v, sizeof v) != GPUC_SUCCESS) { return INT32_MIN; }
    return v;
}

/* one timed call of op k on this rank: from the barrier to the end of its stream */
static GpucStatus call_op(Rank *r, ss_lib *lib, ss_i32_1d *x, int k, int64_t *scalar, ss_i32_1d **out) {
    GpucStatus st = GPUC_SUCCESS;
    int32_t m = 0;
    switch (k) {
    case 0: st = ss_total(lib, x, scalar); break;
    case 1: st = ss_biggest(lib, x, &m); *scalar = m; break;
    case 2: st = ss_prefix(lib, x, out); break;
    default: st = ss_positives(lib, x, out); break;
    }
    (void)r;
    return st == GPUC_SUCCESS ? ss_sync(lib) : st;
}

static void *run_rank(void *arg) {
    Rank *r = (Rank *)arg;
    GpucConfig config;
    gpuc_config_init(&config);
    config.device = r->rank;
    GpucContext *ctx = NULL;
    ss_lib *lib = NULL;
    ss_i32_1d *raw = NULL, *x = NULL;
    GpucDevPtr raw_data = 0;
    int ok = gpuc_context_new(&config, &ctx) == GPUC_SUCCESS;
    FAIL_IF(!ok, "rank %d: gpuc_context_new: %s", r->rank, gpuc_last_error());
    ok = ok && ss_new_comm(ctx, r->nccl, &lib) == GPUC_SUCCESS;
    FAIL_IF(!ok, "rank %d: ss_new_comm: %s", r->rank, ss_last_error());
    ok = ok && gpuc_mem_alloc(ctx, (size_t)(r->n_local > 0 ? r->n_local : 1) * 4, &raw_data) == GPUC_SUCCESS;
    FAIL_IF(!ok, "rank %d: %" PRId64 " elements: %s", r->rank, r->n_local, gpuc_last_error());
    ok = ok && ss_i32_1d_from_device(lib, raw_data, r->n_local, &raw) == GPUC_SUCCESS;
    /* every rank joins fill's collectives, even after a failure here would
     * leave them waiting: a failed rank reports and the run times out */
    ok = ok && ss_fill(lib, raw, &x) == GPUC_SUCCESS && ss_sync(lib) == GPUC_SUCCESS;
    FAIL_IF(!ok, "rank %d: fill: %s", r->rank, ss_last_error());
    if (raw) { ss_i32_1d_free(lib, raw); }
    if (raw_data) { gpuc_mem_free(ctx, raw_data); }
    if (ok && r->n_local > 0) {
        FAIL_IF(element(ctx, x, 0) != value_at(r->offset) || element(ctx, x, r->n_local - 1) != value_at(r->offset + r->n_local - 1),
                "rank %d: fill: wrong values", r->rank);
    }
    int64_t n_global = (int64_t)r->size * r->n_local;   /* every rank has n_local */
    for (int k = 0; ok && k < NOPS; k++) {
        if (r->ops == 2 && k != 0 && k != 2) { continue; }
        for (int rep = -1; ok && rep < REPS; rep++) {
            int64_t scalar = 0;
            ss_i32_1d *out = NULL;
            pthread_barrier_wait(r->barrier);
            double t0 = now_ms();
            ok = call_op(r, lib, x, k, &scalar, &out) == GPUC_SUCCESS;
            double t1 = now_ms();
            FAIL_IF(!ok, "rank %d: %s: %s", r->rank, op_names[k], ss_last_error());
            if (rep >= 0) { r->ms[k][rep] = t1 - t0; }
            if (ok && rep == REPS - 1) {
                if (k == 0) { FAIL_IF(scalar != expect_total(n_global), "rank %d: sum %" PRId64 ", expected %" PRId64, r->rank, scalar, expect_total(n_global)); }
                if (k == 1) { FAIL_IF(scalar != expect_max(n_global), "rank %d: max %" PRId64 ", expected %d", r->rank, scalar, expect_max(n_global)); }
                if (k == 2) {
                    const int64_t at[3] = { 0, r->n_local / 2, r->n_local - 1 };
                    for (int i = 0; i < 3 && r->n_local > 0; i++) {
                        int32_t got = element(ctx, out, at[i]), want = expect_prefix(r->offset + at[i]);
                        FAIL_IF(got != want, "rank %d: scan[%" PRId64 "] = %d, expected %d", r->rank, r->offset + at[i], got, want);
                    }
                }
                if (k == 3) {
                    r->count = ss_i32_1d_shape(out)[0];
                    if (r->count > 0) {
                        int32_t got = element(ctx, out, 0), want = value_at(first_positive(r->offset));
                        FAIL_IF(got != want, "rank %d: filter's first element %d, expected %d", r->rank, got, want);
                    }
                }
            }
            if (out) { ss_i32_1d_free(lib, out); }
        }
    }
    if (x) { ss_i32_1d_free(lib, x); }
    ss_free(lib);
    gpuc_context_free(ctx);
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One run on `size` GPUs with n_local elements each; ms[k]: the median call
 * time of op k (the slowest rank's), 0 when it did not run. 0 or 1 (failed). */
static int run(int size, int64_t n_local, int ops, double ms[NOPS]) {
    for (int k = 0; k < NOPS; k++) { ms[k] = 0; }
    GpucComm *comms[MAX_RANKS] = { 0 };
    if (gpuc_comm_nccl_init_all(size, comms) != 0) {
        printf("FAIL: ncclCommInitAll over %d GPUs: %s\n", size, gpuc_last_error());
        return 1;
    }
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)size);
    Rank ranks[MAX_RANKS];
    pthread_t threads[MAX_RANKS];
    memset(ranks, 0, sizeof ranks);
    for (int i = 0; i < size; i++) {
        ranks[i] = (Rank){ .rank = i, .size = size, .ops = ops, .n_local = n_local, .offset = n_local * i,
                           .nccl = gpuc_comm_nccl_handle(comms[i]), .barrier = &barrier };
        pthread_create(&threads[i], NULL, run_rank, &ranks[i]);
    }
    for (int i = 0; i < size; i++) { pthread_join(threads[i], NULL); }
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < size; i++) { gpuc_comm_nccl_free(comms[i]); }
    int failed = 0;
    int64_t count = 0;
    for (int i = 0; i < size; i++) {
        if (ranks[i].error[0]) { printf("FAIL: %d GPUs: %s\n", size, ranks[i].error); failed = 1; }
        count += ranks[i].count;
    }
    if (!failed && ops == NOPS && count != expect_count((int64_t)size * n_local)) {
        printf("FAIL: %d GPUs: the filter kept %" PRId64 " elements, expected %" PRId64 "\n", size, count, expect_count((int64_t)size * n_local));
        failed = 1;
    }
    for (int k = 0; k < NOPS; k++) {
        double slowest[REPS];
        for (int rep = 0; rep < REPS; rep++) {
            slowest[rep] = 0;
            for (int i = 0; i < size; i++) { slowest[rep] = ranks[i].ms[k][rep] > slowest[rep] ? ranks[i].ms[k][rep] : slowest[rep]; }
        }
        qsort(slowest, REPS, sizeof slowest[0], cmp_double);
        ms[k] = failed ? 0 : slowest[REPS / 2];
    }
    return failed;
}

int main(int argc, char **argv) {
    closed_forms_init();
    int counts[MAX_COUNTS], ncounts = 0, log2 = 30, big = 0;
    double nvlink_gbs = 450;   /* one direction of an H100/H200's NVLink (GB/s) */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--self-test")) { return self_test(); }
        if (!strcmp(argv[i], "--log2") && i + 1 < argc) { log2 = atoi(argv[++i]); continue; }
        if (!strcmp(argv[i], "--big") && i + 1 < argc) { big = atoi(argv[++i]); continue; }
        if (!strcmp(argv[i], "--nvlink-gbs") && i + 1 < argc) { nvlink_gbs = atof(argv[++i]); continue; }
        if (!strcmp(argv[i], "--gpus") && i + 1 < argc) {
            for (char *s = strtok(argv[++i], ","); s && ncounts < MAX_COUNTS; s = strtok(NULL, ",")) { counts[ncounts++] = atoi(s); }
            continue;
        }
        fprintf(stderr, "usage: shard_scale [--gpus 1,2,4,8] [--log2 30] [--big LOG2] [--nvlink-gbs 450] | --self-test\n");
        return 2;
    }
    if (!ncounts) { counts[ncounts++] = 1; }
    for (int i = 0; i < ncounts; i++) {
        if (counts[i] < 1 || counts[i] > MAX_RANKS) { fprintf(stderr, "shard_scale: %d GPUs: 1 to %d\n", counts[i], MAX_RANKS); return 2; }
    }
    int64_t n_local = (int64_t)1 << log2;
    int failed = 0;
    double base[NOPS] = { 0 }, ms[NOPS];
    printf("| op | GPUs | elements per GPU | ms (median of %d) | GB/s per GPU (input) | efficiency t(1)/t(N) | collective bytes received per GPU | their time at %.0f GB/s |\n",
           REPS, nvlink_gbs);
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < ncounts; c++) {
        int size = counts[c];
        failed |= run(size, n_local, NOPS, ms);
        for (int k = 0; k < NOPS; k++) {
            if (size == 1) { base[k] = ms[k]; }
            double bytes = (double)(size - 1) * op_gather_bytes[k];
            char eff[32] = "-";
            if (base[k] > 0 && ms[k] > 0) { snprintf(eff, sizeof eff, "%.3f", base[k] / ms[k]); }
            printf("| %s | %d | 2^%d | %.3f | %.0f | %s | %.0f | %.3f us |\n", op_names[k], size, log2, ms[k],
                   ms[k] > 0 ? (double)n_local * 4 / (ms[k] * 1e6) : 0, eff, bytes, bytes / (nvlink_gbs * 1e3));
        }
    }
    if (big) {
        int size = counts[ncounts - 1];
        int64_t nb = (int64_t)1 << big;
        double total_gb = (double)size * (double)nb * 8 / 1e9;   /* the input and the scan's result */
        printf("\nbig: %d GPUs x 2^%d i32: input and scan result %.0f GB in all\n", size, big, total_gb);
        int f = run(size, nb, 2, ms);
        failed |= f;
        printf("big: sum %.3f ms, inclusive scan %.3f ms: %s\n", ms[0], ms[2], f ? "FAIL" : "PASS (results checked)");
    }
    printf("shard_scale: %s\n", failed ? "FAIL" : "PASS");
    return failed;
}
