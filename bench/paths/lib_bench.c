/* bench/paths/lib_bench.c: one bench case through the --emit=lib library,
 * the way a program calls it: the library's generic entry table (what gpuc's
 * Python package calls; the typed NAME_ENTRY functions wrap the same code),
 * results allocated by the library (`.data = 0`) and freed after each call
 * with NAME_free_device, on the context's stream (the legacy default stream).
 *
 * Built by bench/run.sh (and bench/try_paths.sh) once per bench program, with
 * the library's header included first and LIB its NAME:
 *
 *   cc -std=c11 -O2 -DLIB=scan -include DIR/scan.h -Iruntime bench/paths/lib_bench.c \
 *      DIR/libscan.a build/runtime/libgpuc_runtime.a -ldl -lpthread -lm -o lib_scan
 *   lib_scan --list                       cases of this library (no GPU needed)
 *   lib_scan --case scan_incl_f32 --log2 28 [--m 256,1024] [--out FILE.jsonl]
 *
 * Timing is bench/common.cuh's for calls of 100 us or more (what the sizes
 * bench/run.sh gives this take; common.cuh's batches of shorter calls are
 * not repeated here): a pair of events around each call (and the
 * free of its array results; scalar results are written to a device address,
 * `.data` set, as the header's _into writes them: the host form adds a copy
 * and a wait, about 15 us on an H100), 2 warm-up calls, 10 to 200 timed calls (about
 * 20 ms of device time), the median. Inputs are generated on the host with
 * the distributions of common.cuh (dyadic floats for sums and scans, so they
 * compare exactly) and uploaded once. After timing, the entry is called once
 * more and its result checked against a host reference computed here. One
 * JSON line per case and size, src "gpuc_lib", as the other drivers write;
 * exit 1 when a call fails. */
#ifndef _POSIX_C_SOURCE /* -fopenmp defines one */
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuc.h"

#ifndef LIB
#error "compile with -DLIB=NAME -include DIR/NAME.h"
#endif
/* Loops over independent elements on every core where OpenMP is there
 * (bench/paths/build.sh: -fopenmp): inputs of 2^28 values and their host
 * references take seconds on one. */
#define PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#define PARALLEL_FOR_REDUCE(op, v) PRAGMA(omp parallel for schedule(static) reduction(op : v))
#else
#define PARALLEL_FOR
#define PARALLEL_FOR_REDUCE(op, v)
#endif
/* scans and filters on the host in parts: each part's total, then each part from its offset */
enum { HOST_PARTS = 256 };

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define LIBF(x) CAT(LIB, CAT(_, x)) /* LIBF(new): scan_new */
typedef CAT(LIB, _lib) Lib;

/* What the host reference of a case computes. */
typedef enum {
    OP_SAXPY,       /* a * x + y, a = 2 */
    OP_CHAIN,       /* exp(-x*x) * sin(y) + 2x */
    OP_SUM,
    OP_MAX,
    OP_DOT,
    OP_SUMSQ,
    OP_SCAN_INCL,
    OP_SCAN_EXCL,
    OP_RECURRENCE,  /* x[i] = a[i] * x[i-1] + b[i] */
    OP_FILTER,      /* keep x > 0 */
    OP_ROW_SUMS,    /* rank-2 input, rows of m */
    OP_ROW_SOFTMAX,
    OP_LOGSUMEXP,   /* max(x) + log(sum(exp(x - max(x)))) */
    OP_SOFTMAX_STATS, /* (max(x), sum(exp(x - max(x)))) */
    OP_MEAN_VAR,    /* (mean, variance) */
    OP_LAYER_NORM,  /* rows of m normalized, times w[m], plus b[m] */
    OP_XENT,        /* each row's logsumexp minus its target's logit (targets i64[rows]) */
} Op;

/* Kinds of data (bench/common.cuh); TARGET: integers in 0..m-1. */
enum { DYADIC, UNIFORM, SMALLINT, POSITIVE, TARGET };

typedef struct Case {
    const char *name;  /* the report's case: "scan_incl" */
    const char *entry; /* the library's entry: "incl_f32" */
    int kind;          /* GPUC_LIB_F32, ...: inputs and results */
    Op op;
} Case;

