/* emit_cuda.c: the CUDA C backend.
 *
 * One `extern "C" __global__` function per kernel of the kernel IR, each
 * with a comment naming the .gdsl line and what was fused into it:
 *   map       grid-stride loop, several items per thread written out
 *             (`unroll` copies), 16-byte vector loads/stores when every
 *             array has the same element size and the pointers are aligned
 *   reduce    per-thread sequential reduction, warp shuffles, one value per
 *             warp through shared memory, per-block partials, and the last
 *             block to finish (atomic counter) combines the partials in a
 *             fixed order: deterministic for a given grid
 *   scan      single pass with decoupled look-back (Merrill & Garland):
 *             tiles taken in order from an atomic counter, status X/A/P per
 *             tile packed with the value in one 8- or 16-byte word when the
 *             tuple fits (one relaxed load or store, no fence), else flags
 *             and values published apart with a fence (tuples of any size);
 *             non-commutative operators work (the look-back combines in
 *             order); loads and stores staged through padded shared memory
 *   filter    the same look-back over per-warp counts of kept items (ballots);
 *             kept values go from registers straight to their place
 *   segred    rows (axis 1): a warp or a block per row picked at run time from
 *             the row length, 16-byte vectors from each row's first aligned
 *             element; a post (row softmax) keeps the row in registers and
 *             a stash in dynamic shared memory and writes it once; columns
 *             (axis 0): a thread per column
 *   matmul    a 2-D comprehension whose body is sum(A[i,:] * B[:,j]):
 *             a tile of the result per block in registers (f64 on the
 *             tensor cores on sm_80+, FMA otherwise), double-buffered
 *             slices of A and B through shared memory
 * The file needs no headers under NVRTC.  Compiled by nvcc (or with
 * GPUC_CUDA_HOST) it also has host launchers (CUDA runtime API):
 * gpuc_dev_NAME on device pointers (and gpuc_dev_NAME_into writing
 * caller-allocated results); with GPUC_MAIN as well gpuc_entry_NAME on host
 * arrays and the text main of the C backend (docs/cuda_include.md).
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    BeBuf *b;
    BeExprCtx x;
    IrModule *m;
    IrEntry *e;
} CuEmit;

static const char *ct(IrScalar t) { return ir_scalar_ctype(t); }

/* ---- kernel parameters ---- */
typedef struct {
    int n, cap;
    char **decl;   /* in the kernel signature */
    char **arg;    /* at the launch site (host launcher) */
    IrValue **vals; int nvals, capvals;  /* values already passed */
} KParams;

static void kp_add(CuEmit *c, KParams *p, const char *decl, const char *arg) {
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->decl = realloc(p->decl, sizeof *p->decl * (size_t)p->cap);
        p->arg = realloc(p->arg, sizeof *p->arg * (size_t)p->cap);
        if (!p->decl || !p->arg) { IR_UNREACHABLE("out of memory"); }
    }
    p->decl[p->n] = be_strf(&c->x, "%s", decl);
    p->arg[p->n] = be_strf(&c->x, "%s", arg);
    p->n++;
}

static bool kp_has(KParams *p, IrValue *v) {
    for (int i = 0; i < p->nvals; i++) { if (p->vals[i] == v) { return true; } }
    return false;
}
static void kp_mark(KParams *p, IrValue *v) {
    if (p->nvals == p->capvals) {
        p->capvals = p->capvals ? 2 * p->capvals : 16;
        p->vals = realloc(p->vals, sizeof *p->vals * (size_t)p->capvals);
        if (!p->vals) { IR_UNREACHABLE("out of memory"); }
    }
    p->vals[p->nvals++] = v;
}

typedef struct { CuEmit *c; KParams *p; } KpCtx;

static void kp_value(CuEmit *c, KParams *p, IrValue *v) {
    if (kp_has(p, v) || (v->has_const && !v->name)) { return; }
    kp_mark(p, v);
    char d[160];
    const char *n = be_vname(v);
    if (v->rank) {
        snprintf(d, sizeof d, "const %s *__restrict__ %s", ct(v->elem), n);
        kp_add(c, p, d, n);
        for (int k = 0; k < v->rank; k++) { kp_value(c, p, v->dims[k]); }
    } else {
        snprintf(d, sizeof d, "const %s %s", ct(v->elem), n);
        kp_add(c, p, d, n);
    }
}

static void kp_visit(IrValue *v, void *ctx) {
    KpCtx *k = ctx;
    kp_value(k->c, k->p, v);
}

static void kp_free(KParams *p) { free(p->decl); free(p->arg); free(p->vals); }

/* The inputs, free values and outputs of statement s. */
static void stmt_params(CuEmit *c, IrStmt *s, KParams *p) {
    for (int d = 0; d < s->rank; d++) { if (s->w[d]) { kp_value(c, p, s->w[d]); } }
    for (int i = 0; i < s->nins; i++) { kp_value(c, p, s->ins[i]); }
    if (s->dest) { kp_value(c, p, s->dest); }
    KpCtx k = { c, p };
    ir_stmt_visit_reads(s, kp_visit, &k);
    for (int i = 0; i < s->nscans; i++) { for (int j = 0; j < s->scans[i].arity; j++) { ir_expr_visit_reads(s->scans[i].ne[j], kp_visit, &k); } }
    for (int i = 0; i < s->nreds; i++) { for (int j = 0; j < s->reds[i].arity; j++) { ir_expr_visit_reads(s->reds[i].ne[j], kp_visit, &k); } }
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        char d[160], a[160];
        kp_mark(p, v);
        if (v->rank) {
            snprintf(d, sizeof d, "%s *__restrict__ %s", ct(v->elem), be_vname(v));
            kp_add(c, p, d, be_vname(v));
        } else {
            snprintf(d, sizeof d, "%s *__restrict__ %s_out", ct(v->elem), be_vname(v));
            snprintf(a, sizeof a, "%s_d", be_vname(v));
            kp_add(c, p, d, a);
        }
    }
    /* output dims are read by later statements only; still mark them passed */
}

/* The kernel's signature; min_blocks > 0 asks for that many blocks per SM
 * (__launch_bounds__'s second argument caps the registers to match). */
static void signature_min(CuEmit *c, IrKernel *k, KParams *p, int min_blocks) {
    BeBuf *b = c->b;
    if (min_blocks > 0) {
        be_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d, %d)\n%s(", k->block, min_blocks, k->name);
    } else {
        be_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d)\n%s(", k->block, k->name);
    }
    for (int i = 0; i < p->n; i++) { be_printf(b, "%s%s", i ? ",\n    " : "", p->decl[i]); }
    be_printf(b, ")\n{\n");
    b->indent = 1;
}
static void signature(CuEmit *c, IrKernel *k, KParams *p) { signature_min(c, k, p, 0); }

/* ---- lambda application helpers ---- */
static const char **load_params(CuEmit *c, IrStmt *s, const char *at) {
    const char **pn = calloc((size_t)s->nins + 1, sizeof *pn);
    for (int i = 0; i < s->nins; i++) {
        char *n = be_strf(&c->x, "x%d", i);
        be_line(c->b, "const %s %s = %s[%s];  (void)%s;", ct(s->ins[i]->elem), n, be_vname(s->ins[i]), at, n);
        pn[i] = n;
    }
    return pn;
}

/* dst = op(a, b); declare dst when `declare` */
static void apply_op(CuEmit *c, IrOperator *op, char **dst, const char *const *a, const char *const *b, bool declare) {
    int ar = op->arity;
    const char **args = calloc((size_t)ar * 2 + 1, sizeof *args);
    const char **res = calloc((size_t)ar + 1, sizeof *res);
    for (int k = 0; k < ar; k++) { args[k] = a[k]; args[ar + k] = b[k]; }
    be_lambda(&c->x, op->op, args, res);
    if (!declare && ar > 1) {
        for (int k = 0; k < ar; k++) {
            char *t = be_strf(&c->x, "t%d", c->x.ntmp++);
            be_line(c->b, "const %s %s = %s;", ct(op->op->ptypes[k]), t, res[k]);
            res[k] = t;
        }
    }
    for (int k = 0; k < ar; k++) {
        if (declare) { be_line(c->b, "%s %s = %s;", ct(op->op->ptypes[k]), dst[k], res[k]); }
        else { be_line(c->b, "%s = %s;", dst[k], res[k]); }
    }
    free(args);
    free(res);
}

static char **names(CuEmit *c, const char *fmt, int a, int n) {
    char **r = calloc((size_t)n + 1, sizeof *r);
    for (int k = 0; k < n; k++) { r[k] = be_strf(&c->x, fmt, a, k); }
    return r;
}

static void declare_ne(CuEmit *c, IrOperator *op, char **acc) {
    for (int k = 0; k < op->arity; k++) {
        const char *ne = be_expr(&c->x, op->ne[k]);
        be_line(c->b, "%s %s = %s;", ct(op->op->ptypes[k]), acc[k], ne);
    }
}

/* The accumulator names of a statement's reductions: racc[r][j] is
 * component j of reduction r ("r<r>_<j>"). Free with acc_free. */
static char ***acc_names(CuEmit *c, IrStmt *s) {
    char ***racc = calloc((size_t)s->nreds + 1, sizeof *racc);
    for (int r = 0; r < s->nreds; r++) { racc[r] = names(c, "r%d_%d", r, s->reds[r].arity); }
    return racc;
}

static void acc_free(IrStmt *s, char ***racc) {
    for (int r = 0; r < s->nreds; r++) { free(racc[r]); }
    free(racc);
}

/* ---- block-wide reduction of accumulators racc[r][k] into thread 0 ---- */
static int shared_id;

/* Lane 0 ends with the warp's lanes combined in index order (lower lanes
 * on the left): offsets 1, 2, 4, 8, 16, so that at offset o lane l (a
 * multiple of 2o) combines lanes l .. l+o-1 with l+o .. l+2o-1.  Descending
 * offsets would combine lane 0 with lane 16 first, which only a commutative
 * operator allows; ordered reductions (k->ordered) need this order, and it
 * costs the others nothing.  The other lanes end with values nobody reads. */
static void warp_reduce(CuEmit *c, IrStmt *s, char ***racc) {
    BeBuf *b = c->b;
    be_line(b, "for (int g_off = 1; g_off < 32; g_off <<= 1) {  /* index order: lower lanes on the left */");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        IrOperator *op = &s->reds[r];
        char **o = names(c, "g_o%d_%d", r, op->arity);
        for (int k = 0; k < op->arity; k++) {
            be_line(b, "const %s %s = gpuc_shfl_down(%s, g_off);", ct(op->op->ptypes[k]), o[k], racc[r][k]);
        }
        apply_op(c, op, racc[r], (const char *const *)racc[r], (const char *const *)o, false);
        free(o);
    }
    b->indent--;
    be_line(b, "}");
}

static void block_reduce(CuEmit *c, IrStmt *s, char ***racc, int block) {
    BeBuf *b = c->b;
    int id = shared_id++;
    be_line(b, "/* block reduction: warp shuffles, then one value per warp through shared memory */");
    warp_reduce(c, s, racc);
    for (int r = 0; r < s->nreds; r++) {
        for (int k = 0; k < s->reds[r].arity; k++) {
            be_line(b, "__shared__ %s g_sh%d_%d_%d[32];", ct(s->reds[r].op->ptypes[k]), id, r, k);
        }
    }
    be_line(b, "if ((threadIdx.x & 31) == 0) {");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        for (int k = 0; k < s->reds[r].arity; k++) { be_line(b, "g_sh%d_%d_%d[threadIdx.x >> 5] = %s;", id, r, k, racc[r][k]); }
    }
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "if (threadIdx.x < 32) {");
    b->indent++;
    for (int r = 0; r < s->nreds; r++) {
        for (int k = 0; k < s->reds[r].arity; k++) {
            const char *ne = be_expr(&c->x, s->reds[r].ne[k]);
            be_line(b, "%s = threadIdx.x < %d ? g_sh%d_%d_%d[threadIdx.x] : %s;", racc[r][k], block / 32, id, r, k, ne);
        }
    }
    warp_reduce(c, s, racc);
    b->indent--;
    be_line(b, "}");
}

/* ---- element bodies ---- */
/* Apply the map lambda at index expression `at` (flat) with indices i0/i1;
 * returns the result names. */
static const char **map_body(CuEmit *c, IrStmt *s, const char *at) {
    const char **pn = load_params(c, s, at);
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, pn, res);
    free(pn);
    return res;
}

/* Per element of a map or reduce: write mapped outputs, combine reductions. */
static void element(CuEmit *c, IrStmt *s, const char **res, const char *at, char ***racc) {
    int sw = ir_stmt_scan_width(s), rw = ir_stmt_red_width(s), nm = ir_stmt_nmapped(s);
    int first = s->nouts - nm;
    int pos = sw;
    for (int r = 0; r < s->nreds; r++) {
        apply_op(c, &s->reds[r], racc[r], (const char *const *)racc[r], res + pos, false);
        pos += s->reds[r].arity;
    }
    for (int k = 0; k < nm; k++) { be_line(c->b, "%s[%s] = %s;", be_vname(s->outs[first + k]), at, res[sw + rw + k]); }
}

static void index_names(CuEmit *c, IrStmt *s, const char *flat) {
    if (s->rank == 2) {
        be_line(c->b, "const int64_t g_i0 = %s / %s;", flat, be_vname(s->w[1]));
        be_line(c->b, "const int64_t g_i1 = %s - g_i0 * %s;  (void)g_i1;", flat, be_vname(s->w[1]));
        c->x.idx[0] = "g_i0";
        c->x.idx[1] = "g_i1";
    } else {
        c->x.idx[0] = flat;
        c->x.idx[1] = flat;
    }
}

/* Element g_i of a 1-D kernel: its indices, the map body, and the fold or
 * store of element(). */
static void map_element(CuEmit *c, IrStmt *s, char ***racc) {
    index_names(c, s, "g_i");
    const char **res = map_body(c, s, "g_i");
    element(c, s, res, "g_i", racc);
    free(res);
}

static const char *width_expr(CuEmit *c, IrStmt *s) {
    if (s->rank == 2) { return be_strf(&c->x, "(%s * %s)", be_vname(s->w[0]), be_vname(s->w[1])); }
    return be_strf(&c->x, "%s", be_vname(s->w[0]));
}

