/* fuse_rows.c: a 2-D map that uses row reductions of its own input per row
 * becomes the row reduction's `post`, so the row is read once.
 *
 * requires: vertical, dependent and horizontal fusion done (runs last: no
 * other pass sees a row reduction with a post).  preserves: SSA, results.
 *
 *   r = reduce_axis[axis 1](ins) ...              (one row reduction S)
 *   y = map2d(ins') |x| f(x, r[i0], ...)          (ins' a subset of ins)
 * ->
 *   r, y = reduce_axis[axis 1](ins) ... post |x, r| f(x, r)
 *
 * The kernel keeps each row in registers while it reduces it, then applies
 * the post to every element and writes the 2-D results (row softmax: one
 * read and one write).  The map may read S's results only at its own row
 * (r[i0]), directly or through a 1-D map of them read at its own row
 * (LayerNorm: q = map(r) |s, ss| (s / m, 1 / sqrt(...)), then y = f(x,
 * q[i0]): q's body is inlined, so the post reads the row's results);
 * everything else it reads must exist before S, since the map moves up to S.
 *
 * A 1-D map over the rows that reads S's results only at its own row and
 * otherwise only arrays that exist before S (cross-entropy: lse[i] -
 * A[i, t[i]], a bounds-checked gather in row i) becomes S's `per_row`
 * (S without a post):
 *
 *   r = reduce_axis[axis 1](ins) ...
 *   y = map1d(r, ...) |a, ...| g(a, ..., i0)
 * ->
 *   r, y = reduce_axis[axis 1](ins) ... per_row |r| g(r, ..., i0)
 *
 * so the row kernel computes y at its per-row store, one launch instead of
 * two.  Its reads keep their bounds checks (the same READ expressions).
 */
#include "ir.h"

#include <stdlib.h>

typedef struct { IrExpr **from, **to; int n, cap; } Memo;

/* Copy of e with map parameter j -> post parameter pin[j] and r_o[i0] ->
 * post parameter s->nins + o; NULL if e reads a result of s otherwise. */
typedef struct {
    IrModule *m;
    IrEntry *e;
    IrStmt *s;
    IrExpr **pin;   /* per map parameter */
    IrExpr **pred;  /* per reduction output of s */
    Memo memo;
    bool bad;
} Rw;

static IrExpr *rw(Rw *w, IrExpr *e);

/* Is every value c reads (other than s's results) defined before s? */
typedef struct { IrEntry *e; IrStmt *s; int si; bool ok; } Before;
static void before_visit(IrValue *v, void *ctx) {
    Before *b = ctx;
    if (!v->def || v->def == b->s) { return; }
    if (ir_stmt_index(b->e, v->def) >= b->si) { b->ok = false; }
}

/* v[i0] where v is a result of a 1-D map d over the rows of s whose every
 * input is a result of s or defined before s: d's body for v with its
 * parameters read at i0, rewritten by w (NULL if v is no such value). */
static IrExpr *inline_row_map(Rw *w, IrValue *v) {
    IrStmt *d = v->def;
    if (!d || d == w->s || d->kind != IR_S_SCREMA || d->rank != 1 || d->nscans || d->nreds || d->post || d->w[0] != w->s->w[0]) {
        return NULL;
    }
    int o = -1;
    for (int k = 0; k < d->nouts; k++) { if (d->outs[k] == v) { o = k; } }
    if (o < 0 || o >= d->map->nres) { return NULL; }
    Before bf = { w->e, w->s, ir_stmt_index(w->e, w->s), true };
    ir_stmt_visit_reads(d, before_visit, &bf);
    if (!bf.ok) { return NULL; }
    Rw in = { w->m, w->e, w->s, NULL, w->pred, { 0 }, false };
    in.pin = ir_alloc(w->m->arena, sizeof *in.pin * (size_t)(d->nins + 1));
    for (int j = 0; j < d->nins; j++) { in.pin[j] = rw(w, ir_e_read(w->m, d->ins[j], ir_e_idx(w->m, 0), NULL)); }
    IrExpr *r = w->bad ? NULL : rw(&in, d->map->res[o]);
    free(in.memo.from);
    free(in.memo.to);
    if (in.bad) { w->bad = true; }
    return r;
}

