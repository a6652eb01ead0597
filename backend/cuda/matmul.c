/* matmul.c: the matrix product, a 2-D comprehension whose body is
 * sum(A[i,:] * B[:,j]): a tile of the result per block in registers (f64 on
 * the tensor cores on sm_80+, FMA otherwise), double-buffered slices of A
 * and B through shared memory. */
#include <stdlib.h>
#include <string.h>

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


/* ---- MM FAST: all-f64 and all-f32 products at the default tile ----
 * ir/to_kernels.c gives these k->tile = 128: a block computes a 128 x 64
 * tile of the result (MF_BM x MF_BN). Both kernels guard the edges: a read
 * outside A or B gives zero, a result outside C is not stored, so any sizes
 * are right; 16-byte global accesses only where the run-time sizes and the
 * pointers allow them (g_vec), element by element otherwise.
 *   f64  256 threads, 8 warps as 4 x 2, each a 32 x 32 part as 4 x 4 tiles of
 *        8 x 8 on the tensor cores: on sm_90 one mma.m16n8k8 per 16 x 8
 *        tile a slice (GPUC_MM_F64_K 8, the default; "MM F64 K8") or two
 *        mma.m16n8k4 (GPUC_MM_F64_K 4), a macro of the emitted code; m8n8k4
 *        on sm_80.
 *        Slices of A and B MD_BK deep through MD_STAGES stages of shared
 *        memory filled by cp.async, so two slices are in flight while one
 *        is multiplied. The 16-byte chunks of a slice's rows are swizzled
 *        (chunk c of row r of A at c ^ (r & 2), of row k of B at c ^ 2 (k & 3))
 *        so that a warp's fragment reads (8 rows x 4 k of A, 4 k x 8 columns
 *        of B per half-warp) hit 16 different 8-byte bank pairs. Below sm_80:
 *        a plain loop per result (correct, slow).
 *   f32  128 threads, 8 x 8 results each (rows ty*4 + 0..3 and 64 + ty*4 +
 *        0..3, columns tx*4 + 0..3 and 32 + tx*4 + 0..3 for t = 8 ty + tx):
 *        FMA with float4 reads of shared memory; A is stored transposed
 *        ([k][row]), slices MF_BK deep in two stages, the next slice read
 *        into registers while this one is multiplied.
 * Split k: when the result has fewer tiles than half a wave (the blocks the
 * device holds at once), the launcher (matmul_host_split) gives each tile
 * g_ks blocks, each summing a contiguous run of the k slices (block x =
 * column tile + tile columns * part). Each part stores its accumulators in
 * a workspace (g_parts, in the threads' own order: coalesced), then counts
 * itself in the tile's counter (g_cnt, zeroed by the launcher); the last
 * part of a tile to count adds the workspace's parts in the order 0, 1, ...
 * (its own too, read back) and writes the result: the same sums in the same
 * order whichever part finishes last, so results do not vary between runs.
 * At 1024^3: 128 tiles, so 2 parts for f64 (2 blocks an SM: 16 warps instead
 * of 8) and 3 for f32 (3 blocks an SM). */
enum { MF_BM = 128, MF_BN = 64, MD_BK = 8, MD_STAGES = 3, MS_BK = 16 };
/* the emitted condition of the f64 kernel's m16n8k8 products (md_step_k8) */
#define MD_K8 "GPUC_MM_F64_K == 8 && __CUDA_ARCH__ >= 900"
/* the accumulators of a block (128 x 64 results): one tile's part in g_ws */
enum { MF_TILE_ELEMS = MF_BM * MF_BN };
/* split k only into parts at least this deep, and at most this many */
enum { MF_SPLIT_MIN_K = 128, MF_SPLIT_MAX = 16 };

int matmul_tile_cols(const IrKernel *k) { return k->tile == MF_BM ? MF_BN : k->tile; }

/* be_vname's names live in a ring of 8: a copy that lasts the compilation */
static const char *vn(CuEmit *c, const IrValue *v) { return be_strf(&c->x, "%s", be_vname(v)); }

/* In the launcher of a fast kernel, after g_tn (row tiles) and g_gx (column
 * tiles): the split of k, g_ks parts (1: none), with its workspace g_parts
 * and zeroed counters g_cnt, and their arguments appended to p. */
