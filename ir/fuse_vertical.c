/* fuse_vertical.c: producer-consumer fusion on Scremas.
 *
 * requires: lowered IR (every array op a Screma, filter, scatter or segred);
 *           use counts are recomputed here.
 * preserves: SSA, statement order of everything not fused, results.
 *
 * Rules (Futhark's, on one construct):
 *   1. A pure map producer folds into any consumer's map lambda (map into
 *      map, reduce, scan input, filter, scatter, row/column reduction), for
 *      any number of inputs.  If the producer's result is also used later,
 *      a Screma consumer takes it over as an extra mapped output (so it is
 *      still computed once); otherwise a cheap producer is recomputed and an
 *      expensive one is left alone.
 *   2. A pure map over a scan's output becomes the scan's `post` lambda
 *      (map on scan output), provided the scan result has no other use.
 * Never fused: anything that would need a reduction's or scan's complete
 * result before the consumer can start (that is a data dependence: the
 * kernel ends there), and maps whose work is marked EXPENSIVE.
 */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

static void add_note(IrModule *m, IrStmt *s, const char *what) {
    s->note = s->note ? ir_fmt(m->arena, "%s, %s", s->note, what) : ir_strdup(m->arena, what);
}

static int out_index(IrStmt *p, IrValue *v) {
    for (int i = 0; i < p->nouts; i++) { if (p->outs[i] == v) { return i; } }
    return -1;
}

static bool same_shape(IrStmt *a, IrStmt *b) {
    if (a->rank != b->rank) { return false; }
    for (int d = 0; d < a->rank; d++) {
        if (a->w[d] != b->w[d]) {
            if (!(a->w[d]->has_const && b->w[d]->has_const && a->w[d]->const_val == b->w[d]->const_val)) {
                return false;
            }
        }
    }
    return true;
}

/* Does statement s read v other than as an element input? */
static bool reads_other_than_ins(IrStmt *s, IrValue *v) {
    IrLambda *ls[2] = { s->map, s->post };
    for (int i = 0; i < 2; i++) {
        if (!ls[i]) { continue; }
        for (int r = 0; r < ls[i]->nres; r++) { if (ir_expr_uses_value(ls[i]->res[r], v)) { return true; } }
    }
    return s->dest == v || s->w[0] == v || s->w[1] == v;
}

/* Users of p's outputs other than c: returns -1 if none, else the smallest
 * statement index of such a user (INT32_MAX for an entry result). */
static int other_users(IrEntry *e, IrStmt *p, IrStmt *c, bool *c_reads_otherwise) {
    int first = -1;
    *c_reads_otherwise = false;
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead || s == p) { continue; }
        for (int o = 0; o < p->nouts; o++) {
            if (s == c) {
                if (reads_other_than_ins(c, p->outs[o])) { *c_reads_otherwise = true; }
                continue;
            }
            if (ir_stmt_reads(s, p->outs[o])) {
                if (first < 0) { first = i; }
                break;
            }
        }
    }
    for (int r = 0; r < e->nresults; r++) {
        if (out_index(p, e->results[r]) >= 0 && first < 0) { first = 0x7fffffff; }
    }
    return first;
}

static int find_or_add_in(IrModule *m, IrValue ***ins, int *nins, IrValue *v) {
    for (int i = 0; i < *nins; i++) { if ((*ins)[i] == v) { return i; } }
    IrValue **n = ir_alloc(m->arena, sizeof *n * (size_t)(*nins + 1));
    if (*nins) { memcpy(n, *ins, sizeof *n * (size_t)*nins); }
    n[*nins] = v;
    *ins = n;
    return (*nins)++;
}

/* Rule 1: fold producer p (a pure map) into consumer c. */
/* Fusing substitutes one lambda into another, which can multiply the size of
 * the expanded expressions (ir_expr_tree_size): above the limit, not fused. */
static bool lambda_too_big(IrLambda *l) {
    for (int r = 0; r < l->nres; r++) {
        if (ir_expr_tree_size(l->res[r]) > IR_MAX_EXPR_TREE) { return true; }
    }
    return false;
}

