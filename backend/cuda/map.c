/* map.c: the map kernel: the grid-stride loop (stride.c) storing the
 * map lambda's results. */
#include "cuda_emit.h"

void emit_map(CuEmit *c, IrKernel *k) {
    KParams p = { 0 };
    stmt_params(c, k->stmt, &p);
    kernel_comment(c, k);
    signature(c, k, &p);
    stride_loops(c, k, NULL);
    c->b->indent = 0;
    be_printf(c->b, "}\n\n");
    kp_free(&p);
}