/* The grid-stride loop over elements shared by map and reduce kernels. */
static void stride_loops(CuEmit *c, IrKernel *k, char ***racc) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    const char *n = width_expr(c, s);
    int B = k->block, I = k->items, U = k->unroll;
    if (s->nreds && !k->ordered) {
        be_line(b, "/* commutative operators: the elements are folded in any order (strided, vectors) */");
    }
    if (k->vectorize) {
        int V = k->vec, G = I / V;
        int nm = ir_stmt_nmapped(s);
        int first = s->nouts - nm;
        be_line(b, "/* 16-byte vectors of %d: %d per thread in flight */", V, G);
        be_printf(b, "    if (((");
        bool any = false;
        for (int i = 0; i < s->nins; i++) { be_printf(b, "%s(uintptr_t)%s", any ? " | " : "", be_vname(s->ins[i])); any = true; }
        for (int o = 0; o < nm; o++) { be_printf(b, "%s(uintptr_t)%s", any ? " | " : "", be_vname(s->outs[first + o])); any = true; }
        be_printf(b, "%s) & 15) == 0) {\n", any ? "" : "0");
        b->indent++;
        be_line(b, "const int64_t g_nv = %s / %d;", n, V);
        be_line(b, "for (int64_t g_vb = (int64_t)blockIdx.x * %d + threadIdx.x; g_vb < g_nv; g_vb += (int64_t)gridDim.x * %d) {", B * G, B * G);
        b->indent++;
        for (int u = 0; u < G; u++) {
            be_line(b, "/* unrolled copy %d of %d: vector loads */", u + 1, G);
            be_line(b, "const int64_t g_v%d = g_vb + %d;", u, u * B);
            for (int i = 0; i < s->nins; i++) {
                be_line(b, "gpuc_v16_%s g_a%d_%d;", ir_scalar_name(s->ins[i]->elem), i, u);
                be_line(b, "if (g_v%d < g_nv) { g_a%d_%d = ((const gpuc_v16_%s *)%s)[g_v%d]; }", u, i, u, ir_scalar_name(s->ins[i]->elem), be_vname(s->ins[i]), u);
            }
        }
        for (int u = 0; u < G; u++) {
            be_line(b, "if (g_v%d < g_nv) {", u);
            b->indent++;
            for (int o = 0; o < nm; o++) { be_line(b, "gpuc_v16_%s g_w%d;", ir_scalar_name(s->outs[first + o]->elem), o); }
            for (int l = 0; l < V; l++) {
                be_line(b, "{ /* lane %d */", l);
                b->indent++;
                be_line(b, "const int64_t g_i = g_v%d * %d + %d;  (void)g_i;", u, V, l);
                c->x.idx[0] = "g_i";
                c->x.idx[1] = "g_i";
                const char **pn = calloc((size_t)s->nins + 1, sizeof *pn);
                for (int i = 0; i < s->nins; i++) { pn[i] = be_strf(&c->x, "g_a%d_%d.v[%d]", i, u, l); }
                const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
                be_lambda(&c->x, s->map, pn, res);
                int sw = ir_stmt_scan_width(s), rw = ir_stmt_red_width(s), pos = sw;
                for (int r = 0; r < s->nreds; r++) {
                    apply_op(c, &s->reds[r], racc[r], (const char *const *)racc[r], res + pos, false);
                    pos += s->reds[r].arity;
                }
                for (int o = 0; o < nm; o++) { be_line(b, "g_w%d.v[%d] = %s;", o, l, res[sw + rw + o]); }
                free(res);
                free(pn);
                b->indent--;
                be_line(b, "}");
            }
            for (int o = 0; o < nm; o++) {
                be_line(b, "((gpuc_v16_%s *)%s)[g_v%d] = g_w%d;", ir_scalar_name(s->outs[first + o]->elem), be_vname(s->outs[first + o]), u, o);
            }
            b->indent--;
            be_line(b, "}");
        }
        b->indent--;
        be_line(b, "}");
        be_line(b, "/* the tail that does not fill a vector */");
        be_line(b, "for (int64_t g_i = g_nv * %d + (int64_t)blockIdx.x * %d + threadIdx.x; g_i < %s; g_i += (int64_t)gridDim.x * %d) {", V, B, n, B);
        b->indent++;
        c->x.idx[0] = "g_i";
        c->x.idx[1] = "g_i";
        const char **res = map_body(c, s, "g_i");
        element(c, s, res, "g_i", racc);
        free(res);
        b->indent--;
        be_line(b, "}");
        b->indent--;
        be_line(b, "} else {");
        b->indent++;
    }
    if (k->ordered) {
        be_line(b, "/* non-commutative operator: each thread reduces a contiguous chunk, in order */");
        be_line(b, "const int64_t g_threads = (int64_t)gridDim.x * %d;", B);
        be_line(b, "const int64_t g_chunk = (%s + g_threads - 1) / g_threads;", n);
        be_line(b, "const int64_t g_lo = ((int64_t)blockIdx.x * %d + threadIdx.x) * g_chunk;", B);
        be_line(b, "for (int64_t g_i = g_lo; g_i < g_lo + g_chunk && g_i < %s; g_i++) {", n);
        b->indent++;
        map_element(c, s, racc);
        b->indent--;
        be_line(b, "}");
    } else {
        be_line(b, "/* %d threads x %d items, grid-stride, unrolled by %d */", B, I, U);
        be_line(b, "for (int64_t g_base = (int64_t)blockIdx.x * %d + threadIdx.x; g_base < %s; g_base += (int64_t)gridDim.x * %d) {", B * I, n, B * I);
        b->indent++;
        if (I > U) {
            be_line(b, "for (int g_u = 0; g_u < %d; g_u += %d) {", I, U);
            b->indent++;
        }
        for (int u = 0; u < U; u++) {
            be_line(b, "{ /* unrolled copy %d of %d */", u + 1, U);
            b->indent++;
            if (I > U) { be_line(b, "const int64_t g_i = g_base + (int64_t)(g_u + %d) * %d;", u, B); }
            else { be_line(b, "const int64_t g_i = g_base + %d;", u * B); }
            be_line(b, "if (g_i < %s) {", n);
            b->indent++;
            map_element(c, s, racc);
            b->indent--;
            be_line(b, "}");
            b->indent--;
            be_line(b, "}");
        }
        if (I > U) {
            b->indent--;
            be_line(b, "}");
        }
        b->indent--;
        be_line(b, "}");
    }
    if (k->vectorize) {
        b->indent--;
        be_line(b, "}");
    }
}

static void kernel_comment(CuEmit *c, IrKernel *k) {
    be_printf(c->b, "/* %s:%d: %s", c->m->file, k->line, k->name);
    if (k->stmt->note) { be_printf(c->b, "; fused: %s", k->stmt->note); }
    be_printf(c->b, " */\n");
}

static void emit_map(CuEmit *c, IrKernel *k) {
    KParams p = { 0 };
    stmt_params(c, k->stmt, &p);
    kernel_comment(c, k);
    signature(c, k, &p);
    stride_loops(c, k, NULL);
    c->b->indent = 0;
    be_printf(c->b, "}\n\n");
    kp_free(&p);
}

/* Thread 0 stores the reduction's results (its accumulators). */
static void reduce_results(CuEmit *c, IrStmt *s, char ***racc) {
    int o = s->nouts - ir_stmt_nmapped(s) - ir_stmt_red_width(s);
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(c->b, "    *%s_out = %s;", be_vname(s->outs[o++]), racc[r][j]); }
    }
}

static void emit_reduce(CuEmit *c, IrKernel *k) {
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
    kernel_comment(c, k);
    signature(c, k, &p);
    char ***racc = acc_names(c, s);
    for (int r = 0; r < s->nreds; r++) { declare_ne(c, &s->reds[r], racc[r]); }
    stride_loops(c, k, racc);
    block_reduce(c, s, racc, k->block);
    be_line(b, "if (gridDim.x == 1) {  /* one block: its total is the result (no partials, no counter) */");
    b->indent++;
    be_line(b, "if (threadIdx.x == 0) {");
    reduce_results(c, s, racc);
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
    be_line(b, "    *g_done = 0u;  /* ready for the next launch */");
    be_line(b, "}");
    acc_free(s, racc);
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* ---- scan and filter: single pass, decoupled look-back ---- */
typedef struct {
    IrOperator *op;  /* one combined view over all scans */
    int arity;
} ScanView;

/* apply_op for each of the nsc operators of a scanned tuple, whose
 * components lie one after the other in dst, a and b. */
static void apply_ops(CuEmit *c, IrOperator *ops, int nsc, char **dst, char **a, char **b, bool declare) {
    int at = 0;
    for (int q = 0; q < nsc; q++) {
        apply_op(c, &ops[q], dst + at, (const char *const *)(a + at), (const char *const *)(b + at), declare);
        at += ops[q].arity;
    }
}

/* An inclusive scan of the values named vals (one per component of the
 * nsc operators, of types wt) across the 32 lanes of a warp, in place, by
 * shuffles; tmp names the shuffled copies ("g_y%d_%d": operator, component). */
static void warp_inclusive_scan(CuEmit *c, IrOperator *ops, int nsc, const IrScalar *wt, char **vals, const char *tmp) {
    BeBuf *b = c->b;
    be_line(b, "for (int g_off = 1; g_off < 32; g_off <<= 1) {");
    b->indent++;
    int at = 0;
    for (int q = 0; q < nsc; q++) {
        char **y = names(c, tmp, q, ops[q].arity);
        for (int j = 0; j < ops[q].arity; j++) { be_line(b, "const %s %s = gpuc_shfl_up(%s, g_off);", ct(wt[at + j]), y[j], vals[at + j]); }
        be_line(b, "if (g_lane >= (unsigned)g_off) {");
        b->indent++;
        apply_op(c, &ops[q], vals + at, (const char *const *)y, (const char *const *)(vals + at), false);
        b->indent--;
        be_line(b, "}");
        free(y);
        at += ops[q].arity;
    }
    b->indent--;
    be_line(b, "}");
}

/* The types of the scanned tuple's components, *W of them (a filter scans
 * its u32 count of kept elements). */
static IrScalar *scan_types(IrStmt *s, int *W) {
    *W = 0;
    if (s->kind == IR_S_FILTER) { *W = 1; }
    for (int q = 0; s->kind != IR_S_FILTER && q < s->nscans; q++) { *W += s->scans[q].arity; }
    IrScalar *wt = calloc((size_t)*W + 1, sizeof *wt);
    if (s->kind == IR_S_FILTER) { wt[0] = IR_U32; }
    int at = 0;
    for (int q = 0; s->kind != IR_S_FILTER && q < s->nscans; q++) {
        for (int j = 0; j < s->scans[q].arity; j++) { wt[at++] = s->scans[q].op->ptypes[j]; }
    }
    return wt;
}

/* How the look-back publishes a tile's value: packed with its status in one
 * word when the components fit in 8 bytes of payload (bool and 4-byte types
 * take 32 bits, 8-byte types 64): 8, an 8-byte word (value in the low half,
 * status in the high half) for one 4-byte component; 16, a 16-byte word
 * {payload, status} for one 8-byte or two 4-byte components; else 0: flags
 * and values in separate arrays, ordered by fences (any tuple). */
static int scan_word_bytes(const IrScalar *wt, int W) {
    int payload = 0;
    for (int j = 0; j < W; j++) { payload += ir_scalar_size(wt[j]) <= 4 ? 4 : 8; }
    return payload > 8 ? 0 : payload == 4 ? 8 : 16;
}

/* The packed payload of the tuple v: component j at bit 32 * (its 4-byte
 * position), as an unsigned long long. */
static char *word_payload(CuEmit *c, const IrScalar *wt, int W, char **v) {
    char *r = be_strf(&c->x, "%s", "");
    int at = 0;
    for (int j = 0; j < W; j++) {
        const char *bits = wt[j] == IR_F32 ? be_strf(&c->x, "__float_as_uint(%s)", v[j])
                         : wt[j] == IR_F64 ? be_strf(&c->x, "__double_as_longlong(%s)", v[j])
                         : ir_scalar_size(wt[j]) == 8 ? v[j] : be_strf(&c->x, "(uint32_t)%s", v[j]);
        r = be_strf(&c->x, at ? "%s | ((unsigned long long)%s << %d)" : "%s(unsigned long long)%s", r, bits, at);
        at += ir_scalar_size(wt[j]) <= 4 ? 32 : 64;
    }
    return r;
}

/* Component j of the payload w (from bit `at`) as a value of type t. */
static char *word_component(CuEmit *c, IrScalar t, const char *w, int at) {
    const char *lo = at ? be_strf(&c->x, "(uint32_t)(%s >> %d)", w, at) : be_strf(&c->x, "(uint32_t)%s", w);
    switch (t) {
    case IR_F32: return be_strf(&c->x, "__uint_as_float(%s)", lo);
    case IR_F64: return be_strf(&c->x, "__longlong_as_double((long long)%s)", w);
    case IR_I64: case IR_U64: return be_strf(&c->x, "(%s)%s", ct(t), w);
    case IR_BOOL: return be_strf(&c->x, "(%s != 0u)", lo);
    default: return be_strf(&c->x, "(%s)%s", ct(t), lo);
    }
}

/* Lane 0 of warp 0 publishes the tile's value v with status st (1 its
 * aggregate, 2 its inclusive prefix): one store of the packed word, or the
 * values, a fence, then the flag. */
static void publish(CuEmit *c, int word, const IrScalar *wt, int W, const char *tile, int st, char **v) {
    BeBuf *b = c->b;
    if (word == 8) {
        be_line(b, "gpuc_st_word(g_words + %s, (%dull << 32) | %s);", tile, st, word_payload(c, wt, W, v));
    } else if (word == 16) {
        be_line(b, "gpuc_st_word2(g_words + 2 * %s, %s, %dull);", tile, word_payload(c, wt, W, v), st);
    } else {
        for (int j = 0; j < W; j++) { be_line(b, "g_%s%d[%s] = %s;", st == 2 ? "incl" : "agg", j, tile, v[j]); }
        be_line(b, "__threadfence();");
        be_line(b, "atomicExch(&g_flags[%s], %d);", tile, st);
    }
}

/* Shared staging of one scalar array of the tile: one pad element per 128
 * bytes (gpuc_pad), its bytes rounded up to 16. */
static int pad_shift(IrScalar t) { return ir_scalar_size(t) == 8 ? 4 : 5; }
static int staging_bytes(IrScalar t, int items) {
    int n = items + (items >> pad_shift(t));
    return (ir_scalar_size(t) * n + 15) & ~15;
}

/* Phase 1 of a scan, U unrolled copies of one item each (in a
 * loop over the tile's I / U rounds): the item at slot g_slot = copy * B +
 * threadIdx.x, i.e. coalesced, goes through the map and its staged values
 * (ns of them) into the padded shared arrays g_st<j>. A full tile (full) checks no bound and keeps every
 * copy's values in registers g_r<j>_<copy> until all copies' loads are
 * issued, so they are in flight together; the last tile checks each item
 * against n and stages the neutral elements ne past the end. */
static void scan_phase1(CuEmit *c, IrKernel *k, bool full, const IrScalar *wt, int ns, char **ne) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    int B = k->block, I = k->items, U = k->unroll;
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0]));
    if (I > U) { be_line(b, "for (int g_u = 0; g_u < %d; g_u += %d) {", I, U); b->indent++; }
    if (full) {
        for (int u = 0; u < U; u++) {
            for (int j = 0; j < ns; j++) { be_line(b, "%s g_r%d_%d;", ct(wt[j]), j, u); }
        }
    }
    for (int u = 0; u < U; u++) {
        be_line(b, "{ /* unrolled copy %d of %d */", u + 1, U);
        b->indent++;
        if (I > U) { be_line(b, "const int g_slot = (g_u + %d) * %d + threadIdx.x;", u, B); }
        else { be_line(b, "const int g_slot = %d + threadIdx.x;", u * B); }
        be_line(b, "const int64_t g_i = g_base + g_slot;%s", full ? "  (void)g_i;" : "");
        if (!full) { be_line(b, "if (g_i < %s) {", n); b->indent++; }
        c->x.idx[0] = "g_i";
        c->x.idx[1] = "g_i";
        const char **res = map_body(c, s, "g_i");
        for (int j = 0; j < ns; j++) {
            if (full) { be_line(b, "g_r%d_%d = %s;", j, u, res[j]); }
            else { be_line(b, "g_st%d[gpuc_pad(g_slot, %d)] = %s;", j, pad_shift(wt[j]), res[j]); }
        }
        /* mapped outputs taken over by fusion: written here, coalesced */
        int nmap = ir_stmt_nmapped(s);
        for (int j = 0; j < nmap; j++) {
            be_line(b, "%s[g_i] = %s;", be_vname(s->outs[s->nouts - nmap + j]), res[s->map->nres - nmap + j]);
        }
        free(res);
        if (!full) {
            b->indent--;
            be_line(b, "} else {");
            for (int j = 0; j < ns; j++) { be_line(b, "    g_st%d[gpuc_pad(g_slot, %d)] = %s;", j, pad_shift(wt[j]), ne[j]); }
            be_line(b, "}");
        }
        b->indent--;
        be_line(b, "}");
    }
    if (full) {
        for (int u = 0; u < U; u++) {
            const char *slot = I > U ? be_strf(&c->x, "(g_u + %d) * %d + threadIdx.x", u, B) : be_strf(&c->x, "%d + threadIdx.x", u * B);
            for (int j = 0; j < ns; j++) { be_line(b, "g_st%d[gpuc_pad(%s, %d)] = g_r%d_%d;", j, slot, pad_shift(wt[j]), j, u); }
        }
    }
    if (I > U) { b->indent--; be_line(b, "}"); }
}

/* Phase 1 of a filter (its tile has no shared staging): warp w takes the tile's
 * items w * 32 * I .. (w + 1) * 32 * I - 1, copy u of lane l the item 32 * u + l
 * of that run (each copy a coalesced load of 32); copy u's keep flag is bit u
 * of g_bits, its values stay in registers g_v<j>_<u> until phase 5. A full
 * tile (full) checks no bound; the last tile keeps nothing past n. */
static void filter_phase1(CuEmit *c, IrKernel *k, bool full, int nv) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    for (int u = 0; u < k->items; u++) {
        be_line(b, "{ /* copy %d of %d */", u + 1, k->items);
        b->indent++;
        be_line(b, "const int64_t g_i = g_seg + %d;", 32 * u);
        if (!full) { be_line(b, "if (g_i < %s) {", be_vname(s->w[0])); b->indent++; }
        c->x.idx[0] = "g_i";
        c->x.idx[1] = "g_i";
        const char **res = map_body(c, s, "g_i");
        be_line(b, "g_bits |= (%s ? 1u : 0u) << %d;", res[0], u);
        for (int j = 0; j < nv; j++) { be_line(b, "g_v%d_%d = %s;", j, u, res[1 + j]); }
        free(res);
        if (!full) { b->indent--; be_line(b, "}"); }
        b->indent--;
        be_line(b, "}");
    }
}

