/* matmul.c: the matrix product, a 2-D comprehension whose body is
 * sum(A[i,:] * B[:,j]): a tile of the result per block in registers (f64 on
 * the tensor cores on sm_80+, FMA otherwise), double-buffered slices of A
 * and B through shared memory. */
#include "cuda_emit.h"

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

void emit_matmul(CuEmit *c, IrKernel *k) {
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

