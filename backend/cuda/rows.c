/* rows.c: row reductions (segred, axis 1): a part of a warp, a warp or a
 * block per row picked at run time from the row length, 16-byte vectors
 * from each row's first aligned element; a post (row softmax) keeps the row
 * in registers and a stash in dynamic shared memory and writes it once,
 * with twins for rows its registers hold (NAME_regs), for parts of longer
 * rows in clusters (NAME_cl, NAME_clregs) and for rows one 1024-thread
 * block holds in registers (NAME_big).
 * NAME_st (grep "ROW STREAM"), on sm_90 for long rows (at least 65536
 * 4-byte elements, whole chunks of 8192) instead of the clusters: the
 * matrix streams through each SM as chunks in a ring of bulk copies, the
 * chunks' partial results meet in global memory (per-row counters), and
 * the post takes a chunk a few chunks after it was folded and stores it
 * from registers, so each element is read once and written once with no
 * cluster quantization (H200, rows of 262144, 2026-11-29: row softmax 0.950
 * of the copy rate, LayerNorm 0.920: docs/performance.md, nineteenth
 * round; the clusters reached 0.62-0.80).  Any reduction tuple and post
 * over one 4-byte input: the consumers use the same fold and post code.
 * The rows' all-reduce combines (every lane gets the total) live here. */
#include "cuda_emit.h"

/* Set while emit_segred_row writes the register-only variant (ROW REGS):
 * that kernel has no stash and no loop beyond the registers. */
static bool row_regs_variant;
/* Set while emit_segred_row writes a cluster variant (ROW CLUSTER): a row
 * longer than a block holds is split over a cluster of ROW_CLUSTER blocks
 * (sm_90), each a part of g_part elements from column g_cb, the parts'
 * results combined through distributed shared memory.  row_col is the
 * element's column in the row ("g_col", or "(g_cb + g_col)" in a part). */
static bool row_cluster_variant;
static const char *row_col = "g_col";
/* Set while emit_segred_row writes the big-block variant (ROW BIG,
 * NAME_big): the register-only kernel at row_big_block threads a block and
 * __launch_bounds__(threads, 1), one block per row, for rows the launcher
 * has checked start on 16-byte boundaries and are whole vectors (no scalar
 * head or tail: those loops, with the row live in registers, spilled
 * 116-600 bytes at 64 registers, ptxas sm_90), and the post's reads at the
 * element's column (LayerNorm's weight and bias) taken as vectors, once
 * per element per row. */
static bool row_big_variant;
/* Set while emit_segred_row writes the warp variant (ROW WARP, NAME_warp):
 * the register-only kernel with g_tpr a constant 32 (a warp a row, its
 * shuffles unrolled and no block-wide exchange), ROW_WARP_ITEMS vectors a
 * lane, and, as in the big block, rows the launcher has checked start on
 * 16-byte boundaries and are whole vectors (no head or tail loop). */
static bool row_warp_variant;
/* Set while emit_row_kernel writes a kernel that, with its
 * GPUC_ROW_PERSIST_<kernel> at 2 (ROW PERSIST), loads the next row's part while it writes this one: the
 * cluster variant with a stash (NAME_cl) and the big block, which a persistent grid of the
 * resident blocks (the launcher, GPUC_ROW_PERSIST_<kernel> >= 1) keeps looping over
 * rows.  row_src: the pointers row_loads reads global vectors through
 * ("g_pv", or "g_npv" for the next row). */
static bool row_prefetch;
static const char *row_src = "g_pv";
/* The kernel's GPUC_ROW_PERSIST_<kernel> (row_persist_macro), while row_prefetch. */
static const char *row_persist = "GPUC_ROW_PERSIST";
/* The shared-array number of the row kernel being written (g_bar<id>). */
static int row_kernel_id;
/* Set while emit_row_kernel writes a kernel whose block holds the whole row
 * in registers (NAME_regs, NAME_big) and whose post reads the row's element
 * only inside exp(v - max), v the map's value (softmax; ROW EXP REUSE): the
 * post's node of that exponential, else NULL. */
static const IrExpr *row_exp_node;
/* Set while emit_row_stream writes a post with ROW STREAM EXP REUSE: the
 * registers g_a<u> hold exp(x - the warp's maximum), which the post scales
 * by g_sc (exp(the warp's maximum - the row's)). */
static bool row_exp_stream;

/* ---- row reductions: a part of a warp, a warp or a block per row ---- */

/* The row's lanes of the warp (g_wl: g_tpr up to 32, aligned groups)
 * combine their accumulators (butterfly): every lane ends with their total,
 * lanes combined in index order, so operators that are not commutative work
 * (the lower lanes' value comes first).  Every lane of the warp takes part
 * (full-mask shuffles): the row loop is warp-uniform. */
static void warp_allreduce(CuEmit *c, IrStmt *s, char ***racc) {
    BeBuf *b = c->b;
    be_line(b, "for (int g_off = 1; g_off < g_wl; g_off <<= 1) {");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        IrOperator *op = &s->reds[r];
        char **o = names(c, "g_o%d_%d", r, op->arity);
        for (int j = 0; j < op->arity; j++) {
            be_line(b, "const %s %s = gpuc_shfl_xor(%s, g_off);", ct(op->op->ptypes[j]), o[j], racc[r][j]);
        }
        if (op->commutative) {
            apply_op(c, op, racc[r], (const char *const *)racc[r], (const char *const *)o, false);
        } else {
            char **lo = names(c, "g_lo%d_%d", r, op->arity), **hi = names(c, "g_hi%d_%d", r, op->arity);
            for (int j = 0; j < op->arity; j++) {
                const char *t = ct(op->op->ptypes[j]);
                be_line(b, "const %s %s = (threadIdx.x & g_off) ? %s : %s;", t, lo[j], o[j], racc[r][j]);
                be_line(b, "const %s %s = (threadIdx.x & g_off) ? %s : %s;", t, hi[j], racc[r][j], o[j]);
            }
            apply_op(c, op, racc[r], (const char *const *)lo, (const char *const *)hi, false);
            free(lo);
            free(hi);
        }
        free(o);
    }
    b->indent--;
    be_line(b, "}");
}

/* One element of the row (map body, reductions folded in) or of the post
 * (args: the elements of the inputs; results stored by `store`, a format
 * with %s for the output and %d for the result's number). */
static void row_fold(CuEmit *c, IrStmt *s, const char **args, char ***racc) {
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, args, res);
    int pos = 0;
    for (int r = 0; r < s->nreds; r++) {
        apply_op(c, &s->reds[r], racc[r], (const char *const *)racc[r], res + pos, false);
        pos += s->reds[r].arity;
    }
    free(res);
}

/* The post at one element: inputs `args`, then the row's results; returns
 * the result expressions. */
static const char **row_post(CuEmit *c, IrStmt *s, const char **args, char ***racc) {
    int nred = ir_stmt_red_width(s);
    const char **pa = calloc((size_t)(s->nins + nred) + 1, sizeof *pa);
    for (int i = 0; i < s->nins; i++) { pa[i] = args[i]; }
    int at = s->nins;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { pa[at++] = racc[r][j]; }
    }
    const char **res = calloc((size_t)s->post->nres + 1, sizeof *res);
    be_lambda(&c->x, s->post, pa, res);
    free(pa);
    return res;
}

/* Scalar elements g_col of the row from `from` by `step` while `cond`:
 * phase 1 folds them, phase 2 (post) stores the post's results. */
static void row_scalar_loop(CuEmit *c, IrStmt *s, const char *from, const char *cond, const char *step, bool post, char ***racc) {
    BeBuf *b = c->b;
    int nred = ir_stmt_red_width(s);
    be_line(b, "for (int64_t g_col = %s; %s; g_col += %s) {", from, cond, step);
    b->indent++;
    c->x.idx[0] = "g_row";
    c->x.idx[1] = row_col;
    const char **pn = load_params(c, s, "g_rb + g_col");
    if (post) {
        const char **res = row_post(c, s, pn, racc);
        for (int r = 0; r < s->post->nres; r++) { be_line(b, "%s[g_rb + g_col] = %s;", be_vname(s->outs[nred + r]), res[r]); }
        free(res);
    } else {
        row_fold(c, s, pn, racc);
    }
    free(pn);
    b->indent--;
    be_line(b, "}");
}

/* Is e a read of a 1-D array at the element's column whose length is the
 * row's (LayerNorm's weight and bias), of the inputs' element size: in
 * the big-block variant a 16-byte vector of it is read per vector of the
 * row, in bounds wherever the row's vector is. */
static bool row_col_read(const IrStmt *s, const IrExpr *e) {
    return e->kind == IR_E_READ && e->val->rank == 1 && !e->a[1] && e->a[0]->kind == IR_E_IDX && e->a[0]->index == 1 &&
           e->val->dims[0] == s->w[1] && e->val->elem != IR_BOOL && ir_scalar_size(e->val->elem) == ir_scalar_size(s->ins[0]->elem);
}

static void col_reads_in(const IrStmt *s, const IrExpr *e, const IrValue **vals, int *n) {
    if (!e) { return; }
    if (row_col_read(s, e)) {
        for (int i = 0; i < *n; i++) { if (vals[i] == e->val) { return; } }
        if (*n < ROW_BIG_READS) { vals[(*n)++] = e->val; }
        return;
    }
    for (int i = 0; i < 3; i++) { col_reads_in(s, e->a[i], vals, n); }
}

int row_big_reads(const IrKernel *k, const IrValue **vals) {
    int n = 0;
    for (int r = 0; k->stmt->post && r < k->stmt->post->nres; r++) { col_reads_in(k->stmt, k->stmt->post->res[r], vals, &n); }
    return n;
}

/* Bind each column read of e (row_col_read, of arrays `vals`) to lane l of
 * its vector `rd`<array>, loaded by row_uses. */
static void bind_col_reads(CuEmit *c, const IrStmt *s, const IrExpr *e, const IrValue **vals, int n, const char *rd, int l) {
    if (!e) { return; }
    if (row_col_read(s, e)) {
        for (int i = 0; i < n; i++) {
            if (vals[i] == e->val) { be_expr_bind(&c->x, e, be_strf(&c->x, "%s%d.v[%d]", rd, i, l)); }
        }
        return;
    }
    for (int i = 0; i < 3; i++) { bind_col_reads(c, s, e->a[i], vals, n, rd, l); }
}

/* ROW COL VECTORS: the post's reads at the element's column (row_col_read:
 * LayerNorm's weight and bias) for vector v of the row (an expression), as
 * one 16-byte vector `name` (declared by the caller) of array `val`.  The
 * big block's launcher has checked that every row starts on a 16-byte
 * boundary, so it reads the vector directly.  Elsewhere the vector's first column, g_cb + g_head + g_v * V
 * in a cluster's part, may be unaligned (rows whose length is not a
 * multiple of V): one 16-byte load where it is aligned, else V scalar
 * loads (all in bounds: vector g_v is in the row, and the array is as
 * long as the row).  Scalar reads with the bounds check cost, at rows of
 * 262144 (the weight and bias past L1), four L2 requests of 16 sectors a
 * warp for every 16-byte vector of the row; -DGPUC_ROW_COL_VECTORS=0 keeps
 * the scalar loads (a comparison). */
static void row_col_vector(CuEmit *c, IrKernel *k, const IrValue *val, const char *name, const char *v) {
    BeBuf *b = c->b;
    const char *tn = ir_scalar_name(val->elem);
    if (row_big_variant || row_warp_variant) {
        be_line(b, "%s = ((const gpuc_v16_%s *)%s)[%s];", name, tn, be_vname(val), v);
        return;
    }
    be_line(b, "const %s *g_rp = %s + %sg_head + (%s) * %d;", ct(val->elem), be_vname(val), row_cluster_variant ? "g_cb + " : "", v, k->vec);
    be_line(b, "if (GPUC_ROW_COL_VECTORS && ((uintptr_t)g_rp & 15u) == 0) {");
    be_line(b, "    %s = *(const gpuc_v16_%s *)g_rp;", name, tn);
    be_line(b, "} else {");
    for (int l = 0; l < k->vec; l++) { be_line(b, "    %s.v[%d] = g_rp[%d];", name, l, l); }
    be_line(b, "}");
}

/* ROW COL VECTORS: how many of a group of n vectors a lane have their
 * column reads (nreads arrays) loaded at once, ahead of their use, so that
 * their L2 latency is paid once per group rather than once per vector (at
 * rows of 262144 a block's part of LayerNorm's weight and bias, 256 KiB,
 * is past L1): at most ROW_COL_AHEAD vectors of column reads held at once
 * (LayerNorm: 4 vectors x 2 arrays).  One at a time in the big block (64
 * registers), the register-only variant (80) and groups of more than 4
 * (the registers' 8 vectors a lane: loading ahead there spilled 76 bytes
 * in LayerNorm's `_cl`, ptxas sm_90). */
#define ROW_COL_AHEAD 8
static int row_col_ahead(int n, int nreads) {
    if (row_big_variant || row_regs_variant || n > 4) { return 1; }
    int ahead = ROW_COL_AHEAD / nreads;
    return ahead < 1 ? 1 : ahead < n ? ahead : n;
}

/* What row_vector does with an element of the row. */
typedef enum {
    ROW_FOLD,   /* phase 1: fold into the accumulators */
    ROW_POST,   /* phase 2: the post's results, stored as vectors */
    ROW_MAX,    /* online softmax, registers and stash: g_mx = max(g_mx, x) */
    ROW_SUMEXP, /* online softmax, registers and stash: g_sum += w * exp(x - g_mx) */
} RowUse;

/* Vector g_v of the row (if g_v < lim), already in registers
 * `regs`<input> (16-byte vectors of every input from the row's first
 * aligned element g_rb + g_head), element by element: see RowUse.  For
 * ROW_MAX and ROW_SUMEXP the map's results (x, w) are the online softmax
 * pair's (value, weight). */