static bool fuse_map_into(IrModule *m, IrEntry *e, IrStmt *p, IrStmt *c) {
    if (p->kind != IR_S_SCREMA || p->nscans || p->nreds || p->post || p->dead) { return false; }
    if (!same_shape(p, c)) { return false; }
    if (c->kind == IR_S_SCALAR) { return false; }
    int cidx = ir_stmt_index(e, c);
    bool c_other;
    int others = other_users(e, p, c, &c_other);
    bool absorb = false;
    if (c_other) {
        ir_explain(m, e, "  not fused: %s (line %d) into %s (line %d): the consumer reads it at other indices",
                   ir_aop_info[p->src].name, p->line, ir_aop_info[c->src].name, c->line);
        return false;
    }
    if (ir_aop_info[p->src].flags & IR_AF_EXPENSIVE && others >= 0) {
        ir_explain(m, e, "  not fused: %s (line %d) into %s (line %d): would duplicate expensive work",
                   ir_aop_info[p->src].name, p->line, ir_aop_info[c->src].name, c->line);
        return false;
    }
    if (others >= 0) {
        if (c->kind == IR_S_SCREMA && others > cidx && !c->post) {
            absorb = true;
        } else if (!ir_lambda_is_cheap(p->map)) {
            ir_explain(m, e, "  not fused: %s (line %d) into %s (line %d): its result is used elsewhere and recomputing it is not cheap",
                       ir_aop_info[p->src].name, p->line, ir_aop_info[c->src].name, c->line);
            return false;
        }
    }

    /* New inputs: c's inputs that are not p's outputs, then p's inputs. */
    IrValue **nins = NULL;
    int nn = 0;
    for (int j = 0; j < c->nins; j++) {
        if (out_index(p, c->ins[j]) < 0) { find_or_add_in(m, &nins, &nn, c->ins[j]); }
    }
    int *pmap = ir_alloc(m->arena, sizeof *pmap * (size_t)(p->nins + 1));
    for (int q = 0; q < p->nins; q++) { pmap[q] = find_or_add_in(m, &nins, &nn, p->ins[q]); }
    IrScalar *ptypes = ir_alloc(m->arena, sizeof *ptypes * (size_t)(nn + 1));
    for (int i = 0; i < nn; i++) { ptypes[i] = nins[i]->elem; }

    /* p's results in terms of the new parameters */
    IrExpr **pargs = ir_alloc(m->arena, sizeof *pargs * (size_t)(p->nins + 1));
    for (int q = 0; q < p->nins; q++) { pargs[q] = ir_e_param(m, p->ins[q]->elem, pmap[q]); }
    IrExpr **pres = ir_alloc(m->arena, sizeof *pres * (size_t)(p->map->nres + 1));
    for (int r = 0; r < p->map->nres; r++) { pres[r] = ir_subst_params(m, p->map->res[r], pargs); }

    /* c's parameters in terms of the new parameters */
    IrExpr **cargs = ir_alloc(m->arena, sizeof *cargs * (size_t)(c->nins + 1));
    for (int j = 0; j < c->nins; j++) {
        int o = out_index(p, c->ins[j]);
        if (o >= 0) {
            cargs[j] = pres[o];
        } else {
            int k = find_or_add_in(m, &nins, &nn, c->ins[j]);
            cargs[j] = ir_e_param(m, c->ins[j]->elem, k);
        }
    }
    int extra = absorb ? p->map->nres : 0;
    IrLambda *nl = ir_lambda_new(m, nn, ptypes, c->map->nres + extra);
    for (int r = 0; r < c->map->nres; r++) { nl->res[r] = ir_subst_params(m, c->map->res[r], cargs); }
    for (int r = 0; r < extra; r++) { nl->res[c->map->nres + r] = pres[r]; }
    if (lambda_too_big(nl)) {
        ir_explain(m, e, "  not fused: %s (line %d) into %s (line %d): the fused expression would be too large",
                   ir_aop_info[p->src].name, p->line, ir_aop_info[c->src].name, c->line);
        return false;
    }
    c->map = nl;
    c->ins = nins;
    c->nins = nn;
    if (absorb) {
        for (int r = 0; r < p->nouts; r++) { ir_stmt_add_out(m, c, p->outs[r]); }
        p->dead = true;
        add_note(m, c, ir_fmt(m->arena, "%s@%d (vertical, result kept as output)", ir_aop_info[p->src].name, p->line));
    } else if (others >= 0) {
        add_note(m, c, ir_fmt(m->arena, "%s@%d (vertical, recomputed: cheap)", ir_aop_info[p->src].name, p->line));
    } else {
        p->dead = true;
        add_note(m, c, ir_fmt(m->arena, "%s@%d (vertical)", ir_aop_info[p->src].name, p->line));
    }
    if (p->note) { add_note(m, c, p->note); }
    return true;
}

