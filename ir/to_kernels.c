/* to_kernels.c: from fused array statements to the kernel IR.
 *
 * requires: fusion done, dead statements marked.  preserves: the array IR
 * (kernels point at their statements).
 *
 * Each live statement becomes one kernel (scalar statements run on the
 * host).  The launch configuration comes from the entry's attributes
 * (@block, @items, @unroll, @tile, which may be template parameters) or
 * from per-primitive defaults chosen for memory-bound work:
 *   map      256 threads, 32 bytes per thread (16-byte vectors, 2 in flight)
 *   reduce   256 threads, 64 bytes per thread, grid-stride, last block combines
 *   scan     256 threads x 43 items when one 4-byte value is scanned as it
 *            is read (bulk copies), 128 x 39 for other 4-byte scans, else
 *            128 x 23 (odd: see backend/cuda/scan.c); decoupled look-back
 *   filter   256 threads x 128 bytes of kept values (32 f32), at most 64 items
 *            (one bit each in a keep mask); the look-back of scans over per-warp
 *            counts, no shared staging: 2 barriers a tile
 *   segred   rows: a warp or 128..512 threads per row, picked at run time
 *            from the row length, 8 vectors per thread (a post keeps them in
 *            registers); columns: a thread per column
 *   matmul   128 threads computing a tile of the result whose edge is 2 x @tile
 *            rounded up to a power of two, 16 to 64 (@tile 32 by default: 64),
 *            the k loop of a slice written out whole (backend/cuda/matmul.c);
 *            all-f64 or all-f32 products at that default edge: 128 x 64 tiles
 *            (tile = 128 rows), 256 threads for f64, 128 for f32
 * The unroll factor divides the items per thread; the emitters write the
 * unrolled copies out in the text.
 */
#include "ir.h"

#include <string.h>

static int gcd(int a, int b) { while (b) { int t = a % b; a = b; b = t; } return a; }

/* Largest element size among the arrays a kernel streams. */
static int max_elem(IrStmt *s, bool *uniform, int *minsz) {
    int mx = 0, mn = 64;
    *uniform = true;
    for (int i = 0; i < s->nins; i++) {
        int z = ir_scalar_size(s->ins[i]->elem);
        if (mx && z != mx) { *uniform = false; }
        if (z > mx) { mx = z; }
        if (z < mn) { mn = z; }
    }
    for (int i = 0; i < s->nouts; i++) {
        if (s->outs[i]->rank == 0) { continue; }
        int z = ir_scalar_size(s->outs[i]->elem);
        if (mx && z != mx) { *uniform = false; }
        if (z > mx) { mx = z; }
        if (z < mn) { mn = z; }
    }
    if (!mx) { mx = 4; mn = 4; }
    *minsz = mn;
    return mx;
}

static bool is_matmul(IrStmt *s) {
    if (s->kind != IR_S_SCREMA || s->rank != 2 || s->nscans || s->nreds || s->map->nres != 1) { return false; }
    IrExpr *f = s->map->res[0];
    if (f->kind != IR_E_FOLD || f->op != IR_BIN_add) { return false; }
    IrExpr *b = f->a[2];
    if (b->kind != IR_E_BIN || b->op != IR_BIN_mul) { return false; }
    IrExpr *x = b->a[0], *y = b->a[1];
    return x->kind == IR_E_READ && y->kind == IR_E_READ && x->a[1] && y->a[1] &&
           x->a[0]->kind == IR_E_IDX && x->a[0]->index == 0 &&
           x->a[1]->kind == IR_E_LOOPVAR && x->a[1]->index == f->index &&
           y->a[0]->kind == IR_E_LOOPVAR && y->a[0]->index == f->index &&
           y->a[1]->kind == IR_E_IDX && y->a[1]->index == 1 &&
           x->val->rank == 2 && y->val->rank == 2;
}

/* Bound a scan kernel's items by its shared staging: the whole tile is
 * staged, the inputs and then the outputs in the same space, with one pad
 * element per 128 bytes, under 46 KiB (of the 48 KiB static limit); a
 * 4-byte value scanned as it is read, at odd items, goes through the
 * bulk-copy kernel (backend/cuda/scan.c, grep "SCAN BULK"), one stage in
 * dynamic shared memory up to what an sm_90 block may opt into (227 KiB,
 * 1 KiB reserved). ir_shard calls it again: a sharded scan is not read as
 * it is (ir_scan_copied_input), so it takes the static bound. */
