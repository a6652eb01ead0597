/* simplify.c: local clean-ups that make fusion patterns visible.
 *
 * requires: lowered IR.  preserves: SSA, results, statement order.
 *
 *  - constant folding of integer and float arithmetic on literals and of
 *    casts of literals (f32 + - * / computed in double and rounded once to
 *    f32: exact, since double has more than 2 x 24 + 2 bits);
 *  - identity maps (map(|x| x, xs), e.g. from unzip/zip plumbing) are
 *    removed and their uses point at the input.
 */
#include "ir.h"

#include <math.h>

static IrExpr *fold(IrModule *m, IrExpr *e) {
    if (!e) { return NULL; }
    for (int i = 0; i < 3; i++) { e->a[i] = fold(m, e->a[i]); }
    if (e->kind == IR_E_CAST && e->a[0]->kind == IR_E_CONST) {
        IrExpr *c = e->a[0];
        if (ir_scalar_is_float(e->ty) && ir_scalar_is_float(c->ty)) { return ir_e_const_f(m, e->ty, c->c.f); }
        if (ir_scalar_is_float(e->ty) && (c->ty == IR_I32 || c->ty == IR_I64)) {
            /* one rounding, straight to the target type: via double an i64
             * can round to an f32 halfway point and then the wrong way */
            return ir_e_const_f(m, e->ty, e->ty == IR_F32 ? (double)(float)c->c.i : (double)c->c.i);
        }
        if ((e->ty == IR_I64 || e->ty == IR_I32) && (c->ty == IR_I32 || c->ty == IR_I64)) { return ir_e_const_i(m, e->ty, c->c.i); }
        return e;
    }
    if (e->kind == IR_E_BIN && e->a[0]->kind == IR_E_CONST && e->a[1]->kind == IR_E_CONST &&
        e->a[0]->ty == e->a[1]->ty) {
        IrExpr *a = e->a[0], *b = e->a[1];
        if (ir_scalar_is_float(a->ty)) {
            double x = a->c.f, y = b->c.f;
            switch (e->op) {
            case IR_BIN_add: return ir_e_const_f(m, a->ty, x + y);
            case IR_BIN_sub: return ir_e_const_f(m, a->ty, x - y);
            case IR_BIN_mul: return ir_e_const_f(m, a->ty, x * y);
            case IR_BIN_div: return ir_e_const_f(m, a->ty, x / y);  /* IEEE: 1/0 is inf */
            default: return e;
            }
        }
        if (a->ty == IR_I32 || a->ty == IR_I64) {
            uint64_t x = (uint64_t)a->c.i, y = (uint64_t)b->c.i;
            switch (e->op) {
            case IR_BIN_add: return ir_e_const_i(m, a->ty, (int64_t)(x + y));
            case IR_BIN_sub: return ir_e_const_i(m, a->ty, (int64_t)(x - y));
            case IR_BIN_mul: return ir_e_const_i(m, a->ty, (int64_t)(x * y));
            default: return e;
            }
        }
    }
    if (e->kind == IR_E_UN && e->op == IR_UN_neg && e->a[0]->kind == IR_E_CONST && ir_scalar_is_float(e->ty)) {
        return ir_e_const_f(m, e->ty, -e->a[0]->c.f);
    }
    return e;
}

static void fold_lambda(IrModule *m, IrLambda *l) {
    if (!l) { return; }
    for (int i = 0; i < l->nres; i++) { l->res[i] = fold(m, l->res[i]); }
}

void ir_simplify(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        for (int i = 0; i < e->nstmts; i++) {
            IrStmt *s = e->stmts[i];
            if (s->dead) { continue; }
            fold_lambda(m, s->map);
            fold_lambda(m, s->post);
            for (int k = 0; k < s->nscans; k++) {
                for (int j = 0; j < s->scans[k].arity; j++) { s->scans[k].ne[j] = fold(m, s->scans[k].ne[j]); }
            }
            for (int k = 0; k < s->nreds; k++) {
                for (int j = 0; j < s->reds[k].arity; j++) { s->reds[k].ne[j] = fold(m, s->reds[k].ne[j]); }
            }
            if (s->kind == IR_S_SCREMA && !s->nscans && !s->nreds && !s->post) {
                for (int r = 0; r < s->map->nres && r < s->nouts; r++) {
                    IrExpr *x = s->map->res[r];
                    if (x->kind == IR_E_PARAM && s->ins[x->index]->rank == s->outs[r]->rank) {
                        ir_replace_uses(e, s->outs[r], s->ins[x->index]);
                    }
                }
            }
        }
    }
}