static void row_vector(CuEmit *c, IrKernel *k, const char *regs, RowUse use, const char *lim, const char *rd, char ***racc) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    int V = k->vec, nred = ir_stmt_red_width(s);
    bool post = use == ROW_POST;
    be_line(b, "if (g_v < %s) {", lim);
    b->indent++;
    const IrValue *reads[ROW_BIG_READS];
    int nreads = post ? row_big_reads(k, reads) : 0;
    if (post) {
        for (int r = 0; r < s->post->nres; r++) { be_line(b, "gpuc_v16_%s g_w%d;", ir_scalar_name(s->outs[nred + r]->elem), r); }
    }
    for (int l = 0; l < V; l++) {
        be_line(b, "{ /* lane %d */", l);
        b->indent++;
        be_line(b, "const int64_t g_col = g_head + g_v * %d + %d;  (void)g_col;", V, l);
        int memo = c->x.nmemo;
        for (int r = 0; nreads > 0 && r < s->post->nres; r++) { bind_col_reads(c, s, s->post->res[r], reads, nreads, rd, l); }
        c->x.idx[0] = "g_row";
        c->x.idx[1] = row_col;
        const char **pn = calloc((size_t)s->nins + 1, sizeof *pn);
        for (int i = 0; i < s->nins; i++) { pn[i] = be_strf(&c->x, "%s%d.v[%d]", regs, i, l); }
        /* ROW EXP REUSE: the registers (g_c) hold exp(x - max) in phase 2 */
        bool reuse = row_exp_node && (strncmp(regs, "g_c", 3) == 0 || row_exp_stream);
        if (post && reuse && row_exp_stream) {
            be_line(b, "const %s g_ex = %s * g_sc;", ct(row_exp_node->ty), pn[0]);
            be_expr_bind(&c->x, row_exp_node, "g_ex");
        } else if (post && reuse) {
            /* the post's own exponential when the register still holds the element */
            const char **args = calloc((size_t)(s->nins + ir_stmt_red_width(s)) + 1, sizeof *args);
            args[0] = pn[0];
            for (int j = 0; j < s->reds[0].arity; j++) { args[s->nins + j] = racc[0][j]; }
            const char *const *saved = c->x.params;
            c->x.params = args;
            const char *own = be_expr(&c->x, row_exp_node);
            c->x.params = saved;
            free(args);
            be_line(b, "const %s g_ex = GPUC_ROW_EXP_REUSE ? %s : %s;", ct(row_exp_node->ty), pn[0], own);
            be_expr_bind(&c->x, row_exp_node, "g_ex");
        }
        if (post) {
            const char **res = row_post(c, s, pn, racc);
            for (int r = 0; r < s->post->nres; r++) { be_line(b, "g_w%d.v[%d] = %s;", r, l, res[r]); }
            free(res);
        } else if (use == ROW_FOLD) {
            row_fold(c, s, pn, racc);
        } else {
            const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
            be_lambda(&c->x, s->map, pn, res);
            bool f32 = s->reds[0].op->ptypes[0] == IR_F32;
            if (use == ROW_MAX) {
                be_line(b, "g_mx = %s(g_mx, %s);", f32 ? "fmaxf" : "fmax", res[0]);
            } else if (reuse && row_exp_stream) {
                /* exp(x - the warp's maximum), back into the ring for the post; where that
                 * maximum is -inf, 1 for x = -inf (the post scales it by exp(-inf - the row's
                 * maximum): 0, or, where the row's is -inf too, NaN, as exp(x - max) is) */
                be_line(b, "const float g_e = expf(g_minf && %s == g_mx ? 0.0f : %s - g_mx);", res[0], res[0]);
                be_line(b, "g_sum += %s == g_mx ? %s : %s * g_e;", res[0], res[1], res[1]);
                be_line(b, "%s = g_e;", pn[0]);
            } else if (reuse) {
                /* the post's exp(x - max), kept in the element's register for phase 2 */
                be_line(b, "const %s g_e = %s(%s - g_mx);", f32 ? "float" : "double", f32 ? "expf" : "exp", res[0]);
                be_line(b, "g_sum += %s == g_mx ? %s : %s * g_e;", res[0], res[1], res[1]);
                be_line(b, "if (GPUC_ROW_EXP_REUSE) {");
                be_line(b, "    %s = g_e;", pn[0]);
                be_line(b, "}");
            } else {
                /* x == max also covers x = max = +-inf, as the operator does */
                be_line(b, "g_sum += %s == g_mx ? %s : %s * %s(%s - g_mx);", res[0], res[1], res[1], f32 ? "expf" : "exp", res[0]);
            }
            free(res);
        }
        free(pn);
        c->x.nmemo = memo;
        b->indent--;
        be_line(b, "}");
    }
    if (post) {
        for (int r = 0; r < s->post->nres; r++) { be_line(b, "g_pw%d[g_v] = g_w%d;", r, r); }
    }
    b->indent--;
    be_line(b, "}");
}

/* The row's vector vb + u * g_tpr: 32-bit in the registers' and the
 * stash's part (vb g_lane or g_sb: below (items + stash) x blockDim.x),
 * else 64-bit (vb g_vb). */
static bool row_narrow(const char *vb) { return strcmp(vb, "g_vb") != 0; }
static const char *row_vidx(CuEmit *c, const char *vb, int u) {
    return row_narrow(vb) ? be_strf(&c->x, "%s + %d * g_tpr", vb, u) : be_strf(&c->x, "%s + (int64_t)%d * g_tpr", vb, u);
}

/* Load vectors vb + u * g_tpr (u < n, those below lim) of every input into
 * `regs`<u>_<input> (declared by the caller), all in flight at once: from
 * the row in global memory, or with `stash` from the stash (the row's
 * vector v in slot v - g_s0 of g_st<input>). */
static void row_loads(CuEmit *c, IrKernel *k, int n, const char *vb, const char *regs, const char *lim, bool stash) {
    IrStmt *s = k->stmt;
    for (int u = 0; u < n; u++) {
        const char *v = row_vidx(c, vb, u);
        be_line(c->b, "if (%s < %s) {", v, lim);
        for (int i = 0; i < s->nins; i++) {
            if (stash) {
                be_line(c->b, "    %s%d_%d = g_st%d[%s - g_s0];", regs, u, i, i, v);
            } else {
                be_line(c->b, "    %s%d_%d = %s%d[%s];", regs, u, i, row_src, i, v);
            }
        }
        be_line(c->b, "}");
    }
}

/* Use the vectors loaded by row_loads (see RowUse). */
static void row_uses(CuEmit *c, IrKernel *k, int n, const char *vb, const char *regs, RowUse use, const char *lim, char ***racc) {
    BeBuf *b = c->b;
    const IrValue *reads[ROW_BIG_READS];
    int nreads = use == ROW_POST ? row_big_reads(k, reads) : 0;
    int ahead = nreads > 0 ? row_col_ahead(n, nreads) : n;
    for (int u0 = 0; u0 < n; u0 += ahead) {
        int u1 = u0 + ahead < n ? u0 + ahead : n;
        if (nreads > 0) {
            /* the post's reads at the element's column, vectors u0 .. u1 - 1 (ROW COL VECTORS) */
            be_line(b, "{");
            b->indent++;
            for (int u = u0; u < u1; u++) {
                for (int i = 0; i < nreads; i++) { be_line(b, "gpuc_v16_%s g_rd%d_%d;", ir_scalar_name(reads[i]->elem), u, i); }
                const char *v = row_vidx(c, vb, u);
                be_line(b, "if (%s < %s) {", v, lim);
                b->indent++;
                for (int i = 0; i < nreads; i++) {
                    bool direct = row_big_variant || row_warp_variant;
                    if (!direct) { be_line(b, "{"); b->indent++; }
                    row_col_vector(c, k, reads[i], be_strf(&c->x, "g_rd%d_%d", u, i), v);
                    if (!direct) { b->indent--; be_line(b, "}"); }
                }
                b->indent--;
                be_line(b, "}");
            }
        }
        for (int u = u0; u < u1; u++) {
            be_line(b, "{ /* unrolled copy %d of %d */", u + 1, n);
            b->indent++;
            be_line(b, "const %s g_v = %s;", row_narrow(vb) ? "int" : "int64_t", row_vidx(c, vb, u));
            row_vector(c, k, be_strf(&c->x, "%s%d_", regs, u), use, lim, nreads > 0 ? be_strf(&c->x, "g_rd%d_", u) : NULL, racc);
            b->indent--;
            be_line(b, "}");
        }
        if (nreads > 0) {
            b->indent--;
            be_line(b, "}");
        }
    }
}

static void declare_regs(CuEmit *c, IrKernel *k, int n, const char *regs) {
    IrStmt *s = k->stmt;
    for (int u = 0; u < n; u++) {
        for (int i = 0; i < s->nins; i++) { be_line(c->b, "gpuc_v16_%s %s%d_%d;", ir_scalar_name(s->ins[i]->elem), regs, u, i); }
    }
}

static bool post_reads(const IrLambda *post) {
    for (int r = 0; post && r < post->nres; r++) { if (ir_expr_tree_size(post->res[r]) <= IR_MAX_EXPR_TREE && expr_reads(post->res[r])) { return true; } }
    return false;
}


/* The register-only variant's blocks per SM (__launch_bounds__): ptxas,
 * sm_90, at 256 threads: f32 softmax and LayerNorm take 105 and 89
 * registers unbounded, 80 at 3 blocks (no spills) and spill 300-600 bytes
 * at 4 (64 registers: the row's 32 values a thread, its pointers and
 * indices); f64 softmax takes 113 and spills at 3, so 8-byte rows keep 2. */
static int row_regs_min_blocks(const IrKernel *k) {
    int threads = ir_scalar_size(k->stmt->ins[0]->elem) == 8 ? 512 : 768;
    return threads / k->block > 0 ? threads / k->block : 1;
}

RowStash row_stash(const IrKernel *k) {
    RowStash st = { false, 1, 1, 0, false };
    int n = k->stmt->nins;
    if (!k->stmt->post || !k->vectorize || n < 1 || row_regs_variant) { return st; }
    /* ptxas, sm_90, row softmax at 128 registers: f32 fills 4 and reads 2
     * (120 registers), f64 2 and 1 (128, its exp takes more; 4 in flight
     * spilled 340 bytes) */
    int wide = ir_scalar_size(k->stmt->ins[0]->elem) == 8;
    /* a post that reads other arrays (LayerNorm's weight and bias, at the
     * element's column) holds those values as well: half as many stash
     * vectors in flight (f32 LayerNorm spilled 36 bytes at 4 and 2) */
    int fill = wide ? 2 : 4, read = wide ? 1 : 2;
    st.reads = post_reads(k->stmt->post);
    if (st.reads) {
        fill /= 2;
        read = read / 2 > 0 ? read / 2 : 1;
    }
    st.fs = fill / n > 0 ? fill / n : 1;
    st.fr = read / n > 0 ? read / n : 1;
    st.sv = ROW_STASH_LANE_BYTES / 16 / n;
    st.on = st.sv > 0;
    return st;
}

/* The row kernel's static shared memory: 32 values per component of its
 * reductions (row_allreduce, row_allreduce1). */
int row_static_shared(const IrKernel *k) {
    const IrStmt *s = k->stmt;
    int bytes = 0;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { bytes += 32 * ir_scalar_size(s->reds[r].op->ptypes[j]); }
    }
    return bytes;
}

/* One pass over the stash's part of the row (vectors g_s0 .. g_se - 1),
 * st.fs vectors per lane at a time: `fill` (phase 1) loads them from global
 * memory and stores them into the stash, else they come from the stash;
 * then `use` (see RowUse). */
static void row_stash_pass_n(CuEmit *c, IrKernel *k, bool fill, RowUse use, int n, char ***racc);
static void row_stash_pass(CuEmit *c, IrKernel *k, bool fill, RowUse use, char ***racc) {
    RowStash st = row_stash(k);
    row_stash_pass_n(c, k, fill, use, fill ? st.fs : st.fr, racc);
}

/* Phase 2's stash vectors per lane at a time: row_stash's choice, but 4 in
 * the cluster variant (NAME_cl) of a 4-byte row whose post reads arrays at
 * the element's column (LayerNorm), so that 4 vectors' weight and bias
 * loads are in flight at once (row_uses).  H200, rows of 262144,
 * bench/try_rows.sh 2026-11-27: LayerNorm 1064.4 us at 1, 1067.6 at 2,
 * 922.0 at 4; ptxas sm_90: 128 registers, no spills.  The stash kernel
 * without clusters spilled 112 bytes at 4 and keeps row_stash's. */
static int row_post_group(const IrKernel *k) {
    const IrValue *reads[ROW_BIG_READS];
    int nreads = row_big_reads(k, reads);
    bool col = row_cluster_variant && !row_regs_variant && ir_scalar_size(k->stmt->ins[0]->elem) == 4 && nreads > 0;
    /* 4 vectors of LayerNorm's two arrays; posts reading more arrays take
     * fewer (ROW_COL_AHEAD column vectors at once: 4 arrays at 4 vectors
     * spilled 396 bytes) */
    int n = col ? ROW_COL_AHEAD / nreads : 0;
    return n >= 2 ? (n < 4 ? n : 4) : row_stash(k).fr;
}

/* Phase 2's pass over the stash, with -DGPUC_ROW_POST_VECTORS=N (1, 2 or
 * 4) N vectors per lane at a time instead of row_stash's choice: a
 * comparison (bench/try_rows.sh's sweep; LayerNorm's post also gathers the
 * weight and bias, whose loads are in flight only N vectors at a time). */
static void row_stash_post_pass(CuEmit *c, IrKernel *k, char ***racc) {
    BeBuf *b = c->b;
    static const int alternatives[] = { 1, 2, 4 };
    for (int a = 0; a < 3; a++) {
        int memo = c->x.nmemo;
        be_printf(b, "#%s GPUC_ROW_POST_VECTORS == %d\n", a ? "elif" : "if", alternatives[a]);
        be_line(b, "/* the stash's vectors from shared memory, %d per lane at a time */", alternatives[a]);
        row_stash_pass_n(c, k, false, ROW_POST, alternatives[a], racc);
        c->x.nmemo = memo;
    }
    be_printf(b, "#else\n");
    int n = row_post_group(k);
    be_line(b, "/* the stash's vectors from shared memory, %d per lane at a time */", n);
    row_stash_pass_n(c, k, false, ROW_POST, n, racc);
    be_printf(b, "#endif\n");
}

static void row_stash_pass_n(CuEmit *c, IrKernel *k, bool fill, RowUse use, int n, char ***racc) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    be_line(b, "for (int g_sb = g_lane + g_s0; g_sb < g_se; g_sb += %d * g_tpr) {", n);
    b->indent++;
    declare_regs(c, k, n, "g_a");
    row_loads(c, k, n, "g_sb", "g_a", "g_se", !fill);
    for (int u = 0; fill && u < n; u++) {
        const char *v = row_vidx(c, "g_sb", u);
        be_line(b, "if (%s < g_se) {", v);
        for (int i = 0; i < s->nins; i++) { be_line(b, "    g_st%d[%s - g_s0] = g_a%d_%d;", i, v, u, i); }
        be_line(b, "}");
    }
    row_uses(c, k, n, "g_sb", "g_a", use, "g_se", racc);
    b->indent--;
    be_line(b, "}");
}

static void row_bulk_issue(CuEmit *c, IrKernel *k, int id, bool next);

/* ROW PAIR: the plain kernel's only reduction is the online softmax pair
 * of fuse_dependent_reduce (operator "online_softmax": (max, sum scaled to
 * it); row logsumexp, cross-entropy).  The operator per element costs two
 * exps and a serial chain through the pair; row_pair_group folds a group
 * of loaded vectors at once (element.c, ONLINE PAIR) and row_pair_combine
 * combines the row's threads max first.  -DGPUC_ROW_PAIR_FOLD=0 keeps the
 * operator per element (a comparison). */
static bool row_pair_ok(const IrKernel *k) {
    return k->vectorize && !k->stmt->post && pair_fold_ok(k->stmt);
}

