/* stride.c: the grid-stride loop over elements that map and reduce
 * kernels share: several items per thread written out (`unroll` copies),
 * 16-byte vector loads/stores when every array has the same element size
 * and the pointers are aligned, an in-order chunk per thread for
 * non-commutative reductions.  Each iteration of the loop is one
 * fold_block (reduce.c: f32 Welford sums over a bounded count); a
 * reduction by the online softmax pair alone folds each iteration's
 * vectors as a group (element.c, ONLINE PAIR). */
#include "cuda_emit.h"

/* Lane l of loaded vector u (g_a<input>_<u>, V elements a vector): its
 * flat index g_i, the kernel's indices, and its inputs' names. */
static const char **stride_lane(CuEmit *c, IrStmt *s, int u, int V, int l) {
    be_line(c->b, "const int64_t g_i = g_v%d * %d + %d;  (void)g_i;", u, V, l);
    c->x.idx[0] = "g_i";
    c->x.idx[1] = "g_i";
    const char **pn = calloc((size_t)s->nins + 1, sizeof *pn);
    for (int i = 0; i < s->nins; i++) { pn[i] = be_strf(&c->x, "g_a%d_%d.v[%d]", i, u, l); }
    return pn;
}

/* One pass of the online pair's group fold (element.c, ONLINE PAIR: a
 * reduction by that operator alone, logsumexp and softmax statistics) over
 * the thread's n loaded vectors (g_a<input>_<u>, those below g_nv): pass 0
 * their map results' maximum, pass 1 their exps. */
static void stride_pair_pass(CuEmit *c, IrKernel *k, int n, const void *ctx, int pass) {
    (void)ctx;
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    for (int u = 0; u < n; u++) {
        be_line(b, "if (g_v%d < g_nv) {", u);
        b->indent++;
        for (int l = 0; l < k->vec; l++) {
            be_line(b, "{ /* lane %d */", l);
            b->indent++;
            const char **pn = stride_lane(c, s, u, k->vec, l);
            pair_fold_element(c, s, pass, u, pn);
            free(pn);
            b->indent--;
            be_line(b, "}");
        }
        b->indent--;
        be_line(b, "}");
    }
}

/* The grid-stride loop over elements shared by map and reduce kernels. */
void stride_loops(CuEmit *c, IrKernel *k, char ***racc) {
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
        fold_block_begin(c, s);
        bool pair = nm == 0 && ir_stmt_scan_width(s) == 0 && pair_fold_ok(s);
        if (pair) { pair_fold_group(c, k, G, racc[0], stride_pair_pass, NULL); }  /* one exp per element, no chain */
        for (int u = 0; u < (pair ? 0 : G); u++) {  /* else element by element */
            be_line(b, "if (g_v%d < g_nv) {", u);
            b->indent++;
            for (int o = 0; o < nm; o++) { be_line(b, "gpuc_v16_%s g_w%d;", ir_scalar_name(s->outs[first + o]->elem), o); }
            for (int l = 0; l < V; l++) {
                be_line(b, "{ /* lane %d */", l);
                b->indent++;
                const char **pn = stride_lane(c, s, u, V, l);
                const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
                be_lambda(&c->x, s->map, pn, res);
                int sw = ir_stmt_scan_width(s), rw = ir_stmt_red_width(s), pos = sw;
                for (int r = 0; r < s->nreds; r++) {
                    fold_reduction(c, s, r, racc[r], res + pos);
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
        fold_block_end(c, s);
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
        fold_block_begin(c, s);
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
        fold_block_end(c, s);
        b->indent--;
        be_line(b, "}");
    }
    if (k->vectorize) {
        b->indent--;
        be_line(b, "}");
    }
}