void ir_scan_bound_items(IrKernel *k) {
    IrStmt *s = k->stmt;
    int in = 0, out = 0;
    for (int r = 0; r < s->map->nres; r++) { in += ir_scalar_size(s->map->res[r]->ty); }
    if (in < 4) { in = 4; }
    for (int o = 0; o < s->nouts; o++) { if (s->outs[o]->rank) { out += ir_scalar_size(s->outs[o]->elem); } }
    long bytes = in > out ? in : out;
    bool bulk = ir_scan_copied_input(s) && k->items % 2 == 1;
    if (bulk) {
        while (k->items > 1 && 4L * k->block * k->items + 1024 > 227 * 1024) { k->items -= 2; }
    }
    while (k->items > 1 && bytes * k->block * k->items * 17 / 16 > 46 * 1024 && !bulk) { k->items--; }
    if (k->unroll > k->items) { k->unroll = k->items; }
}

/* The element type of a matrix product whose operands and result are all
 * f64 or all f32 (the fast kernels' types), else IR_BOOL. */
static IrScalar matmul_fast_elem(IrStmt *s) {
    IrExpr *f = s->map->res[0];
    IrScalar a = f->a[2]->a[0]->val->elem, b = f->a[2]->a[1]->val->elem;
    if ((f->ty == IR_F64 || f->ty == IR_F32) && a == f->ty && b == f->ty && s->map->nres == 1 && s->nouts == 1 &&
        s->outs[0]->elem == f->ty) {
        return f->ty;
    }
    return IR_BOOL;
}

static const char *const short_kind[] = { "map", "reduce", "scan", "filter", "scatter", "rowred", "colred", "matmul", "host" };

bool ir_stmt_streams_uniform(IrStmt *s) {
    bool uniform;
    int minsz;
    max_elem(s, &uniform, &minsz);
    return uniform;
}

