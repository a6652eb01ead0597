/* shard_check.c: every entry of a program, sharded over 1, 2, 3 and 8
 * ranks (threads, runtime/gpuc_comm_threads.c), against the same entry
 * unsharded (docs/sharding.md).
 *
 * Built by the lit tests of tests/shard/ around the output of
 * `gpuc --emit=c-shard`, included as GPUC_SHARD_FILE; it reads only that
 * file's table gpuc_shard_entries. For each entry, rank count, global size
 * and way of splitting (even, random, all on the last rank, one element on
 * each rank but the first) it generates inputs, calls the plain entry on
 * the whole arrays and the sharded one on each rank's shard, gathers the
 * sharded results in rank order and compares: integers and bools exactly,
 * f32 within 1e-4 relative + 1e-4 absolute, f64 within 1e-10 + 1e-10
 * (float sums over ranks group their terms differently; -DGPUC_SHARD_TOL_F32=T
 * and -DGPUC_SHARD_TOL_F64=T change them, as difftest/run.py --shard does for
 * generated programs whose f64 results come from f32 values). Results that are
 * not sharded must also be the same bits on every rank. Where the plain
 * entry reads an index out of bounds, the ranks that read it must say so.
 *
 * Prints one line per entry and `shard_check: PASS ...` or `FAIL ...`; exit
 * status 0 only when everything matched.
 *
 * On GPUs (tests/gpu/shard_gpu_check.cu, --emit=cuda-shard) the includer
 * defines GPUC_SHARD_RUN (how ranks run: NCCL, one GPU each) and
 * GPUC_SHARD_RANKS (the rank counts) before including this file, which is
 * therefore also valid C++.
 */
#include GPUC_SHARD_FILE
#include "gpuc_comm.h"  /* after: the generated file's copy of the vtable is the header's */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_RANKS = 8, MAX_VALUES = 32, MAX_SIZES = 16, NSPLITS = 4 };
#ifndef GPUC_SHARD_RUN
#define GPUC_SHARD_RUN gpuc_comm_threads_run
#endif
#ifndef GPUC_SHARD_OOB
#define GPUC_SHARD_OOB 2   /* what an entry returns for an index out of bounds (CUDA launchers: -1) */
#endif
#ifndef GPUC_SHARD_TOL_F32
#define GPUC_SHARD_TOL_F32 1e-4
#endif
#ifndef GPUC_SHARD_TOL_F64
#define GPUC_SHARD_TOL_F64 1e-10
#endif
#ifndef GPUC_SHARD_RANKS
#define GPUC_SHARD_RANKS 1, 2, 3, 8
#endif
static const int rank_counts[] = { GPUC_SHARD_RANKS };
static const int64_t global_sizes[] = { 0, 1, 2, 5, 17, 130, 1000 };
static const int64_t replicated_size = 3;   /* sizes that are not split */
static const char *const split_names[NSPLITS] = { "even", "random", "all-last", "ones" };

static uint64_t rng_state;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t kind_size(int kind) {
    static const size_t size[] = { 1, 4, 8, 4, 8, 4, 8 };
    return size[kind];
}

static void fill(int kind, void *data, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        int64_t small = (int64_t)(rng() % 9) - 4;   /* ties for argmin/argmax */
        double f = (double)(rng() >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        switch (kind) {
        case 0: ((unsigned char *)data)[i] = (unsigned char)(rng() & 1); break;
        case 1: ((int32_t *)data)[i] = (int32_t)small; break;
        case 2: ((int64_t *)data)[i] = small; break;
        case 3: ((uint32_t *)data)[i] = (uint32_t)(small + 4); break;
        case 4: ((uint64_t *)data)[i] = (uint64_t)(small + 4); break;
        case 5: ((float *)data)[i] = (float)f; break;
        default: ((double *)data)[i] = f; break;
        }
    }
}