void matmul_host_split(CuEmit *c, IrKernel *k, KParams *p) {
    BeBuf *b = c->b;
    IrExpr *f = k->stmt->map->res[0];
    const char *T = ct(f->ty), *K = vn(c, f->a[2]->a[0]->val->dims[1]);
    be_line(b, "/* k split into parts when the tiles are fewer than half a wave (backend/cuda/matmul.c, grep \"Split k\") */");
    be_line(b, "int g_ks = 1;");
    be_line(b, "%s *g_parts = NULL;", T);
    be_line(b, "unsigned int *g_cnt = NULL;");
    be_line(b, "{");
    b->indent++;
    be_line(b, "const int64_t g_tiles = g_tn * (int64_t)g_gx;");
    be_line(b, "int g_fit = 1;");
    be_line(b, "GPUC_TRY(gpuc_h_resident(gpuc_h, GPUC_KERNEL(%s), %d, &g_fit));", k->name, k->block);
    be_line(b, "const int64_t g_wave = (int64_t)gpuc_h_sms(gpuc_h) * g_fit, g_deep = %s / %d;", K, MF_SPLIT_MIN_K);
    be_line(b, "if (g_tiles > 0 && 2 * g_tiles <= g_wave && g_deep >= 2) {");
    b->indent++;
    be_line(b, "const int64_t g_most = g_deep < %d ? g_deep : %d;", MF_SPLIT_MAX, MF_SPLIT_MAX);
    be_line(b, "g_ks = (int)(g_wave / g_tiles < g_most ? g_wave / g_tiles : g_most);");
    be_line(b, "GPUC_TRY(gpuc_h_alloc(gpuc_h, (void **)&g_parts, (size_t)(g_tiles * g_ks) * %d * sizeof(%s)));", MF_TILE_ELEMS, T);
    be_line(b, "GPUC_TRY(gpuc_h_alloc(gpuc_h, (void **)&g_cnt, (size_t)g_tiles * sizeof(unsigned int)));");
    be_line(b, "GPUC_TRY(gpuc_h_zero(gpuc_h, g_cnt, (size_t)g_tiles * sizeof(unsigned int)));");
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    kp_add(c, p, "", "g_ks");
    kp_add(c, p, "", "g_parts");
    kp_add(c, p, "", "g_cnt");
}


/* cp.async of `bytes` (16 or 8) from global src to shared dst, zero-filled
 * where the guard `in` is false (src-size 0: nothing is read). */
static void md_copy(BeBuf *b, int bytes, const char *dst, const char *in, const char *src, const char *base) {
    be_line(b, "asm volatile(\"cp.async.%s.shared.global [%%0], [%%1], %d, %%2;\\n\" :: \"r\"((unsigned)__cvta_generic_to_shared(%s)),",
            bytes == 16 ? "cg" : "ca", bytes, dst);
    be_line(b, "             \"l\"(%s ? %s : %s), \"r\"(%s ? %d : 0) : \"memory\");", in, src, base, in, bytes);
}

/* One thread's chunk of two doubles at src into g_dst (f64): one 16-byte
 * copy when g_vec, else one 8-byte copy per element; element e is inside
 * the matrix when `fixed && var + e < lim`, and zero-filled outside it. */
static void md_chunk(CuEmit *c, const char *fixed, const char *var, const char *lim, const char *src, const char *base) {
    BeBuf *b = c->b;
    be_line(b, "if (g_vec) {");
    be_line(b, "    const bool g_in = %s && %s < %s;", fixed, var, lim);
    b->indent++;
    md_copy(b, 16, "g_dst", "g_in", src, base);
    b->indent--;
    be_line(b, "} else {");
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_e = 0; g_e < 2; g_e++) {");
    be_line(b, "        const bool g_in = %s && %s + g_e < %s;", fixed, var, lim);
    b->indent += 2;
    md_copy(b, 8, "g_dst + g_e", "g_in", be_strf(&c->x, "%s + g_e", src), base);
    b->indent -= 2;
    be_line(b, "    }");
    be_line(b, "}");
}

