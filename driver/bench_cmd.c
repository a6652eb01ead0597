/* bench_cmd.c: `gpuc bench [options] FILES-OR-DIRS...`, the runner of the
 * `//! bench` blocks inside .gdsl files (docs/bench.md).
 *
 * A bench block names an entry (or a fn of the file), its inputs (generated
 * with Philox at sizes given by name, or inline values), the values of each
 * size variable, and a run count. For every combination of sizes, gpuc bench
 * generates the inputs (.npy files), runs the program built from the file
 * (blocks.c, as gpuc test does) with `-r RUNS -t TIMES`, and reports the
 * median time, the bytes moved (all inputs read + all outputs written) and
 * GB/s; `--json FILE` writes every case for comparing commits and machines.
 * Malformed blocks are errors naming FILE:LINE:COL. Prints a line per case
 * and `N cases measured, N errors`; exit status 1 on any error, 2 for a bad
 * command line. */
#define _XOPEN_SOURCE 700 /* gethostname, strdup */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"

#ifndef GPUC_VERSION
#define GPUC_VERSION "0.0.0"
#endif

/* A size variable and its values (`size n = 1024, 2^20, 2^24+3`). */
typedef struct SizeLine {
    char *name;
    long long *values;
    int nvalues;
    const TbItem *item;
} SizeLine;

typedef struct BenchRun {
    TbSession s;
    const char *backend;  /* c or cuda */
    const char *only;     /* -k ENTRY */
    long runs;            /* --runs N: overrides the blocks' runs; 0 = theirs */
    FILE *json;           /* --json FILE, written as cases finish */
    int ncases, failed;   /* cases measured; errors */
    int njson;            /* cases written to the JSON file */
} BenchRun;

static void spec_error(BenchRun *br, const char *file, int line, int col, const char *msg)
{
    fprintf(stderr, "%s:%d:%d: error: %s\n", file, line, col, msg);
    br->failed++;
}

/* A message "FILE:LINE:COL: TEXT" (as blocks.c words them) as an error
 * "FILE:LINE:COL: error: TEXT"; any other message at the block. */