/* ROW PAIR: the folded pair kernel of 4-byte rows is bounded to 64
 * registers a thread (__launch_bounds__(block, GPUC_ROW_PAIR_BLOCKS * 512 /
 * block), 2 blocks of 512 an SM).  Unbounded, ptxas (sm_90) gave xent 77
 * (the gather at the store, its gpuc_oob path, took 13 over row logsumexp's
 * 64): 1 block of 512 an SM at rows of 32768 (16 warps) against 2 before
 * the fusion (64 registers), 3 blocks of 256 at rows of 1024 against 4:
 * 406 -> 502 us and 417 -> 438 us on the H100.  Bounded: 64, 24 bytes
 * spilled in the row's prologue and epilogue (none in the vector loop).
 * Not the per-element fold (32 bytes spilled at 64) nor 8-byte rows
 * (xent64: 88 unbounded, 84 bytes spilled at 64). */
static bool row_pair_bounded(const IrKernel *k) {
    return row_pair_ok(k) && !row_cluster_variant && !row_big_variant && !row_regs_variant && ir_scalar_size(k->stmt->ins[0]->elem) == 4;
}

/* Where row_pair_group's vectors are: vb + u * g_tpr (u < n, those below
 * g_nv), loaded into `regs`<u>_<input>. */
typedef struct { const char *vb, *regs; } RowPairAt;

/* One pass of row_pair_group over the group's map results (x, w): pass 0
 * their maximum, pass 1 their exps. */
static void row_pair_pass(CuEmit *c, IrKernel *k, int n, const void *ctx, int pass) {
    const char *vb = ((const RowPairAt *)ctx)->vb, *regs = ((const RowPairAt *)ctx)->regs;
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    for (int u = 0; u < n; u++) {
        be_line(b, "if (%s < g_nv) {", row_vidx(c, vb, u));
        b->indent++;
        be_line(b, "const %s g_v = %s;", row_narrow(vb) ? "int" : "int64_t", row_vidx(c, vb, u));
        for (int l = 0; l < k->vec; l++) {
            be_line(b, "{ /* lane %d */", l);
            b->indent++;
            be_line(b, "const int64_t g_col = g_head + g_v * %d + %d;  (void)g_col;", k->vec, l);
            c->x.idx[0] = "g_row";
            c->x.idx[1] = row_col;
            const char **pn = calloc((size_t)s->nins + 1, sizeof *pn);
            for (int i = 0; i < s->nins; i++) { pn[i] = be_strf(&c->x, "%s%d_%d.v[%d]", regs, u, i, l); }
            pair_fold_element(c, s, pass, u, pn);
            free(pn);
            b->indent--;
            be_line(b, "}");
        }
        b->indent--;
        be_line(b, "}");
    }
}

/* Fold the group of row_pair_pass into the pair acc (element.c, ONLINE
 * PAIR). */
static void row_pair_group(CuEmit *c, IrKernel *k, int n, const char *vb, const char *regs, char **acc) {
    RowPairAt at = { vb, regs };
    pair_fold_group(c, k, n, acc, row_pair_pass, &at);
}

/* The vectors of the row: with a post, the first `items` per lane stay in
 * registers (g_c<u>_<input>, declared per row) for phase 2, the next ones
 * in the stash (row_stash_pass), and the rest (rows longer than that, read
 * again in phase 2) go 2 vectors per lane at a time, so the registers hold
 * the row; without a post, `items` vectors per lane are in flight at a
 * time.  `later`: phase 1 only loads the registers and takes the stash's
 * maximum (row_softmax_regs reduces them). */
static void row_vectors(CuEmit *c, IrKernel *k, bool phase2, bool later, char ***racc) {
    BeBuf *b = c->b;
    int C = k->items;
    bool post = k->stmt->post != NULL;
    RowStash st = row_stash(k);
    int F = post && C > 2 ? 2 : C;
    RowUse use = phase2 ? ROW_POST : ROW_FOLD;
    if (post && phase2 && row_prefetch) {
        /* grep "ROW PERSIST": the stash first, then the next row's bulk
         * copy into it, then the registers, then the next row's vectors
         * into them: the next row is in flight while this one is written */
        be_printf(b, "#if %s >= 2\n", row_persist);
        if (st.on) {
            row_stash_post_pass(c, k, racc);
            row_bulk_issue(c, k, row_kernel_id, true);
        }
        be_line(b, "/* the first %d vectors per lane from registers */", C);
        row_uses(c, k, C, "g_lane", "g_c", use, "g_nv", racc);
        be_line(b, "/* the next row's first %d vectors per lane into registers */", C);
        row_src = "g_npv";
        row_loads(c, k, C, "g_lane", "g_c", "g_nnv", false);
        row_src = "g_pv";
        be_line(b, "g_have = true;");
        be_printf(b, "#else\n");
    }
    if (post) {
        be_line(b, "/* the first %d vectors per lane %s registers */", C, phase2 ? "from" : "into");
        if (!phase2 && row_prefetch) {
            be_printf(b, "#if %s >= 2\n", row_persist);
            be_line(b, "if (!g_have) {  /* else the last row's phase 2 loaded them */");
            be_printf(b, "#endif\n");
        }
        if (!phase2) { row_loads(c, k, C, "g_lane", "g_c", "g_nv", false); }
        if (!phase2 && row_prefetch) {
            be_printf(b, "#if %s >= 2\n", row_persist);
            be_line(b, "}");
            be_printf(b, "#endif\n");
        }
        if (!later) { row_uses(c, k, C, "g_lane", "g_c", use, "g_nv", racc); }
    }
    if (st.on && phase2) {
        row_stash_post_pass(c, k, racc);
    } else if (st.on) {
        RowUse su = later ? ROW_MAX : ROW_FOLD;
        /* grep "ROW BULK": the bulk copy issued at the row's start */
        be_printf(b, "#if GPUC_ROW_BULK_DEVICE\n");
        be_line(b, "/* the stash's vectors, copied in by the bulk copy: wait for them, then %d per lane at a time%s */", st.fr,
                later ? " (their maximum now, their sum with the registers')" : "");
        be_line(b, "if (g_bulk) {");
        be_line(b, "    gpuc_mbar_wait(&g_bar%d, g_bpar);", row_kernel_id);
        be_line(b, "    g_bpar ^= 1u;");
        be_line(b, "}");
        row_stash_pass(c, k, false, su, racc);
        be_printf(b, "#else\n");
        be_line(b, "/* the next vectors into the stash as they are read, %d per lane in flight%s */", st.fs,
                later ? " (their maximum now, their sum with the registers')" : "");
        row_stash_pass(c, k, true, su, racc);
        be_printf(b, "#endif\n");
    }
    if (post && phase2 && row_prefetch) { be_printf(b, "#endif\n"); }
    if (row_regs_variant) { return; }  /* the launcher's rows fit the registers */
    be_line(b, "/* %s: %d vectors per lane in flight */", post ? st.on ? "beyond the stash" : "beyond the registers" : "the row's vectors", F);
    const char *from = !post ? "" : st.on ? " + (int64_t)g_s1" : be_strf(&c->x, " + (int64_t)%d * g_tpr", C);
    be_line(b, "for (int64_t g_vb = g_lane%s; g_vb < g_nv; g_vb += (int64_t)%d * g_tpr) {", from, F);
    b->indent++;
    declare_regs(c, k, F, "g_a");
    row_loads(c, k, F, "g_vb", "g_a", "g_nv", false);
    if (row_pair_ok(k)) {
        int memo = c->x.nmemo;
        be_printf(b, "#if GPUC_ROW_PAIR_FOLD\n");
        row_pair_group(c, k, F, "g_vb", "g_a", racc[0]);
        c->x.nmemo = memo;
        be_printf(b, "#else\n");
        row_uses(c, k, F, "g_vb", "g_a", use, "g_nv", racc);
        c->x.nmemo = memo;
        be_printf(b, "#endif\n");
    } else {
        row_uses(c, k, F, "g_vb", "g_a", use, "g_nv", racc);
    }
    b->indent--;
    be_line(b, "}");
}

/* v = v (+) every other thread's v of the row (`comb`: a format of two
 * values): a butterfly over the row's lanes of the warp, then, when a block holds the row, one value
 * per warp through the shared array `sh` (ne: the neutral element).  The
 * butterfly puts the partner's value on the right half the time: only for
 * commutative `comb` (the softmax pair's max and +). */
static void row_allreduce1(CuEmit *c, const char *v, const char *comb, const char *ne, const char *sh) {
    BeBuf *b = c->b;
    const char *o = be_strf(&c->x, "gpuc_shfl_xor(%s, g_off)", v);
    be_line(b, "for (int g_off = 1; g_off < g_wl; g_off <<= 1) {");
    be_line(b, "    %s = %s;", v, be_strf(&c->x, comb, v, o));
    be_line(b, "}");
    be_line(b, "if (g_tpr > 32) {");
    be_line(b, "    if ((threadIdx.x & 31) == 0) {");
    be_line(b, "        %s[threadIdx.x >> 5] = %s;", sh, v);
    be_line(b, "    }");
    be_line(b, "    __syncthreads();");
    be_line(b, "    %s = (threadIdx.x & 31) < (blockDim.x >> 5) ? %s[threadIdx.x & 31] : %s;", v, sh, ne);
    be_line(b, "    for (int g_off = 1; g_off < 32; g_off <<= 1) {");
    be_line(b, "        %s = %s;", v, be_strf(&c->x, comb, v, o));
    be_line(b, "    }");
    be_line(b, "    __syncthreads();  /* %s is rewritten by the next row */", sh);
    be_line(b, "}");
}

/* The row's only reduction is the online softmax pair of
 * fuse_dependent_reduce (operator "online_softmax": (max, sum scaled to
 * it), combined by rescaling the sum to the larger max) and the row is
 * held in registers for a post: row_softmax_regs applies. */
static bool row_softmax_regs_ok(const IrKernel *k) {
    const IrStmt *s = k->stmt;
    return k->vectorize && s->post && s->nreds == 1 && s->reds[0].arity == 2 && s->reds[0].name &&
           strcmp(s->reds[0].name, "online_softmax") == 0;
}

/* ROW EXP REUSE. Softmax's phase 1 takes exp(v - max) of every element's
 * value v (the map's: the element, or softmax(x * scale)'s x * scale) for
 * the sum, and its post, exp(v - max) / sum, takes it again: where the
 * block holds the whole row in registers (so its g_mx is the row's maximum,
 * the post's max) and the post reads the element only inside that
 * exponential, phase 1 leaves the exponential in the element's register and
 * phase 2 reads it there: one exp an element instead of two. Returns the
 * post's node exp(v - p1) (v the map's value expression over the one
 * input p0, p1 the pair's max) when every use of p0 in the post is inside
 * it, else NULL. */
static bool post_x_only_in(const IrExpr *e, const IrExpr *node, bool *found) {
    if (!e) { return true; }
    if (e == node) { *found = true; return true; }
    if (e->kind == IR_E_PARAM) { return e->index != 0; }
    for (int i = 0; i < 3; i++) { if (!post_x_only_in(e->a[i], node, found)) { return false; } }
    return true;
}
static const IrExpr *find_exp_node(const IrExpr *e, const IrExpr *value) {
    if (!e) { return NULL; }
    const IrExpr *d = e->kind == IR_E_MATH && e->op == IR_MATH_exp ? e->a[0] : NULL;
    if (d && d->kind == IR_E_BIN && d->op == IR_BIN_sub && ir_expr_equal(d->a[0], value) && d->a[1]->kind == IR_E_PARAM &&
        d->a[1]->index == 1) {
        return e;
    }
    for (int i = 0; i < 3; i++) {
        const IrExpr *f = find_exp_node(e->a[i], value);
        if (f) { return f; }
    }
    return NULL;
}
static const IrExpr *row_exp_reuse_node(const IrKernel *k) {
    const IrStmt *s = k->stmt;
    if (!row_softmax_regs_ok(k) || s->nins != 1 || s->map->nres != 2) { return NULL; }
    const IrExpr *node = NULL;
    for (int r = 0; r < s->post->nres && !node; r++) { node = find_exp_node(s->post->res[r], s->map->res[0]); }
    if (!node || node->ty != s->reds[0].op->ptypes[0]) { return NULL; }
    bool found = false;
    for (int r = 0; r < s->post->nres; r++) {
        if (!post_x_only_in(s->post->res[r], node, &found)) { return NULL; }
    }
    return found ? node : NULL;
}

/* The online softmax pair over the row, the registers' and the stash's
 * elements not yet folded (acc: this thread's pair over the others; g_mx:
 * the stash's maximum, taken as phase 1 filled it): the row's maximum
 * first, then the sum with each register and stash element's exp(x - max)
 * once, instead of the operator per element (two exps, a serial chain) and
 * per butterfly step.  The result is the operator's over all the elements:
 * (max, the sum of every weight scaled to the max). */
static void row_softmax_regs(CuEmit *c, IrKernel *k, int id, char **acc) {
    BeBuf *b = c->b;
    IrScalar t = k->stmt->reds[0].op->ptypes[0];
    const char *T = ct(t), *mx = t == IR_F32 ? "fmaxf" : "fmax", *ex = t == IR_F32 ? "expf" : "exp";
    bool st = row_stash(k).on;
    be_line(b, "/* the online (max, sum) pair, the registers' %selements once each: the row's maximum, then the sum of exp(x - max) */",
            st ? "and the stash's " : "");
    be_line(b, "g_mx = %s(g_mx, %s);", mx, acc[0]);
    row_uses(c, k, k->items, "g_lane", "g_c", ROW_MAX, "g_nv", NULL);
    row_allreduce1(c, "g_mx", be_strf(&c->x, "%s(%%s, %%s)", mx), t == IR_F32 ? "(-gpuc_inff())" : "(-gpuc_inf())",
                   be_strf(&c->x, "g_sh%d_0_0", id));
    be_line(b, "/* the elements outside the registers%s: their pair scaled to the row's maximum */", st ? " and the stash" : "");
    be_line(b, "%s g_sum = %s == g_mx ? %s : %s * %s(%s - g_mx);", T, acc[0], acc[1], acc[1], ex, acc[0]);
    row_uses(c, k, k->items, "g_lane", "g_c", ROW_SUMEXP, "g_nv", NULL);
    if (st) {
        be_line(b, "/* the stash's elements */");
        row_stash_pass(c, k, false, ROW_SUMEXP, NULL);
    }
    row_allreduce1(c, "g_sum", "%s + %s", be_strf(&c->x, "(%s)0", T), be_strf(&c->x, "g_sh%d_0_1", id));
    be_line(b, "%s = g_mx;", acc[0]);
    be_line(b, "%s = g_sum;", acc[1]);
}

/* Does the post's expression e take the same value at every element of a
 * row: no element of the inputs (parameters below nins), no column index,
 * no read (a lane past the last row must not read) and no fold? */
static bool post_row_invariant(const IrExpr *e, int nins) {
    if (!e) { return true; }
    switch (e->kind) {
    case IR_E_PARAM: return e->index >= nins;
    case IR_E_IDX: return e->index == 0;
    case IR_E_READ: case IR_E_FOLD: case IR_E_LOOPVAR: return false;
    default: break;
    }
    for (int i = 0; i < 3; i++) { if (!post_row_invariant(e->a[i], nins)) { return false; } }
    return true;
}

