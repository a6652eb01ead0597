/* shard.c: the CUDA backend's sharded entries (gpuc --emit=cuda-shard,
 * docs/sharding.md), the GPU counterpart of emit_c.c's gpuc_shard_NAME.
 *
 * After ir_shard rewrote the entries, each sharded entry gets its own
 * kernels (the same emitters, names prefixed `shard_`, every sharded
 * statement's kernel taking the shard's first row g_shard_off so that
 * indices are global) and a launcher
 *   int gpuc_dev_shard_NAME(GpucHost *gpuc_h, const GpucComm *comm, local sizes, params, outs)
 * with the structure of gpuc_dev_NAME (launch.c) plus, as in the C backend:
 * the global sizes and offsets from one all-gather of the local sizes at
 * entry; after a sharded reduction to scalars (whose partials the launcher
 * already copies to the host), an all-gather of every rank's partials and
 * their fold in rank order with the operator (any operator, tuples too; the
 * same bits on every rank); after a filter, its global count and offset.
 * Collectives go through the GpucComm vtable (NCCL: gpuc_comm_nccl.c) on
 * device buffers, on the launcher's stream; the few bytes of partials are
 * staged through a small device buffer (gpuc_shard_gather).
 *
 * A sharded scan (1-D) runs three kernels: this shard's totals (a
 * reduction kernel over the scan's map with the scan operators, made here),
 * the local scan (the plain scan kernel), then, once the totals of the
 * earlier ranks are gathered and folded in rank order into this rank's
 * prefix P, a fix-up out[i] = P op out[i] (P on the left: non-commutative
 * operators are right; an exclusive scan's out[0] = ne becomes P). With a
 * post (a map fused after the scan), the scan kernel runs without it into
 * temporaries and the fix-up applies P, then the post, into the post's
 * outputs (the entry scalars and the index it uses are its parameters).
 *
 * Not yet on the GPU (be_cuda_shard_unsupported): a post that reads an
 * array, 2-D scans, scatters; the entries with them are left out of the
 * sharded output, with a note.
 */
#include "cuda_emit.h"

static IrShardSize *shard_of(IrEntry *e, const IrValue *v) {
    for (int i = 0; i < e->nshards; i++) {
        if (e->shards[i].global == v || e->shards[i].local == v) { return &e->shards[i]; }
    }
    return NULL;
}

IrValue *cuda_shard_local_size(IrEntry *e, IrValue *size) {
    IrShardSize *z = shard_of(e, size);
    return z ? z->local : size;
}

const char *shard_offset_name(IrEntry *e, IrStmt *s) {
    IrShardSize *z = shard_of(e, s->w[0]);
    if (!z) { IR_UNREACHABLE("sharded statement without a sharded size"); }
    return be_vname(z->offset);
}

/* Does x read no array? (Entry scalars and the element's index are
 * fine: the fix-up kernel takes them as parameters.) */
static bool reads_nothing(const IrExpr *x) {
    if (!x) { return true; }
    if (x->kind == IR_E_READ) { return false; }
    for (int i = 0; i < 3; i++) {
        if (!reads_nothing(x->a[i])) { return false; }
    }
    return true;
}

/* A post the fix-up kernel can apply: small (the walks here expand shared
 * nodes) and reading no array. */
static bool fixable_post(const IrLambda *l) {
    for (int i = 0; i < l->nres; i++) {
        if (ir_expr_tree_size(l->res[i]) > 1000 || !reads_nothing(l->res[i])) { return false; }
    }
    return true;
}

/* NULL when every sharded statement of e has a GPU combine, else what lacks one. */
const char *be_cuda_shard_unsupported(IrEntry *e) {
    for (int i = 0; i < e->nkernels; i++) {
        IrKernel *k = &e->kernels[i];
        if (!k->stmt || !k->stmt->sharded) { continue; }
        if (k->kind == IR_K_SCAN && k->stmt->rank != 1) { return "a 2-D sharded scan"; }
        if (k->kind == IR_K_SCAN && k->stmt->post && !fixable_post(k->stmt->post)) {
            return "a sharded scan with a post that reads an array";
        }
        if (k->stmt->kind == IR_S_SEGRED && k->stmt->axis == 0 && k->kind != IR_K_SEGRED_COL) { return "a column reduction"; }
        if (k->kind == IR_K_SCATTER) { return "a scatter"; }
    }
    return NULL;
}

