/* tune_cmd.c: `gpuc tune [options] FILE.gdsl`, which chooses the launch
 * parameters of a program's kernels by measuring them (docs/bench.md#tuning).
 *
 * The tunable parameters are the entries' integer template parameters that
 * set a launch attribute (@block, @items, @unroll, @tile), as
 * `gpuc --list-params` prints them. The measurements are the file's own
 * `//! bench` blocks: their inputs are generated once per entry (as `gpuc
 * bench` generates them), each variant is built once (`gpuc FILE -D
 * ENTRY.P=V -o EXE`, the candidates of one parameter in parallel) and run as
 * `EXE -e ENTRY -r N -t TIMES`, whose times are CUDA events around the
 * entry's kernels (docs/executables.md). Of each run's times the first
 * quarter is dropped (clocks ramping up, caches), the rest give the time (a
 * trimmed mean: whole microseconds average to fractions) and the spread
 * (the largest difference between the trimmed means of four consecutive
 * groups, over the time). A coordinate descent from the defaults keeps a
 * candidate only when it is faster than the best so far by more than both
 * spreads; at the end the default and the choice are measured again, in
 * turn, three times each, and the choice is kept only when it is faster than
 * the default by more than the spread of those repeats. The chosen values go
 * to a tuning file of `ENTRY.PARAM=VALUE` lines with comments naming the
 * date and every measurement with its spread, which `gpuc --tuning FILE`
 * reads at build time. */
#define _XOPEN_SOURCE 700 /* strdup, mkdtemp */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"

/* Candidate values of each launch attribute, besides the default and the
 * values around it (a half, three quarters, five quarters, one and a half,
 * twice the default: the defaults per primitive differ, 8 items for a map,
 * 40 for an f32 scan). */
static const int block_values[] = { 64, 128, 256, 512, 1024 };
static const int items_values[] = { 1, 4, 16 };
static const int unroll_values[] = { 1, 2, 4, 8 };
static const int tile_values[] = { 8, 16, 32 };

enum { MAX_CANDIDATES = 16, REPEATS = 3, GROUPS = 4 };

typedef struct Tunable {
    char *entry, *name, *attr; /* "axpy", "BLOCK", "block" */
    long long def, chosen;
} Tunable;

/* One measured case of an entry: a bench block at one size. */
typedef struct TuneCase {
    char *what;      /* "FILE:LINE n=2^26" */
    char *stdin_path;
    TbArgs in;       /* --in NAME=FILE of the generated inputs */
    int nresults;    /* components of the result (each written to /dev/null) */
} TuneCase;

/* A measurement of one variant: over its cases, the geometric mean of the
 * times and the largest spread. */
typedef struct Score {
    double us;       /* INFINITY: the variant did not build or run */
    double spread;   /* a fraction of us */
} Score;

typedef struct Tune {
    const char *self, *file, *backend, *only_entry, *out_path, *arch;
    int runs, rounds;
    TbSession s;
    Tunable *t;
    int nt;
    TuneCase *cases;
    int ncases;
    int nbuilt;       /* variants built, for unique names */
    FILE *log;        /* the measurements, copied into the tuning file */
    char *logtext;
    size_t loglen;
} Tune;

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
        char entry[256], name[256], attr[32];
        long long def;
        /* ENTRY.NAME: int = DEF @attr */
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

static void add_candidate(long long *v, int *n, long long x, long long lo, long long hi, long long step)
{
    x = x / step * step;
    if (x < lo || x > hi || *n >= MAX_CANDIDATES) {
        return;
    }
    for (int i = 0; i < *n; i++) {
        if (v[i] == x) {
            return;
        }
    }
    v[(*n)++] = x;
}