static void emit_scan(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    bool filter = s->kind == IR_S_FILTER;
    int B = k->block, I = k->items, NW = B / 32;
    /* The scanned tuple: for a filter, the count of kept elements (u32). */
    int nsc = filter ? 1 : s->nscans;
    IrOperator *ops = filter ? NULL : s->scans;
    IrOperator fop;
    if (filter) {
        fop = ir_operator_binop(c->m, IR_BIN_add, IR_U32, true);
        ops = &fop;
    }
    int W;
    IrScalar *wt = scan_types(s, &W);
    const int word = scan_word_bytes(wt, W);
    KParams p = { 0 };
    stmt_params(c, s, &p);
    if (word) {
        kp_add(c, &p, "unsigned long long *g_words", "g_words");
    } else {
        kp_add(c, &p, "int *__restrict__ g_flags", "g_flags");
        for (int j = 0; j < W; j++) {
            char d[128], a[64];
            snprintf(d, sizeof d, "%s *__restrict__ g_agg%d", ct(wt[j]), j);
            snprintf(a, sizeof a, "g_agg%d", j);
            kp_add(c, &p, d, a);
            snprintf(d, sizeof d, "%s *__restrict__ g_incl%d", ct(wt[j]), j);
            snprintf(a, sizeof a, "g_incl%d", j);
            kp_add(c, &p, d, a);
        }
    }
    /* shared staging of a scan: its inputs, then its outputs (a filter has none) */
    int nv = filter ? s->nouts - 1 : 0;
    int in_bytes = 0, out_bytes = 0;
    for (int j = 0; j < W; j++) { in_bytes += staging_bytes(wt[j], B * I); }
    int nout = filter ? 0 : (s->post ? s->post->nres : ir_stmt_scan_width(s));
    for (int j = 0; j < nout; j++) { out_bytes += staging_bytes(s->outs[j]->elem, B * I); }
    int smem = in_bytes > out_bytes ? in_bytes : out_bytes;
    /* where shared memory limits the blocks per SM (227 KiB, 1 KiB reserved
     * per block, on sm_80/sm_90) to a number that still leaves 72 registers a
     * thread (e.g. 7 blocks of 128 threads), ask for that many, so that the
     * registers of a full tile's loads do not lower it further */
    int min_blocks = 227 * 1024 / (smem + 1024);
    if (min_blocks > 65536 / (B * 72)) { min_blocks = 0; }
    if (filter) {
        /* no staging; the registers bound a filter's blocks (46 for f32: 5 of
         * 256 threads an SM, 120 KB of loads in flight; forcing 6 spills) */
        min_blocks = 0;
    }
    kernel_comment(c, k);
    signature_min(c, k, &p, min_blocks);
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0]));
    if (filter) {
        be_line(b, "/* tile of %d threads x %d items, no shared staging */", B, I);
    } else {
        be_line(b, "/* tile of %d threads x %d items; %d bytes of shared staging (padded) */", B, I, smem);
        be_line(b, "__shared__ __align__(16) unsigned char g_smem[%d];", smem);
    }
    for (int j = 0; j < W; j++) {
        be_line(b, "__shared__ %s g_wsum%d[32];", ct(wt[j]), j);
        be_line(b, "__shared__ %s g_ex_sh%d;", ct(wt[j]), j);
    }
    be_line(b, "const unsigned g_lane = threadIdx.x & 31, g_warp = threadIdx.x >> 5;");
    be_line(b, "/* the tile is the block's index: NVIDIA GPUs start blocks in index order, so");
    be_line(b, " * every predecessor is running or done (CUB's decoupled look-back relies on it too) */");
    be_line(b, "const int64_t g_tile = blockIdx.x;");
    be_line(b, "const int64_t g_base = g_tile * %d;", B * I);
    /* staging arrays */
    int off = 0;
    for (int j = 0; !filter && j < W; j++) {
        be_line(b, "%s *g_st%d = (%s *)(g_smem + %d);", ct(wt[j]), j, ct(wt[j]), off);
        off += staging_bytes(wt[j], B * I);
    }
    /* the neutral elements */
    char **ne = calloc((size_t)W + 1, sizeof *ne);
    {
        int at = 0;
        for (int q = 0; q < nsc; q++) {
            for (int j = 0; j < ops[q].arity; j++) {
                ne[at] = be_strf(&c->x, "g_ne%d", at);
                be_line(b, "const %s %s = %s;", ct(wt[at]), ne[at], be_expr(&c->x, ops[q].ne[j]));
                at++;
            }
        }
    }
    char **agg = names(c, "g_t%d_%d", 0, W);
    char **wv = names(c, "g_w%d_%d", 0, W);
    char **el = names(c, "g_el%d_%d", 0, W);
    if (filter) {
        be_line(b, "/* phase 1: coalesced loads and the map; keep flags in g_bits, kept values in registers */");
        for (int u = 0; u < I; u++) {
            for (int j = 0; j < nv; j++) { be_line(b, "%s g_v%d_%d = (%s)0;", ct(s->outs[j]->elem), j, u, ct(s->outs[j]->elem)); }
        }
        be_line(b, "uint32_t g_bits = 0u;");
        be_line(b, "const int64_t g_seg = g_base + (int64_t)g_warp * %d + g_lane;  /* the warp's run of %d items */", 32 * I, 32 * I);
        be_line(b, "if (g_base + %d <= %s) {", B * I, n);
        b->indent++;
        be_line(b, "/* a full tile: no bound checks */");
        filter_phase1(c, k, true, nv);
        b->indent--;
        be_line(b, "} else {");
        b->indent++;
        be_line(b, "/* the last tile: items past n are not kept */");
        filter_phase1(c, k, false, nv);
        b->indent--;
        be_line(b, "}");
        be_line(b, "/* phases 2 and 3: the warp's count of kept items (butterfly), one per warp to shared memory */");
        be_line(b, "uint32_t %s = __popc(g_bits);", agg[0]);
        be_line(b, "for (int g_off = 16; g_off > 0; g_off >>= 1) {");
        be_line(b, "    %s += __shfl_xor_sync(0xffffffffu, %s, g_off);", agg[0], agg[0]);
        be_line(b, "}");
        be_line(b, "if (g_lane == 0) {");
        be_line(b, "    g_wsum0[g_warp] = %s;", agg[0]);
        be_line(b, "}");
    } else {
        be_line(b, "/* phase 1: coalesced loads, the map, scan inputs staged in shared memory */");
        be_line(b, "if (g_base + %d <= %s) {", B * I, n);
        b->indent++;
        be_line(b, "/* a full tile: no bound checks, every load in flight before the first store */");
        scan_phase1(c, k, true, wt, W, ne);
        b->indent--;
        be_line(b, "} else {");
        b->indent++;
        be_line(b, "/* the last tile: items past n stage the neutral element */");
        scan_phase1(c, k, false, wt, W, ne);
        b->indent--;
        be_line(b, "}");
        be_line(b, "__syncthreads();");
        be_line(b, "/* phase 2: each thread takes %d consecutive items and reduces them */", I);
        for (int u = 0; u < I; u++) {
            for (int j = 0; j < W; j++) { be_line(b, "const %s g_x%d_%d = g_st%d[gpuc_pad(threadIdx.x * %d + %d, %d)];", ct(wt[j]), j, u, j, I, u, pad_shift(wt[j])); }
        }
        /* per-scan operator views */
        for (int j = 0; j < W; j++) { be_line(b, "%s %s = %s;", ct(wt[j]), agg[j], ne[j]); }
        for (int u = 0; u < I; u++) {
            int at = 0;
            for (int q = 0; q < nsc; q++) {
                const char **xs = calloc((size_t)ops[q].arity + 1, sizeof *xs);
                for (int j = 0; j < ops[q].arity; j++) { xs[j] = be_strf(&c->x, "g_x%d_%d", at + j, u); }
                apply_op(c, &ops[q], agg + at, (const char *const *)(agg + at), xs, false);
                free(xs);
                at += ops[q].arity;
            }
        }
        be_line(b, "/* phase 3: scan of the thread totals: warp shuffles, then across warps */");
        for (int j = 0; j < W; j++) { be_line(b, "%s %s = %s;", ct(wt[j]), wv[j], agg[j]); }
        warp_inclusive_scan(c, ops, nsc, wt, wv, "g_y%d_%d");
        for (int j = 0; j < W; j++) {
            be_line(b, "%s %s = gpuc_shfl_up(%s, 1);", ct(wt[j]), el[j], wv[j]);
            be_line(b, "if (g_lane == 0) { %s = %s; }", el[j], ne[j]);
        }
        be_line(b, "if (g_lane == 31) {");
        for (int j = 0; j < W; j++) { be_line(b, "    g_wsum%d[g_warp] = %s;", j, wv[j]); }
        be_line(b, "}");
    }
    be_line(b, "__syncthreads();");
    be_line(b, "if (g_warp == 0) {");
    b->indent++;
    char **ws = names(c, "g_ws%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = g_lane < %d ? g_wsum%d[g_lane] : %s;", ct(wt[j]), ws[j], NW, j, ne[j]); }
    warp_inclusive_scan(c, ops, nsc, wt, ws, "g_z%d_%d");
    be_line(b, "if (g_lane < 32) {");
    for (int j = 0; j < W; j++) { be_line(b, "    g_wsum%d[g_lane] = %s;  /* inclusive over warps */", j, ws[j]); }
    be_line(b, "}");
    be_line(b, "__syncwarp();");
    be_line(b, "/* phase 4: warp 0 goes on with the decoupled look-back, 32 predecessors at a");
    if (word) {
        be_line(b, " * time (status 0 none yet, 1 aggregate, 2 inclusive prefix, packed with the");
        be_line(b, " * value in one %d-byte word), while the other warps wait at the barrier */", word);
    } else {
        be_line(b, " * time (flags: 0 none yet, 1 aggregate, 2 inclusive prefix; values in their");
        be_line(b, " * own arrays, behind a fence), while the other warps wait at the barrier */");
    }
    char **ta = names(c, "g_ta%d_%d", 0, W);
    char **ex = names(c, "g_ex%d_%d", 0, W);
    for (int j = 0; j < W; j++) {
        be_line(b, "const %s %s = g_wsum%d[%d];", ct(wt[j]), ta[j], j, NW - 1);
        be_line(b, "%s %s = %s;", ct(wt[j]), ex[j], ne[j]);
    }
    be_line(b, "if (g_tile == 0) {");
    b->indent++;
    be_line(b, "if (g_lane == 0) {");
    b->indent++;
    publish(c, word, wt, W, "0", 2, ta);
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "} else {");
    b->indent++;
    be_line(b, "if (g_lane == 0) {");
    b->indent++;
    publish(c, word, wt, W, "g_tile", 1, ta);
    b->indent--;
    be_line(b, "}");
    be_line(b, "for (int64_t g_j = g_tile - 1;; g_j -= 32) {");
    b->indent++;
    be_line(b, "/* lane l looks at tile g_j - l: lane 0 is the nearest predecessor */");
    be_line(b, "const int64_t g_idx = g_j - (int64_t)g_lane;");
    be_line(b, "/* (lanes before tile 0 read nothing and count as a prefix) */");
    if (word == 8) {
        be_line(b, "unsigned long long g_w = 2ull << 32;");
        be_line(b, "if (g_idx >= 0) {");
        be_line(b, "    g_w = gpuc_ld_word(g_words + g_idx);");
        be_line(b, "}");
        be_line(b, "while (__any_sync(0xffffffffu, (g_w >> 32) == 0)) {");
        be_line(b, "    if ((g_w >> 32) == 0) {");
        be_line(b, "        gpuc_backoff();");
        be_line(b, "        g_w = gpuc_ld_word(g_words + g_idx);");
        be_line(b, "    }");
        be_line(b, "}");
        be_line(b, "const int g_f = (int)(g_w >> 32);");
    } else if (word == 16) {
        be_line(b, "unsigned long long g_w = 0, g_s = 2;");
        be_line(b, "if (g_idx >= 0) {");
        be_line(b, "    gpuc_ld_word2(g_words + 2 * g_idx, &g_w, &g_s);");
        be_line(b, "}");
        be_line(b, "while (__any_sync(0xffffffffu, g_s == 0)) {");
        be_line(b, "    if (g_s == 0) {");
        be_line(b, "        gpuc_backoff();");
        be_line(b, "        gpuc_ld_word2(g_words + 2 * g_idx, &g_w, &g_s);");
        be_line(b, "    }");
        be_line(b, "}");
        be_line(b, "const int g_f = (int)g_s;");
    } else {
        be_line(b, "int g_f = g_idx >= 0 ? ((volatile int *)g_flags)[g_idx] : 2;");
        be_line(b, "while (__any_sync(0xffffffffu, g_f == 0)) {");
        be_line(b, "    if (g_f == 0) {");
        be_line(b, "        gpuc_backoff();");
        be_line(b, "        g_f = ((volatile int *)g_flags)[g_idx];");
        be_line(b, "    }");
        be_line(b, "}");
        be_line(b, "__threadfence();");
    }
    be_line(b, "const unsigned g_pmask = __ballot_sync(0xffffffffu, g_f == 2);");
    be_line(b, "const int g_stop = g_pmask ? __ffs(g_pmask) - 1 : 32;  /* nearest lane with a prefix */");
    char **pv = names(c, "g_pv%d_%d", 0, W);
    for (int j = 0, at = 0; j < W; j++) {
        const char *mine = word ? word_component(c, wt[j], "g_w", at)
                                : be_strf(&c->x, "g_f == 2 ? ((volatile %s *)g_incl%d)[g_idx] : ((volatile %s *)g_agg%d)[g_idx]", ct(wt[j]), j, ct(wt[j]), j);
        be_line(b, "%s %s = (g_idx < 0 || (int)g_lane > g_stop) ? %s : %s;", ct(wt[j]), pv[j], ne[j], mine);
        at += ir_scalar_size(wt[j]) <= 4 ? 32 : 64;
    }
    be_line(b, "/* ordered warp reduction: older tiles (higher lanes) on the left */");
    be_line(b, "for (int g_off = 1; g_off < 32; g_off <<= 1) {");
    b->indent++;
    {
        int at = 0;
        for (int q = 0; q < nsc; q++) {
            char **o = names(c, "g_ol%d_%d", q, ops[q].arity);
            for (int j = 0; j < ops[q].arity; j++) {
                be_line(b, "const %s %s = gpuc_shfl_down(%s, g_off);", ct(wt[at + j]), o[j], pv[at + j]);
            }
            be_line(b, "if (g_lane + g_off < 32) {");
            b->indent++;
            apply_op(c, &ops[q], pv + at, (const char *const *)o, (const char *const *)(pv + at), false);
            b->indent--;
            be_line(b, "}");
            free(o);
            at += ops[q].arity;
        }
    }
    b->indent--;
    be_line(b, "}");
    apply_ops(c, ops, nsc, ex, pv, ex, false);
    be_line(b, "if (g_pmask) {");
    be_line(b, "    break;");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    char **inc = names(c, "g_in%d_%d", 0, W);
    apply_ops(c, ops, nsc, inc, ex, ta, true);
    be_line(b, "if (g_lane == 0) {");
    b->indent++;
    publish(c, word, wt, W, "g_tile", 2, inc);
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "if (g_lane == 0) {");
    for (int j = 0; j < W; j++) { be_line(b, "    g_ex_sh%d = %s;", j, ex[j]); }
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    char **wp = names(c, "g_wp%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "const %s %s = g_warp > 0 ? g_wsum%d[g_warp - 1] : %s;", ct(wt[j]), wp[j], j, ne[j]); }
    char **tex = names(c, "g_tx%d_%d", 0, W);
    if (!filter) {
        /* thread exclusive prefix within the tile: op(warp prefix, lane prefix) */
        apply_ops(c, ops, nsc, tex, wp, el, true);
    }
    char **pre = names(c, "g_pre%d_%d", 0, W);
    char **exs = names(c, "g_exs%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "const %s %s = g_ex_sh%d;", ct(wt[j]), exs[j], j); }
    if (filter) {
        be_line(b, "/* phase 5: kept values go from registers straight to their place: copy u of");
        be_line(b, " * lane l follows the warp's kept items of copies before u and those of lanes");
        be_line(b, " * before l in copy u (ballots), so each copy's kept items are one contiguous run */");
        be_line(b, "const uint32_t g_cnt = g_wsum0[%d];", NW - 1);
        be_line(b, "const int64_t g_dst = (int64_t)%s;", exs[0]);
        for (int j = 0; j < nv; j++) { be_line(b, "%s *const g_o%d = %s + g_dst + %s;", ct(s->outs[j]->elem), j, be_vname(s->outs[j]), wp[0]); }
        be_line(b, "const unsigned g_lt = (1u << g_lane) - 1u;  /* the lanes before this one */");
        be_line(b, "uint32_t g_run = 0u;");
        for (int u = 0; u < I; u++) {
            be_line(b, "{");
            b->indent++;
            be_line(b, "const unsigned g_m = __ballot_sync(0xffffffffu, (g_bits >> %d) & 1u);", u);
            be_line(b, "if ((g_bits >> %d) & 1u) {", u);
            for (int j = 0; j < nv; j++) { be_line(b, "    g_o%d[g_run + __popc(g_m & g_lt)] = g_v%d_%d;", j, j, u); }
            be_line(b, "}");
            be_line(b, "g_run += __popc(g_m);");
            b->indent--;
            be_line(b, "}");
        }
        be_line(b, "if (g_base + %d >= %s && threadIdx.x == 0) {", B * I, n);
        be_line(b, "    *%s_out = g_dst + (int64_t)g_cnt;  /* the last tile knows the total */", be_vname(s->outs[nv]));
        be_line(b, "}");
    } else {
        for (int q = 0, at = 0; q < nsc; q++) {
            apply_op(c, &ops[q], pre + at, (const char *const *)(exs + at), (const char *const *)(tex + at), true);
            at += ops[q].arity;
        }
        be_line(b, "/* phase 5: each item's prefix, the post map, outputs staged for coalesced stores */");
        be_line(b, "__syncthreads();");
        int sw = ir_stmt_scan_width(s);
        int off2 = 0;
        for (int j = 0; j < nout; j++) {
            be_line(b, "%s *g_so%d = (%s *)(g_smem + %d);", ct(s->outs[j]->elem), j, ct(s->outs[j]->elem), off2);
            off2 += staging_bytes(s->outs[j]->elem, B * I);
        }
        for (int u = 0; u < I; u++) {
            be_line(b, "{");
            b->indent++;
            be_line(b, "const int64_t g_i = g_base + threadIdx.x * %d + %d;  (void)g_i;", I, u);
            const char **val = calloc((size_t)sw + 1, sizeof *val);
            int at = 0;
            for (int q = 0; q < nsc; q++) {
                const char **xs = calloc((size_t)ops[q].arity + 1, sizeof *xs);
                for (int j = 0; j < ops[q].arity; j++) { xs[j] = be_strf(&c->x, "g_x%d_%d", at + j, u); }
                if (ops[q].exclusive) {
                    for (int j = 0; j < ops[q].arity; j++) {
                        char *t = be_strf(&c->x, "g_e%d_%d", at + j, u);
                        be_line(b, "const %s %s = %s;", ct(wt[at + j]), t, pre[at + j]);
                        val[at + j] = t;
                    }
                    apply_op(c, &ops[q], pre + at, (const char *const *)(pre + at), xs, false);
                } else {
                    apply_op(c, &ops[q], pre + at, (const char *const *)(pre + at), xs, false);
                    for (int j = 0; j < ops[q].arity; j++) {
                        char *t = be_strf(&c->x, "g_e%d_%d", at + j, u);
                        be_line(b, "const %s %s = %s;", ct(wt[at + j]), t, pre[at + j]);
                        val[at + j] = t;
                    }
                }
                free(xs);
                at += ops[q].arity;
            }
            c->x.idx[0] = "g_i";
            c->x.idx[1] = "g_i";
            if (s->post) {
                const char **pr = calloc((size_t)s->post->nres + 1, sizeof *pr);
                be_lambda(&c->x, s->post, val, pr);
                for (int j = 0; j < nout; j++) { be_line(b, "g_so%d[gpuc_pad(threadIdx.x * %d + %d, %d)] = %s;", j, I, u, pad_shift(s->outs[j]->elem), pr[j]); }
                free(pr);
            } else {
                for (int j = 0; j < nout; j++) { be_line(b, "g_so%d[gpuc_pad(threadIdx.x * %d + %d, %d)] = %s;", j, I, u, pad_shift(s->outs[j]->elem), val[j]); }
            }
            free(val);
            b->indent--;
            be_line(b, "}");
        }
        be_line(b, "__syncthreads();");
        for (int u = 0; u < I; u++) {
            be_line(b, "if (g_base + %d + threadIdx.x < %s) {", u * B, n);
            for (int j = 0; j < nout; j++) {
                be_line(b, "    %s[g_base + %d + threadIdx.x] = g_so%d[gpuc_pad(%d + threadIdx.x, %d)];", be_vname(s->outs[j]), u * B, j, u * B, pad_shift(s->outs[j]->elem));
            }
            be_line(b, "}");
        }
    }
    b->indent = 0;
    be_printf(b, "}\n\n");
    free(ne); free(agg); free(wv); free(el); free(ws); free(tex); free(wp); free(ta); free(ex); free(pv); free(inc);
    free(pre); free(exs); free(wt);
    kp_free(&p);
}

/* The element (g_row, g_col) of a row/column reduction: the map body at
 * the flat index, folded into the accumulators racc. */
static void segred_element(CuEmit *c, IrStmt *s, const char *cols, char ***racc) {
    be_line(c->b, "const int64_t g_f = g_row * %s + g_col;", cols);
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "g_col";
    const char **res = map_body(c, s, "g_f");
    int pos = 0;
    for (int r = 0; r < s->nreds; r++) {
        apply_op(c, &s->reds[r], racc[r], (const char *const *)racc[r], res + pos, false);
        pos += s->reds[r].arity;
    }
    free(res);
}

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
    c->x.idx[1] = "g_col";
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
static void row_vector(CuEmit *c, IrKernel *k, const char *regs, RowUse use, const char *lim, char ***racc) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    int V = k->vec, nred = ir_stmt_red_width(s);
    bool post = use == ROW_POST;
    be_line(b, "if (g_v < %s) {", lim);
    b->indent++;
    if (post) {
        for (int r = 0; r < s->post->nres; r++) { be_line(b, "gpuc_v16_%s g_w%d;", ir_scalar_name(s->outs[nred + r]->elem), r); }
    }
    for (int l = 0; l < V; l++) {
        be_line(b, "{ /* lane %d */", l);
        b->indent++;
        be_line(b, "const int64_t g_col = g_head + g_v * %d + %d;  (void)g_col;", V, l);
        c->x.idx[0] = "g_row";
        c->x.idx[1] = "g_col";
        const char **pn = calloc((size_t)s->nins + 1, sizeof *pn);
        for (int i = 0; i < s->nins; i++) { pn[i] = be_strf(&c->x, "%s%d.v[%d]", regs, i, l); }
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
            } else {
                /* x == max also covers x = max = +-inf, as the operator does */
                be_line(b, "g_sum += %s == g_mx ? %s : %s * %s(%s - g_mx);", res[0], res[1], res[1], f32 ? "expf" : "exp", res[0]);
            }
            free(res);
        }
        free(pn);
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
                be_line(c->b, "    %s%d_%d = g_pv%d[%s];", regs, u, i, i, v);
            }
        }
        be_line(c->b, "}");
    }
}