static const Case cases[] = {
    { "saxpy", "saxpy", GPUC_LIB_F32, OP_SAXPY },
    { "chain", "chain", GPUC_LIB_F32, OP_CHAIN },
    { "sum", "sum_f32", GPUC_LIB_F32, OP_SUM },
    { "sum", "sum_f64", GPUC_LIB_F64, OP_SUM },
    { "sum", "sum_i32", GPUC_LIB_I32, OP_SUM },
    { "sum", "sum_i64", GPUC_LIB_I64, OP_SUM },
    { "max", "max_f32", GPUC_LIB_F32, OP_MAX },
    { "max", "max_f64", GPUC_LIB_F64, OP_MAX },
    { "max", "max_i32", GPUC_LIB_I32, OP_MAX },
    { "max", "max_i64", GPUC_LIB_I64, OP_MAX },
    { "dot", "dot_f32", GPUC_LIB_F32, OP_DOT },
    { "sumsq", "sumsq_f32", GPUC_LIB_F32, OP_SUMSQ },
    { "scan_incl", "incl_i32", GPUC_LIB_I32, OP_SCAN_INCL },
    { "scan_incl", "incl_f32", GPUC_LIB_F32, OP_SCAN_INCL },
    { "scan_incl", "incl_i64", GPUC_LIB_I64, OP_SCAN_INCL },
    { "scan_excl", "excl_i32", GPUC_LIB_I32, OP_SCAN_EXCL },
    { "scan_excl", "excl_f32", GPUC_LIB_F32, OP_SCAN_EXCL },
    { "scan_excl", "excl_i64", GPUC_LIB_I64, OP_SCAN_EXCL },
    { "recurrence", "recurrence", GPUC_LIB_F32, OP_RECURRENCE },
    { "filter", "filter_f32", GPUC_LIB_F32, OP_FILTER },
    { "filter", "filter_i32", GPUC_LIB_I32, OP_FILTER },
    { "row_sums", "row_sums", GPUC_LIB_F32, OP_ROW_SUMS },
    { "row_softmax", "row_softmax", GPUC_LIB_F32, OP_ROW_SOFTMAX },
    { "logsumexp", "logsumexp_f32", GPUC_LIB_F32, OP_LOGSUMEXP },
    { "softmax_stats", "softmax_stats", GPUC_LIB_F32, OP_SOFTMAX_STATS },
    { "mean_var", "mean_var_f32", GPUC_LIB_F32, OP_MEAN_VAR },
    { "layer_norm", "layer_norm", GPUC_LIB_F32, OP_LAYER_NORM },
    { "xent", "xent", GPUC_LIB_F32, OP_XENT },
};

static bool is_rows(Op op) { return op == OP_ROW_SUMS || op == OP_ROW_SOFTMAX || op == OP_LAYER_NORM || op == OP_XENT; }

/* the number of scalar results (0: one array result) */
static int scalar_results(Op op)
{
    switch (op) {
    case OP_SUM: case OP_MAX: case OP_DOT: case OP_SUMSQ: case OP_LOGSUMEXP: return 1;
    case OP_SOFTMAX_STATS: case OP_MEAN_VAR: return 2;
    default: return 0;
    }
}
enum { NCASES = (int)(sizeof cases / sizeof cases[0]) };

static const char *kind_name(int k)
{
    return k == GPUC_LIB_F32 ? "f32" : k == GPUC_LIB_F64 ? "f64" : k == GPUC_LIB_I32 ? "i32" : "i64";
}

static size_t kind_size(int k) { return k == GPUC_LIB_F32 || k == GPUC_LIB_I32 ? 4 : 8; }

/* ---- host values: a typed buffer read and written as doubles ---- */
static double get(int k, const void *p, int64_t i)
{
    switch (k) {
    case GPUC_LIB_F32: return ((const float *)p)[i];
    case GPUC_LIB_F64: return ((const double *)p)[i];
    case GPUC_LIB_I32: return ((const int32_t *)p)[i];
    default: return (double)((const int64_t *)p)[i];
    }
}

static void put(int k, void *p, int64_t i, double v)
{
    switch (k) {
    case GPUC_LIB_F32: ((float *)p)[i] = (float)v; break;
    case GPUC_LIB_F64: ((double *)p)[i] = v; break;
    case GPUC_LIB_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = (int64_t)v; break;
    }
}

