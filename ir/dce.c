/* dce.c: dead statement and dead output elimination.
 *
 * requires: nothing.  preserves: SSA, results, order of live statements.
 * A statement none of whose outputs is read (by a live statement, a size
 * or the entry's results) is marked dead, but for a same_size check (it has
 * no output: it may fail the entry); repeated to a fixpoint.  Of a
 * live Screma, the outputs nobody reads go too:
 *   - mapped outputs: the map result and the output;
 *   - scan outputs: a scan's array of a tuple component nobody reads is
 *     neither allocated nor stored; the scan keeps computing the
 *     component when a read one needs it (`map(|p| p.1, scan(compose,
 *     ...))`: the post, or a projection post made here, names what is
 *     stored);
 *   - scan and reduction components that no read result depends on
 *     (through the operator) are dropped from the operator, its neutral
 *     element and the map, so they are neither loaded nor combined;
 *   - inputs the map no longer reads.
 */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

/* Mark in `used` (nparams flags) the lambda parameters e reads.  Lambdas
 * are bounded by IR_MAX_EXPR_TREE, so a walk of the tree is bounded too. */
static void mark_params(const IrExpr *e, bool *used) {
    if (!e) { return; }
    if (e->kind == IR_E_PARAM) { used[e->index] = true; }
    for (int i = 0; i < 3; i++) { mark_params(e->a[i], used); }
}

/* Drop the mapped outputs nobody reads (map results and outputs). */
static bool drop_mapped_outputs(IrStmt *s) {
    bool changed = false;
    int first = s->nouts - ir_stmt_nmapped(s);
    for (int o = s->nouts - 1; o >= first && s->nouts > 1; o--) {
        if (s->outs[o]->nuses > 0) { continue; }
        int r = s->map->nres - (s->nouts - o);
        for (int k = o; k + 1 < s->nouts; k++) { s->outs[k] = s->outs[k + 1]; }
        for (int k = r; k + 1 < s->map->nres; k++) { s->map->res[k] = s->map->res[k + 1]; }
        s->nouts--;
        s->map->nres--;
        changed = true;
    }
    return changed;
}

/* Drop the inputs the map does not read (after a sliced component, the
 * array it loaded): parameters renumbered. */
static bool drop_unused_inputs(IrModule *m, IrStmt *s) {
    bool *used = calloc((size_t)s->nins + 1, sizeof *used);
    if (!used) { IR_UNREACHABLE("out of memory"); }
    for (int r = 0; r < s->map->nres; r++) { mark_params(s->map->res[r], used); }
    int kept = 0;
    for (int j = 0; j < s->nins; j++) { kept += used[j]; }
    bool changed = kept < s->nins;
    if (changed) {
        IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(kept + 1));
        IrExpr **args = ir_alloc(m->arena, sizeof *args * (size_t)(s->nins + 1));
        IrValue **ins = ir_alloc(m->arena, sizeof *ins * (size_t)(kept + 1));
        for (int j = 0, k = 0; j < s->nins; j++) {
            if (!used[j]) { continue; }
            pt[k] = s->map->ptypes[j];
            ins[k] = s->ins[j];
            args[j] = ir_e_param(m, pt[k], k);
            k++;
        }
        IrLambda *map = ir_lambda_new(m, kept, pt, s->map->nres);
        for (int r = 0; r < s->map->nres; r++) { map->res[r] = ir_subst_params(m, s->map->res[r], args); }
        s->map = map;
        s->ins = ins;
        s->nins = kept;
    }
    free(used);
    return changed;
}

/* Remove outs[o] of s. */
static void remove_out(IrStmt *s, int o) {
    for (int k = o; k + 1 < s->nouts; k++) { s->outs[k] = s->outs[k + 1]; }
    s->nouts--;
}

/* Scan outputs nobody reads: with a post, its results; without, a post
 * that projects the scanned tuple onto the read components replaces them. */