/* Use the vectors loaded by row_loads (see RowUse). */
static void row_uses(CuEmit *c, IrKernel *k, int n, const char *vb, const char *regs, RowUse use, const char *lim, char ***racc) {
    for (int u = 0; u < n; u++) {
        be_line(c->b, "{ /* unrolled copy %d of %d */", u + 1, n);
        c->b->indent++;
        be_line(c->b, "const %s g_v = %s;", row_narrow(vb) ? "int" : "int64_t", row_vidx(c, vb, u));
        row_vector(c, k, be_strf(&c->x, "%s%d_", regs, u), use, lim, racc);
        c->b->indent--;
        be_line(c->b, "}");
    }
}

static void declare_regs(CuEmit *c, IrKernel *k, int n, const char *regs) {
    IrStmt *s = k->stmt;
    for (int u = 0; u < n; u++) {
        for (int i = 0; i < s->nins; i++) { be_line(c->b, "gpuc_v16_%s %s%d_%d;", ir_scalar_name(s->ins[i]->elem), regs, u, i); }
    }
}

/* The stash: when a block holds a row for a post, the row's vectors beyond
 * the registers' `items` per lane go to dynamic shared memory (extern
 * __shared__ gpuc_stash, g_sv vectors per lane and input, sized by the host
 * launcher from the row length) as phase 1 reads them, and phase 2 reads
 * them from there instead of global memory; vectors beyond the stash (rows
 * longer than registers + stash) are read twice from global memory as
 * before.  Lane l's vectors l + u * g_tpr go to slots l + (u - items) *
 * g_tpr, so every thread reads back only what it wrote (no barrier) and a
 * warp's 16-byte accesses are consecutive (no bank conflicts).
 * grep "ROW STASH" if you change these: the launcher sizes the stash. */
#define ROW_STASH_LANE_BYTES 384     /* at most 24 vectors of 16 bytes per thread, all inputs */
#define ROW_STASH_BLOCK_BYTES 98304  /* at most 96 KiB a block: two blocks and their static shared memory fit in sm_90's 228 KiB */

typedef struct {
    bool on;  /* the kernel has a stash: a post, 16-byte vectors */
    int fs;   /* vectors per lane and input in flight while phase 1 fills it */
    int fr;   /* vectors per lane and input read from it at a time (sum, post) */
    int sv;   /* the most vectors per lane and input it holds */
} RowStash;

static RowStash row_stash(const IrKernel *k) {
    RowStash st = { false, 1, 1, 0 };
    int n = k->stmt->nins;
    if (!k->stmt->post || !k->vectorize || n < 1) { return st; }
    /* ptxas, sm_90, row softmax at 128 registers: f32 fills 4 and reads 2
     * (120 registers), f64 2 and 1 (128, its exp takes more; 4 in flight
     * spilled 340 bytes) */
    int wide = ir_scalar_size(k->stmt->ins[0]->elem) == 8;
    st.fs = (wide ? 2 : 4) / n > 0 ? (wide ? 2 : 4) / n : 1;
    st.fr = (wide ? 1 : 2) / n > 0 ? (wide ? 1 : 2) / n : 1;
    st.sv = ROW_STASH_LANE_BYTES / 16 / n;
    st.on = st.sv > 0;
    return st;
}

/* The row kernel's static shared memory: 32 values per component of its
 * reductions (row_allreduce, row_allreduce1). */
static int row_static_shared(const IrKernel *k) {
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
static void row_stash_pass(CuEmit *c, IrKernel *k, bool fill, RowUse use, char ***racc) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    RowStash st = row_stash(k);
    int n = fill ? st.fs : st.fr;
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
    if (post) {
        be_line(b, "/* the first %d vectors per lane %s registers */", C, phase2 ? "from" : "into");
        if (!phase2) { row_loads(c, k, C, "g_lane", "g_c", "g_nv", false); }
        if (!later) { row_uses(c, k, C, "g_lane", "g_c", use, "g_nv", racc); }
    }
    if (st.on) {
        if (phase2) {
            be_line(b, "/* the stash's vectors from shared memory, %d per lane at a time */", st.fr);
        } else {
            be_line(b, "/* the next vectors into the stash as they are read, %d per lane in flight%s */", st.fs,
                    later ? " (their maximum now, their sum with the registers')" : "");
        }
        row_stash_pass(c, k, !phase2, phase2 ? ROW_POST : later ? ROW_MAX : ROW_FOLD, racc);
    }
    be_line(b, "/* %s: %d vectors per lane in flight */", post ? st.on ? "beyond the stash" : "beyond the registers" : "the row's vectors", F);
    const char *from = !post ? "" : st.on ? " + (int64_t)g_s1" : be_strf(&c->x, " + (int64_t)%d * g_tpr", C);
    be_line(b, "for (int64_t g_vb = g_lane%s; g_vb < g_nv; g_vb += (int64_t)%d * g_tpr) {", from, F);
    b->indent++;
    declare_regs(c, k, F, "g_a");
    row_loads(c, k, F, "g_vb", "g_a", "g_nv", false);
    row_uses(c, k, F, "g_vb", "g_a", use, "g_nv", racc);
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
static void emit_segred_row(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kp_add(c, &p, "const int g_tpr", "g_tpr");
    RowStash st = row_stash(k);
    if (st.on) { kp_add(c, &p, "const int g_sv", "g_sv"); }
    kernel_comment(c, k);
    /* with a stash, at most 128 registers a thread (the blocks' count the
     * launcher's stash sizes assume: grep "ROW STASH") */
    signature_min(c, k, &p, st.on && k->block < 512 ? 512 / k->block : 0);
    const char *rows = be_strf(&c->x, "%s", be_vname(s->w[0]));
    const char *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));
    int nred = ir_stmt_red_width(s);
    bool post = s->post != NULL, sm = row_softmax_regs_ok(k);
    char ***racc = acc_names(c, s);
    int id = shared_id++;
    be_line(b, "const int g_lane = (int)threadIdx.x & (g_tpr - 1);");
    be_line(b, "const int g_wl = g_tpr < 32 ? g_tpr : 32;  /* the row's lanes in a warp */");
    be_line(b, "const int64_t g_rpb = (int64_t)(blockDim.x / (unsigned)g_tpr);");
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "__shared__ %s g_sh%d_%d_%d[32];", ct(s->reds[r].op->ptypes[j]), id, r, j); }
    }
    if (st.on) {
        be_line(b, "/* the stash: the row's vectors g_s0 .. g_s1 - 1 (after the registers' %d per lane) in dynamic shared memory, g_sv per lane and input; only when a block holds the row */", k->items);
        be_line(b, "extern __shared__ gpuc_v16_f32 gpuc_stash[];");
        for (int i = 0; i < s->nins; i++) {
            const char *tn = ir_scalar_name(s->ins[i]->elem);
            be_line(b, "gpuc_v16_%s *const g_st%d = (gpuc_v16_%s *)(gpuc_stash + %d * g_sv * g_tpr);", tn, i, tn, i);
        }
        be_line(b, "const int g_s0 = %d * g_tpr;", k->items);
        be_line(b, "const int g_s1 = g_tpr == (int)blockDim.x ? g_s0 + g_sv * g_tpr : g_s0;");
    }
    if (k->vectorize) {
        /* every row of every array starts at the same offset from a 16-byte boundary */
        be_printf(b, "    const bool g_vec = ((");
        int any = 0;
        for (int i = 1; i < s->nins; i++) { be_printf(b, "%s((uintptr_t)%s ^ (uintptr_t)%s)", any++ ? " | " : "", be_vname(s->ins[i]), be_vname(s->ins[0])); }
        for (int r = 0; post && r < s->post->nres; r++) { be_printf(b, "%s((uintptr_t)%s ^ (uintptr_t)%s)", any++ ? " | " : "", be_vname(s->outs[nred + r]), be_vname(s->ins[0])); }
        be_printf(b, "%s) & 15) == 0;\n", any ? "" : "(uintptr_t)0");
    }
    /* the loop runs over the warp's first row, so that every lane of the
     * warp takes part in the shuffles; a lane past the last row sees a row
     * of 0 elements */
    be_line(b, "for (int64_t g_row0 = (int64_t)blockIdx.x * g_rpb + (int64_t)((threadIdx.x & ~31u) / (unsigned)g_tpr); g_row0 < %s; g_row0 += (int64_t)gridDim.x * g_rpb) {", rows);
    b->indent++;
    be_line(b, "const int64_t g_row = g_row0 + (int64_t)((threadIdx.x & 31u) / (unsigned)g_tpr);");
    be_line(b, "const int64_t g_m = g_row < %s ? %s : 0;  /* the row's length */", rows, cols);
    be_line(b, "const int64_t g_rb = g_row * %s;  /* the row's first element */", cols);
    cols = "g_m";  /* the loops below run over the row's length */
    for (int r = 0; r < s->nreds; r++) { declare_ne(c, &s->reds[r], racc[r]); }
    if (k->vectorize) {
        int esz = ir_scalar_size(s->ins[0]->elem);
        be_line(b, "/* elements before the row's first 16-byte boundary, vectors, and the tail */");
        be_line(b, "int64_t g_head = g_vec ? (int64_t)(((16u - ((unsigned)(uintptr_t)(%s + g_rb) & 15u)) & 15u) / %du) : %s;", be_vname(s->ins[0]), esz, cols);
        be_line(b, "if (g_head > %s) {", cols);
        be_line(b, "    g_head = %s;", cols);
        be_line(b, "}");
        be_line(b, "const int64_t g_nv = (%s - g_head) / %d;", cols, k->vec);
        be_line(b, "/* the row's vectors: 64-bit pointers once per row, 32-bit indices into the registers' and the stash's part */");
        for (int i = 0; i < s->nins; i++) {
            const char *tn = ir_scalar_name(s->ins[i]->elem);
            be_line(b, "const gpuc_v16_%s *g_pv%d = (const gpuc_v16_%s *)(%s + g_rb + g_head);", tn, i, tn, be_vname(s->ins[i]));
        }
        for (int r = 0; post && r < s->post->nres; r++) {
            const char *tn = ir_scalar_name(s->outs[nred + r]->elem);
            be_line(b, "gpuc_v16_%s *g_pw%d = (gpuc_v16_%s *)(%s + g_rb + g_head);", tn, r, tn, be_vname(s->outs[nred + r]));
        }
        if (post) { declare_regs(c, k, k->items, "g_c"); }
        if (st.on) { be_line(b, "const int g_se = (int)(g_nv < (int64_t)g_s1 ? g_nv : (int64_t)g_s1);  /* the stash's end in this row */"); }
        if (sm) {
            IrScalar t = s->reds[0].op->ptypes[0];
            be_line(b, "%s g_mx = %s;  /* the row's maximum: the stash's first */", ct(t), t == IR_F32 ? "(-gpuc_inff())" : "(-gpuc_inf())");
        }
        be_line(b, "/* phase 1: reduce the row */");
        row_scalar_loop(c, s, "g_lane", "g_col < g_head", "g_tpr", false, racc);
        row_vectors(c, k, false, sm, racc);
        row_scalar_loop(c, s, be_strf(&c->x, "g_head + g_nv * %d + g_lane", k->vec), be_strf(&c->x, "g_col < %s", cols), "g_tpr", false, racc);
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
    } else {
        row_allreduce(c, s, id, racc);
    }
    be_line(b, "if (g_lane == 0 && g_row < %s) {", rows);
    int o = 0;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "    %s[g_row] = %s;", be_vname(s->outs[o++]), racc[r][j]); }
    }
    be_line(b, "}");
    if (post) {
        be_line(b, "/* phase 2: the post at every element of the row */");
        if (k->vectorize) {
            row_scalar_loop(c, s, "g_lane", "g_col < g_head", "g_tpr", true, racc);
            row_vectors(c, k, true, false, racc);
            row_scalar_loop(c, s, be_strf(&c->x, "g_head + g_nv * %d + g_lane", k->vec), be_strf(&c->x, "g_col < %s", cols), "g_tpr", true, racc);
        } else {
            row_scalar_loop(c, s, "g_lane", be_strf(&c->x, "g_col < %s", cols), "g_tpr", true, racc);
        }
    }
    b->indent--;
    be_line(b, "}");
    acc_free(s, racc);
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* A column reduction: a thread per column, rows in order. */
static void emit_segred_col(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kernel_comment(c, k);
    signature(c, k, &p);
    const char *rows = be_strf(&c->x, "%s", be_vname(s->w[0]));
    const char *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));
    char ***racc = acc_names(c, s);
    int B = k->block;
    be_line(b, "/* one thread per column, rows in order: coalesced across the warp */");
    be_line(b, "for (int64_t g_col = (int64_t)blockIdx.x * %d + threadIdx.x; g_col < %s; g_col += (int64_t)gridDim.x * %d) {", B, cols, B);
    b->indent++;
    for (int r = 0; r < s->nreds; r++) { declare_ne(c, &s->reds[r], racc[r]); }
    be_line(b, "for (int64_t g_row = 0; g_row < %s; g_row++) {", rows);
    b->indent++;
    segred_element(c, s, cols, racc);
    b->indent--;
    be_line(b, "}");
    int o = 0;
    for (int r = 0; r < s->nreds; r++) {
        for (int j = 0; j < s->reds[r].arity; j++) { be_line(b, "%s[g_col] = %s;", be_vname(s->outs[o++]), racc[r][j]); }
    }
    b->indent--;
    be_line(b, "}");
    acc_free(s, racc);
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

