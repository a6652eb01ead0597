/* reduce.c: the reduce kernel: per-thread sequential reduction (stride.c),
 * warp shuffles, one value per warp through shared memory (combine.c),
 * per-block partials, and the last block to finish (atomic counter)
 * combines the partials in a fixed order: deterministic for a given grid.
 *
 * Welford reductions (fuse_dependent_reduce: (count, mean, M2) triples,
 * Chan's combine) whose elements arrive as (1, x, 0) are folded per thread
 * as shifted sums instead (fold_reduction): K = the thread's first element,
 * S = sum(x - K), Q = sum((x - K)^2) in f64, no division per element (f32
 * data: in f32 over each loop iteration, added to the f64 sums at its end:
 * fold_block_begin/end); each thread turns them into (count, K + S/count,
 * Q - S^2/count) once, before the Chan combine across threads
 * (welford_finish). */
#include "cuda_emit.h"

#include <string.h>

static bool is_const(const IrExpr *e, double v) {
    if (e->kind != IR_E_CONST) { return false; }
    return ir_scalar_is_float(e->ty) ? e->c.f == v : e->c.i == (int64_t)v;
}

/* Is reduction r of s a Welford triple fed (1, x, 0) per element? */
static bool welford_shifted(const IrStmt *s, int r) {
    const IrOperator *op = &s->reds[r];
    if (!op->name || strcmp(op->name, "welford") != 0 || op->arity != 3 || !op->commutative) { return false; }
    int pos = ir_stmt_scan_width(s);
    for (int i = 0; i < r; i++) { pos += s->reds[i].arity; }
    return is_const(s->map->res[pos], 1.0) && is_const(s->map->res[pos + 2], 0.0);
}

/* Set between fold_block_begin and fold_block_end: f32 Welford elements
 * go to the block's f32 sums (r<r>_bs, _bq) rather than the f64 ones. */
static bool in_block;

static bool welford_f32(const IrStmt *s, int r) {
    return welford_shifted(s, r) && s->reds[r].op->ptypes[1] == IR_F32;
}

/* Fold one element's map results x[0..arity-1] into reduction r's
 * accumulators (stride.c, element.c: reduce kernels only). */
void fold_reduction(CuEmit *c, IrStmt *s, int r, char **acc, const char *const *x) {
    if (!welford_shifted(s, r)) {
        apply_op(c, &s->reds[r], acc, (const char *const *)acc, x, false);
        return;
    }
    /* acc[0] counts; K (the element type), S, Q in f64 (r<r>_k, _s, _q
     * from emit_reduce), or S, Q of this block in f32 (fold_block_begin) */
    be_line(c->b, "{");
    c->b->indent++;
    be_line(c->b, "r%d_k = %s == 0 ? %s : r%d_k;  /* the shift: the thread's first element */", r, acc[0], x[1], r);
    if (in_block && welford_f32(s, r)) {
        be_line(c->b, "const float g_d = %s - r%d_k;", x[1], r);
        be_line(c->b, "r%d_bs += g_d;", r);
        be_line(c->b, "r%d_bq = fmaf(g_d, g_d, r%d_bq);", r, r);
    } else {
        be_line(c->b, "const double g_d = (double)(%s) - (double)r%d_k;", x[1], r);
        be_line(c->b, "r%d_s += g_d;", r);
        be_line(c->b, "r%d_q = fma(g_d, g_d, r%d_q);", r, r);
    }
    be_line(c->b, "%s = %s + 1;", acc[0], acc[0]);
    c->b->indent--;
    be_line(c->b, "}");
}

/* Around one iteration of the per-thread loop (stride.c: at most `items`
 * elements a thread): f32 data's shifted sums are taken in f32 over the
 * iteration and added to the thread's f64 sums at its end, so each element
 * costs f32 operations only (an f64 conversion and add per element ran at
 * about the memory rate on the H100's f64 pipes).  Over a bounded count of
 * deviations from the thread's first element the f32 sums lose at most
 * items x 2^-24 of their magnitude; the f64 sums carry the rest. */
void fold_block_begin(CuEmit *c, IrStmt *s) {
    for (int r = 0; r < s->nreds; r++) {
        if (welford_f32(s, r)) { be_line(c->b, "float r%d_bs = 0.0f, r%d_bq = 0.0f;  /* this iteration's shifted sums (fold_block_begin) */", r, r); }
    }
    in_block = true;
}

void fold_block_end(CuEmit *c, IrStmt *s) {
    in_block = false;
    for (int r = 0; r < s->nreds; r++) {
        if (!welford_f32(s, r)) { continue; }
        be_line(c->b, "r%d_s += (double)r%d_bs;", r, r);
        be_line(c->b, "r%d_q += (double)r%d_bq;", r, r);
    }
}

