/* test_cmd.c: `gpuc test [--backend=c|cuda] [-k ENTRY] [-j N] [--arch=LIST]
 * FILES-OR-DIRS...`, the runner of the `//! test` blocks inside .gdsl files
 * (docs/testing.md).
 *
 * Each file is tested in a child process (test_files: up to -j at a time,
 * reports printed in file order). In it every block is planned first
 * (plan_block): the file is built once per distinct set of `define` lines
 * and build options (gpuc itself, run as a child: `gpuc FILE -o EXE --arch=A
 * -D ENTRY.P=V`; --arch=none on the C backend, the device's architecture on
 * CUDA); entry signatures come from the executable's --signatures; a block
 * naming a fn of the file runs through a generated wrapper entry (blocks.c);
 * inline values are written as text for standard input, `file "PATH"` and
 * generated inputs (Philox, written as .npy files) are given with --in.
 * Then all runs of one executable go to one `EXE --batch` process
 * (tb_run_all), and each block is judged on its own run (finish_block): the
 * result's .npy files, one per component, compared with the expected value
 * read against the result type: exact for integers and bools, with the
 * block's tolerance for floats. `expect reference` adds a run of the
 * reference build's C backend on the same inputs (--reference-O0: a -O0 build; on the
 * C backend itself it only checks that the program runs). Prints a line per
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
#include <sys/wait.h>
#include <unistd.h>

#include "blocks.h"
#include "driver.h"
#include "gpuc.h"

typedef struct TestRun {
    TbSession s;
    const char *backend;   /* c or cuda */
    const char *only;      /* -k ENTRY */
    uint64_t max_elements; /* --max-elements N: skip blocks generating more (0: no limit) */
    const char *build_options; /* gpuc options of every build: the --arch of the test run, -O0 */
    const char *reference_options; /* gpuc options of the build whose C backend is `expect
                                    * reference`'s, added to the tested build's: "" is the
                                    * tested build itself; "-O0" (--reference-O0) compares
                                    * optimized with unoptimized code, as difftest/ does */
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

/* Whether `expect reference` compares with another run: on the C backend
 * with no reference options the reference is the tested run itself. */
static bool reference_runs(const TestRun *tr)
{
    return strcmp(tr->backend, "c") != 0 || *tr->reference_options;
}

/* Where a block stands: waiting for its runs, or done. */
enum { BLOCK_RUNS, BLOCK_PASS, BLOCK_FAIL, BLOCK_SKIP };

/* One block of a file between planning (its runs queued) and its outcome. */
typedef struct BlockJob {
    const TbBlock *bl;
    int state;            /* BLOCK_* */
    char *msg;            /* BLOCK_FAIL, BLOCK_SKIP: why */
    Expect ex;
    char *result_type;    /* the entry's result type string */
    TbType *rt;           /* ... parsed */
    int run, ref;         /* its runs in the file's list (ref: the reference's), -1 when none */
    char *ref_problem;    /* the reference could not be prepared: why */
    TbArgs extra;         /* --in arguments of its runs */
    char **gen;           /* generated input files */
    int ngen;
    char *stdin_path;
} BlockJob;

static void block_done(BlockJob *j, int state, char *owned_msg)
{
    j->state = state;
    j->msg = owned_msg;
}

/* The runs of the file so far. */
typedef struct RunList {
    TbRun *v;
    int n;
} RunList;

static int add_run(RunList *rl, const char *exe, const char *run_name, const char *backend, const BlockJob *j)
{
    rl->v = tb_realloc(rl->v, (size_t)(rl->n + 1) * sizeof *rl->v);
    TbRun *r = &rl->v[rl->n];
    memset(r, 0, sizeof *r);
    r->exe = exe;
    r->run_name = run_name;
    r->backend = backend;
    r->extra = &j->extra;
    r->stdin_path = j->stdin_path;
    r->nresults = j->rt->nleaves;
    return rl->n++;
}

/* Read a block, build what it needs and write its inputs: either its
 * outcome is known already (a malformed block, a build error...), or its
 * runs are added to rl. */