/* Equal within the stated tolerance (floats) or exactly. */
static bool same(int kind, const void *want, const void *got, int64_t i) {
    double w, g, rel, abs_;
    switch (kind) {
    case 5: w = ((const float *)want)[i]; g = ((const float *)got)[i]; rel = abs_ = GPUC_SHARD_TOL_F32; break;
    case 6: w = ((const double *)want)[i]; g = ((const double *)got)[i]; rel = abs_ = GPUC_SHARD_TOL_F64; break;
    default: {
        size_t s = kind_size(kind);
        return memcmp((const char *)want + (size_t)i * s, (const char *)got + (size_t)i * s, s) == 0;
    }
    }
    if (isnan(w) || isnan(g)) { return isnan(w) && isnan(g); }
    if (isinf(w) || isinf(g)) { return w == g; }
    return fabs(w - g) <= abs_ + rel * fabs(w);
}

static double as_double(int kind, const void *p, int64_t i) {
    switch (kind) {
    case 0: return ((const unsigned char *)p)[i];
    case 1: return ((const int32_t *)p)[i];
    case 2: return (double)((const int64_t *)p)[i];
    case 3: return ((const uint32_t *)p)[i];
    case 4: return (double)((const uint64_t *)p)[i];
    case 5: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

/* One case: an entry, a rank count, global sizes, each rank's part of each size. */
typedef struct {
    const GpucShardEntry *e;
    int ranks;
    int64_t sizes[MAX_SIZES];                 /* global */
    int64_t part[MAX_SIZES][MAX_RANKS];       /* rank r's part of sharded size k */
    int64_t start[MAX_SIZES][MAX_RANKS];      /* the rows before it */
    void *args[MAX_VALUES];                   /* the whole arguments */
    int64_t row_len[MAX_VALUES];              /* elements per row (1 for 1-D) */
    /* per rank: results and their shapes */
    void *res[MAX_RANKS][MAX_VALUES];
    int64_t shape[MAX_RANKS][MAX_VALUES][2];
    int64_t scalar[MAX_RANKS][MAX_VALUES];    /* storage of scalar results (8 bytes each) */
    int rc[MAX_RANKS];
} Case;

static int64_t dim_of(const Case *c, const GpucShardArg *a, int d) {
    return a->size[d] >= 0 ? c->sizes[a->size[d]] : a->fixed[d];
}

static int run_rank(const GpucComm *comm, void *p, int r) {
    Case *c = (Case *)p;
    const GpucShardEntry *e = c->e;
    int64_t sizes[MAX_SIZES];
    void *args[MAX_VALUES];
    for (int k = 0; k < e->nsizes; k++) { sizes[k] = e->size_sharded[k] ? c->part[k][r] : c->sizes[k]; }
    for (int a = 0; a < e->nargs; a++) {
        const GpucShardArg *arg = &e->args[a];
        args[a] = c->args[a];
        if (arg->sharded) {
            int64_t first = c->start[arg->size[0]][r] * c->row_len[a];
            args[a] = (char *)c->args[a] + (size_t)first * kind_size(arg->kind);
        }
    }
    for (int i = 0; i < e->nresults; i++) {
        c->res[r][i] = e->results[i].rank ? NULL : (void *)&c->scalar[r][i];
        c->shape[r][i][0] = c->shape[r][i][1] = 0;
    }
    c->rc[r] = e->sharded(comm, sizes, args, c->res[r], c->shape[r]);
    return 0;
}

static void split(Case *c, int k, int how) {
    int64_t n = c->sizes[k];
    int R = c->ranks;
    int64_t *p = c->part[k];
    for (int r = 0; r < R; r++) { p[r] = 0; }
    switch (how) {
    case 0:
        for (int r = 0; r < R; r++) { p[r] = n * (r + 1) / R - n * r / R; }
        break;
    case 1: {
        int64_t left = n;
        for (int r = 0; r < R - 1; r++) {
            p[r] = left ? (int64_t)(rng() % (uint64_t)(left + 1)) : 0;
            left -= p[r];
        }
        p[R - 1] = left;
        break;
    }
    case 2:
        p[R - 1] = n;
        break;
    default: {
        int64_t left = n;
        for (int r = R - 1; r >= 1; r--) {
            p[r] = left > 0 ? 1 : 0;
            left -= p[r];
        }
        p[0] = left;
        break;
    }
    }
    int64_t at = 0;
    for (int r = 0; r < R; r++) {
        c->start[k][r] = at;
        at += p[r];
    }
}

static int failures;

static void report(const Case *c, int how, const char *what) {
    if (failures++ < 8) {
        printf("MISMATCH %s: ranks %d, n %" PRId64 ", split %s: %s\n", c->e->name, c->ranks, c->sizes[0] /* first size */,
               split_names[how], what);
    }
}

/* Run and compare one case; returns false on a mismatch. */
static bool check_case(Case *c, int how) {
    const GpucShardEntry *e = c->e;
    void *want[MAX_VALUES];
    int64_t want_shape[MAX_VALUES][2];
    int64_t want_scalar[MAX_VALUES];
    for (int i = 0; i < e->nresults; i++) {
        want[i] = e->results[i].rank ? NULL : (void *)&want_scalar[i];
        want_shape[i][0] = want_shape[i][1] = 0;
    }
    int prc = e->plain(NULL, c->sizes, c->args, want, want_shape);
    if (GPUC_SHARD_RUN(c->ranks, run_rank, c) != 0) {
        report(c, how, "the threads did not run");
        return false;
    }
    bool ok = true;
    char msg[256];
    /* An index out of bounds (GPUC_SHARD_OOB) fails the ranks that read it;
     * the others may finish (each rank keeps its own record: docs/sharding.md),
     * so then every rank returns 0 or that code and at least one returns it.
     * Otherwise each rank returns what the plain entry did. */
    int failed = 0;
    for (int r = 0; r < c->ranks; r++) {
        failed += c->rc[r] == GPUC_SHARD_OOB;
        if (c->rc[r] != prc && !(prc == GPUC_SHARD_OOB && c->rc[r] == 0)) {
            snprintf(msg, sizeof msg, "rank %d returned %d, the plain entry %d", r, c->rc[r], prc);
            report(c, how, msg);
            ok = false;
        }
    }
    if (ok && prc == GPUC_SHARD_OOB && failed == 0) {
        report(c, how, "the plain entry read an index out of bounds, no rank did");
        ok = false;
    }
    for (int i = 0; ok && prc == 0 && i < e->nresults; i++) {
        const GpucShardArg *a = &e->results[i];
        size_t es = kind_size(a->kind);
        if (a->rank == 0 || !a->sharded) {
            int64_t count = a->rank == 0 ? 1 : want_shape[i][0] * want_shape[i][1];
            for (int r = 0; r < c->ranks && ok; r++) {
                if (a->rank && (c->shape[r][i][0] != want_shape[i][0] || c->shape[r][i][1] != want_shape[i][1])) {
                    snprintf(msg, sizeof msg, "result %d: rank %d's shape differs", i, r);
                    report(c, how, msg);
                    ok = false;
                    break;
                }
                for (int64_t k = 0; k < count && ok; k++) {
                    if (!same(a->kind, want[i], c->res[r][i], k) ||
                        memcmp((char *)c->res[0][i] + (size_t)k * es, (char *)c->res[r][i] + (size_t)k * es, es) != 0) {
                        snprintf(msg, sizeof msg, "result %d[%" PRId64 "]: rank %d has %.17g, unsharded %.17g (rank 0 %.17g)", i,
                                 k, r, as_double(a->kind, c->res[r][i], k), as_double(a->kind, want[i], k),
                                 as_double(a->kind, c->res[0][i], k));
                        report(c, how, msg);
                        ok = false;
                    }
                }
            }
            continue;
        }
        /* a sharded result: the ranks' parts in order make the whole */
        int64_t rows = 0;
        for (int r = 0; r < c->ranks; r++) {
            if (c->shape[r][i][1] != want_shape[i][1]) {
                snprintf(msg, sizeof msg, "result %d: rank %d has rows of %" PRId64 ", unsharded %" PRId64, i, r,
                         c->shape[r][i][1], want_shape[i][1]);
                report(c, how, msg);
                ok = false;
            }
            rows += c->shape[r][i][0];
        }
        if (ok && rows != want_shape[i][0]) {
            snprintf(msg, sizeof msg, "result %d: %" PRId64 " rows over the ranks, unsharded %" PRId64, i, rows, want_shape[i][0]);
            report(c, how, msg);
            ok = false;
        }
        int64_t at = 0;
        for (int r = 0; r < c->ranks && ok; r++) {
            int64_t count = c->shape[r][i][0] * c->shape[r][i][1];
            for (int64_t k = 0; k < count && ok; k++) {
                if (!same(a->kind, (char *)want[i] + (size_t)at * es, c->res[r][i], k)) {
                    /* compare element k of the rank's part with at + k of the whole */
                    double g = as_double(a->kind, c->res[r][i], k), w = as_double(a->kind, want[i], at + k);
                    snprintf(msg, sizeof msg, "result %d[%" PRId64 "] (rank %d's [%" PRId64 "]): %.17g, unsharded %.17g", i, at + k,
                             r, k, g, w);
                    report(c, how, msg);
                    ok = false;
                }
            }
            at += count;
        }
    }
    for (int i = 0; i < e->nresults; i++) {
        if (!e->results[i].rank) { continue; }
        free(want[i]);
        for (int r = 0; r < c->ranks; r++) { free(c->res[r][i]); }
    }
    return ok;
}

int main(void) {
    int total = 0, bad_entries = 0;
    for (int ei = 0; ei < gpuc_shard_num_entries; ei++) {
        const GpucShardEntry *e = &gpuc_shard_entries[ei];
        if (e->nsizes > MAX_SIZES || e->nargs > MAX_VALUES || e->nresults > MAX_VALUES) {
            printf("%s: too many parameters for shard_check\n", e->name);
            bad_entries++;
            continue;
        }
        char layout[2 * MAX_VALUES + 16];
        int at = 0;
        for (int a = 0; a < e->nargs; a++) { layout[at++] = e->args[a].rank == 0 ? '.' : e->args[a].sharded ? 's' : 'r'; }
        layout[at++] = ' ';
        layout[at++] = '-';
        layout[at++] = '>';
        layout[at++] = ' ';
        for (int i = 0; i < e->nresults; i++) { layout[at++] = e->results[i].rank == 0 ? '.' : e->results[i].sharded ? 's' : 'r'; }
        layout[at] = 0;
        int cases = 0, failed = 0;
        for (size_t ri = 0; ri < sizeof rank_counts / sizeof *rank_counts; ri++) {
            for (size_t ni = 0; ni < sizeof global_sizes / sizeof *global_sizes; ni++) {
                for (int how = 0; how < NSPLITS; how++) {
                    static Case c;
                    memset(&c, 0, sizeof c);
                    c.e = e;
                    c.ranks = rank_counts[ri];
                    rng_state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)ei << 40) ^ ((uint64_t)ni << 20) ^ ((uint64_t)how << 8) ^ ri;
                    for (int k = 0; k < e->nsizes; k++) {
                        c.sizes[k] = e->size_sharded[k] ? global_sizes[ni] : replicated_size;
                        if (e->size_sharded[k]) { split(&c, k, how); }
                    }
                    for (int a = 0; a < e->nargs; a++) {
                        const GpucShardArg *arg = &e->args[a];
                        int64_t count = 1;
                        c.row_len[a] = 1;
                        for (int d = 0; d < arg->rank; d++) {
                            count *= dim_of(&c, arg, d);
                            if (d > 0) { c.row_len[a] *= dim_of(&c, arg, d); }
                        }
                        c.args[a] = calloc((size_t)count + 1, kind_size(arg->kind) < 8 ? 8 : kind_size(arg->kind));
                        fill(arg->kind, c.args[a], count);
                    }
                    cases++;
                    if (!check_case(&c, how)) { failed++; }
                    for (int a = 0; a < e->nargs; a++) { free(c.args[a]); }
                }
            }
        }
        total += cases;
        if (failed) { bad_entries++; }
        printf("%s [%s]: %d cases, %s\n", e->name, layout, cases, failed ? "FAILED" : "all equal to the unsharded entry");
    }
    if (bad_entries) {
        printf("shard_check: FAIL: %d of %d entries differ\n", bad_entries, gpuc_shard_num_entries);
        return 1;
    }
    printf("shard_check: PASS: %d entries, %d cases, ranks", gpuc_shard_num_entries, total);
    for (size_t ri = 0; ri < sizeof rank_counts / sizeof *rank_counts; ri++) { printf(" %d", rank_counts[ri]); }
    printf("\n");
    return 0;
}