static bool drop_scan_outputs(IrModule *m, IrStmt *s) {
    int sw = ir_stmt_scan_width(s);
    int nso = s->post ? s->post->nres : sw;
    int nlive = 0;
    for (int o = 0; o < nso; o++) { nlive += s->outs[o]->nuses > 0; }
    if (nlive == nso) { return false; }
    if (!s->post) {
        IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(sw + 1));
        int at = 0;
        for (int q = 0; q < s->nscans; q++) {
            for (int j = 0; j < s->scans[q].arity; j++) { pt[at++] = s->scans[q].op->ptypes[j]; }
        }
        s->post = ir_lambda_new(m, sw, pt, sw);
        for (int j = 0; j < sw; j++) { s->post->res[j] = ir_e_param(m, pt[j], j); }
    }
    for (int o = nso - 1; o >= 0; o--) {
        if (s->outs[o]->nuses > 0) { continue; }
        remove_out(s, o);
        for (int k = o; k + 1 < s->post->nres; k++) { s->post->res[k] = s->post->res[k + 1]; }
        s->post->nres--;
    }
    return true;
}

/* Extend `need` (one flag per component of the nops operators, which lie
 * one after the other) to the components the needed ones are computed
 * from: result j of an operator reads accumulator and element components
 * k, so k is needed too. */
static void close_needed(IrOperator *ops, int nops, bool *need) {
    for (int q = 0, at = 0; q < nops; at += ops[q].arity, q++) {
        int a = ops[q].arity;
        bool *used = calloc((size_t)(2 * a) + 1, sizeof *used);
        if (!used) { IR_UNREACHABLE("out of memory"); }
        bool grew = true;
        while (grew) {
            grew = false;
            memset(used, 0, sizeof *used * (size_t)(2 * a));
            for (int j = 0; j < a; j++) { if (need[at + j]) { mark_params(ops[q].op->res[j], used); } }
            for (int k = 0; k < a; k++) {
                if ((used[k] || used[a + k]) && !need[at + k]) { need[at + k] = true; grew = true; }
            }
        }
        free(used);
    }
}

/* Keep the needed components of the nops operators *ops (an operator with
 * none goes): new operators with their parameters renumbered.  `renum`
 * gets each old component's new position, or -1. Returns the new count. */
static int slice_operators(IrModule *m, IrOperator **ops, int nops, const bool *need, int *renum) {
    IrOperator *out = ir_alloc(m->arena, sizeof *out * (size_t)(nops + 1));
    int nout = 0, pos = 0;
    for (int q = 0, at = 0; q < nops; at += (*ops)[q].arity, q++) {
        IrOperator *op = &(*ops)[q];
        int a = op->arity, kept = 0;
        for (int j = 0; j < a; j++) {
            renum[at + j] = need[at + j] ? pos + kept : -1;
            kept += need[at + j];
        }
        if (kept == 0) { continue; }
        if (kept == a) {
            out[nout++] = *op;
            pos += a;
            continue;
        }
        IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(2 * kept + 1));
        IrExpr **args = ir_alloc(m->arena, sizeof *args * (size_t)(2 * a + 1));
        IrOperator n = *op;
        n.arity = kept;
        n.ne = ir_alloc(m->arena, sizeof *n.ne * (size_t)(kept + 1));
        for (int j = 0, k = 0; j < a; j++) {
            /* a dropped component is read by no kept result: any value will do */
            args[j] = need[at + j] ? ir_e_param(m, op->op->ptypes[j], k) : op->ne[j];
            args[a + j] = need[at + j] ? ir_e_param(m, op->op->ptypes[a + j], kept + k) : op->ne[j];
            if (need[at + j]) {
                pt[k] = op->op->ptypes[j];
                pt[kept + k] = op->op->ptypes[a + j];
                n.ne[k] = op->ne[j];
                k++;
            }
        }
        n.op = ir_lambda_new(m, 2 * kept, pt, kept);
        for (int j = 0, k = 0; j < a; j++) {
            if (need[at + j]) { n.op->res[k++] = ir_subst_params(m, op->op->res[j], args); }
        }
        out[nout++] = n;
        pos += kept;
    }
    *ops = out;
    return nout;
}

/* Remove map results [from, from + w) whose renum is -1. */
static void drop_map_results(IrStmt *s, int from, int w, const int *renum) {
    for (int j = w - 1; j >= 0; j--) {
        if (renum[j] >= 0) { continue; }
        for (int k = from + j; k + 1 < s->map->nres; k++) { s->map->res[k] = s->map->res[k + 1]; }
        s->map->nres--;
    }
}