/* Compute the post's row-invariant subexpressions (LayerNorm's mean and
 * 1/sqrt(var + eps)) once per row, before phase 2: be_expr memoises them,
 * so every element's post reuses the temporaries (the caller drops the
 * memo after phase 2).  Without this each element would pay a division
 * and a square root in unrolled copies nvcc cannot merge. */
static void post_hoist(CuEmit *c, const IrExpr *e, int nins) {
    if (!e || e->kind == IR_E_CONST || e->kind == IR_E_PARAM || e->kind == IR_E_IDX || e->kind == IR_E_FREE) { return; }
    if (post_row_invariant(e, nins)) {
        (void)be_expr(&c->x, e);
        return;
    }
    for (int i = 0; i < 3; i++) { post_hoist(c, e->a[i], nins); }
}

static void row_post_hoist(CuEmit *c, IrStmt *s, char ***racc) {
    int nred = ir_stmt_red_width(s);
    const char **pa = calloc((size_t)(s->nins + nred) + 1, sizeof *pa);
    for (int i = 0; i < s->nins; i++) { pa[i] = "gpuc_not_row_invariant";  /* never read: a compile error if it were */ }
    int at = s->nins;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { pa[at++] = racc[r][j]; }
    }
    const char *const *saved = c->x.params;
    c->x.params = pa;
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "gpuc_not_row_invariant";
    for (int r = 0; r < s->post->nres; r++) { post_hoist(c, s->post->res[r], s->nins); }
    c->x.params = saved;
    free(pa);
}

/* The row's threads combine their accumulators: every thread gets the
 * row's results (warp butterfly, then one value per warp through shared
 * memory when a block holds the row). */
static void row_allreduce(CuEmit *c, IrStmt *s, int id, char ***racc) {
    BeBuf *b = c->b;
    be_line(b, "/* the row's threads combine: every thread gets the row's results */");
    warp_allreduce(c, s, racc);
    be_line(b, "if (g_tpr > 32) {  /* a block per row: one value per warp through shared memory */");
    b->indent++;
    be_line(b, "if ((threadIdx.x & 31) == 0) {");
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "    g_sh%d_%d_%d[threadIdx.x >> 5] = %s;", id, r, j, racc[r][j]); }
    }
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) {
            be_line(b, "%s = (threadIdx.x & 31) < (blockDim.x >> 5) ? g_sh%d_%d_%d[threadIdx.x & 31] : %s;", racc[r][j], id, r, j,
                    be_expr(&c->x, s->reds[r].ne[j]));
        }
    }
    warp_allreduce(c, s, racc);
    be_line(b, "__syncthreads();  /* the shared values are rewritten by the next row */");
    b->indent--;
    be_line(b, "}");
}

/* The 1-D map fused at the row (ir/fuse_rows.c: cross-entropy's lse -
 * A[i, t[i]]), at the row's store: its params the row's results, index 0
 * the row; its reads keep their bounds checks.  Its outputs follow the
 * reduction outs. */
static void row_per_row(CuEmit *c, IrStmt *s, char ***racc) {
    int nred = ir_stmt_red_width(s), memo = c->x.nmemo;
    const char **args = calloc((size_t)nred + 1, sizeof *args);
    for (int r = 0, at = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { args[at++] = racc[r][j]; }
    }
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "gpuc_not_per_row";  /* never read: a compile error if it were */
    const char **res = calloc((size_t)s->per_row->nres + 1, sizeof *res);
    be_lambda(&c->x, s->per_row, args, res);
    for (int r = 0; r < s->per_row->nres; r++) { be_line(c->b, "%s[g_row] = %s;", be_vname(s->outs[nred + r]), res[r]); }
    free(res);
    free(args);
    c->x.nmemo = memo;
}

/* ROW EARLY READS: does the per-row map's expression e depend on the row
 * alone (no result of the row, no column, no fold)? */
static bool per_row_only_row(const IrExpr *e) {
    if (!e) { return true; }
    switch (e->kind) {
    case IR_E_PARAM: case IR_E_FOLD: case IR_E_LOOPVAR: return false;
    case IR_E_IDX: return e->index == 0;
    default: break;
    }
    for (int i = 0; i < 3; i++) { if (!per_row_only_row(e->a[i])) { return false; } }
    return true;
}

/* The reads of the per-row map that depend on the row alone and whose
 * index reads nothing (cross-entropy's t[i], not A[i, t[i]], whose load
 * would wait for t[i]'s at the row's start; at the store it finds the row
 * in L1), at most max of them, into reads. */
static int per_row_reads(const IrExpr *e, const IrExpr **reads, int n, int max) {
    if (!e || n == max) { return n; }
    if (e->kind == IR_E_READ && per_row_only_row(e) && !expr_reads(e->a[0]) && !expr_reads(e->a[1])) {
        for (int i = 0; i < n; i++) { if (reads[i] == e) { return n; } }
        reads[n] = e;
        return n + 1;
    }
    for (int i = 0; i < 3; i++) { n = per_row_reads(e->a[i], reads, n, max); }
    return n;
}

/* ROW EARLY READS: the per-row map's reads that depend on the row alone
 * and index nothing else that is read (cross-entropy's t[i]) are issued
 * at the row's start, before phase 1, by the thread that stores the row's
 * result, under the condition of that store (`cond`), so their latency
 * overlaps the row's loads instead of following its reduction (before:
 * t[i] from DRAM, then A[i, t[i]], two dependent loads after the row's
 * reduction, with the warp waiting).  Each is
 * bound (be_expr_bind) to g_er<n>, which row_per_row then reads; the
 * caller drops the bindings (c->x.nmemo) when the row's body ends.  With
 * -DGPUC_ROW_EARLY_READS=0 the store assigns them itself
 * (row_early_reads_late), as before this change (a comparison). */
enum { ROW_EARLY_MAX = 8 };
typedef struct {
    int n;                                /* reads issued early */
    int bind_at;                          /* their bindings' first memo entry */
    const IrExpr *reads[ROW_EARLY_MAX];
} RowEarly;

static void row_early_reads(CuEmit *c, IrStmt *s, const char *cond, RowEarly *er) {
    BeBuf *b = c->b;
    er->n = 0;
    for (int r = 0; s->per_row && r < s->per_row->nres; r++) { er->n = per_row_reads(s->per_row->res[r], er->reads, er->n, ROW_EARLY_MAX); }
    if (er->n == 0) { return; }
    const char *i0 = c->x.idx[0], *i1 = c->x.idx[1];
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "gpuc_not_per_row";  /* never read: a compile error if it were */
    be_line(b, "/* the per-row map's reads of the row alone, issued before the row's loads (rows.c, grep \"ROW EARLY READS\") */");
    for (int i = 0; i < er->n; i++) { be_line(b, "%s g_er%d = (%s)0;", ct(er->reads[i]->ty), i, ct(er->reads[i]->ty)); }
    be_printf(b, "#if GPUC_ROW_EARLY_READS\n");
    be_line(b, "if (%s) {", cond);
    b->indent++;
    int memo = c->x.nmemo;
    for (int i = 0; i < er->n; i++) { be_line(b, "g_er%d = %s;", i, be_expr(&c->x, er->reads[i])); }
    c->x.nmemo = memo;  /* the temporaries end with the block */
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#endif\n");
    c->x.idx[0] = i0;
    c->x.idx[1] = i1;
    er->bind_at = c->x.nmemo;
    for (int i = 0; i < er->n; i++) { be_expr_bind(&c->x, er->reads[i], be_strf(&c->x, "g_er%d", i)); }
}

/* ROW EARLY READS off: the store's thread assigns g_er<n> itself, each
 * read emitted with its binding hidden. */
static void row_early_reads_late(CuEmit *c, const RowEarly *er) {
    be_printf(c->b, "#if !GPUC_ROW_EARLY_READS\n");
    int memo = c->x.nmemo;
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "gpuc_not_per_row";
    for (int i = 0; i < er->n; i++) {
        c->x.mexpr[er->bind_at + i] = NULL;
        be_line(c->b, "g_er%d = %s;", i, be_expr(&c->x, er->reads[i]));
        c->x.mexpr[er->bind_at + i] = er->reads[i];
    }
    c->x.nmemo = memo;
    be_printf(c->b, "#endif\n");
}

/* ROW PAIR: the row's threads combine the online softmax pair acc: the
 * row's maximum first, then each thread's sum scaled to it (one exp a
 * thread), summed: every thread gets the operator's result over the row. */
static void row_pair_combine(CuEmit *c, IrStmt *s, int id, char **acc) {
    BeBuf *b = c->b;
    IrScalar t = s->reds[0].op->ptypes[0];
    const char *T = ct(t), *mx = t == IR_F32 ? "fmaxf" : "fmax", *ex = t == IR_F32 ? "expf" : "exp";
    be_line(b, "/* the row's threads combine: the row's maximum, then the sums scaled to it */");
    be_line(b, "%s g_mx = %s;", T, acc[0]);
    row_allreduce1(c, "g_mx", be_strf(&c->x, "%s(%%s, %%s)", mx), t == IR_F32 ? "(-gpuc_inff())" : "(-gpuc_inf())",
                   be_strf(&c->x, "g_sh%d_0_0", id));
    be_line(b, "%s g_sum = %s == g_mx ? %s : %s * %s(%s - g_mx);", T, acc[0], acc[1], acc[1], ex, acc[0]);
    row_allreduce1(c, "g_sum", "%s + %s", be_strf(&c->x, "(%s)0", T), be_strf(&c->x, "g_sh%d_0_1", id));
    be_line(b, "%s = g_mx;", acc[0]);
    be_line(b, "%s = g_sum;", acc[1]);
}

/* A row reduction: g_tpr threads per row, chosen by the host from the row
 * length: 4, 8, 16 or 32 (a part of a warp or a warp per row, blockDim.x /
 * g_tpr rows per block) or blockDim.x (a block per row).  Phase 1 reduces the row: a scalar head up to the
 * first 16-byte boundary of the row, 16-byte vectors, a scalar tail; the
 * row's threads then combine (warp butterfly, then one value per warp
 * through shared memory), so every thread has the row's results.  Phase 2
 * (a post: row softmax) applies the post to each element, from registers
 * and the stash (row_stash_pass) where the row fit, and writes the 2-D
 * results.  Operators not known to be
 * commutative take contiguous runs of the row per thread, in order. */
/* The cluster variant's helpers (PTX, so that NVRTC needs no header):
 * the block's rank in its cluster, a barrier of the cluster's threads
 * (release/acquire: shared memory written before it is seen after it), and
 * a load from the same shared variable of block `rank`. */
static void row_cluster_helpers(CuEmit *c) {
    be_printf(c->b, "#ifndef GPUC_ROW_CLUSTER_HELPERS\n#define GPUC_ROW_CLUSTER_HELPERS\n"
                    "#ifndef GPUC_ROW_CLUSTER_BLOCKS\n"
                    "#define GPUC_ROW_CLUSTER_BLOCKS %d  /* blocks per row: -DGPUC_ROW_CLUSTER_BLOCKS=2, 4 or 16 (a comparison) */\n"
                    "#endif\n"
                    "#if GPUC_ROW_CLUSTER_BLOCKS > 8 && !defined(GPUC_CUDA_HOST)\n"
                    "#error \"clusters of more than 8 blocks need the non-portable size attribute: only with the CUDA host (a comparison)\"\n"
                    "#endif\n"
                    "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
                    "static __device__ __forceinline__ unsigned gpuc_cluster_rank(void) {\n"
                    "    unsigned r;\n"
                    "    asm volatile(\"mov.u32 %%0, %%%%cluster_ctarank;\" : \"=r\"(r));\n"
                    "    return r;\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_cluster_sync(void) {\n"
                    "    asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\tbarrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
                    "}\n"
                    "template <typename T> static __device__ __forceinline__ T gpuc_cluster_load(const T *p, unsigned rank) {\n"
                    "    unsigned long long a;\n"
                    "    asm volatile(\"mapa.u64 %%0, %%1, %%2;\" : \"=l\"(a) : \"l\"(p), \"r\"(rank));\n"
                    "    return *(const volatile T *)a;\n"
                    "}\n"
                    "#endif\n#endif\n", ROW_CLUSTER);
}

/* The bulk copy's helpers (ROW BULK; PTX, so that NVRTC needs no header):
 * an mbarrier in shared memory that completes when thread 0 has arrived
 * and the bytes it announced have landed, and cp.async.bulk (sm_90's copy
 * engine, global to shared, 16-byte aligned, a multiple of 16 bytes).
 * -DGPUC_ROW_BULK=0 fills the stash through registers instead (a
 * comparison; also what sm_80 does). */
static void row_bulk_helpers(CuEmit *c) {
    be_printf(c->b, "#ifndef GPUC_ROW_BULK_HELPERS\n#define GPUC_ROW_BULK_HELPERS\n"
                    "#ifndef GPUC_ROW_BULK\n#define GPUC_ROW_BULK 1  /* -DGPUC_ROW_BULK=0: the stash filled through registers */\n#endif\n"
                    "#ifndef GPUC_ROW_POST_VECTORS\n#define GPUC_ROW_POST_VECTORS 0  /* -DGPUC_ROW_POST_VECTORS=1, 2 or 4: phase 2's stash vectors per lane at a time (a comparison) */\n#endif\n"
                    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && GPUC_ROW_BULK\n"
                    "#define GPUC_ROW_BULK_DEVICE 1\n"
                    "static __device__ __forceinline__ unsigned gpuc_shared_addr(const void *p) {\n"
                    "    unsigned a;\n"
                    "    asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %%1; cvt.u32.u64 %%0, t; }\" : \"=r\"(a) : \"l\"(p));\n"
                    "    return a;\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_mbar_init(unsigned long long *bar) {\n"
                    "    asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 1;\\n\\tfence.mbarrier_init.release.cluster;\" :: \"r\"(gpuc_shared_addr(bar)) : \"memory\");\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_mbar_expect(unsigned long long *bar, unsigned bytes) {\n"
                    "    /* the block's reads of the last row (generic proxy) before the copy's writes (async proxy) */\n"
                    "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
                    "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" :: \"r\"(gpuc_shared_addr(bar)), \"r\"(bytes) : \"memory\");\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_bulk_copy(void *dst, const void *src, unsigned bytes, unsigned long long *bar) {\n"
                    "    asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%0], [%%1], %%2, [%%3];\"\n"
                    "                 :: \"r\"(gpuc_shared_addr(dst)), \"l\"(src), \"r\"(bytes), \"r\"(gpuc_shared_addr(bar)) : \"memory\");\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_mbar_wait(unsigned long long *bar, unsigned parity) {\n"
                    "    unsigned done;\n"
                    "    do {\n"
                    "        asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%%1], %%2; selp.u32 %%0, 1, 0, p; }\"\n"
                    "                     : \"=r\"(done) : \"r\"(gpuc_shared_addr(bar)), \"r\"(parity) : \"memory\");\n"
                    "    } while (!done);\n"
                    "}\n"
                    "#else\n#define GPUC_ROW_BULK_DEVICE 0\n#endif\n#endif\n");
}