void cuda_shard_signature(BeBuf *b, IrEntry *e, const char *prefix, const char *lead) {
    IrEntry local = *e;
    IrValue **sizes = calloc((size_t)e->nsizes + 1, sizeof *sizes);
    for (int i = 0; i < e->nsizes; i++) { sizes[i] = cuda_shard_local_size(e, e->sizes[i]); }
    local.sizes = sizes;
    be_entry_signature(b, &local, prefix, lead);
    free(sizes);
}

/* At entry: the global sizes and this rank's offsets from the local sizes. */
void cuda_shard_sizes(CuEmit *c) {
    for (int i = 0; i < c->e->nshards; i++) {
        IrShardSize *z = &c->e->shards[i];
        if (!z->is_param) { continue; }
        be_line(c->b, "int64_t %s, %s;", be_vname(z->global), be_vname(z->offset));
        be_line(c->b, "GPUC_TRY(gpuc_shard_size(gpuc_h, comm, %s, &%s, &%s));", be_vname(z->local), be_vname(z->global),
                be_vname(z->offset));
        be_line(c->b, "(void)%s; (void)%s;", be_vname(z->global), be_vname(z->offset));
    }
}

/* ---- scans: the totals kernel and the fix-up (see the top) ---- */

typedef struct {
    IrKernel *scan;   /* the entry's scan kernel */
    IrStmt *with_post; /* a scan with a post: its statement (outs: the post's), else NULL */
    IrStmt scan_stmt; /* with_post: the kernel's statement, the scans into temporaries */
    IrStmt tot_stmt;  /* its map reduced with the scan operators */
    IrKernel tot;     /* the reduction kernel of tot_stmt */
    const char *fix;  /* the fix-up kernel's name */
    int nfree;        /* with_post: the entry scalars its post uses, */
    IrValue **free;   /* kernel parameters of the fix-up */
    bool index;       /* with_post: its post uses the element's index */
    int id;           /* names the prefix variables g_preID_I_K */
} ShardScan;

static ShardScan **scans;  /* each in the module's arena: tot.stmt points into it */
static int nscans;

static ShardScan *scan_of(const IrKernel *k) {
    for (int i = 0; i < nscans; i++) { if (scans[i]->scan == k) { return scans[i]; } }
    return NULL;
}

static bool is_total(const IrKernel *k) {
    for (int i = 0; i < nscans; i++) { if (&scans[i]->tot == k) { return true; } }
    return false;
}

/* The entry scalars and whether the index appear in x (a post). */
static void post_uses(IrModule *m, ShardScan *ss, const IrExpr *x) {
    if (!x) { return; }
    if (x->kind == IR_E_IDX) { ss->index = true; }
    if (x->kind == IR_E_FREE) {
        for (int i = 0; i < ss->nfree; i++) {
            if (ss->free[i] == x->val) { return; }
        }
        IrValue **grown = ir_alloc(m->arena, sizeof *grown * (size_t)(ss->nfree + 1));
        if (ss->nfree) { memcpy(grown, ss->free, sizeof *grown * (size_t)ss->nfree); }
        grown[ss->nfree++] = x->val;
        ss->free = grown;
    }
    for (int i = 0; i < 3; i++) { post_uses(m, ss, x->a[i]); }
}