static void emit_scatter_kernel(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kernel_comment(c, k);
    signature(c, k, &p);
    IrValue *out = s->outs[0];
    const char *d = be_strf(&c->x, "%s", be_vname(s->dest->dims[0]));
    be_line(b, "/* the destination was copied into the result before this launch */");
    be_line(b, "for (int64_t g_i = (int64_t)blockIdx.x * %d + threadIdx.x; g_i < %s; g_i += (int64_t)gridDim.x * %d) {", k->block, be_vname(s->w[0]), k->block);
    b->indent++;
    c->x.idx[0] = "g_i";
    c->x.idx[1] = "g_i";
    const char **res = map_body(c, s, "g_i");
    be_line(b, "if ((uint64_t)(%s) < (uint64_t)%s) {", res[0], d);
    be_line(b, "    %s[%s] = %s;", be_vname(out), res[0], res[1]);
    be_line(b, "}");
    free(res);
    b->indent--;
    be_line(b, "}");
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* ---- the matrix product ----
 * A block of MM_THREADS threads computes a BT x BT tile of the result
 * (k->tile = BT: 16, 32 or 64), BT * BT / MM_THREADS results per thread held
 * in registers. A and B pass through shared memory in slices MM_BK deep, in
 * two stages: the next slice is read from global memory into registers while
 * the products of this one run, then stored to the other stage, so each slice
 * costs one __syncthreads. The products:
 *   f64 on sm_80+  the f64 tensor cores: warp w computes the BT/2 x BT/2
 *                  quarter (w / 2, w % 2) as 8 x 8 tiles, k step by k step
 *                  (4 deep): one mma.m16n8k4 per pair of 8-row tiles and 8
 *                  columns on sm_90 (BT 32 and 64), else one mma.m8n8k4 per
 *                  8 x 8 tile
 *   otherwise      FMA: thread (y, x) = (t / 16, t % 16) computes rows
 *                  y + 8 i and columns x + 16 j, BT/8 x BT/16 of them
 * The shared rows are padded by MM_PAD elements, so that the fragment reads
 * (8-byte elements) and the FMA path's reads are free of bank conflicts. */
enum { MM_THREADS = 128, MM_BK = 16, MM_PAD = 4 };

/* Global -> registers g_la, g_lb: the slice of A (BT rows x MM_BK) and B
 * (MM_BK x BT columns) starting at k = kb; zeros outside the matrices, so
 * the padded products add nothing. Thread t reads A at row g_ar + 8 q,
 * k = kb + t % 16 and B at k = kb + t / BT + (128 / BT) q, column g_bc:
 * consecutive threads, consecutive addresses. */
static void mm_load(CuEmit *c, IrStmt *s, const char *K, int BT, const char *kb) {
    BeBuf *b = c->b;
    IrValue *A = s->map->res[0]->a[2]->a[0]->val, *Bv = s->map->res[0]->a[2]->a[1]->val;
    be_line(b, "const int64_t g_ak = %s + g_t %% %d, g_bk = %s + g_t / %d;", kb, MM_BK, kb, BT);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", BT * MM_BK / MM_THREADS);
    be_line(b, "    g_la[g_q] = g_ar + %d * g_q < %s && g_ak < %s ? %s[(g_ar + %d * g_q) * %s + g_ak] : (%s)0;", MM_THREADS / MM_BK,
            be_vname(A->dims[0]), K, be_vname(A), MM_THREADS / MM_BK, be_vname(A->dims[1]), ct(A->elem));
    be_line(b, "    g_lb[g_q] = g_bk + %d * g_q < %s && g_bc < %s ? %s[(g_bk + %d * g_q) * %s + g_bc] : (%s)0;", MM_THREADS / BT,
            K, be_vname(Bv->dims[1]), be_vname(Bv), MM_THREADS / BT, be_vname(Bv->dims[1]), ct(Bv->elem));
    be_line(b, "}");
}

/* Registers g_la, g_lb -> shared stage `stage`, where mm_load read them. */
static void mm_store(BeBuf *b, int BT, const char *stage) {
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", BT * MM_BK / MM_THREADS);
    be_line(b, "    g_as[%s][g_t / %d + %d * g_q][g_t %% %d] = g_la[g_q];", stage, MM_BK, MM_THREADS / MM_BK, MM_BK);
    be_line(b, "    g_bs[%s][g_t / %d + %d * g_q][g_t %% %d] = g_lb[g_q];", stage, BT, MM_THREADS / BT, BT);
    be_line(b, "}");
}

/* The tensor-core products of the slice in stage g_s (f64, sm_80+). Lane
 * (g, i) = (lane / 4, lane % 4) holds A[g][i] and B[i][g] of each 8 x 4 / 4 x 8
 * fragment and C[g][2i], C[g][2i + 1] of each 8 x 8 accumulator tile (PTX ISA,
 * "Matrix Fragments for mma.m8n8k4 with .f64"); mma.m16n8k4 is two such
 * products stacked in m: a[r] and C[4 entries] for rows g + 8r. */
static void mm_step_tc(BeBuf *b, int BT) {
    int W = BT / 2, MI = BT / 16;
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_j = 0; g_j < %d; g_j += 4) {", MM_BK);
    b->indent++;
    be_line(b, "double g_fa[%d], g_fb[%d];  /* this lane's A and B fragments of each 8-row / 8-column tile */", MI, MI);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", MI);
    be_line(b, "    g_fa[g_q] = g_as[g_s][g_wr * %d + g_q * 8 + g_g][g_j + g_i];", W);
    be_line(b, "    g_fb[g_q] = g_bs[g_s][g_j + g_i][g_wc * %d + g_q * 8 + g_g];", W);
    be_line(b, "}");
    if (MI % 2 == 0) {
        be_printf(b, "#if __CUDA_ARCH__ >= 900\n");
        be_line(b, "#pragma unroll");
        be_line(b, "for (int g_q = 0; g_q < %d; g_q += 2) {", MI);
        be_line(b, "    #pragma unroll");
        be_line(b, "    for (int g_n = 0; g_n < %d; g_n++) {", MI);
        be_line(b, "        double *g_c = &g_acc[(g_q * %d + g_n) * 2], *g_d = &g_acc[((g_q + 1) * %d + g_n) * 2];", MI, MI);
        be_line(b, "        asm volatile(\"mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%%0,%%1,%%2,%%3}, {%%4,%%5}, {%%6}, {%%0,%%1,%%2,%%3};\"");
        be_line(b, "            : \"+d\"(g_c[0]), \"+d\"(g_c[1]), \"+d\"(g_d[0]), \"+d\"(g_d[1]) : \"d\"(g_fa[g_q]), \"d\"(g_fa[g_q + 1]), \"d\"(g_fb[g_n]));");
        be_line(b, "    }");
        be_line(b, "}");
        be_printf(b, "#else\n");
    }
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", MI);
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_n = 0; g_n < %d; g_n++) {", MI);
    be_line(b, "        double *g_c = &g_acc[(g_q * %d + g_n) * 2];", MI);
    be_line(b, "        asm volatile(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%%0,%%1}, {%%2}, {%%3}, {%%0,%%1};\"");
    be_line(b, "            : \"+d\"(g_c[0]), \"+d\"(g_c[1]) : \"d\"(g_fa[g_q]), \"d\"(g_fb[g_n]));");
    be_line(b, "    }");
    be_line(b, "}");
    if (MI % 2 == 0) { be_printf(b, "#endif\n"); }
    b->indent--;
    be_line(b, "}");
}

/* The FMA products of the slice in stage g_s: k by k, BT/8 values of A and
 * BT/16 of B from shared memory for (BT/8) * (BT/16) products. */
static void mm_step_fma(CuEmit *c, IrStmt *s, int BT) {
    BeBuf *b = c->b;
    IrExpr *f = s->map->res[0];
    IrValue *A = f->a[2]->a[0]->val, *Bv = f->a[2]->a[1]->val;
    int RM = BT / 8, RN = BT / 16;
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_kk = 0; g_kk < %d; g_kk++) {", MM_BK);
    b->indent++;
    be_line(b, "%s g_a[%d];", ct(A->elem), RM);
    be_line(b, "%s g_b[%d];", ct(Bv->elem), RN);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) { g_a[g_q] = g_as[g_s][g_y + 8 * g_q][g_kk]; }", RM);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) { g_b[g_q] = g_bs[g_s][g_kk][g_x + 16 * g_q]; }", RN);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", RM * RN);
    be_line(b, "    g_acc[g_q] = %s;", be_binop(&c->x, IR_BIN_add, f->ty, "g_acc[g_q]",
            be_binop(&c->x, IR_BIN_mul, f->ty, be_strf(&c->x, "g_a[g_q / %d]", RN), be_strf(&c->x, "g_b[g_q %% %d]", RN))));
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

/* Result element (g_row, g_col) of accumulator g_acc[at], when in bounds. */
static void mm_put(CuEmit *c, IrStmt *s, const char *at) {
    BeBuf *b = c->b;
    be_line(b, "if (g_row < %s && g_col < %s) {", be_vname(s->w[0]), be_vname(s->w[1]));
    b->indent++;
    int saved = c->x.nmemo;
    be_expr_bind(&c->x, s->map->res[0], be_strf(&c->x, "g_acc[%s]", at));
    const char *res[1];
    be_lambda(&c->x, s->map, NULL, res);
    be_line(b, "%s[g_row * %s + g_col] = %s;", be_vname(s->outs[0]), be_vname(s->w[1]), res[0]);
    c->x.nmemo = saved;
    b->indent--;
    be_line(b, "}");
}

static void emit_matmul(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrExpr *f = s->map->res[0];
    IrValue *A = f->a[2]->a[0]->val, *Bv = f->a[2]->a[1]->val;
    int BT = k->tile, NACC = BT * BT / MM_THREADS, L = BT * MM_BK / MM_THREADS;
    bool tc = f->ty == IR_F64 && A->elem == IR_F64 && Bv->elem == IR_F64;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kernel_comment(c, k);
    signature(c, k, &p);
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "g_col";
    const char *K = be_expr(&c->x, f->a[0]);
    const char *init = be_expr(&c->x, f->a[1]);
    be_line(b, "/* a %d x %d tile of the result per block, %d results per thread in registers; slices of A", BT, BT, NACC);
    be_line(b, " * and B %d deep through shared memory, two stages: the next slice is loaded during these products */", MM_BK);
    be_line(b, "__shared__ %s g_as[2][%d][%d];  /* A slice [row][k] */", ct(A->elem), BT, MM_BK + MM_PAD);
    be_line(b, "__shared__ %s g_bs[2][%d][%d];  /* B slice [k][column] */", ct(Bv->elem), MM_BK, BT + MM_PAD);
    be_line(b, "%s g_la[%d];", ct(A->elem), L);
    be_line(b, "%s g_lb[%d];", ct(Bv->elem), L);
    be_line(b, "const int g_t = threadIdx.x;");
    if (tc) {
        be_printf(b, "#if __CUDA_ARCH__ >= 800\n");
        be_line(b, "const int g_g = (g_t & 31) >> 2, g_i = g_t & 3, g_wr = g_t >> 6, g_wc = (g_t >> 5) & 1;  /* lane group, lane in group, warp's quarter */");
        be_printf(b, "#else\n");
    }
    be_line(b, "const int g_y = g_t / 16, g_x = g_t %% 16;");
    if (tc) { be_printf(b, "#endif\n"); }
    be_line(b, "/* row tiles in a grid-stride loop: gridDim.y is at most 65535 */");
    be_line(b, "for (int64_t g_tm = blockIdx.y; g_tm < (%s + %d) / %d; g_tm += gridDim.y) {", be_vname(s->w[0]), BT - 1, BT);
    b->indent++;
    be_line(b, "const int64_t g_r0 = g_tm * %d, g_c0 = (int64_t)blockIdx.x * %d;", BT, BT);
    be_line(b, "const int64_t g_ar = g_r0 + g_t / %d, g_bc = g_c0 + g_t %% %d;  /* the first row of A, the column of B this thread loads */", MM_BK, BT);
    be_line(b, "%s g_acc[%d];", ct(f->ty), NACC);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) { g_acc[g_q] = %s; }", NACC, init);
    be_line(b, "{   /* the first slice */");
    b->indent++;
    mm_load(c, s, K, BT, "0");
    mm_store(b, BT, "0");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "int g_s = 0;");
    be_line(b, "for (int64_t g_kb = 0; g_kb < %s; g_kb += %d) {", K, MM_BK);
    b->indent++;
    be_line(b, "const bool g_next = g_kb + %d < %s;", MM_BK, K);
    be_line(b, "if (g_next) {");
    b->indent++;
    mm_load(c, s, K, BT, be_strf(&c->x, "g_kb + %d", MM_BK));
    b->indent--;
    be_line(b, "}");
    if (tc) {
        be_printf(b, "#if __CUDA_ARCH__ >= 800\n");
        mm_step_tc(b, BT);
        be_printf(b, "#else\n");
    }
    mm_step_fma(c, s, BT);
    if (tc) { be_printf(b, "#endif\n"); }
    be_line(b, "if (g_next) {");
    b->indent++;
    mm_store(b, BT, "g_s ^ 1");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "g_s ^= 1;");
    b->indent--;
    be_line(b, "}");
    be_line(b, "/* the results */");
    if (tc) {
        int MI = BT / 16;
        be_printf(b, "#if __CUDA_ARCH__ >= 800\n");
        be_line(b, "#pragma unroll");
        be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", NACC);
        b->indent++;
        be_line(b, "const int64_t g_row = g_r0 + g_wr * %d + (g_q / %d) * 8 + g_g;", BT / 2, 2 * MI);
        be_line(b, "const int64_t g_col = g_c0 + g_wc * %d + (g_q / 2 %% %d) * 8 + 2 * g_i + g_q %% 2;", BT / 2, MI);
        mm_put(c, s, "g_q");
        b->indent--;
        be_line(b, "}");
        be_printf(b, "#else\n");
    }
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", NACC);
    b->indent++;
    be_line(b, "const int64_t g_row = g_r0 + g_y + 8 * (g_q / %d), g_col = g_c0 + g_x + 16 * (g_q %% %d);", BT / 16, BT / 16);
    mm_put(c, s, "g_q");
    b->indent--;
    be_line(b, "}");
    if (tc) { be_printf(b, "#endif\n"); }
    b->indent--;
    be_line(b, "}");
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* ---- host launchers ----
 * The device-level entry gpuc_dev_NAME(GpucHost *gpuc_h, sizes, params, outs)
 * is written once, over a small host interface that two preludes implement:
 * the CUDA runtime API for nvcc (--emit=cuda with GPUC_CUDA_HOST; GpucHost *
 * is then a cudaStream_t) and the gpuc runtime for executables and
 * libraries (backend/emit_program.c). The interface, all returning 0 or an
 * error code unless noted:
 *   gpuc_h_alloc(h, &p, bytes)  gpuc_h_free(h, p)  gpuc_h_mark(h)  gpuc_h_release(h, mark)
 *   gpuc_h_zero(h, p, bytes)    gpuc_h_d2d / gpuc_h_d2h / gpuc_h_h2d(h, dst, src, bytes)
 *   gpuc_h_launch(h, GPUC_KERNEL(name), grid_x, grid_y, block, shared, args)
 *     (shared: bytes of dynamic shared memory, 0 but for the row kernels'
 *     stash; over 48 KiB the kernel opts in once, by either implementation)
 *   gpuc_h_sms(h) (multiprocessors)  gpuc_h_shared_max(h) (the shared memory
 *   a block may opt into, bytes)  gpuc_h_resident(h, GPUC_KERNEL(name), block, &n)
 *   (blocks of the kernel that fit on one multiprocessor)  gpuc_h_oob(h, &hit, at) (fetch and clear
 *   the device's out-of-bounds record)  gpuc_h_status(h) (a failed host read)
 *   gpuc_dread(h, p, i, n, j, m) (one element of a device array)
 * GPUC_TRY(x) returns x's error after releasing every device block this call
 * allocated (gpuc_h_release to the mark taken on entry), so a failed call
 * leaks nothing. An index out of bounds makes the entry return -1. */
static const char *count_of(CuEmit *c, const IrValue *v) {
    if (v->rank == 1) { return be_strf(&c->x, "%s", be_vname(v->dims[0])); }
    return be_strf(&c->x, "(%s * %s)", be_vname(v->dims[0]), be_vname(v->dims[1]));
}

/* A launch of `block` threads per block and `shared` bytes of dynamic
 * shared memory (expressions). */
static void launch_block(CuEmit *c, IrKernel *k, KParams *p, const char *gx, const char *gy, const char *block, const char *shared) {
    BeBuf *b = c->b;
    be_printf(b, "%*s{ void *g_args[] = { ", b->indent * 4, "");
    for (int i = 0; i < p->n; i++) { be_printf(b, "%s(void *)&%s", i ? ", " : "", p->arg[i]); }
    if (!p->n) { be_printf(b, "NULL"); }
    be_printf(b, " };\n");
    be_line(b, "  GPUC_TRY(gpuc_h_launch(gpuc_h, GPUC_KERNEL(%s), %s, %s, %s, %s, g_args)); }", k->name, gx, gy, block, shared);
}

static void launch(CuEmit *c, IrKernel *k, KParams *p, const char *gx, const char *gy) {
    launch_block(c, k, p, gx, gy, be_strf(&c->x, "%d", k->block), "0");
}

/* `if (cond) { launch }` */
static void launch_if(CuEmit *c, IrKernel *k, KParams *p, const char *cond, const char *gx, const char *gy) {
    be_line(c->b, "if (%s) {", cond);
    c->b->indent++;
    launch(c, k, p, gx, gy);
    c->b->indent--;
    be_line(c->b, "}");
}

/* A grid-stride kernel over n elements, per_block of them per block: as many
 * blocks as needed up to 32 per multiprocessor, none when n is 0. */
static void grid_stride_launch(CuEmit *c, IrKernel *k, KParams *p, const char *n, int per_block) {
    be_line(c->b, "const int64_t g_blocks = (%s + %d) / %d;", n, per_block - 1, per_block);
    be_line(c->b, "const unsigned g_grid = (unsigned)(g_blocks < (int64_t)gpuc_h_sms(gpuc_h) * 32 ? g_blocks : (int64_t)gpuc_h_sms(gpuc_h) * 32);");
    launch_if(c, k, p, be_strf(&c->x, "%s > 0", n), "g_grid", "1");
}

/* Declare a device array `T *name` of count elements (count may be 0). */
static void dalloc(CuEmit *c, const char *t, const char *name, const char *count) {
    be_line(c->b, "%s *%s = NULL;", t, name);
    be_line(c->b, "GPUC_TRY(gpuc_h_alloc(gpuc_h, (void **)&%s, (size_t)(%s) * sizeof(%s)));", name, count, t);
}

/* While emitting gpuc_dev_NAME_into: results go to arrays the caller
 * allocated (their sizes follow from the parameters). */
static bool host_into;

/* In host_into mode, the result number whose caller array the statement
 * output v is written to directly (its first occurrence among the results,
 * not a parameter), else -1. */
static int into_result(IrEntry *e, const IrValue *v) {
    if (!host_into || !v->rank || v->is_param) { return -1; }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i] == v) { return i; }
    }
    return -1;
}