/* After the per-thread loop: shifted sums -> (count, mean, M2). */
static void welford_finish(CuEmit *c, IrStmt *s, char ***racc) {
    for (int r = 0; r < s->nreds; r++) {
        if (!welford_shifted(s, r)) { continue; }
        const char *t = ct(s->reds[r].op->ptypes[1]);
        be_line(c->b, "if (%s > 0) {  /* the thread's shifted sums to (count, mean, M2) */", racc[r][0]);
        be_line(c->b, "    %s = (%s)((double)r%d_k + r%d_s / (double)%s);", racc[r][1], t, r, r, racc[r][0]);
        be_line(c->b, "    %s = (%s)fmax(r%d_q - r%d_s * r%d_s / (double)%s, 0.0);", racc[r][2], t, r, r, r, racc[r][0]);
        be_line(c->b, "}");
    }
}

/* ---- the epilogue ----
 * The host statements right after a reduction that read only its results
 * and its sizes (mean/variance's divisions, logsumexp's m + log(s)) also
 * run in the kernel, by the thread that stores the results: the _into
 * launcher then neither copies the reduction's results back nor waits for
 * them (a wait and a pageable copy of 4 bytes each cost several us on the
 * H100: mean/variance made four and two copies back). The kernel computes
 * them in every launcher (its parameters are the same); only the _into
 * launcher skips the host's copies and statements (launch.c). */
typedef struct {
    IrValue *ok[EPILOGUE_MAX];  /* values the statements may read: the reduction's results and sizes, earlier statements' results */
    int nok;
    bool bad;                   /* a statement read something else */
} EpilogueReads;

static void epilogue_visit(IrValue *v, void *ctx) {
    EpilogueReads *x = ctx;
    for (int i = 0; i < x->nok; i++) {
        if (x->ok[i] == v) { return; }
    }
    x->bad = true;
}

typedef struct { const IrValue *v; int n; } UseCount;
static void use_visit(IrValue *v, void *ctx) {
    UseCount *u = ctx;
    if (v == u->v) { u->n++; }
}

int reduce_epilogue(CuEmit *c, const IrKernel *k) {
    IrEntry *e = c->e;
    IrStmt *s = k->stmt;
    int ki = (int)(k - e->kernels);
    if (c->shard || k->kind != IR_K_REDUCE || ki < 0 || ki >= e->nkernels || ir_stmt_nmapped(s) || ir_stmt_scan_width(s)) { return 0; }
    EpilogueReads x = { .nok = 0, .bad = false };
    for (int i = 0; i < s->rank; i++) { x.ok[x.nok++] = s->w[i]; }
    int first_made = x.nok;
    for (int o = 0; o < s->nouts; o++) {
        if (s->outs[o]->rank || x.nok == EPILOGUE_MAX) { return 0; }
        x.ok[x.nok++] = s->outs[o];
    }
    int n = 0;
    while (ki + 1 + n < e->nkernels) {
        const IrKernel *h = &e->kernels[ki + 1 + n];
        /* a size check stays on the host, where its error is reported */
        if (h->kind != IR_K_HOST || h->stmt->kind != IR_S_SCALAR || ir_size_check_stmt(h->stmt) ||
            x.nok + h->stmt->nouts > EPILOGUE_MAX) { break; }
        ir_stmt_visit_reads(h->stmt, epilogue_visit, &x);
        if (x.bad) { break; }
        for (int o = 0; o < h->stmt->nouts; o++) { x.ok[x.nok++] = h->stmt->outs[o]; }
        n++;
    }
    if (!n) { return 0; }
    /* every value made here is read only by these statements or returned */
    ir_count_uses(e);
    for (int i = first_made; i < x.nok; i++) {
        UseCount u = { x.ok[i], 0 };
        for (int j = 1; j <= n; j++) { ir_stmt_visit_reads(e->kernels[ki + j].stmt, use_visit, &u); }
        for (int r = 0; r < e->nresults; r++) { u.n += e->results[r] == x.ok[i]; }
        if (x.ok[i]->nuses != u.n) { return 0; }
    }
    return n;
}

/* The epilogue's results that the entry returns, each once: the kernel
 * stores them through a parameter `T *vN_res` (in this order). */
int reduce_epilogue_results(CuEmit *c, const IrKernel *k, IrValue **out) {
    int n = reduce_epilogue(c, k), m = 0;
    IrEntry *e = c->e;
    for (int j = 1; j <= n; j++) {
        IrStmt *h = k[j].stmt;
        for (int o = 0; o < h->nouts; o++) {
            bool returned = false;
            for (int r = 0; r < e->nresults; r++) { returned = returned || e->results[r] == h->outs[o]; }
            if (returned && m < EPILOGUE_MAX) { out[m++] = h->outs[o]; }
        }
    }
    return m;
}

/* In the thread that stores the results: the epilogue's statements on its
 * accumulators, and the returned values stored. */