static void add_scan(IrModule *m, IrEntry *e, IrKernel *k) {
    scans = realloc(scans, sizeof *scans * (size_t)(nscans + 1));
    if (!scans) { IR_UNREACHABLE("out of memory"); }
    ShardScan *ss = ir_alloc(m->arena, sizeof *ss);
    memset(ss, 0, sizeof *ss);
    scans[nscans] = ss;
    ss->scan = k;
    ss->id = nscans++;
    IrStmt *s = k->stmt, *t = &ss->tot_stmt;
    if (s->post) {
        /* the kernel scans into temporaries; the fix-up applies P, then the post */
        ss->with_post = s;
        for (int r = 0; r < s->post->nres; r++) { post_uses(m, ss, s->post->res[r]); }
        IrStmt *q = &ss->scan_stmt;
        *q = *s;
        q->post = NULL;
        int sw = ir_stmt_scan_width(s), rest = s->nouts - s->post->nres;
        q->nouts = sw + rest;
        q->outs = ir_alloc(m->arena, sizeof *q->outs * (size_t)(q->nouts + 1));
        for (int j = 0; j < sw; j++) {
            q->outs[j] = ir_value_new(m, e, s->post->ptypes[j], 1, s->w[0], NULL);
            q->outs[j]->name = ir_fmt(m->arena, "%s_scan%d", k->name, j);
            q->outs[j]->def = q;
        }
        for (int r = 0; r < rest; r++) { q->outs[sw + r] = s->outs[s->post->nres + r]; }
        k->stmt = q;
        s = q;
    }
    *t = *s;
    t->nscans = 0;
    t->scans = NULL;
    t->nreds = s->nscans;
    t->reds = ir_alloc(m->arena, sizeof *t->reds * (size_t)s->nscans);
    IrLambda *map = ir_alloc(m->arena, sizeof *map);
    *map = *s->map;
    map->nres = ir_stmt_scan_width(s);  /* the map's results feeding the scans come first */
    t->map = map;
    t->nouts = map->nres;
    t->outs = ir_alloc(m->arena, sizeof *t->outs * (size_t)(t->nouts + 1));
    int o = 0;
    for (int i = 0; i < s->nscans; i++) {
        t->reds[i] = s->scans[i];
        t->reds[i].exclusive = false;
        for (int j = 0; j < s->scans[i].arity; j++) {
            t->outs[o] = ir_value_new(m, e, s->scans[i].op->ptypes[j], 0, NULL, NULL);
            t->outs[o]->name = ir_fmt(m->arena, "%s_tot%d_%d", k->name, i, j);
            o++;
        }
    }
    ss->tot = *k;
    ss->tot.kind = IR_K_REDUCE;
    ss->tot.stmt = t;
    ss->tot.name = ir_fmt(m->arena, "%s_tot", k->name);
    ss->tot.block = 256;
    ss->tot.items = ss->tot.unroll = 8;
    ss->tot.grid = IR_GRID_SATURATE;
    ss->tot.vectorize = false;
    ss->tot.ordered = true;
    ss->tot.vec = 1;
    ss->fix = ir_fmt(m->arena, "%s_fix", k->name);
}

/* out[i] = P op out[i] for the scans' outputs, grid-stride over the shard;
 * with a post, y = P op tmp[i] from the kernel's temporaries and the
 * post's outputs out[i] = post(y). */
static void emit_fix_kernel(CuEmit *c, ShardScan *ss) {
    BeBuf *b = c->b;
    IrStmt *s = ss->scan->stmt, *p = ss->with_post;
    be_printf(b, "/* %s:%d: the earlier ranks' prefix applied to the local scans%s (sharded) */\n", c->m->file, s->line,
              p ? ", then the post" : "");
    be_printf(b, "extern \"C\" __global__ void __launch_bounds__(256)\n%s(const int64_t g_n", ss->fix);
    int o = 0;
    for (int i = 0; i < s->nscans; i++) {
        for (int j = 0; j < s->scans[i].arity; j++) {
            const char *t = ct(s->scans[i].op->ptypes[j]);
            be_printf(b, ", const %s g_p%d_%d, %s%s *__restrict__ g_o%d", t, i, j, p ? "const " : "", t, o);
            o++;
        }
    }
    for (int r = 0; p && r < p->post->nres; r++) { be_printf(b, ", %s *__restrict__ g_q%d", ct(p->outs[r]->elem), r); }
    for (int i = 0; i < ss->nfree; i++) { be_printf(b, ", const %s %s", ct(ss->free[i]->elem), be_vname(ss->free[i])); }
    if (ss->index) { be_printf(b, ", const int64_t g_shard_off"); }
    be_printf(b, ")\n{\n");
    b->indent = 1;
    be_line(b, "for (int64_t g_i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g_i < g_n; g_i += (int64_t)gridDim.x * blockDim.x) {");
    b->indent++;
    const char **scanned = calloc((size_t)o + 1, sizeof *scanned);  /* P op out[i] of every component */
    o = 0;
    for (int i = 0; i < s->nscans; i++) {
        IrOperator *op = &s->scans[i];
        const char **args = calloc((size_t)op->arity * 2 + 1, sizeof *args);
        for (int j = 0; j < op->arity; j++) {
            args[j] = be_strf(&c->x, "g_p%d_%d", i, j);
            args[op->arity + j] = be_strf(&c->x, "g_x%d_%d", i, j);
            be_line(b, "const %s %s = g_o%d[g_i];", ct(op->op->ptypes[j]), args[op->arity + j], o + j);
        }
        const char **res = calloc((size_t)op->op->nres + 1, sizeof *res);
        be_lambda(&c->x, op->op, args, res);
        for (int j = 0; j < op->arity; j++) {
            if (p) {
                scanned[o + j] = be_strf(&c->x, "g_y%d", o + j);
                be_line(b, "const %s %s = %s;", ct(op->op->ptypes[j]), scanned[o + j], res[j]);
                be_line(b, "(void)%s;  /* the post may not read every component */", scanned[o + j]);
            } else {
                be_line(b, "g_o%d[g_i] = %s;", o + j, res[j]);
            }
        }
        free(res);
        free(args);
        o += op->arity;
    }
    if (p) {
        be_expr_reset(&c->x);  /* the post's own temporaries */
        const char **res = calloc((size_t)p->post->nres + 1, sizeof *res);
        const char *idx0 = c->x.idx[0], *off = c->x.idx0_offset;
        c->x.idx[0] = "g_i";
        c->x.idx0_offset = "g_shard_off";  /* the index is global */
        be_lambda(&c->x, p->post, scanned, res);
        c->x.idx[0] = idx0;
        c->x.idx0_offset = off;
        for (int r = 0; r < p->post->nres; r++) { be_line(b, "g_q%d[g_i] = %s;", r, res[r]); }
        free(res);
    }
    free(scanned);
    b->indent--;
    be_line(b, "}");
    b->indent = 0;
    be_printf(b, "}\n\n");
    be_expr_reset(&c->x);
}

