/* test_cmd.c: `gpuc test [--backend=c|cuda] [-k ENTRY] FILES-OR-DIRS...`,
 * the runner of the `//! test` blocks inside .gdsl files (docs/testing.md).
 *
 * Each file is built once per distinct set of `define` lines (gpuc itself,
 * run as a child: `gpuc FILE -o EXE -D ENTRY.P=V`); entry signatures come
 * from the executable's --signatures (the program table's type strings). A
 * block naming a fn of the file runs through a generated wrapper entry
 * (blocks.c). Each block runs the executable once: inline values go to
 * standard input as text (the executable reads the same syntax), `file
 * "PATH"` inputs and generated inputs (Philox, written as .npy files) with
 * --in, and the result comes back as .npy files (--out), one per component,
 * compared with the expected value read against the result type: exact for
 * integers and bools, with the block's tolerance for floats. `expect
 * reference` runs the same executable on --backend=c and compares (on the C
 * backend itself it only checks that the program runs); with --reference-O0
 * the reference is a second build of the file with -O0 (no rewrites, no
 * fusion, no kernels compiled) on the C backend, the comparison difftest/ makes. -O0 builds the
 * programs under test that way too. Prints a line per
 * failing or skipped block and `N passed, N failed, N skipped`; exit status 1
 * on any failure (2 for a bad command line). */
#define _XOPEN_SOURCE 700 /* strdup */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"

typedef struct TestRun {
    TbSession s;
    const char *backend;   /* c or cuda */
    const char *only;      /* -k ENTRY */
    uint64_t max_elements; /* --max-elements N: skip blocks generating more (0: no limit) */
    TbSession ref_O0;      /* --reference-O0: the -O0 builds `expect reference` compares with */
    bool use_ref_O0;
    int passed, failed, skipped;
} TestRun;