/* An integer sum wrapped to the element type (gpuc's integers wrap). */
static double wrap(int k, int64_t v) { return k == GPUC_LIB_I32 ? (double)(int32_t)(uint32_t)(uint64_t)v : (double)v; }

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double gen_value(uint64_t seed, int64_t i, int data, int64_t m)
{
    uint64_t h = mix64(seed * 0x100000001b3ULL + (uint64_t)i);
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
    if (data == TARGET) {
        return (double)(h % (uint64_t)m);
    }
    if (data == POSITIVE) {
        return 0.5 + u;
    }
    if (data == DYADIC) {
        int k = (int)(h % 16) - 8;
        return (k >= 0 ? k + 1 : k) / 8.0;
    }
    if (data == UNIFORM) {
        double v = 2.0 * u - 1.0;
        return v == 0.0 ? 0.5 : v;
    }
    int k = (int)(h % 2000) - 1000;
    return k >= 0 ? k + 1 : k;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "lib_bench: out of host memory (%zu bytes)\n", n);
        exit(3);
    }
    return p;
}

static void die(const char *what, GpucStatus st)
{
    fprintf(stderr, "lib_bench: %s: %s: %s\n", what, gpuc_status_name(st), LIBF(last_error)());
    exit(1);
}

/* ---- one input on the host and the device ---- */
typedef struct Input {
    int kind;
    int64_t rows, cols; /* rows elements (cols 0), or rows x cols */
    void *host;
    GpucDevPtr dev;
} Input;

/* rows x cols values (cols 0: rows values) of kind k; TARGET data in 0..m-1 */
static Input make_input(GpucContext *ctx, int k, int64_t rows, int64_t cols, uint64_t seed, int data, int64_t m)
{
    int64_t n = cols ? rows * cols : rows;
    Input in = { k, rows, cols, xmalloc((size_t)n * kind_size(k)), 0 };
    PARALLEL_FOR
    for (int64_t i = 0; i < n; i++) {
        put(k, in.host, i, gen_value(seed, i, data, m));
    }
    GpucStatus st = gpuc_mem_alloc(ctx, (size_t)n * kind_size(k), &in.dev);
    if (st == GPUC_SUCCESS) {
        st = gpuc_memcpy_htod(ctx, in.dev, in.host, (size_t)n * kind_size(k));
    }
    if (st != GPUC_SUCCESS) {
        fprintf(stderr, "lib_bench: uploading %lld values: %s\n", (long long)n, gpuc_last_error());
        exit(1);
    }
    return in;
}

static GpucLibValue array_arg(const Input *in)
{
    GpucLibValue v;
    memset(&v, 0, sizeof v);
    v.kind = in->kind;
    v.rank = in->cols ? 2 : 1;
    v.shape[0] = in->rows;
    v.shape[1] = in->cols;
    v.data = in->dev;
    return v;
}

/* ---- checks ---- */
static char check[256];

/* got[i] against ref[i] within atol + rtol * |ref|; the first difference. */
static bool compare(int k, const void *got, const double *ref, int64_t n, double rtol, double atol)
{
    int64_t first = n;
    PARALLEL_FOR_REDUCE(min, first)
    for (int64_t i = 0; i < n; i++) {
        double g = get(k, got, i), r = ref[i];
        if (!(fabs(g - r) <= atol + rtol * fabs(r)) && i < first) {
            first = i;
        }
    }
    if (first < n) {
        snprintf(check, sizeof check, "WRONG at %lld: got %.9g, expected %.9g", (long long)first,
                 get(k, got, first), ref[first]);
        return false;
    }
    snprintf(check, sizeof check, "ok");
    return true;
}

/* ---- the case ---- */
typedef struct Run {
    const Case *c;
    const GpucLibEntryInfo *entry;
    Lib *lib;
    GpucContext *ctx;
    int64_t n, m;        /* elements; row length (row cases), else 0 */
    Input in[3];
    int nin;
    GpucLibValue args[4];
    int nargs;
    GpucLibValue res[2]; /* the result's components */
    GpucDevPtr scalar_slot; /* device addresses of scalar results in timed calls (8 bytes each) */
} Run;

/* One call of the entry with results the library allocates; frees them
 * unless keep. */