void ir_to_kernels(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        e->kernels = ir_alloc(m->arena, sizeof *e->kernels * (size_t)(e->nstmts + 1));
        e->nkernels = 0;
        int ngpu = 0;
        for (int i = 0; i < e->nstmts; i++) {
            IrStmt *s = e->stmts[i];
            if (s->dead) { continue; }
            IrKernel k = { 0 };
            k.stmt = s;
            k.line = s->line;
            bool uniform;
            int minsz;
            int esz = max_elem(s, &uniform, &minsz);
            switch (s->kind) {
            case IR_S_SCALAR: k.kind = IR_K_HOST; break;
            case IR_S_FILTER: k.kind = IR_K_FILTER; break;
            case IR_S_SCATTER: k.kind = IR_K_SCATTER; break;
            case IR_S_SEGRED: k.kind = s->axis == 1 ? IR_K_SEGRED_ROW : IR_K_SEGRED_COL; break;
            case IR_S_SCREMA:
                if (s->nscans) { k.kind = IR_K_SCAN; }
                else if (s->nreds) { k.kind = IR_K_REDUCE; }
                else if (is_matmul(s)) { k.kind = IR_K_MATMUL; }
                else { k.kind = IR_K_MAP; }
                break;
            }
            if (k.kind == IR_K_HOST) {
                k.name = ir_fmt(m->arena, "%s_host%d", e->name, i);
                e->kernels[e->nkernels++] = k;
                continue;
            }
            k.name = ir_fmt(m->arena, "%s_k%d_%s", e->name, ngpu++, short_kind[k.kind]);
            int vec = 16 / esz;
            switch (k.kind) {
            case IR_K_MAP:
                k.block = 256; k.items = 2 * vec; k.grid = IR_GRID_SATURATE;
                k.vectorize = s->rank == 1 && uniform;
                break;
            case IR_K_REDUCE:
                k.block = 256; k.items = esz >= 8 ? 8 : 16; k.grid = IR_GRID_SATURATE;
                k.vectorize = s->rank == 1 && uniform && esz == minsz;
                for (int r = 0; r < s->nreds; r++) { if (!s->reds[r].commutative) { k.ordered = true; } }
                if (k.ordered) { k.vectorize = false; }
                break;
            case IR_K_SCAN: {
                /* from a sweep on an H100 (docs/performance.md, tuning): one
                 * 4-byte value scanned per item runs best at 128 threads x 40
                 * items (0.82 of the copy rate at 2^28 against 0.77 at 24
                 * items, level with CUB); wider scanned tuples (i64, pairs)
                 * at 128 x 24 (224 x 24 was 1.4% slower for i64). Odd item
                 * counts (39, 23) stage without padding: constant shared
                 * offsets, a third fewer instructions, and the same registers
                 * under NVRTC as under nvcc (backend/cuda/scan.c) */
                int sb = 0;
                for (int q = 0; q < s->nscans; q++) {
                    for (int j = 0; j < s->scans[q].arity; j++) { sb += ir_scalar_size(s->scans[q].op->ptypes[j]); }
                }
                k.block = 128; k.items = sb <= 4 ? 39 : 23; k.grid = IR_GRID_TILES2D;
                /* a 4-byte value scanned as it is read (the bulk-copy kernel
                 * of backend/cuda/scan.c, which holds no item in registers):
                 * 256 x 55 (a 55 KiB stage in dynamic shared memory, 4 blocks
                 * an SM): 0.892-0.897 of the copy rate on an H100 against
                 * 0.884-0.890 at 256 x 43 and 0.868 at 128 x 39 (f32 and
                 * i32, incl and excl, 2^28, bench/try_scan.sh 2026-11-25;
                 * docs/performance.md, issue 16) */
                if (ir_scan_copied_input(s)) { k.block = 256; k.items = 55; }
                break;
            }
            case IR_K_FILTER: {
                /* the kept values stay in registers until the look-back is done:
                 * 128 bytes of them a thread (f32: 32 items, 0.72 of the copy
                 * rate on an H100 against 0.65 at 24; docs/performance.md) */
                int vb = 0;
                for (int o = 0; o < s->nouts; o++) { if (s->outs[o]->rank) { vb += ir_scalar_size(s->outs[o]->elem); } }
                k.block = 256; k.items = 128 / (vb > 4 ? vb : 4); k.grid = IR_GRID_TILES2D;
                break;
            }
            case IR_K_SCATTER:
                k.block = 256; k.items = 4; k.grid = IR_GRID_SATURATE;
                break;
            case IR_K_SEGRED_ROW: {
                /* block: the most threads per row (the host picks a warp or
                 * 128..block from the row length); items: 16-byte vectors per
                 * thread in flight, and kept in registers for a post */
                k.block = 512;  /* at most 128 registers a thread: no spills (sm_90) */
                k.items = s->nins > 1 && s->nins < 8 ? 8 / s->nins : s->nins >= 8 ? 1 : 8;
                k.grid = IR_GRID_ROWS;
                bool same = s->nins > 0;
                for (int i = 0; i < s->nins; i++) { same = same && ir_scalar_size(s->ins[i]->elem) == ir_scalar_size(s->ins[0]->elem); }
                for (int o = 0; o < s->nouts && same; o++) {
                    if (s->outs[o]->rank == 2) { same = ir_scalar_size(s->outs[o]->elem) == ir_scalar_size(s->ins[0]->elem); }
                }
                for (int r = 0; r < s->nreds; r++) { if (!s->reds[r].commutative) { k.ordered = true; } }
                k.vectorize = same && !k.ordered;
                if (same) { vec = 16 / ir_scalar_size(s->ins[0]->elem); }
                /* a post over 16-byte vectors keeps the row in registers and
                 * a stash in shared memory: at most 256 threads, so that two
                 * blocks fit an SM (backend/cuda/rows.c, grep "ROW STASH") */
                if (k.vectorize && s->post) { k.block = 256; }
                break;
            }
            case IR_K_SEGRED_COL:
                k.block = 256; k.items = 1; k.grid = IR_GRID_COVER;
                break;
            case IR_K_MATMUL:
                /* @tile(T) (T <= 32: the seed's T x T threads) gives the edge
                 * of the result's tile; each thread computes items results */
                k.tile = 16;
                while (k.tile < 64 && k.tile < 2 * (e->attr_tile ? e->attr_tile : 32)) { k.tile *= 2; }
                k.block = 128; k.items = k.tile * k.tile / k.block; k.grid = IR_GRID_TILES2D;
                k.unroll = 16;  /* the slice depth: grep MM_BK */
                if (k.tile == 64 && matmul_fast_elem(s) != IR_BOOL) {
                    /* all f64 or all f32 at the default tile: 128 x 64 tiles, f64 on the
                     * tensor cores with 256 threads, f32 8 x 8 results a thread with 128
                     * (backend/cuda/matmul.c, grep "MM FAST") */
                    k.tile = 128;
                    k.block = matmul_fast_elem(s) == IR_F64 ? 256 : 128;
                    k.items = 128 * 64 / k.block;
                    k.unroll = matmul_fast_elem(s) == IR_F64 ? 8 : 16;
                }
                break;
            case IR_K_HOST: break;
            }
            if (k.kind != IR_K_MATMUL) {
                if (e->attr_block) { k.block = e->attr_block; }
                if (e->attr_items) { k.items = e->attr_items; }
                k.unroll = e->attr_unroll ? e->attr_unroll : k.items;
                if (k.kind == IR_K_FILTER) {
                    /* one keep bit per item in a 64-bit mask; every item its own registers */
                    if (k.items > 64) { k.items = 64; }
                    /* the kept values are staged in shared memory (the whole tile's
                     * worth): keep it under 46 KiB of the 48 KiB static limit */
                    int vb = 0;
                    for (int o = 0; o < s->nouts; o++) { if (s->outs[o]->rank) { vb += ir_scalar_size(s->outs[o]->elem); } }
                    while (k.items > 1 && (long)vb * k.block * k.items + 16L * s->nouts > 46 * 1024) { k.items--; }
                    k.unroll = k.items;
                }
                if (k.kind == IR_K_SCAN) { ir_scan_bound_items(&k); }
                if (k.unroll < 1) { k.unroll = 1; }
                if (k.items % k.unroll) { k.unroll = gcd(k.items, k.unroll); }
                if (k.kind == IR_K_SEGRED_COL) { k.unroll = 1; }
                if (k.kind == IR_K_SEGRED_ROW) {
                    /* whole warps, a power of two: the host doubles from 128 */
                    int bl = 32;
                    while (bl * 2 <= k.block && bl < 1024) { bl *= 2; }
                    k.block = bl;
                    k.unroll = k.items;
                }
                k.vec = vec;
                if (k.vectorize && k.kind != IR_K_SEGRED_ROW && (k.items % vec != 0 || k.unroll % vec != 0 || s->rank != 1)) {
                    /* vectors hold `vec` consecutive items: items and unroll must be multiples */
                    k.vectorize = k.items % vec == 0 && s->rank == 1;
                    if (k.vectorize && k.unroll % vec) { k.unroll = vec; }
                }
            }
            e->kernels[e->nkernels++] = k;
        }
        if (m->explain) {
            for (int i = 0; i < e->nkernels; i++) {
                IrKernel *k = &e->kernels[i];
                if (k->kind == IR_K_HOST) { continue; }
                ir_explain(m, e, "  kernel %s (line %d): %s%s%s", k->name, k->line, short_kind[k->kind],
                           k->stmt->note ? "; fused " : "", k->stmt->note ? k->stmt->note : "");
                /* what ended the previous kernel: a read of a reduction or scan result */
                for (int j = 0; j < i; j++) {
                    IrKernel *p = &e->kernels[j];
                    if (p->kind == IR_K_HOST) { continue; }
                    for (int o = 0; o < p->stmt->nouts; o++) {
                        if (ir_stmt_reads(k->stmt, p->stmt->outs[o])) {
                            ir_explain(m, e, "    not fused with %s: needs its complete %s (data dependence)",
                                       p->name, p->stmt->outs[o]->rank ? "array" : "result");
                            break;
                        }
                    }
                }
            }
        }
    }
}