static void located_error(BenchRun *br, const char *file, const TbBlock *bl, const char *msg)
{
    size_t fl = strlen(file);
    int line, col, n = 0;
    if (strncmp(msg, file, fl) == 0 && sscanf(msg + fl, ":%d:%d: %n", &line, &col, &n) == 2 && n > 0) {
        spec_error(br, file, line, col, msg + fl + n);
    } else {
        spec_error(br, file, bl->line, bl->col, msg);
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

static const char *item_word(const char *t, const char *w)
{
    size_t n = strlen(w);
    return strncmp(t, w, n) == 0 && (t[n] == ' ' || t[n] == '\t') ? t + n + strspn(t + n, " \t") : NULL;
}

/* Median of n sorted values. */
static double median(const double *v, int n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One case: the block at the sizes sizes[0..nsizes). */
static void run_case(BenchRun *br, const char *file, const TbBlock *bl, const char *exe, const char *run_name,
                     const TbSig *sig, const TbSize *sizes, int nsizes, long runs)
{
    int id = br->s.counter++;
    TbArgs extra = { 0 };
    char **gen = NULL;
    int ngen = 0;
    uint64_t in_bytes = 0, out_bytes = 0;
    char *err = NULL;
    char *stdin_path = tb_printf("%s/stdin%d", br->s.tmp, id);
    FILE *in = fopen(stdin_path, "w");
    if (in) {
        char *base = tb_printf("%s/in%d", br->s.tmp, id);
        int line, col;
        char *e = tb_write_inputs(bl, sig, sizes, nsizes, base, in, &extra, &gen, &ngen, &in_bytes, &line, &col);
        free(base);
        if (e) {
            err = tb_printf("%s:%d:%d: %s", file, line, col, e);
            free(e);
        }
    }
    if (!in || fclose(in) != 0) {
        free(err);
        err = tb_printf("cannot write '%s'", stdin_path);
    }
    char *sizes_text = tb_strdup("");
    for (int i = 0; i < nsizes; i++) {
        char *j = tb_printf("%s%s%s=%lld", sizes_text, i ? "," : "", sizes[i].name, sizes[i].value);
        free(sizes_text);
        sizes_text = j;
    }
    double *times = NULL;
    int ntimes = 0;
    if (err) {
        located_error(br, file, bl, err);
        br->failed--; /* counted once, below */
    } else {
        TbType *rt = tb_parse_type(sig->result, false);
        char *tpath = tb_printf("%s/times%d.txt", br->s.tmp, id);
        tb_args_add(&extra, tb_strdup("-r"));
        tb_args_add(&extra, tb_printf("%ld", runs));
        tb_args_add(&extra, tb_strdup("-t"));
        tb_args_add(&extra, tb_strdup(tpath));
        TbComp *got = NULL;
        char *etext = NULL;
        int st = rt ? tb_run(&br->s, exe, run_name, br->backend, &extra, stdin_path, rt->nleaves, &got, &etext) : -1;
        if (!rt) {
            err = tb_printf("cannot read the result type '%s'", sig->result);
        } else if (st == 128 + 14) {
            err = tb_printf("the program ran longer than %u s (--timeout)", br->s.timeout);
        } else if (st != 0) {
            char *l = tb_first_line(etext);
            err = tb_printf("the program failed (exit status %d): %s", st, l);
            free(l);
        } else {
            out_bytes = tb_comps_bytes(got, rt->nleaves);
            char *text = drv_read_file(tpath, NULL);
            for (char *q = text; q && *q;) {
                char *e;
                double v = strtod(q, &e);
                if (e == q) {
                    break;
                }
                times = tb_realloc(times, (size_t)(ntimes + 1) * sizeof *times);
                times[ntimes++] = v;
                q = e;
            }
            free(text);
            if (ntimes != runs) {
                err = tb_printf("the program wrote %d times for -r %ld", ntimes, runs);
            }
        }
        if (err) {
            fprintf(stderr, "%s:%d: bench %s %s: error: %s\n", file, bl->line, bl->entry, sizes_text, err);
        }
        tb_comps_free(got, rt ? rt->nleaves : 0);
        free(etext);
        unlink(tpath);
        free(tpath);
        tb_type_free(rt);
    }
    /* report */
    if (err) {
        in_bytes = out_bytes = 0;
    }
    uint64_t bytes = in_bytes + out_bytes;
    double med = 0, min = 0, gbps = 0;
    if (!err) {
        double *sorted = tb_malloc((size_t)ntimes * sizeof *sorted);
        memcpy(sorted, times, (size_t)ntimes * sizeof *sorted);
        qsort(sorted, (size_t)ntimes, sizeof *sorted, cmp_double);
        med = median(sorted, ntimes);
        min = sorted[0];
        free(sorted);
        gbps = med > 0 ? (double)bytes / (med * 1e3) : 0;
        br->ncases++;
        printf("%s:%d: bench %s%s%s: median %.1f us (min %.0f, %d runs), %llu bytes, ", file, bl->line, bl->entry,
               *sizes_text ? " " : "", sizes_text, med, min, ntimes, (unsigned long long)bytes);
        if (med > 0) {
            printf("%.3f GB/s\n", gbps);
        } else {
            printf("GB/s not measurable (under 1 us)\n");
        }
    } else {
        br->failed++;
    }
    fflush(stdout);
    if (br->json) {
        FILE *f = br->json;
        fprintf(f, "%s    {\"file\": ", br->njson++ ? ",\n" : "");
        json_str(f, file);
        fprintf(f, ", \"line\": %d, \"entry\": ", bl->line);
        json_str(f, bl->entry);
        fprintf(f, ", \"description\": ");
        if (bl->desc) {
            json_str(f, bl->desc);
        } else {
            fprintf(f, "null");
        }
        fprintf(f, ",\n     \"defines\": {");
        int nd = 0;
        for (int i = 0; i < bl->nitems; i++) {
            const char *d = item_word(bl->items[i].text, "define");
            const char *eq = d ? strchr(d, '=') : NULL;
            if (eq) {
                char *name = tb_strndup(d, (size_t)(eq - d));
                char *v = tb_strdup(eq + 1);
                fprintf(f, "%s", nd++ ? ", " : "");
                json_str(f, tb_trim(name));
                fprintf(f, ": ");
                json_str(f, tb_trim(v));
                free(name);
                free(v);
            }
        }
        fprintf(f, "}, \"sizes\": {");
        for (int i = 0; i < nsizes; i++) {
            fprintf(f, "%s", i ? ", " : "");
            json_str(f, sizes[i].name);
            fprintf(f, ": %lld", sizes[i].value);
        }
        fprintf(f, "},\n     \"runs\": %ld, \"times_us\": [", runs);
        for (int i = 0; i < ntimes && !err; i++) {
            fprintf(f, "%s%.0f", i ? ", " : "", times[i]);
        }
        fprintf(f, "],\n     \"input_bytes\": %llu, \"output_bytes\": %llu, \"bytes\": %llu, ",
                (unsigned long long)in_bytes, (unsigned long long)out_bytes, (unsigned long long)bytes);
        if (err) {
            fprintf(f, "\"median_us\": null, \"min_us\": null, \"gbps\": null, \"error\": ");
            json_str(f, err);
        } else {
            fprintf(f, "\"median_us\": %.1f, \"min_us\": %.0f, \"gbps\": ", med, min);
            if (med > 0) {
                fprintf(f, "%.4f", gbps);
            } else {
                fprintf(f, "null");
            }
            fprintf(f, ", \"error\": null");
        }
        fprintf(f, "}");
    }
    free(times);
    free(sizes_text);
    free(err);
    tb_args_free(&extra);
    for (int i = 0; i < ngen; i++) {
        unlink(gen[i]);
        free(gen[i]);
    }
    free(gen);
    unlink(stdin_path);
    free(stdin_path);
}

/* One bench block: check its lines, build, then every combination of sizes. */
static void run_bench_block(BenchRun *br, const char *file, const TbBlock *bl)
{
    SizeLine *sl = NULL;
    int nsl = 0;
    long runs = 10;
    bool bad = false;
    for (int i = 0; i < bl->nitems && !bad; i++) {
        const TbItem *it = &bl->items[i];
        const char *v;
        if ((v = item_word(it->text, "size"))) {
            size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
            const char *eq = v + n + strspn(v + n, " \t");
            if (n == 0 || *eq != '=') {
                spec_error(br, file, it->line, it->col, "expected 'size NAME = VALUE, VALUE, ...'");
                bad = true;
                break;
            }
            sl = tb_realloc(sl, (size_t)(nsl + 1) * sizeof *sl);
            SizeLine *s = &sl[nsl++];
            memset(s, 0, sizeof *s);
            s->name = tb_strndup(v, n);
            s->item = it;
            for (int j = 0; j < nsl - 1; j++) {
                if (strcmp(sl[j].name, s->name) == 0) {
                    char *m = tb_printf("size '%s' is given twice", s->name);
                    spec_error(br, file, it->line, it->col, m);
                    free(m);
                    bad = true;
                }
            }
            char *list = tb_strdup(eq + 1);
            char *save = NULL;
            for (char *t = strtok_r(list, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
                long long x;
                if (!tb_read_size(t, &x)) {
                    char *m = tb_printf("size '%s': expected a size (N, 2^K or 2^K+N), found '%s'", s->name,
                                        tb_trim(t));
                    spec_error(br, file, it->line, it->col + (int)(t - list) + (int)(eq + 1 - it->text), m);
                    free(m);
                    bad = true;
                    break;
                }
                s->values = tb_realloc(s->values, (size_t)(s->nvalues + 1) * sizeof *s->values);
                s->values[s->nvalues++] = x;
            }
            if (!bad && !s->nvalues) {
                spec_error(br, file, it->line, it->col, "a size line needs at least one value");
                bad = true;
            }
            free(list);
        } else if ((v = item_word(it->text, "runs"))) {
            char *end;
            errno = 0;
            runs = strtol(v, &end, 10);
            if (errno || end == v || *end || runs < 1 || runs > 100000) {
                spec_error(br, file, it->line, it->col, "expected 'runs N' with N from 1 to 100000");
                bad = true;
            }
        } else if (item_word(it->text, "define")) {
            /* checked by tb_prepare */
        } else if (item_word(it->text, "expect") || item_word(it->text, "tol")) {
            spec_error(br, file, it->line, it->col, "a bench block has no expect or tol line (that is a test block)");
            bad = true;
        } else {
            size_t n = strspn(it->text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
            const char *q = it->text + n + strspn(it->text + n, " \t");
            if (n == 0 || *q != '=') {
                char *m = tb_printf("cannot read the line '%s' (expected NAME = random ..., NAME = VALUE, size, "
                                    "runs or define)", it->text);
                spec_error(br, file, it->line, it->col, m);
                free(m);
                bad = true;
            } else if (strncmp(q + 1 + strspn(q + 1, " \t"), "file ", 5) == 0) {
                spec_error(br, file, it->line, it->col, "bench inputs are generated (random) or inline values, not files");
                bad = true;
            }
        }
    }
    const char *exe = NULL, *run_name = NULL;
    const TbSig *sig = NULL;
    char *msg = NULL;
    bool skip = false;
    int prc = bad ? -1 : tb_prepare(&br->s, file, bl, &exe, &sig, &run_name, &msg, &skip);
    if (prc == 1) {
        char *l = tb_first_line(msg);
        fprintf(stderr, "%s:%d: bench %s: error: building the program failed: %s\n", file, bl->line, bl->entry, l);
        free(l);
        br->failed++;
    } else if (prc == 2) {
        located_error(br, file, bl, msg);
    }
    /* every input names a parameter; every size is used */
    for (int i = 0; prc == 0 && i < bl->nitems; i++) {
        const TbItem *it = &bl->items[i];
        if (item_word(it->text, "size") || item_word(it->text, "runs") || item_word(it->text, "define")) {
            continue;
        }
        size_t n = strspn(it->text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        bool known = false;
        for (int p = 0; p < sig->nparams; p++) {
            known = known || (strlen(sig->pnames[p]) == n && strncmp(sig->pnames[p], it->text, n) == 0);
        }
        if (!known) {
            char *m = tb_printf("'%s' has no parameter '%.*s'", bl->entry, (int)n, it->text);
            spec_error(br, file, it->line, it->col, m);
            free(m);
            prc = -1;
        }
    }
    for (int i = 0; prc == 0 && i < nsl; i++) {
        bool used = false;
        for (int p = 0; p < sig->nparams && !used; p++) {
            const char *val = tb_block_input(bl, sig->pnames[p], NULL);
            used = (!val && strcmp(sig->pnames[p], sl[i].name) == 0);
            for (const char *q = val; q && (q = strstr(q, sl[i].name)) && !used; q++) {
                char before = q == val ? ' ' : q[-1], after = q[strlen(sl[i].name)];
                used = !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", before) &&
                       !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", after ? after : ' ');
            }
        }
        if (!used) {
            char *m = tb_printf("size '%s' is not used by any input of '%s'", sl[i].name, bl->entry);
            spec_error(br, file, sl[i].item->line, sl[i].item->col, m);
            free(m);
            prc = -1;
        }
    }
    if (prc == 0) {
        /* every combination of the size values, the last size varying fastest */
        int *at = calloc((size_t)nsl + 1, sizeof *at);
        TbSize *sizes = tb_malloc((size_t)(nsl + 1) * sizeof *sizes);
        if (!at) {
            exit(1);
        }
        for (;;) {
            for (int i = 0; i < nsl; i++) {
                sizes[i] = (TbSize){ sl[i].name, sl[i].values[at[i]] };
            }
            run_case(br, file, bl, exe, run_name, sig, sizes, nsl, br->runs ? br->runs : runs);
            int k = nsl - 1;
            while (k >= 0 && ++at[k] == sl[k].nvalues) {
                at[k--] = 0;
            }
            if (k < 0) {
                break;
            }
        }
        free(at);
        free(sizes);
    }
    free(msg);
    for (int i = 0; i < nsl; i++) {
        free(sl[i].name);
        free(sl[i].values);
    }
    free(sl);
}

static void bench_file(BenchRun *br, const char *file)
{
    char *src = drv_read_file(file, NULL);
    if (!src) {
        fprintf(stderr, "%s: error: cannot read: %s\n", file, strerror(errno));
        br->failed++;
        return;
    }
    int nb = 0;
    TbBlock *bs = tb_read_blocks(src, &nb);
    for (int i = 0; i < nb; i++) {
        if (bs[i].bench && (!br->only || strcmp(br->only, bs[i].entry) == 0)) {
            run_bench_block(br, file, &bs[i]);
        }
    }
    tb_session_next_file(&br->s);
    tb_blocks_free(bs, nb);
    free(src);
}

/* tb_each_gdsl's callbacks */
static void bench_path_one(void *ctx, const char *path)
{
    bench_file(ctx, path);
}

static void bench_path_error(void *ctx, const char *path, const char *msg)
{
    fprintf(stderr, "%s: error: %s\n", path, msg);
    ((BenchRun *)ctx)->failed++;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "gpuc: error: gpuc bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 2;
}

int drv_bench_main(int argc, char **argv)
{
    BenchRun br = { 0 };
    br.backend = "c";
    const char *json_path = NULL, *label = NULL;
    char *defines = NULL;
    unsigned timeout = 600;
    const char **paths = tb_malloc((size_t)argc * sizeof *paths);
    int npaths = 0, rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--backend=", 10) == 0) {
            br.backend = a + 10;
            if (strcmp(br.backend, "c") && strcmp(br.backend, "cuda")) {
                rc = usage_error("--backend must be c or cuda, not '%s'", br.backend);
            }
        } else if (strcmp(a, "--json") == 0 || strcmp(a, "--label") == 0 || strcmp(a, "--runs") == 0 ||
                   strcmp(a, "-k") == 0) {
            if (i + 1 >= argc) {
                rc = usage_error("%s needs a value", a);
                break;
            }
            const char *v = argv[++i];
            if (a[2] == 'j') {
                json_path = v;
            } else if (a[2] == 'l') {
                label = v;
            } else if (a[1] == 'k') {
                br.only = v;
            } else {
                char *end;
                errno = 0;
                br.runs = strtol(v, &end, 10);
                if (errno || end == v || *end || br.runs < 1 || br.runs > 100000) {
                    rc = usage_error("--runs needs a number from 1 to 100000, not '%s'", v);
                }
            }
        } else if (strcmp(a, "-D") == 0) {
            /* ENTRY.P=V or P=V, added to every build (gpuc tune uses it) */
            const char *v = i + 1 < argc ? argv[++i] : NULL;
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v || !eq[1] || strpbrk(v, " \t\n")) {
                rc = usage_error("-D needs ENTRY.PARAM=VALUE or PARAM=VALUE, not '%s'", v ? v : "");
            } else {
                char *d = tb_printf("%s%s\n", defines ? defines : "", v);
                free(defines);
                defines = d;
            }
        } else if (strncmp(a, "--timeout=", 10) == 0) {
            char *end;
            unsigned long t = strtoul(a + 10, &end, 10);
            if (*end || !a[10] || t > 86400) {
                rc = usage_error("--timeout needs seconds (0 for none), not '%s'", a + 10);
            }
            timeout = (unsigned)t;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: gpuc bench [--backend=c|cuda] [-k ENTRY] [--runs N] [--json FILE] [--label TEXT]\n"
                   "                  [-D ENTRY.PARAM=VALUE]... [--timeout=SECONDS] FILES-OR-DIRS...\n"
                   "Runs the //! bench blocks of .gdsl files (docs/bench.md) and prints the median\n"
                   "time, the bytes moved (inputs + outputs) and GB/s of every case.\n");
            free(paths);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            rc = usage_error("unknown option '%s'", a);
        } else {
            paths[npaths++] = a;
        }
    }
    if (!rc && !npaths) {
        rc = usage_error("%sneeds .gdsl files or directories", "");
    }
    if (rc) {
        free(paths);
        free(defines);
        return rc;
    }
    if (json_path && !(br.json = fopen(json_path, "w"))) {
        fprintf(stderr, "gpuc: error: gpuc bench: cannot write '%s': %s\n", json_path, strerror(errno));
        free(paths);
        return 1;
    }
    if (tb_session_init(&br.s) != 0) {
        free(paths);
        return 1;
    }
    br.s.timeout = timeout;
    br.s.defines = defines;
    if (br.json) {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        char date[64];
        time_t now = time(NULL);
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        fprintf(br.json, "{\n  \"gpuc_version\": ");
        json_str(br.json, GPUC_VERSION);
        fprintf(br.json, ",\n  \"backend\": ");
        json_str(br.json, br.backend);
        fprintf(br.json, ",\n  \"label\": ");
        if (label) {
            json_str(br.json, label);
        } else {
            fprintf(br.json, "null");
        }
        fprintf(br.json, ",\n  \"host\": ");
        json_str(br.json, host);
        fprintf(br.json, ",\n  \"date\": ");
        json_str(br.json, date);
        fprintf(br.json, ",\n  \"command_defines\": [");
        for (const char *d = defines; d && *d;) {
            const char *nl = strchr(d, '\n');
            char *one = tb_strndup(d, (size_t)(nl - d));
            fprintf(br.json, "%s", d == defines ? "" : ", ");
            json_str(br.json, one);
            free(one);
            d = nl + 1;
        }
        fprintf(br.json, "]");
        fprintf(br.json, ",\n  \"cases\": [\n");
    }
    for (int i = 0; i < npaths; i++) {
        tb_each_gdsl(paths[i], bench_path_one, bench_path_error, &br);
    }
    tb_session_free(&br.s);
    free(defines);
    printf("%d cases measured, %d errors\n", br.ncases, br.failed);
    if (br.json) {
        fprintf(br.json, "%s  ]\n}\n", br.njson ? "\n" : "");
        if (fclose(br.json) != 0) {
            fprintf(stderr, "gpuc: error: gpuc bench: cannot write '%s'\n", json_path);
            br.failed++;
        }
    }
    free(paths);
    return br.failed ? 1 : 0;
}