static void call(Run *r, bool keep)
{
    GpucLibValue *res = r->res;
    int scalars = scalar_results(r->c->op);
    memset(res, 0, sizeof r->res);
    for (int i = 0; i < (scalars ? scalars : 1); i++) {
        res[i].kind = r->c->kind;
        res[i].rank = scalars ? 0 : r->c->op == OP_ROW_SOFTMAX || r->c->op == OP_LAYER_NORM ? 2 : 1;
        /* timed calls: scalar results written to a device address (the
         * header's _into does the same; Python's sync=False too); the
         * checked call (keep) brings them to the host */
        if (scalars && !keep) {
            res[i].data = r->scalar_slot + 8 * (GpucDevPtr)i;
        }
    }
    GpucStatus st = r->entry->call(r->lib, NULL, r->args, res);
    if (st != GPUC_SUCCESS) {
        die(r->c->entry, st);
    }
    if (!keep && !scalars) {
        LIBF(free_device)(r->lib, res->data);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct Timing {
    double med_us, min_us;
    int reps;
} Timing;

static float elapsed_ms(GpucEvent *e0, GpucEvent *e1, Run *r)
{
    float ms = 0;
    GpucStatus st = gpuc_event_record(e0, NULL);
    if (st != GPUC_SUCCESS) {
        die("gpuc_event_record", st);
    }
    call(r, false);
    if ((st = gpuc_event_record(e1, NULL)) != GPUC_SUCCESS || (st = gpuc_event_synchronize(e1)) != GPUC_SUCCESS ||
        (st = gpuc_event_elapsed_ms(e0, e1, &ms)) != GPUC_SUCCESS) {
        die("events", st);
    }
    return ms;
}

static Timing time_calls(Run *r)
{
    GpucEvent *e0, *e1;
    if (gpuc_event_new(r->ctx, &e0) != GPUC_SUCCESS || gpuc_event_new(r->ctx, &e1) != GPUC_SUCCESS) {
        die("gpuc_event_new", GPUC_ERROR_INVALID_VALUE);
    }
    call(r, false);
    call(r, false);
    float ms = elapsed_ms(e0, e1, r);
    int reps = ms > 0 ? (int)(20.0 / ms) : 200;
    reps = reps < 10 ? 10 : reps > 200 ? 200 : reps;
    double *t = xmalloc(sizeof *t * (size_t)reps);
    for (int i = 0; i < reps; i++) {
        t[i] = elapsed_ms(e0, e1, r) * 1000.0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    Timing out = { reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]), t[0], reps };
    free(t);
    gpuc_event_free(e0);
    gpuc_event_free(e1);
    return out;
}

/* The reference result of the case: a malloc'd array of *count doubles. */
static double *reference(const Run *r, int64_t *count)
{
    const Case *c = r->c;
    int k = c->kind;
    int64_t n = r->n;
    const void *x = r->in[0].host, *y = r->nin > 1 ? r->in[1].host : NULL;
    bool ints = k == GPUC_LIB_I32 || k == GPUC_LIB_I64;
    double *ref = xmalloc(sizeof *ref * (size_t)(n ? n : 1));
    *count = n;
    switch (c->op) {
    case OP_SAXPY:
        PARALLEL_FOR
        for (int64_t i = 0; i < n; i++) { ref[i] = (double)(2.0f * (float)get(k, x, i) + (float)get(k, y, i)); }
        break;
    case OP_CHAIN:
        PARALLEL_FOR
        for (int64_t i = 0; i < n; i++) {
            double a = get(k, x, i);
            ref[i] = exp(-a * a) * sin(get(k, y, i)) + 2.0 * a;
        }
        break;
    case OP_SUM:
    case OP_DOT:
    case OP_SUMSQ: { /* in any order: exact for integers (wrapping) and dyadic sums, within rtol else */
        uint64_t isum = 0;
        double s = 0;
        if (ints) {
            PARALLEL_FOR_REDUCE(+, isum)
            for (int64_t i = 0; i < n; i++) { isum += (uint64_t)(int64_t)get(k, x, i); }
        } else {
            PARALLEL_FOR_REDUCE(+, s)
            for (int64_t i = 0; i < n; i++) {
                double v = get(k, x, i);
                s += c->op == OP_DOT ? v * get(k, y, i) : c->op == OP_SUMSQ ? v * v : v;
            }
        }
        ref[0] = ints && c->op == OP_SUM ? wrap(k, (int64_t)isum) : s;
        *count = 1;
        break;
    }
    case OP_MAX: {
        double s = -INFINITY;
        PARALLEL_FOR_REDUCE(max, s)
        for (int64_t i = 0; i < n; i++) { s = fmax(s, get(k, x, i)); }
        ref[0] = s;
        *count = 1;
        break;
    }
    case OP_SCAN_INCL:
    case OP_SCAN_EXCL: { /* each part's total, then each part from the totals before it */
        const int64_t part = (n + HOST_PARTS - 1) / HOST_PARTS;
        uint64_t itot[HOST_PARTS + 1] = { 0 };
        double tot[HOST_PARTS + 1] = { 0 };
        PARALLEL_FOR
        for (int p = 0; p < HOST_PARTS; p++) {
            for (int64_t i = p * part; i < n && i < (p + 1) * part; i++) {
                double v = get(k, x, i);
                if (ints) { itot[p + 1] += (uint64_t)(int64_t)v; } else { tot[p + 1] += v; }
            }
        }
        for (int p = 0; p < HOST_PARTS; p++) {
            itot[p + 1] += itot[p];
            tot[p + 1] += tot[p];
        }
        PARALLEL_FOR
        for (int p = 0; p < HOST_PARTS; p++) {
            uint64_t iacc = itot[p];
            double acc = tot[p];
            for (int64_t i = p * part; i < n && i < (p + 1) * part; i++) {
                if (c->op == OP_SCAN_EXCL) { ref[i] = ints ? wrap(k, (int64_t)iacc) : acc; }
                double v = get(k, x, i);
                if (ints) { iacc += (uint64_t)(int64_t)v; } else { acc += v; }
                if (c->op == OP_SCAN_INCL) { ref[i] = ints ? wrap(k, (int64_t)iacc) : acc; }
            }
        }
        break;
    }
    case OP_RECURRENCE: {
        double v = 0;
        for (int64_t i = 0; i < n; i++) { ref[i] = v = get(k, x, i) * v + get(k, y, i); }
        break;
    }
    case OP_FILTER: { /* each part's count, then each part's kept values from its offset */
        const int64_t part = (n + HOST_PARTS - 1) / HOST_PARTS;
        int64_t kept[HOST_PARTS + 1] = { 0 };
        PARALLEL_FOR
        for (int p = 0; p < HOST_PARTS; p++) {
            for (int64_t i = p * part; i < n && i < (p + 1) * part; i++) { kept[p + 1] += get(k, x, i) > 0; }
        }
        for (int p = 0; p < HOST_PARTS; p++) { kept[p + 1] += kept[p]; }
        PARALLEL_FOR
        for (int p = 0; p < HOST_PARTS; p++) {
            int64_t o = kept[p];
            for (int64_t i = p * part; i < n && i < (p + 1) * part; i++) {
                double v = get(k, x, i);
                if (v > 0) { ref[o++] = v; }
            }
        }
        *count = kept[HOST_PARTS];
        break;
    }
    case OP_ROW_SUMS:
        PARALLEL_FOR
        for (int64_t row = 0; row < n / r->m; row++) {
            double s = 0;
            for (int64_t j = 0; j < r->m; j++) { s += get(k, x, row * r->m + j); }
            ref[row] = s;
        }
        *count = n / r->m;
        break;
    case OP_ROW_SOFTMAX:
        PARALLEL_FOR
        for (int64_t row = 0; row < n / r->m; row++) {
            const int64_t o = row * r->m;
            double mx = -INFINITY, s = 0;
            for (int64_t j = 0; j < r->m; j++) { mx = fmax(mx, get(k, x, o + j)); }
            for (int64_t j = 0; j < r->m; j++) { s += ref[o + j] = exp(get(k, x, o + j) - mx); }
            for (int64_t j = 0; j < r->m; j++) { ref[o + j] /= s; }
        }
        break;
    case OP_LOGSUMEXP:
    case OP_SOFTMAX_STATS: {
        double mx = -INFINITY, s = 0;
        PARALLEL_FOR_REDUCE(max, mx)
        for (int64_t i = 0; i < n; i++) { mx = fmax(mx, get(k, x, i)); }
        PARALLEL_FOR_REDUCE(+, s)
        for (int64_t i = 0; i < n; i++) { s += exp(get(k, x, i) - mx); }
        ref[0] = c->op == OP_LOGSUMEXP ? mx + log(s) : mx;
        ref[1] = s;
        *count = c->op == OP_LOGSUMEXP ? 1 : 2;
        break;
    }
    case OP_MEAN_VAR: {
        double s = 0, q = 0;
        PARALLEL_FOR_REDUCE(+, s)
        for (int64_t i = 0; i < n; i++) { s += get(k, x, i); }
        double mean = s / (double)n;
        PARALLEL_FOR_REDUCE(+, q)
        for (int64_t i = 0; i < n; i++) { q += (get(k, x, i) - mean) * (get(k, x, i) - mean); }
        ref[0] = mean;
        ref[1] = q / (double)n;
        *count = 2;
        break;
    }
    case OP_LAYER_NORM: {
        const void *w = r->in[1].host, *b = r->in[2].host;
        PARALLEL_FOR
        for (int64_t row = 0; row < n / r->m; row++) {
            const int64_t o = row * r->m;
            double mu = 0, var = 0;
            for (int64_t j = 0; j < r->m; j++) { mu += get(k, x, o + j); }
            mu /= (double)r->m;
            for (int64_t j = 0; j < r->m; j++) { var += (get(k, x, o + j) - mu) * (get(k, x, o + j) - mu); }
            double rs = 1.0 / sqrt(var / (double)r->m + 1e-5);
            for (int64_t j = 0; j < r->m; j++) { ref[o + j] = (get(k, x, o + j) - mu) * rs * get(k, w, j) + get(k, b, j); }
        }
        break;
    }
    case OP_XENT:
        PARALLEL_FOR
        for (int64_t row = 0; row < n / r->m; row++) {
            const int64_t o = row * r->m;
            double mx = -INFINITY, s = 0;
            for (int64_t j = 0; j < r->m; j++) { mx = fmax(mx, get(k, x, o + j)); }
            for (int64_t j = 0; j < r->m; j++) { s += exp(get(k, x, o + j) - mx); }
            ref[row] = mx + log(s) - get(k, x, o + (int64_t)get(GPUC_LIB_I64, r->in[1].host, row));
        }
        *count = n / r->m;
        break;
    }
    return ref;
}

/* Call once more and check the result; sets check. *out_n: the result's count.
 * Scalar results: the checked call brings them to the host, and the values
 * the timed calls wrote to the device slot must be the same bits. */
static void verify(Run *r, int64_t *out_n)
{
    int scalars = scalar_results(r->c->op);
    unsigned char timed[16] = { 0 };
    if (scalars) {
        GpucStatus st = gpuc_memcpy_dtoh(r->ctx, timed, r->scalar_slot, 8 * (size_t)scalars);
        if (st != GPUC_SUCCESS) {
            die("reading the timed calls' scalar results", st);
        }
    }
    call(r, true);
    for (int i = 0; i < scalars; i++) {
        size_t bytes = kind_size(r->c->kind);
        if (memcmp(timed + 8 * i, &r->res[i].scalar, bytes) != 0) {
            snprintf(check, sizeof check, "WRONG: scalar result %d written to the device differs from the host's", i);
            return;
        }
    }
    int64_t count;
    double *ref = reference(r, &count);
    const Case *c = r->c;
    int k = c->kind;
    double rtol = 0, atol = 0;
    switch (c->op) {
    case OP_SAXPY: rtol = atol = 1e-6; break;
    case OP_CHAIN: rtol = atol = 1e-5; break;
    case OP_DOT: case OP_SUMSQ: rtol = 1e-4; break;
    case OP_RECURRENCE: rtol = 1e-3; atol = 1e-4; break;
    case OP_ROW_SOFTMAX: rtol = 1e-4; atol = 1e-7; break;
    case OP_LOGSUMEXP: case OP_SOFTMAX_STATS: case OP_XENT: rtol = atol = 1e-5; break;
    case OP_MEAN_VAR: rtol = 1e-4; atol = 1e-5; break;
    case OP_LAYER_NORM: rtol = atol = 1e-4; break;
    default: break; /* exact: integers, dyadic sums and scans, max, filter */
    }
    *out_n = count;
    if (r->res[0].rank == 0) {
        union { float f; double d; int32_t i; int64_t l; } v[2];
        for (int i = 0; i < count; i++) {
            switch (k) {
            case GPUC_LIB_F32: v[i].f = r->res[i].scalar.f32; break;
            case GPUC_LIB_F64: v[i].d = r->res[i].scalar.f64; break;
            case GPUC_LIB_I32: v[i].i = r->res[i].scalar.i32; break;
            default: v[i].l = r->res[i].scalar.i64; break;
            }
        }
        for (int i = 0; i < count; i++) { /* every component of the case's kind */
            if (!compare(k, &v[i], &ref[i], 1, rtol, atol)) {
                break;
            }
        }
    } else {
        const GpucLibValue *res = &r->res[0];
        int64_t got_n = res->rank == 2 ? res->shape[0] * res->shape[1] : res->shape[0];
        if (got_n != count) {
            snprintf(check, sizeof check, "WRONG shape: %lld elements, expected %lld", (long long)got_n,
                     (long long)count);
        } else {
            void *got = xmalloc((size_t)count * kind_size(k));
            GpucStatus st = count ? gpuc_memcpy_dtoh(r->ctx, got, res->data, (size_t)count * kind_size(k))
                                  : GPUC_SUCCESS;
            if (st != GPUC_SUCCESS) {
                die("reading the result", st);
            }
            compare(k, got, ref, count, rtol, atol);
            free(got);
        }
        LIBF(free_device)(r->lib, res->data);
    }
    free(ref);
}

static const GpucLibEntryInfo *find_entry(const char *name)
{
    int count = 0;
    const GpucLibEntryInfo *t = LIBF(entry_table)(&count);
    for (int i = 0; i < count; i++) {
        if (strcmp(t[i].name, name) == 0) {
            return &t[i];
        }
    }
    return NULL;
}

static void case_id(const Case *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s_%s", c->name, kind_name(c->kind));
}

/* seconds on the host's clock (C11's timespec_get): where a case's wall time goes */
static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_case(Lib *lib, const Case *c, int64_t n, int64_t m, FILE *out)
{
    const double t0 = now_s();
    Run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.entry = find_entry(c->entry);
    r.lib = lib;
    r.ctx = LIBF(context)(lib);
    r.n = n;
    r.m = m;
    int k = c->kind;
    bool ints = k == GPUC_LIB_I32 || k == GPUC_LIB_I64;
    int data = UNIFORM;
    if (c->op == OP_SUM || c->op == OP_SCAN_INCL || c->op == OP_SCAN_EXCL || c->op == OP_ROW_SUMS || c->op == OP_DOT) {
        data = ints ? SMALLINT : DYADIC;
    } else if (ints) {
        data = SMALLINT;
    }
    if (c->op == OP_MEAN_VAR) {
        data = POSITIVE; /* a mean away from 0, so its relative error means something */
    }
    uint64_t seed = 0x9a7b5 + (uint64_t)n + (uint64_t)m;
    int64_t rows = m ? n / m : n;
    r.in[r.nin++] = make_input(r.ctx, k, rows, m, seed, data, m);
    if (c->op == OP_SAXPY || c->op == OP_CHAIN || c->op == OP_DOT || c->op == OP_RECURRENCE) {
        r.in[r.nin++] = make_input(r.ctx, k, n, 0, seed + 1, data, m);
    } else if (c->op == OP_LAYER_NORM) {
        r.in[r.nin++] = make_input(r.ctx, k, m, 0, seed + 1, POSITIVE, m);
        r.in[r.nin++] = make_input(r.ctx, k, m, 0, seed + 2, UNIFORM, m);
    } else if (c->op == OP_XENT) {
        r.in[r.nin++] = make_input(r.ctx, GPUC_LIB_I64, rows, 0, seed + 1, TARGET, m);
    }
    if (c->op == OP_SAXPY) {
        memset(&r.args[0], 0, sizeof r.args[0]);
        r.args[0].kind = GPUC_LIB_F32;
        r.args[0].scalar.f32 = 2.0f;
        r.nargs = 1;
    }
    for (int i = 0; i < r.nin; i++) {
        r.args[r.nargs++] = array_arg(&r.in[i]);
    }
    if (r.nargs != r.entry->num_args) {
        fprintf(stderr, "lib_bench: %s takes %d argument components, this harness passes %d\n", c->entry,
                r.entry->num_args, r.nargs);
        exit(2);
    }
    if (scalar_results(c->op)) {
        GpucStatus st = gpuc_mem_alloc(r.ctx, 16, &r.scalar_slot);
        if (st != GPUC_SUCCESS) {
            die("gpuc_mem_alloc", st);
        }
    }
    const double t1 = now_s();
    Timing t = time_calls(&r);
    const double t2 = now_s();
    int64_t out_n = 0;
    verify(&r, &out_n);
    const double t3 = now_s();
    char extra[64] = "";
    if (c->op == OP_FILTER) {
        snprintf(extra, sizeof extra, ", \"out_n\": %lld", (long long)out_n);
    }
    fprintf(out,
            "{\"src\": \"gpuc_lib\", \"case\": \"%s\", \"dtype\": \"%s\", \"n\": %lld, \"m\": %lld, \"us\": %.3f, "
            "\"us_min\": %.3f, \"reps\": %d, \"check\": \"%s\"%s, "
            "\"wall_s\": {\"inputs\": %.2f, \"time\": %.2f, \"check\": %.2f}}\n",
            c->name, kind_name(k), (long long)n, (long long)m, t.med_us, t.min_us, t.reps, check, extra, t1 - t0,
            t2 - t1, t3 - t2);
    fflush(out);
    fprintf(stderr, "  gpuc_lib   %-16s %-4s n=%-11lld m=%-6lld %10.2f us  %s  (s: inputs %.1f, time %.1f, check %.1f)\n",
            c->name, kind_name(k), (long long)n, (long long)m, t.med_us, check, t1 - t0, t2 - t1, t3 - t2);
    for (int i = 0; i < r.nin; i++) {
        gpuc_mem_free(r.ctx, r.in[i].dev);
        free(r.in[i].host);
    }
    gpuc_mem_free(r.ctx, r.scalar_slot);
}

#define STR2(x) #x
#define STR(x) STR2(x)

static int usage(void)
{
    fprintf(stderr, "usage: lib_%s --list | --case CASE_DTYPE --log2 K [--m M,M,...] [--out FILE.jsonl]\n", STR(LIB));
    return 2;
}

int main(int argc, char **argv)
{
    const char *only = NULL, *out_path = NULL, *ms = NULL;
    int log2 = -1;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            list = true;
        } else if (i + 1 < argc && strcmp(argv[i], "--case") == 0) {
            only = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--log2") == 0) {
            log2 = atoi(argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "--m") == 0) {
            ms = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--out") == 0) {
            out_path = argv[++i];
        } else {
            return usage();
        }
    }
    char id[64];
    const Case *c = NULL;
    for (int i = 0; i < NCASES; i++) {
        case_id(&cases[i], id, sizeof id);
        if (!find_entry(cases[i].entry)) {
            continue;
        }
        if (list) {
            printf("%s\n", id);
        } else if (only && strcmp(only, id) == 0) {
            c = &cases[i];
        }
    }
    if (list) {
        return 0;
    }
    if (!c || log2 < 0 || log2 > 32) {
        if (only && !c) {
            fprintf(stderr, "lib_bench: no case '%s' in this library (--list shows them)\n", only);
        }
        return usage();
    }
    bool rows = is_rows(c->op);
    if (rows && !ms) {
        ms = "256,1024,4096,32768";
    }
    FILE *out = out_path ? fopen(out_path, "a") : stdout;
    if (!out) {
        perror(out_path);
        return 2;
    }
    Lib *lib = NULL;
    GpucStatus st = LIBF(new)(NULL, &lib);
    if (st != GPUC_SUCCESS) {
        die(STR(LIB) "_new", st);
    }
    int64_t n = (int64_t)1 << log2;
    if (!rows) {
        run_case(lib, c, n, 0, out);
    }
    for (const char *p = rows ? ms : ""; *p;) {
        int64_t m = strtoll(p, (char **)&p, 10);
        if (m > 0 && m <= n) {
            run_case(lib, c, n, m, out);
        }
        p += *p == ',';
    }
    LIBF(free)(lib);
    if (out != stdout) {
        fclose(out);
    }
    return 0;
}
