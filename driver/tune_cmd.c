/* tune_cmd.c: `gpuc tune [options] FILE.gdsl`, which chooses the launch
 * parameters of a program's kernels by measuring them (docs/bench.md#tuning).
 *
 * The tunable parameters are the entries' integer template parameters that
 * set a launch attribute (@block, @items, @unroll, @tile), as `gpuc
 * --list-params` prints them. The values tried depend on the kind of the
 * entry's kernels (map, reduce, scan, filter, row or column reduction,
 * matrix product: the search spaces below), and a candidate is tried only
 * when it changes the kernels' launch configuration as `gpuc --emit=ir`
 * prints it (the compiler clamps and rounds some values: a row kernel's
 * block to a power of two, a scan's items to its shared memory).
 *
 * Measurement: the inputs of the entry's `//! bench` blocks are generated
 * once. A *race* measures a set of variants in ONE process, the harness of
 * tune_harness.c: the variants become exports of a copy of the program
 * (`export ENTRY<...> as ENTRY__tuneI;`), `gpuc --emit=cuda` writes their
 * launchers, nvcc builds them with a generated main (the C backend: `--emit=c`
 * and cc) that uploads the inputs once, checks every variant's result
 * against the first's (a variant that differs is rejected, never chosen) and
 * then times one variant per request: a *repeat* is one sample, CUDA events
 * around back-to-back calls filling at least 2 ms (and --runs calls) per
 * bench case, the geometric mean over the cases. Separate processes, as
 * before, spread by 3-10% on an H100 (where the inputs were placed, the
 * clocks of a new context) and cost seconds each. Repeats go in rounds A B
 * C, C B A, A B C, ... (alternating the order cancels a linear drift of
 * clocks or temperature over an even number of rounds), after one warm-up
 * sample. A variant's time is the median of its repeats, its spread (p90 -
 * p10) / median of them; rounds go on in pairs until every spread is under
 * the target (2%), or a cap of repeats, or the time budget. A variant
 * clearly slower than the leader stops being measured.
 *
 * Choice: coordinate descent from the defaults, one race per parameter (the
 * best so far and that parameter's candidates); the fastest replaces the
 * best so far only when faster by more than the margin, the largest of the
 * minimum gain (1%) and both spreads. At the end the default and the choice
 * race again (at least 6 repeats) and the choice is kept only when it beats
 * the default by the margin there. The chosen values go to a tuning file of
 * `ENTRY.PARAM=VALUE` lines, with every race's table as comments, which
 * `gpuc --tuning FILE` reads at build time. `--check FILE.tuning` races a
 * tuning file's choice against the defaults in a fresh process; `--plan`
 * prints the search space; `--simulate MODEL` measures a model of times
 * instead of programs (the tests of the search and the choice rule). */
#define _XOPEN_SOURCE 700 /* strdup, mkdtemp, clock_gettime */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"
#include "tune_harness.h"

enum {
    MAX_TUNABLES = 8,    /* tunable parameters of one entry */
    MAX_CANDIDATES = 16, /* values tried for one parameter */
    MIN_REPEATS = 4,     /* repeats of each variant in a race (two rounds each way) */
    FINAL_REPEATS = 6,   /* in the last race, the default against the choice */
    SAMPLE_US = 2000,    /* the least GPU time of one sample per bench case (back-to-back calls) */
};

/* The values tried for a launch attribute, per kind of kernel (the first
 * word of a kernel line of `gpuc --emit=ir`), besides the default. An
 * attribute a kind does not list has no effect on it (a filter's @unroll,
 * a row kernel's @unroll, every attribute but @tile of a matrix product).
 * Scans: odd item counts stage in shared memory without padding
 * (backend/cuda/scan.c). Filters: at most 64 items (one keep bit each).
 * Row kernels: the block is the most threads a row gets (a power of two). */
typedef struct Space {
    const char *kind, *attr;
    int values[MAX_CANDIDATES]; /* ends at the first 0 */
} Space;

static const Space spaces[] = {
    { "map", "block", { 64, 128, 256, 512, 1024 } },
    { "map", "items", { 1, 2, 4, 8, 16, 32 } },
    { "map", "unroll", { 1, 2, 4, 8 } },
    { "scatter", "block", { 64, 128, 256, 512, 1024 } },
    { "scatter", "items", { 1, 2, 4, 8, 16 } },
    { "scatter", "unroll", { 1, 2, 4 } },
    { "reduce", "block", { 128, 256, 512, 1024 } },
    { "reduce", "items", { 4, 8, 16, 32, 64 } },
    { "reduce", "unroll", { 1, 2, 4, 8, 16 } },
    { "scan", "block", { 64, 96, 128, 192, 256 } },
    { "scan", "items", { 15, 19, 23, 27, 31, 35, 39, 43, 47, 55 } },
    { "scan", "unroll", { 1, 3, 5, 7, 9, 13, 64 } }, /* divisors of odd item counts */
    { "filter", "block", { 64, 128, 256, 512 } },
    { "filter", "items", { 8, 16, 24, 32, 40, 48, 64 } },
    { "segred_row", "block", { 32, 64, 128, 256, 512, 1024 } },
    { "segred_row", "items", { 1, 2, 4, 8, 16 } },
    { "segred_col", "block", { 64, 128, 256, 512, 1024 } },
    { "segred_col", "items", { 1, 2, 4, 8 } },
    { "matmul", "tile", { 8, 16, 32 } },
};

typedef struct Tunable {
    char *entry, *name, *attr; /* "axpy", "BLOCK", "block" */
    long long def, chosen;
} Tunable;

/* One measured case of an entry: a bench block at one size. */
typedef struct TuneCase {
    char *what;      /* "FILE:LINE n=2^26" */
    char *stdin_path;
    TbArgs in;       /* --in NAME=FILE of the generated inputs */
    ThCase vals;     /* the same inputs and the sizes, for the harness */
} TuneCase;

/* A template parameter of an entry, as `gpuc --list-params` prints it: the
 * harness's exports name every one up to the last. */
typedef struct TemplateParam {
    char *entry, *name;
    char *def; /* the default's text, NULL when it has none */
} TemplateParam;

/* A line of a --simulate model: ENTRY [NAME=VALUE ...]: US [noise PCT]. */
typedef struct ModelLine {
    char *entry;
    int npairs;
    char *names[MAX_TUNABLES];
    long long values[MAX_TUNABLES];
    double us, noise; /* noise: a fraction, each run uniform in us * (1 +- noise) */
} ModelLine;

typedef struct Model {
    ModelLine *lines;
    int n;
    double drift;        /* a fraction: each process is slower than the one before by drift * us */
    double jitter;       /* a fraction: each process's times scaled by 1 +- jitter (uniform) */
    double seconds;      /* simulated wall seconds a process takes */
    double build_seconds;
    long long processes; /* processes simulated so far */
    unsigned long long rng;
} Model;

typedef struct Tune {
    const char *self, *file, *backend, *only_entry, *out_path, *arch, *check_path;
    int runs, rounds, max_repeats;
    double target_spread, min_gain; /* fractions */
    double budget;                  /* seconds; 0: none */
    double deadline;                /* on the clock of now() */
    bool plan;
    Model *model;                   /* --simulate */
    double sim_now;
    double sec_per_repeat;          /* wall seconds of one repeat of a variant, measured */
    double sec_per_build;           /* wall seconds of the last harness build, measured */
    TbSession s;
    Tunable *t;
    int nt;
    TemplateParam *tp;
    int ntp;
    ThHarness h;      /* the current race's */
    int nraces;       /* for unique scratch directories */
    TuneCase *cases;
    int ncases;
    int nbuilt;       /* variants built, for unique names */
    FILE *log;        /* the tables, copied into the tuning file */
    char *logtext;
    size_t loglen;
} Tune;

/* Seconds on a monotonic clock (the simulated one under --simulate). */
static double now(const Tune *tu)
{
    if (tu->model) {
        return tu->sim_now;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A line of a table: on standard output and, as a comment, in the tuning file. */
static void __attribute__((format(printf, 2, 3))) say(Tune *tu, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
    if (tu->log) {
        fputs("# ", tu->log);
        va_start(ap, fmt);
        vfprintf(tu->log, fmt, ap);
        va_end(ap);
    }
}

/* Is entry one of the comma-separated names of list? */
static bool listed(const char *list, const char *entry)
{
    size_t n = strlen(entry);
    for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strcspn(p, ",") == n && strncmp(p, entry, n) == 0) {
            return true;
        }
    }
    return false;
}

