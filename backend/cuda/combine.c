/* combine.c: the block-wide combine of a reduction's accumulators into
 * thread 0: warp shuffles (warp_reduce), then one value per warp through
 * shared memory (block_reduce).  Row kernels have their own all-reduce
 * combines in rows.c. */
#include "cuda_emit.h"

/* ---- block-wide reduction of accumulators racc[r][k] into thread 0 ---- */
int shared_id;

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

void block_reduce(CuEmit *c, IrStmt *s, char ***racc, int block) {
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

