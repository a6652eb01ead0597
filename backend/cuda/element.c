/* element.c: the per-element code every kernel kind shares: the map
 * lambda applied at an index (map_body), its results stored or folded into
 * the accumulators (element), and the accumulators themselves: names,
 * declarations and the reduction operators applied to them (apply_op). */
#include "cuda_emit.h"

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