static void epilogue(CuEmit *c, IrKernel *k, char ***racc) {
    int n = reduce_epilogue(c, k);
    if (!n) { return; }
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    be_line(b, "{   /* the entry's arithmetic on these results (reduce_epilogue) */");
    b->indent++;
    int o = s->nouts - ir_stmt_red_width(s);
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++, o++) {
            UseCount u = { s->outs[o], 0 };
            for (int q = 1; q <= n; q++) { ir_stmt_visit_reads(k[q].stmt, use_visit, &u); }
            if (u.n) { be_line(b, "const %s %s = %s;", ct(s->outs[o]->elem), be_vname(s->outs[o]), racc[r][j]); }
        }
    }
    for (int j = 1; j <= n; j++) {
        IrStmt *h = k[j].stmt;
        const char **res = calloc((size_t)h->map->nres + 1, sizeof *res);
        be_lambda(&c->x, h->map, NULL, res);
        for (int q = 0; q < h->nouts; q++) { be_line(b, "const %s %s = %s;", ct(h->outs[q]->elem), be_vname(h->outs[q]), res[q]); }
        free(res);
    }
    IrValue *ret[EPILOGUE_MAX];
    int m = reduce_epilogue_results(c, k, ret);
    for (int i = 0; i < m; i++) { be_line(b, "*%s_res = %s;", be_vname(ret[i]), be_vname(ret[i])); }
    b->indent--;
    be_line(b, "}");
}

/* Thread 0 stores the reduction's results (its accumulators). */
static void reduce_results(CuEmit *c, IrStmt *s, char ***racc) {
    int o = s->nouts - ir_stmt_nmapped(s) - ir_stmt_red_width(s);
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(c->b, "    *%s_out = %s;", be_vname(s->outs[o++]), racc[r][j]); }
    }
}

void emit_reduce(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) {
            char d[128], a[64];
            snprintf(d, sizeof d, "%s *__restrict__ g_part%d_%d", ct(s->reds[r].op->ptypes[j]), r, j);
            snprintf(a, sizeof a, "g_part%d_%d", r, j);
            kp_add(c, &p, d, a);
        }
    }
    kp_add(c, &p, "unsigned int *__restrict__ g_done", "g_done");
    IrValue *ret[EPILOGUE_MAX];
    int nret = reduce_epilogue_results(c, k, ret);
    for (int i = 0; i < nret; i++) {
        kp_add(c, &p, be_strf(&c->x, "%s *__restrict__ %s_res", ct(ret[i]->elem), be_vname(ret[i])), be_strf(&c->x, "%s_res", be_vname(ret[i])));
    }
    kernel_comment(c, k);
    signature(c, k, &p);
    char ***racc = acc_names(c, s);
    for (int r = 0; r < s->nreds; r++) {
        declare_ne(c, &s->reds[r], racc[r]);
        if (welford_shifted(s, r)) {
            be_line(b, "%s r%d_k = 0;  /* the shift (fold_reduction) */", ct(s->reds[r].op->ptypes[1]), r);
            be_line(b, "double r%d_s = 0.0, r%d_q = 0.0;  /* shifted sums */", r, r);
        }
    }
    stride_loops(c, k, racc);
    welford_finish(c, s, racc);
    block_reduce(c, s, racc, k->block);
    be_line(b, "if (gridDim.x == 1) {  /* one block: its total is the result (no partials, no counter) */");
    b->indent++;
    be_line(b, "if (threadIdx.x == 0) {");
    reduce_results(c, s, racc);
    b->indent++;
    epilogue(c, k, racc);
    b->indent--;
    be_line(b, "}");
    be_line(b, "return;");
    b->indent--;
    be_line(b, "}");
    be_line(b, "/* publish this block's partial; the last block to finish combines them */");
    be_line(b, "__shared__ bool g_last;");
    be_line(b, "if (threadIdx.x == 0) {");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "g_part%d_%d[blockIdx.x] = %s;", r, j, racc[r][j]); }
    }
    be_line(b, "__threadfence();");
    be_line(b, "g_last = atomicAdd(g_done, 1u) == gridDim.x - 1;");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "if (!g_last) {");
    be_line(b, "    return;");
    be_line(b, "}");
    be_line(b, "__threadfence();");
    be_line(b, "/* deterministic combine: each thread a contiguous run of partials, in order */");
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "%s = %s;", racc[r][j], be_expr(&c->x, s->reds[r].ne[j])); }
    }
    be_line(b, "{");
    b->indent++;
    be_line(b, "const unsigned g_per = (gridDim.x + %d) / %d;", k->block - 1, k->block);
    be_line(b, "for (unsigned g_j = threadIdx.x * g_per; g_j < (threadIdx.x + 1) * g_per && g_j < gridDim.x; g_j++) {");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        char **o = names(c, "g_p%d_%d", r, s->reds[r].arity);
        for (int j = 0; j < s->reds[r].arity; j++) {
            be_line(b, "const %s %s = ((volatile %s *)g_part%d_%d)[g_j];", ct(s->reds[r].op->ptypes[j]), o[j], ct(s->reds[r].op->ptypes[j]), r, j);
        }
        apply_op(c, &s->reds[r], racc[r], (const char *const *)racc[r], (const char *const *)o, false);
        free(o);
    }
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    block_reduce(c, s, racc, k->block);
    be_line(b, "if (threadIdx.x == 0) {");
    reduce_results(c, s, racc);
    b->indent++;
    epilogue(c, k, racc);
    b->indent--;
    be_line(b, "    *g_done = 0u;  /* ready for the next launch */");
    be_line(b, "}");
    acc_free(s, racc);
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