/* Scan components that no stored result depends on. */
static bool slice_scans(IrModule *m, IrStmt *s) {
    int sw = ir_stmt_scan_width(s);
    if (!s->post) { return false; }  /* every component is stored */
    bool *need = calloc((size_t)sw + 1, sizeof *need);
    int *renum = calloc((size_t)sw + 1, sizeof *renum);
    if (!need || !renum) { IR_UNREACHABLE("out of memory"); }
    for (int r = 0; r < s->post->nres; r++) { mark_params(s->post->res[r], need); }
    close_needed(s->scans, s->nscans, need);
    int kept = 0;
    for (int j = 0; j < sw; j++) { kept += need[j]; }
    bool changed = kept < sw;
    if (changed) {
        s->nscans = slice_operators(m, &s->scans, s->nscans, need, renum);
        drop_map_results(s, 0, sw, renum);
        IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(kept + 1));
        IrExpr **args = ir_alloc(m->arena, sizeof *args * (size_t)(sw + 1));
        for (int j = 0; j < sw; j++) {
            if (renum[j] >= 0) { pt[renum[j]] = s->post->ptypes[j]; }
            args[j] = renum[j] >= 0 ? ir_e_param(m, s->post->ptypes[j], renum[j]) : NULL;
        }
        IrLambda *post = ir_lambda_new(m, kept, pt, s->post->nres);
        for (int r = 0; r < s->post->nres; r++) { post->res[r] = ir_subst_params(m, s->post->res[r], args); }
        s->post = post;
    }
    /* a post that stores every component in order is no post */
    bool identity = s->post->nres == s->post->nparams;
    for (int r = 0; identity && r < s->post->nres; r++) {
        identity = s->post->res[r]->kind == IR_E_PARAM && s->post->res[r]->index == r;
    }
    if (identity) {
        s->post = NULL;
        changed = true;
    }
    free(need);
    free(renum);
    return changed;
}

/* Reduction components that nobody reads and no read one depends on: the
 * component, its map result and its output go. */
static bool slice_reductions(IrModule *m, IrStmt *s) {
    int sw = ir_stmt_scan_width(s), rw = ir_stmt_red_width(s);
    int first = s->post ? s->post->nres : sw;  /* outs of the reductions start here */
    bool *need = calloc((size_t)rw + 1, sizeof *need);
    int *renum = calloc((size_t)rw + 1, sizeof *renum);
    if (!need || !renum) { IR_UNREACHABLE("out of memory"); }
    for (int j = 0; j < rw; j++) { need[j] = s->outs[first + j]->nuses > 0; }
    close_needed(s->reds, s->nreds, need);
    int kept = 0;
    for (int j = 0; j < rw; j++) { kept += need[j]; }
    bool changed = kept < rw && kept + s->nouts - rw > 0;
    if (changed) {
        s->nreds = slice_operators(m, &s->reds, s->nreds, need, renum);
        drop_map_results(s, sw, rw, renum);
        for (int j = rw - 1; j >= 0; j--) { if (renum[j] < 0) { remove_out(s, first + j); } }
    }
    free(need);
    free(renum);
    return changed;
}

void ir_dce(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        bool changed = true;
        while (changed) {
            changed = false;
            ir_count_uses(e);
            /* sizes of live values count as uses */
            for (int i = 0; i < e->nstmts; i++) {
                IrStmt *s = e->stmts[i];
                if (s->dead) { continue; }
                for (int o = 0; o < s->nouts; o++) {
                    for (int d = 0; d < s->outs[o]->rank; d++) { s->outs[o]->dims[d]->nuses++; }
                }
            }
            for (int i = e->nstmts - 1; i >= 0; i--) {
                IrStmt *s = e->stmts[i];
                if (s->dead) { continue; }
                bool used = false;
                for (int o = 0; o < s->nouts; o++) { used = used || s->outs[o]->nuses > 0; }
                /* a size check fails the entry: it stays, and so what it reads */
                if (!used && s->src != IR_AOP_same_size) {
                    s->dead = true;
                    changed = true;
                    continue;
                }
                if (s->kind != IR_S_SCREMA) { continue; }
                changed = drop_mapped_outputs(s) || changed;
                if (s->nscans && s->rank == 1) {
                    changed = drop_scan_outputs(m, s) || changed;
                    changed = slice_scans(m, s) || changed;
                }
                if (s->nreds) { changed = slice_reductions(m, s) || changed; }
                changed = drop_unused_inputs(m, s) || changed;
            }
        }
    }
}