static void report(const char *file, const TbBlock *bl, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(const char *file, const TbBlock *bl, const char *what, const char *fmt, ...)
{
    printf("%s:%d: test %s%s%s: %s: ", file, bl->line, bl->entry, bl->desc ? ": " : "", bl->desc ? bl->desc : "",
           what);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static void fmt_elem(const TbComp *c, size_t i, char *buf, size_t n)
{
    const unsigned char *p = c->data + i * tb_kind_size[c->kind];
    switch (c->kind) {
    case TB_BOOL: snprintf(buf, n, "%s", *p ? "true" : "false"); break;
    case TB_I32: { int32_t v; memcpy(&v, p, 4); snprintf(buf, n, "%d", v); break; }
    case TB_U32: { uint32_t v; memcpy(&v, p, 4); snprintf(buf, n, "%u", v); break; }
    case TB_I64: { int64_t v; memcpy(&v, p, 8); snprintf(buf, n, "%lld", (long long)v); break; }
    case TB_U64: { uint64_t v; memcpy(&v, p, 8); snprintf(buf, n, "%llu", (unsigned long long)v); break; }
    case TB_F32: { float v; memcpy(&v, p, 4); snprintf(buf, n, "%.9g", v); break; }
    default: { double v; memcpy(&v, p, 8); snprintf(buf, n, "%.17g", v); break; }
    }
    if ((c->kind == TB_F32 || c->kind == TB_F64) && !strpbrk(buf, ".eni") && strlen(buf) + 3 < n) {
        strcat(buf, ".0"); /* read as a float, like the programs print */
    }
}

static const char *shape_str(const TbComp *c, char *buf, size_t n)
{
    if (c->rank == 0) {
        snprintf(buf, n, "a scalar");
    } else if (c->rank == 1) {
        snprintf(buf, n, "shape (%lld)", c->shape[0]);
    } else {
        snprintf(buf, n, "shape (%lld, %lld)", c->shape[0], c->shape[1]);
    }
    return buf;
}

/* Compare got with want; NULL when equal, else a message. */
static char *compare(const TbComp *want, const TbComp *got, int ncomps, bool tol_set, double rel, double abs_tol,
                     bool exact)
{
    for (int i = 0; i < ncomps; i++) {
        const TbComp *w = &want[i], *g = &got[i];
        const char *cn = ncomps > 1 ? tb_printf("component %d: ", i) : tb_strdup("");
        char *msg = NULL;
        char b1[64], b2[64];
        if (w->kind != g->kind) {
            msg = tb_printf("%sthe result is %s but %s was expected", cn, tb_kind_names[g->kind], tb_kind_names[w->kind]);
        } else if (w->rank != g->rank || w->shape[0] != g->shape[0] || w->shape[1] != g->shape[1]) {
            msg = tb_printf("%sexpected %s, got %s", cn, shape_str(w, b1, sizeof b1), shape_str(g, b2, sizeof b2));
        } else {
            double r = tol_set ? rel : w->kind == TB_F32 ? 1e-5 : 1e-12;
            double a = tol_set ? abs_tol : w->kind == TB_F32 ? 1e-6 : 1e-12;
            size_t es = tb_kind_size[w->kind];
            for (size_t j = 0; j < w->count && !msg; j++) {
                const unsigned char *pw = w->data + j * es, *pg = g->data + j * es;
                bool same;
                if (w->kind == TB_F32 || w->kind == TB_F64) {
                    double x, y;
                    if (w->kind == TB_F32) {
                        float fx, fy;
                        memcpy(&fx, pw, 4);
                        memcpy(&fy, pg, 4);
                        x = fx;
                        y = fy;
                    } else {
                        memcpy(&x, pw, 8);
                        memcpy(&y, pg, 8);
                    }
                    if (isnan(x) || isnan(y)) {
                        same = isnan(x) && isnan(y);
                    } else if (exact) {
                        same = memcmp(pw, pg, es) == 0;
                    } else if (isinf(x) || isinf(y)) {
                        same = x == y;
                    } else {
                        same = fabs(y - x) <= a + r * fabs(x);
                    }
                } else if (w->kind == TB_BOOL) {
                    same = (*pw != 0) == (*pg != 0);
                } else {
                    same = memcmp(pw, pg, es) == 0;
                }
                if (!same) {
                    fmt_elem(w, j, b1, sizeof b1);
                    fmt_elem(g, j, b2, sizeof b2);
                    if (w->rank == 2 && w->shape[1] > 0) {
                        msg = tb_printf("%selement [%lld][%lld]: expected %s, got %s", cn, (long long)j / w->shape[1],
                                   (long long)j % w->shape[1], b1, b2);
                    } else if (w->rank == 1) {
                        msg = tb_printf("%selement [%zu]: expected %s, got %s", cn, j, b1, b2);
                    } else {
                        msg = tb_printf("%sexpected %s, got %s", cn, b1, b2);
                    }
                }
            }
        }
        free((char *)cn);
        if (msg) {
            return msg;
        }
    }
    return NULL;
}

/* The block's expectation and tolerance. */
typedef struct Expect {
    const char *value;   /* expect VALUE */
    char *error;         /* expect error "TEXT" */
    bool reference;      /* expect reference */
    bool tol_set, exact;
    double rel, abs_tol;
} Expect;

/* Read the expect/tol lines and check every line of the block is known;
 * NULL, or a message naming the line. */
static char *read_expect(const char *file, const TbBlock *bl, const TbSig *sig, Expect *ex)
{
    int nexpect = 0;
    for (int i = 0; i < bl->nitems; i++) {
        const TbItem *it = &bl->items[i];
        const char *t = it->text;
        if (strncmp(t, "expect", 6) == 0 && (t[6] == ' ' || t[6] == '\t')) {
            nexpect++;
            const char *v = t + 7;
            while (*v == ' ' || *v == '\t') {
                v++;
            }
            if (strncmp(v, "error", 5) == 0 && (v[5] == ' ' || v[5] == '"')) {
                const char *q1 = strchr(v, '"'), *q2 = q1 ? strrchr(q1 + 1, '"') : NULL;
                if (!q2) {
                    return tb_printf("%s:%d:%d: expected 'expect error \"TEXT\"'", file, it->line, it->col);
                }
                free(ex->error);
                ex->error = tb_strndup(q1 + 1, (size_t)(q2 - q1 - 1));
            } else if (strcmp(v, "reference") == 0) {
                ex->reference = true;
            } else {
                ex->value = v;
            }
        } else if (strncmp(t, "tol ", 4) == 0) {
            ex->tol_set = true;
            char *e;
            if (strcmp(t + 4 + strspn(t + 4, " "), "exact") == 0) {
                ex->exact = true;
            } else if ((ex->rel = strtod(t + 4, &e)), e == t + 4 || ex->rel < 0) {
                return tb_printf("%s:%d:%d: expected 'tol REL [ABS]' or 'tol exact', found '%s'", file, it->line,
                                 it->col, t);
            } else {
                char *e2;
                ex->abs_tol = *e ? strtod(e, &e2) : ex->rel;
                if (*e && (e2 == e || *tb_trim(e2))) {
                    return tb_printf("%s:%d:%d: expected 'tol REL [ABS]' or 'tol exact', found '%s'", file,
                                     it->line, it->col, t);
                }
            }
        } else if (strncmp(t, "define", 6) != 0 || (t[6] != ' ' && t[6] != '\t')) {
            /* NAME = VALUE: a parameter of the entry */
            size_t n = strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
            const char *q = t + n + strspn(t + n, " \t");
            if (n == 0 || *q != '=') {
                return tb_printf("%s:%d:%d: cannot read the line '%s' (expected NAME = VALUE, define, expect or "
                                 "tol)", file, it->line, it->col, t);
            }
            bool known = false;
            for (int p = 0; sig && p < sig->nparams; p++) {
                known = known || (strlen(sig->pnames[p]) == n && strncmp(sig->pnames[p], t, n) == 0);
            }
            if (sig && !known) {
                return tb_printf("%s:%d:%d: '%s' has no parameter '%.*s'", file, it->line, it->col, bl->entry,
                                 (int)n, t);
            }
        }
    }
    if (nexpect != 1) {
        return tb_printf("the block needs exactly one 'expect' line (has %d)", nexpect);
    }
    return NULL;
}

/* Elements of a generated input `random TYPE seed ...` with integer sizes
 * (0 when it cannot tell). */
static uint64_t random_elements(const char *spec)
{
    const char *seed = strstr(spec, " seed ");
    char *ts = seed ? tb_strndup(spec, (size_t)(seed - spec)) : NULL;
    TbType *t = ts ? tb_parse_type(tb_trim(ts), true) : NULL;
    uint64_t n = t ? 1 : 0;
    for (int d = 0; t && t->k == TB_ARRAY && d < t->rank; d++) {
        n *= t->dims[d] > 0 ? (uint64_t)t->dims[d] : 0;
    }
    tb_type_free(t);
    free(ts);
    return n;
}

/* One block: passes, fails or is skipped (counted in tr). */
static void run_block(TestRun *tr, const char *file, const TbBlock *bl)
{
    const char *exe = NULL, *run_name = NULL;
    const TbSig *sig = NULL;
    char *msg = NULL;
    bool skip = false;
    Expect ex = { 0 };
    int prc = tb_prepare(&tr->s, file, bl, &exe, &sig, &run_name, &msg, &skip);
    char *bad = read_expect(file, bl, sig, &ex);
    if (bad) {
        tr->failed++;
        report(file, bl, "FAIL", "%s", bad);
        free(bad);
        free(msg);
        free(ex.error);
        return;
    }
    if (prc == 1) {
        char *l = tb_first_line(msg);
        if (ex.error && strstr(msg, ex.error)) {
            tr->passed++;
        } else {
            tr->failed++;
            report(file, bl, "FAIL", "%s%s",
                   ex.error ? "expected an error containing the text, but building failed with: "
                            : "building the program failed: ", l);
        }
        free(l);
        free(msg);
        free(ex.error);
        return;
    }
    if (prc == 2) {
        skip ? tr->skipped++ : tr->failed++;
        report(file, bl, skip ? "SKIP" : "FAIL", "%s", msg);
        free(msg);
        free(ex.error);
        return;
    }
    TbType *rt = tb_parse_type(sig->result, false);
    if (!rt) {
        tr->failed++;
        report(file, bl, "FAIL", "cannot read the result type '%s'", sig->result);
        free(ex.error);
        return;
    }

    /* inputs: text on stdin in parameter order, files and generated ones with --in */
    int id = tr->s.counter++;
    char *stdin_path = tb_printf("%s/stdin%d", tr->s.tmp, id);
    FILE *in = fopen(stdin_path, "w");
    TbArgs extra = { 0 };
    char **gen = NULL;
    int ngen = 0;
    char *problem = NULL;
    char *dir = tb_strdup(file);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
    } else {
        strcpy(dir, ".");
    }
    bool skip_block = false;
    for (int p = 0; p < sig->nparams && !problem && in; p++) {
        const TbItem *it = NULL;
        const char *val = tb_block_input(bl, sig->pnames[p], &it);
        uint64_t count = val && strncmp(val, "random ", 7) == 0 ? random_elements(val + 7) : 0;
        if (!val) {
            problem = tb_printf("no input for parameter '%s'", sig->pnames[p]);
        } else if (tr->max_elements && count > tr->max_elements) {
            problem = tb_printf("the generated input '%s' has %llu elements, over --max-elements %llu",
                                sig->pnames[p], (unsigned long long)count, (unsigned long long)tr->max_elements);
            skip_block = true;
        } else if (strncmp(val, "random ", 7) == 0) {
            uint64_t bytes = 0;
            char *base = tb_printf("%s/in%d.%d", tr->s.tmp, id, p);
            char *e = tb_gen_random(val + 7, sig->pnames[p], sig->ptypes[p], NULL, 0, base, &extra, &gen, &ngen,
                                    &bytes);
            free(base);
            if (e) {
                problem = tb_printf("%s:%d:%d: %s", file, it->line, it->col, e);
                free(e);
            }
        } else if (strncmp(val, "file ", 5) == 0) {
            const char *q1 = strchr(val, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
            if (!q2) {
                problem = tb_printf("%s:%d:%d: parameter '%s': expected file \"PATH\"", file, it->line, it->col,
                                    sig->pnames[p]);
            } else {
                tb_args_add(&extra, tb_strdup("--in"));
                tb_args_add(&extra, tb_printf("%s=%s/%.*s", sig->pnames[p], dir, (int)(q2 - q1 - 1), q1 + 1));
            }
        } else {
            fprintf(in, "%s\n", val);
        }
    }
    free(dir);
    if (!in) {
        problem = tb_printf("cannot write '%s'", stdin_path);
    } else if (fclose(in) != 0 && !problem) {
        problem = tb_printf("cannot write '%s'", stdin_path);
    }
    if (problem) {
        skip_block ? tr->skipped++ : tr->failed++;
        report(file, bl, skip_block ? "SKIP" : "FAIL", "%s", problem);
        free(problem);
    } else {
        TbComp *got = NULL;
        char *err = NULL;
        int st = tb_run(&tr->s, exe, run_name, tr->backend, &extra, stdin_path, rt->nleaves, &got, &err);
        char *e1 = tb_first_line(err);
        if (ex.error) {
            if (st != 0 && strstr(err, ex.error)) {
                tr->passed++;
            } else if (st != 0) {
                tr->failed++;
                report(file, bl, "FAIL", "expected an error containing \"%s\", got: %s", ex.error, e1);
            } else {
                tr->failed++;
                report(file, bl, "FAIL", "expected an error containing \"%s\", but the program succeeded", ex.error);
            }
        } else if (st == 128 + 14) { /* SIGALRM */
            tr->failed++;
            report(file, bl, "FAIL", "the program ran longer than %u s (--timeout)", tr->s.timeout);
        } else if (st != 0) {
            tr->failed++;
            report(file, bl, "FAIL", "the program failed (exit status %d): %s", st, e1);
        } else if (ex.reference && strcmp(tr->backend, "c") == 0 && !tr->use_ref_O0) {
            tr->passed++; /* the reference itself: it ran */
        } else {
            TbComp *want = NULL;
            char perr[300];
            char *m = NULL;
            if (ex.reference) {
                char *err2 = NULL;
                TbSession *rs = tr->use_ref_O0 ? &tr->ref_O0 : &tr->s;
                const char *rexe = exe, *rname = run_name;
                const TbSig *rsig = NULL;
                bool rskip = false;
                int st2 = rs != &tr->s ? tb_prepare(rs, file, bl, &rexe, &rsig, &rname, &err2, &rskip) : 0;
                if (st2 != 0) {
                    char *e2 = tb_first_line(err2);
                    m = tb_printf("building the -O0 reference failed: %s", e2);
                    free(e2);
                } else if ((st2 = tb_run(rs, rexe, rname, "c", &extra, stdin_path, rt->nleaves, &want, &err2)) != 0) {
                    char *e2 = tb_first_line(err2);
                    m = tb_printf("the reference C backend failed (exit status %d): %s", st2, e2);
                    free(e2);
                }
                free(err2);
            } else {
                want = tb_parse_value(ex.value, rt, perr, sizeof perr);
                if (!want) {
                    m = tb_printf("cannot read the expected value as %s: %s", sig->result, perr);
                }
            }
            if (!m) {
                m = compare(want, got, rt->nleaves, ex.tol_set, ex.rel, ex.abs_tol, ex.exact);
            }
            if (m) {
                tr->failed++;
                report(file, bl, "FAIL", "%s", m);
                free(m);
            } else {
                tr->passed++;
            }
            tb_comps_free(want, rt->nleaves);
        }
        free(e1);
        free(err);
        tb_comps_free(got, rt->nleaves);
    }
    tb_args_free(&extra);
    for (int i = 0; i < ngen; i++) {
        unlink(gen[i]);
        free(gen[i]);
    }
    free(gen);
    unlink(stdin_path);
    free(stdin_path);
    tb_type_free(rt);
    free(ex.error);
}

static void test_file(TestRun *tr, const char *file)
{
    char *src = drv_read_file(file, NULL);
    if (!src) {
        printf("%s: error: cannot read: %s\n", file, strerror(errno));
        tr->failed++;
        return;
    }
    int nb = 0;
    TbBlock *bs = tb_read_blocks(src, &nb);
    for (int i = 0; i < nb; i++) {
        if (bs[i].bench || (tr->only && strcmp(tr->only, bs[i].entry) != 0)) {
            continue;
        }
        run_block(tr, file, &bs[i]);
    }
    tb_session_next_file(&tr->s);
    if (tr->use_ref_O0) {
        tb_session_next_file(&tr->ref_O0);
    }
    tb_blocks_free(bs, nb);
    free(src);
}

/* tb_each_gdsl's callbacks */
static void test_path_one(void *ctx, const char *path)
{
    test_file(ctx, path);
}

static void test_path_error(void *ctx, const char *path, const char *msg)
{
    fprintf(stdout, "%s: error: %s\n", path, msg);
    ((TestRun *)ctx)->failed++;
}

int drv_test_main(int argc, char **argv)
{
    TestRun tr = { 0 };
    tr.backend = "c";
    unsigned timeout = 600;
    bool no_opt = false;
    const char *arch = NULL; /* --arch=LIST: of the builds under test */
    const char **paths = tb_malloc((size_t)argc * sizeof *paths);
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--backend=", 10) == 0) {
            tr.backend = a + 10;
            if (strcmp(tr.backend, "c") && strcmp(tr.backend, "cuda")) {
                fprintf(stderr, "gpuc: error: gpuc test: --backend must be c or cuda, not '%s'\n", tr.backend);
                free(paths);
                return 2;
            }
        } else if (strncmp(a, "--timeout=", 10) == 0) {
            char *end;
            unsigned long t = strtoul(a + 10, &end, 10);
            if (*end || !a[10] || t > 86400) {
                fprintf(stderr, "gpuc: error: gpuc test: --timeout needs seconds (0 for none), not '%s'\n", a + 10);
                free(paths);
                return 2;
            }
            timeout = (unsigned)t;
        } else if (strcmp(a, "-O0") == 0) {
            no_opt = true;
        } else if (strncmp(a, "--arch=", 7) == 0) {
            arch = a;
        } else if (strcmp(a, "--reference-O0") == 0) {
            tr.use_ref_O0 = true;
        } else if (strcmp(a, "-k") == 0 && i + 1 < argc) {
            tr.only = argv[++i];
        } else if ((strcmp(a, "--max-elements") == 0 && i + 1 < argc) || strncmp(a, "--max-elements=", 15) == 0) {
            const char *v = a[14] == '=' ? a + 15 : argv[++i];
            char *end;
            errno = 0;
            unsigned long long m = strtoull(v, &end, 10);
            if (errno || end == v || *end || v[0] == '-') {
                fprintf(stderr, "gpuc: error: gpuc test: --max-elements needs a number, not '%s'\n", v);
                free(paths);
                return 2;
            }
            tr.max_elements = m;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: gpuc test [--backend=c|cuda] [-k ENTRY] [--timeout=SECONDS] [--max-elements N]\n"
                   "                 [-O0] [--reference-O0] [--arch=LIST] FILES-OR-DIRS...\n"
                   "Runs the //! test blocks of .gdsl files (docs/testing.md) and prints\n"
                   "a line per failing or skipped block and 'N passed, N failed, N skipped'.\n"
                   "--max-elements N skips blocks with a generated input of more than N elements;\n"
                   "$GPUC_TEST_WRAP (words separated by spaces) is put before every run of a program\n"
                   "(e.g. 'compute-sanitizer --tool memcheck').\n"
                   "-O0 builds the programs without IR rewrites and fusion; --reference-O0 makes\n"
                   "'expect reference' compare with such a build on the C backend (also with\n"
                   "--backend=c). --arch=LIST is given to every build (--arch=none: no kernels\n"
                   "compiled, for C backend runs).\n");
            free(paths);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "gpuc: error: gpuc test: unknown option '%s'\n", a);
            free(paths);
            return 2;
        } else {
            paths[npaths++] = a;
        }
    }
    if (!npaths) {
        fprintf(stderr, "gpuc: error: gpuc test needs .gdsl files or directories\n");
        free(paths);
        return 2;
    }
    if (tb_session_init(&tr.s) != 0 || (tr.use_ref_O0 && tb_session_init(&tr.ref_O0) != 0)) {
        free(paths);
        return 1;
    }
    tr.s.timeout = timeout;
    if (no_opt) {
        tb_args_add(&tr.s.build_args, tb_strdup("-O0"));
    }
    if (arch) {
        tb_args_add(&tr.s.build_args, tb_strdup(arch));
    }
    if (tr.use_ref_O0) {
        tr.ref_O0.timeout = timeout;
        tb_args_add(&tr.ref_O0.build_args, tb_strdup("-O0"));
        tb_args_add(&tr.ref_O0.build_args, tb_strdup("--arch=none")); /* it only runs on the C backend */
    }
    const char *wrap = getenv("GPUC_TEST_WRAP");
    if (wrap && *wrap) {
        char *w = tb_strdup(wrap);
        for (char *t = strtok(w, " \t"); t; t = strtok(NULL, " \t")) {
            tb_args_add(&tr.s.wrap, tb_strdup(t));
        }
        free(w);
    }
    for (int i = 0; i < npaths; i++) {
        tb_each_gdsl(paths[i], test_path_one, test_path_error, &tr);
    }
    tb_session_free(&tr.s);
    if (tr.use_ref_O0) {
        tb_session_free(&tr.ref_O0);
    }
    free(paths);
    printf("%d passed, %d failed, %d skipped\n", tr.passed, tr.failed, tr.skipped);
    return tr.failed ? 1 : 0;
}