static void plan_block(TestRun *tr, const char *file, BlockJob *j, RunList *rl)
{
    const TbBlock *bl = j->bl;
    const char *exe = NULL, *run_name = NULL;
    const TbSig *sig = NULL;
    char *msg = NULL;
    bool skip = false;
    j->run = j->ref = -1;
    int prc = tb_prepare_opts(&tr->s, file, bl, tr->build_options, &exe, &sig, &run_name, &msg, &skip);
    char *bad = read_expect(file, bl, sig, &j->ex);
    if (bad) {
        free(msg);
        block_done(j, BLOCK_FAIL, bad);
        return;
    }
    if (prc == 1) {
        char *l = tb_first_line(msg);
        if (j->ex.error && strstr(msg, j->ex.error)) {
            block_done(j, BLOCK_PASS, NULL);
        } else {
            block_done(j, BLOCK_FAIL, tb_printf("%s%s",
                                                j->ex.error ? "expected an error containing the text, but building "
                                                              "failed with: "
                                                            : "building the program failed: ", l));
        }
        free(l);
        free(msg);
        return;
    }
    if (prc == 2) {
        block_done(j, skip ? BLOCK_SKIP : BLOCK_FAIL, msg);
        return;
    }
    j->result_type = tb_strdup(sig->result);
    j->rt = tb_parse_type(sig->result, false);
    if (!j->rt) {
        block_done(j, BLOCK_FAIL, tb_printf("cannot read the result type '%s'", sig->result));
        return;
    }

    /* inputs: text on stdin in parameter order, files and generated ones with --in */
    int id = tr->s.counter++;
    j->stdin_path = tb_printf("%s/stdin%d", tr->s.tmp, id);
    FILE *in = fopen(j->stdin_path, "w");
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
            char *e = tb_gen_random(val + 7, sig->pnames[p], sig->ptypes[p], NULL, 0, base, &j->extra, &j->gen,
                                    &j->ngen, &bytes);
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
                tb_args_add(&j->extra, tb_strdup("--in"));
                tb_args_add(&j->extra, tb_printf("%s=%s/%.*s", sig->pnames[p], dir, (int)(q2 - q1 - 1), q1 + 1));
            }
        } else {
            fprintf(in, "%s\n", val);
        }
    }
    free(dir);
    if (!in) {
        problem = tb_printf("cannot write '%s'", j->stdin_path);
    } else if (fclose(in) != 0 && !problem) {
        problem = tb_printf("cannot write '%s'", j->stdin_path);
    }
    if (problem) {
        block_done(j, skip_block ? BLOCK_SKIP : BLOCK_FAIL, problem);
        return;
    }
    j->state = BLOCK_RUNS;
    j->run = add_run(rl, exe, run_name, tr->backend, j);
    if (j->ex.reference && !j->ex.error && reference_runs(tr)) {
        /* the reference: the C backend of the reference build, same inputs */
        char *opts = *tr->reference_options ? tb_printf("--arch=none %s", tr->reference_options)
                                        : tb_strdup(tr->build_options);
        const char *rexe = NULL, *rname = NULL;
        const TbSig *rsig = NULL;
        char *rmsg = NULL;
        bool rskip = false;
        if (tb_prepare_opts(&tr->s, file, bl, opts, &rexe, &rsig, &rname, &rmsg, &rskip) != 0) {
            char *l = tb_first_line(rmsg ? rmsg : "");
            j->ref_problem = tb_printf("the reference build (gpuc %s) failed: %s", opts, l);
            free(l);
        } else if (strcmp(rsig->result, sig->result) != 0) {
            j->ref_problem = tb_printf("the reference build returns %s, not %s", rsig->result, sig->result);
        } else {
            j->ref = add_run(rl, rexe, rname, "c", j);
        }
        free(rmsg);
        free(opts);
    }
}