/* In host_into mode, the result number of a scalar statement output v that
 * stays on the device: a result of the entry that no statement reads, so
 * the kernel writes it straight into the caller's device scalar and the
 * launcher does not wait for it. Else -1. */
static int device_scalar_result(IrEntry *e, const IrValue *v) {
    if (!host_into || v->rank || v->is_param) { return -1; }
    bool by_reduce = false;
    for (int i = 0; i < e->nkernels; i++) { by_reduce = by_reduce || (e->kernels[i].kind == IR_K_REDUCE && e->kernels[i].stmt == v->def); }
    if (!by_reduce) { return -1; }
    int first = -1, times = 0;
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i] == v) { times++; if (first < 0) { first = i; } }
    }
    return first >= 0 && v->nuses == times ? first : -1;
}

static void host_stmt(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    be_line(b, "/* %s:%d: %s */", c->m->file, s->line, k->name);
    if (k->kind == IR_K_HOST) {
        if (s->nouts == 1 && s->outs[0]->has_const && !s->outs[0]->name) {
            return;
        }
        const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
        c->x.host_reads = true;
        be_lambda(&c->x, s->map, NULL, res);
        c->x.host_reads = false;
        for (int o = 0; o < s->nouts; o++) { be_line(b, "const %s %s = %s;", ct(s->outs[o]->elem), be_vname(s->outs[o]), res[o]); }
        free(res);
        be_line(b, "GPUC_TRY(gpuc_h_status(gpuc_h));");
        return;
    }
    KParams p = { 0 };
    stmt_params(c, s, &p);
    /* outputs */
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        int r = s->kind == IR_S_FILTER ? -1 : into_result(c->e, v);
        if (v->rank && r >= 0) {
            be_line(b, "%s *%s = out%d; /* the caller's result array */", ct(v->elem), be_vname(v), r);
        } else if (v->rank) {
            dalloc(c, ct(v->elem), be_vname(v), s->kind == IR_S_FILTER ? be_vname(s->w[0]) : count_of(c, v));
        } else if (device_scalar_result(c->e, v) >= 0) {
            be_line(b, "%s *%s_d = out%d; /* the caller's device scalar */", ct(v->elem), be_vname(v), device_scalar_result(c->e, v));
        } else {
            be_line(b, "%s %s;", ct(v->elem), be_vname(v));
            dalloc(c, ct(v->elem), be_strf(&c->x, "%s_d", be_vname(v)), "1");
        }
    }
    const char *n = s->rank == 2 ? be_strf(&c->x, "(%s * %s)", be_vname(s->w[0]), be_vname(s->w[1])) : be_strf(&c->x, "%s", be_vname(s->w[0]));
    be_line(b, "{");
    b->indent++;
    switch (k->kind) {
    case IR_K_MAP: {
        grid_stride_launch(c, k, &p, n, k->block * k->items);
        break;
    }
    case IR_K_REDUCE: {
        IrStmt *st = s;
        be_line(b, "const int64_t g_blocks = (%s + %d) / %d;", n, k->block * k->items - 1, k->block * k->items);
        /* at most one wave: the blocks that fit on the device at once (a
         * partial second wave would leave the multiprocessors part-idle) */
        be_line(b, "int g_fit = 1;");
        be_line(b, "GPUC_TRY(gpuc_h_resident(gpuc_h, GPUC_KERNEL(%s), %d, &g_fit));", k->name, k->block);
        be_line(b, "const int64_t g_wave = (int64_t)gpuc_h_sms(gpuc_h) * g_fit;");
        be_line(b, "const unsigned g_grid = (unsigned)(g_blocks < 1 ? 1 : g_blocks < g_wave ? g_blocks : g_wave);");
        for (int r = 0; r < st->nreds; r++) {
            for (int j = 0; j < st->reds[r].arity; j++) {
                dalloc(c, ct(st->reds[r].op->ptypes[j]), be_strf(&c->x, "g_part%d_%d", r, j), "g_grid");
            }
        }
        be_line(b, "unsigned int *g_done = NULL;  /* zero; the kernel's last block sets it to zero again */");
        be_line(b, "GPUC_TRY(gpuc_h_counter(gpuc_h, &g_done));");
        for (int r = 0; r < st->nreds; r++) {
            for (int j = 0; j < st->reds[r].arity; j++) { kp_add(c, &p, "", be_strf(&c->x, "g_part%d_%d", r, j)); }
        }
        kp_add(c, &p, "", "g_done");
        launch(c, k, &p, "g_grid", "1");
        for (int r = 0; r < st->nreds; r++) {
            for (int j = 0; j < st->reds[r].arity; j++) { be_line(b, "gpuc_h_free(gpuc_h, g_part%d_%d);", r, j); }
        }
        break;
    }
    case IR_K_SCAN: case IR_K_FILTER: {
        bool filter = k->kind == IR_K_FILTER;
        int W;
        IrScalar *wt = scan_types(s, &W);
        const int word = scan_word_bytes(wt, W);
        be_line(b, "const int64_t g_ntiles = (%s + %d) / %d;", n, k->block * k->items - 1, k->block * k->items);
        be_line(b, "if (g_ntiles > 0) {");
        b->indent++;
        /* the status words (or flags), zeroed: no tile has published yet */
        const char *st = word ? "g_words" : "g_flags";
        if (word) {
            const char *nw = word == 8 ? "g_ntiles" : "2 * g_ntiles";  /* 8-byte halves of the words */
            dalloc(c, "unsigned long long", "g_words", nw);
            be_line(b, "GPUC_TRY(gpuc_h_zero(gpuc_h, g_words, (size_t)(%s) * sizeof(unsigned long long)));", nw);
        } else {
            dalloc(c, "int", "g_flags", "g_ntiles");
            be_line(b, "GPUC_TRY(gpuc_h_zero(gpuc_h, g_flags, (size_t)g_ntiles * sizeof(int)));");
            for (int j = 0; j < W; j++) {
                dalloc(c, ct(wt[j]), be_strf(&c->x, "g_agg%d", j), "g_ntiles");
                dalloc(c, ct(wt[j]), be_strf(&c->x, "g_incl%d", j), "g_ntiles");
            }
        }
        kp_add(c, &p, "", st);
        for (int j = 0; !word && j < W; j++) {
            kp_add(c, &p, "", be_strf(&c->x, "g_agg%d", j));
            kp_add(c, &p, "", be_strf(&c->x, "g_incl%d", j));
        }
        launch(c, k, &p, "(unsigned)g_ntiles", "1");
        be_line(b, "gpuc_h_free(gpuc_h, %s);", st);
        for (int j = 0; !word && j < W; j++) { be_line(b, "gpuc_h_free(gpuc_h, g_agg%d);", j); be_line(b, "gpuc_h_free(gpuc_h, g_incl%d);", j); }
        free(wt);
        b->indent--;
        if (filter) {
            be_line(b, "} else {");
            be_line(b, "    GPUC_TRY(gpuc_h_zero(gpuc_h, %s_d, sizeof(int64_t)));", be_vname(s->outs[s->nouts - 1]));
        }
        be_line(b, "}");
        break;
    }
    case IR_K_SCATTER: {
        const char *dn = count_of(c, s->dest);
        be_line(b, "if (%s > 0) {", dn);
        be_line(b, "    GPUC_TRY(gpuc_h_d2d(gpuc_h, %s, %s, (size_t)(%s) * sizeof(%s)));", be_vname(s->outs[0]), be_vname(s->dest), dn, ct(s->outs[0]->elem));
        be_line(b, "}");
        grid_stride_launch(c, k, &p, n, k->block);
        break;
    }
    case IR_K_SEGRED_ROW: {
        /* threads per row from the row length: the fewest of 4, 8, 16 or 32
         * lanes of a warp whose `items` vectors per lane hold the row (short
         * rows: every lane's registers used, a shorter butterfly), else a
         * block of 128 up to k->block threads: the smallest that holds the
         * row in registers, or with a stash (grep "ROW STASH") in registers
         * and the stash.
         *
         * Why the stash's sizes (sm_90; chosen by this reasoning, then
         * measured on an H100: rows of 32768 f32 at 0.75 of the copy rate
         * against 0.68 without the stash, docs/performance.md): these kernels take
         * at most 128 registers a thread (__launch_bounds__(256, 2); ptxas:
         * f32 softmax 120, f64 128, no spills), so 4 blocks of 128 threads
         * or 2 of 256 fit an SM's 64 K registers, and 1 of 512. Long rows were at one 512-thread block
         * per SM: its barriers (two butterflies through shared memory per
         * row) and the turn from reading to writing left the SM without
         * loads in flight, and half a row of 32768 f32 was read twice. So
         * the launcher picks blocks of 128 or 256 (k->block is 256 for
         * these kernels): registers hold 16 KB of the row per 128 threads
         * (8 x 16 bytes each), the stash at most 24 vectors (384 bytes) a
         * thread and 96 KiB a block, so 4 blocks of 128 (48 KiB each) or 2
         * of 256 (96 KiB each) still fit in the 228 KiB of shared memory
         * that registers would let in, 512 threads an SM either way, 2 or 4
         * rows in progress at different phases. Rows of f32 up to 16384
         * (f64 8192) take 128 threads, up to 32768 (f64 16384) 256;
         * longer rows read the rest twice, from 256 threads. The stash
         * fills 4 vectors a lane at a time (f64 2: 16 or 8 KB in flight per
         * 256 threads on top of the registers' 32 KB). No carveout is set:
         * the driver sizes each kernel's shared memory to the blocks that
         * fit (worth a look at ncu's occupancy section). */
        int per = k->items * k->vec, tpb0 = k->block < 256 ? k->block : 256;
        RowStash st = row_stash(k);
        const char *rows = be_vname(s->w[0]), *cols = be_vname(s->w[1]);
        be_line(b, "int g_tpr = 32;");
        be_line(b, "while (g_tpr > 4 && (int64_t)(g_tpr / 2) * %d >= %s) {", per, cols);
        be_line(b, "    g_tpr /= 2;");
        be_line(b, "}");
        be_line(b, "unsigned g_tpb = %d;", tpb0);
        if (st.on) { be_line(b, "int g_sv = 0;  /* stash vectors per lane and input */"); }
        be_line(b, "if (%s > (int64_t)%d) {", cols, 32 * per);
        if (st.on) {
            int vb = 16 * k->stmt->nins;  /* bytes of a stash vector per lane, every input */
            be_line(b, "    /* the stash may take the device's opt-in limit less the static shared memory, at most %d bytes a block and %d a thread */",
                    ROW_STASH_BLOCK_BYTES, ROW_STASH_LANE_BYTES);
            be_line(b, "    const int64_t g_smax = (int64_t)gpuc_h_shared_max(gpuc_h) - %d;", row_static_shared(k));
            be_line(b, "    for (g_tpb = %du;; g_tpb *= 2) {", k->block < 128 ? k->block : 128);
            be_line(b, "        int64_t g_cap = (int64_t)%d * g_tpb * %d <= (int64_t)%d ? %d : (int64_t)%d / ((int64_t)g_tpb * %d);", st.sv, vb,
                    ROW_STASH_BLOCK_BYTES, st.sv, ROW_STASH_BLOCK_BYTES, vb);
            be_line(b, "        if (g_cap * g_tpb * %d > g_smax) {", vb);
            be_line(b, "            g_cap = g_smax > 0 ? g_smax / ((int64_t)g_tpb * %d) : 0;", vb);
            be_line(b, "        }");
            be_line(b, "        g_sv = (int)g_cap;");
            be_line(b, "        if (g_tpb >= %du || (int64_t)g_tpb * (%d + (int64_t)g_sv * %d) >= %s) {", k->block, per, k->vec, cols);
            be_line(b, "            break;");
            be_line(b, "        }");
            be_line(b, "    }");
            be_line(b, "    /* only the stash vectors the row needs */");
            be_line(b, "    const int64_t g_need = ((%s + %d) / %d + g_tpb - 1) / g_tpb - %d;", cols, k->vec - 1, k->vec, k->items);
            be_line(b, "    if (g_need < (int64_t)g_sv) {");
            be_line(b, "        g_sv = g_need > 0 ? (int)g_need : 0;");
            be_line(b, "    }");
        } else {
            be_line(b, "    for (g_tpb = %d; g_tpb < %du && (int64_t)g_tpb * %d < %s; g_tpb *= 2) {", k->block < 128 ? k->block : 128, k->block, per, cols);
            be_line(b, "    }");
        }
        be_line(b, "    g_tpr = (int)g_tpb;");
        be_line(b, "}");
        if (st.on) { be_line(b, "const unsigned g_shared = (unsigned)g_sv * g_tpb * %du;  /* the stash */", 16 * k->stmt->nins); }
        be_line(b, "const int64_t g_rpb = (int64_t)(g_tpb / (unsigned)g_tpr);");
        be_line(b, "const int64_t g_blocks = (%s + g_rpb - 1) / g_rpb;", rows);
        be_line(b, "const unsigned g_grid = (unsigned)(g_blocks < 65535 * 16 ? g_blocks : 65535 * 16);");
        kp_add(c, &p, "", "g_tpr");
        if (st.on) { kp_add(c, &p, "", "g_sv"); }
        be_line(b, "if (%s > 0) {", rows);
        b->indent++;
        launch_block(c, k, &p, "g_grid", "1", "g_tpb", st.on ? "g_shared" : "0");
        b->indent--;
        be_line(b, "}");
        break;
    }
    case IR_K_SEGRED_COL: {
        be_line(b, "const int64_t g_blocks = (%s + %d) / %d;", be_vname(s->w[1]), k->block - 1, k->block);
        launch_if(c, k, &p, "g_blocks > 0", "(unsigned)g_blocks", "1");
        break;
    }
    case IR_K_MATMUL: {
        /* column tiles on x, row tiles on y (the kernel loops over those beyond 65535) */
        be_line(b, "const int64_t g_tn = (%s + %d) / %d;", be_vname(s->w[0]), k->tile - 1, k->tile);
        be_line(b, "const unsigned g_gx = (unsigned)((%s + %d) / %d), g_gy = (unsigned)(g_tn < 65535 ? g_tn : 65535);",
                be_vname(s->w[1]), k->tile - 1, k->tile);
        launch_if(c, k, &p, be_strf(&c->x, "%s > 0 && %s > 0", be_vname(s->w[0]), be_vname(s->w[1])), "g_gx", "g_gy");
        break;
    }
    case IR_K_HOST: break;
    }
    b->indent--;
    be_line(b, "}");
    /* scalar results come back to the host: later statements take them by value */
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        if (v->rank || device_scalar_result(c->e, v) >= 0) { continue; }
        if (k->kind == IR_K_REDUCE) {
            be_line(b, "if (%s > 0) {", n);
            be_line(b, "    GPUC_TRY(gpuc_h_d2h(gpuc_h, &%s, %s_d, sizeof(%s)));", be_vname(v), be_vname(v), ct(v->elem));
            be_line(b, "} else {");
            /* empty input: the neutral element */
            int at = 0, idx = o - (s->nouts - ir_stmt_nmapped(s) - ir_stmt_red_width(s));
            for (int r = 0; r < s->nreds; r++) {
                for (int j = 0; j < s->reds[r].arity; j++) {
                    if (at == idx) { be_line(b, "    %s = %s;", be_vname(v), be_expr(&c->x, s->reds[r].ne[j])); }
                    at++;
                }
            }
            be_line(b, "}");
        } else {
            be_line(b, "GPUC_TRY(gpuc_h_d2h(gpuc_h, &%s, %s_d, sizeof(%s)));", be_vname(v), be_vname(v), ct(v->elem));
        }
        be_line(b, "gpuc_h_free(gpuc_h, %s_d);", be_vname(v));
        be_line(b, "(void)%s;", be_vname(v));
    }
    kp_free(&p);
}

