/* bounds.c: the reads that are in bounds by construction.
 *
 * requires: the lambdas final (after fusion and dce).  preserves:
 * everything; an analysis that sets IrExpr.in_bounds on reads.  Not run at
 * -O0, so that differential testing's reference (difftest/) keeps every
 * bounds check: a read marked in bounds that is not would differ there.
 * A kernel evaluates a statement's lambdas (map, post, per_row) only at
 * indices inside the statement's shape s->w, so a read v[IDX(d)] of a 1-D
 * array whose length is the statement's extent along d (the same size
 * value), or v[IDX(0), IDX(1)] of a 2-D array of the statement's shape,
 * cannot leave the array: the broadcast vectors of row kernels (LayerNorm's
 * w[col] and b[col]), a per-row map's t[row].  Such a read is emitted
 * without its bounds check (backend/emit_expr.c), and an entry all of whose
 * reads are in bounds has no out-of-bounds record to fetch after its
 * kernels (backend/cuda/launch.c, entry_checks: a device-to-host read and a
 * wait a call, about 25 us of LayerNorm's 550 at rows of 1024 on an H200).
 * Expressions are DAGs: a read reached from several statements is in
 * bounds only if it is for every one of them.  Sharded statements (their
 * IDX(0) is global, their width this rank's) are left checked, as are the
 * operators' lambdas, which this does not walk (in_bounds stays false).
 */
#include "ir.h"

/* Lambdas are bounded by IR_MAX_EXPR_TREE, so walks of the tree are too. */
static void assume(IrExpr *e) {
    if (!e) { return; }
    if (e->kind == IR_E_READ) { e->in_bounds = true; }
    for (int i = 0; i < 3; i++) { assume(e->a[i]); }
}

/* Is index expression ix the statement's index along d, of extent len? */
static bool along(const IrStmt *s, const IrExpr *ix, int d, const IrValue *len) {
    return ix && ix->kind == IR_E_IDX && ix->index == d && d < s->rank && s->w[d] == len;
}

static bool read_in_bounds(const IrStmt *s, const IrExpr *e) {
    const IrValue *v = e->val;
    if (s->sharded) { return false; }
    if (v->rank == 1 && !e->a[1]) {
        return e->a[0] && e->a[0]->kind == IR_E_IDX && along(s, e->a[0], e->a[0]->index, v->dims[0]);
    }
    return v->rank == 2 && e->a[1] && along(s, e->a[0], 0, v->dims[0]) && along(s, e->a[1], 1, v->dims[1]);
}

static void judge(const IrStmt *s, IrExpr *e) {
    if (!e) { return; }
    if (e->kind == IR_E_READ && e->in_bounds && !read_in_bounds(s, e)) { e->in_bounds = false; }
    for (int i = 0; i < 3; i++) { judge(s, e->a[i]); }
}

static void each_lambda(IrStmt *s, void (*f)(const IrStmt *, IrLambda *)) {
    f(s, s->map);
    f(s, s->post);
    f(s, s->per_row);
}

static void assume_lambda(const IrStmt *s, IrLambda *l) {
    (void)s;
    for (int i = 0; l && i < l->nres; i++) { assume(l->res[i]); }
}

static void judge_lambda(const IrStmt *s, IrLambda *l) {
    for (int i = 0; l && i < l->nres; i++) { judge(s, l->res[i]); }
}

/* Every statement's reads assumed in bounds, then each judged by every
 * statement that reaches it (over all entries: nodes may be shared). */
void ir_bounds(IrModule *m) {
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < m->nentries; i++) {
            IrEntry *e = m->entries[i];
            for (int j = 0; j < e->nstmts; j++) { each_lambda(e->stmts[j], pass == 0 ? assume_lambda : judge_lambda); }
        }
    }
}