/* Compare a block's runs with its expectation. */
static void finish_block(TestRun *tr, BlockJob *j, const RunList *rl)
{
    const TbRun *r = &rl->v[j->run];
    int st = r->status;
    char *e1 = tb_first_line(r->errtext ? r->errtext : "");
    const Expect *ex = &j->ex;
    if (ex->error) {
        if (st != 0 && strstr(r->errtext, ex->error)) {
            block_done(j, BLOCK_PASS, NULL);
        } else if (st != 0) {
            block_done(j, BLOCK_FAIL, tb_printf("expected an error containing \"%s\", got: %s", ex->error, e1));
        } else {
            block_done(j, BLOCK_FAIL,
                       tb_printf("expected an error containing \"%s\", but the program succeeded", ex->error));
        }
    } else if (st == 128 + 14) { /* SIGALRM */
        block_done(j, BLOCK_FAIL, tb_printf("the program ran longer than %u s (--timeout)", tr->s.timeout));
    } else if (st != 0) {
        block_done(j, BLOCK_FAIL, tb_printf("the program failed (exit status %d): %s", st, e1));
    } else if (ex->reference && !reference_runs(tr)) {
        block_done(j, BLOCK_PASS, NULL); /* the reference itself: it ran */
    } else {
        TbComp *want = NULL;
        char perr[300];
        char *m = NULL;
        if (ex->reference && j->ref_problem) {
            m = tb_strdup(j->ref_problem);
        } else if (ex->reference) {
            const TbRun *rr = &rl->v[j->ref];
            if (rr->status != 0) {
                char *e2 = tb_first_line(rr->errtext ? rr->errtext : "");
                m = tb_printf("the reference C backend failed (exit status %d): %s", rr->status, e2);
                free(e2);
            } else {
                want = rr->out;
            }
        } else {
            want = tb_parse_value(ex->value, j->rt, perr, sizeof perr);
            if (!want) {
                m = tb_printf("cannot read the expected value as %s: %s", j->result_type, perr);
            }
        }
        if (!m) {
            m = compare(want, r->out, j->rt->nleaves, ex->tol_set, ex->rel, ex->abs_tol, ex->exact);
        }
        block_done(j, m ? BLOCK_FAIL : BLOCK_PASS, m);
        if (!ex->reference) {
            tb_comps_free(want, j->rt->nleaves);
        }
    }
    free(e1);
}

static void block_free(BlockJob *j)
{
    tb_args_free(&j->extra);
    for (int i = 0; i < j->ngen; i++) {
        unlink(j->gen[i]);
        free(j->gen[i]);
    }
    free(j->gen);
    if (j->stdin_path) {
        unlink(j->stdin_path);
    }
    free(j->stdin_path);
    free(j->msg);
    free(j->ref_problem);
    free(j->result_type);
    tb_type_free(j->rt);
    free(j->ex.error);
}

/* Every block of a file: plan them all (builds, inputs), run all their runs
 * (one process per executable), then judge and report them in file order. */
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
    BlockJob *jobs = calloc((size_t)nb + 1, sizeof *jobs);
    if (!jobs) {
        exit(1);
    }
    RunList rl = { 0 };
    int nj = 0;
    for (int i = 0; i < nb; i++) {
        if (bs[i].bench || (tr->only && strcmp(tr->only, bs[i].entry) != 0)) {
            continue;
        }
        jobs[nj].bl = &bs[i];
        plan_block(tr, file, &jobs[nj++], &rl);
    }
    tb_run_all(&tr->s, rl.v, rl.n);
    for (int i = 0; i < nj; i++) {
        BlockJob *j = &jobs[i];
        if (j->state == BLOCK_RUNS) {
            finish_block(tr, j, &rl);
        }
        if (j->state == BLOCK_PASS) {
            tr->passed++;
        } else {
            j->state == BLOCK_SKIP ? tr->skipped++ : tr->failed++;
            report(file, j->bl, j->state == BLOCK_SKIP ? "SKIP" : "FAIL", "%s", j->msg);
        }
        block_free(j);
    }
    for (int i = 0; i < rl.n; i++) {
        tb_comps_free(rl.v[i].out, rl.v[i].nresults);
        free(rl.v[i].errtext);
    }
    free(rl.v);
    free(jobs);
    tb_session_next_file(&tr->s);
    tb_blocks_free(bs, nb);
    free(src);
}

/* The files of a run, in order, with the paths that could not be read. */
typedef struct FileList {
    char **path;
    char **error; /* per path: why it cannot be read, or NULL */
    int n;
} FileList;

/* tb_each_gdsl's callbacks */
static void list_file(void *ctx, const char *path)
{
    FileList *fl = ctx;
    fl->path = tb_realloc(fl->path, (size_t)(fl->n + 1) * sizeof *fl->path);
    fl->error = tb_realloc(fl->error, (size_t)(fl->n + 1) * sizeof *fl->error);
    fl->path[fl->n] = tb_strdup(path);
    fl->error[fl->n++] = NULL;
}

static void list_error(void *ctx, const char *path, const char *msg)
{
    FileList *fl = ctx;
    list_file(ctx, path);
    fl->error[fl->n - 1] = tb_strdup(msg);
}

