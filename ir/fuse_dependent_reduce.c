/* fuse_dependent_reduce.c: reductions whose operand depends on an earlier
 * reduction of the same data, rewritten into one pass with a combined
 * operator where the algebra allows.
 *
 * requires: vertical fusion done (each reduction holds its map).
 * preserves: SSA, results (floating point: within the documented tolerance).
 *
 * Known (g, f) pairs:
 *   m = max(G(x));  s = sum(exp(G(x) - m))
 *       -> one reduction over pairs (m, s) with the online-softmax combine
 *          (Milakov & Gimelshein 2018):
 *          M = max(m1, m2), s = s1*exp(m1-M) + s2*exp(m2-M)
 *   s1 = sum(G(x)); mu = s1 / c;  q = sum((G(x) - mu)^2)
 *       -> one reduction over (count, mean, M2) triples with Chan et al.'s
 *          pairwise combine; s1 = mean * count, q = M2 + count * (mean -
 *          mu)^2, exact algebra for any c (c = count: mean - mu is a
 *          rounding error, q = M2).
 * G is compared structurally after the inputs are made explicit, so the two
 * reductions may read their data through different (fused) maps.
 * The softmax pair is also fused per row: m = max(G, 1) and
 * s = sum(exp(G - col(m)), 1) over the same [n][m] shape become one row
 * reduction over (m, s) pairs (row softmax, row logsumexp).
 */
#include "ir.h"

/* memcpy/memmove that accept (NULL, 0) */
#define COPY(d, s, n) do { if ((n) > 0) { memmove((d), (s), (n)); } } while (0)

#include <math.h>
#include <string.h>

/* The element expression with parameters replaced by reads of the inputs. */
static IrExpr *canon(IrModule *m, IrStmt *s, IrExpr *e) {
    IrExpr **args = ir_alloc(m->arena, sizeof *args * (size_t)(s->nins + 1));
    for (int i = 0; i < s->nins; i++) {
        args[i] = ir_e_read(m, s->ins[i], ir_e_idx(m, 0), s->kind == IR_S_SEGRED ? ir_e_idx(m, 1) : NULL);
    }
    return ir_subst_params(m, e, args);
}

static bool is_single_binop(IrOperator *op, IrBinop b) {
    IrExpr *r = op->op->res[0];
    return op->arity == 1 && r->kind == IR_E_BIN && r->op == (int)b &&
           r->a[0]->kind == IR_E_PARAM && r->a[1]->kind == IR_E_PARAM;
}

/* Position of reduction `ri` among the map results and the outs. */
static int red_res_pos(IrStmt *s, int ri) {
    int p = ir_stmt_scan_width(s);
    for (int i = 0; i < ri; i++) { p += s->reds[i].arity; }
    return p;
}
static int red_out_pos(IrStmt *s, int ri) {
    int p = s->post ? s->post->nres : ir_stmt_scan_width(s);
    for (int i = 0; i < ri; i++) { p += s->reds[i].arity; }
    return p;
}

/* A whole-array reduction (SCREMA) or a row reduction (SEGRED along axis 1). */
static bool is_red_stmt(const IrStmt *s) {
    if (s->dead || s->nscans || s->post) { return false; }
    return (s->kind == IR_S_SCREMA && s->rank == 1) || (s->kind == IR_S_SEGRED && s->axis == 1);
}

static bool same_shape(const IrStmt *a, const IrStmt *b) {
    if (a->kind != b->kind || a->rank != b->rank) { return false; }
    for (int d = 0; d < a->rank; d++) { if (a->w[d] != b->w[d]) { return false; } }
    return true;
}

static void find_red(IrEntry *e, IrValue *v, IrStmt **sp, int *rip) {
    *sp = NULL;
    IrStmt *s = v->def;
    if (!s || !is_red_stmt(s)) { return; }
    for (int ri = 0; ri < s->nreds; ri++) {
        if (s->reds[ri].arity == 1 && s->outs[red_out_pos(s, ri)] == v) { *sp = s; *rip = ri; return; }
    }
    (void)e;
}

static void insert_res(IrModule *m, IrLambda *l, int pos, IrExpr *x) {
    IrExpr **n = ir_alloc(m->arena, sizeof *n * (size_t)(l->nres + 2));
    COPY(n, l->res, sizeof *n * (size_t)pos);
    n[pos] = x;
    COPY(n + pos + 1, l->res + pos, sizeof *n * (size_t)(l->nres - pos));
    l->res = n;
    l->nres++;
}
static void insert_out(IrModule *m, IrStmt *s, int pos, IrValue *v) {
    IrValue **n = ir_alloc(m->arena, sizeof *n * (size_t)(s->nouts + 2));
    COPY(n, s->outs, sizeof *n * (size_t)pos);
    n[pos] = v;
    COPY(n + pos + 1, s->outs + pos, sizeof *n * (size_t)(s->nouts - pos));
    s->outs = n;
    s->nouts++;
    v->def = s;
}