IrKernel *cuda_shard_total(const IrKernel *k) {
    ShardScan *ss = scan_of(k);
    return ss ? &ss->tot : NULL;
}

void cuda_shard_fix_kernel(CuEmit *c, const IrKernel *k) {
    ShardScan *ss = scan_of(k);
    if (ss) { emit_fix_kernel(c, ss); }
}

/* The kernels of a sharded entry, named apart from the plain entries'
 * (shard_NAME), its sharded scans with their totals and fix-up kernels. */
static void shard_kernels(IrModule *m, IrEntry *e) {
    for (int j = 0; j < e->nkernels; j++) {
        IrKernel *k = &e->kernels[j];
        k->name = ir_fmt(m->arena, "shard_%s", k->name);
        if (k->kind == IR_K_SCAN && k->stmt->sharded) { add_scan(m, e, k); }
    }
}

/* Gather vals[0..arity) (host variables) of every rank and fold them into
 * acc (declared here, from the neutral element) in rank order: all ranks,
 * or with `before` only those before this one. */
static void gather_fold(CuEmit *c, IrOperator *op, const char *const *vals, const char *const *acc, bool before) {
    BeBuf *b = c->b;
    int bytes = 0;
    for (int k = 0; k < op->arity; k++) { bytes += ir_scalar_size(op->op->ptypes[k]); }
    be_expr_reset(&c->x);  /* a neutral element computed before may be in a closed block (an empty shard's else) */
    for (int k = 0; k < op->arity; k++) { be_line(b, "%s %s = %s;", ct(op->op->ptypes[k]), acc[k], be_expr(&c->x, op->ne[k])); }
    be_line(b, "{");
    b->indent++;
    be_line(b, "unsigned char g_sb[%d];", bytes);
    int at = 0;
    for (int k = 0; k < op->arity; k++) {
        be_line(b, "memcpy(g_sb + %d, &%s, %d);", at, vals[k], ir_scalar_size(op->op->ptypes[k]));
        at += ir_scalar_size(op->op->ptypes[k]);
    }
    be_line(b, "unsigned char *g_ab = (unsigned char *)malloc((size_t)comm->size * %d);", bytes);
    be_line(b, "int g_grc = g_ab ? gpuc_shard_gather(gpuc_h, comm, g_sb, g_ab, %d) : 2;", bytes);
    be_line(b, "if (g_grc != 0) {");
    be_line(b, "    free(g_ab);");
    be_line(b, "    GPUC_TRY(g_grc);");
    be_line(b, "}");
    be_line(b, "for (int g_r = 0; g_r < %s; g_r++) {", before ? "comm->rank" : "comm->size");
    b->indent++;
    const char **args = calloc((size_t)op->arity * 2 + 1, sizeof *args);
    at = 0;
    for (int k = 0; k < op->arity; k++) {
        args[k] = acc[k];
        args[op->arity + k] = be_strf(&c->x, "g_rp%d", k);
        be_line(b, "%s %s;", ct(op->op->ptypes[k]), args[op->arity + k]);
        be_line(b, "memcpy(&%s, g_ab + (size_t)g_r * %d + %d, %d);", args[op->arity + k], bytes, at, ir_scalar_size(op->op->ptypes[k]));
        at += ir_scalar_size(op->op->ptypes[k]);
    }
    be_expr_reset(&c->x);
    const char **res = calloc((size_t)op->op->nres + 1, sizeof *res);
    be_lambda(&c->x, op->op, args, res);
    for (int k = 0; k < op->arity; k++) { be_line(b, "%s = %s;", acc[k], res[k]); }
    free(res);
    free(args);
    b->indent--;
    be_line(b, "}");
    be_line(b, "free(g_ab);");
    b->indent--;
    be_line(b, "}");
    be_expr_reset(&c->x);
}