static IrExpr *rw(Rw *w, IrExpr *e) {
    if (!e || w->bad) { return e; }
    for (int i = 0; i < w->memo.n; i++) { if (w->memo.from[i] == e) { return w->memo.to[i]; } }
    IrExpr *r = NULL;
    int o = -1;
    if ((e->kind == IR_E_READ || e->kind == IR_E_FREE) && e->val->def == w->s) {
        for (int k = 0; k < w->s->nouts; k++) { if (w->s->outs[k] == e->val) { o = k; } }
    }
    IrExpr *row_map = NULL;
    if (e->kind == IR_E_READ && o < 0 && e->a[0] && e->a[0]->kind == IR_E_IDX && e->a[0]->index == 0 && !e->a[1]) {
        row_map = inline_row_map(w, e->val);
    }
    if (e->kind == IR_E_PARAM) {
        r = w->pin[e->index];
    } else if (row_map) {
        r = row_map;
    } else if (o >= 0) {
        if (e->kind != IR_E_READ || e->a[1] || e->a[0]->kind != IR_E_IDX || e->a[0]->index != 0) {
            w->bad = true;  /* a result of another row, or the whole array */
            return e;
        }
        r = w->pred[o];
    } else {
        IrExpr *a[3];
        for (int i = 0; i < 3; i++) { a[i] = rw(w, e->a[i]); }
        r = e;
        if (a[0] != e->a[0] || a[1] != e->a[1] || a[2] != e->a[2]) {
            r = ir_alloc(w->m->arena, sizeof *r);
            *r = *e;
            for (int i = 0; i < 3; i++) { r->a[i] = a[i]; }
            r->tree = 0;
        }
    }
    if (w->memo.n == w->memo.cap) {
        w->memo.cap = w->memo.cap ? 2 * w->memo.cap : 32;
        w->memo.from = realloc(w->memo.from, sizeof *w->memo.from * (size_t)w->memo.cap);
        w->memo.to = realloc(w->memo.to, sizeof *w->memo.to * (size_t)w->memo.cap);
        if (!w->memo.from || !w->memo.to) { IR_UNREACHABLE("out of memory"); }
    }
    w->memo.from[w->memo.n] = e;
    w->memo.to[w->memo.n] = r;
    w->memo.n++;
    return r;
}

/* Does c read the results of s, directly or through 1-D maps of them? */
typedef struct { IrStmt *s; int depth; bool found; } Reads;
static void reads_visit(IrValue *v, void *ctx) {
    Reads *r = ctx;
    if (r->found || !v->def || v->rank != 1) { return; }
    if (v->def == r->s) {
        r->found = true;
    } else if (r->depth < 4 && v->def->kind == IR_S_SCREMA && v->def->rank == 1) {
        r->depth++;
        ir_stmt_visit_reads(v->def, reads_visit, r);
        r->depth--;
    }
}
static bool reads_result(IrStmt *c, IrStmt *s) {
    Reads r = { s, 0, false };
    ir_stmt_visit_reads(c, reads_visit, &r);
    return r.found;
}

/* Is every value the rewritten post expression e reads defined before s
 * (the row maps it read are inlined by now)? */
static bool reads_before(IrEntry *en, IrStmt *s, int si, IrExpr *e) {
    if (!e) { return true; }
    if ((e->kind == IR_E_READ || e->kind == IR_E_FREE) && e->val->def && (e->val->def == s || ir_stmt_index(en, e->val->def) >= si)) {
        return false;
    }
    for (int i = 0; i < 3; i++) { if (!reads_before(en, s, si, e->a[i])) { return false; } }
    return true;
}

/* The fused map c's results res (rewritten over the row reduction s) become
 * more results of s's lambda p (its post or per_row), c's outputs more
 * outputs of s, and c is dead; how, for --explain and the kernel's note. */
static void append_map(IrModule *m, IrStmt *s, IrLambda *p, IrStmt *c, IrExpr **res, const char *how) {
    IrExpr **nr = ir_alloc(m->arena, sizeof *nr * (size_t)(p->nres + c->map->nres + 1));
    for (int r = 0; r < p->nres; r++) { nr[r] = p->res[r]; }
    for (int r = 0; r < c->map->nres; r++) { nr[p->nres + r] = res[r]; }
    p->res = nr;
    p->nres += c->map->nres;
    for (int o = 0; o < c->nouts; o++) { ir_stmt_add_out(m, s, c->outs[o]); }
    c->dead = true;
    const char *what = ir_fmt(m->arena, "map@%d (%s)", c->line, how);
    s->note = s->note ? ir_fmt(m->arena, "%s, %s", s->note, what) : what;
}

