/* shard.c: the sharded form of every entry (docs/sharding.md).
 *
 * requires: the fused IR (after ir_run_pipeline); preserves: ssa.
 * Runs only for sharded output (--emit=c-shard), after the plain entries
 * were emitted, since it rewrites the entries in place.
 *
 * 1. The sharded sizes: a size variable that is the first dimension of an
 *    array parameter and no later dimension of any parameter. Statements are
 *    visited in order; a filter over a sharded width makes its count a
 *    sharded size too (its result stays split over the ranks).
 * 2. Checks, with an error at the statement's line for each construct that
 *    reads or writes across shards: reads x[j] of a sharded array other than
 *    in the element's own row, scatters touching sharded arrays, sharded
 *    sizes as column counts.
 * 3. Rewrites: own-index reads x[i] become elementwise inputs, other reads
 *    of the own row (A[i, k] in a product) read row i - offset of the
 *    shard; each sharded
 *    size gets a local and an offset value; loop widths and array
 *    dimensions use the local value, while scalar uses (`n as f64`) keep the
 *    global one; the statements over shards are marked `sharded`, which is
 *    where a backend puts the local part and the combine (reductions, scans,
 *    filters).
 */
#include "ir.h"

#include "frontend.h"

#include <string.h>

typedef struct {
    IrModule *m;
    IrEntry *e;
    int nsizes;
    IrShardSize *sizes; /* the sharded sizes found so far */
    bool report;        /* refusals are errors (else only ok = false) */
    bool ok;
} Shard;

static IrShardSize *find_size(Shard *sh, const IrValue *global) {
    for (int i = 0; i < sh->nsizes; i++) { if (sh->sizes[i].global == global) { return &sh->sizes[i]; } }
    return NULL;
}

static bool is_sharded_size(Shard *sh, const IrValue *v) { return find_size(sh, v) != NULL; }

static bool is_sharded_array(Shard *sh, const IrValue *v) {
    return v->rank >= 1 && is_sharded_size(sh, v->dims[0]);
}

/* A sharded size with its local and offset values. */
static void add_sharded_size(Shard *sh, IrValue *g, bool is_param) {
    if (is_sharded_size(sh, g)) { return; }
    IrModule *m = sh->m;
    IrShardSize *z = ir_alloc(m->arena, sizeof *z * (size_t)(sh->nsizes + 1));
    if (sh->nsizes) { memcpy(z, sh->sizes, sizeof *z * (size_t)sh->nsizes); }
    sh->sizes = z;
    z = &z[sh->nsizes++];
    z->global = g;
    z->is_param = is_param;
    z->local = ir_value_new(m, sh->e, IR_I64, 0, NULL, NULL);
    z->offset = ir_value_new(m, sh->e, IR_I64, 0, NULL, NULL);
    const char *base = g->name ? g->name : ir_fmt(m->arena, "%d", g->id);
    z->local->name = ir_fmt(m->arena, "%s_local", base);
    z->offset->name = ir_fmt(m->arena, "%s_offset", base);
    z->local->is_size = z->offset->is_size = true;
}

static const char *array_name(const IrValue *v) { return v->name ? v->name : "an intermediate array"; }

static void refuse(Shard *sh, IrStmt *s, const char *fmt, const char *what) {
    SrcLoc loc = { sh->m->file, s->line, 1 };
    char msg[256];
    snprintf(msg, sizeof msg, fmt, what);
    if (sh->report) { fe_error(loc, "cannot shard entry '%s': %s", sh->e->name, msg); }
    sh->ok = false;
}

/* ---- own-index reads become inputs ---- */

typedef struct {
    Shard *sh;
    IrStmt *s;
    bool allow;         /* this lambda is the map of a sharded SCREMA/FILTER */
    bool rows;          /* IR_E_IDX 0 is this statement's (global) row index */
    int nmemo;
    const IrExpr **from;
    IrExpr **to;
    int capmemo;
} Localize;

static bool is_idx(const IrExpr *e, int dim) { return e && e->kind == IR_E_IDX && e->index == dim; }

/* x[i] (x[i, j] over a 2-D statement) at the statement's own index, x of its shape. */
static bool own_index_read(IrStmt *s, const IrExpr *e) {
    const IrValue *v = e->val;
    if (v->rank != s->rank || v->dims[0] != s->w[0] || !is_idx(e->a[0], 0)) { return false; }
    return v->rank == 1 ? e->a[1] == NULL : is_idx(e->a[1], 1) && v->dims[1] == s->w[1];
}