/* The values tried for a parameter (other than the default d), in a fixed order. */
static int candidates(const Tunable *t, long long *v)
{
    const int *fixed = tile_values;
    int nfixed = 3, n = 0;
    long long lo = 1, hi = 32, step = 1, d = t->def;
    if (strcmp(t->attr, "block") == 0) {
        fixed = block_values, nfixed = 5, lo = 32, hi = 1024, step = 32;
    } else if (strcmp(t->attr, "items") == 0) {
        fixed = items_values, nfixed = 3, hi = 64;
    } else if (strcmp(t->attr, "unroll") == 0) {
        fixed = unroll_values, nfixed = 4, hi = 64;
    }
    add_candidate(v, &n, d, lo, hi, step); /* so that the default is not tried again */
    for (int i = 0; i < nfixed; i++) {
        add_candidate(v, &n, fixed[i], lo, hi, step);
    }
    if (strcmp(t->attr, "items") == 0) {
        const long long rel[][2] = { { 1, 2 }, { 3, 4 }, { 5, 4 }, { 3, 2 }, { 2, 1 } };
        for (int i = 0; i < 5; i++) {
            add_candidate(v, &n, d * rel[i][0] / rel[i][1], lo, hi, step);
        }
    }
    memmove(v, v + 1, sizeof *v * (size_t)(n - 1)); /* drop the default */
    return n - 1;
}

/* ---- the cases: every bench block of the entry, at the last value of each size line ---- */

static const char *item_word(const char *t, const char *w)
{
    size_t n = strlen(w);
    return strncmp(t, w, n) == 0 && (t[n] == ' ' || t[n] == '\t') ? t + n + strspn(t + n, " \t") : NULL;
}