/* File i in a child process of its own (its scratch directory tmp/fI), its
 * report into tmp/fI.out and its counts into tmp/fI.counts. */
static pid_t start_file(TestRun *tr, const FileList *fl, int i)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    char *out = tb_printf("%s/f%d.out", tr->s.tmp, i), *counts = tb_printf("%s/f%d.counts", tr->s.tmp, i);
    char *sub = tb_printf("%s/f%d", tr->s.tmp, i);
    if (mkdir(sub, 0700) != 0 || !freopen(out, "w", stdout)) {
        fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", out, strerror(errno));
        _exit(1);
    }
    tr->s.tmp = sub;
    tr->passed = tr->failed = tr->skipped = 0; /* this file's own */
    if (fl->error[i]) {
        printf("%s: error: %s\n", fl->path[i], fl->error[i]);
        tr->failed++;
    } else {
        test_file(tr, fl->path[i]);
    }
    drv_remove_dir(sub);
    FILE *c = fopen(counts, "w");
    bool ok = c && fprintf(c, "%d %d %d\n", tr->passed, tr->failed, tr->skipped) > 0;
    ok = c && fclose(c) == 0 && ok;
    ok = fflush(stdout) == 0 && ok;
    _exit(ok ? 0 : 1);
}

/* Copy file i's report to stdout and add its counts; a child that died
 * without its counts fails the file. */
static void finish_file(TestRun *tr, const FileList *fl, int i, int status)
{
    char *out = tb_printf("%s/f%d.out", tr->s.tmp, i), *counts = tb_printf("%s/f%d.counts", tr->s.tmp, i);
    char *text = drv_read_file(out, NULL), *ctext = drv_read_file(counts, NULL);
    int p = 0, f = 0, k = 0;
    if (text) {
        fputs(text, stdout);
    }
    if (status != 0 || !ctext || sscanf(ctext, "%d %d %d", &p, &f, &k) != 3) {
        printf("%s: error: gpuc test stopped on this file (status %d)\n", fl->path[i], status);
        tr->failed++;
    } else {
        tr->passed += p;
        tr->failed += f;
        tr->skipped += k;
    }
    fflush(stdout);
    unlink(out);
    unlink(counts);
    free(text);
    free(ctext);
    free(out);
    free(counts);
}