/* Before a sharded scan's launch: this shard's totals, then this rank's prefix. */
void cuda_shard_before(CuEmit *c, IrKernel *k) {
    ShardScan *ss = c->shard ? scan_of(k) : NULL;
    if (!ss) { return; }
    cuda_host_stmt(c, &ss->tot);
    IrStmt *s = k->stmt;
    be_line(c->b, "/* the earlier ranks' totals folded in rank order: this rank's prefix */");
    int o = 0;
    for (int i = 0; i < s->nscans; i++) {
        IrOperator *op = &s->scans[i];
        const char **vals = calloc((size_t)op->arity + 1, sizeof *vals);
        const char **acc = calloc((size_t)op->arity + 1, sizeof *acc);
        for (int j = 0; j < op->arity; j++) {
            vals[j] = be_strf(&c->x, "%s", be_vname(ss->tot_stmt.outs[o + j]));
            acc[j] = be_strf(&c->x, "g_pre%d_%d_%d", ss->id, i, j);
        }
        gather_fold(c, op, vals, acc, true);
        free(vals);
        free(acc);
        o += op->arity;
    }
}

/* After a sharded scan's launch: the fix-up kernel (with a post: into the
 * post's outputs, allocated here; the temporaries freed after it). */
static void fix_scans(CuEmit *c, ShardScan *ss) {
    BeBuf *b = c->b;
    IrStmt *s = ss->scan->stmt, *p = ss->with_post;
    for (int r = 0; p && r < p->post->nres; r++) {
        IrValue *v = p->outs[r];
        be_line(b, "%s *%s = NULL;", ct(v->elem), be_vname(v));
        be_line(b, "GPUC_TRY(gpuc_h_alloc(gpuc_h, (void **)&%s, (size_t)(%s) * sizeof(%s)));", be_vname(v), be_vname(v->dims[0]),
                ct(v->elem));
    }
    be_line(b, "{");
    b->indent++;
    be_line(b, "int64_t g_fn = %s;", be_vname(s->w[0]));
    be_line(b, "const int64_t g_fblocks = (g_fn + 255) / 256;");
    be_line(b, "const unsigned g_fgrid = (unsigned)(g_fblocks < (int64_t)gpuc_h_sms(gpuc_h) * 32 ? g_fblocks : (int64_t)gpuc_h_sms(gpuc_h) * 32);");
    be_printf(b, "%*sif (g_fn > 0) {\n%*s    void *g_args[] = { (void *)&g_fn", b->indent * 4, "", b->indent * 4, "");
    int o = 0;
    for (int i = 0; i < s->nscans; i++) {
        for (int j = 0; j < s->scans[i].arity; j++) {
            be_printf(b, ", (void *)&g_pre%d_%d_%d, (void *)&%s", ss->id, i, j, be_vname(s->outs[o]));
            o++;
        }
    }
    for (int r = 0; p && r < p->post->nres; r++) { be_printf(b, ", (void *)&%s", be_vname(p->outs[r])); }
    for (int i = 0; i < ss->nfree; i++) { be_printf(b, ", (void *)&%s", be_vname(ss->free[i])); }
    if (ss->index) { be_printf(b, ", (void *)&%s", shard_offset_name(c->e, s)); }
    be_printf(b, " };\n");
    be_line(b, "    GPUC_TRY(gpuc_h_launch(gpuc_h, GPUC_KERNEL(%s), g_fgrid, 1, 256, 0, g_args));", ss->fix);
    be_line(b, "}");
    for (int j = 0; p && j < o; j++) { be_line(b, "gpuc_h_free(gpuc_h, %s);", be_vname(s->outs[j])); }
    b->indent--;
    be_line(b, "}");
}