static bool defined_before(IrEntry *e, IrValue *v, int idx) {
    if (!v->def) { return true; }
    int d = ir_stmt_index(e, v->def);
    return d >= 0 && d < idx;
}

typedef struct { IrEntry *e; int idx; bool ok; } BeforeCtx;
static void before_visit(IrValue *v, void *ctx) {
    BeforeCtx *b = ctx;
    if (!defined_before(b->e, v, b->idx)) { b->ok = false; }
}

/* Rule 2: the pure map c over p's scan results becomes p's post lambda. */
static bool fuse_post(IrModule *m, IrEntry *e, IrStmt *p, IrStmt *c) {
    if (p->kind != IR_S_SCREMA || c->kind != IR_S_SCREMA || p->nscans == 0 || p->dead) { return false; }
    if (c->nscans || c->nreds || c->post || c->rank != 1 || p->rank != 1 || !same_shape(p, c)) { return false; }
    int sw = ir_stmt_scan_width(p);
    int nscanouts = p->post ? p->post->nres : sw;
    int pidx = ir_stmt_index(e, p);
    /* every input from p must be a scan output used by c alone; every other
     * read of c must exist before p */
    BeforeCtx b = { e, pidx, true };
    for (int j = 0; j < c->nins; j++) {
        int o = out_index(p, c->ins[j]);
        if (o < 0) {
            before_visit(c->ins[j], &b);
            continue;
        }
        if (o >= nscanouts) { return false; }
    }
    for (int r = 0; r < c->map->nres; r++) { ir_expr_visit_reads(c->map->res[r], before_visit, &b); }
    if (!b.ok) {
        ir_explain(m, e, "  not fused: map (line %d) on the scan (line %d): it reads a value computed after the scan",
                   c->line, p->line);
        return false;
    }
    bool c_other;
    if (other_users(e, p, c, &c_other) >= 0 || c_other) {
        ir_explain(m, e, "  not fused: map (line %d) into the scan's epilogue (line %d): the scan result is used elsewhere",
                   c->line, p->line);
        return false;
    }
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(sw + 1));
    for (int j = 0; j < sw; j++) { pt[j] = p->map->res[j]->ty; }
    IrExpr **cargs = ir_alloc(m->arena, sizeof *cargs * (size_t)(c->nins + 1));
    for (int j = 0; j < c->nins; j++) {
        int o = out_index(p, c->ins[j]);
        if (o >= 0) {
            cargs[j] = p->post ? p->post->res[o] : ir_e_param(m, pt[o], o);
        } else {
            cargs[j] = ir_e_read(m, c->ins[j], ir_e_idx(m, 0), NULL);
        }
    }
    IrLambda *post = ir_lambda_new(m, sw, pt, c->map->nres);
    for (int r = 0; r < c->map->nres; r++) { post->res[r] = ir_subst_params(m, c->map->res[r], cargs); }
    if (lambda_too_big(post)) {
        ir_explain(m, e, "  not fused: map (line %d) into the scan's epilogue (line %d): the fused expression would be too large",
                   c->line, p->line);
        return false;
    }
    p->post = post;
    /* outs: c's outs replace the scan outs */
    int rest = p->nouts - nscanouts;
    IrValue **outs = ir_alloc(m->arena, sizeof *outs * (size_t)(c->nouts + rest + 1));
    for (int r = 0; r < c->nouts; r++) { outs[r] = c->outs[r]; outs[r]->def = p; }
    for (int r = 0; r < rest; r++) { outs[c->nouts + r] = p->outs[nscanouts + r]; }
    p->outs = outs;
    p->nouts = c->nouts + rest;
    c->dead = true;
    add_note(m, p, ir_fmt(m->arena, "map@%d on the scan output (vertical, post)", c->line));
    if (c->note) { add_note(m, p, c->note); }
    return true;
}

static bool fuse_entry_once(IrModule *m, IrEntry *e) {
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *c = e->stmts[i];
        if (c->dead || c->kind == IR_S_SCALAR) { continue; }
        for (int k = 0; k < c->nins; k++) {
            IrStmt *p = c->ins[k]->def;
            if (!p || p->dead) { continue; }
            if (fuse_map_into(m, e, p, c)) { return true; }
            if (fuse_post(m, e, p, c)) { return true; }
        }
    }
    return false;
}

void ir_fuse_vertical(IrModule *m) {
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        while (fuse_entry_once(m, e)) {
        }
    }
}
