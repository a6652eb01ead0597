/* element.c: the per-element code every kernel kind shares: the map
 * lambda applied at an index (map_body), its results stored or folded into
 * the accumulators (element), and the accumulators themselves: names,
 * declarations and the reduction operators applied to them (apply_op). */
#include "cuda_emit.h"

#include <string.h>

/* ---- lambda application helpers ---- */
const char **load_params(CuEmit *c, IrStmt *s, const char *at) {
    const char **pn = calloc((size_t)s->nins + 1, sizeof *pn);
    for (int i = 0; i < s->nins; i++) {
        char *n = be_strf(&c->x, "x%d", i);
        be_line(c->b, "const %s %s = %s[%s];  (void)%s;", ct(s->ins[i]->elem), n, be_vname(s->ins[i]), at, n);
        pn[i] = n;
    }
    return pn;
}

/* dst = op(a, b); declare dst when `declare` */
void apply_op(CuEmit *c, IrOperator *op, char **dst, const char *const *a, const char *const *b, bool declare) {
    int ar = op->arity;
    const char **args = calloc((size_t)ar * 2 + 1, sizeof *args);
    const char **res = calloc((size_t)ar + 1, sizeof *res);
    for (int k = 0; k < ar; k++) { args[k] = a[k]; args[ar + k] = b[k]; }
    be_lambda(&c->x, op->op, args, res);
    if (!declare && ar > 1) {
        for (int k = 0; k < ar; k++) {
            char *t = be_strf(&c->x, "t%d", c->x.ntmp++);
            be_line(c->b, "const %s %s = %s;", ct(op->op->ptypes[k]), t, res[k]);
            res[k] = t;
        }
    }
    for (int k = 0; k < ar; k++) {
        if (declare) { be_line(c->b, "%s %s = %s;", ct(op->op->ptypes[k]), dst[k], res[k]); }
        else { be_line(c->b, "%s = %s;", dst[k], res[k]); }
    }
    free(args);
    free(res);
}

char **names(CuEmit *c, const char *fmt, int a, int n) {
    char **r = calloc((size_t)n + 1, sizeof *r);
    for (int k = 0; k < n; k++) { r[k] = be_strf(&c->x, fmt, a, k); }
    return r;
}

void declare_ne(CuEmit *c, IrOperator *op, char **acc) {
    for (int k = 0; k < op->arity; k++) {
        const char *ne = be_expr(&c->x, op->ne[k]);
        be_line(c->b, "%s %s = %s;", ct(op->op->ptypes[k]), acc[k], ne);
    }
}

/* The accumulator names of a statement's reductions: racc[r][j] is
 * component j of reduction r ("r<r>_<j>"). Free with acc_free. */
char ***acc_names(CuEmit *c, IrStmt *s) {
    char ***racc = calloc((size_t)s->nreds + 1, sizeof *racc);
    for (int r = 0; r < s->nreds; r++) { racc[r] = names(c, "r%d_%d", r, s->reds[r].arity); }
    return racc;
}

void acc_free(IrStmt *s, char ***racc) {
    for (int r = 0; r < s->nreds; r++) { free(racc[r]); }
    free(racc);
}

/* ---- ONLINE PAIR: the online softmax pair folded a group at a time ----
 * fuse_dependent_reduce's operator "online_softmax" keeps (max, sum of
 * w * exp(x - max)); applied per element it costs two exps and a serial
 * chain through the pair.  A kernel that holds a group of loaded elements
 * (a thread's vectors) folds them at once (pair_fold_group): pass 0 takes
 * the group's maximum g_gm, the running sum is rescaled to it once, pass 1
 * adds w * exp(x - g_gm) per element into PAIR_SUMS independent sums, and
 * their total goes into the pair.  The rows' kernels (rows.c, ROW PAIR) and
 * the grid-stride reductions (stride.c) walk their own elements, calling
 * pair_fold_element on each; these emit the operator's lines.  The sums are reassociated, as any commutative
 * reduction's are; each element's exp is the operator's. */
/* Independent sums: ptxas, sm_90, xent's 8 vectors a lane in flight: 64
 * registers, no spills at 2 or 4; 8 spilled 20 bytes. */
#define PAIR_SUMS 4

bool pair_fold_ok(const IrStmt *s) {
    return s->nreds == 1 && s->reds[0].arity == 2 && s->reds[0].name && strcmp(s->reds[0].name, "online_softmax") == 0;
}

static bool pair_f32(const IrOperator *op) { return op->op->ptypes[0] == IR_F32; }

/* Opens the group's block: g_gm starts at the pair's maximum. */
static void pair_fold_begin(CuEmit *c, const IrOperator *op, char **acc, int n) {
    be_line(c->b, "{ /* the online (max, sum) pair over the %d vectors: their maximum, the sum rescaled once, one exp per element */", n);
    c->b->indent++;
    be_line(c->b, "%s g_gm = %s;", ct(op->op->ptypes[0]), acc[0]);
}

/* The running sum rescaled to the group's maximum, which becomes the
 * pair's; then the group's sums (as many as its n vectors, at most
 * PAIR_SUMS). */
static void pair_fold_rescale(CuEmit *c, const IrOperator *op, char **acc, int n) {
    const char *T = ct(op->op->ptypes[0]), *ex = pair_f32(op) ? "expf" : "exp";
    be_line(c->b, "%s = %s == g_gm ? %s : %s * %s(%s - g_gm);", acc[1], acc[0], acc[1], acc[1], ex, acc[0]);
    be_line(c->b, "%s = g_gm;", acc[0]);
    int ns = n < PAIR_SUMS ? n : PAIR_SUMS;
    for (int u = 0; u < ns; u++) { be_line(c->b, "%s g_gs%d = (%s)0;", T, u, T); }
}