/* The tunables of the file: `gpuc --list-params` lines with an attribute. */
static int read_tunables(Tune *tu)
{
    char *out = tb_printf("%s/params.txt", tu->s.tmp), *err = tb_printf("%s/params.err", tu->s.tmp);
    char *argv[] = { (char *)tu->self, "--list-params", (char *)tu->file, NULL };
    int st = drv_spawn(argv, "/dev/null", out, err, 60);
    char *text = drv_read_file(st == 0 ? out : err, NULL);
    if (st != 0) {
        fprintf(stderr, "%s", text ? text : "gpuc: error: --list-params failed\n");
        free(text);
        free(out);
        free(err);
        return -1;
    }
    for (char *line = strtok(text ? text : (char[]){ 0 }, "\n"); line; line = strtok(NULL, "\n")) {
        char entry[256], name[256], attr[32], deftext[256];
        long long def;
        /* ENTRY.NAME: KIND[ = DEF][ @attr] */
        if (sscanf(line, "%255[^.].%255[^:]:", entry, name) == 2 &&
            (!tu->only_entry || listed(tu->only_entry, entry))) {
            const char *eq = strstr(line, " = ");
            tu->tp = tb_realloc(tu->tp, sizeof *tu->tp * (size_t)(tu->ntp + 1));
            tu->tp[tu->ntp++] = (TemplateParam){ tb_strdup(entry), tb_strdup(name),
                                                 eq && sscanf(eq + 3, "%255s", deftext) == 1 ? tb_strdup(deftext) : NULL };
        }
        if (sscanf(line, "%255[^.].%255[^:]: int = %lld @%31s", entry, name, &def, attr) != 4) {
            continue;
        }
        if (tu->only_entry && !listed(tu->only_entry, entry)) {
            continue;
        }
        tu->t = tb_realloc(tu->t, sizeof *tu->t * (size_t)(tu->nt + 1));
        tu->t[tu->nt++] = (Tunable){ tb_strdup(entry), tb_strdup(name), tb_strdup(attr), def, def };
    }
    free(text);
    free(out);
    free(err);
    return 0;
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_long_long(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* The mean of the middle half of v[0..n) (sorted in place). */
static double trimmed_mean(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int lo = n / 4, hi = n - n / 4;
    double s = 0;
    for (int i = lo; i < hi; i++) {
        s += v[i];
    }
    return s / (hi - lo);
}

/* The p-quantile of sorted v[0..n), interpolated linearly between ranks. */
static double quantile(const double *v, int n, double p)
{
    double h = p * (n - 1);
    int i = (int)h;
    return i + 1 < n ? v[i] + (h - i) * (v[i + 1] - v[i]) : v[n - 1];
}

/* The median of v[0..n) and its spread (p90 - p10) / median. */
static void median_spread(const double *v, int n, double *median, double *spread)
{
    double *s = tb_malloc(sizeof *s * (size_t)(n ? n : 1));
    memcpy(s, v, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    *median = n ? quantile(s, n, 0.5) : INFINITY;
    *spread = n > 1 && *median > 0 ? (quantile(s, n, 0.9) - quantile(s, n, 0.1)) / *median : 0;
    free(s);
}

/* The least difference that counts: the minimum gain, or the larger spread
 * when it is larger (a difference inside the noise is no difference). */
static double margin(const Tune *tu, double spread_a, double spread_b)
{
    double m = tu->min_gain;
    m = spread_a > m ? spread_a : m;
    return spread_b > m ? spread_b : m;
}

/* Does a time of us (spread sp) beat base_us (spread base_sp) by the margin? */
static bool beats(const Tune *tu, double us, double sp, double base_us, double base_sp)
{
    return us < base_us * (1 - margin(tu, sp, base_sp));
}

/* ---- the search space ---- */

static const Space *space_of(const char *kind, const char *attr)
{
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) {
        if (strncmp(kind, spaces[i].kind, strlen(spaces[i].kind)) == 0 && strcmp(attr, spaces[i].attr) == 0) {
            return &spaces[i];
        }
    }
    return NULL;
}

/* The values tried for tunable t of an entry whose kernels are of the
 * space-separated kinds: the union of the kinds' spaces, in increasing
 * order. */
static int candidates(const Tunable *t, const char *kinds, long long *v)
{
    int n = 0;
    for (const char *k = kinds; *k; k += strcspn(k, " ") + (k[strcspn(k, " ")] == ' ')) {
        char kind[64];
        snprintf(kind, sizeof kind, "%.*s", (int)strcspn(k, " "), k);
        const Space *sp = space_of(kind, t->attr);
        for (int i = 0; sp && i < MAX_CANDIDATES && sp->values[i]; i++) {
            bool seen = false;
            for (int j = 0; j < n && !seen; j++) {
                seen = v[j] == sp->values[i];
            }
            if (!seen && n < MAX_CANDIDATES) {
                v[n++] = sp->values[i];
            }
        }
    }
    qsort(v, (size_t)n, sizeof *v, cmp_long_long);
    return n;
}
/* ---- the cases: every bench block of the entry, at the last value of each size line ---- */

static const char *item_word(const char *t, const char *w)
{
    size_t n = strlen(w);
    return strncmp(t, w, n) == 0 && (t[n] == ' ' || t[n] == '\t') ? t + n + strspn(t + n, " \t") : NULL;
}

static void add_value(ThCase *c, char *name, char *npy, char *literal)
{
    c->v = tb_realloc(c->v, sizeof *c->v * (size_t)(c->n + 1));
    c->v[c->n++] = (ThValue){ name, npy, literal };
}

/* A scalar component as a C literal (exact: floats in hexadecimal). */
static char *scalar_literal(const TbComp *c)
{
    const unsigned char *d = c->data;
    switch (c->kind) {
    case TB_BOOL: return tb_printf("%d", d[0] != 0);
    case TB_I32: { int32_t x; memcpy(&x, d, 4); return tb_printf("%d", (int)x); }
    case TB_I64: { int64_t x; memcpy(&x, d, 8); return tb_printf("%lldLL", (long long)x); }
    case TB_U32: { uint32_t x; memcpy(&x, d, 4); return tb_printf("%uu", (unsigned)x); }
    case TB_U64: { uint64_t x; memcpy(&x, d, 8); return tb_printf("%lluULL", (unsigned long long)x); }
    case TB_F32: { float x; memcpy(&x, d, 4); return isfinite(x) ? tb_printf("%af", (double)x) : tb_strdup("0.0f / 0.0f"); }
    default: { double x; memcpy(&x, d, 8); return isfinite(x) ? tb_printf("%a", x) : tb_strdup("0.0 / 0.0"); }
    }
}

/* The harness's view of case c's inputs (every parameter and size by name).
 * Returns NULL or a message. */
static char *harness_values(Tune *tu, TuneCase *c, const TbBlock *bl, const TbSig *sig, const TbSize *sizes,
                            int nsizes)
{
    for (int i = 0; i < nsizes; i++) {
        add_value(&c->vals, tb_strdup(sizes[i].name), NULL, tb_printf("%lldLL", sizes[i].value));
    }
    for (int p = 0; p < sig->nparams; p++) {
        const char *pn = sig->pnames[p];
        size_t n = strlen(pn);
        bool found = false;
        for (int i = 0; i + 1 < c->in.n && !found; i += 2) {
            const char *a = c->in.v[i + 1];
            if (strncmp(a, pn, n) == 0 && a[n] == '.') {
                return tb_printf("parameter '%s' (%s) has several components: gpuc tune measures entries whose "
                                 "parameters are arrays or scalars", pn, sig->ptypes[p]);
            }
            if (strncmp(a, pn, n) == 0 && a[n] == '=') {
                add_value(&c->vals, tb_strdup(pn), tb_strdup(a + n + 1), NULL);
                found = true;
            }
        }
        const char *val = found ? NULL : tb_block_input(bl, pn, NULL);
        if (!val) {
            continue; /* a size, or generated */
        }
        TbType *t = tb_parse_type(sig->ptypes[p], false);
        char perr[300] = "cannot read the parameter's type";
        TbComp *v = t ? tb_parse_value(val, t, perr, sizeof perr) : NULL;
        char *err = NULL;
        if (!v) {
            err = tb_printf("parameter '%s' (%s): %s", pn, sig->ptypes[p], perr);
        } else if (t->nleaves != 1) {
            err = tb_printf("parameter '%s' (%s) has several components: gpuc tune measures entries whose "
                            "parameters are arrays or scalars", pn, sig->ptypes[p]);
        } else if (v->rank == 0) {
            add_value(&c->vals, tb_strdup(pn), NULL, scalar_literal(v));
        } else {
            char *path = tb_printf("%s/value%d.npy", tu->s.tmp, tu->s.counter++);
            if (!tb_npy_write(path, v->kind, v->rank, v->shape, v->data, v->count)) {
                err = tb_printf("cannot write '%s'", path);
                free(path);
            } else {
                add_value(&c->vals, tb_strdup(pn), path, NULL);
            }
        }
        tb_comps_free(v, t ? t->nleaves : 0);
        tb_type_free(t);
        if (err) {
            return err;
        }
    }
    return NULL;
}

static void free_values(ThCase *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->v[i].name);
        free(c->v[i].npy);
        free(c->v[i].literal);
    }
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* The case of block bl: generated inputs, standard input for the inline ones.
 * Returns 0, or 1 after an error naming FILE:LINE:COL. */
static int make_case(Tune *tu, const TbBlock *bl, const TbSig *sig)
{
    TbSize sizes[8];
    int nsizes = 0;
    char *sizes_text = tb_strdup("");
    for (int i = 0; i < bl->nitems; i++) {
        const char *v = item_word(bl->items[i].text, "size");
        if (!v) {
            continue;
        }
        size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        const char *eq = v + n + strspn(v + n, " \t");
        const char *last = strrchr(eq, ',');
        long long x;
        if (n == 0 || *eq != '=' || nsizes == 8) {
            fprintf(stderr, "%s:%d:%d: error: expected 'size NAME = VALUE, VALUE, ...'\n", tu->file,
                    bl->items[i].line, bl->items[i].col);
            free(sizes_text);
            return 1;
        }
        if (!tb_read_size(last ? last + 1 : eq + 1, &x)) {
            char *t = tb_strdup(last ? last + 1 : eq + 1);
            fprintf(stderr, "%s:%d:%d: error: size '%.*s': expected a size (N, 2^K or 2^K+N), found '%s'\n", tu->file,
                    bl->items[i].line, bl->items[i].col, (int)n, v, tb_trim(t));
            free(t);
            free(sizes_text);
            return 1;
        }
        sizes[nsizes++] = (TbSize){ tb_strndup(v, n), x };
        char *j = tb_printf("%s %.*s=%lld", sizes_text, (int)n, v, x);
        free(sizes_text);
        sizes_text = j;
    }
    TuneCase c = { 0 };
    c.what = tb_printf("%s:%d%s", tu->file, bl->line, sizes_text);
    c.stdin_path = tb_printf("%s/stdin%d", tu->s.tmp, tu->s.counter++);
    FILE *in = fopen(c.stdin_path, "w");
    char *err = in ? NULL : tb_printf("cannot write '%s'", c.stdin_path);
    char **gen = NULL;
    int ngen = 0;
    uint64_t bytes = 0;
    if (!err) {
        char *base = tb_printf("%s/in%d", tu->s.tmp, tu->s.counter++);
        int line, col;
        char *e = tb_write_inputs(bl, sig, sizes, nsizes, base, in, &c.in, &gen, &ngen, &bytes, &line, &col);
        free(base);
        if (e) {
            err = tb_printf("%s:%d:%d: error: %s", tu->file, line, col, e);
            free(e);
        }
    }
    if (in && fclose(in) != 0 && !err) {
        err = tb_printf("cannot write '%s'", c.stdin_path);
    }
    for (int i = 0; i < ngen; i++) {
        free(gen[i]);
    }
    free(gen);
    if (!err) {
        char *e = harness_values(tu, &c, bl, sig, sizes, nsizes);
        err = e ? tb_printf("%s:%d:%d: error: %s", tu->file, bl->line, bl->col, e) : NULL;
        free(e);
    }
    for (int i = 0; i < nsizes; i++) {
        free((char *)sizes[i].name);
    }
    free(sizes_text);
    if (err) {
        fprintf(stderr, "%s\n", err);
        free(err);
        free(c.what);
        free(c.stdin_path);
        tb_args_free(&c.in);
        free_values(&c.vals);
        return 1;
    }
    tu->cases = tb_realloc(tu->cases, sizeof *tu->cases * (size_t)(tu->ncases + 1));
    tu->cases[tu->ncases++] = c;
    return 0;
}

static void free_cases(Tune *tu)
{
    for (int i = 0; i < tu->ncases; i++) {
        free(tu->cases[i].what);
        unlink(tu->cases[i].stdin_path);
        free(tu->cases[i].stdin_path);
        tb_args_free(&tu->cases[i].in);
        free_values(&tu->cases[i].vals);
    }
    free(tu->cases);
    tu->cases = NULL;
    tu->ncases = 0;
}

/* The cases of entry: its bench blocks. Returns 0, or 1 after an error. */
static int read_cases(Tune *tu, const char *entry)
{
    char *src = drv_read_file(tu->file, NULL);
    if (!src) {
        fprintf(stderr, "gpuc: error: cannot read '%s'\n", tu->file);
        return 1;
    }
    int nb = 0, rc = 0;
    TbBlock *b = tb_read_blocks(src, &nb);
    for (int i = 0; i < nb && rc == 0; i++) {
        if (!b[i].bench || strcmp(b[i].entry, entry) != 0) {
            continue;
        }
        const char *exe, *run_name;
        const TbSig *sig;
        char *msg = NULL;
        bool skip = false;
        /* the default build: the signature of the entry */
        int st = tb_prepare_opts(&tu->s, tu->file, &b[i], "--arch=none", &exe, &sig, &run_name, &msg, &skip);
        if (st != 0) {
            fprintf(stderr, "%s:%d:%d: error: %s\n", tu->file, b[i].line, b[i].col, msg ? msg : "cannot build");
            rc = 1;
        } else {
            rc = make_case(tu, &b[i], sig);
        }
        free(msg);
    }
    tb_blocks_free(b, nb);
    free(src);
    if (rc == 0 && tu->ncases == 0) {
        fprintf(stderr, "gpuc: error: %s: the entry '%s' has no `//! bench %s` block to measure it with\n", tu->file,
                entry, entry);
        rc = 1;
    }
    return rc;
}


/* ---- the model of --simulate ---- */

/* Read a model: `seconds S`, `build-seconds S`, `drift PCT`, `jitter PCT`, and lines
 * `ENTRY [NAME=VALUE ...]: US [noise PCT]`; # starts a comment. Returns
 * NULL after an error naming FILE:LINE. */
static Model *read_model(const char *path)
{
    char *text = drv_read_file(path, NULL);
    if (!text) {
        fprintf(stderr, "gpuc tune: error: --simulate: cannot read '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    Model *m = tb_malloc(sizeof *m);
    *m = (Model){ .seconds = 1, .rng = 0x9e3779b97f4a7c15ull };
    int lineno = 0;
    bool ok = true;
    for (char *line = text, *next; ok && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) {
            *next++ = 0;
        }
        lineno++;
        line[strcspn(line, "#")] = 0;
        tb_trim(line);
        double x;
        char rest[2];
        if (!*line) {
            continue;
        }
        if (sscanf(line, "seconds %lf %1s", &x, rest) == 1 && x >= 0) {
            m->seconds = x;
        } else if (sscanf(line, "build-seconds %lf %1s", &x, rest) == 1 && x >= 0) {
            m->build_seconds = x;
        } else if (sscanf(line, "drift %lf %1s", &x, rest) == 1) {
            m->drift = x / 100;
        } else if (sscanf(line, "jitter %lf %1s", &x, rest) == 1 && x >= 0 && x < 100) {
            m->jitter = x / 100;
        } else {
            char *colon = strchr(line, ':');
            ModelLine ml = { 0 };
            double noise = 0;
            int nf = colon ? sscanf(colon + 1, " %lf noise %lf %1s", &ml.us, &noise, rest) : 0;
            ok = colon && (nf == 1 || nf == 2) && ml.us > 0 && noise >= 0 && noise < 100;
            if (ok) {
                *colon = 0;
                for (char *w = strtok(line, " \t"); ok && w; w = strtok(NULL, " \t")) {
                    if (!ml.entry) {
                        ml.entry = tb_strdup(w);
                        continue;
                    }
                    char name[128], end;
                    long long v;
                    ok = ml.npairs < MAX_TUNABLES && sscanf(w, "%127[^=]=%lld%c", name, &v, &end) == 2;
                    if (ok) {
                        ml.names[ml.npairs] = tb_strdup(name);
                        ml.values[ml.npairs++] = v;
                    }
                }
                ok = ok && ml.entry;
            }
            if (!ok) {
                fprintf(stderr, "%s:%d:1: error: expected 'ENTRY [NAME=VALUE ...]: US [noise PCT]', 'seconds S', "
                        "'build-seconds S', 'drift PCT' or 'jitter PCT'\n", path, lineno);
                free(ml.entry);
                for (int i = 0; i < ml.npairs; i++) {
                    free(ml.names[i]);
                }
                break;
            }
            ml.noise = noise / 100;
            m->lines = tb_realloc(m->lines, sizeof *m->lines * (size_t)(m->n + 1));
            m->lines[m->n++] = ml;
        }
    }
    free(text);
    if (!ok) {
        for (int i = 0; i < m->n; i++) {
            free(m->lines[i].entry);
            for (int j = 0; j < m->lines[i].npairs; j++) {
                free(m->lines[i].names[j]);
            }
        }
        free(m->lines);
        free(m);
        return NULL;
    }
    return m;
}

static void free_model(Model *m)
{
    for (int i = 0; m && i < m->n; i++) {
        free(m->lines[i].entry);
        for (int j = 0; j < m->lines[i].npairs; j++) {
            free(m->lines[i].names[j]);
        }
    }
    if (m) {
        free(m->lines);
    }
    free(m);
}

/* Uniform in [0, 1) (xorshift64*: the same sequence on every machine). */
static double model_uniform(Model *m)
{
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return (double)((m->rng * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

/* ---- variants ---- */

typedef struct Variant {
    long long values[MAX_TUNABLES]; /* of the entry's tunables, in order */
    char *config;    /* the kernels' launch configuration (gpuc --emit=ir); NULL: refused, see why */
    char *why;       /* the first line of a failure */
    const char *note; /* why it stopped being measured, or NULL */
    double *samples; /* one per repeat */
    int nsamples;
    bool failed;     /* did not build or run */
    bool retired;    /* no longer measured in this race */
    double us, spread;
} Variant;

static void free_variant(Variant *v)
{
    free(v->why);
    free(v->config);
    free(v->samples);
    memset(v, 0, sizeof *v);
}

/* The entry's tunables (indices into tu->t). */
static int entry_tunables(const Tune *tu, const char *entry, int *idx)
{
    int n = 0;
    for (int i = 0; i < tu->nt && n < MAX_TUNABLES; i++) {
        if (strcmp(tu->t[i].entry, entry) == 0) {
            idx[n++] = i;
        }
    }
    return n;
}

static char *describe(const Tune *tu, const int *idx, int n, const long long *values)
{
    char *d = tb_strdup("");
    for (int i = 0; i < n; i++) {
        char *j = tb_printf("%s%s%s=%lld", d, i ? " " : "", tu->t[idx[i]].name, values[i]);
        free(d);
        d = j;
    }
    return d;
}

/* The launch configuration of the entry's kernels with these values, from
 * `gpuc --emit=ir -D ...`: its kernel lines without names and line numbers,
 * "scan block=128 items=39 unroll=39 grid=tiles2d", joined by "; ". NULL
 * with *why when the compiler refuses the values. */
static char *kernel_config(Tune *tu, const char *entry, const int *idx, int nidx, const long long *values, char **why)
{
    char *out = tb_printf("%s/ir.txt", tu->s.tmp);
    TbArgs a = { 0 };
    tb_args_add(&a, tb_strdup(tu->self));
    tb_args_add(&a, tb_strdup("--emit=ir"));
    for (int i = 0; i < nidx; i++) {
        tb_args_add(&a, tb_strdup("-D"));
        tb_args_add(&a, tb_printf("%s.%s=%lld", entry, tu->t[idx[i]].name, values[i]));
    }
    tb_args_add(&a, tb_strdup(tu->file));
    a.v = tb_realloc(a.v, sizeof *a.v * (size_t)(a.n + 1));
    a.v[a.n] = NULL;
    int st = drv_spawn(a.v, "/dev/null", out, out, 60);
    tb_args_free(&a);
    char *text = drv_read_file(out, NULL);
    unlink(out);
    free(out);
    char *config = NULL;
    if (st != 0 || !text) {
        *why = text ? tb_first_line(tb_trim(text)) : tb_strdup("gpuc --emit=ir failed");
        free(text);
        return NULL;
    }
    char *head = tb_printf("kernels %s: ", entry);
    char *p = strstr(text, head);
    while (p && p != text && p[-1] != '\n') {
        p = strstr(p + 1, head);
    }
    for (p = p ? strchr(p, '\n') : NULL; p && strncmp(p, "\n  kernel ", 10) == 0; p = strchr(p + 1, '\n')) {
        const char *k = strstr(p + 10, ": ");
        const char *end = strchr(p + 1, '\n');
        const char *semi = strstr(p + 10, "  ;");
        if (!k || (end && k > end)) {
            break;
        }
        k += 2;
        size_t len = (semi && (!end || semi < end) ? (size_t)(semi - k) : end ? (size_t)(end - k) : strlen(k));
        char *c = tb_printf("%s%s%.*s", config ? config : "", config ? "; " : "", (int)len, k);
        free(config);
        config = c;
    }
    free(head);
    free(text);
    if (!config) {
        *why = tb_printf("gpuc --emit=ir printed no kernels for '%s'", entry);
    }
    return config;
}

/* The kinds of the kernels of a configuration: "scan", "segred_row map". */
static char *kinds_of(const char *config)
{
    char *kinds = tb_strdup("");
    for (const char *p = config; p && *p;) {
        size_t n = strcspn(p, " ;");
        char *w = tb_strndup(p, n);
        bool seen = false;
        for (const char *k = kinds; *k && !seen; k += strcspn(k, " ") + (k[strcspn(k, " ")] == ' ')) {
            seen = strcspn(k, " ") == n && strncmp(k, w, n) == 0;
        }
        if (!seen) {
            char *j = tb_printf("%s%s%s", kinds, *kinds ? " " : "", w);
            free(kinds);
            kinds = j;
        }
        free(w);
        p = strstr(p, "; ");
        p = p ? p + 2 : NULL;
    }
    return kinds;
}

/* The template arguments that make variant v of entry an export: every
 * template parameter up to the last tunable, the tunables at v's values,
 * the others at their defaults. NULL after a message when one has none. */
static char *template_args(const Tune *tu, const char *entry, const int *idx, int nidx, const Variant *v)
{
    int last = -1;
    for (int i = 0; i < tu->ntp; i++) {
        for (int k = 0; k < nidx; k++) {
            if (strcmp(tu->tp[i].entry, entry) == 0 && strcmp(tu->tp[i].name, tu->t[idx[k]].name) == 0) {
                last = i;
            }
        }
    }
    char *args = tb_strdup("");
    for (int i = 0; i <= last; i++) {
        if (strcmp(tu->tp[i].entry, entry) != 0) {
            continue;
        }
        char *value = NULL;
        for (int k = 0; k < nidx && !value; k++) {
            if (strcmp(tu->tp[i].name, tu->t[idx[k]].name) == 0) {
                value = tb_printf("%lld", v->values[k]);
            }
        }
        if (!value && !tu->tp[i].def) {
            free(args);
            return NULL;
        }
        char *j = tb_printf("%s%s%s", args, *args ? ", " : "", value ? value : tu->tp[i].def);
        free(value);
        free(args);
        args = j;
    }
    return args;
}

/* Build and start the harness of a race (tune_harness.h): the variants m[0..n)
 * in one program, their results checked against m[0]'s. A variant that fails
 * or differs is marked failed with why; false when none can be measured. */
static bool start_harness(Tune *tu, const char *entry, const int *idx, int nidx, Variant **m, int n)
{
    double t0 = now(tu);
    if (tu->model) {
        tu->sim_now += tu->model->build_seconds;
        tu->sec_per_build = now(tu) - t0;
        return true;
    }
    char *dir = tb_printf("%s/race%d", tu->s.tmp, tu->nraces++);
    char **targs = tb_malloc(sizeof *targs * (size_t)n), **why = tb_malloc(sizeof *why * (size_t)n);
    ThCase *cases = tb_malloc(sizeof *cases * (size_t)(tu->ncases ? tu->ncases : 1));
    for (int i = 0; i < tu->ncases; i++) {
        cases[i] = tu->cases[i].vals;
    }
    char *err = NULL;
    for (int i = 0; i < n; i++) {
        targs[i] = template_args(tu, entry, idx, nidx, m[i]);
        if (!targs[i] && !err) {
            err = tb_printf("a template parameter of '%s' has no default", entry);
        }
    }
    if (!err && mkdir(dir, 0700) != 0) {
        err = tb_printf("cannot make '%s': %s", dir, strerror(errno));
    }
    if (!err) {
        /* --arch: the first of the list */
        char *arch = tu->arch ? tb_strndup(tu->arch, strcspn(tu->arch, ",")) : NULL;
        ThSpec sp = { tu->self, tu->file, dir, entry, strcmp(tu->backend, "cuda") == 0, arch,
                      SAMPLE_US, tu->runs, targs, n, cases, tu->ncases };
        err = th_start(&sp, &tu->h, why);
        free(arch);
        for (int i = 0; i < n; i++) {
            if (why[i]) {
                m[i]->failed = true;
                m[i]->note = "failed";
                free(m[i]->why);
                m[i]->why = why[i];
            }
        }
    }
    if (err) {
        for (int i = 0; i < n; i++) {
            if (!m[i]->failed) {
                m[i]->failed = true;
                m[i]->note = "failed";
                free(m[i]->why);
                m[i]->why = tb_strdup(err);
            }
        }
        fprintf(stderr, "gpuc tune: %s: %s\n", entry, err);
    }
    for (int i = 0; i < n; i++) {
        free(targs[i]);
    }
    free(targs);
    free(why);
    free(cases);
    free(dir);
    free(err);
    tu->sec_per_build = now(tu) - t0;
    return !m[0]->failed;
}

/* A simulated process: the model's time for the variant, with its noise and
 * the drift of the processes so far, through the same trimmed mean. */
static char *run_model(Tune *tu, const char *entry, const int *idx, int nidx, const Variant *v, double *us)
{
    Model *m = tu->model;
    const ModelLine *best = NULL;
    for (int i = 0; i < m->n; i++) {
        const ModelLine *ml = &m->lines[i];
        bool match = strcmp(ml->entry, entry) == 0;
        for (int j = 0; j < ml->npairs && match; j++) {
            bool found = false;
            for (int k = 0; k < nidx && !found; k++) {
                found = strcmp(tu->t[idx[k]].name, ml->names[j]) == 0 && v->values[k] == ml->values[j];
            }
            match = found;
        }
        if (match && (!best || ml->npairs > best->npairs)) {
            best = ml;
        }
    }
    if (!best) {
        return tb_printf("the model has no line for '%s'", entry);
    }
    int warm = tu->runs / 3 > 2 ? tu->runs / 3 : 2;
    int total = tu->runs + warm;
    double *t = tb_malloc(sizeof *t * (size_t)total);
    double slow = (1 + m->drift * (double)m->processes) * (1 + m->jitter * (2 * model_uniform(m) - 1));
    for (int r = 0; r < total; r++) {
        t[r] = best->us * slow * (1 + best->noise * (2 * model_uniform(m) - 1));
    }
    *us = trimmed_mean(t + warm, total - warm);
    free(t);
    m->processes++;
    tu->sim_now += m->seconds;
    return NULL;
}

/* One repeat of a variant: a sample of the race's harness (the geometric
 * mean over the cases of back-to-back calls timed together). */
static char *repeat(Tune *tu, const char *entry, const int *idx, int nidx, const Variant *v, int slot, double *sample)
{
    if (tu->model) {
        return run_model(tu, entry, idx, nidx, v, sample);
    }
    return th_sample(&tu->h, slot, sample);
}

static void variant_stats(Variant *v)
{
    median_spread(v->samples, v->nsamples, &v->us, &v->spread);
}

/* Measure the variants m[0..n) interleaved (module comment): one warm-up
 * process of the first, then rounds in alternating order, in pairs, at
 * least min_rep repeats each, until every variant still measured has a
 * spread under the target, or max_repeats, or the deadline. Variants that
 * do not fit the time left before the deadline are not measured (m[0]
 * always is). Returns false when not even m[0] and one more could be. */
static bool race(Tune *tu, const char *entry, const int *idx, int nidx, Variant **m, int n, int min_rep,
                 double deadline)
{
    for (int i = 0; i < n; i++) {
        Variant *v = m[i];
        free(v->samples);
        v->samples = tb_malloc(sizeof *v->samples * (size_t)(tu->max_repeats > min_rep ? tu->max_repeats : min_rep));
        v->nsamples = 0;
        v->failed = false;
        v->retired = false;
        v->note = NULL;
        v->us = INFINITY;
        v->spread = 0;
    }
    if (now(tu) + tu->sec_per_build > deadline) {
        for (int i = 0; i < n; i++) {
            m[i]->retired = true;
            m[i]->note = "not measured: time budget";
        }
        return false;
    }
    start_harness(tu, entry, idx, nidx, m, n);
    /* the warm-up: the GPU's clocks and the page cache of the inputs */
    double t0 = now(tu), warm_sample;
    for (int i = 0; i < n; i++) {
        if (!m[i]->failed) {
            char *err = repeat(tu, entry, idx, nidx, m[i], i, &warm_sample);
            if (err) {
                m[i]->failed = true;
                m[i]->note = "failed";
                free(m[i]->why);
                m[i]->why = err;
                continue;
            }
            tu->sec_per_repeat = now(tu) - t0;
            break;
        }
    }
    int active = 0;
    for (int i = 0; i < n; i++) {
        if (!m[i]->failed) {
            active++;
            double cost = tu->sec_per_repeat * min_rep * active;
            if (now(tu) + cost > deadline && (i > 0 || m[0]->failed)) {
                m[i]->retired = true;
                m[i]->note = "not measured: time budget";
                active--;
            }
        }
    }
    if (m[0]->failed || active < 2) {
        th_stop(&tu->h);
        return false;
    }
    for (int rep = 0;; rep++) {
        bool backward = rep % 2 == 1;
        double round_start = now(tu);
        int ran = 0;
        for (int j = 0; j < n; j++) {
            int slot = backward ? n - 1 - j : j;
            Variant *v = m[slot];
            if (v->failed || v->retired) {
                continue;
            }
            double s;
            char *err = repeat(tu, entry, idx, nidx, v, slot, &s);
            ran++;
            if (err) {
                v->failed = true;
                v->note = "failed";
                free(v->why);
                v->why = err;
                continue;
            }
            v->samples[v->nsamples++] = s;
        }
        if (ran) {
            tu->sec_per_repeat = (now(tu) - round_start) / ran;
        }
        if (rep % 2 == 0 || rep + 1 < min_rep) {
            continue;
        }
        Variant *leader = NULL;
        for (int i = 0; i < n; i++) {
            if (!m[i]->failed && m[i]->nsamples) {
                variant_stats(m[i]);
                if (!m[i]->retired && (!leader || m[i]->us < leader->us)) {
                    leader = m[i];
                }
            }
        }
        /* stop measuring what is slower than the leader even at the ends of both spreads */
        bool settled = true;
        int still = 0;
        for (int i = 0; i < n && leader; i++) {
            Variant *v = m[i];
            if (v->failed || v->retired) {
                continue;
            }
            if (i > 0 && v != leader &&
                v->us * (1 - v->spread) > leader->us * (1 + leader->spread) * (1 + tu->min_gain)) {
                v->retired = true;
                v->note = "clearly slower: no more repeats";
                continue;
            }
            still++;
            settled = settled && v->spread <= tu->target_spread;
        }
        if (!leader || settled || rep + 1 >= tu->max_repeats) {
            break;
        }
        if (now(tu) + 2 * tu->sec_per_repeat * still > deadline) {
            for (int i = 0; i < n; i++) {
                if (!m[i]->failed && !m[i]->retired && m[i]->spread > tu->target_spread) {
                    m[i]->note = "time budget: no more repeats";
                }
            }
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!m[i]->failed && m[i]->nsamples) {
            variant_stats(m[i]);
        } else {
            m[i]->us = INFINITY;
        }
    }
    th_stop(&tu->h);
    return true;
}

/* The table of a race: a line per variant. */
static void print_race(Tune *tu, const int *idx, int nidx, Variant **m, int n, const char *first_label)
{
    say(tu, "  %-36s %11s %8s %7s\n", "configuration", "time (us)", "spread", "repeats");
    for (int i = 0; i < n; i++) {
        Variant *v = m[i];
        char *d = describe(tu, idx, nidx, v->values);
        char *note = v->failed ? tb_printf("failed: %s", v->why ? v->why : "see above")
                     : v->note ? tb_strdup(v->note)
                     : v->nsamples && v->spread > tu->target_spread
                         ? tb_printf("spread over %.2f%% after %d repeats", 100 * tu->target_spread, v->nsamples)
                         : tb_strdup("");
        if (isinf(v->us)) {
            say(tu, "  %-36s %11s %8s %7d  %s%s%s\n", d, "-", "-", v->nsamples, i == 0 ? first_label : "",
                i == 0 && *note ? "; " : "", note);
        } else {
            say(tu, "  %-36s %11.2f %7.2f%% %7d  %s%s%s\n", d, v->us, 100 * v->spread, v->nsamples,
                i == 0 ? first_label : "", i == 0 && *note ? "; " : "", note);
        }
        free(note);
        free(d);
    }
}

/* The fastest variant of a race that was measured, or NULL. */
static Variant *fastest(Variant **m, int n)
{
    Variant *best = NULL;
    for (int i = 0; i < n; i++) {
        if (!m[i]->failed && m[i]->nsamples && (!best || m[i]->us < best->us)) {
            best = m[i];
        }
    }
    return best;
}

/* The candidates of parameter p around the values of base, nearest first:
 * one variant per distinct launch configuration, other than base's. With plan, every value
 * tried is printed with what became of it. Returns how many. */
static int make_candidates(Tune *tu, const char *entry, const int *idx, int nidx, const Variant *base, int p,
                           const char *kinds, Variant *out, bool plan)
{
    Tunable *t = &tu->t[idx[p]];
    long long cand[MAX_CANDIDATES];
    int nc = candidates(t, kinds, cand), n = 0;
    /* nearest to the base first (by ratio), so that a race cut short by the
     * budget keeps the values next to the current one */
    for (int i = 1; i < nc; i++) {
        for (int j = i; j > 0 && fabs(log((double)cand[j] / (double)base->values[p])) <
                                     fabs(log((double)cand[j - 1] / (double)base->values[p])) - 1e-12; j--) {
            long long x = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = x;
        }
    }
    if (plan) {
        say(tu, "  %s (@%s): default %lld%s\n", t->name, t->attr, t->def,
            nc ? "" : ", nothing else to try: the attribute does not change these kernels");
    }
    for (int k = 0; k < nc; k++) {
        if (cand[k] == base->values[p]) {
            continue;
        }
        Variant v = { 0 };
        memcpy(v.values, base->values, sizeof v.values);
        v.values[p] = cand[k];
        /* an unroll equal to the items (the compiler's default: the whole
         * per-thread loop written out) follows the items */
        for (int q = 0; q < nidx && strcmp(t->attr, "items") == 0; q++) {
            if (strcmp(tu->t[idx[q]].attr, "unroll") == 0 && base->values[q] == base->values[p]) {
                v.values[q] = cand[k];
            }
        }
        char *why = NULL;
        v.config = kernel_config(tu, entry, idx, nidx, v.values, &why);
        const Variant *same = v.config && strcmp(v.config, base->config) == 0 ? base : NULL;
        for (int j = 0; j < n && v.config && !same; j++) {
            same = strcmp(out[j].config, v.config) == 0 ? &out[j] : NULL;
        }
        if (plan) {
            if (!v.config) {
                say(tu, "    %s=%lld: refused: %s\n", t->name, cand[k], why);
            } else if (same) {
                char *d = describe(tu, idx, nidx, same->values);
                say(tu, "    %s=%lld: the same kernels as %s\n", t->name, cand[k], d);
                free(d);
            } else {
                char *d = describe(tu, idx, nidx, v.values);
                say(tu, "    %s: %s\n", d, v.config);
                free(d);
            }
        }
        free(why);
        if (!v.config || same) {
            free_variant(&v);
            continue;
        }
        out[n++] = v;
    }
    return n;
}

/* Read the bench cases of entry and its default variant; NULL after an error. */
static bool start_entry(Tune *tu, const char *entry, int *idx, int *nidx, Variant *def)
{
    if (!tu->model && !tu->plan && read_cases(tu, entry) != 0) {
        return false;
    }
    *nidx = entry_tunables(tu, entry, idx);
    memset(def, 0, sizeof *def);
    for (int i = 0; i < *nidx; i++) {
        def->values[i] = tu->t[idx[i]].def;
    }
    char *why = NULL;
    def->config = kernel_config(tu, entry, idx, *nidx, def->values, &why);
    if (!def->config) {
        fprintf(stderr, "gpuc: error: %s: the defaults of '%s' do not compile: %s\n", tu->file, entry, why);
        free(why);
        free_cases(tu);
        return false;
    }
    return true;
}

/* --plan: the kernels of the entry and the values each parameter would try. */
static int plan_entry(Tune *tu, const char *entry)
{
    int idx[MAX_TUNABLES], nidx;
    Variant def;
    if (!start_entry(tu, entry, idx, &nidx, &def)) {
        return -1;
    }
    char *kinds = kinds_of(def.config);
    say(tu, "%s: %s\n", entry, def.config);
    for (int p = 0; p < nidx; p++) {
        Variant vs[MAX_CANDIDATES];
        int n = make_candidates(tu, entry, idx, nidx, &def, p, kinds, vs, true);
        for (int i = 0; i < n; i++) {
            free_variant(&vs[i]);
        }
    }
    free(kinds);
    free_variant(&def);
    return 0;
}

static int tune_entry(Tune *tu, const char *entry, int entries_left)
{
    int idx[MAX_TUNABLES], nidx;
    Variant def;
    double start = now(tu);
    /* an equal share of the time left; the last 30% of it for the final race */
    double entry_deadline = tu->budget > 0 ? start + (tu->deadline - start) / entries_left : INFINITY;
    double search_deadline = tu->budget > 0 ? start + 0.7 * (entry_deadline - start) : INFINITY;
    fprintf(stderr, "gpuc tune: %s\n", entry);
    if (!start_entry(tu, entry, idx, &nidx, &def)) {
        return -1;
    }
    char *kinds = kinds_of(def.config);
    char *ddesc = describe(tu, idx, nidx, def.values);
    say(tu, "%s: kernels %s; default %s\n", entry, def.config, ddesc);
    Variant best = { 0 }, *inc = &def; /* the best so far: the default, or best */
    bool cut = false;
    for (int round = 0; round < tu->rounds && !cut; round++) {
        bool changed = false;
        for (int p = 0; p < nidx && !cut; p++) {
            Variant vs[MAX_CANDIDATES];
            int nv = make_candidates(tu, entry, idx, nidx, inc, p, kinds, vs, false);
            if (nv == 0) {
                continue;
            }
            Variant *m[MAX_CANDIDATES + 1];
            m[0] = inc;
            for (int i = 0; i < nv; i++) {
                m[i + 1] = &vs[i];
            }
            fprintf(stderr, "gpuc tune: %s: racing %d values of %s\n", entry, nv, tu->t[idx[p]].name);
            say(tu, "%s: round %d, %s: %d variants interleaved\n", entry, round + 1, tu->t[idx[p]].name, nv + 1);
            bool raced = now(tu) < search_deadline && race(tu, entry, idx, nidx, m, nv + 1, MIN_REPEATS, search_deadline);
            if (!raced && inc->failed) {
                /* the default (or the best so far) builds and runs, or nothing can be compared */
                char *d = describe(tu, idx, nidx, inc->values);
                say(tu, "  %s: failed: %s\n", d, inc->why ? inc->why : "see above");
                fprintf(stderr, "gpuc: error: %s: %s: the %s variant failed: %s\n", tu->file, entry,
                        inc == &def ? "default" : "best", inc->why ? inc->why : "see above");
                free(d);
                for (int i = 0; i < nv; i++) {
                    free_variant(&vs[i]);
                }
                free(kinds);
                free(ddesc);
                free_variant(&def);
                free_variant(&best);
                free_cases(tu);
                return -1;
            }
            if (!raced) {
                say(tu, "  the time budget ends the search here\n");
                cut = true;
            } else {
                print_race(tu, idx, nidx, m, nv + 1, inc == &def ? "(the default)" : "(the best so far)");
                Variant *f = fastest(m, nv + 1);
                if (f && f != inc && !isinf(inc->us) && beats(tu, f->us, f->spread, inc->us, inc->spread)) {
                    char *d = describe(tu, idx, nidx, f->values);
                    say(tu, "  best so far: %s (%.3fx the time of the last, margin %.2f%%)\n", d, f->us / inc->us,
                        100 * margin(tu, f->spread, inc->spread));
                    free(d);
                    if (inc == &best) {
                        free_variant(&best);
                    }
                    best = *f;
                    memset(f, 0, sizeof *f);
                    inc = &best;
                    changed = true;
                }
            }
            for (int i = 0; i < nv; i++) {
                free_variant(&vs[i]);
            }
        }
        if (!changed) {
            break;
        }
    }
    /* the default and the choice, raced again: the choice stays only if it
     * beats the default there by the margin */
    bool keep = false;
    char *cdesc = describe(tu, idx, nidx, inc->values);
    if (inc == &def) {
        say(tu, "%s: kept the default %s: nothing beat it by the margin\n", entry, ddesc);
        fprintf(stderr, "gpuc tune: %s: kept the default %s\n", entry, ddesc);
    } else {
        Variant *m[2] = { &def, &best };
        say(tu, "%s: the default against the choice, %d repeats or more each, interleaved\n", entry, FINAL_REPEATS);
        if (!race(tu, entry, idx, nidx, m, 2, FINAL_REPEATS, entry_deadline) || isinf(def.us) || isinf(best.us)) {
            say(tu, "%s: kept the default %s: no time left to race %s against it\n", entry, ddesc, cdesc);
            fprintf(stderr, "gpuc tune: %s: kept the default %s (no time to confirm %s)\n", entry, ddesc, cdesc);
        } else {
            print_race(tu, idx, nidx, m, 2, "(the default)");
            keep = beats(tu, best.us, best.spread, def.us, def.spread);
            say(tu, "%s: %s %s: %.2f us against the default's %.2f us (%.3fx the time; spreads %.2f%% / %.2f%%, "
                "margin %.2f%%)\n", entry, keep ? "picked" : "kept the default, the best candidate was", cdesc,
                best.us, def.us, best.us / def.us, 100 * best.spread, 100 * def.spread,
                100 * margin(tu, best.spread, def.spread));
            fprintf(stderr, "gpuc tune: %s: %s %s: %.2f us against the default's %.2f us (%.3fx)\n", entry,
                    keep ? "picked" : "kept the default, the best candidate was", cdesc, best.us, def.us,
                    best.us / def.us);
        }
    }
    for (int i = 0; i < nidx; i++) {
        tu->t[idx[i]].chosen = keep ? inc->values[i] : def.values[i];
    }
    free(cdesc);
    free(ddesc);
    free(kinds);
    free_variant(&def);
    free_variant(&best);
    free_cases(tu);
    return 0;
}

/* ---- --check FILE.tuning ---- */

/* The values a tuning file sets for the tunables (into tu->t[].chosen).
 * Returns 0, or 1 after an error at FILE:LINE:1. */
static int read_tuning(Tune *tu, const char *path)
{
    char *text = drv_read_file(path, NULL);
    if (!text) {
        fprintf(stderr, "gpuc tune: error: --check: cannot read '%s': %s\n", path, strerror(errno));
        return 1;
    }
    int lineno = 0, rc = 0;
    for (char *line = text, *next; line && *line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next) {
            *next++ = 0;
        }
        lineno++;
        tb_trim(line);
        if (!*line || *line == '#') {
            continue;
        }
        char entry[256], name[256], end;
        long long v;
        if (sscanf(line, "%255[^.=].%255[^=]=%lld%c", entry, name, &v, &end) != 3) {
            fprintf(stderr, "%s:%d:1: error: expected ENTRY.PARAM=VALUE, found '%s'\n", path, lineno, line);
            rc = 1;
            continue;
        }
        for (int i = 0; i < tu->nt; i++) {
            if (strcmp(tu->t[i].entry, entry) == 0 && strcmp(tu->t[i].name, name) == 0) {
                tu->t[i].chosen = v;
            }
        }
    }
    free(text);
    return rc;
}

/* Race the tuning file's values of entry against the defaults; PASS when
 * the tuned time is at most the default's plus the larger spread. Returns
 * 0 (PASS), 1 (FAIL) or -1 (error). */
static int check_entry(Tune *tu, const char *entry, int entries_left)
{
    int idx[MAX_TUNABLES], nidx;
    Variant def, tuned = { 0 };
    double start = now(tu);
    double deadline = tu->budget > 0 ? start + (tu->deadline - start) / entries_left : INFINITY;
    fprintf(stderr, "gpuc tune: checking %s\n", entry);
    if (!start_entry(tu, entry, idx, &nidx, &def)) {
        return -1;
    }
    for (int i = 0; i < nidx; i++) {
        tuned.values[i] = tu->t[idx[i]].chosen;
    }
    char *ddesc = describe(tu, idx, nidx, def.values), *tdesc = describe(tu, idx, nidx, tuned.values);
    char *why = NULL;
    tuned.config = kernel_config(tu, entry, idx, nidx, tuned.values, &why);
    int rc = 0;
    if (!tuned.config) {
        say(tu, "%s: FAIL: the tuned values %s do not compile: %s\n", entry, tdesc, why);
        rc = 1;
    } else if (strcmp(tuned.config, def.config) == 0) {
        say(tu, "%s: PASS: the tuning gives the default kernels (%s)\n", entry, def.config);
    } else {
        Variant *m[2] = { &def, &tuned };
        say(tu, "%s: the default against the tuned values, %d repeats or more each, interleaved\n", entry,
            FINAL_REPEATS);
        if (!race(tu, entry, idx, nidx, m, 2, FINAL_REPEATS, deadline) || isinf(def.us) || isinf(tuned.us)) {
            print_race(tu, idx, nidx, m, 2, "(the default)");
            say(tu, "%s: FAIL: not measured (a failure above, or no time left)\n", entry);
            rc = 1;
        } else {
            print_race(tu, idx, nidx, m, 2, "(the default)");
            double sp = def.spread > tuned.spread ? def.spread : tuned.spread;
            rc = tuned.us <= def.us * (1 + sp) ? 0 : 1;
            say(tu, "%s: %s: tuned %s %.2f us (spread %.2f%%), default %s %.2f us (spread %.2f%%): %.3fx the "
                "default's time, limit %.3fx\n", entry, rc ? "FAIL" : "PASS", tdesc, tuned.us, 100 * tuned.spread,
                ddesc, def.us, 100 * def.spread, tuned.us / def.us, 1 + sp);
        }
    }
    free(why);
    free(ddesc);
    free(tdesc);
    free_variant(&def);
    free_variant(&tuned);
    free_cases(tu);
    return rc;
}

#define USAGE                                                                                                      \
    "usage: gpuc tune [--backend=cuda|c] [--arch=LIST] [-k ENTRY,...] [--budget SECONDS] [--runs N]\n"            \
    "                 [--rounds N] [--spread PCT] [--min-gain PCT] [--max-repeats N] [-o FILE] FILE.gdsl\n"        \
    "       gpuc tune --check FILE.tuning [options] FILE.gdsl\n"                                                   \
    "       gpuc tune --plan [-k ENTRY,...] FILE.gdsl\n"

static int usage(const char *msg, const char *arg)
{
    fprintf(stderr, "gpuc tune: error: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\n" USAGE);
    return 2;
}

/* A number option's value in [lo, hi], or false. */
static bool number_in(const char *s, double lo, double hi, double *x)
{
    char *end;
    errno = 0;
    *x = strtod(s, &end);
    return end != s && !*end && !errno && *x >= lo && *x <= hi;
}

int drv_tune_main(int argc, char **argv)
{
    Tune tu = { 0 };
    tu.backend = "cuda";
    tu.runs = 10;
    tu.rounds = 2;
    tu.max_repeats = 32;
    tu.target_spread = 0.02;
    tu.min_gain = 0.01;
    const char *model_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double x;
        if (strncmp(a, "--backend=", 10) == 0) {
            tu.backend = a + 10;
            if (strcmp(tu.backend, "c") != 0 && strcmp(tu.backend, "cuda") != 0) {
                return usage("--backend must be c or cuda, not '%s'", tu.backend);
            }
        } else if (strncmp(a, "--arch=", 7) == 0) {
            tu.arch = a + 7;
        } else if (strcmp(a, "--plan") == 0) {
            tu.plan = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf(USAGE
                   "Times the launch parameters of each entry's kernels (template parameters setting\n"
                   "@block, @items, @unroll, @tile) on the file's //! bench blocks: the variants of a\n"
                   "race built into one program, their results checked, raced interleaved in one\n"
                   "process until the spread of repeats is under --spread (default 2%%), a\n"
                   "choice kept only when faster than the default by more than the spreads and\n"
                   "--min-gain (default 1%%); writes a tuning file (default FILE.tuning) for\n"
                   "`gpuc --tuning`. --budget: the whole run's time. --check: race a tuning file\n"
                   "against the defaults (PASS/FAIL). --plan: print the values tried.\n"
                   "See docs/bench.md#tuning.\n");
            return 0;
        } else if (strcmp(a, "-k") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--runs") == 0 ||
                   strcmp(a, "--rounds") == 0 || strcmp(a, "--budget") == 0 || strcmp(a, "--spread") == 0 ||
                   strcmp(a, "--min-gain") == 0 || strcmp(a, "--max-repeats") == 0 || strcmp(a, "--check") == 0 ||
                   strcmp(a, "--simulate") == 0) {
            if (i + 1 >= argc) {
                return usage("%s needs a value", a);
            }
            const char *v = argv[++i];
            if (strcmp(a, "-k") == 0) {
                tu.only_entry = v;
            } else if (strcmp(a, "-o") == 0) {
                tu.out_path = v;
            } else if (strcmp(a, "--check") == 0) {
                tu.check_path = v;
            } else if (strcmp(a, "--simulate") == 0) {
                model_path = v;
            } else if (strcmp(a, "--runs") == 0) {
                if (!number_in(v, 1, 100000, &x) || x != (int)x) {
                    return usage("--runs needs a count from 1 to 100000, not '%s'", v);
                }
                tu.runs = (int)x;
            } else if (strcmp(a, "--rounds") == 0) {
                if (!number_in(v, 1, 1000, &x) || x != (int)x) {
                    return usage("--rounds needs a count from 1 to 1000, not '%s'", v);
                }
                tu.rounds = (int)x;
            } else if (strcmp(a, "--max-repeats") == 0) {
                if (!number_in(v, MIN_REPEATS, 1000, &x) || x != (int)x || (int)x % 2) {
                    return usage("--max-repeats needs an even count from 4 to 1000, not '%s'", v);
                }
                tu.max_repeats = (int)x;
            } else if (strcmp(a, "--budget") == 0) {
                if (!number_in(v, 1, 7 * 86400, &x)) {
                    return usage("--budget needs seconds from 1 to 604800, not '%s'", v);
                }
                tu.budget = x;
            } else if (!number_in(v, strcmp(a, "--spread") == 0 ? 0.01 : 0, 50, &x)) {
                return usage(strcmp(a, "--spread") == 0 ? "--spread needs a percentage from 0.01 to 50, not '%s'"
                                                        : "--min-gain needs a percentage from 0 to 50, not '%s'", v);
            } else {
                *(strcmp(a, "--spread") == 0 ? &tu.target_spread : &tu.min_gain) = x / 100;
            }
        } else if (a[0] == '-') {
            return usage("unknown option '%s'", a);
        } else if (tu.file) {
            return usage("one .gdsl file at a time, not also '%s'", a);
        } else {
            tu.file = a;
        }
    }
    if (!tu.file) {
        return usage("%sneeds a .gdsl file", "");
    }
    if ((tu.plan || tu.check_path) && tu.out_path) {
        return usage("-o writes a tuning file: %s writes none", tu.plan ? "--plan" : "--check");
    }
    if (tu.plan && tu.check_path) {
        return usage("%s--plan and --check are two different runs", "");
    }
    if (access(tu.file, R_OK) != 0) {
        fprintf(stderr, "gpuc: error: cannot read '%s': %s\n", tu.file, strerror(errno));
        return 1;
    }
    if (model_path && !(tu.model = read_model(model_path))) {
        return 1;
    }
    if (tb_session_init(&tu.s) != 0) {
        free_model(tu.model);
        return 1;
    }
    tu.self = tu.s.self;
    tu.deadline = now(&tu) + tu.budget;
    int rc = 1;
    bool tuning = !tu.plan && !tu.check_path;
    char *out_path = tu.out_path ? tb_strdup(tu.out_path) : tb_printf("%.*s.tuning",
        (int)(strlen(tu.file) > 5 && strcmp(tu.file + strlen(tu.file) - 5, ".gdsl") == 0 ? strlen(tu.file) - 5
                                                                                         : strlen(tu.file)), tu.file);
    if (tuning && drv_output_same_file(out_path, tu.file)) {
        fprintf(stderr, "gpuc: error: -o '%s' is the input file; writing it would destroy the program\n", out_path);
        goto done;
    }
    if (tuning && drv_output_check(out_path, DRV_OUTPUT_TEXT) != 0) {
        goto done;
    }
    tu.log = tuning ? open_memstream(&tu.logtext, &tu.loglen) : NULL;
    if ((tuning && !tu.log) || read_tunables(&tu) != 0) {
        goto done;
    }
    if (tu.nt == 0) {
        fprintf(stderr, "gpuc: error: %s: no entry%s%s has a template parameter that sets @block, @items, @unroll or @tile\n",
                tu.file, tu.only_entry ? " named " : "", tu.only_entry ? tu.only_entry : "");
        goto done;
    }
    if (tu.check_path && read_tuning(&tu, tu.check_path) != 0) {
        goto done;
    }
    /* the entries in the order of the file, each once */
    const char *entries[256];
    int nentries = 0;
    for (int i = 0; i < tu.nt; i++) {
        bool first = nentries < 256;
        for (int j = 0; j < nentries && first; j++) {
            first = strcmp(entries[j], tu.t[i].entry) != 0;
        }
        if (first) {
            entries[nentries++] = tu.t[i].entry;
        }
    }
    rc = 0;
    int failed_checks = 0;
    for (int i = 0; i < nentries && rc == 0; i++) {
        if (tu.plan) {
            rc = plan_entry(&tu, entries[i]) != 0;
        } else if (tu.check_path) {
            int r = check_entry(&tu, entries[i], nentries - i);
            rc = r < 0;
            failed_checks += r > 0;
        } else {
            rc = tune_entry(&tu, entries[i], nentries - i) != 0;
        }
    }
    if (rc == 0 && !tu.plan) {
        char *of = tu.budget > 0 ? tb_printf(" of a budget of %.0f s", tu.budget) : tb_strdup("");
        say(&tu, "gpuc tune: took %.0f s%s\n", now(&tu) - (tu.deadline - tu.budget), of);
        free(of);
    }
    if (rc == 0 && tu.check_path) {
        say(&tu, "gpuc tune --check: %d of %d entries PASS\n", nentries - failed_checks, nentries);
        rc = failed_checks > 0;
    }
    if (tu.log) {
        fclose(tu.log);
        tu.log = NULL;
    }
    if (rc == 0 && tuning) {
        /* written whole to a temporary, then put in place (output.c) */
        DrvOutput out;
        FILE *f = drv_output_open(&out, out_path, DRV_OUTPUT_TEXT) == 0 ? out.f : NULL;
        time_t t = time(NULL);
        char date[32];
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
        if (f) {
            fprintf(f, "# gpuc tuning file for %s: written by `gpuc tune` on %s, backend %s%s, at least %d calls a "
                    "sample, spread target %.2f%%, minimum gain %.2f%%\n", tu.file, date, tu.backend,
                    tu.model ? " (simulated)" : "", tu.runs, 100 * tu.target_spread, 100 * tu.min_gain);
            fprintf(f, "# read by `gpuc --tuning FILE` (lines ENTRY.PARAM=VALUE; -D on the command line wins)\n");
            fprintf(f, "# the races (time: median of the repeats; spread: (p90 - p10) / median of them):\n%s",
                    tu.logtext ? tu.logtext : "");
            for (int i = 0; i < tu.nt; i++) {
                fprintf(f, "%s.%s=%lld\n", tu.t[i].entry, tu.t[i].name, tu.t[i].chosen);
            }
        }
        if (!f || !drv_output_close(&out, true)) {
            rc = 1;
        } else {
            fprintf(stderr, "gpuc tune: wrote %s\n", out_path);
        }
    }
done:
    if (tu.log) {
        fclose(tu.log);
    }
    free(tu.logtext);
    for (int i = 0; i < tu.nt; i++) {
        free(tu.t[i].entry);
        free(tu.t[i].name);
        free(tu.t[i].attr);
    }
    free(tu.t);
    for (int i = 0; i < tu.ntp; i++) {
        free(tu.tp[i].entry);
        free(tu.tp[i].name);
        free(tu.tp[i].def);
    }
    free(tu.tp);
    free(out_path);
    free_model(tu.model);
    tb_session_free(&tu.s);
    return rc;
}