/* A 1-D map c over the rows of s into s's per_row (see the top). */
static bool try_fuse_per_row(IrModule *m, IrEntry *e, IrStmt *s, IrStmt *c) {
    if (c->kind != IR_S_SCREMA || c->rank != 1 || c->nscans || c->nreds || c->post || c->dead || s->post) { return false; }
    if (c->w[0] != s->w[0] || ir_stmt_nmapped(c) != c->nouts || !reads_result(c, s)) { return false; }
    int nred = ir_stmt_red_width(s);
    Rw w = { m, e, s, NULL, NULL, { 0 }, false };
    w.pin = ir_alloc(m->arena, sizeof *w.pin * (size_t)(c->nins + 1));
    w.pred = ir_alloc(m->arena, sizeof *w.pred * (size_t)(s->nouts + 1));
    for (int o = 0; o < nred; o++) { w.pred[o] = ir_e_param(m, s->outs[o]->elem, o); }
    /* c's elements are its inputs read at its own row */
    for (int j = 0; j < c->nins && !w.bad; j++) { w.pin[j] = rw(&w, ir_e_read(m, c->ins[j], ir_e_idx(m, 0), NULL)); }
    IrExpr **res = ir_alloc(m->arena, sizeof *res * (size_t)(c->map->nres + 1));
    for (int r = 0; r < c->map->nres && !w.bad; r++) { res[r] = rw(&w, c->map->res[r]); }
    free(w.memo.from);
    free(w.memo.to);
    bool ok = !w.bad;
    int si = ir_stmt_index(e, s);
    for (int r = 0; r < c->map->nres && ok; r++) { ok = ir_expr_tree_size(res[r]) <= IR_MAX_EXPR_TREE && reads_before(e, s, si, res[r]); }
    if (!ok) {
        ir_explain(m, e, "  not fused: map (line %d) into the row reduction (line %d) per row: %s", c->line, s->line,
                   w.bad ? "it reads the reductions other than at its own row" : "it reads a value computed after the reduction");
        return false;
    }
    if (!s->per_row) {
        IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(nred + 1));
        for (int o = 0; o < nred; o++) { pt[o] = s->outs[o]->elem; }
        s->per_row = ir_lambda_new(m, nred, pt, 0);
    }
    append_map(m, s, s->per_row, c, res, "per row: at the row's store");
    return true;
}

static bool try_fuse(IrModule *m, IrEntry *e, IrStmt *s, IrStmt *c) {
    if (c->kind != IR_S_SCREMA || c->rank != 2 || c->nscans || c->nreds || c->post || c->dead || s->per_row) { return false; }
    if (c->w[0] != s->w[0] || c->w[1] != s->w[1] || !reads_result(c, s)) { return false; }
    int nred = ir_stmt_red_width(s);
    Rw w = { m, e, s, NULL, NULL, { 0 }, false };
    w.pin = ir_alloc(m->arena, sizeof *w.pin * (size_t)(c->nins + 1));
    w.pred = ir_alloc(m->arena, sizeof *w.pred * (size_t)(s->nouts + 1));
    for (int j = 0; j < c->nins; j++) {
        int at = -1;
        for (int i = 0; i < s->nins; i++) { if (s->ins[i] == c->ins[j]) { at = i; } }
        if (at < 0) {
            ir_explain(m, e, "  not fused: map (line %d) into the row reduction (line %d): it reads an array the reduction does not", c->line, s->line);
            return false;
        }
        w.pin[j] = ir_e_param(m, s->ins[at]->elem, at);
    }
    for (int o = 0; o < nred; o++) { w.pred[o] = ir_e_param(m, s->outs[o]->elem, s->nins + o); }
    Before bf = { e, s, ir_stmt_index(e, s), true };
    IrExpr **res = ir_alloc(m->arena, sizeof *res * (size_t)(c->map->nres + 1));
    for (int r = 0; r < c->map->nres && !w.bad; r++) { res[r] = rw(&w, c->map->res[r]); }
    free(w.memo.from);
    free(w.memo.to);
    for (int r = 0; r < c->map->nres && !w.bad && bf.ok; r++) {
        /* the tree size first: the walk below expands the DAG */
        bf.ok = ir_expr_tree_size(res[r]) <= IR_MAX_EXPR_TREE && reads_before(e, s, bf.si, res[r]);
    }
    if (w.bad || !bf.ok) {
        ir_explain(m, e, "  not fused: map (line %d) into the row reduction (line %d): %s", c->line, s->line,
                   w.bad ? "it reads the reductions other than at its own row" : "it reads a value computed after the reduction");
        return false;
    }
    if (!s->post) {
        IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(s->nins + nred + 1));
        for (int i = 0; i < s->nins; i++) { pt[i] = s->ins[i]->elem; }
        for (int o = 0; o < nred; o++) { pt[s->nins + o] = s->outs[o]->elem; }
        s->post = ir_lambda_new(m, s->nins + nred, pt, 0);
    }
    append_map(m, s, s->post, c, res, "row-resident: the row is read once");
    return true;
}

void ir_fuse_rows(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        for (int i = 0; i < e->nstmts; i++) {
            IrStmt *s = e->stmts[i];
            if (s->dead || s->kind != IR_S_SEGRED || s->axis != 1 || s->nins == 0) { continue; }
            for (int j = i + 1; j < e->nstmts; j++) { try_fuse(m, e, s, e->stmts[j]); }
            for (int j = i + 1; j < e->nstmts; j++) { try_fuse_per_row(m, e, s, e->stmts[j]); }
        }
    }
}