/* Start the copies of the slice at k = kb into stage st (f64). */
static void md_load(CuEmit *c, IrStmt *s, const char *K, const char *kb, const char *st) {
    BeBuf *b = c->b;
    IrValue *A = s->map->res[0]->a[2]->a[0]->val, *Bv = s->map->res[0]->a[2]->a[1]->val;
    const char *M = vn(c, s->w[0]), *N = vn(c, s->w[1]), *lda = vn(c, A->dims[1]), *ldb = vn(c, Bv->dims[1]);
    be_line(b, "{   /* the slice at k = %s into stage %s: A's %d x %d, 2 chunks a thread; B's %d x %d, 1 a thread */", kb, st, MF_BM, MD_BK, MD_BK, MF_BN);
    b->indent++;
    be_line(b, "const int64_t g_kb = %s;", kb);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 2; g_q++) {");
    b->indent++;
    be_line(b, "const int g_f = g_t + 256 * g_q, g_lr = g_f >> 2, g_ch = g_f & 3;");
    be_line(b, "const int64_t g_gr = g_r0 + g_lr, g_gk = g_kb + 2 * g_ch;");
    be_line(b, "double *g_dst = &g_as[%s][g_lr * 8 + ((g_ch ^ (g_lr & 2)) << 1)];", st);
    md_chunk(c, be_strf(&c->x, "g_gr < %s", M), "g_gk", K, be_strf(&c->x, "%s + g_gr * %s + g_gk", vn(c, A), lda), vn(c, A));
    b->indent--;
    be_line(b, "}");
    be_line(b, "{");
    b->indent++;
    be_line(b, "const int g_kr = g_t >> 5, g_ch = g_t & 31;");
    be_line(b, "const int64_t g_gk = g_kb + g_kr, g_gc = g_c0 + 2 * g_ch;");
    be_line(b, "double *g_dst = &g_bs[%s][g_kr * %d + ((g_ch ^ ((g_kr & 3) << 1)) << 1)];", st, MF_BN);
    md_chunk(c, be_strf(&c->x, "g_gk < %s", K), "g_gc", N, be_strf(&c->x, "%s + g_gk * %s + g_gc", vn(c, Bv), ldb), vn(c, Bv));
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

/* Lane (g, i)'s fragments at k = `kk` (i + a multiple of 4) of stage g_rs,
 * through the swizzle: fa, A at row g of the warp's 8-row tile g_q; fb, B at
 * column g of its 8-column tile g_q. */
static void md_frags(BeBuf *b, const char *kk, const char *fa, const char *fb) {
    be_line(b, "%s = g_as[g_rs][(g_wr * 32 + g_q * 8 + g_g) * 8 + ((((%s) >> 1) ^ (g_g & 2)) << 1) + (g_i & 1)];", fa, kk);
    be_line(b, "%s = g_bs[g_rs][(%s) * %d + ((((g_wc * 32 + g_q * 8 + g_g) >> 1) ^ (g_i << 1)) << 1) + (g_g & 1)];", fb, kk, MF_BN);
}

/* MM F64 K8: the products of stage g_rs on sm_90 with GPUC_MM_F64_K 8, one
 * mma.m16n8k8 per 16 x 8 tile for the whole 8-deep slice (8 a warp, not 16
 * m16n8k4: half the instructions, and each accumulator read and written once
 * a slice, not twice). Lane (g, i) passes (PTX ISA, "Matrix Fragments for
 * mma.m16n8k8", .f64) a0..a3 = A[g][i], A[g + 8][i], A[g][i + 4],
 * A[g + 8][i + 4] and b0, b1 = B[i][g], B[i + 4][g]: the values m16n8k4 takes
 * at the slice's k steps 0 and 4, from the same addresses, so the swizzle and
 * its freedom from bank conflicts are unchanged. ptxas loads them straight
 * into the mma's register quads (16 LDS.64, 8 DMMA.16x8x8 a slice, 128
 * registers, no spills). The accumulators as for m16n8k4. */
static void md_step_k8(BeBuf *b) {
    be_line(b, "{");
    b->indent++;
    be_line(b, "double g_fa[4][2], g_fb[4][2];  /* this lane's fragments of the warp's 8-row / 8-column tiles at k i, i + 4 */");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 4; g_q++) {");
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_e = 0; g_e < 2; g_e++) {");
    b->indent += 2;
    md_frags(b, "4 * g_e + g_i", "g_fa[g_q][g_e]", "g_fb[g_q][g_e]");
    b->indent -= 2;
    be_line(b, "    }");
    be_line(b, "}");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 4; g_q += 2) {");
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_n = 0; g_n < 4; g_n++) {");
    be_line(b, "        double *g_c = &g_acc[(g_q * 4 + g_n) * 2], *g_d = &g_acc[((g_q + 1) * 4 + g_n) * 2];");
    be_line(b, "        asm(\"mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};\"");
    be_line(b, "            : \"+d\"(g_c[0]), \"+d\"(g_c[1]), \"+d\"(g_d[0]), \"+d\"(g_d[1])");
    be_line(b, "            : \"d\"(g_fa[g_q][0]), \"d\"(g_fa[g_q + 1][0]), \"d\"(g_fa[g_q][1]), \"d\"(g_fa[g_q + 1][1]), \"d\"(g_fb[g_n][0]), \"d\"(g_fb[g_n][1]));");
    be_line(b, "    }");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

/* The tensor-core products of stage g_rs (f64): md_step_k8, or fragments as
 * in mm_step_tc read through the swizzle, 4 deep at a time. */
static void md_step(BeBuf *b) {
    be_printf(b, "#if %s\n", MD_K8);
    md_step_k8(b);
    be_printf(b, "#else\n");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_j = 0; g_j < %d; g_j += 4) {", MD_BK);
    b->indent++;
    be_line(b, "double g_fa[4], g_fb[4];  /* this lane's A and B fragments of the warp's 8-row / 8-column tiles */");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 4; g_q++) {");
    b->indent++;
    md_frags(b, "g_j + g_i", "g_fa[g_q]", "g_fb[g_q]");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#if __CUDA_ARCH__ >= 900\n");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 4; g_q += 2) {");
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_n = 0; g_n < 4; g_n++) {");
    be_line(b, "        double *g_c = &g_acc[(g_q * 4 + g_n) * 2], *g_d = &g_acc[((g_q + 1) * 4 + g_n) * 2];");
    be_line(b, "        asm(\"mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%%0,%%1,%%2,%%3}, {%%4,%%5}, {%%6}, {%%0,%%1,%%2,%%3};\"");
    be_line(b, "            : \"+d\"(g_c[0]), \"+d\"(g_c[1]), \"+d\"(g_d[0]), \"+d\"(g_d[1]) : \"d\"(g_fa[g_q]), \"d\"(g_fa[g_q + 1]), \"d\"(g_fb[g_n]));");
    be_line(b, "    }");
    be_line(b, "}");
    be_printf(b, "#else\n");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 4; g_q++) {");
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_n = 0; g_n < 4; g_n++) {");
    be_line(b, "        double *g_c = &g_acc[(g_q * 4 + g_n) * 2];");
    be_line(b, "        asm(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%%0,%%1}, {%%2}, {%%3}, {%%0,%%1};\"");
    be_line(b, "            : \"+d\"(g_c[0]), \"+d\"(g_c[1]) : \"d\"(g_fa[g_q]), \"d\"(g_fb[g_n]));");
    be_line(b, "    }");
    be_line(b, "}");
    be_printf(b, "#endif\n");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#endif\n");
}

/* The kernel's start, common to both fast kernels: signature (with the
 * split-k parameters g_ks, g_ws, g_cnt), the sizes, g_vec, this block's
 * column tile g_ct, part g_kj and slices (`slice` deep) [g_s0, g_s1).
 * Returns K (the sum's length) and the accumulators' start value. */
static void mf_begin(CuEmit *c, IrKernel *k, KParams *p, int min_blocks, int vec, int slice, const char **K, const char **init) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrExpr *f = s->map->res[0];
    IrValue *A = f->a[2]->a[0]->val, *Bv = f->a[2]->a[1]->val;
    stmt_params(c, s, p);
    kp_add(c, p, "const int g_ks", "g_ks");
    kp_add(c, p, be_strf(&c->x, "%s *__restrict__ g_parts", ct(f->ty)), "g_parts");
    kp_add(c, p, "unsigned int *__restrict__ g_cnt", "g_cnt");
    kernel_comment(c, k);
    signature_min(c, k, p, min_blocks);
    c->x.idx[0] = "g_row";
    c->x.idx[1] = "g_col";
    *K = be_expr(&c->x, f->a[0]);
    *init = be_expr(&c->x, f->a[1]);
    be_line(b, "const int g_t = threadIdx.x;");
    be_line(b, "/* %d-element global accesses: the rows of A and B start on 16-byte boundaries */", vec);
    const char *sizes[4] = { *K, vn(c, A->dims[1]), vn(c, Bv->dims[1]), vn(c, s->w[1]) };
    be_printf(b, "%*sconst bool g_vec =", b->indent * 4, "");
    for (int i = 0; i < 4; i++) {
        bool seen = false;  /* the sizes are often the same variables */
        for (int j = 0; j < i; j++) { seen = seen || strcmp(sizes[i], sizes[j]) == 0; }
        if (!seen) { be_printf(b, " %s %% %d == 0 &&", sizes[i], vec); }
    }
    be_printf(b, "\n");
    be_line(b, "                   ((unsigned long long)%s & 15) == 0 && ((unsigned long long)%s & 15) == 0;", vn(c, A), vn(c, Bv));
    be_line(b, "/* split k (g_ks parts): this block's column tile and part, the part's slices [g_s0, g_s1) */");
    be_line(b, "const unsigned g_tcols = gridDim.x / (unsigned)g_ks;");
    be_line(b, "const unsigned g_ct = blockIdx.x %% g_tcols, g_kj = blockIdx.x / g_tcols;");
    be_line(b, "const int64_t g_nkt = (%s + %d) / %d, g_s0 = g_nkt * g_kj / g_ks, g_s1 = g_nkt * (g_kj + 1) / g_ks;", *K, slice - 1, slice);
    be_line(b, "(void)g_parts; (void)g_cnt; (void)g_s1;");
}

/* The end of a split-k part (g_ks > 1), in the row-tile loop with the
 * accumulators g_acc[NACC] (NACC per thread, `threads` threads): publish
 * them; a part that is not its tile's last goes on to its next row tile;
 * the last one leaves the tile's sum, parts added in order, in g_acc. */
static void mf_split_end(CuEmit *c, IrKernel *k, int nacc, int threads) {
    BeBuf *b = c->b;
    IrExpr *f = k->stmt->map->res[0];
    be_line(b, "if (g_ks > 1) {");
    b->indent++;
    be_line(b, "__shared__ bool g_last;");
    be_line(b, "const int64_t g_tile = g_tm * g_tcols + g_ct;");
    be_line(b, "%s *g_tpart = g_parts + g_tile * g_ks * %d;  /* the tile's parts: thread t's q-th value of part j at (j * %d + q) * %d + t */",
            ct(f->ty), MF_TILE_ELEMS, nacc, threads);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) { __stcg(&g_tpart[(g_kj * %d + g_q) * %d + g_t], g_acc[g_q]); }", nacc, nacc, threads);
    be_line(b, "__threadfence();");
    be_line(b, "__syncthreads();");
    be_line(b, "if (g_t == 0) { g_last = atomicAdd(&g_cnt[g_tile], 1u) == (unsigned)g_ks - 1u; }");
    be_line(b, "__syncthreads();");
    be_line(b, "if (!g_last) {");
    be_line(b, "    continue;");
    be_line(b, "}");
    be_line(b, "__threadfence();");
    be_line(b, "/* every part, in order: the same sum whichever part is last */");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) { g_acc[g_q] = __ldcg(&g_tpart[g_q * %d + g_t]); }", nacc, threads);
    be_line(b, "for (int g_j = 1; g_j < g_ks; g_j++) {");
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_q = 0; g_q < %d; g_q++) {", nacc);
    be_line(b, "        g_acc[g_q] = %s;", be_binop(&c->x, IR_BIN_add, f->ty, "g_acc[g_q]",
            be_strf(&c->x, "__ldcg(&g_tpart[(g_j * %d + g_q) * %d + g_t])", nacc, threads)));
    be_line(b, "    }");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

static void emit_matmul_f64(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrExpr *f = s->map->res[0];
    IrValue *A = f->a[2]->a[0]->val, *Bv = f->a[2]->a[1]->val;
    const char *M = vn(c, s->w[0]), *N = vn(c, s->w[1]), *K, *init;
    KParams p = { 0 };
    /* 8 by default: half the mma instructions and accumulator traffic of 4
     * (H100, 2026-11-28, bench/try_matmul.sh: 74.2 against 77.2 us at
     * 1024^3, 3056 against 3287 at 4096^3); GPUC_MM_F64_K=4 in gpuc's
     * environment, or -DGPUC_MM_F64_K=4 for nvcc/NVRTC, picks m16n8k4 */
    const char *env = getenv("GPUC_MM_F64_K");
    int kk = env && strcmp(env, "4") == 0 ? 4 : 8;
    be_printf(b, "#ifndef GPUC_MM_F64_K\n"
                 "#define GPUC_MM_F64_K %d  /* f64 products on sm_90: 4 mma.m16n8k4, 8 mma.m16n8k8 (backend/cuda/matmul.c, grep \"MM F64 K8\") */\n"
                 "#endif\n"
                 "#if GPUC_MM_F64_K != 4 && GPUC_MM_F64_K != 8\n"
                 "#error \"GPUC_MM_F64_K must be 4 or 8\"\n"
                 "#endif\n", kk);
    mf_begin(c, k, &p, 2, 2, MD_BK, &K, &init);
    be_line(b, "/* a %d x %d tile of the result per block on the tensor cores; slices of A and B %d deep,", MF_BM, MF_BN, MD_BK);
    be_line(b, " * %d stages of shared memory filled by cp.async (backend/cuda/matmul.c, MM FAST) */", MD_STAGES);
    be_line(b, "__shared__ __align__(16) double g_as[%d][%d];  /* A slices [row][k], chunks swizzled */", MD_STAGES, MF_BM * MD_BK);
    be_line(b, "__shared__ __align__(16) double g_bs[%d][%d];  /* B slices [k][column], chunks swizzled */", MD_STAGES, MD_BK * MF_BN);
    be_line(b, "const int g_g = (g_t & 31) >> 2, g_i = g_t & 3, g_wr = g_t >> 6, g_wc = (g_t >> 5) & 1;  /* lane group, lane in group, warp's part */");
    be_line(b, "(void)g_vec;");
    be_line(b, "for (int64_t g_tm = blockIdx.y; g_tm < (%s + %d) / %d; g_tm += gridDim.y) {", M, MF_BM - 1, MF_BM);
    b->indent++;
    be_line(b, "const int64_t g_r0 = g_tm * %d, g_c0 = (int64_t)g_ct * %d;", MF_BM, MF_BN);
    be_printf(b, "#if __CUDA_ARCH__ >= 800\n");
    be_line(b, "double g_acc[32];");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 32; g_q++) { g_acc[g_q] = g_kj == 0 ? %s : (double)0; }", init);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_p = 0; g_p < %d; g_p++) {", MD_STAGES - 1);
    be_line(b, "    if (g_s0 + g_p < g_s1) {");
    b->indent += 2;
    md_load(c, s, K, be_strf(&c->x, "(g_s0 + g_p) * %d", MD_BK), "g_p");
    b->indent -= 2;
    be_line(b, "    }");
    be_line(b, "    asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
    be_line(b, "}");
    be_line(b, "int g_rs = 0, g_ws = %d;  /* the stage multiplied now, the stage filled now */", MD_STAGES - 1);
    be_line(b, "for (int64_t g_kt = g_s0; g_kt < g_s1; g_kt++) {  /* this part's slices */");
    b->indent++;
    be_line(b, "asm volatile(\"cp.async.wait_group %d;\\n\" ::: \"memory\");  /* this thread's copies of slice g_kt are done */", MD_STAGES - 2);
    be_line(b, "__syncthreads();  /* everyone's are, and everyone is done with stage g_ws */");
    be_line(b, "if (g_kt + %d < g_s1) {", MD_STAGES - 1);
    b->indent++;
    md_load(c, s, K, be_strf(&c->x, "(g_kt + %d) * %d", MD_STAGES - 1, MD_BK), "g_ws");
    b->indent--;
    be_line(b, "}");
    be_line(b, "asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
    md_step(b);
    be_line(b, "g_rs = g_rs == %d ? 0 : g_rs + 1;", MD_STAGES - 1);
    be_line(b, "g_ws = g_ws == %d ? 0 : g_ws + 1;", MD_STAGES - 1);
    b->indent--;
    be_line(b, "}");
    be_line(b, "asm volatile(\"cp.async.wait_group 0;\\n\" ::: \"memory\");");
    be_line(b, "__syncthreads();  /* the stages are free for the next row tile */");
    mf_split_end(c, k, 32, 256);
    be_line(b, "/* the results: C[g][2i], C[g][2i + 1] of each 8 x 8 tile */");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 32; g_q++) {");
    b->indent++;
    be_line(b, "const int64_t g_row = g_r0 + g_wr * 32 + (g_q / 8) * 8 + g_g;");
    be_line(b, "const int64_t g_col = g_c0 + g_wc * 32 + (g_q / 2 %% 4) * 8 + 2 * g_i + g_q %% 2;");
    mm_put(c, s, "g_q");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#else\n");
    be_line(b, "/* before sm_80 (and in the host pass): one result at a time, in the same places, by part 0 */");
    be_line(b, "if (g_kj != 0) {");
    be_line(b, "    continue;");
    be_line(b, "}");
    be_line(b, "for (int g_q = 0; g_q < 32; g_q++) {");
    b->indent++;
    be_line(b, "const int64_t g_row = g_r0 + g_wr * 32 + (g_q / 8) * 8 + g_g;");
    be_line(b, "const int64_t g_col = g_c0 + g_wc * 32 + (g_q / 2 %% 4) * 8 + 2 * g_i + g_q %% 2;");
    be_line(b, "double g_acc[1] = { %s };", init);
    be_line(b, "if (g_row < %s && g_col < %s) {", M, N);
    be_line(b, "    for (int64_t g_kk = 0; g_kk < %s; g_kk++) {", K);
    be_line(b, "        g_acc[0] = %s;", be_binop(&c->x, IR_BIN_add, f->ty, "g_acc[0]",
            be_binop(&c->x, IR_BIN_mul, f->ty, be_strf(&c->x, "%s[g_row * %s + g_kk]", vn(c, A), vn(c, A->dims[1])),
                     be_strf(&c->x, "%s[g_kk * %s + g_col]", vn(c, Bv), vn(c, Bv->dims[1])))));
    be_line(b, "    }");
    be_line(b, "}");
    mm_put(c, s, "0");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#endif\n");
    b->indent--;
    be_line(b, "}");
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* One thread's float4 g_v of four floats at src (f32): one 16-byte load
 * when g_vec, else one load per element; element e is read when `fixed &&
 * var + e < lim`, and 0 outside the matrix. */
static void ms_chunk(CuEmit *c, const char *fixed, const char *var, const char *lim, const char *src) {
    BeBuf *b = c->b;
    static const char *const lane[4] = { "x", "y", "z", "w" };
    be_line(b, "float4 g_v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);");
    be_line(b, "if (g_vec) {");
    be_line(b, "    if (%s && %s < %s) { g_v = *(const float4 *)(%s); }", fixed, var, lim, src);
    be_line(b, "} else if (%s) {", fixed);
    be_line(b, "    if (%s < %s) { g_v.x = (%s)[0]; }", var, lim, src);
    for (int e = 1; e < 4; e++) { be_line(b, "    if (%s + %d < %s) { g_v.%s = (%s)[%d]; }", var, e, lim, lane[e], src, e); }
    be_line(b, "}");
}

/* One unrolled loop of ms_load: `count` float4 a thread, chunk g_q at
 * g_f = t + 128 g_q; `coords` declares the chunk's row/k indices, ms_chunk
 * reads it (fixed, var, lim, src as there) and `keep` stores g_v. */
static void ms_load_loop(CuEmit *c, int count, const char *coords, const char *fixed, const char *var,
                         const char *lim, const char *src, const char *keep) {
    BeBuf *b = c->b;
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < %d; g_q++) {", count);
    b->indent++;
    be_line(b, "const int g_f = g_t + 128 * g_q;");
    be_line(b, "%s", coords);
    ms_chunk(c, fixed, var, lim, src);
    be_line(b, "%s", keep);
    b->indent--;
    be_line(b, "}");
}

/* Global -> registers g_la, g_lb (f32): the slice at k = kb, A's 128 x 16 as
 * 4 float4 a thread (row f / 4, k (f %% 4) * 4 for f = t + 128 q), B's 16 x 64
 * as 2 (k f / 16, column (f %% 16) * 4). */
static void ms_load(CuEmit *c, IrStmt *s, const char *K, const char *kb) {
    IrValue *A = s->map->res[0]->a[2]->a[0]->val, *Bv = s->map->res[0]->a[2]->a[1]->val;
    const char *M = vn(c, s->w[0]), *N = vn(c, s->w[1]);
    const char *pa = be_strf(&c->x, "%s + g_gr * %s + g_gk", vn(c, A), vn(c, A->dims[1]));
    const char *pb = be_strf(&c->x, "%s + g_gk * %s + g_gc", vn(c, Bv), vn(c, Bv->dims[1]));
    ms_load_loop(c, 4, be_strf(&c->x, "const int64_t g_gr = g_r0 + (g_f >> 2), g_gk = %s + (g_f & 3) * 4;", kb),
                 be_strf(&c->x, "g_gr < %s", M), "g_gk", K, pa,
                 "g_la[4 * g_q] = g_v.x; g_la[4 * g_q + 1] = g_v.y; g_la[4 * g_q + 2] = g_v.z; g_la[4 * g_q + 3] = g_v.w;");
    ms_load_loop(c, 2, be_strf(&c->x, "const int64_t g_gk = %s + (g_f >> 4), g_gc = g_c0 + (g_f & 15) * 4;", kb),
                 be_strf(&c->x, "g_gk < %s", K), "g_gc", N, pb, "g_lb[g_q] = g_v;");
}

/* Registers -> shared stage st (f32): A transposed, B as it is. */
static void ms_store(BeBuf *b, const char *st) {
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 4; g_q++) {");
    be_line(b, "    const int g_f = g_t + 128 * g_q, g_lr = g_f >> 2, g_lk = (g_f & 3) * 4;");
    be_line(b, "    #pragma unroll");
    be_line(b, "    for (int g_e = 0; g_e < 4; g_e++) { g_as[%s][g_lk + g_e][g_lr] = g_la[4 * g_q + g_e]; }", st);
    be_line(b, "}");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 2; g_q++) {");
    be_line(b, "    const int g_f = g_t + 128 * g_q;");
    be_line(b, "    *(float4 *)&g_bs[%s][g_f >> 4][(g_f & 15) * 4] = g_lb[g_q];", st);
    be_line(b, "}");
}

static void emit_matmul_f32(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrExpr *f = s->map->res[0];
    const char *M = vn(c, s->w[0]), *K, *init;
    KParams p = { 0 };
    mf_begin(c, k, &p, 3, 4, MS_BK, &K, &init);
    be_line(b, "/* a %d x %d tile of the result per block, 8 x 8 results a thread; slices of A and B %d deep", MF_BM, MF_BN, MS_BK);
    be_line(b, " * through two stages of shared memory (backend/cuda/matmul.c, MM FAST) */");
    be_line(b, "__shared__ __align__(16) float g_as[2][%d][%d];  /* A slices transposed: [k][row] */", MS_BK, MF_BM + 4);
    be_line(b, "__shared__ __align__(16) float g_bs[2][%d][%d];  /* B slices [k][column] */", MS_BK, MF_BN);
    be_line(b, "float g_la[16];");
    be_line(b, "float4 g_lb[2];");
    be_line(b, "const int g_tx = g_t & 7, g_ty = g_t >> 3;");
    be_line(b, "for (int64_t g_tm = blockIdx.y; g_tm < (%s + %d) / %d; g_tm += gridDim.y) {", M, MF_BM - 1, MF_BM);
    b->indent++;
    be_line(b, "const int64_t g_r0 = g_tm * %d, g_c0 = (int64_t)g_ct * %d;", MF_BM, MF_BN);
    be_line(b, "float g_acc[64];");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 64; g_q++) { g_acc[g_q] = g_kj == 0 ? %s : 0.0f; }", init);
    be_line(b, "{   /* the first slice */");
    b->indent++;
    ms_load(c, s, K, be_strf(&c->x, "g_s0 * %d", MS_BK));
    ms_store(b, "0");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "int g_s = 0;");
    be_line(b, "for (int64_t g_kt = g_s0; g_kt < g_s1; g_kt++) {  /* this part's slices */");
    b->indent++;
    be_line(b, "const int64_t g_kb = g_kt * %d;", MS_BK);
    be_line(b, "const bool g_next = g_kt + 1 < g_s1;");
    be_line(b, "if (g_next) {");
    b->indent++;
    ms_load(c, s, K, be_strf(&c->x, "g_kb + %d", MS_BK));
    b->indent--;
    be_line(b, "}");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_kk = 0; g_kk < %d; g_kk++) {", MS_BK);
    b->indent++;
    be_line(b, "const float4 g_a0 = *(const float4 *)&g_as[g_s][g_kk][g_ty * 4], g_a1 = *(const float4 *)&g_as[g_s][g_kk][64 + g_ty * 4];");
    be_line(b, "const float4 g_b0 = *(const float4 *)&g_bs[g_s][g_kk][g_tx * 4], g_b1 = *(const float4 *)&g_bs[g_s][g_kk][32 + g_tx * 4];");
    be_line(b, "const float g_a[8] = { g_a0.x, g_a0.y, g_a0.z, g_a0.w, g_a1.x, g_a1.y, g_a1.z, g_a1.w };");
    be_line(b, "const float g_b[8] = { g_b0.x, g_b0.y, g_b0.z, g_b0.w, g_b1.x, g_b1.y, g_b1.z, g_b1.w };");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 64; g_q++) {");
    be_line(b, "    g_acc[g_q] = %s;", be_binop(&c->x, IR_BIN_add, f->ty, "g_acc[g_q]",
            be_binop(&c->x, IR_BIN_mul, f->ty, "g_a[g_q / 8]", "g_b[g_q % 8]")));
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "if (g_next) {");
    b->indent++;
    ms_store(b, "g_s ^ 1");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "g_s ^= 1;");
    b->indent--;
    be_line(b, "}");
    mf_split_end(c, k, 64, 128);
    be_line(b, "/* the results: g_acc[8 i + j] is row i (ty*4 + i, or 64 + ty*4 + i - 4), column j */");
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_q = 0; g_q < 64; g_q++) {");
    b->indent++;
    be_line(b, "const int64_t g_row = g_r0 + (g_q / 32) * 64 + g_ty * 4 + (g_q / 8) %% 4;");
    be_line(b, "const int64_t g_col = g_c0 + (g_q %% 8 / 4) * 32 + g_tx * 4 + g_q %% 4;");
    mm_put(c, s, "g_q");
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

void emit_matmul(CuEmit *c, IrKernel *k) {
    if (k->tile == MF_BM) {
        if (k->stmt->map->res[0]->ty == IR_F64) {
            emit_matmul_f64(c, k);
        } else {
            emit_matmul_f32(c, k);
        }
        return;
    }
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

