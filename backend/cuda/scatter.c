/* scatter.c: the scatter kernel: one thread per source element writes
 * its value at its index when that is inside the destination (the result,
 * a copy of the destination made before the launch). */
#include "cuda_emit.h"

void emit_scatter_kernel(CuEmit *c, IrKernel *k) {
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