/* One element of vector u of the group: the statement's map at the
 * element (its inputs' names `in`, the kernel's indices already set), then
 * pass 0 its x into the maximum, pass 1 w * exp(x - g_gm) into sum u.
 * x == max gives w * exp(0) = w, also for x = max = +-inf, as the operator
 * does; the select is on exp's argument, not on its result, so that no
 * branch skips the exp (ptxas branched around every element's). */
void pair_fold_element(CuEmit *c, IrStmt *s, int pass, int u, const char **in) {
    const IrOperator *op = &s->reds[0];
    bool f32 = pair_f32(op);
    int memo = c->x.nmemo;
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, in, res);
    if (pass == 0) {
        be_line(c->b, "g_gm = %s(g_gm, %s);", f32 ? "fmaxf" : "fmax", res[0]);
    } else {
        be_line(c->b, "g_gs%d += %s * %s(%s == g_gm ? (%s)0 : %s - g_gm);", u % PAIR_SUMS, res[1], f32 ? "expf" : "exp", res[0],
                f32 ? "float" : "double", res[0]);
    }
    free(res);
    c->x.nmemo = memo;
}

static void pair_fold_end(CuEmit *c, char **acc, int n) {
    int ns = n < PAIR_SUMS ? n : PAIR_SUMS;
    const char *sum = "g_gs0";
    for (int u = 1; u < ns; u++) { sum = be_strf(&c->x, "%s + g_gs%d", sum, u); }
    be_line(c->b, "%s += %s;", acc[1], sum);
    c->b->indent--;
    be_line(c->b, "}");
}

/* The group of n vectors folded into the pair acc: `each` walks the
 * caller's elements (pass 0, then pass 1), calling pair_fold_element on
 * each with the kernel's indices set. */
void pair_fold_group(CuEmit *c, IrKernel *k, int n, char **acc, PairPass each, const void *ctx) {
    IrOperator *op = &k->stmt->reds[0];
    pair_fold_begin(c, op, acc, n);
    each(c, k, n, ctx, 0);
    pair_fold_rescale(c, op, acc, n);
    each(c, k, n, ctx, 1);
    pair_fold_end(c, acc, n);
}

/* ---- element bodies ---- */
/* Apply the map lambda at index expression `at` (flat) with indices i0/i1;
 * returns the result names. */
const char **map_body(CuEmit *c, IrStmt *s, const char *at) {
    const char **pn = load_params(c, s, at);
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, pn, res);
    free(pn);
    return res;
}

/* Per element of a map or reduce: write mapped outputs, combine reductions. */
void element(CuEmit *c, IrStmt *s, const char **res, const char *at, char ***racc) {
    int sw = ir_stmt_scan_width(s), rw = ir_stmt_red_width(s), nm = ir_stmt_nmapped(s);
    int first = s->nouts - nm;
    int pos = sw;
    for (int r = 0; r < s->nreds; r++) {
        fold_reduction(c, s, r, racc[r], res + pos);
        pos += s->reds[r].arity;
    }
    for (int k = 0; k < nm; k++) { be_line(c->b, "%s[%s] = %s;", be_vname(s->outs[first + k]), at, res[sw + rw + k]); }
}

static void index_names(CuEmit *c, IrStmt *s, const char *flat) {
    if (s->rank == 2) {
        be_line(c->b, "const int64_t g_i0 = %s / %s;", flat, be_vname(s->w[1]));
        be_line(c->b, "const int64_t g_i1 = %s - g_i0 * %s;  (void)g_i1;", flat, be_vname(s->w[1]));
        c->x.idx[0] = "g_i0";
        c->x.idx[1] = "g_i1";
    } else {
        c->x.idx[0] = flat;
        c->x.idx[1] = flat;
    }
}

/* Element g_i of a 1-D kernel: its indices, the map body, and the fold or
 * store of element(). */
void map_element(CuEmit *c, IrStmt *s, char ***racc) {
    index_names(c, s, "g_i");
    const char **res = map_body(c, s, "g_i");
    element(c, s, res, "g_i", racc);
    free(res);
}

bool expr_reads(const IrExpr *e) {
    if (!e) { return false; }
    if (e->kind == IR_E_READ) { return true; }
    for (int i = 0; i < 3; i++) { if (expr_reads(e->a[i])) { return true; } }
    return false;
}

/* Does e read an array at an index that may be out of bounds (a read
 * ir/bounds.c could not prove in bounds)? */
bool expr_checks(const IrExpr *e) {
    if (!e) { return false; }
    if (e->kind == IR_E_READ && !e->in_bounds) { return true; }
    for (int i = 0; i < 3; i++) { if (expr_checks(e->a[i])) { return true; } }
    return false;
}

const char *width_expr(CuEmit *c, IrStmt *s) {
    if (s->rank == 2) { return be_strf(&c->x, "(%s * %s)", be_vname(s->w[0]), be_vname(s->w[1])); }
    return be_strf(&c->x, "%s", be_vname(s->w[0]));
}

/* The element (g_row, g_col) of a row/column reduction: the map body at
 * the flat index, folded into the accumulators racc. */
void segred_element(CuEmit *c, IrStmt *s, const char *cols, char ***racc) {
    be_line(c->b, "const int64_t g_f = g_row * %s + g_col;  (void)g_f;", cols);
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "g_col";
    const char **res = map_body(c, s, "g_f");
    int pos = 0;
    for (int r = 0; r < s->nreds; r++) {
        apply_op(c, &s->reds[r], racc[r], (const char *const *)racc[r], res + pos, false);
        pos += s->reds[r].arity;
    }
    free(res);
}