/* The reductions of a sharded statement: outs from first_out hold this
 * rank's partials on the host; gather all ranks' and fold in rank order
 * (every operator alike, built-in sums too: the same bits on every rank). */
static void combine_reductions(CuEmit *c, IrStmt *s, int first_out) {
    BeBuf *b = c->b;
    int o = first_out;
    for (int i = 0; i < s->nreds; i++) {
        IrOperator *op = &s->reds[i];
        const char **vals = calloc((size_t)op->arity + 1, sizeof *vals);
        const char **acc = calloc((size_t)op->arity + 1, sizeof *acc);
        for (int k = 0; k < op->arity; k++) {
            vals[k] = be_strf(&c->x, "%s", be_vname(s->outs[o + k]));
            acc[k] = be_strf(&c->x, "g_ra%d_%d", i, k);
        }
        be_line(b, "{");
        b->indent++;
        be_line(b, "/* every rank's partial, combined in rank order */");
        gather_fold(c, op, vals, acc, false);
        for (int k = 0; k < op->arity; k++) { be_line(b, "%s = %s;", vals[k], acc[k]); }
        b->indent--;
        be_line(b, "}");
        free(vals);
        free(acc);
        o += op->arity;
    }
}

/* A column reduction over sharded rows: its outs hold this rank's partial
 * per column (device arrays); gather every rank's, fold each column in rank
 * order on the host, and copy the results back. */
static void combine_columns(CuEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    const char *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));  /* be_vname's string is short-lived */
    int o = 0;
    for (int i = 0; i < s->nreds; i++) {
        IrOperator *op = &s->reds[i];
        be_line(b, "if (%s > 0) {", cols);
        b->indent++;
        be_line(b, "/* every rank's partials of each column, folded in rank order */");
        be_line(b, "int g_crc = 0;");
        for (int k = 0; k < op->arity; k++) {
            const char *t = ct(op->op->ptypes[k]);
            be_line(b, "%s *g_ca%d = (%s *)malloc((size_t)comm->size * (size_t)%s * sizeof(%s));", t, k, t, cols, t);
            be_line(b, "if (g_crc == 0) { g_crc = g_ca%d ? gpuc_shard_gather_dev(gpuc_h, comm, %s, g_ca%d, (size_t)%s * sizeof(%s)) : 2; }",
                    k, be_vname(s->outs[o + k]), k, cols, t);
        }
        be_line(b, "for (int64_t g_j = 0; g_crc == 0 && g_j < %s; g_j++) {", cols);
        b->indent++;
        const char **args = calloc((size_t)op->arity * 2 + 1, sizeof *args);
        be_expr_reset(&c->x);  /* the neutral elements, computed in this block */
        for (int k = 0; k < op->arity; k++) {
            args[k] = be_strf(&c->x, "g_cacc%d", k);
            be_line(b, "%s %s = %s;", ct(op->op->ptypes[k]), args[k], be_expr(&c->x, op->ne[k]));
        }
        be_line(b, "for (int g_r = 0; g_r < comm->size; g_r++) {");
        b->indent++;
        for (int k = 0; k < op->arity; k++) {
            args[op->arity + k] = be_strf(&c->x, "g_cp%d", k);
            be_line(b, "const %s %s = g_ca%d[(size_t)g_r * (size_t)%s + (size_t)g_j];", ct(op->op->ptypes[k]), args[op->arity + k], k, cols);
        }
        be_expr_reset(&c->x);
        const char **res = calloc((size_t)op->op->nres + 1, sizeof *res);
        be_lambda(&c->x, op->op, args, res);
        for (int k = 0; k < op->arity; k++) { be_line(b, "%s = %s;", args[k], res[k]); }
        free(res);
        b->indent--;
        be_line(b, "}");
        /* rank 0's row of the buffer is read for column g_j only before this write */
        for (int k = 0; k < op->arity; k++) { be_line(b, "g_ca%d[g_j] = %s;", k, args[k]); }
        free(args);
        b->indent--;
        be_line(b, "}");
        for (int k = 0; k < op->arity; k++) {
            be_line(b, "if (g_crc == 0) { g_crc = gpuc_h_h2d(gpuc_h, %s, g_ca%d, (size_t)%s * sizeof(%s)); }", be_vname(s->outs[o + k]), k,
                    cols, ct(op->op->ptypes[k]));
        }
        be_line(b, "if (g_crc == 0) { g_crc = GPUC_H_COMM_SYNC(gpuc_h); }  /* the copies read the host buffers */");
        for (int k = 0; k < op->arity; k++) { be_line(b, "free(g_ca%d);", k); }
        be_line(b, "GPUC_TRY(g_crc);");
        b->indent--;
        be_line(b, "}");
        be_expr_reset(&c->x);
        o += op->arity;
    }
}