/* The map parameter reading input v, added to the statement if new. */
static IrExpr *input_param(Localize *l, IrValue *v, IrScalar ty) {
    IrStmt *s = l->s;
    IrModule *m = l->sh->m;
    for (int i = 0; i < s->nins; i++) {
        if (s->ins[i] == v) { return ir_e_param(m, ty, i); }
    }
    IrValue **ins = ir_alloc(m->arena, sizeof *ins * (size_t)(s->nins + 1));
    if (s->nins) { memcpy(ins, s->ins, sizeof *ins * (size_t)s->nins); }
    ins[s->nins] = v;
    IrScalar *pt = ir_alloc(m->arena, sizeof *pt * (size_t)(s->map->nparams + 1));
    if (s->map->nparams) { memcpy(pt, s->map->ptypes, sizeof *pt * (size_t)s->map->nparams); }
    pt[s->map->nparams] = v->elem;
    s->ins = ins;
    s->map->ptypes = pt;
    s->map->nparams++;
    return ir_e_param(m, ty, s->nins++);
}

static IrExpr *localize(Localize *l, IrExpr *e) {
    if (!e) { return NULL; }
    for (int i = 0; i < l->nmemo; i++) { if (l->from[i] == e) { return l->to[i]; } }
    IrExpr *r = e;
    if (e->kind == IR_E_READ && is_sharded_array(l->sh, e->val)) {
        if (l->allow && own_index_read(l->s, e)) {
            r = input_param(l, e->val, e->ty);
        } else if (l->rows && e->val->dims[0] == l->s->w[0] && is_idx(e->a[0], 0)) {
            /* any element of the own row (A[i, k] in a product): the local row i - offset */
            IrModule *m = l->sh->m;
            r = ir_alloc(m->arena, sizeof *r);
            *r = *e;
            r->tree = 0;
            r->a[0] = ir_e_bin(m, IR_BIN_sub, e->a[0], ir_e_free(m, find_size(l->sh, e->val->dims[0])->offset));
            r->a[1] = localize(l, e->a[1]);
        } else if (l->rows) {
            refuse(l->sh, l->s, "a read of '%s' at another element's index (x[i + 1], a gather) crosses shards", array_name(e->val));
        } else {
            refuse(l->sh, l->s, "a read of '%s' outside a loop over its shards (x[0], a reduction nested in a comprehension) needs other ranks' elements", array_name(e->val));
        }
    } else {
        IrExpr *a[3];
        bool changed = false;
        for (int k = 0; k < 3; k++) {
            a[k] = localize(l, e->a[k]);
            changed = changed || a[k] != e->a[k];
        }
        if (changed) {
            r = ir_alloc(l->sh->m->arena, sizeof *r);
            *r = *e;
            r->tree = 0;
            for (int k = 0; k < 3; k++) { r->a[k] = a[k]; }
        }
    }
    if (l->nmemo == l->capmemo) {
        int cap = l->capmemo ? l->capmemo * 2 : 16;
        const IrExpr **from = ir_alloc(l->sh->m->arena, sizeof *from * (size_t)cap);
        IrExpr **to = ir_alloc(l->sh->m->arena, sizeof *to * (size_t)cap);
        if (l->nmemo) {
            memcpy(from, l->from, sizeof *from * (size_t)l->nmemo);
            memcpy(to, l->to, sizeof *to * (size_t)l->nmemo);
        }
        l->from = from;
        l->to = to;
        l->capmemo = cap;
    }
    l->from[l->nmemo] = e;
    l->to[l->nmemo++] = r;
    return r;
}

static void localize_lambda(Shard *sh, IrStmt *s, IrLambda *lam, bool allow, bool rows) {
    if (!lam) { return; }
    Localize l = { sh, s, allow, rows, 0, NULL, NULL, 0 };
    for (int k = 0; k < lam->nres; k++) { lam->res[k] = localize(&l, lam->res[k]); }
}

/* ---- checks and marks, one statement ---- */

/* ir_dce stores only the scan components somebody reads, through a post
 * that projects the scanned tuple; a sharded scan's fix-up (P op out[i])
 * needs every component, so such a post gives its outputs back. */
static void store_every_scan_component(Shard *sh, IrStmt *s) {
    if (s->kind != IR_S_SCREMA || !s->nscans || !s->post) { return; }
    int sw = ir_stmt_scan_width(s);
    IrValue **scanned = ir_alloc(sh->m->arena, sizeof *scanned * (size_t)(sw + 1));
    for (int r = 0; r < s->post->nres; r++) {
        IrExpr *x = s->post->res[r];
        if (x->kind != IR_E_PARAM || scanned[x->index]) { return; }
        scanned[x->index] = s->outs[r];
    }
    int rest = s->nouts - s->post->nres;
    IrValue **outs = ir_alloc(sh->m->arena, sizeof *outs * (size_t)(sw + rest + 1));
    for (int j = 0; j < sw; j++) {
        outs[j] = scanned[j] ? scanned[j] : ir_value_new(sh->m, sh->e, s->post->ptypes[j], 1, s->w[0], NULL);
        outs[j]->def = s;
    }
    for (int r = 0; r < rest; r++) { outs[sw + r] = s->outs[s->post->nres + r]; }
    s->outs = outs;
    s->nouts = sw + rest;
    s->post = NULL;
}