/* Bytes of a file: how long testing it takes, roughly (0 when unknown). */
static long long file_cost(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Test every file, up to jobs at a time (each in a child process), the
 * biggest first so that the longest does not start last, and report them in
 * the order of the list whatever order they end in. */
static void test_files(TestRun *tr, const FileList *fl, int jobs)
{
    pid_t *pids = calloc((size_t)fl->n + 1, sizeof *pids);
    int *status = calloc((size_t)fl->n + 1, sizeof *status);
    bool *ended = calloc((size_t)fl->n + 1, sizeof *ended);
    int *order = calloc((size_t)fl->n + 1, sizeof *order);
    long long *cost = calloc((size_t)fl->n + 1, sizeof *cost);
    if (!pids || !status || !ended || !order || !cost) {
        exit(1);
    }
    for (int i = 0; i < fl->n; i++) {
        cost[i] = fl->error[i] ? 0 : file_cost(fl->path[i]);
        int k = i;
        for (; k > 0 && cost[order[k - 1]] < cost[i]; k--) {
            order[k] = order[k - 1];
        }
        order[k] = i;
    }
    int started = 0, running = 0, reported = 0;
    while (reported < fl->n) {
        while (running < jobs && started < fl->n) {
            int f = order[started++];
            pids[f] = start_file(tr, fl, f);
            if (pids[f] < 0) {
                status[f] = 127;
                ended[f] = true;
            } else {
                running++;
            }
        }
        if (running > 0) {
            int st;
            pid_t pid = wait(&st);
            for (int i = 0; pid > 0 && i < fl->n; i++) {
                if (pids[i] == pid && !ended[i]) {
                    ended[i] = true;
                    status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                    running--;
                }
            }
            for (int i = 0; pid < 0 && errno != EINTR && i < fl->n; i++) {
                if (pids[i] > 0 && !ended[i]) { /* lost: reported as stopped */
                    ended[i] = true;
                    status[i] = 127;
                    running--;
                }
            }
        }
        while (reported < fl->n && ended[reported]) {
            finish_file(tr, fl, reported, status[reported]);
            reported++;
        }
    }
    free(order);
    free(cost);
    free(pids);
    free(status);
    free(ended);
}

/* The architecture of device 0 for the builds ("--arch=sm_90"), or NULL
 * when there is none to ask (the builds then take gpuc's default list). */
static char *device_arch_option(void)
{
    GpucDeviceInfo info;
    if (gpuc_init() != GPUC_SUCCESS || gpuc_device_info(0, &info) != GPUC_SUCCESS) {
        return NULL;
    }
    return tb_printf("--arch=sm_%d%d", info.cc_major, info.cc_minor);
}

int drv_test_main(int argc, char **argv)
{
    TestRun tr = { 0 };
    tr.backend = "c";
    unsigned timeout = 600;
    const char *arch = NULL; /* --arch=LIST */
    bool no_opt = false;     /* -O0: build the programs under test without rewrites and fusion */
    tr.reference_options = "";
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = ncpu > 0 ? (int)ncpu : 1;
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
        } else if (strcmp(a, "--reference-O0") == 0) {
            tr.reference_options = "-O0";
        } else if (strncmp(a, "--arch=", 7) == 0) {
            if (drv_check_arch(a + 7) != 0) {
                free(paths);
                return 2;
            }
            arch = a + 7;
        } else if (strncmp(a, "-j", 2) == 0 || strncmp(a, "--jobs=", 7) == 0) {
            const char *v = a[1] == 'j' ? (a[2] ? a + 2 : i + 1 < argc ? argv[++i] : "") : a + 7;
            char *end;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 1024) {
                fprintf(stderr, "gpuc: error: gpuc test: -j needs a number of jobs from 1 to 1024, not '%s'\n", v);
                free(paths);
                return 2;
            }
            jobs = (int)n;
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
                   "                 [-j N] [--arch=LIST] [-O0] [--reference-O0] FILES-OR-DIRS...\n"
                   "Runs the //! test blocks of .gdsl files (docs/testing.md) and prints\n"
                   "a line per failing or skipped block and 'N passed, N failed, N skipped'.\n"
                   "--max-elements N skips blocks with a generated input of more than N elements;\n"
                   "-j N tests N files at a time (default: the number of CPUs); --arch=LIST builds\n"
                   "for those architectures (default: none on --backend=c, the GPU's on cuda);\n"
                   "$GPUC_TEST_WRAP (words separated by spaces) is put before every run of a program\n"
                   "(e.g. 'compute-sanitizer --tool memcheck').\n"
                   "-O0 builds the programs without IR rewrites and fusion; --reference-O0 makes\n"
                   "'expect reference' compare with such a build on the C backend (also with\n"
                   "--backend=c).\n");
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
    if (tb_session_init(&tr.s) != 0) {
        free(paths);
        return 1;
    }
    tr.s.timeout = timeout;
    const char *wrap = getenv("GPUC_TEST_WRAP");
    if (wrap && *wrap) {
        char *w = tb_strdup(wrap);
        for (char *t = strtok(w, " \t"); t; t = strtok(NULL, " \t")) {
            tb_args_add(&tr.s.wrap, tb_strdup(t));
        }
        free(w);
    }
    /* only the kernels the run needs: none on the C backend, the device's
     * architecture on CUDA */
    char *arch_option = arch ? tb_printf("--arch=%s", arch)
                        : strcmp(tr.backend, "c") == 0 ? tb_strdup("--arch=none")
                                                       : device_arch_option();
    char *build_options = tb_printf("%s%s", arch_option ? arch_option : "", no_opt ? " -O0" : "");
    tr.build_options = build_options;
    FileList fl = { 0 };
    for (int i = 0; i < npaths; i++) {
        tb_each_gdsl(paths[i], list_file, list_error, &fl);
    }
    test_files(&tr, &fl, jobs);
    for (int i = 0; i < fl.n; i++) {
        free(fl.path[i]);
        free(fl.error[i]);
    }
    free(fl.path);
    free(fl.error);
    free(arch_option);
    free(build_options);
    tb_session_free(&tr.s);
    free(paths);
    printf("%d passed, %d failed, %d skipped\n", tr.passed, tr.failed, tr.skipped);
    return tr.failed ? 1 : 0;
}