/* Remove reduction ri (arity 1) from s. */
static void remove_red(IrStmt *s, int ri) {
    int rp = red_res_pos(s, ri), op = red_out_pos(s, ri);
    COPY(s->map->res + rp, s->map->res + rp + 1, sizeof *s->map->res * (size_t)(s->map->nres - rp - 1));
    s->map->nres--;
    COPY(s->outs + op, s->outs + op + 1, sizeof *s->outs * (size_t)(s->nouts - op - 1));
    s->nouts--;
    COPY(s->reds + ri, s->reds + ri + 1, sizeof *s->reds * (size_t)(s->nreds - ri - 1));
    s->nreds--;
    if (s->nouts == 0) { s->dead = true; }
}

static IrExpr *P(IrModule *m, IrScalar t, int i) { return ir_e_param(m, t, i); }

/* (m1, s1) (+) (m2, s2) */
static IrOperator online_softmax(IrModule *m, IrScalar t) {
    IrOperator o = { 0 };
    IrScalar pt[4] = { t, t, t, t };
    o.arity = 2;
    o.op = ir_lambda_new(m, 4, pt, 2);
    IrExpr *m1 = P(m, t, 0), *s1 = P(m, t, 1), *m2 = P(m, t, 2), *s2 = P(m, t, 3);
    IrExpr *M = ir_e_bin(m, IR_BIN_max, m1, m2);
    IrExpr *a1[1] = { ir_e_bin(m, IR_BIN_sub, m1, M) };
    IrExpr *a2[1] = { ir_e_bin(m, IR_BIN_sub, m2, M) };
    /* m == M also covers m1 = m2 = -inf, where exp(m - M) would be NaN */
    IrExpr *t1 = ir_e_select(m, ir_e_bin(m, IR_BIN_eq, m1, M), s1, ir_e_bin(m, IR_BIN_mul, s1, ir_e_math(m, IR_MATH_exp, a1)));
    IrExpr *t2 = ir_e_select(m, ir_e_bin(m, IR_BIN_eq, m2, M), s2, ir_e_bin(m, IR_BIN_mul, s2, ir_e_math(m, IR_MATH_exp, a2)));
    o.op->res[0] = M;
    o.op->res[1] = ir_e_bin(m, IR_BIN_add, t1, t2);
    o.ne = ir_alloc(m->arena, sizeof *o.ne * 2);
    o.ne[0] = ir_e_const_f(m, t, -INFINITY);
    o.ne[1] = ir_e_const_f(m, t, 0.0);
    o.commutative = true;
    o.name = "online_softmax";
    return o;
}

/* (n_a, mean_a, M2_a) (+) (n_b, mean_b, M2_b), Chan et al. */
static IrOperator welford(IrModule *m, IrScalar t) {
    IrOperator o = { 0 };
    IrScalar pt[6] = { t, t, t, t, t, t };
    o.arity = 3;
    o.op = ir_lambda_new(m, 6, pt, 3);
    IrExpr *na = P(m, t, 0), *ma = P(m, t, 1), *qa = P(m, t, 2);
    IrExpr *nb = P(m, t, 3), *mb = P(m, t, 4), *qb = P(m, t, 5);
    IrExpr *n = ir_e_bin(m, IR_BIN_add, na, nb);
    IrExpr *d = ir_e_bin(m, IR_BIN_sub, mb, ma);
    IrExpr *zero = ir_e_const_f(m, t, 0.0);
    IrExpr *empty = ir_e_bin(m, IR_BIN_eq, n, zero);
    IrExpr *mean = ir_e_bin(m, IR_BIN_add, ma, ir_e_bin(m, IR_BIN_div, ir_e_bin(m, IR_BIN_mul, d, nb), n));
    IrExpr *q = ir_e_bin(m, IR_BIN_add, ir_e_bin(m, IR_BIN_add, qa, qb),
                         ir_e_bin(m, IR_BIN_div, ir_e_bin(m, IR_BIN_mul, ir_e_bin(m, IR_BIN_mul, ir_e_bin(m, IR_BIN_mul, d, d), na), nb), n));
    o.op->res[0] = n;
    o.op->res[1] = ir_e_select(m, empty, zero, mean);
    o.op->res[2] = ir_e_select(m, empty, zero, q);
    o.ne = ir_alloc(m->arena, sizeof *o.ne * 3);
    o.ne[0] = zero; o.ne[1] = zero; o.ne[2] = zero;
    o.commutative = true;
    o.name = "welford";
    return o;
}