static void check_stmt(Shard *sh, IrStmt *s) {
    bool rows = s->kind != IR_S_SCALAR && is_sharded_size(sh, s->w[0]);
    if (s->kind != IR_S_SCALAR && s->rank == 2 && is_sharded_size(sh, s->w[1])) {
        refuse(sh, s, "the sharded size '%s' is used as a column count", s->w[1]->name ? s->w[1]->name : "?");
        return;
    }
    if (s->kind == IR_S_SCATTER && (rows || (s->dest && is_sharded_array(sh, s->dest)))) {
        refuse(sh, s, "%s writes to global positions across shards", "a scatter");
        return;
    }
    if (s->kind == IR_S_SEGRED && s->axis == 0 && rows && s->post) {
        refuse(sh, s, "%s over sharded rows is not supported", "a column reduction (axis 0) with a post");
        return;
    }
    s->sharded = rows;
    if (rows) { store_every_scan_component(sh, s); }
    bool own = rows && (s->kind == IR_S_SCREMA || s->kind == IR_S_FILTER);
    localize_lambda(sh, s, s->map, own, rows);
    localize_lambda(sh, s, s->post, false, rows);
    localize_lambda(sh, s, s->per_row, false, rows);
    for (int i = 0; i < s->nscans; i++) { localize_lambda(sh, s, s->scans[i].op, false, false); }
    for (int i = 0; i < s->nreds; i++) { localize_lambda(sh, s, s->reds[i].op, false, false); }
    if (s->kind == IR_S_FILTER && rows) { add_sharded_size(sh, s->outs[s->nouts - 1], false); }
}

/* ---- the rewrite of sizes ---- */

static IrShardSize *shard_of(IrEntry *e, const IrValue *global) {
    for (int i = 0; i < e->nshards; i++) { if (e->shards[i].global == global) { return &e->shards[i]; } }
    return NULL;
}

static void localize_dims(IrEntry *e, IrValue *v) {
    IrShardSize *z = v->rank >= 1 ? shard_of(e, v->dims[0]) : NULL;
    if (z) { v->dims[0] = z->local; }
}

static void shard_entry(Shard *sh) {
    IrEntry *e = sh->e;
    /* 1. sizes bound by the parameters */
    for (int i = 0; i < e->nsizes; i++) {
        IrValue *n = e->sizes[i];
        bool first = false, later = false;
        for (int p = 0; p < e->nparams; p++) {
            IrValue *v = e->params[p];
            if (v->rank >= 1 && v->dims[0] == n) { first = true; }
            if (v->rank == 2 && v->dims[1] == n) { later = true; }
        }
        if (first && !later) { add_sharded_size(sh, n, true); }
    }
    /* 2. checks, marks, own-index reads; filters add their counts */
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (!s->dead) { check_stmt(sh, s); }
    }
    if (!sh->ok) { return; }
    /* 3. loop widths and array dimensions: the local sizes */
    e->nshards = sh->nsizes;
    e->shards = sh->sizes;
    e->sharded = true;
    for (int p = 0; p < e->nparams; p++) { localize_dims(e, e->params[p]); }
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        if (s->sharded) { s->w[0] = shard_of(e, s->w[0])->local; }
        for (int o = 0; o < s->nouts; o++) { localize_dims(e, s->outs[o]); }
    }
}

bool ir_shard(IrModule *m, bool report) {
    bool ok = true;
    for (int i = 0; i < m->nentries; i++) {
        Shard sh = { m, m->entries[i], 0, NULL, report, true };
        shard_entry(&sh);
        ok = ok && sh.ok;
        /* own-index reads became inputs after ir_to_kernels chose 16-byte
         * vectors: a new input of another element size (u32 read into an i64
         * map) would be loaded as vectors of the wrong width, so such kernels
         * go element by element (the H100 shard check found it: to_end) */
        IrEntry *e = m->entries[i];
        for (int k = 0; k < e->nkernels; k++) {
            IrKernel *kn = &e->kernels[k];
            if (kn->vectorize && kn->stmt && (kn->kind == IR_K_MAP || kn->kind == IR_K_REDUCE) &&
                !ir_stmt_streams_uniform(kn->stmt)) {
                kn->vectorize = false;
            }
            /* a sharded scan is no longer read as it is: the static bound of its tile */
            if (kn->kind == IR_K_SCAN && kn->stmt && kn->stmt->sharded) { ir_scan_bound_items(kn); }
        }
    }
    return ok;
}
