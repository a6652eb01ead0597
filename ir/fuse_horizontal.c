/* fuse_horizontal.c: side-by-side fusion of independent Scremas.
 *
 * requires: vertical fusion done (so each Screma already holds its maps).
 * preserves: SSA, results.
 *
 * Two Scremas of the same shape that read at least one common input and do
 * not depend on each other become one, producing all their results as a
 * tuple: sum(x) and sum(x*x) become one pass over x (mean and variance),
 * several scans over the same input one scan kernel.  Reductions and maps
 * merge with reductions and maps; scans merge with scans (same
 * exclusiveness, no post); row/column reductions with each other along the
 * same axis.  The merged statement sits at the later one's position, which
 * is legal when nothing in between reads the earlier one's results.
 */
#include "ir.h"

/* memcpy/memmove that accept (NULL, 0) */
#define COPY(d, s, n) do { if ((n) > 0) { memmove((d), (s), (n)); } } while (0)

#include <string.h>

static bool share_input(IrStmt *a, IrStmt *b) {
    for (int i = 0; i < a->nins; i++) {
        for (int j = 0; j < b->nins; j++) { if (a->ins[i] == b->ins[j]) { return true; } }
    }
    return false;
}

static bool same_shape(IrStmt *a, IrStmt *b) {
    if (a->rank != b->rank) { return false; }
    for (int d = 0; d < a->rank; d++) { if (a->w[d] != b->w[d]) { return false; } }
    return true;
}

static bool compatible(IrStmt *a, IrStmt *b) {
    if (a->kind != b->kind || a->dead || b->dead || !same_shape(a, b)) { return false; }
    if (a->post || b->post) { return false; }
    if (a->kind == IR_S_SEGRED) { return a->axis == b->axis; }
    if (a->kind != IR_S_SCREMA) { return false; }
    bool as = a->nscans > 0, bs = b->nscans > 0;
    if (as != bs) { return false; }
    if (as) {
        if (a->nreds || b->nreds || ir_stmt_nmapped(a) || ir_stmt_nmapped(b)) { return false; }
        return true;
    }
    /* two pure maps merge only if both are 1-D maps (a 2-D comprehension
     * keeps its own tiled kernel) */
    if (a->nreds == 0 && b->nreds == 0 && (a->src == IR_AOP_for2d || b->src == IR_AOP_for2d)) { return false; }
    return true;
}

static bool depends(IrEntry *e, IrStmt *a, IrStmt *b, int ai, int bi) {
    for (int o = 0; o < a->nouts; o++) {
        if (ir_stmt_reads(b, a->outs[o])) { return true; }
        for (int k = ai + 1; k < bi; k++) {
            if (!e->stmts[k]->dead && ir_stmt_reads(e->stmts[k], a->outs[o])) { return true; }
        }
    }
    return false;
}