/* exp(G - FREE m) (rows: exp(G - m[i0])) ? sets *g and *mv */
static bool match_exp_sub(IrExpr *e, bool rows, IrExpr **g, IrValue **mv) {
    if (e->kind != IR_E_MATH || e->op != IR_MATH_exp) { return false; }
    IrExpr *s = e->a[0];
    if (s->kind != IR_E_BIN || s->op != IR_BIN_sub) { return false; }
    IrExpr *r = s->a[1];
    /* the maximum may arrive converted or negated-free: accept FREE m (the
     * row's maximum m[i0]) only */
    if (rows ? r->kind != IR_E_READ || r->val->rank != 1 || r->a[1] || r->a[0]->kind != IR_E_IDX || r->a[0]->index != 0
             : r->kind != IR_E_FREE) { return false; }
    *g = s->a[0];
    *mv = r->val;
    return !ir_expr_uses_value(*g, *mv);
}

static bool invariant(const IrExpr *e) {
    if (!e) { return true; }
    if (e->kind == IR_E_PARAM || e->kind == IR_E_IDX || e->kind == IR_E_LOOPVAR) { return false; }
    return invariant(e->a[0]) && invariant(e->a[1]) && invariant(e->a[2]);
}

/* Can a scalar (host) statement evaluate e: constants, scalar values and
 * arithmetic on them, no array reads? */
static bool host_scalar(const IrExpr *e) {
    if (!e) { return true; }
    switch (e->kind) {
    case IR_E_CONST: case IR_E_FREE: return true;
    case IR_E_BIN: case IR_E_UN: case IR_E_MATH: case IR_E_SELECT: case IR_E_CAST:
        return host_scalar(e->a[0]) && host_scalar(e->a[1]) && host_scalar(e->a[2]);
    default: return false;
    }
}

/* (G - MU) squared, MU element-invariant ? */
static bool match_sq_dev(IrExpr *e, IrExpr **g, IrExpr **mu) {
    IrExpr *d = NULL;
    if (e->kind == IR_E_BIN && e->op == IR_BIN_mul && ir_expr_equal(e->a[0], e->a[1])) { d = e->a[0]; }
    else if (e->kind == IR_E_BIN && e->op == IR_BIN_pow && e->a[1]->kind == IR_E_CONST &&
             ((ir_scalar_is_float(e->a[1]->ty) && e->a[1]->c.f == 2.0) ||
              (!ir_scalar_is_float(e->a[1]->ty) && e->a[1]->c.i == 2))) { d = e->a[0]; }
    if (!d || d->kind != IR_E_BIN || d->op != IR_BIN_sub || !invariant(d->a[1])) { return false; }
    *g = d->a[0];
    *mu = d->a[1];
    return true;
}

static bool try_softmax(IrModule *m, IrEntry *e, IrStmt *b, int rbi) {
    IrExpr *eb = b->map->res[red_res_pos(b, rbi)], *g;
    IrValue *mv;
    if (!is_single_binop(&b->reds[rbi], IR_BIN_add) || !ir_scalar_is_float(eb->ty)) { return false; }
    if (!match_exp_sub(eb, b->kind == IR_S_SEGRED, &g, &mv)) { return false; }
    IrStmt *a; int rai;
    find_red(e, mv, &a, &rai);
    if (!a || a == b || !is_single_binop(&a->reds[rai], IR_BIN_max) || !same_shape(a, b)) { return false; }
    int ap = red_res_pos(a, rai);
    if (!ir_expr_equal(canon(m, a, a->map->res[ap]), canon(m, b, g))) {
        ir_explain(m, e, "  not fused: sum of exp (line %d) with max (line %d): different operands", b->line, a->line);
        return false;
    }
    IrValue *sv = b->outs[red_out_pos(b, rbi)];
    IrScalar t = eb->ty;
    a->reds[rai] = online_softmax(m, t);
    insert_res(m, a->map, ap + 1, ir_e_const_f(m, t, 1.0));
    insert_out(m, a, red_out_pos(a, rai) + 1, sv);
    remove_red(b, rbi);
    const char *what = ir_fmt(m->arena, "sum of exp@%d (dependent reduction: online max/sum)", b->line);
    a->note = a->note ? ir_fmt(m->arena, "%s, %s", a->note, what) : what;
    return true;
}