/* A size value: N, 2^K, 2^K+N or 2^K-N (surrounding blanks allowed). */
static bool read_size(const char *s, long long *v)
{
    char *end;
    s += strspn(s, " \t");
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || errno || x < 0) {
        return false;
    }
    if (x == 2 && *end == '^') {
        long long k = strtoll(end + 1, &end, 10);
        if (k < 0 || k > 40) {
            return false;
        }
        x = 1ll << k;
        if (*end == '+' || *end == '-') {
            char sign = *end;
            const char *num = end + 1;
            long long c = strtoll(num, &end, 10);
            if (end == num || c < 0) {
                return false;
            }
            x = sign == '+' ? x + c : x - c;
        }
    }
    end += strspn(end, " \t");
    *v = x;
    return !*end && x >= 0;
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
        if (!read_size(last ? last + 1 : eq + 1, &x)) {
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
    for (int i = 0; i < nsizes; i++) {
        free((char *)sizes[i].name);
    }
    free(sizes_text);
    TbType *rt = tb_parse_type(sig->result, false);
    c.nresults = rt ? rt->nleaves : 1;
    tb_type_free(rt);
    if (err) {
        fprintf(stderr, "%s\n", err);
        free(err);
        free(c.what);
        free(c.stdin_path);
        tb_args_free(&c.in);
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

/* ---- variants: built in parallel, measured one at a time ---- */

typedef struct Variant {
    long long values[8];  /* of the entry's tunables, in order */
    char *exe;            /* NULL until built; "" when the build failed */
    char *why;            /* the first line of a failure */
    Score score;
} Variant;

/* The entry's tunables (indices into tu->t). */
static int entry_tunables(const Tune *tu, const char *entry, int *idx)
{
    int n = 0;
    for (int i = 0; i < tu->nt && n < 8; i++) {
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

/* Build every variant of vs that is not built yet, all at once. */
static void build_variants(Tune *tu, const char *entry, const int *idx, int nidx, Variant *vs, int nv)
{
    pid_t *pids = tb_malloc(sizeof *pids * (size_t)(nv ? nv : 1));
    char **logs = tb_malloc(sizeof *logs * (size_t)(nv ? nv : 1));
    for (int v = 0; v < nv; v++) {
        pids[v] = -1;
        logs[v] = NULL;
        if (vs[v].exe) {
            continue;
        }
        vs[v].exe = tb_printf("%s/variant%d", tu->s.tmp, tu->nbuilt++);
        logs[v] = tb_printf("%s.log", vs[v].exe);
        TbArgs a = { 0 };
        tb_args_add(&a, tb_strdup(tu->self));
        tb_args_add(&a, tb_strdup(tu->file));
        tb_args_add(&a, tb_strdup("-o"));
        tb_args_add(&a, tb_strdup(vs[v].exe));
        if (strcmp(tu->backend, "c") == 0) {
            tb_args_add(&a, tb_strdup("--arch=none"));
        } else if (tu->arch) {
            tb_args_add(&a, tb_printf("--arch=%s", tu->arch));
        }
        for (int i = 0; i < nidx; i++) {
            tb_args_add(&a, tb_strdup("-D"));
            tb_args_add(&a, tb_printf("%s.%s=%lld", entry, tu->t[idx[i]].name, vs[v].values[i]));
        }
        a.v = tb_realloc(a.v, sizeof *a.v * (size_t)(a.n + 1));
        a.v[a.n] = NULL;
        fflush(NULL);
        pids[v] = fork();
        if (pids[v] == 0) {
            _exit(drv_spawn(a.v, "/dev/null", logs[v], logs[v], 600) & 0xff);
        }
        tb_args_free(&a);
    }
    for (int v = 0; v < nv; v++) {
        if (!logs[v]) {
            continue;
        }
        int st = -1;
        if (pids[v] > 0) {
            while (waitpid(pids[v], &st, 0) < 0 && errno == EINTR) {
            }
        }
        if (pids[v] <= 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            char *text = drv_read_file(logs[v], NULL);
            free(vs[v].why);
            vs[v].why = text ? tb_first_line(tb_trim(text)) : tb_strdup("the build failed");
            free(text);
            free(vs[v].exe);
            vs[v].exe = tb_strdup("");
        }
        unlink(logs[v]);
        free(logs[v]);
    }
    free(pids);
    free(logs);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
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

/* Run case c of the variant with `runs` timed runs (plus the warm-up ones
 * dropped); *us and *spread, or an error message (malloc'd). */
static char *run_case(Tune *tu, const char *entry, const char *exe, const TuneCase *c, double *us, double *spread)
{
    int warm = tu->runs / 3 > 1 ? tu->runs / 3 : 1;
    int total = tu->runs + warm;
    char *times = tb_printf("%s/times%d.txt", tu->s.tmp, tu->s.counter++);
    char *out = tb_printf("%s/run%d.out", tu->s.tmp, tu->s.counter++);
    TbArgs a = { 0 };
    tb_args_add(&a, tb_strdup(exe));
    tb_args_add(&a, tb_strdup("-e"));
    tb_args_add(&a, tb_strdup(entry));
    tb_args_add(&a, tb_printf("--backend=%s", tu->backend));
    for (int i = 0; i < c->in.n; i++) {
        tb_args_add(&a, tb_strdup(c->in.v[i]));
    }
    tb_args_add(&a, tb_strdup("-r"));
    tb_args_add(&a, tb_printf("%d", total));
    tb_args_add(&a, tb_strdup("-t"));
    tb_args_add(&a, tb_strdup(times));
    for (int i = 0; i < c->nresults; i++) {
        tb_args_add(&a, tb_strdup("--out"));
        tb_args_add(&a, tb_strdup("/dev/null")); /* results are not compared: gpuc test checks them */
    }
    a.v = tb_realloc(a.v, sizeof *a.v * (size_t)(a.n + 1));
    a.v[a.n] = NULL;
    unlink(times);
    int st = drv_spawn(a.v, c->stdin_path, out, out, tu->s.timeout);
    tb_args_free(&a);
    char *err = NULL;
    double *t = tb_malloc(sizeof *t * (size_t)total);
    int n = 0;
    if (st != 0) {
        char *text = drv_read_file(out, NULL);
        char *l = text ? tb_first_line(tb_trim(text)) : tb_strdup("no output");
        err = tb_printf("exit status %d: %s", st, l);
        free(l);
        free(text);
    } else {
        char *text = drv_read_file(times, NULL);
        for (char *q = text; q && *q && n < total;) {
            char *e;
            double v = strtod(q, &e);
            if (e == q) {
                break;
            }
            t[n++] = v;
            q = e;
        }
        free(text);
        if (n != total) {
            err = tb_printf("the program wrote %d times for -r %d", n, total);
        }
    }
    if (!err) {
        /* the times after the warm-up: their trimmed mean, and the spread of
         * the trimmed means of GROUPS consecutive groups */
        double *kept = t + warm;
        int nk = total - warm, per = nk / GROUPS;
        double lo = INFINITY, hi = 0;
        for (int g = 0; g < GROUPS && per >= 1; g++) {
            double *grp = tb_malloc(sizeof *grp * (size_t)per);
            memcpy(grp, kept + g * per, sizeof *grp * (size_t)per);
            double m = trimmed_mean(grp, per);
            free(grp);
            lo = m < lo ? m : lo;
            hi = m > hi ? m : hi;
        }
        *us = trimmed_mean(kept, nk);
        *spread = per >= 1 && *us > 0 ? (hi - lo) / *us : 0;
    }
    free(t);
    unlink(times);
    unlink(out);
    free(times);
    free(out);
    return err;
}

/* Measure a built variant on every case: the geometric mean of the times, the largest spread. */
static void measure(Tune *tu, const char *entry, const int *idx, int nidx, Variant *v, const char *label)
{
    char *desc = describe(tu, idx, nidx, v->values);
    v->score = (Score){ INFINITY, 0 };
    if (!v->exe || !*v->exe) {
        fprintf(tu->log, "#   %s %s: failed (%s)\n", entry, desc, v->why ? v->why : "not built");
        fflush(tu->log);
        free(desc);
        return;
    }
    double logsum = 0, spread = 0;
    for (int i = 0; i < tu->ncases; i++) {
        double us = 0, sp = 0;
        char *err = run_case(tu, entry, v->exe, &tu->cases[i], &us, &sp);
        if (err) {
            fprintf(tu->log, "#   %s %s: failed on %s (%s)\n", entry, desc, tu->cases[i].what, err);
            fflush(tu->log);
            free(err);
            free(desc);
            return;
        }
        logsum += log(us > 0.5 ? us : 0.5);
        spread = sp > spread ? sp : spread;
    }
    v->score = (Score){ exp(logsum / tu->ncases), spread };
    fprintf(tu->log, "#   %s %s: %.2f us, spread %.2f%%%s%s\n", entry, desc, v->score.us, 100 * v->score.spread,
            label ? " " : "", label ? label : "");
    fflush(tu->log);
    fprintf(stderr, "gpuc tune:   %s %s: %.2f us (spread %.2f%%)%s%s\n", entry, desc, v->score.us,
            100 * v->score.spread, label ? " " : "", label ? label : "");
    free(desc);
}

/* b faster than a by more than the noise of both? */
static bool faster(Score b, Score a)
{
    double noise = a.spread > b.spread ? a.spread : b.spread;
    if (noise < 0.005) {
        noise = 0.005; /* half a percent: below it, nothing is worth a change */
    }
    return b.us < a.us * (1 - noise);
}

static void free_variants(Variant *vs, int n)
{
    for (int i = 0; i < n; i++) {
        if (vs[i].exe && *vs[i].exe) {
            unlink(vs[i].exe);
        }
        free(vs[i].exe);
        free(vs[i].why);
    }
}

static double median3(double *v)
{
    qsort(v, REPEATS, sizeof *v, cmp_double);
    return v[REPEATS / 2];
}

static int tune_entry(Tune *tu, const char *entry)
{
    fprintf(stderr, "gpuc tune: %s\n", entry);
    if (read_cases(tu, entry) != 0) {
        return -1;
    }
    int idx[8];
    int nidx = entry_tunables(tu, entry, idx);
    Variant def = { 0 }, best;
    for (int i = 0; i < nidx; i++) {
        def.values[i] = tu->t[idx[i]].def;
    }
    build_variants(tu, entry, idx, nidx, &def, 1);
    measure(tu, entry, idx, nidx, &def, "(the default)");
    if (isinf(def.score.us)) {
        fprintf(stderr, "gpuc: error: %s: the default variant does not run: %s\n", entry,
                def.why ? def.why : "see the measurements");
        free_variants(&def, 1);
        free_cases(tu);
        return -1;
    }
    best = def;
    best.exe = tb_strdup(def.exe);
    best.why = NULL;
    for (int round = 0; round < tu->rounds; round++) {
        bool changed = false;
        for (int p = 0; p < nidx; p++) {
            Tunable *t = &tu->t[idx[p]];
            long long cand[MAX_CANDIDATES];
            int nc = candidates(t, cand), nv = 0;
            Variant vs[MAX_CANDIDATES];
            memset(vs, 0, sizeof vs);
            for (int k = 0; k < nc; k++) {
                if (cand[k] == best.values[p]) {
                    continue;
                }
                memcpy(vs[nv].values, best.values, sizeof best.values);
                vs[nv++].values[p] = cand[k];
            }
            build_variants(tu, entry, idx, nidx, vs, nv);
            int won = -1;
            for (int k = 0; k < nv; k++) {
                measure(tu, entry, idx, nidx, &vs[k], NULL);
                if (!isinf(vs[k].score.us) && faster(vs[k].score, won < 0 ? best.score : vs[won].score)) {
                    won = k;
                }
            }
            if (won >= 0) {
                free(best.exe);
                best = vs[won];
                best.exe = tb_strdup(vs[won].exe);
                best.why = NULL;
                changed = true;
            }
            free_variants(vs, nv);
        }
        if (!changed) {
            break;
        }
    }
    /* The default and the choice again, in turn: measurements drift over a
     * run (clocks, temperature), which favours whatever is measured in a
     * good moment; the choice must beat the default by more than the spread
     * of these repeats. */
    bool same = memcmp(best.values, def.values, sizeof def.values) == 0;
    double dus[REPEATS], cus[REPEATS], dsp = 0, csp = 0;
    for (int r = 0; r < REPEATS && !same; r++) {
        measure(tu, entry, idx, nidx, &def, "(the default, again)");
        measure(tu, entry, idx, nidx, &best, "(the choice, again)");
        dus[r] = def.score.us, cus[r] = best.score.us;
        dsp = def.score.spread > dsp ? def.score.spread : dsp;
        csp = best.score.spread > csp ? best.score.spread : csp;
    }
    char *ddesc = describe(tu, idx, nidx, def.values), *cdesc = describe(tu, idx, nidx, best.values);
    if (same) {
        fprintf(tu->log, "# %s: no candidate beat the default (%s: %.2f us, spread %.2f%%) by more than the spread; the default is kept\n",
                entry, ddesc, def.score.us, 100 * def.score.spread);
        fprintf(stderr, "gpuc tune: %s: kept the default %s (%.2f us, spread %.2f%%)\n", entry, ddesc, def.score.us,
                100 * def.score.spread);
    } else {
        double dm = median3(dus), cm = median3(cus);
        double drep = (dus[REPEATS - 1] - dus[0]) / dm, crep = (cus[REPEATS - 1] - cus[0]) / cm;
        Score d = { dm, drep > dsp ? drep : dsp }, c = { cm, crep > csp ? crep : csp };
        bool keep = faster(c, d);
        fprintf(tu->log,
                "# %s: measured again %d times each: default %s %.2f us (spread of repeats %.2f%%, within runs %.2f%%), "
                "choice %s %.2f us (%.2f%%, %.2f%%): %.3fx%s\n",
                entry, REPEATS, ddesc, dm, 100 * drep, 100 * dsp, cdesc, cm, 100 * crep, 100 * csp, dm / cm,
                keep ? "" : "; not more than the spread: the default is kept");
        fprintf(stderr, "gpuc tune: %s: %s %s: %.2f us against the default's %.2f us (%.3fx; spreads %.2f%% / %.2f%%)\n",
                entry, keep ? "picked" : "kept the default, the best candidate", keep ? cdesc : cdesc, cm, dm, dm / cm,
                100 * c.spread, 100 * d.spread);
        for (int i = 0; i < nidx; i++) {
            tu->t[idx[i]].chosen = keep ? best.values[i] : def.values[i];
        }
    }
    free(ddesc);
    free(cdesc);
    free_variants(&def, 1);
    free_variants(&best, 1);
    free_cases(tu);
    return 0;
}

static int usage(const char *msg, const char *arg)
{
    fprintf(stderr, "gpuc tune: error: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nusage: gpuc tune [--backend=cuda|c] [--arch=LIST] [-k ENTRY,...] [--runs N] [--rounds N] [-o FILE] FILE.gdsl\n");
    return 2;
}

int drv_tune_main(int argc, char **argv)
{
    Tune tu = { 0 };
    tu.backend = "cuda";
    tu.runs = 60;
    tu.rounds = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--backend=", 10) == 0) {
            tu.backend = a + 10;
            if (strcmp(tu.backend, "c") != 0 && strcmp(tu.backend, "cuda") != 0) {
                return usage("--backend must be c or cuda, not '%s'", tu.backend);
            }
        } else if (strncmp(a, "--arch=", 7) == 0) {
            tu.arch = a + 7;
        } else if (strcmp(a, "-k") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--runs") == 0 ||
                   strcmp(a, "--rounds") == 0) {
            if (i + 1 >= argc) {
                return usage("%s needs a value", a);
            }
            const char *v = argv[++i];
            if (a[1] == 'k') {
                tu.only_entry = v;
            } else if (a[1] == 'o') {
                tu.out_path = v;
            } else {
                char *end;
                long n = strtol(v, &end, 10);
                bool runs = strcmp(a, "--runs") == 0;
                if (*end || n < (runs ? 8 : 1) || n > (runs ? 100000 : 1000)) {
                    return usage(runs ? "--runs needs a count from 8 to 100000, not '%s'"
                                      : "--rounds needs a count from 1 to 1000, not '%s'", v);
                }
                *(runs ? &tu.runs : &tu.rounds) = (int)n;
            }
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: gpuc tune [--backend=cuda|c] [--arch=LIST] [-k ENTRY,...] [--runs N] [--rounds N] [-o FILE] FILE.gdsl\n"
                   "Times the launch parameters of each entry's kernels (template parameters setting\n"
                   "@block, @items, @unroll, @tile) on the file's //! bench blocks, with the spread of\n"
                   "the repeats, and writes a tuning file (default FILE.tuning) for `gpuc --tuning`.\n"
                   "See docs/bench.md.\n");
            return 0;
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
    if (access(tu.file, R_OK) != 0) {
        fprintf(stderr, "gpuc: error: cannot read '%s': %s\n", tu.file, strerror(errno));
        return 1;
    }
    if (tb_session_init(&tu.s) != 0) {
        return 1;
    }
    tu.self = tu.s.self;
    int rc = 1;
    char *out_path = tu.out_path ? tb_strdup(tu.out_path) : tb_printf("%.*s.tuning",
        (int)(strlen(tu.file) > 5 && strcmp(tu.file + strlen(tu.file) - 5, ".gdsl") == 0 ? strlen(tu.file) - 5
                                                                                         : strlen(tu.file)), tu.file);
    if (drv_output_same_file(out_path, tu.file)) {
        fprintf(stderr, "gpuc: error: -o '%s' is the input file; writing it would destroy the program\n", out_path);
        goto done;
    }
    if (drv_output_check(out_path, DRV_OUTPUT_TEXT) != 0) {
        goto done;
    }
    tu.log = open_memstream(&tu.logtext, &tu.loglen);
    if (!tu.log || read_tunables(&tu) != 0) {
        goto done;
    }
    if (tu.nt == 0) {
        fprintf(stderr, "gpuc: error: %s: no entry%s%s has a template parameter that sets @block, @items, @unroll or @tile\n",
                tu.file, tu.only_entry ? " named " : "", tu.only_entry ? tu.only_entry : "");
        goto done;
    }
    rc = 0;
    for (int i = 0; i < tu.nt && rc == 0; i++) {
        bool first = true;
        for (int j = 0; j < i; j++) {
            first = first && strcmp(tu.t[j].entry, tu.t[i].entry) != 0;
        }
        if (first) {
            rc = tune_entry(&tu, tu.t[i].entry) != 0;
        }
    }
    fclose(tu.log);
    tu.log = NULL;
    if (rc == 0) {
        /* written whole to a temporary, then put in place (output.c) */
        DrvOutput out;
        FILE *f = drv_output_open(&out, out_path, DRV_OUTPUT_TEXT) == 0 ? out.f : NULL;
        time_t now = time(NULL);
        char date[32];
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        if (f) {
            fprintf(f, "# gpuc tuning file for %s: written by `gpuc tune` on %s, backend %s, %d timed runs per "
                    "case after %d dropped\n", tu.file, date, tu.backend, tu.runs, tu.runs / 3 > 1 ? tu.runs / 3 : 1);
            fprintf(f, "# read by `gpuc --tuning FILE` (lines ENTRY.PARAM=VALUE; -D on the command line wins)\n");
            fprintf(f, "# measurements (geometric mean over each entry's bench cases of the trimmed mean of the runs;\n"
                    "# spread: the largest difference between four groups of runs, or between repeats):\n%s", tu.logtext);
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
    free(out_path);
    tb_session_free(&tu.s);
    return rc;
}