/* After a sharded statement's launch (and its scalars' copy to the host). */
void cuda_shard_combine(CuEmit *c, IrKernel *k) {
    IrStmt *s = k->stmt;
    if (!c->shard || !s || !s->sharded || is_total(k)) { return; }
    ShardScan *ss = scan_of(k);
    if (ss) { fix_scans(c, ss); }
    if (k->kind == IR_K_SEGRED_COL) { combine_columns(c, s); }
    if ((k->kind == IR_K_REDUCE || ss) && s->nreds) {
        combine_reductions(c, s, s->nouts - ir_stmt_nmapped(s) - ir_stmt_red_width(s));
    }
    if (k->kind == IR_K_FILTER) {
        /* the kernel counted this rank's elements into the count's global name */
        IrValue *cnt = s->outs[s->nouts - 1];
        IrShardSize *z = shard_of(c->e, cnt);
        if (!z || z->global != cnt) { IR_UNREACHABLE("a sharded filter without its sharded count"); }
        be_line(c->b, "const int64_t %s = %s;", be_vname(z->local), be_vname(cnt));
        be_line(c->b, "int64_t %s;", be_vname(z->offset));
        be_line(c->b, "GPUC_TRY(gpuc_shard_size(gpuc_h, comm, %s, &%s, &%s));", be_vname(z->local), be_vname(cnt),
                be_vname(z->offset));
        be_line(c->b, "(void)%s;", be_vname(z->offset));
    }
}

/* The host helpers of the sharded launchers (nvcc: GpucHost * is the stream). */
static void shard_host_prelude(BeBuf *b) {
    be_printf(b,
        "#ifndef GPUC_CUDA_SHARD_PRELUDE_\n"
        "#define GPUC_CUDA_SHARD_PRELUDE_\n"
        "#ifndef GPUC_H_COMM_STREAM\n"
        "#define GPUC_H_COMM_STREAM(h) ((void *)(h))  /* the stream collectives run on */\n"
        "#define GPUC_H_COMM_SYNC(h) ((int)cudaStreamSynchronize(h))\n"
        "#endif\n"
        "/* recv[r * bytes ..) = rank r's send, host buffers, through one device buffer */\n"
        "static GPUC_SHARD_UNUSED int gpuc_shard_gather(GpucHost *h, const GpucComm *comm, const void *send, void *recv, size_t bytes) {\n"
        "    void *d = NULL;\n"
        "    int rc = gpuc_h_alloc(h, &d, bytes * (size_t)(comm->size + 1));\n"
        "    if (rc == 0) { rc = gpuc_h_h2d(h, d, send, bytes); }\n"
        "    if (rc == 0) { rc = comm->all_gather(comm, d, (char *)d + bytes, bytes, GPUC_H_COMM_STREAM(h)); }\n"
        "    if (rc == 0) { rc = gpuc_h_d2h(h, recv, (char *)d + bytes, bytes * (size_t)comm->size); }\n"
        "    if (d) { gpuc_h_free(h, d); }\n"
        "    return rc;\n"
        "}\n"
        "/* recv[r * bytes ..) = rank r's send: a device buffer gathered into host memory */\n"
        "static GPUC_SHARD_UNUSED int gpuc_shard_gather_dev(GpucHost *h, const GpucComm *comm, const void *send, void *recv, size_t bytes) {\n"
        "    void *d = NULL;\n"
        "    int rc = gpuc_h_alloc(h, &d, bytes * (size_t)comm->size);\n"
        "    if (rc == 0) { rc = comm->all_gather(comm, send, d, bytes, GPUC_H_COMM_STREAM(h)); }\n"
        "    if (rc == 0) { rc = gpuc_h_d2h(h, recv, d, bytes * (size_t)comm->size); }\n"
        "    if (d) { gpuc_h_free(h, d); }\n"
        "    return rc;\n"
        "}\n"
        "/* global = the sum of the ranks' local sizes, offset = the sum over earlier ranks */\n"
        "static GPUC_SHARD_UNUSED int gpuc_shard_size(GpucHost *h, const GpucComm *comm, int64_t local, int64_t *global, int64_t *offset) {\n"
        "    int64_t *all = (int64_t *)malloc((size_t)comm->size * sizeof(int64_t));\n"
        "    int rc = all ? gpuc_shard_gather(h, comm, &local, all, sizeof local) : 2;\n"
        "    *global = 0;\n"
        "    *offset = 0;\n"
        "    for (int r = 0; rc == 0 && r < comm->size; r++) {\n"
        "        if (r < comm->rank) { *offset += all[r]; }\n"
        "        *global += all[r];\n"
        "    }\n"
        "    free(all);\n"
        "    return rc;\n"
        "}\n"
        "#endif /* GPUC_CUDA_SHARD_PRELUDE_ */\n");
}