/* The cluster's blocks combine their parts' results (every thread of the
 * block has its part's): each block's thread 0 puts them in its slot g_par, and after a cluster barrier every thread folds
 * the ROW_CLUSTER slots in rank order.  Two slots, alternate rows: a block
 * rewrites a slot two rows later, after the next row's barrier, which every
 * block passes only once it has read this row's. */
static void row_cluster_combine(CuEmit *c, IrStmt *s, int id, char ***racc) {
    BeBuf *b = c->b;
    be_line(b, "/* the cluster's blocks combine their parts: every thread gets the row's results */");
    be_line(b, "if (threadIdx.x == 0) {");
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "    g_cl%d_%d_%d[g_par] = %s;", id, r, j, racc[r][j]); }
    }
    be_line(b, "}");
    be_line(b, "gpuc_cluster_sync();");
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "%s = %s;", racc[r][j], be_expr(&c->x, s->reds[r].ne[j])); }
    }
    be_line(b, "for (unsigned g_q = 0; g_q < (unsigned)GPUC_ROW_CLUSTER_BLOCKS; g_q++) {");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        IrOperator *op = &s->reds[r];
        char **o = names(c, "g_p%d_%d", r, op->arity);
        for (int j = 0; j < op->arity; j++) { be_line(b, "const %s %s = gpuc_cluster_load(&g_cl%d_%d_%d[g_par], g_q);", ct(op->op->ptypes[j]), o[j], id, r, j); }
        apply_op(c, op, racc[r], (const char *const *)racc[r], (const char *const *)o, false);
        free(o);
    }
    b->indent--;
    be_line(b, "}");
    be_line(b, "g_par ^= 1;");
}

/* ROW BULK: thread 0 has the copy engine bring the stash's part of the row
 * (vectors g_s0 .. g_se - 1 of every input, contiguous in the row and in
 * the stash) into shared memory, before the register loads, so all of the
 * row's bytes are in flight at once without registers; phase 1 waits on
 * g_bar<id> before it reads the stash (row_vectors).  A block holds one row
 * whenever it has a stash (g_se > g_s0 only then), so every thread of the
 * block takes the same branch and the barrier is safe. */
static void row_bulk_issue(CuEmit *c, IrKernel *k, int id, bool next) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    const char *n = next ? "n" : "";
    be_printf(b, "#if GPUC_ROW_BULK_DEVICE\n");
    if (next) {
        /* ROW PERSIST: the next row's part, issued by this row's phase 2 */
        be_line(b, "const int g_nse = (int)(g_nnv < (int64_t)g_s1 ? g_nnv : (int64_t)g_s1);  /* the stash's end in the next row */");
        be_line(b, "if (g_nse > g_s0) {  /* the same in every thread */");
    } else if (row_prefetch) {
        be_line(b, "const bool g_bulk = g_se > g_s0;  /* the same in every thread: a block per row */");
        be_printf(b, "#if %s >= 2\n", row_persist);
        be_line(b, "if (g_bulk && !g_have) {  /* else the last row's phase 2 issued it */");
        be_printf(b, "#else\n");
        be_line(b, "if (g_bulk) {");
        be_printf(b, "#endif\n");
    } else {
        be_line(b, "const bool g_bulk = g_se > g_s0;  /* the same in every thread: a block per row */");
        be_line(b, "if (g_bulk) {");
    }
    b->indent++;
    be_line(b, "__syncthreads();  /* every thread is done with the %s stash */", next ? "row's" : "last row's");
    be_line(b, "if (threadIdx.x == 0) {");
    be_line(b, "    const unsigned g_bytes = (unsigned)(g_%sse - g_s0) * 16u;", n);
    be_line(b, "    gpuc_mbar_expect(&g_bar%d, g_bytes * %du);", id, s->nins);
    for (int i = 0; i < s->nins; i++) { be_line(b, "    gpuc_bulk_copy(g_st%d, g_%spv%d + g_s0, g_bytes, &g_bar%d);", i, n, i, id); }
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#endif\n");
}

/* ROW PERSIST: GPUC_ROW_PERSIST_<kernel> of the generated code, for the
 * cluster variants and the big block: 1 launches the kernel as a
 * persistent grid (launch.c: the clusters or blocks that are resident at
 * once, each looping over rows); 2 also loads the next row's part in this
 * row's phase 2 (the registers' vectors as each register is written out,
 * the stash's by the bulk copy once the stash is read), so an SM has loads
 * in flight while it writes, instead of only between a row's start and its
 * reduction (the 0.75 of the copy rate at rows of 262144); 0 one cluster
 * (block) a row.  Each kernel's default is gpuc's, from an H100 run
 * (2026-11-26, bench/try_rows.sh, us at 0 / 2): 2 for the clusters (softmax
 * at 262144 952 / 891, LayerNorm 1388 / 1335) and for the big block when
 * the post reads other arrays (LayerNorm at 32768: 834 / 784), 0 for the
 * big block of a post that reads only the row (softmax at 32768: 729 /
 * 771).  -DGPUC_ROW_PERSIST=N forces every kernel (comparisons); the host
 * launcher and the kernel read the same macro (row_persist_define writes
 * it in both, the same default). */
const char *row_persist_macro(CuEmit *c, const char *name) { return be_strf(&c->x, "GPUC_ROW_PERSIST_%s", name); }

void row_persist_define(CuEmit *c, const IrKernel *k, const char *name, bool big) {
    const IrValue *reads[ROW_BIG_READS];
    int d = !big || row_big_reads(k, reads) > 0 ? 2 : 0;
    const char *m = row_persist_macro(c, name);
    be_printf(c->b, "#ifndef %s\n#ifdef GPUC_ROW_PERSIST\n#define %s GPUC_ROW_PERSIST\n#else\n"
                    "#define %s %d  /* %s: 0 one a row, 1 a persistent grid, 2 and the next row loaded while this one is written (rows.c, grep \"ROW PERSIST\") */\n"
                    "#endif\n#endif\n",
              m, m, m, d, d ? "H100: faster persistent" : "H100: faster one a row");
}

/* ROW PERSIST: the next row of this block (cluster) and its vectors: g_nnv
 * of them (0 past the last row) from g_npv<input>, the same geometry as the
 * loop's head computes for it then. */
static void row_next_geometry(CuEmit *c, IrKernel *k, const char *rows, const char *cols) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    be_printf(b, "#if %s >= 2\n", row_persist);
    be_line(b, "/* the next row this %s takes, whose vectors phase 2 loads */", row_cluster_variant ? "cluster" : "block");
    if (row_cluster_variant) {
        be_line(b, "const int64_t g_nrow = g_row + (int64_t)(gridDim.x / (unsigned)GPUC_ROW_CLUSTER_BLOCKS);");
        be_line(b, "const int64_t g_nm = g_nrow < %s ? g_m : 0;  /* the next part's length: this one's, as every row's */", rows);
        be_line(b, "const int64_t g_nrb = (g_nrow < %s ? g_nrow : g_row) * %s + g_cb;", rows, cols);
        be_line(b, "int64_t g_nhead = g_vec ? (int64_t)(((16u - ((unsigned)(uintptr_t)(%s + g_nrb) & 15u)) & 15u) / %du) : g_nm;", be_vname(s->ins[0]),
                ir_scalar_size(s->ins[0]->elem));
        be_line(b, "if (g_nhead > g_nm) {");
        be_line(b, "    g_nhead = g_nm;");
        be_line(b, "}");
        be_line(b, "const int64_t g_nnv = (g_nm - g_nhead) / %d;", k->vec);
    } else {
        be_line(b, "const int64_t g_nrow = g_row + (int64_t)gridDim.x;");
        be_line(b, "const int64_t g_nrb = (g_nrow < %s ? g_nrow : g_row) * %s;", rows, cols);
        be_line(b, "const int64_t g_nhead = 0;");
        be_line(b, "const int64_t g_nnv = g_nrow < %s ? g_nv : 0;", rows);
    }
    for (int i = 0; i < s->nins; i++) {
        const char *tn = ir_scalar_name(s->ins[i]->elem);
        be_line(b, "const gpuc_v16_%s *g_npv%d = (const gpuc_v16_%s *)(%s + g_nrb + g_nhead);", tn, i, tn, be_vname(s->ins[i]));
    }
    be_printf(b, "#endif\n");
}