static bool expr_reads(const IrExpr *x) {
    if (!x) { return false; }
    return x->kind == IR_E_READ || expr_reads(x->a[0]) || expr_reads(x->a[1]) || expr_reads(x->a[2]);
}

static bool lambda_reads(const IrLambda *l) {
    if (!l) { return false; }
    for (int i = 0; i < l->nres; i++) { if (expr_reads(l->res[i])) { return true; } }
    return false;
}

/* Does any kernel of the entry read an array by index (and so may fail)? */
static bool entry_reads(IrEntry *e) {
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        if (lambda_reads(s->map) || lambda_reads(s->post)) { return true; }
    }
    return false;
}

static bool is_result(IrEntry *e, IrValue *v, int before) {
    for (int i = 0; i < before; i++) { if (e->results[i] == v) { return true; } }
    return false;
}

/* Is the size v known to the caller from the arguments alone: a size
 * variable, a constant, or an integer parameter (`n: i64` with `-> T[n]`)? */
static bool size_known(IrEntry *e, const IrValue *v) {
    if (v->has_const || v->is_param) { return true; }
    for (int i = 0; i < e->nsizes; i++) {
        if (e->sizes[i] == v) { return true; }
    }
    const IrStmt *s = v->def;
    if (s && s->kind == IR_S_SCALAR && s->nouts == 1 && s->map && s->map->nres == 1) {
        const IrExpr *x = s->map->res[0];
        if (x->kind == IR_E_CAST) { x = x->a[0]; }
        return x->kind == IR_E_FREE && x->val->is_param;
    }
    return false;
}

/* Can the caller allocate every array result before the call? */
static bool results_known(IrEntry *e) {
    for (int i = 0; i < e->nresults; i++) {
        const IrValue *v = e->results[i];
        for (int d = 0; d < v->rank; d++) {
            if (!size_known(e, v->dims[d])) { return false; }
        }
    }
    return true;
}

/* gpuc_dev_NAME_into: sizes, params, then per result `T *outI`: device
 * memory the caller allocated, an array or one scalar. */
static void into_signature(BeBuf *b, IrEntry *e) {
    be_printf(b, "int gpuc_dev_%s_into(GpucHost *gpuc_h", e->name);
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, ", int64_t %s", be_vname(e->sizes[i])); }
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (v->rank) { be_printf(b, ", const %s *%s", ct(v->elem), be_vname(v)); }
        else { be_printf(b, ", %s %s", ct(v->elem), be_vname(v)); }
    }
    for (int i = 0; i < e->nresults; i++) { be_printf(b, ", %s *out%d", ct(e->results[i]->elem), i); }
    be_printf(b, ")");
}

/* gpuc_dev_NAME: the entry on device arrays. Array results are device blocks
 * from gpuc_h_alloc that the caller frees with gpuc_h_free. With into (only
 * when results_known), gpuc_dev_NAME_into: array results are written to the
 * caller's device arrays. */
static void host_entry(CuEmit *c, IrEntry *e, bool into) {
    BeBuf *b = c->b;
    c->e = e;
    host_into = into;
    if (into) {
        be_printf(b, "/* %s:%d: entry %s on device arrays, results into the caller's arrays */\n", c->m->file, e->line, e->name);
        be_printf(b, "GPUC_HOST_FN ");
        into_signature(b, e);
    } else {
        be_printf(b, "/* %s:%d: entry %s on device arrays */\n", c->m->file, e->line, e->name);
        be_printf(b, "GPUC_HOST_FN ");
        be_entry_signature(b, e, "gpuc_dev_", "GpucHost *gpuc_h");
    }
    be_printf(b, " {\n");
    b->indent = 1;
    be_line(b, "const int g_mark = gpuc_h_mark(gpuc_h);");
    ir_count_uses(e);  /* device_scalar_result needs each value's readers */
    c->x.ntmp = 0;
    for (int i = 0; i < e->nkernels; i++) {
        be_expr_reset(&c->x);
        host_stmt(c, &e->kernels[i]);
    }
    if (entry_reads(e)) {
        be_line(b, "/* an index out of bounds in a kernel fails the entry */");
        be_line(b, "{");
        b->indent++;
        be_line(b, "int g_hit = 0;");
        be_line(b, "long long g_at[2] = { 0, 0 };");
        be_line(b, "GPUC_TRY(gpuc_h_oob(gpuc_h, &g_hit, g_at));");
        be_line(b, "if (g_hit && !gpuc_oob_hit) { gpuc_oob_hit = 1; gpuc_oob_at[0] = g_at[0]; gpuc_oob_at[1] = g_at[1]; }");
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "if (gpuc_oob_hit) {");
    be_line(b, "    gpuc_h_release(gpuc_h, g_mark);");
    be_line(b, "    return -1;");
    be_line(b, "}");
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (!v->rank && into) {
            /* the caller's device scalar: written by its reduction kernel, or
             * copied (from host memory the copy has read when it returns) */
            int r = device_scalar_result(e, v);
            if (r >= 0 && r != i) { be_line(b, "GPUC_TRY(gpuc_h_d2d(gpuc_h, out%d, out%d, sizeof(%s)));", i, r, ct(v->elem)); }
            if (r < 0) { be_line(b, "GPUC_TRY(gpuc_h_h2d(gpuc_h, out%d, &%s, sizeof(%s)));", i, be_vname(v), ct(v->elem)); }
            continue;
        }
        if (!v->rank) { be_line(b, "*out%d = %s;", i, be_vname(v)); continue; }
        const char *n = count_of(c, v);
        if (into) {
            if (into_result(e, v) != i) {
                be_line(b, "if (%s > 0) { GPUC_TRY(gpuc_h_d2d(gpuc_h, out%d, %s, (size_t)(%s) * sizeof(%s))); }", n, i, be_vname(v), n, ct(v->elem));
            }
            continue;
        }
        be_line(b, "out%d_shape[0] = %s;", i, be_vname(v->dims[0]));
        be_line(b, "out%d_shape[1] = %s;", i, v->rank == 2 ? be_vname(v->dims[1]) : "1");
        if (v->is_param || is_result(e, v, i)) {
            be_line(b, "GPUC_TRY(gpuc_h_alloc(gpuc_h, (void **)out%d, (size_t)(%s) * sizeof(%s)));", i, n, ct(v->elem));
            be_line(b, "if (%s > 0) { GPUC_TRY(gpuc_h_d2d(gpuc_h, *out%d, %s, (size_t)(%s) * sizeof(%s))); }", n, i, be_vname(v), n, ct(v->elem));
        } else {
            be_line(b, "*out%d = %s;", i, be_vname(v));
        }
    }
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead || s->kind == IR_S_SCALAR) { continue; }
        for (int o = 0; o < s->nouts; o++) {
            if (s->outs[o]->rank && !is_result(e, s->outs[o], e->nresults)) { be_line(b, "gpuc_h_free(gpuc_h, %s);", be_vname(s->outs[o])); }
        }
    }
    be_line(b, "return 0;");
    b->indent = 0;
    be_printf(b, "}\n\n");
    host_into = false;
}

/* Under GPUC_MAIN (nvcc): gpuc_entry_NAME on host arrays, the C backend's
 * signature, for the generated text main. */
static void host_array_entry(CuEmit *c, IrEntry *e) {
    BeBuf *b = c->b;
    be_printf(b, "/* entry %s on host arrays, as the C backend's gpuc_entry_%s */\n", e->name, e->name);
    be_printf(b, "GPUC_HAPI ");
    be_entry_signature(b, e, "gpuc_entry_", NULL);
    be_printf(b, " {\n");
    b->indent = 1;
    be_line(b, "GpucHost *gpuc_h = 0; /* the default stream */");
    be_line(b, "const int g_mark = gpuc_h_mark(gpuc_h);");
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (!v->rank) { continue; }
        const char *n = count_of(c, v);
        dalloc(c, ct(v->elem), be_strf(&c->x, "g_d%d", i), n);
        be_line(b, "if (%s > 0) { GPUC_TRY(gpuc_h_h2d(gpuc_h, g_d%d, %s, (size_t)(%s) * sizeof(%s))); }", n, i, be_vname(v), n, ct(v->elem));
    }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_line(b, "%s *g_r%d = NULL;", ct(e->results[i]->elem), i); }
    }
    be_printf(b, "    GPUC_TRY(gpuc_dev_%s(gpuc_h", e->name);
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, ", %s", be_vname(e->sizes[i])); }
    for (int i = 0; i < e->nparams; i++) {
        if (e->params[i]->rank) { be_printf(b, ", g_d%d", i); }
        else { be_printf(b, ", %s", be_vname(e->params[i])); }
    }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_printf(b, ", &g_r%d, out%d_shape", i, i); }
        else { be_printf(b, ", out%d", i); }
    }
    be_printf(b, "));\n");
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (!v->rank) { continue; }
        be_line(b, "{");
        be_line(b, "    const int64_t g_n = out%d_shape[0] * out%d_shape[1];", i, i);
        be_line(b, "    *out%d = (%s *)malloc((size_t)(g_n > 0 ? g_n : 1) * sizeof(%s));", i, ct(v->elem), ct(v->elem));
        be_line(b, "    if (g_n > 0) { GPUC_TRY(gpuc_h_d2h(gpuc_h, *out%d, g_r%d, (size_t)g_n * sizeof(%s))); }", i, i, ct(v->elem));
        be_line(b, "}");
    }
    be_line(b, "gpuc_h_release(gpuc_h, g_mark);");
    be_line(b, "return 0;");
    b->indent = 0;
    be_printf(b, "}\n\n");
}

/* The host interface over the CUDA runtime API (nvcc). GpucHost * is a
 * cudaStream_t; errors are cudaError_t values. Device blocks are cached by
 * size (per translation unit, not thread-safe), so repeated calls do not
 * cudaMalloc. */
