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
 * (r[i0]); everything else it reads must exist before S, since the map
 * moves up to S.
 */
#include "ir.h"

#include <stdlib.h>

typedef struct { IrExpr **from, **to; int n, cap; } Memo;

/* Copy of e with map parameter j -> post parameter pin[j] and r_o[i0] ->
 * post parameter s->nins + o; NULL if e reads a result of s otherwise. */
typedef struct {
    IrModule *m;
    IrStmt *s;
    IrExpr **pin;   /* per map parameter */
    IrExpr **pred;  /* per reduction output of s */
    Memo memo;
    bool bad;
} Rw;

static IrExpr *rw(Rw *w, IrExpr *e) {
    if (!e || w->bad) { return e; }
    for (int i = 0; i < w->memo.n; i++) { if (w->memo.from[i] == e) { return w->memo.to[i]; } }
    IrExpr *r = NULL;
    int o = -1;
    if ((e->kind == IR_E_READ || e->kind == IR_E_FREE) && e->val->def == w->s) {
        for (int k = 0; k < w->s->nouts; k++) { if (w->s->outs[k] == e->val) { o = k; } }
    }
    if (e->kind == IR_E_PARAM) {
        r = w->pin[e->index];
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

/* Is every value c reads (other than s's results) defined before s? */
typedef struct { IrEntry *e; IrStmt *s; int si; bool ok; } Before;
static void before_visit(IrValue *v, void *ctx) {
    Before *b = ctx;
    if (!v->def || v->def == b->s) { return; }
    if (ir_stmt_index(b->e, v->def) >= b->si) { b->ok = false; }
}

static bool reads_result(IrStmt *c, IrStmt *s) {
    for (int o = 0; o < s->nouts; o++) { if (s->outs[o]->rank == 1 && ir_stmt_reads(c, s->outs[o])) { return true; } }
    return false;
}

static bool try_fuse(IrModule *m, IrEntry *e, IrStmt *s, IrStmt *c) {
    if (c->kind != IR_S_SCREMA || c->rank != 2 || c->nscans || c->nreds || c->post || c->dead) { return false; }
    if (c->w[0] != s->w[0] || c->w[1] != s->w[1] || !reads_result(c, s)) { return false; }
    int nred = ir_stmt_red_width(s);
    Rw w = { m, s, NULL, NULL, { 0 }, false };
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
    ir_stmt_visit_reads(c, before_visit, &bf);
    IrExpr **res = ir_alloc(m->arena, sizeof *res * (size_t)(c->map->nres + 1));
    for (int r = 0; r < c->map->nres && !w.bad; r++) { res[r] = rw(&w, c->map->res[r]); }
    free(w.memo.from);
    free(w.memo.to);
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
    IrLambda *p = s->post;
    IrExpr **nr = ir_alloc(m->arena, sizeof *nr * (size_t)(p->nres + c->map->nres + 1));
    for (int r = 0; r < p->nres; r++) { nr[r] = p->res[r]; }
    for (int r = 0; r < c->map->nres; r++) { nr[p->nres + r] = res[r]; }
    p->res = nr;
    p->nres += c->map->nres;
    for (int o = 0; o < c->nouts; o++) { ir_stmt_add_out(m, s, c->outs[o]); }
    c->dead = true;
    const char *what = ir_fmt(m->arena, "map@%d (row-resident: the row is read once)", c->line);
    s->note = s->note ? ir_fmt(m->arena, "%s, %s", s->note, what) : what;
    return true;
}

void ir_fuse_rows(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        for (int i = 0; i < e->nstmts; i++) {
            IrStmt *s = e->stmts[i];
            if (s->dead || s->kind != IR_S_SEGRED || s->axis != 1 || s->nins == 0) { continue; }
            for (int j = i + 1; j < e->nstmts; j++) { try_fuse(m, e, s, e->stmts[j]); }
        }
    }
}