static void emit_row_kernel(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    bool warp = row_warp_variant;
    if (!warp) { kp_add(c, &p, "const int g_tpr", "g_tpr"); }
    RowStash st = row_stash(k);
    if (st.on) { kp_add(c, &p, "const int g_sv", "g_sv"); }
    bool cl = row_cluster_variant;
    if (cl) { row_cluster_helpers(c); }
    if (st.on) { row_bulk_helpers(c); }
    if (row_pair_ok(k)) {
        be_printf(b, "#ifndef GPUC_ROW_PAIR_FOLD\n#define GPUC_ROW_PAIR_FOLD 1  /* -DGPUC_ROW_PAIR_FOLD=0: the online softmax pair folded per element (a comparison) */\n#endif\n");
    }
    if (s->per_row) {
        be_printf(b, "#ifndef GPUC_ROW_EARLY_READS\n#define GPUC_ROW_EARLY_READS 1  /* -DGPUC_ROW_EARLY_READS=0: the per-row map's reads at the row's store (a comparison; rows.c, grep \"ROW EARLY READS\") */\n#endif\n");
    }
    const IrValue *col_reads[ROW_BIG_READS];
    if (!row_big_variant && s->post && k->vectorize && row_big_reads(k, col_reads) > 0) {
        be_printf(b, "#ifndef GPUC_ROW_COL_VECTORS\n#define GPUC_ROW_COL_VECTORS 1  /* -DGPUC_ROW_COL_VECTORS=0: the post's reads at the column as scalars (a comparison; rows.c, grep \"ROW COL VECTORS\") */\n#endif\n");
    }
    row_exp_node = row_regs_variant && !row_cluster_variant ? row_exp_reuse_node(k) : NULL;
    if (row_exp_node) {
        be_printf(b, "#ifndef GPUC_ROW_EXP_REUSE\n#define GPUC_ROW_EXP_REUSE 1  /* -DGPUC_ROW_EXP_REUSE=0: softmax's post takes exp(x - max) again (a comparison; rows.c, grep \"ROW EXP REUSE\") */\n#endif\n");
    }
    if (row_pair_bounded(k)) {
        be_printf(b, "#ifndef GPUC_ROW_PAIR_BLOCKS\n#define GPUC_ROW_PAIR_BLOCKS 2  /* blocks of 512 threads an SM the pair kernel's registers leave room for (64 a thread); 0: no bound */\n#endif\n");
    }
    kernel_comment(c, k);
    /* with a stash, at most 128 registers a thread (the blocks' count the
     * launcher's stash sizes assume: grep "ROW STASH") */
    int min_blocks = row_big_variant ? 1 : warp ? ROW_WARP_MIN_BLOCKS(ir_scalar_size(s->ins[0]->elem)) : row_regs_variant ? row_regs_min_blocks(k) :
                     st.on && k->block < 512 ? 512 / k->block : 0;
    bool big = row_big_variant;
    bool whole = big || warp;  /* rows of whole vectors on 16-byte boundaries (the launcher checked): no head, no tail */
    /* not NAME_clregs: at its 80 registers (3 blocks an SM) LayerNorm's
     * next row spilled 52 bytes (ptxas, sm_90) */
    row_prefetch = ((cl && !row_regs_variant) || big) && k->stmt->post && k->vectorize;
    if (row_prefetch) {
        row_persist = row_persist_macro(c, k->name);
        row_persist_define(c, k, k->name, big);
    }
    if (cl) {
        /* __cluster_dims__ only where the device code has clusters (the host pass and sm_90 on) */
        be_printf(b, "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n#define GPUC_ROW_CLUSTER_DIMS __cluster_dims__(GPUC_ROW_CLUSTER_BLOCKS, 1, 1)\n#else\n#define GPUC_ROW_CLUSTER_DIMS\n#endif\n");
        signature_attrs(c, k, &p, be_strf(&c->x, "GPUC_ROW_CLUSTER_DIMS __launch_bounds__(%d, %d)", k->block, min_blocks));
        be_printf(b, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900\n    __trap();  /* the launcher takes this kernel on sm_90 on only */\n#else\n");
    } else if (row_pair_bounded(k)) {
        /* ROW PAIR: the register cap under GPUC_ROW_PAIR_FOLD (see row_pair_bounded) */
        be_printf(b, "#if GPUC_ROW_PAIR_FOLD && GPUC_ROW_PAIR_BLOCKS > 0\n");
        be_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d, GPUC_ROW_PAIR_BLOCKS * 512 / %d)\n", k->block, k->block);
        be_printf(b, "#else\n");
        be_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n", k->block);
        be_printf(b, "#endif\n%s(", k->name);
        for (int i = 0; i < p.n; i++) { be_printf(b, "%s%s", i ? ",\n    " : "", p.decl[i]); }
        be_printf(b, ")\n{\n");
        b->indent = 1;
    } else if (warp) {
        signature_attrs(c, k, &p, be_strf(&c->x, "__launch_bounds__(%d, %d)", k->block, min_blocks));
    } else if (row_regs_variant && !big) {
        /* the register-only kernel's blocks per SM, -DGPUC_ROW_REGS_BLOCKS=N
         * for all of them (a comparison: bench/try_rows.sh's rbN) */
        be_printf(b, "#ifndef GPUC_ROW_REGS_MIN\n#ifdef GPUC_ROW_REGS_BLOCKS\n#define GPUC_ROW_REGS_MIN(d) GPUC_ROW_REGS_BLOCKS\n#else\n"
                     "#define GPUC_ROW_REGS_MIN(d) d  /* the register-only row kernels' blocks per SM (rows.c, row_regs_min_blocks) */\n#endif\n#endif\n");
        signature_attrs(c, k, &p, be_strf(&c->x, "__launch_bounds__(%d, GPUC_ROW_REGS_MIN(%d))", k->block, min_blocks));
    } else {
        signature_min(c, k, &p, min_blocks);
    }
    const char *rows = be_strf(&c->x, "%s", be_vname(s->w[0]));
    const char *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));
    int nred = ir_stmt_red_width(s);
    bool post = s->post != NULL, sm = row_softmax_regs_ok(k);
    char ***racc = acc_names(c, s);
    int id = shared_id++;
    row_kernel_id = id;
    if (warp) { be_line(b, "const int g_tpr = 32;  /* a warp a row (ROW WARP) */"); }
    be_line(b, "const int g_lane = (int)threadIdx.x & (g_tpr - 1);");
    be_line(b, "const int g_wl = g_tpr < 32 ? g_tpr : 32;  /* the row's lanes in a warp */");
    if (!cl && !big) { be_line(b, "const int64_t g_rpb = (int64_t)(blockDim.x / (unsigned)g_tpr);"); }
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "__shared__ %s g_sh%d_%d_%d[32];", ct(s->reds[r].op->ptypes[j]), id, r, j); }
    }
    if (st.on) {
        be_line(b, "/* the stash: the row's vectors g_s0 .. g_s1 - 1 (after the registers' %d per lane) in dynamic shared memory, g_sv per lane and input; only when a block holds the row */", k->items);
        be_line(b, "extern __shared__ __align__(128) gpuc_v16_f32 gpuc_stash[];  /* 128-byte aligned: the bulk copy that fills it moves whole lines */");
        for (int i = 0; i < s->nins; i++) {
            const char *tn = ir_scalar_name(s->ins[i]->elem);
            be_line(b, "gpuc_v16_%s *const g_st%d = (gpuc_v16_%s *)(gpuc_stash + %d * g_sv * g_tpr);", tn, i, tn, i);
        }
        be_line(b, "const int g_s0 = %d * g_tpr;", k->items);
        be_line(b, "const int g_s1 = g_tpr == (int)blockDim.x ? g_s0 + g_sv * g_tpr : g_s0;");
        be_printf(b, "#if GPUC_ROW_BULK_DEVICE\n");
        be_line(b, "__shared__ unsigned long long g_bar%d;  /* the bulk copy's: complete when the stash's bytes of the row have landed */", id);
        be_line(b, "unsigned g_bpar = 0u;  /* the parity of its phase this row waits for */");
        be_line(b, "if (threadIdx.x == 0) {");
        be_line(b, "    gpuc_mbar_init(&g_bar%d);", id);
        be_line(b, "}");
        be_line(b, "__syncthreads();");
        be_printf(b, "#endif\n");
    }
    if (k->vectorize && !whole) {
        /* every row of every array starts at the same offset from a 16-byte boundary */
        be_printf(b, "    const bool g_vec = ((");
        int any = 0;
        for (int i = 1; i < s->nins; i++) { be_printf(b, "%s((uintptr_t)%s ^ (uintptr_t)%s)", any++ ? " | " : "", be_vname(s->ins[i]), be_vname(s->ins[0])); }
        for (int r = 0; post && r < s->post->nres; r++) { be_printf(b, "%s((uintptr_t)%s ^ (uintptr_t)%s)", any++ ? " | " : "", be_vname(s->outs[nred + r]), be_vname(s->ins[0])); }
        be_printf(b, "%s) & 15) == 0;\n", any ? "" : "(uintptr_t)0");
    }
    if (row_prefetch) {
        /* ROW PERSIST: the registers carry the next row's vectors from one
         * iteration to the next */
        be_printf(b, "#if %s >= 2\n", row_persist);
        declare_regs(c, k, k->items, "g_c");
        be_line(b, "bool g_have = false;  /* g_c* (and the stash's bulk copy) hold the row already: the last row's phase 2 loaded them */");
        be_printf(b, "#endif\n");
    }
    /* the loop runs over the warp's first row, so that every lane of the
     * warp takes part in the shuffles; a lane past the last row sees a row
     * of 0 elements */
    if (cl) {
        /* a cluster per row (g_tpr is blockDim.x); the parts are whole
         * vectors apart, so every part keeps the row's alignment */
        be_line(b, "const unsigned g_rank = gpuc_cluster_rank();");
        be_line(b, "const int64_t g_part = (%s + GPUC_ROW_CLUSTER_BLOCKS * %d - 1) / (GPUC_ROW_CLUSTER_BLOCKS * %d) * %d;  /* a block's part of the row */", cols,
                k->vec, k->vec, k->vec);
        be_line(b, "const int64_t g_cb = (int64_t)g_rank * g_part < %s ? (int64_t)g_rank * g_part : %s;  /* the part's first column */", cols, cols);
        be_line(b, "int g_par = 0;  /* which of the two slots of g_cl* this row uses */");
        for (int r = 0; r < s->nreds; r++) {
            for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "__shared__ %s g_cl%d_%d_%d[2];", ct(s->reds[r].op->ptypes[j]), id, r, j); }
        }
        be_line(b, "for (int64_t g_row0 = (int64_t)(blockIdx.x / (unsigned)GPUC_ROW_CLUSTER_BLOCKS); g_row0 < %s; g_row0 += (int64_t)(gridDim.x / (unsigned)GPUC_ROW_CLUSTER_BLOCKS)) {", rows);
        b->indent++;
        be_line(b, "const int64_t g_row = g_row0;");
        be_line(b, "const int64_t g_m = g_row < %s ? (%s - g_cb < g_part ? %s - g_cb : g_part) : 0;  /* the part's length */", rows, cols, cols);
        be_line(b, "const int64_t g_rb = g_row * %s + g_cb;  (void)g_rb;  /* the part's first element */", cols);
        row_col = "(g_cb + g_col)";
    } else if (big) {
        be_line(b, "/* a block per row (g_tpr is blockDim.x), every row on a 16-byte boundary and whole vectors (the launcher checked) */");
        be_line(b, "for (int64_t g_row = (int64_t)blockIdx.x; g_row < %s; g_row += (int64_t)gridDim.x) {", rows);
        b->indent++;
        be_line(b, "const int64_t g_m = %s;  /* the row's length */", cols);
        be_line(b, "const int64_t g_rb = g_row * %s;  (void)g_rb;  /* the row's first element */", cols);
    } else {
        be_line(b, "for (int64_t g_row0 = (int64_t)blockIdx.x * g_rpb + (int64_t)((threadIdx.x & ~31u) / (unsigned)g_tpr); g_row0 < %s; g_row0 += (int64_t)gridDim.x * g_rpb) {", rows);
        b->indent++;
        be_line(b, "const int64_t g_row = g_row0 + (int64_t)((threadIdx.x & 31u) / (unsigned)g_tpr);");
        be_line(b, "const int64_t g_m = g_row < %s ? %s : 0;  /* the row's length */", rows, cols);
        be_line(b, "const int64_t g_rb = g_row * %s;  (void)g_rb;  /* the row's first element (unread when the map reads no array) */", cols);
    }
    const char *cols0 = cols;
    const char *store_cond = be_strf(&c->x, "g_lane == 0 && g_row < %s%s", rows, cl ? " && g_rank == 0" : "");
    int body_memo = c->x.nmemo;  /* ROW EARLY READS' bindings end with the row's body */
    RowEarly early;
    row_early_reads(c, s, store_cond, &early);
    cols = "g_m";  /* the loops below run over the row's length */
    for (int r = 0; r < s->nreds; r++) { declare_ne(c, &s->reds[r], racc[r]); }
    if (k->vectorize) {
        int esz = ir_scalar_size(s->ins[0]->elem);
        if (whole) {
            be_line(b, "const int64_t g_head = 0;  /* no head, no tail: the launcher checked */");
            be_line(b, "const int64_t g_nv = %s / %d;", cols, k->vec);
        } else {
            be_line(b, "/* elements before the row's first 16-byte boundary, vectors, and the tail */");
            be_line(b, "int64_t g_head = g_vec ? (int64_t)(((16u - ((unsigned)(uintptr_t)(%s + g_rb) & 15u)) & 15u) / %du) : %s;", be_vname(s->ins[0]), esz, cols);
            be_line(b, "if (g_head > %s) {", cols);
            be_line(b, "    g_head = %s;", cols);
            be_line(b, "}");
            be_line(b, "const int64_t g_nv = (%s - g_head) / %d;", cols, k->vec);
        }
        be_line(b, "/* the row's vectors: 64-bit pointers once per row, 32-bit indices into the registers' and the stash's part */");
        for (int i = 0; i < s->nins; i++) {
            const char *tn = ir_scalar_name(s->ins[i]->elem);
            be_line(b, "const gpuc_v16_%s *g_pv%d = (const gpuc_v16_%s *)(%s + g_rb + g_head);", tn, i, tn, be_vname(s->ins[i]));
        }
        for (int r = 0; post && r < s->post->nres; r++) {
            const char *tn = ir_scalar_name(s->outs[nred + r]->elem);
            be_line(b, "gpuc_v16_%s *g_pw%d = (gpuc_v16_%s *)(%s + g_rb + g_head);", tn, r, tn, be_vname(s->outs[nred + r]));
        }
        if (post && row_prefetch) { be_printf(b, "#if %s < 2\n", row_persist); }
        if (post) { declare_regs(c, k, k->items, "g_c"); }
        if (post && row_prefetch) { be_printf(b, "#endif\n"); }
        if (st.on) {
            be_line(b, "const int g_se = (int)(g_nv < (int64_t)g_s1 ? g_nv : (int64_t)g_s1);  /* the stash's end in this row */");
            row_bulk_issue(c, k, id, false);
        }
        if (sm) {
            IrScalar t = s->reds[0].op->ptypes[0];
            be_line(b, "%s g_mx = %s;  /* the row's maximum: the stash's first */", ct(t), t == IR_F32 ? "(-gpuc_inff())" : "(-gpuc_inf())");
        }
        be_line(b, "/* phase 1: reduce the row */");
        if (!whole) { row_scalar_loop(c, s, "g_lane", "g_col < g_head", "g_tpr", false, racc); }
        row_vectors(c, k, false, sm, racc);
        if (!whole) { row_scalar_loop(c, s, be_strf(&c->x, "g_head + g_nv * %d + g_lane", k->vec), be_strf(&c->x, "g_col < %s", cols), "g_tpr", false, racc); }
    } else if (k->ordered) {
        be_line(b, "/* phase 1: reduce the row, a contiguous run per thread (operator not commutative) */");
        be_line(b, "const int64_t g_run = (%s + g_tpr - 1) / g_tpr;", cols);
        row_scalar_loop(c, s, "(int64_t)g_lane * g_run", be_strf(&c->x, "g_col < %s && g_col < (int64_t)(g_lane + 1) * g_run", cols), "1", false, racc);
    } else {
        be_line(b, "/* phase 1: reduce the row, strided over the lanes (commutative operators) */");
        row_scalar_loop(c, s, "g_lane", be_strf(&c->x, "g_col < %s", cols), "g_tpr", false, racc);
    }
    if (sm) {
        row_softmax_regs(c, k, id, racc[0]);
    } else if (row_pair_ok(k)) {
        be_printf(b, "#if GPUC_ROW_PAIR_FOLD\n");
        row_pair_combine(c, s, id, racc[0]);
        be_printf(b, "#else\n");
        row_allreduce(c, s, id, racc);
        be_printf(b, "#endif\n");
    } else {
        row_allreduce(c, s, id, racc);
    }
    if (cl) { row_cluster_combine(c, s, id, racc); }
    be_line(b, "if (%s) {", store_cond);
    b->indent++;
    int o = 0;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++, o++) {
            /* a result only the post or the per-row map reads is not stored */
            if (row_result_live(s, o)) { be_line(b, "%s[g_row] = %s;", be_vname(s->outs[o]), racc[r][j]); }
        }
    }
    if (early.n) { row_early_reads_late(c, &early); }
    if (s->per_row) { row_per_row(c, s, racc); }
    b->indent--;
    be_line(b, "}");
    if (post) {
        int memo = c->x.nmemo;
        be_line(b, "/* the post's row-invariant parts, once per row */");
        row_post_hoist(c, s, racc);
        if (row_prefetch) { row_next_geometry(c, k, rows, cols0); }
        be_line(b, "/* phase 2: the post at every element of the row */");
        if (k->vectorize) {
            if (!whole) { row_scalar_loop(c, s, "g_lane", "g_col < g_head", "g_tpr", true, racc); }
            row_vectors(c, k, true, false, racc);
            if (!whole) { row_scalar_loop(c, s, be_strf(&c->x, "g_head + g_nv * %d + g_lane", k->vec), be_strf(&c->x, "g_col < %s", cols), "g_tpr", true, racc); }
        } else {
            row_scalar_loop(c, s, "g_lane", be_strf(&c->x, "g_col < %s", cols), "g_tpr", true, racc);
        }
        c->x.nmemo = memo;
    }
    c->x.nmemo = body_memo;
    b->indent--;
    be_line(b, "}");
    if (cl) {
        be_line(b, "gpuc_cluster_sync();  /* no block leaves while another reads its shared memory */");
        be_printf(b, "#endif\n");
        row_col = "g_col";
    }
    row_prefetch = false;
    row_persist = "GPUC_ROW_PERSIST";
    acc_free(s, racc);
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}


/* ---- ROW STREAM: NAME_st, long rows as one stream of chunks ----
 * (bench/try_softmax_stream.cu's softmax_ws, made generic.)  The matrix is
 * a flat sequence of chunks of ROW_STREAM_CHUNK elements, a whole number a
 * row (g_ppr); a persistent grid of the blocks resident at once takes chunk
 * c on block c % grid at step c / grid.  A block's warps specialize:
 * ROW_STREAM_NC consumers, one publisher, ROW_STREAM_GW gatherers and one
 * producer thread, meeting on mbarriers per ring slot: full (the producer's
 * bulk copy of the chunk landed), pready (the consumers' per-warp partials
 * are in shared memory), totready (the row's totals are), done (the post
 * has read the chunk: the producer reloads the slot).  The publisher
 * combines the warps' partials into the chunk's and stores it to global
 * scratch [chunk][component] (8-byte words), then counts it on the row's
 * counter; a gatherer waits until the row's counter is its chunk count,
 * combines the row's partials in chunk order and hands the totals to the
 * consumers, which apply the post to the chunk ROW_STREAM_LAG chunks after
 * folding it, storing its values to the output from registers (ROW STREAM
 * DIRECT; softmax's post scales the fold's exponentials: ROW STREAM EXP
 * REUSE, cuda_emit.h).  Each element is read once from
 * DRAM and written once.  Separate publisher and gatherer warps: one warp
 * doing both cost 40% (H100).  Measured on an H200 (2026-11-28, session
 * 12, rows of 262144, bench/last_run/issue16-session12/): the release
 * reduction took 606 us where __threadfence() and atomicAdd took 629, and
 * tagged words polled by the gatherers (no count at all) 651; the ring's
 * 128-byte alignment took the L2 read requests from 2.4x the ideal to 1x
 * (708 to 651 us with the tags).  Deadlock-free when the whole grid is
 * resident and a row spans at most ROW_STREAM_LAG steps of it (the
 * launcher checks both): a gather waits only on publishes of steps at
 * most LAG ahead, and a publish at step j waits only on gathers of steps
 * before j - LAG.  The partials' words carry a tag where every component is
 * 4 bytes (ROW STREAM TAGS, cuda_emit.h: relaxed stores, count and loads);
 * else the count is a release reduction (gpuc_st_count) and the
 * gatherers' wait an acquire. */

/* A consumer lane folds vectors 32 apart (no bank conflicts in the ring):
 * right for the commutative operators only, which a vectorized row kernel
 * has (ir/to_kernels.c); the publisher and the gatherers combine in warp
 * and chunk order all the same. */
bool row_stream_ok(const IrKernel *k) {
    const IrStmt *s = k->stmt;
    int nred = ir_stmt_red_width(s);
    return s->post && k->vectorize && row_stash(k).on && !s->per_row && s->nins == 1 && s->ins[0]->rank == 2 &&
           s->post->nres == 1 && s->nouts == nred + 1 && s->outs[nred]->elem == s->ins[0]->elem && s->ins[0]->elem != IR_BOOL &&
           ir_scalar_size(s->ins[0]->elem) == 4 && k->vec * 4 == 16;
}

/* Whether result o of s is stored (cuda_emit.h, ROW DEAD RESULTS): every
 * result but a row reduction's that only its post or per-row map reads. */