static bool try_welford(IrModule *m, IrEntry *e, IrStmt *b, int rbi) {
    IrExpr *eb = b->map->res[red_res_pos(b, rbi)], *g, *mu;
    if (b->kind != IR_S_SCREMA || !is_single_binop(&b->reds[rbi], IR_BIN_add) || !ir_scalar_is_float(eb->ty)) { return false; }
    if (!match_sq_dev(eb, &g, &mu)) { return false; }
    /* mu = s1 / c: inline, or computed by a scalar statement */
    IrExpr *q = mu;
    if (q->kind == IR_E_FREE && q->val->def && q->val->def->kind == IR_S_SCALAR && q->val->def->nouts == 1) {
        q = q->val->def->map->res[0];
    }
    if (q->kind != IR_E_BIN || q->op != IR_BIN_div || q->a[0]->kind != IR_E_FREE) { return false; }
    IrValue *s1 = q->a[0]->val;
    if (ir_expr_uses_value(q->a[1], s1)) { return false; }
    IrStmt *a; int rai;
    find_red(e, s1, &a, &rai);
    if (!a || a == b || !is_single_binop(&a->reds[rai], IR_BIN_add) || !same_shape(a, b)) { return false; }
    int ap = red_res_pos(a, rai);
    if (!ir_expr_equal(canon(m, a, a->map->res[ap]), canon(m, b, g))) {
        ir_explain(m, e, "  not fused: sum of squared deviations (line %d) with sum (line %d): different operands", b->line, a->line);
        return false;
    }
    if (!host_scalar(mu)) { return false; }
    IrScalar t = eb->ty;
    IrValue *qv = b->outs[red_out_pos(b, rbi)];
    IrValue *cnt = ir_value_new(m, e, t, 0, NULL, NULL);
    IrValue *mean = ir_value_new(m, e, t, 0, NULL, NULL);
    IrValue *m2 = ir_value_new(m, e, t, 0, NULL, NULL);
    int op = red_out_pos(a, rai);
    a->reds[rai] = welford(m, t);
    insert_res(m, a->map, ap, ir_e_const_f(m, t, 1.0));
    insert_res(m, a->map, ap + 2, ir_e_const_f(m, t, 0.0));
    a->outs[op] = cnt; cnt->def = a;
    insert_out(m, a, op + 1, mean);
    insert_out(m, a, op + 2, m2);
    /* s1 = mean * count, right after a */
    IrStmt *ss = ir_stmt_new(m, e, IR_S_SCALAR, IR_AOP_scalar, a->line);
    ss->map = ir_lambda_new(m, 0, NULL, 1);
    ss->map->res[0] = ir_e_bin(m, IR_BIN_mul, ir_e_free(m, mean), ir_e_free(m, cnt));
    ir_stmt_add_out(m, ss, s1);
    ir_entry_move_stmt(e, ss, ir_stmt_index(e, a) + 1);
    /* q = sum((x - mu)^2) = M2 + count * (mean - mu)^2 for ANY mu fixed
     * before the pass (M2 is the sum of squares about the mean), so the
     * divisor c need not be the count: sum(x) / 2 or / (n + 1) are right
     * too.  No elements: q = 0 whatever mu is (even NaN).  Where b was, so
     * that every value mu reads is defined. */
    IrStmt *qs = ir_stmt_new(m, e, IR_S_SCALAR, IR_AOP_scalar, b->line);
    qs->map = ir_lambda_new(m, 0, NULL, 1);
    IrExpr *dev = ir_e_bin(m, IR_BIN_sub, ir_e_free(m, mean), mu);
    IrExpr *shift = ir_e_bin(m, IR_BIN_mul, ir_e_free(m, cnt), ir_e_bin(m, IR_BIN_mul, dev, dev));
    IrExpr *none = ir_e_bin(m, IR_BIN_eq, ir_e_free(m, cnt), ir_e_const_f(m, t, 0.0));
    qs->map->res[0] = ir_e_bin(m, IR_BIN_add, ir_e_free(m, m2), ir_e_select(m, none, ir_e_const_f(m, t, 0.0), shift));
    ir_stmt_add_out(m, qs, qv);
    ir_entry_move_stmt(e, qs, ir_stmt_index(e, b) + 1);
    remove_red(b, rbi);
    const char *what = ir_fmt(m->arena, "sum of squared deviations@%d (dependent reduction: Welford/Chan)", b->line);
    a->note = a->note ? ir_fmt(m->arena, "%s, %s", a->note, what) : what;
    return true;
}

void ir_fuse_dependent_reduce(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        bool changed = true;
        while (changed) {
            changed = false;
            for (int i = 0; i < e->nstmts && !changed; i++) {
                IrStmt *b = e->stmts[i];
                if (!is_red_stmt(b)) { continue; }
                for (int ri = 0; ri < b->nreds && !changed; ri++) {
                    if (b->reds[ri].arity != 1) { continue; }
                    changed = try_softmax(m, e, b, ri) || try_welford(m, e, b, ri);
                }
            }
        }
    }
}