static void nvcc_host_prelude(BeBuf *b) {
    be_printf(b,
        "/* ---- host interface over the CUDA runtime API ---- */\n"
        "#include <cuda_runtime.h>\n"
        "typedef struct CUstream_st GpucHost; /* GpucHost * is a cudaStream_t */\n"
        "#define GPUC_HAPI static inline __attribute__((unused))\n#define GPUC_HOST_FN GPUC_HAPI\n"
        "#define GPUC_KERNEL(k) ((const void *)k)\n"
        "#define GPUC_TRY(x) do { int g_e_ = (int)(x); if (g_e_ != 0) { gpuc_h_release(gpuc_h, g_mark); return g_e_; } } while (0)\n"
        "GPUC_HAPI int gpuc_h_sms(GpucHost *h) {\n"
        "    (void)h;\n"
        "    static int sms = 0;\n"
        "    if (!sms) { int d = 0; if (cudaGetDevice(&d) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d) != cudaSuccess) { sms = 1; } }\n"
        "    return sms;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_resident(GpucHost *h, const void *k, unsigned block, int *out) {\n"
        "    (void)h;\n"
        "    static struct { const void *k; unsigned block; int n; } seen[64];\n"
        "    static int nseen;\n"
        "    for (int i = 0; i < nseen; i++) { if (seen[i].k == k && seen[i].block == block) { *out = seen[i].n; return 0; } }\n"
        "    int n = 0;\n"
        "    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, (int)block, 0);\n"
        "    if (e != cudaSuccess) { return (int)e; }\n"
        "    *out = n > 0 ? n : 1;\n"
        "    if (nseen < 64) { seen[nseen].k = k; seen[nseen].block = block; seen[nseen].n = *out; nseen++; }\n"
        "    return 0;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_shared_max(GpucHost *h) {\n"
        "    (void)h;\n"
        "    static int bytes = 0;\n"
        "    if (!bytes) { int d = 0; if (cudaGetDevice(&d) != cudaSuccess || cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, d) != cudaSuccess || bytes <= 0) { bytes = 48 * 1024; } }\n"
        "    return bytes;\n"
        "}\n"
        "typedef struct { void *p; size_t n; } GpucBlock;\n"
        "static GpucBlock gpuc_free_blocks[256], *gpuc_live;\n"
        "static int gpuc_nfree, gpuc_nlive, gpuc_caplive;\n"
        "GPUC_HAPI int gpuc_h_alloc(GpucHost *h, void **out, size_t n) {\n"
        "    (void)h;\n"
        "    n = n ? (n + 255) & ~(size_t)255 : 256;\n"
        "    void *p = NULL;\n"
        "    for (int i = 0; i < gpuc_nfree; i++) {\n"
        "        if (gpuc_free_blocks[i].n == n) { p = gpuc_free_blocks[i].p; gpuc_free_blocks[i] = gpuc_free_blocks[--gpuc_nfree]; break; }\n"
        "    }\n"
        "    if (!p) { cudaError_t e = cudaMalloc(&p, n); if (e != cudaSuccess) { return (int)e; } }\n"
        "    if (gpuc_nlive == gpuc_caplive) {\n"
        "        int cap = gpuc_caplive ? 2 * gpuc_caplive : 64;\n"
        "        GpucBlock *l = (GpucBlock *)realloc(gpuc_live, sizeof *l * (size_t)cap);\n"
        "        if (!l) { cudaFree(p); return (int)cudaErrorMemoryAllocation; }\n"
        "        gpuc_live = l; gpuc_caplive = cap;\n"
        "    }\n"
        "    gpuc_live[gpuc_nlive].p = p; gpuc_live[gpuc_nlive].n = n; gpuc_nlive++;\n"
        "    *out = p;\n"
        "    return 0;\n"
        "}\n"
        "GPUC_HAPI void gpuc_h_drop(int i) {\n"
        "    if (gpuc_nfree < 256) { gpuc_free_blocks[gpuc_nfree++] = gpuc_live[i]; } else { cudaFree(gpuc_live[i].p); }\n"
        "    memmove(gpuc_live + i, gpuc_live + i + 1, sizeof *gpuc_live * (size_t)(gpuc_nlive - i - 1));\n"
        "    gpuc_nlive--;\n"
        "}\n"
        "GPUC_HAPI void gpuc_h_free(GpucHost *h, const void *p) {\n"
        "    (void)h;\n"
        "    for (int i = gpuc_nlive - 1; i >= 0; i--) { if (gpuc_live[i].p == p) { gpuc_h_drop(i); return; } }\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_mark(GpucHost *h) { (void)h; return gpuc_nlive; }\n"
        "GPUC_HAPI void gpuc_h_release(GpucHost *h, int mark) { (void)h; while (gpuc_nlive > mark) { gpuc_h_drop(gpuc_nlive - 1); } }\n"
        "GPUC_HAPI int gpuc_h_zero(GpucHost *h, void *p, size_t n) { return (int)cudaMemsetAsync(p, 0, n, h); }\n"
        "/* a zero counter for a last-block reduction: one per stream, kept for the\n"
        " * program's life (each kernel that counts on it leaves it at zero again),\n"
        " * so a reduction is one launch, with no memset */\n"
        "typedef struct { GpucHost *h; unsigned int *p; } GpucCounter;\n"
        "static GpucCounter *gpuc_counters;\n"
        "static int gpuc_ncounters;\n"
        "GPUC_HAPI int gpuc_h_counter(GpucHost *h, unsigned int **out) {\n"
        "    for (int i = 0; i < gpuc_ncounters; i++) { if (gpuc_counters[i].h == h) { *out = gpuc_counters[i].p; return 0; } }\n"
        "    GpucCounter *c = (GpucCounter *)realloc(gpuc_counters, sizeof *c * (size_t)(gpuc_ncounters + 1));\n"
        "    if (!c) { return (int)cudaErrorMemoryAllocation; }\n"
        "    gpuc_counters = c;\n"
        "    unsigned int *p = NULL;\n"
        "    cudaError_t e = cudaMalloc(&p, sizeof *p);\n"
        "    if (e == cudaSuccess) { e = cudaMemsetAsync(p, 0, sizeof *p, h); }\n"
        "    if (e != cudaSuccess) { cudaFree(p); return (int)e; }\n"
        "    c[gpuc_ncounters].h = h; c[gpuc_ncounters].p = p; gpuc_ncounters++;\n"
        "    *out = p;\n"
        "    return 0;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_d2d(GpucHost *h, void *d, const void *s, size_t n) { return (int)cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, h); }\n"
        "GPUC_HAPI int gpuc_h_h2d(GpucHost *h, void *d, const void *s, size_t n) { return (int)cudaMemcpyAsync(d, s, n, cudaMemcpyHostToDevice, h); }\n"
        "GPUC_HAPI int gpuc_h_d2h(GpucHost *h, void *d, const void *s, size_t n) {\n"
        "    cudaError_t e = cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToHost, h);\n"
        "    return (int)(e != cudaSuccess ? e : cudaStreamSynchronize(h));\n"
        "}\n"
        "/* kernels that opted in to more than 48 KiB of dynamic shared memory, and how much */\n"
        "static struct { const void *k; unsigned bytes; } gpuc_optin[64];\n"
        "static int gpuc_noptin;\n"
        "GPUC_HAPI int gpuc_h_launch(GpucHost *h, const void *k, unsigned gx, unsigned gy, unsigned block, unsigned shared, void **args) {\n"
        "    if (shared > 48u * 1024u) {\n"
        "        int i = 0;\n"
        "        while (i < gpuc_noptin && gpuc_optin[i].k != k) { i++; }\n"
        "        if (i == gpuc_noptin || gpuc_optin[i].bytes < shared) {\n"
        "            cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);\n"
        "            if (e != cudaSuccess) { return (int)e; }\n"
        "            if (i == gpuc_noptin && i < 64) { gpuc_optin[i].k = k; gpuc_noptin++; }\n"
        "            if (i < 64) { gpuc_optin[i].bytes = shared; }\n"
        "        }\n"
        "    }\n"
        "    cudaError_t e = cudaLaunchKernel(k, dim3(gx, gy), dim3(block), args, shared, h);\n"
        "    return (int)(e != cudaSuccess ? e : cudaGetLastError());\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_oob(GpucHost *h, int *hit, long long at[2]) {\n"
        "    int zero = 0;\n"
        "    cudaError_t e = cudaMemcpyFromSymbolAsync(hit, gpuc_oob_flag_d, sizeof *hit, 0, cudaMemcpyDeviceToHost, h);\n"
        "    if (e == cudaSuccess) { e = cudaMemcpyFromSymbolAsync(at, gpuc_oob_at_d, 2 * sizeof *at, 0, cudaMemcpyDeviceToHost, h); }\n"
        "    if (e == cudaSuccess) { e = cudaStreamSynchronize(h); }\n"
        "    if (e == cudaSuccess && *hit) { e = cudaMemcpyToSymbolAsync(gpuc_oob_flag_d, &zero, sizeof zero, 0, cudaMemcpyHostToDevice, h); }\n"
        "    if (e == cudaSuccess) { e = cudaStreamSynchronize(h); }\n"
        "    return (int)e;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_failed;\n"
        "GPUC_HAPI int gpuc_h_status(GpucHost *h) { (void)h; int e = gpuc_h_failed; gpuc_h_failed = 0; return e; }\n"
        "/* one element of a device array, read from the host (0 outside: as in kernels) */\n"
        "template <typename T> T gpuc_dread(GpucHost *h, const T *p, int64_t i, int64_t n, int64_t j, int64_t m) {\n"
        "    T v = (T)0;\n"
        "    if ((uint64_t)i < (uint64_t)n && (uint64_t)j < (uint64_t)m) {\n"
        "        int e = gpuc_h_d2h(h, &v, p + i * m + j, sizeof(T));\n"
        "        if (e && !gpuc_h_failed) { gpuc_h_failed = e; }\n"
        "    } else { gpuc_oob((uint64_t)i < (uint64_t)n ? j : i, (uint64_t)i < (uint64_t)n ? m : n); }\n"
        "    return v;\n"
        "}\n\n");
}

static void cuda_device_prelude(BeBuf *b) {
    be_printf(b,
        "/* warp shuffles for every scalar type (bool travels as int) */\n"
        "#define GPUC_SHFL(T) \\\n"
        "__device__ __forceinline__ T gpuc_shfl_down(T v, int o) { return __shfl_down_sync(0xffffffffu, v, o); } \\\n"
        "__device__ __forceinline__ T gpuc_shfl_up(T v, int o) { return __shfl_up_sync(0xffffffffu, v, o); } \\\n"
        "__device__ __forceinline__ T gpuc_shfl_xor(T v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }\n"
        "GPUC_SHFL(int)\n"
        "GPUC_SHFL(unsigned int)\n"
        "GPUC_SHFL(long long)\n"
        "GPUC_SHFL(unsigned long long)\n"
        "GPUC_SHFL(float)\n"
        "GPUC_SHFL(double)\n"
        "#if !defined(__CUDACC_RTC__)\n"
        "/* int64_t is long here; NVRTC's prelude makes it long long */\n"
        "GPUC_SHFL(long)\n"
        "GPUC_SHFL(unsigned long)\n"
        "#endif\n"
        "__device__ __forceinline__ bool gpuc_shfl_down(bool v, int o) { return __shfl_down_sync(0xffffffffu, (int)v, o) != 0; }\n"
        "__device__ __forceinline__ bool gpuc_shfl_up(bool v, int o) { return __shfl_up_sync(0xffffffffu, (int)v, o) != 0; }\n"
        "__device__ __forceinline__ bool gpuc_shfl_xor(bool v, int o) { return __shfl_xor_sync(0xffffffffu, (int)v, o) != 0; }\n"
        "/* 16-byte vectors for coalesced loads and stores */\n"
        "struct __align__(16) gpuc_v16_bool { bool v[16]; };\n"
        "struct __align__(16) gpuc_v16_i32 { int32_t v[4]; };\n"
        "struct __align__(16) gpuc_v16_u32 { uint32_t v[4]; };\n"
        "struct __align__(16) gpuc_v16_f32 { float v[4]; };\n"
        "struct __align__(16) gpuc_v16_i64 { int64_t v[2]; };\n"
        "struct __align__(16) gpuc_v16_u64 { uint64_t v[2]; };\n"
        "struct __align__(16) gpuc_v16_f64 { double v[2]; };\n"
        "/* scans: a tile's status and value in one 8- or 16-byte word, read and\n"
        " * written by one relaxed access each, so no fence orders them */\n"
        "__device__ __forceinline__ void gpuc_st_word(unsigned long long *p, unsigned long long w) {\n"
        "    asm volatile(\"st.relaxed.gpu.u64 [%%0], %%1;\" :: \"l\"(p), \"l\"(w) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ unsigned long long gpuc_ld_word(const unsigned long long *p) {\n"
        "    unsigned long long w;\n"
        "    asm volatile(\"ld.relaxed.gpu.u64 %%0, [%%1];\" : \"=l\"(w) : \"l\"(p) : \"memory\");\n"
        "    return w;\n"
        "}\n"
        "__device__ __forceinline__ void gpuc_st_word2(unsigned long long *p, unsigned long long v, unsigned long long s) {\n"
        "    asm volatile(\"st.relaxed.gpu.v2.u64 [%%0], {%%1, %%2};\" :: \"l\"(p), \"l\"(v), \"l\"(s) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void gpuc_ld_word2(const unsigned long long *p, unsigned long long *v, unsigned long long *s) {\n"
        "    asm volatile(\"ld.relaxed.gpu.v2.u64 {%%0, %%1}, [%%2];\" : \"=l\"(*v), \"=l\"(*s) : \"l\"(p) : \"memory\");\n"
        "}\n"
        "/* a look-back lane whose predecessor has not published yet waits a little\n"
        " * before it asks again, leaving issue slots and bandwidth to the loading warps */\n"
        "__device__ __forceinline__ void gpuc_backoff(void) {\n"
        "#if __CUDA_ARCH__ >= 700\n"
        "    __nanosleep(100);\n"
        "#endif\n"
        "}\n"
        "/* a slot of a scan's shared staging with one pad element per 2^s, so that\n"
        " * a warp reading consecutive items per thread avoids bank conflicts */\n"
        "__device__ __forceinline__ int gpuc_pad(int i, int s) { return i + (i >> s); }\n\n");
}

void be_cuda_host_entries(BeBuf *b, IrModule *m) {
    CuEmit c = { 0 };
    c.b = b;
    c.m = m;
    c.x.b = b;
    c.x.cuda = true;
    for (int i = 0; i < m->nentries; i++) { host_entry(&c, m->entries[i], false); }
    be_expr_free(&c.x);
}

/* The gpuc_dev_NAME_into launchers of the entries whose result sizes follow
 * from their arguments (--emit=cuda only). */
static void cuda_host_into_entries(BeBuf *b, IrModule *m) {
    CuEmit c = { 0 };
    c.b = b;
    c.m = m;
    c.x.b = b;
    c.x.cuda = true;
    for (int i = 0; i < m->nentries; i++) {
        if (results_known(m->entries[i])) { host_entry(&c, m->entries[i], true); }
    }
    be_expr_free(&c.x);
}

/* An identifier from the source file's name, for the include guard. */
static void guard_name(BeBuf *b, const char *file) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    be_printf(b, "GPUC_CUH_");
    for (const char *p = base; *p; p++) {
        char ch = *p;
        be_printf(b, "%c", (ch >= 'a' && ch <= 'z') ? ch - 32 : ((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) ? ch : '_');
    }
}

/* The entries' template parameters as macros with the values gpuc chose.
 * They are baked into the kernels (unrolled loops, shared-memory arrays,
 * launch bounds), so none can change after generation: a different value
 * defined before the #include is an error naming the gpuc -D that does it. */
static void template_defines(BeBuf *b, IrModule *m) {
    bool any = false;
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        for (int t = 0; t < e->ntargs; t++) {
            IrTemplateArg *a = &e->targs[t];
            if (!any) {
                be_printf(b, "/* Template parameters of the entries, as chosen when this file was generated.\n"
                             " * They shape the kernels, so they cannot be overridden here: a different value\n"
                             " * defined before the #include is an error; regenerate with gpuc -D ENTRY.NAME=VALUE. */\n");
                any = true;
            }
            const char *val = a->is_type ? ct(a->type) : NULL;
            char num[32];
            if (!val) { snprintf(num, sizeof num, "%lld", (long long)a->value); val = num; }
            be_printf(b, "#ifndef GPUC_%s_%s\n#define GPUC_%s_%s %s\n", e->name, a->name, e->name, a->name, val);
            if (a->is_type) {
                be_printf(b, "#else\n#error \"GPUC_%s_%s: the type parameter is fixed at generation (%s); regenerate with gpuc -D %s.%s=TYPE\"\n",
                          e->name, a->name, ir_scalar_name(a->type), e->name, a->name);
            } else {
                be_printf(b, "#elif GPUC_%s_%s != %s\n#error \"GPUC_%s_%s differs from the value the kernels were generated with (%s); regenerate with gpuc -D %s.%s=VALUE\"\n",
                          e->name, a->name, val, e->name, a->name, val, e->name, a->name);
            }
            be_printf(b, "#endif\n");
        }
    }
    if (any) { be_printf(b, "\n"); }
}

int be_emit_cuda(FILE *out, IrModule *m) {
    BeBuf b = { 0 };
    CuEmit c = { 0 };
    c.b = &b;
    c.m = m;
    c.x.b = &b;
    c.x.cuda = true;
    shared_id = 0;
    be_printf(&b, "/* Generated by gpuc from %s: CUDA C, one extern \"C\" __global__ per kernel.\n"
                  " * Compiles with NVRTC as is. Included in a .cu file compiled by nvcc it also\n"
                  " * has static host launchers over the CUDA runtime API (no gpuc runtime), per\n"
                  " * entry NAME:\n"
                  " *   int gpuc_dev_NAME(cudaStream_t, sizes, params, T **outI, int64_t *outI_shape)\n"
                  " *     array results are device arrays allocated by the launcher: free each\n"
                  " *     with gpuc_h_free(stream, p) (not cudaFree); outI_shape gets rows, columns\n"
                  " *   int gpuc_dev_NAME_into(cudaStream_t, sizes, params, T *outI)\n"
                  " *     (when the result sizes follow from the arguments) into device memory\n"
                  " *     the caller allocated: arrays, and scalars (one element each)\n"
                  " * Arrays are device pointers; sizes come first, one int64_t per size name.\n"
                  " * Launchers return 0, a cudaError_t, or -1 for an index out of bounds\n"
                  " * (gpuc_oob_at[0] is the index, gpuc_oob_at[1] the size; clear gpuc_oob_hit).\n"
                  " * They are asynchronous on the stream except where the host needs a scalar\n"
                  " * or an array is indexed (the bounds check waits). Not thread-safe (device\n"
                  " * blocks are cached per translation unit). Include it in one .cu file of a\n"
                  " * program. -DGPUC_NO_HOST leaves the launchers out; -DGPUC_MAIN adds a main\n"
                  " * reading arguments as text on stdin. See docs/cuda_include.md. */\n", m->file);
    be_printf(&b, "#ifndef ");
    guard_name(&b, m->file);
    be_printf(&b, "\n#define ");
    guard_name(&b, m->file);
    be_printf(&b, "\n\n");
    template_defines(&b, m);
    /* the preludes once per translation unit (several programs may be
     * included); under nvcc the prelude's four global variables get the
     * program's name, so programs in several .cu files of one executable
     * link (its functions are inline) */
    be_printf(&b, "#ifndef GPUC_CUDA_PRELUDE_\n#define GPUC_CUDA_PRELUDE_\n"
                  "#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\n");
    static const char *const globals[] = { "gpuc_oob_hit", "gpuc_oob_at", "gpuc_oob_flag_d", "gpuc_oob_at_d" };
    for (int i = 0; i < 4; i++) {
        be_printf(&b, "#define %s %s_", globals[i], globals[i]);
        guard_name(&b, m->file);
        be_printf(&b, "\n");
    }
    be_printf(&b, "#endif\n");
    be_prelude(&b, true);
    cuda_device_prelude(&b);
    be_printf(&b, "#endif /* GPUC_CUDA_PRELUDE_ */\n\n");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        c.e = e;
        for (int j = 0; j < e->nkernels; j++) {
            IrKernel *k = &e->kernels[j];
            c.x.ntmp = 0;
            be_expr_reset(&c.x);
            switch (k->kind) {
            case IR_K_MAP: emit_map(&c, k); break;
            case IR_K_REDUCE: emit_reduce(&c, k); break;
            case IR_K_SCAN: case IR_K_FILTER: emit_scan(&c, k); break;
            case IR_K_SEGRED_ROW: emit_segred_row(&c, k); break;
            case IR_K_SEGRED_COL: emit_segred_col(&c, k); break;
            case IR_K_SCATTER: emit_scatter_kernel(&c, k); break;
            case IR_K_MATMUL: emit_matmul(&c, k); break;
            case IR_K_HOST: break;
            }
        }
    }
    be_printf(&b, "#if (defined(GPUC_CUDA_HOST) || (defined(__CUDACC__) && !defined(__CUDACC_RTC__))) && !defined(GPUC_NO_HOST)\n");
    be_printf(&b, "#ifndef GPUC_CUDA_HOST_PRELUDE_\n#define GPUC_CUDA_HOST_PRELUDE_\n");
    nvcc_host_prelude(&b);
    be_printf(&b, "#endif /* GPUC_CUDA_HOST_PRELUDE_ */\n");
    be_cuda_host_entries(&b, m);
    cuda_host_into_entries(&b, m);
    be_printf(&b, "#ifdef GPUC_MAIN\n");
    for (int i = 0; i < m->nentries; i++) { host_array_entry(&c, m->entries[i]); }
    be_main(&b, m);
    be_printf(&b, "#endif /* GPUC_MAIN */\n");
    be_printf(&b, "#endif /* host launchers */\n");
    be_printf(&b, "#endif /* include guard */\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_expr_free(&c.x);
    return 0;
}