bool row_result_live(const IrStmt *s, int o) {
    return !(s->kind == IR_S_SEGRED && (s->post || s->per_row) && o < ir_stmt_red_width(s)) || s->outs[o]->nuses > 0;
}

const char *row_stream_name(CuEmit *c, const IrKernel *k) { return be_strf(&c->x, "%s_st", k->name); }

/* ROW STREAM TAGS: whether the chunks' partials go out tagged (cuda_emit.h):
 * every component 4 bytes, so that its 8-byte word has room for the tag. */
bool row_stream_tagged(const IrKernel *k) {
    const IrStmt *s = k->stmt;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) {
            if (ir_scalar_size(s->reds[r].op->ptypes[j]) != 4) { return false; }
        }
    }
    return true;
}

/* The stream kernel's static shared memory with `slots` slots: four
 * mbarriers a slot, the consumers' warp partials and the row's totals a
 * slot; and up to 128 bytes before the ring, which starts on a 128-byte
 * boundary. */
static int static_shared_of(const IrKernel *k, int slots) {
    const IrStmt *s = k->stmt;
    int bytes = 4 * slots * 8 + 128;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { bytes += slots * (ROW_STREAM_NC + 1) * ir_scalar_size(s->reds[r].op->ptypes[j]); }
    }
    return bytes;
}

/* The ring's slots (cuda_emit.h: the choice and its measurements). */
int row_stream_slots(const IrKernel *k) {
    const IrValue *reads[ROW_BIG_READS];
    int slots = row_big_reads(k, reads) > 0 ? ROW_STREAM_SLOTS_READS : ROW_STREAM_SLOTS;
    const int slot_bytes = ROW_STREAM_CHUNK * ir_scalar_size(k->stmt->ins[0]->elem);
    while (slots > ROW_STREAM_MIN_SLOTS && slots * slot_bytes + static_shared_of(k, slots) > ROW_STREAM_SHARED_MAX) { slots--; }
    return slots;
}

int row_stream_static_shared(const IrKernel *k) { return static_shared_of(k, row_stream_slots(k)); }

/* The stream kernel's helpers (PTX, so that NVRTC needs no header; shared
 * addresses by the prelude's gpuc_smem32). */
static void row_stream_helpers(CuEmit *c, bool tagged) {
    be_printf(c->b, "#ifndef GPUC_ROW_STREAM_HELPERS\n#define GPUC_ROW_STREAM_HELPERS\n"
                    "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
                    "static __device__ __forceinline__ void gpuc_st_bar_init(unsigned long long *bar, unsigned count) {\n"
                    "    asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], %%1;\" :: \"r\"(gpuc_smem32(bar)), \"r\"(count) : \"memory\");\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_st_arrive(unsigned long long *bar) {\n"
                    "    asm volatile(\"mbarrier.arrive.release.cta.shared::cta.b64 _, [%%0];\" :: \"r\"(gpuc_smem32(bar)) : \"memory\");\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_st_wait(unsigned long long *bar, unsigned parity) {\n"
                    "    unsigned done;\n"
                    "    do {\n"
                    "        asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%%1], %%2; selp.u32 %%0, 1, 0, p; }\"\n"
                    "                     : \"=r\"(done) : \"r\"(gpuc_smem32(bar)), \"r\"(parity) : \"memory\");\n"
                    "    } while (!done);\n"
                    "}\n"
                    "/* a bulk copy of `bytes` from global memory into shared memory, completing on bar; the fence\n"
                    " * orders the block's earlier accesses of dst (generic proxy, seen through done) before its writes */\n"
                    "static __device__ __forceinline__ void gpuc_st_load(void *dst, const void *src, unsigned bytes, unsigned long long *bar) {\n"
                    "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
                    "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" :: \"r\"(gpuc_smem32(bar)), \"r\"(bytes) : \"memory\");\n"
                    "    asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%0], [%%1], %%2, [%%3];\"\n"
                    "                 :: \"r\"(gpuc_smem32(dst)), \"l\"(src), \"r\"(bytes), \"r\"(gpuc_smem32(bar)) : \"memory\");\n"
                    "}\n"
                    "#endif\n#endif\n");
    /* the exchange's helpers: only those of the protocol the kernel uses (an unused static
     * function is an NVRTC warning) */
    if (tagged) {
        be_printf(c->b, "#ifndef GPUC_ROW_STREAM_TAGS\n#define GPUC_ROW_STREAM_TAGS\n#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
                    "/* ROW STREAM TAGS: a 4-byte component and the tag 1 in the high half of its 8-byte word (zeroed\n"
                    " * at the launch), one single-copy-atomic store: a word read with its tag holds its component,\n"
                    " * so no fence orders it before the count, which only says when to look */\n"
                    "template <typename T> static __device__ __forceinline__ void gpuc_st_put_tagged(unsigned long long *p, T v) {\n"
                    "    unsigned u;\n"
                    "    memcpy(&u, &v, 4);\n"
                    "    asm volatile(\"st.relaxed.gpu.global.u64 [%%0], %%1;\" :: \"l\"(p), \"l\"((1ull << 32) | u) : \"memory\");\n"
                    "}\n"
                    "template <typename T> static __device__ __forceinline__ T gpuc_st_get_tagged(const unsigned long long *p) {\n"
                    "    unsigned long long w;\n"
                    "    for (;;) {  /* counted but not yet seen: rare */\n"
                    "        asm volatile(\"ld.relaxed.gpu.global.u64 %%0, [%%1];\" : \"=l\"(w) : \"l\"(p) : \"memory\");\n"
                    "        if ((w >> 32) == 1u) { break; }\n"
                    "        __nanosleep(32);\n"
                    "    }\n"
                    "    const unsigned u = (unsigned)w;\n"
                    "    T v;\n"
                    "    memcpy(&v, &u, 4);\n"
                    "    return v;\n"
                    "}\n"
                    "static __device__ __forceinline__ void gpuc_st_count_relaxed(unsigned *p) {\n"
                    "    asm volatile(\"red.relaxed.gpu.global.add.u32 [%%0], 1;\" :: \"l\"(p) : \"memory\");\n"
                    "}\n"
                    "static __device__ __forceinline__ unsigned gpuc_st_peek(const unsigned *p) {\n"
                    "    unsigned v;\n"
                    "    asm volatile(\"ld.relaxed.gpu.global.u32 %%0, [%%1];\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
                    "    return v;\n"
                    "}\n"
                    "#endif\n#endif\n");
        return;
    }
    be_printf(c->b, "#ifndef GPUC_ROW_STREAM_RELEASE\n#define GPUC_ROW_STREAM_RELEASE\n#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
                    "/* one more on the row's counter, ordered after this thread's stores of the partial (a release\n"
                    " * reduction: no __threadfence, which cost 4%% of row softmax at rows of 262144 on an H200) */\n"
                    "static __device__ __forceinline__ void gpuc_st_count(unsigned *p) {\n"
                    "    asm volatile(\"red.release.gpu.global.add.u32 [%%0], 1;\" :: \"l\"(p) : \"memory\");\n"
                    "}\n"
                    "static __device__ __forceinline__ unsigned gpuc_st_acquire(const unsigned *p) {\n"
                    "    unsigned v;\n"
                    "    asm volatile(\"ld.acquire.gpu.global.u32 %%0, [%%1];\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
                    "    return v;\n"
                    "}\n"
                    "/* a partial's component in an 8-byte word of the scratch, past L1 both ways */\n"
                    "template <typename T> static __device__ __forceinline__ void gpuc_st_put(unsigned long long *p, T v) {\n"
                    "    unsigned long long w = 0;\n"
                    "    memcpy(&w, &v, sizeof v);\n"
                    "    __stcg(p, w);\n"
                    "}\n"
                    "template <typename T> static __device__ __forceinline__ T gpuc_st_get(const unsigned long long *p) {\n"
                    "    const unsigned long long w = __ldcg(p);\n"
                    "    T v;\n"
                    "    memcpy(&v, &w, sizeof v);\n"
                    "    return v;\n"
                    "}\n"
                    "#endif\n#endif\n");
}

/* racc = `fmt` (a format with the reduction, the component) for every
 * component, declared. */
static void row_stream_declare(CuEmit *c, IrStmt *s, char ***racc, const char *fmt) {
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) {
            const char *t = ct(s->reds[r].op->ptypes[j]);
            const char *ne = be_expr(&c->x, s->reds[r].ne[j]);
            be_line(c->b, "%s %s = %s;", t, racc[r][j], be_strf(&c->x, fmt, r, j, t, ne));
        }
    }
}

/* The geometry of the consumer warp's part of chunk g_k (slot g_s): its
 * row, its first column (g_head), its vectors in the ring (g_pv0), and
 * where its vectors go (g_pw0): back into the ring, or with `out` (the
 * post) to the output matrix out. */
static void row_stream_part(CuEmit *c, IrKernel *k, const char *tn, const char *out) {
    BeBuf *b = c->b;
    const int part = ROW_STREAM_CHUNK / ROW_STREAM_NC;
    be_line(b, "const int64_t g_ch = (int64_t)blockIdx.x + g_k * g_grid;");
    be_line(b, "const int64_t g_row = g_ch / g_ppr;  (void)g_row;");
    be_line(b, "const int64_t g_head = (g_ch %% g_ppr) * %d + g_warp * %d;  (void)g_head;  /* the warp's first column */", ROW_STREAM_CHUNK, part);
    be_line(b, "gpuc_v16_%s *const g_pv0 = g_ring + g_s * %d + g_warp * %d;", tn, ROW_STREAM_CHUNK / k->vec, part / k->vec);
    if (out) {
        be_line(b, "gpuc_v16_%s *const g_pw0 = (gpuc_v16_%s *)(%s + g_ch * %d + g_warp * %d);", tn, tn, out, ROW_STREAM_CHUNK, part);
    } else {
        be_line(b, "gpuc_v16_%s *const g_pw0 = g_pv0;  (void)g_pw0;", tn);
    }
}

/* ROW STREAM EXP REUSE (cuda_emit.h): the post's exp(v - max) node where
 * the stream kernel reuses the fold's exponentials, else NULL. */
static const IrExpr *row_stream_exp_node(const IrKernel *k) {
    const IrStmt *s = k->stmt;
    if (!row_softmax_regs_ok(k) || s->reds[0].op->ptypes[0] != IR_F32 || s->ins[0]->elem != IR_F32) { return NULL; }
    return row_exp_reuse_node(k);
}

/* ROW STREAM EXP REUSE's fold of the warp's part of a chunk (registers
 * g_a<u>, n vectors a lane): the warp's maximum (a butterfly), then each
 * element's exp(v - it) summed (weighted) and left in its register, which
 * goes back into the ring; acc: the warp's (max, sum) pair. */
static void row_stream_reuse_fold(CuEmit *c, IrKernel *k, const IrExpr *node, int n, char **acc) {
    BeBuf *b = c->b;
    be_line(b, "/* ROW STREAM EXP REUSE: the warp's maximum, then exp(v - it), summed and left in the ring for the post */");
    be_line(b, "float g_mx = (-gpuc_inff());");
    row_uses(c, k, n, "g_lane", "g_a", ROW_MAX, "g_nv", NULL);
    be_line(b, "for (int g_off = 1; g_off < 32; g_off <<= 1) {");
    be_line(b, "    g_mx = fmaxf(g_mx, gpuc_shfl_xor(g_mx, g_off));");
    be_line(b, "}");
    be_line(b, "const bool g_minf = g_mx == (-gpuc_inff());");
    be_line(b, "float g_sum = 0.0f;");
    row_exp_stream = true;
    row_exp_node = node;
    row_uses(c, k, n, "g_lane", "g_a", ROW_SUMEXP, "g_nv", NULL);
    row_exp_stream = false;
    row_exp_node = NULL;
    be_line(b, "for (int g_off = 1; g_off < 32; g_off <<= 1) {");
    be_line(b, "    g_sum += gpuc_shfl_xor(g_sum, g_off);");
    be_line(b, "}");
    for (int u = 0; u < n; u++) {
        be_line(b, "if (g_lane + %d * g_tpr < g_nv) {", u);
        be_line(b, "    g_pw0[g_lane + %d * g_tpr] = g_a%d_0;", u, u);
        be_line(b, "}");
    }
    be_line(b, "const float %s = g_mx;", acc[0]);
    be_line(b, "const float %s = g_sum;", acc[1]);
}

