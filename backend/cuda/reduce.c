/* reduce.c: the reduce kernel: per-thread sequential reduction (stride.c),
 * warp shuffles, one value per warp through shared memory (combine.c),
 * per-block partials, and the last block to finish (atomic counter)
 * combines the partials in a fixed order: deterministic for a given grid. */
#include "cuda_emit.h"

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