#define HOST_GUARD "#if (defined(GPUC_CUDA_HOST) || (defined(__CUDACC__) && !defined(__CUDACC_RTC__))) && !defined(GPUC_NO_HOST)\n"

int be_emit_cuda_shard_plain(FILE *out, IrModule *m) {
    BeBuf b = { 0 };
    CuEmit c;
    cuda_emit_init(&c, &b, m);
    be_printf(&b, "\n/* ---- the plain entries on host arrays (gpuc --emit=cuda-shard; GPUC_MAIN has them too) ---- */\n");
    be_printf(&b, HOST_GUARD "#ifndef GPUC_MAIN\n");
    for (int i = 0; i < m->nentries; i++) { host_array_entry(&c, m->entries[i]); }
    be_printf(&b, "#endif\n#endif\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_expr_free(&c.x);
    return 0;
}

int be_emit_cuda_shard(FILE *out, IrModule *m) {
    BeBuf b = { 0 };
    CuEmit c;
    cuda_emit_init(&c, &b, m);
    c.shard = true;
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        const char *why = e->sharded ? be_cuda_shard_unsupported(e) : NULL;
        if (why) {
            be_printf(&b, "/* entry %s: not sharded on the GPU yet (%s) */\n", e->name, why);
            e->sharded = false;
        }
    }
    be_printf(&b, "\n/* ---- sharded entries (gpuc --emit=cuda-shard, docs/sharding.md) ---- */\n");
    be_printf(&b, "#if !defined(__CUDACC_RTC__)\n");
    be_shard_prelude(&b, true, true);
    be_printf(&b, "#endif\n");
    for (int i = 0; i < m->nentries; i++) {
        if (!m->entries[i]->sharded) { continue; }
        shard_kernels(m, m->entries[i]);
        cuda_entry_kernels(&c, m->entries[i]);
    }
    be_printf(&b, HOST_GUARD);
    shard_host_prelude(&b);
    for (int i = 0; i < m->nentries; i++) {
        if (m->entries[i]->sharded) { cuda_host_shard_entry(&c, m->entries[i]); }
    }
    for (int i = 0; i < m->nentries; i++) {
        if (m->entries[i]->sharded) { host_array_entry(&c, m->entries[i]); }
    }
    be_shard_table(&b, m);
    be_printf(&b, "#endif /* host */\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_expr_free(&c.x);
    free(scans);
    scans = NULL;
    nscans = 0;
    return 0;
}

/* The sharded launchers alone, over the gpuc runtime's host interface
 * (--emit=program, for `prog --ranks N` on GPUs: runner/rn_ranks.c). The
 * kernels come as images compiled from GPUC_EMIT_CUDA_KERNELS text, where
 * be_emit_cuda_shard names them the same way. The caller defines
 * GPUC_H_COMM_STREAM and GPUC_H_COMM_SYNC for its GpucHost first.
 * gpu[i]: entry i got gpuc_dev_shard_NAME. */
void be_cuda_shard_launchers(BeBuf *b, IrModule *m, bool *gpu) {
    CuEmit c;
    cuda_emit_init(&c, b, m);
    c.shard = true;
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        gpu[i] = e->sharded && !be_cuda_shard_unsupported(e);
        if (gpu[i]) { shard_kernels(m, e); }
    }
    shard_host_prelude(b);
    for (int i = 0; i < m->nentries; i++) {
        if (gpu[i]) { cuda_host_shard_entry(&c, m->entries[i]); }
    }
    be_expr_free(&c.x);
    free(scans);
    scans = NULL;
    nscans = 0;
}