static void emit_row_stream(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    const int S = row_stream_slots(k), NC = ROW_STREAM_NC, GW = ROW_STREAM_GW, L = ROW_STREAM_LAG, CH = ROW_STREAM_CHUNK;
    const int V = CH / NC / k->vec / 32;  /* vectors a consumer lane a chunk */
    const int W = ir_stmt_red_width(s);
    const char *tn = ir_scalar_name(s->ins[0]->elem);
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kp_add(c, &p, "const int g_ppr", "g_ppr");
    kp_add(c, &p, "unsigned long long *__restrict__ g_sparts", "g_sparts");
    kp_add(c, &p, "unsigned *__restrict__ g_scnt", "g_scnt");
    row_stream_helpers(c, row_stream_tagged(k));
    const IrValue *col_reads[ROW_BIG_READS];
    if (row_big_reads(k, col_reads) > 0) {
        be_printf(b, "#ifndef GPUC_ROW_COL_VECTORS\n#define GPUC_ROW_COL_VECTORS 1  /* -DGPUC_ROW_COL_VECTORS=0: the post's reads at the column as scalars (a comparison; rows.c, grep \"ROW COL VECTORS\") */\n#endif\n");
    }
    kernel_comment(c, k);
    be_printf(b, "/* (rows.c, grep \"ROW STREAM\") chunks of %d elements through a ring of %d slots; %d consumer warps, a publisher, %d gatherers, a producer */\n",
              CH, S, NC, GW);
    signature_attrs(c, k, &p, be_strf(&c->x, "__launch_bounds__(%d, 1)", ROW_STREAM_THREADS));
    be_printf(b, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900\n    __trap();  /* the launcher takes this kernel on sm_90 on only */\n#else\n");
    char ***racc = acc_names(c, s);
    int id = shared_id++;
    be_line(b, "extern __shared__ __align__(128) gpuc_v16_f32 gpuc_stash[];  /* the ring: %d slots of a chunk, 128-byte aligned (bulk copies of whole lines) */", S);
    be_line(b, "gpuc_v16_%s *const g_ring = (gpuc_v16_%s *)gpuc_stash;", tn, tn);
    be_line(b, "__shared__ unsigned long long g_full%d[%d], g_pready%d[%d], g_totready%d[%d], g_done%d[%d];", id, S, id, S, id, S, id, S);
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) {
            be_line(b, "__shared__ %s g_red%d_%d_%d[%d][%d];  /* the consumer warps' partials */", ct(s->reds[r].op->ptypes[j]), id, r, j, S, NC);
            be_line(b, "__shared__ %s g_tot%d_%d_%d[%d];  /* the row's totals */", ct(s->reds[r].op->ptypes[j]), id, r, j, S);
        }
    }
    be_line(b, "const int g_warp = (int)(threadIdx.x >> 5), g_lane = (int)(threadIdx.x & 31u);");
    be_line(b, "const int g_tpr = 32, g_wl = 32;  /* a warp's lanes, in order (row_loads, warp_allreduce) */");
    be_line(b, "const int64_t g_grid = (int64_t)gridDim.x;");
    be_line(b, "const int64_t g_nch = %s * (int64_t)g_ppr;  /* chunks of the matrix */", be_vname(s->w[0]));
    be_line(b, "const int64_t g_nb = g_nch > (int64_t)blockIdx.x ? (g_nch - (int64_t)blockIdx.x + g_grid - 1) / g_grid : 0;  /* this block's */");
    be_line(b, "if (threadIdx.x == 0) {");
    be_line(b, "    for (int g_s = 0; g_s < %d; g_s++) {", S);
    be_line(b, "        gpuc_st_bar_init(&g_full%d[g_s], 1u);", id);
    be_line(b, "        gpuc_st_bar_init(&g_pready%d[g_s], %du);", id, NC);
    be_line(b, "        gpuc_st_bar_init(&g_totready%d[g_s], 1u);", id);
    be_line(b, "        gpuc_st_bar_init(&g_done%d[g_s], %du);", id, NC * 32);
    be_line(b, "    }");
    be_line(b, "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");");
    be_line(b, "}");
    be_line(b, "__syncthreads();");

    /* the consumers */
    be_line(b, "if (g_warp < %d) {", NC);
    b->indent++;
    const IrExpr *reuse = row_stream_exp_node(k);
    const char *out = be_strf(&c->x, "%s", be_vname(s->outs[W]));
    be_line(b, "/* consumers: fold chunk g_j, then apply the post to chunk g_j - %d, to the output */", L);
    be_line(b, "const int64_t g_nv = %d;  /* the warp's vectors of a chunk */", CH / NC / k->vec);
    be_line(b, "for (int64_t g_j = 0; g_j < g_nb + %d; g_j++) {", L);
    b->indent++;
    be_line(b, "if (g_j < g_nb) {");
    b->indent++;
    int memo = c->x.nmemo;
    be_line(b, "const int64_t g_k = g_j;");
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_st_wait(&g_full%d[g_s], (unsigned)((g_k / %d) & 1));", id, S);
    row_stream_part(c, k, tn, NULL);
    declare_regs(c, k, V, "g_a");
    row_loads(c, k, V, "g_lane", "g_a", "g_nv", false);
    if (reuse) {
        row_stream_reuse_fold(c, k, reuse, V, racc[0]);
    } else {
        for (int r = 0; r < s->nreds; r++) { declare_ne(c, &s->reds[r], racc[r]); }
        if (row_softmax_regs_ok(k)) {
            row_pair_group(c, k, V, "g_lane", "g_a", racc[0]);
        } else {
            row_uses(c, k, V, "g_lane", "g_a", ROW_FOLD, "g_nv", racc);
        }
        warp_allreduce(c, s, racc);
    }
    be_line(b, "if (g_lane == 0) {");
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "    g_red%d_%d_%d[g_s][g_warp] = %s;", id, r, j, racc[r][j]); }
    }
    be_line(b, "    gpuc_st_arrive(&g_pready%d[g_s]);", id);
    be_line(b, "}");
    c->x.nmemo = memo;
    b->indent--;
    be_line(b, "}");
    be_line(b, "if (g_j >= %d) {", L);
    b->indent++;
    be_line(b, "const int64_t g_k = g_j - %d;", L);
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_st_wait(&g_totready%d[g_s], (unsigned)((g_k / %d) & 1));", id, S);
    row_stream_part(c, k, tn, out);
    row_stream_declare(c, s, racc, be_strf(&c->x, "g_tot%d_%%d_%%d[g_s]", id));
    if (reuse) {
        /* the warp's maximum at the fold, still in the slot's partials (the slot's next fold comes after this post) */
        be_line(b, "const float g_mw = g_red%d_0_0[g_s][g_warp];", id);
        be_line(b, "const float g_sc = g_mw == gpuc_inff() && %s == gpuc_inff() ? 1.0f : expf(g_mw - %s);  /* exp(x - max) = g_a * g_sc */",
                racc[0][0], racc[0][0]);
    }
    be_line(b, "/* the post's row-invariant parts, once per chunk */");
    row_post_hoist(c, s, racc);
    declare_regs(c, k, V, "g_a");
    row_loads(c, k, V, "g_lane", "g_a", "g_nv", false);
    be_line(b, "gpuc_st_arrive(&g_done%d[g_s]);  /* the slot read (a release): the producer may reload it */", id);
    row_exp_stream = reuse != NULL;
    row_exp_node = reuse;
    row_uses(c, k, V, "g_lane", "g_a", ROW_POST, "g_nv", racc);
    row_exp_stream = false;
    row_exp_node = NULL;
    c->x.nmemo = memo;
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    b->indent--;

    /* the publisher */
    be_line(b, "} else if (g_warp == %d) {", NC);
    b->indent++;
    be_line(b, "/* the publisher: each chunk's partial, from the consumer warps' in warp order, to the scratch; then counted on its row */");
    be_line(b, "for (int64_t g_k = 0; g_k < g_nb; g_k++) {");
    b->indent++;
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_st_wait(&g_pready%d[g_s], (unsigned)((g_k / %d) & 1));", id, S);
    row_stream_declare(c, s, racc, be_strf(&c->x, "g_lane < %d ? g_red%d_%%d_%%d[g_s][g_lane] : (%%s)%%s", NC, id));
    warp_allreduce(c, s, racc);
    be_line(b, "if (g_lane == 0) {");
    b->indent++;
    be_line(b, "const int64_t g_ch = (int64_t)blockIdx.x + g_k * g_grid;");
    const bool tagged = row_stream_tagged(k);
    for (int r = 0, at = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++, at++) {
            be_line(b, "gpuc_st_put%s(&g_sparts[g_ch * %d + %d], %s);", tagged ? "_tagged" : "", W, at, racc[r][j]);
        }
    }
    if (tagged) {
        be_line(b, "gpuc_st_count_relaxed(&g_scnt[g_ch / g_ppr]);  /* when to look (the words carry their tags) */");
    } else {
        be_line(b, "gpuc_st_count(&g_scnt[g_ch / g_ppr]);  /* after the partial (release) */");
    }
    b->indent--;
    be_line(b, "}");
    c->x.nmemo = memo;
    b->indent--;
    be_line(b, "}");
    b->indent--;

    /* the gatherers */
    be_line(b, "} else if (g_warp <= %d) {", NC + GW);
    b->indent++;
    be_line(b, "/* gatherers, chunks in turn: wait for the chunk's row to be published, combine its partials in chunk order (a lane a run, then the lanes in order) */");
    be_line(b, "for (int64_t g_k = g_warp - %d; g_k < g_nb; g_k += %d) {", NC + 1, GW);
    b->indent++;
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "const int64_t g_ch = (int64_t)blockIdx.x + g_k * g_grid;");
    be_line(b, "const int64_t g_row = g_ch / g_ppr;");
    be_line(b, "while (%s(&g_scnt[g_row]) < (unsigned)g_ppr) {", tagged ? "gpuc_st_peek" : "gpuc_st_acquire");
    be_line(b, "    __nanosleep(64);");
    be_line(b, "}");
    for (int r = 0; r < s->nreds; r++) { declare_ne(c, &s->reds[r], racc[r]); }
    be_line(b, "const int g_run = (g_ppr + 31) / 32;");
    be_line(b, "for (int g_p = g_lane * g_run; g_p < g_ppr && g_p < (g_lane + 1) * g_run; g_p++) {");
    b->indent++;
    be_line(b, "const unsigned long long *g_pp = g_sparts + (g_row * g_ppr + g_p) * %d;", W);
    for (int r = 0, at = 0; r < s->nreds; r++) {
        IrOperator *op = &s->reds[r];
        char **o = names(c, "g_p%d_%d", r, op->arity);
        for (int j = 0; j < op->arity; j++, at++) {
            be_line(b, "const %s %s = gpuc_st_get%s<%s>(g_pp + %d);", ct(op->op->ptypes[j]), o[j], tagged ? "_tagged" : "", ct(op->op->ptypes[j]), at);
        }
        apply_op(c, op, racc[r], (const char *const *)racc[r], (const char *const *)o, false);
        free(o);
    }
    b->indent--;
    be_line(b, "}");
    warp_allreduce(c, s, racc);
    be_line(b, "if (g_lane == 0) {");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "g_tot%d_%d_%d[g_s] = %s;", id, r, j, racc[r][j]); }
    }
    be_line(b, "if (g_ch %% g_ppr == 0) {  /* the row's first chunk stores the row's results */");
    for (int r = 0, o = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++, o++) {
            if (row_result_live(s, o)) { be_line(b, "    %s[g_row] = %s;", be_vname(s->outs[o]), racc[r][j]); }
        }
    }
    be_line(b, "}");
    be_line(b, "gpuc_st_arrive(&g_totready%d[g_s]);", id);
    b->indent--;
    be_line(b, "}");
    c->x.nmemo = memo;
    b->indent--;
    be_line(b, "}");
    b->indent--;

    /* the producer */
    const char *in = be_strf(&c->x, "%s", be_vname(s->ins[0]));
    int bytes = CH * ir_scalar_size(s->ins[0]->elem);
    be_line(b, "} else if (g_lane == 0) {");
    b->indent++;
    be_line(b, "/* the producer: the first %d chunks into the ring; then each slot, once its post has read it, reloaded with the chunk %d on */", S, S);
    be_line(b, "for (int64_t g_k = 0; g_k < %d && g_k < g_nb; g_k++) {", S);
    be_line(b, "    gpuc_st_load(g_ring + g_k * %d, %s + ((int64_t)blockIdx.x + g_k * g_grid) * %d, %du, &g_full%d[g_k]);", CH / k->vec, in, CH, bytes, id);
    be_line(b, "}");
    be_line(b, "for (int64_t g_k = 0; g_k + %d < g_nb; g_k++) {", S);
    b->indent++;
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_st_wait(&g_done%d[g_s], (unsigned)((g_k / %d) & 1));", id, S);
    be_line(b, "gpuc_st_load(g_ring + g_s * %d, %s + ((int64_t)blockIdx.x + (g_k + %d) * g_grid) * %d, %du, &g_full%d[g_s]);", CH / k->vec, in, S, CH, bytes, id);
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#endif\n");
    acc_free(s, racc);
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* A row reduction's kernel; with a stash (a post over 16-byte vectors), a
 * second one, NAME_regs, for rows its registers hold (grep "ROW REGS"):
 * the same code without the stash and the loop beyond the registers, so it
 * takes fewer registers and more blocks fit an SM (the stash kernel's 120
 * registers left rows of 256 at 25% occupancy).  The launcher picks one. */
void emit_segred_row(CuEmit *c, IrKernel *k) {
    bool variants = row_stash(k).on;
    emit_row_kernel(c, k);
    for (int v = 1; variants && v < 5; v++) {
        IrKernel twin = *k;
        row_big_variant = v == 4;
        row_regs_variant = v & 1 || row_big_variant;
        row_cluster_variant = v & 2;
        twin.name = row_big_variant ? row_big_name(c, k) : row_variant_name(c, k, row_regs_variant, row_cluster_variant);
        if (row_big_variant) { twin.block = row_big_block(k); }
        be_expr_reset(&c->x);  /* a new function: no temporaries of the last one */
        emit_row_kernel(c, &twin);
    }
    row_regs_variant = row_cluster_variant = row_big_variant = false;
    row_exp_node = NULL;
    if (row_stream_ok(k)) {
        IrKernel twin = *k;
        twin.name = row_stream_name(c, k);
        be_expr_reset(&c->x);
        emit_row_stream(c, &twin);
    }
    if (variants) {
        /* ROW WARP: inside #if GPUC_ROW_WARP, as its launch */
        IrKernel twin = *k;
        row_warp_variant = row_regs_variant = true;
        twin.name = row_warp_name(c, k);
        twin.block = ROW_WARP_BLOCK;
        twin.items = ROW_WARP_ITEMS;
        be_expr_reset(&c->x);
        row_warp_macro(c);
        be_printf(c->b, "#if GPUC_ROW_WARP\n");
        emit_row_kernel(c, &twin);
        be_printf(c->b, "#endif\n");
        row_warp_variant = row_regs_variant = false;
        row_exp_node = NULL;
    }
}

/* The big-block variant's threads (ROW BIG): ptxas, sm_90: at 1024 (64
 * registers a thread: 32 of the row's values) f32 softmax and LayerNorm
 * take 64 and 60 registers, no spills; f64 softmax spilled 92 bytes, so
 * 8-byte rows take 512 (128 registers). */
int row_big_block(const IrKernel *k) { return ir_scalar_size(k->stmt->ins[0]->elem) == 8 ? 512 : 1024; }

/* ROW WARP. Short rows in the register-only kernel at 8 lanes a row and 8
 * vectors a lane (@items(8)) run at a third of the SM's warps (80
 * registers); at 2 vectors a lane with g_tpr chosen at run time the kernel
 * executed 1.44x torch's instructions (the row's 64-bit head and tail
 * bounds, the shuffle loops' trip counts): 1.3x slower. A warp-a-row
 * prototype with the least per-row work (bench/try_softmax_warp.cu, 28
 * registers, 128 threads a block) ran at the copy rate, 1% ahead of
 * torch.softmax at rows of 256 (H200, 2026-11-29; docs/performance.md,
 * fifteenth round). NAME_warp is that form of the register-only kernel:
 * g_tpr the constant 32, 2 vectors a lane, no head or tail, 128 threads a
 * block. As generated (H200, 2026-11-29, three rounds in turn) it took
 * 510-513 us for softmax at rows of 256 against 518-523 for the part-of-
 * a-warp kernel and 518-529 for torch.softmax; LayerNorm 509-515 against
 * 526-528. So it is on: the kernel and its launch are inside
 * #if GPUC_ROW_WARP, 1 unless gpuc's environment has GPUC_ROW_WARP=0 when
 * it emits (or the build has -DGPUC_ROW_WARP=0). */
void row_warp_macro(CuEmit *c) {
    const char *env = getenv("GPUC_ROW_WARP");
    be_printf(c->b, "#ifndef GPUC_ROW_WARP\n#define GPUC_ROW_WARP %d  /* 1: short aligned rows with a warp a row (NAME_warp; rows.c, grep \"ROW WARP\") */\n#endif\n",
              !(env && strcmp(env, "0") == 0));
}

/* The warp variant's name (ROW WARP): NAME_warp. */
const char *row_warp_name(CuEmit *c, const IrKernel *k) { return be_strf(&c->x, "%s_warp", k->name); }

/* The big-block variant's name (ROW BIG): NAME_big. */
const char *row_big_name(CuEmit *c, const IrKernel *k) { return be_strf(&c->x, "%s_big", k->name); }

/* A variant's name (emit_segred_row): NAME_regs, NAME_cl, NAME_clregs. */
const char *row_variant_name(CuEmit *c, const IrKernel *k, bool regs, bool cluster) {
    return be_strf(&c->x, "%s%s%s", k->name, cluster ? "_cl" : regs ? "_" : "", regs ? "regs" : "");
}