/* Merge a (earlier) into b (later). */
static void merge(IrModule *m, IrStmt *a, IrStmt *b) {
    int nn = b->nins;
    IrValue **ins = ir_alloc(m->arena, sizeof *ins * (size_t)(a->nins + b->nins + 1));
    COPY(ins, b->ins, sizeof *ins * (size_t)b->nins);
    int *amap = ir_alloc(m->arena, sizeof *amap * (size_t)(a->nins + 1));
    for (int i = 0; i < a->nins; i++) {
        int k = -1;
        for (int j = 0; j < nn; j++) { if (ins[j] == a->ins[i]) { k = j; } }
        if (k < 0) { k = nn; ins[nn++] = a->ins[i]; }
        amap[i] = k;
    }
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(nn + 1));
    for (int i = 0; i < nn; i++) { pt[i] = ins[i]->elem; }
    IrExpr **aargs = ir_alloc(m->arena, sizeof *aargs * (size_t)(a->nins + 1));
    for (int i = 0; i < a->nins; i++) { aargs[i] = ir_e_param(m, a->ins[i]->elem, amap[i]); }

    int asw = ir_stmt_scan_width(a), bsw = ir_stmt_scan_width(b);
    int arw = ir_stmt_red_width(a), brw = ir_stmt_red_width(b);
    int amw = ir_stmt_nmapped(a), bmw = ir_stmt_nmapped(b);
    IrLambda *l = ir_lambda_new(m, nn, pt, a->map->nres + b->map->nres);
    int r = 0;
    /* order: a scans, b scans, a reds, b reds, a maps, b maps */
    for (int i = 0; i < asw; i++) { l->res[r++] = ir_subst_params(m, a->map->res[i], aargs); }
    for (int i = 0; i < bsw; i++) { l->res[r++] = b->map->res[i]; }
    for (int i = 0; i < arw; i++) { l->res[r++] = ir_subst_params(m, a->map->res[asw + i], aargs); }
    for (int i = 0; i < brw; i++) { l->res[r++] = b->map->res[bsw + i]; }
    for (int i = 0; i < amw; i++) { l->res[r++] = ir_subst_params(m, a->map->res[asw + arw + i], aargs); }
    for (int i = 0; i < bmw; i++) { l->res[r++] = b->map->res[bsw + brw + i]; }

    IrOperator *scans = ir_alloc(m->arena, sizeof *scans * (size_t)(a->nscans + b->nscans + 1));
    COPY(scans, a->scans, sizeof *scans * (size_t)a->nscans);
    COPY(scans + a->nscans, b->scans, sizeof *scans * (size_t)b->nscans);
    IrOperator *reds = ir_alloc(m->arena, sizeof *reds * (size_t)(a->nreds + b->nreds + 1));
    COPY(reds, a->reds, sizeof *reds * (size_t)a->nreds);
    COPY(reds + a->nreds, b->reds, sizeof *reds * (size_t)b->nreds);

    /* outs follow the same order; for SEGRED all outs are reduction outs */
    int aso = a->kind == IR_S_SEGRED ? 0 : asw, bso = b->kind == IR_S_SEGRED ? 0 : bsw;
    int aro = a->nreds, bro = b->nreds;
    IrValue **outs = ir_alloc(m->arena, sizeof *outs * (size_t)(a->nouts + b->nouts + 1));
    int o = 0;
    for (int i = 0; i < aso; i++) { outs[o++] = a->outs[i]; }
    for (int i = 0; i < bso; i++) { outs[o++] = b->outs[i]; }
    /* reduction outputs: one per reduction component */
    int ar = 0, br = 0;
    for (int i = 0; i < a->nreds; i++) { ar += a->reds[i].arity; }
    for (int i = 0; i < b->nreds; i++) { br += b->reds[i].arity; }
    (void)aro; (void)bro;
    for (int i = 0; i < ar; i++) { outs[o++] = a->outs[aso + i]; }
    for (int i = 0; i < br; i++) { outs[o++] = b->outs[bso + i]; }
    for (int i = aso + ar; i < a->nouts; i++) { outs[o++] = a->outs[i]; }
    for (int i = bso + br; i < b->nouts; i++) { outs[o++] = b->outs[i]; }
    for (int i = 0; i < o; i++) { outs[i]->def = b; }

    b->ins = ins; b->nins = nn; b->map = l;
    b->scans = scans; b->nscans = a->nscans + b->nscans;
    b->reds = reds; b->nreds = a->nreds + b->nreds;
    b->outs = outs; b->nouts = o;
    const char *what = ir_fmt(m->arena, "%s@%d (horizontal)", ir_aop_info[a->src].name, a->line);
    b->note = b->note ? ir_fmt(m->arena, "%s, %s", b->note, what) : what;
    if (a->note) { b->note = ir_fmt(m->arena, "%s, %s", b->note, a->note); }
    if (b->src != a->src) { b->src = IR_AOP_screma; }
    a->dead = true;
}

void ir_fuse_horizontal(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        bool changed = true;
        while (changed) {
            changed = false;
            for (int bi = 0; bi < e->nstmts && !changed; bi++) {
                IrStmt *b = e->stmts[bi];
                if (b->dead) { continue; }
                for (int ai = 0; ai < bi && !changed; ai++) {
                    IrStmt *a = e->stmts[ai];
                    if (!compatible(a, b) || !share_input(a, b)) { continue; }
                    if (depends(e, a, b, ai, bi)) {
                        ir_explain(m, e, "  not fused: %s (line %d) beside %s (line %d): the second depends on the first",
                                   ir_aop_info[a->src].name, a->line, ir_aop_info[b->src].name, b->line);
                        continue;
                    }
                    merge(m, a, b);
                    changed = true;
                }
            }
        }
    }
}
