/* cols.c: column reductions (segred, axis 0): a thread per column. */
#include "cuda_emit.h"

/* A column reduction: a thread per column, rows in order. */
void emit_segred_col(CuEmit *c, IrKernel *k) {
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

