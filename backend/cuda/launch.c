/* launch.c: the host launchers: gpuc_dev_NAME (device pointers in and
 * out), gpuc_dev_NAME_into (caller-allocated results) and, under
 * GPUC_MAIN, gpuc_entry_NAME on host arrays.  One host statement per
 * kernel (host_stmt): allocations, grid sizes and launches, written over
 * the gpuc_h_* host interface that a prelude implements (prelude.c for
 * nvcc, backend/emit_program.c for the gpuc runtime). */
#include "cuda_emit.h"

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
 *     stash and the bulk scan's stage; past the kernel's default limit, 48 KiB less its static shared
 *     memory, the kernel opts in once, by either implementation)
 *   gpuc_h_sms(h) (multiprocessors)  gpuc_h_shared_max(h) (the shared memory
 *   a block may opt into, bytes)  gpuc_h_resident(h, GPUC_KERNEL(name), block, &n)
 *   (blocks of the kernel that fit on one multiprocessor)  gpuc_h_mps(h) (1
 *   where the device's contexts are shared through MPS: the streaming
 *   kernels, which need their whole grid resident, are not taken there)
 *   gpuc_h_clusters(h, GPUC_KERNEL(name), cluster, block, shared, &n) (clusters
 *   of a __cluster_dims__ kernel resident at once; the runtime's: 0 where the
 *   driver cannot tell)  gpuc_h_oob_arm(h) (before the kernels of an
 *   entry with checked reads: where they record an index out of bounds, pinned
 *   host memory mapped for the device)  gpuc_h_oob(h, &hit, at) (waits for the
 *   stream, then reads and clears that record)  gpuc_h_status(h) (a failed host read)
 *   gpuc_dread(h, p, i, n, j, m) (one element of a device array)
 *   gpuc_h_count_slot(h, &p) (where a filter kernel writes its count; nvcc:
 *   mapped pinned memory, one per stream)  gpuc_h_count_read(h, &count, p)
 *   (waits for the stream; gpuc_h_free(h, p) after it, a no-op for nvcc)
 * GPUC_TRY(x) returns x's error after releasing every device block this call
 * allocated (gpuc_h_release to the mark taken on entry), so a failed call
 * leaks nothing. An index out of bounds, or a failed run-time size check
 * (ir/ops.def: same_size, nonneg_size; at once), makes the entry return -1. */
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

/* A row cluster kernel of more than 8 blocks (-DGPUC_ROW_CLUSTER_BLOCKS=16,
 * a comparison, CUDA host only: rows.c) must opt into the non-portable size. */
static void row_cluster_optin(CuEmit *c, IrKernel *k) {
    be_printf(c->b, "#if GPUC_ROW_CLUSTER_BLOCKS > 8\n");
    be_line(c->b, "GPUC_TRY(cudaFuncSetAttribute(GPUC_KERNEL(%s), cudaFuncAttributeNonPortableClusterSizeAllowed, 1));", k->name);
    be_printf(c->b, "#endif\n");
}

static void launch(CuEmit *c, IrKernel *k, KParams *p, const char *gx, const char *gy) {
    launch_block(c, k, p, gx, gy, be_strf(&c->x, "%d", k->block), "0");
}

/* A scan's streaming kernel (SCAN BULK 3 and 3 WIDE), launched where the
 * host code before chose it (g_stream, under mode 3), else what the caller
 * emits between stream_launch_open and stream_launch_close: its fallback. */
static void stream_launch_open(CuEmit *c, IrKernel *k, KParams *p) {
    BeBuf *b = c->b;
    IrKernel stream = *k;
    stream.name = scan_stream_name(c, k);
    be_printf(b, "#if GPUC_SCAN_BULK_%s == 3\n", k->name);
    be_line(b, "if (g_stream) {");
    b->indent++;
    launch_block(c, &stream, p, "g_grid", "1", be_strf(&c->x, "%d", scan_stream_threads()), "g_shared");
    b->indent--;
    be_line(b, "} else");
    be_printf(b, "#endif\n");
    be_line(b, "{");
    b->indent++;
}
static void stream_launch_close(CuEmit *c) {
    c->b->indent--;
    be_line(c->b, "}");
}

/* `if (cond) { launch }` */
static void launch_if(CuEmit *c, IrKernel *k, KParams *p, const char *cond, const char *gx, const char *gy) {
    be_line(c->b, "if (%s) {", cond);
    c->b->indent++;
    launch(c, k, p, gx, gy);
    c->b->indent--;
    be_line(c->b, "}");
}

/* A grid-stride kernel over n elements, per_block of them per block, none
 * when n is 0: as many blocks as needed up to 32 per multiprocessor, or,
 * with `whole` (maps; MAP WHOLE GRID), up to the grid's limit, so each
 * block takes one chunk and the blocks in flight read one window of the
 * arrays. H100, 2026-11-28, bench/try_stream.cu at 2^28 f32: saxpy 1062 us
 * against 1107 with 32 blocks an SM, the chain 1062 against 1123 (1.01
 * against 0.96 of the copy rate); a grid of one wave was slower still. */
static void grid_stride_launch(CuEmit *c, IrKernel *k, KParams *p, const char *n, int per_block, bool whole) {
    be_line(c->b, "const int64_t g_blocks = (%s + %d) / %d;", n, per_block - 1, per_block);
    if (whole) {
        be_line(c->b, "const unsigned g_grid = (unsigned)(g_blocks < (int64_t)2147483647 ? g_blocks : (int64_t)2147483647);");
    } else {
        be_line(c->b, "const unsigned g_grid = (unsigned)(g_blocks < (int64_t)gpuc_h_sms(gpuc_h) * 32 ? g_blocks : (int64_t)gpuc_h_sms(gpuc_h) * 32);");
    }
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

static bool is_returned(IrEntry *e, const IrValue *v) {
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i] == v) { return true; }
    }
    return false;
}

/* The reduce kernel whose epilogue (reduce.c: reduce_epilogue) computes
 * the host statement of kernel k or the value v, or NULL. */
static const IrKernel *epilogue_of(CuEmit *c, const IrKernel *k) {
    int ki = (int)(k - c->e->kernels), r = ki;
    while (r > 0 && c->e->kernels[r].kind == IR_K_HOST) { r--; }
    const IrKernel *red = &c->e->kernels[r];
    return r < ki && ki - r <= reduce_epilogue(c, red) ? red : NULL;
}

static bool by_epilogue(CuEmit *c, const IrValue *v) {
    for (int i = 0; i < c->e->nkernels; i++) {
        const IrKernel *k = &c->e->kernels[i];
        if (k->stmt != v->def) { continue; }
        return (k->kind == IR_K_REDUCE && reduce_epilogue(c, k)) || (k->kind == IR_K_HOST && epilogue_of(c, k));
    }
    return false;
}

/* In host_into mode, the result number of a scalar statement output v that
 * stays on the device: a result of the entry that no statement reads, so
 * the kernel writes it straight into the caller's device scalar and the
 * launcher does not wait for it; or any result that a reduce kernel's
 * epilogue makes or reads. Else -1. */
static int device_scalar_result(CuEmit *c, const IrValue *v) {
    IrEntry *e = c->e;
    if (!host_into || v->rank || v->is_param) { return -1; }
    bool by_reduce = false;
    for (int i = 0; i < e->nkernels; i++) { by_reduce = by_reduce || (e->kernels[i].kind == IR_K_REDUCE && e->kernels[i].stmt == v->def); }
    int first = -1, times = 0;
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i] == v) { times++; if (first < 0) { first = i; } }
    }
    if (first >= 0 && by_epilogue(c, v)) { return first; }
    if (!by_reduce) { return -1; }
    return first >= 0 && v->nuses == times ? first : -1;
}

/* The condition that every array the row kernel k reads or writes as
 * vectors (its inputs, its post's results, the post's reads at the column:
 * row_big_reads) starts on a 16-byte boundary, and `whole` (its rows are
 * whole vectors): then every row does (ROW BIG, ROW WARP). */
static const char *row_aligned(CuEmit *c, IrKernel *k, const char *whole) {
    IrStmt *s = k->stmt;
    const IrValue *reads[ROW_BIG_READS];
    int nreads = row_big_reads(k, reads), nred = ir_stmt_red_width(s);
    char *e = be_strf(&c->x, "%s && ((", whole);
    for (int i = 0; i < s->nins; i++) { e = be_strf(&c->x, "%s%s(uintptr_t)%s", e, i ? " | " : "", be_vname(s->ins[i])); }
    for (int r = 0; r < s->post->nres; r++) { e = be_strf(&c->x, "%s | (uintptr_t)%s", e, be_vname(s->outs[nred + r])); }
    for (int i = 0; i < nreads; i++) { e = be_strf(&c->x, "%s | (uintptr_t)%s", e, be_vname(reads[i])); }
    return be_strf(&c->x, "%s) & 15) == 0", e);
}

/* ROW STREAM (rows.c): NAME_st instead of the clusters for long rows.
 * The kernel's grid must be resident at once (its blocks wait on each
 * other's partials): the blocks an SM that its registers and its ring
 * leave room for (gpuc_h_resident counts no dynamic shared memory; the
 * opt-in limit a block is the SM's less 1 KiB), times the SMs, and a row
 * may span at most ROW_STREAM_LAG steps of that grid (rows.c: why); not
 * on a device shared through MPS, whose limits may keep part of the grid
 * from starting (docs/reliability.md).
 * H100, bench/try_softmax_stream.cu (softmax_ws, 16 consumers, 2
 * gatherers, chunks of 8192 f32, 6 slots, lag 2, 1 pending store): row
 * softmax at rows of 262144 f32 0.92-0.93 of the copy rate against 0.80 in
 * clusters (NAME_cl); the generated NAME_st 858-871 us against 893
 * (0.84; LayerNorm 899-904 against 1089-1099; H100, docs/performance.md,
 * ninth round).  -DGPUC_ROW_STREAM=0 keeps the clusters (a comparison). */
static void row_stream_choice(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    const char *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));
    int nred = ir_stmt_red_width(s);
    int ring = row_stream_slots(k) * ROW_STREAM_CHUNK * ir_scalar_size(s->ins[0]->elem), need = ring + row_stream_static_shared(k);
    be_printf(b, "#ifndef GPUC_ROW_STREAM\n#define GPUC_ROW_STREAM 1  /* -DGPUC_ROW_STREAM=0: long rows in clusters, not NAME_st (a comparison; launch.c, grep \"ROW STREAM\") */\n#endif\n");
    be_printf(b, "%*sbool g_stream = GPUC_ROW_STREAM && g_cl && %s >= (int64_t)%d && %s %% %d == 0 && gpuc_h_shared_max(gpuc_h) >= %d && !gpuc_h_mps(gpuc_h) &&\n", b->indent * 4, "",
              cols, ROW_STREAM_MIN_ROW, cols, ROW_STREAM_CHUNK, need);
    be_printf(b, "%*s    ((", b->indent * 4, "");
    const IrValue *reads[ROW_BIG_READS];
    int nreads = row_big_reads(k, reads);
    be_printf(b, "(uintptr_t)%s | (uintptr_t)%s", be_vname(s->ins[0]), be_vname(s->outs[nred]));
    for (int i = 0; i < nreads; i++) { be_printf(b, " | (uintptr_t)%s", be_vname(reads[i])); }
    be_printf(b, ") & 15) == 0;  /* whole chunks a row, every array on a 16-byte boundary */\n");
    be_line(b, "const int64_t g_ppr = %s / %d;  /* chunks a row */", cols, ROW_STREAM_CHUNK);
    be_line(b, "int64_t g_sgrid = 0;");
    be_line(b, "if (g_stream) {");
    b->indent++;
    be_line(b, "int g_fit = 0;");
    be_line(b, "GPUC_TRY(gpuc_h_resident(gpuc_h, GPUC_KERNEL(%s), %du, &g_fit));", row_stream_name(c, k), ROW_STREAM_THREADS);
    be_line(b, "const int g_sfit = (gpuc_h_shared_max(gpuc_h) + 1024) / (%d + 1024);  /* blocks an SM the ring leaves room for */", need);
    be_line(b, "g_sgrid = (int64_t)(g_fit < g_sfit ? g_fit : g_sfit) * gpuc_h_sms(gpuc_h);");
    be_line(b, "g_stream = g_sgrid >= 1 && g_ppr <= %d * g_sgrid;  /* a row spans at most %d steps of the grid */", ROW_STREAM_LAG, ROW_STREAM_LAG);
    b->indent--;
    be_line(b, "}");
}

/* ROW STREAM: the launch of NAME_st (g_stream): the chunks' partials
 * (8-byte words) and the rows' counters, zeroed. */
static void row_stream_launch(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    be_line(b, "if (g_stream) {");
    b->indent++;
    /* one allocation, zeroed: the partials' words (their tags 0; ROW STREAM TAGS), then the counters */
    const char *n = be_vname(s->w[0]);
    be_line(b, "const int64_t g_nparts = %s * g_ppr * %d;  /* 8-byte words */", n, ir_stmt_red_width(s));
    dalloc(c, "unsigned long long", "g_sparts", be_strf(&c->x, "g_nparts + (%s + 1) / 2", n));
    be_line(b, "GPUC_TRY(gpuc_h_zero(gpuc_h, g_sparts, (size_t)(g_nparts + (%s + 1) / 2) * sizeof(unsigned long long)));", n);
    be_line(b, "unsigned *g_scnt = (unsigned *)(g_sparts + g_nparts);");
    be_line(b, "const int g_ppr_arg = (int)g_ppr;");
    KParams ps = { 0 };
    stmt_params(c, s, &ps);
    kp_add(c, &ps, "", "g_ppr_arg");
    kp_add(c, &ps, "", "g_sparts");
    kp_add(c, &ps, "", "g_scnt");
    IrKernel st = *k;
    st.name = row_stream_name(c, k);
    launch_block(c, &st, &ps, "(unsigned)g_sgrid", "1", be_strf(&c->x, "%du", ROW_STREAM_THREADS), be_strf(&c->x, "%du", row_stream_slots(k) * ROW_STREAM_CHUNK * ir_scalar_size(s->ins[0]->elem)));
    be_line(b, "gpuc_h_free(gpuc_h, g_sparts);");
    kp_free(&ps);
    b->indent--;
}

static void host_stmt(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    be_line(b, "/* %s:%d: %s */", c->m->file, s->line, k->name);
    if (k->kind == IR_K_HOST) {
        if (s->nouts == 1 && s->outs[0]->has_const && !s->outs[0]->name) {
            return;
        }
        if (epilogue_of(c, k)) {
            be_line(b, "/* computed by %s (its epilogue) */", epilogue_of(c, k)->name);
            return;
        }
        if (ir_size_check_stmt(s)) {
            /* a failed size check fails the entry at once (-1, as an index out of bounds) */
            c->x.host_reads = true;
            be_size_check(&c->x, c->m->file, s, "GPUC_TRY(-1);");
            c->x.host_reads = false;
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
        } else if (v->rank && !row_result_live(s, o)) {
            be_line(b, "%s *%s = NULL; /* the row results nothing reads: not stored (rows.c, grep \"ROW DEAD RESULTS\") */", ct(v->elem), be_vname(v));
        } else if (v->rank) {
            dalloc(c, ct(v->elem), be_vname(v), s->kind == IR_S_FILTER ? be_vname(s->w[0]) : count_of(c, v));
        } else if (device_scalar_result(c, v) >= 0) {
            be_line(b, "%s *%s_d = out%d; /* the caller's device scalar */", ct(v->elem), be_vname(v), device_scalar_result(c, v));
        } else if (s->kind == IR_S_FILTER) {
            /* the count: the kernel writes it where the host reads it without a copy */
            be_line(b, "%s %s;", ct(v->elem), be_vname(v));
            be_line(b, "%s *%s_d = NULL;", ct(v->elem), be_vname(v));
            be_line(b, "GPUC_TRY(gpuc_h_count_slot(gpuc_h, &%s_d));", be_vname(v));
        } else {
            be_line(b, "%s %s;", ct(v->elem), be_vname(v));
            dalloc(c, ct(v->elem), be_strf(&c->x, "%s_d", be_vname(v)), "1");
        }
    }
    IrValue *ret[EPILOGUE_MAX];
    int nret = k->kind == IR_K_REDUCE ? reduce_epilogue_results(c, k, ret) : 0;
    for (int i = 0; i < nret && !host_into; i++) {
        be_line(b, "%s %s;", ct(ret[i]->elem), be_vname(ret[i]));
        dalloc(c, ct(ret[i]->elem), be_strf(&c->x, "%s_res", be_vname(ret[i])), "1");
    }
    const char *n = s->rank == 2 ? be_strf(&c->x, "(%s * %s)", be_vname(s->w[0]), be_vname(s->w[1])) : be_strf(&c->x, "%s", be_vname(s->w[0]));
    be_line(b, "{");
    b->indent++;
    switch (k->kind) {
    case IR_K_MAP: {
        grid_stride_launch(c, k, &p, n, k->block * k->items, true);
        break;
    }
    case IR_K_REDUCE: {
        IrStmt *st = s;
        be_line(b, "const int64_t g_blocks = (%s + %d) / %d;", n, k->block * k->items - 1, k->block * k->items);
        /* at most one wave: the blocks that fit on the device at once (a
         * partial second wave would leave the multiprocessors part-idle).
         * GPUC_REDUCE_WAVES=N (a comparison): N waves, 0 one block a chunk,
         * as maps have (MAP WHOLE GRID); the kernel's last block combines
         * any number of partials.  H100 (bench/try_grid.sh, docs/performance.md,
         * ninth round): one wave fastest or tied; 2 and 4 waves 0.5-2% slower,
         * one block a chunk 8-13% slower at 2^28 */
        be_printf(b, "#ifndef GPUC_REDUCE_WAVES\n#define GPUC_REDUCE_WAVES 1  /* reductions' grid: N waves of resident blocks, 0 one block a chunk (backend/cuda/launch.c) */\n#endif\n");
        be_line(b, "int g_fit = 1;");
        be_line(b, "GPUC_TRY(gpuc_h_resident(gpuc_h, GPUC_KERNEL(%s), %d, &g_fit));", k->name, k->block);
        be_line(b, "const int64_t g_wave = GPUC_REDUCE_WAVES > 0 ? (int64_t)gpuc_h_sms(gpuc_h) * g_fit * GPUC_REDUCE_WAVES : (int64_t)2147483647;");
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
        /* the epilogue's returned values: the caller's device scalars, or
         * (other launchers) device scalars copied back after the launch */
        for (int i = 0; i < nret; i++) {
            const char *name = be_strf(&c->x, "%s_res", be_vname(ret[i]));
            if (host_into) {
                kp_add(c, &p, "", be_strf(&c->x, "out%d", device_scalar_result(c, ret[i])));
                continue;
            }
            kp_add(c, &p, "", name);  /* declared with the outputs */
        }
        launch(c, k, &p, "g_grid", "1");
        for (int r = 0; r < st->nreds; r++) {
            for (int j = 0; j < st->reds[r].arity; j++) { be_line(b, "gpuc_h_free(gpuc_h, g_part%d_%d);", r, j); }
        }
        break;
    }
    case IR_K_SCAN: case IR_K_FILTER: {
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
            if (scan_bulk_eligible(k) || scan_wide_eligible(k)) { nw = scan_bulk_words(c, k, n); }  /* and mode 1's tile counter, or mode 3's tiles (scan.c) */
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
        if (scan_bulk_eligible(k)) {
            scan_bulk_host(c, k);  /* g_grid, g_shared: the bulk variant's blocks and dynamic stage */
            if (scan_stream_eligible(k)) {
                /* SCAN BULK 3 where scan_bulk_host chose it (g_stream), else mode 2 */
                stream_launch_open(c, k, &p);
                launch_block(c, k, &p, "g_grid", "1", be_strf(&c->x, "%d", k->block), "g_shared");
                stream_launch_close(c);
            } else {
                launch_block(c, k, &p, "g_grid", "1", be_strf(&c->x, "%d", k->block), "g_shared");
            }
        } else if (scan_wide_eligible(k)) {
            /* SCAN BULK 3 WIDE (16-byte words) where scan_wide_host chose it (g_stream), else emit_scan's kernel */
            scan_wide_host(c, k);
            stream_launch_open(c, k, &p);
            launch(c, k, &p, "(unsigned)g_ntiles", "1");
            stream_launch_close(c);
        } else {
            launch(c, k, &p, "(unsigned)g_ntiles", "1");
        }
        be_line(b, "gpuc_h_free(gpuc_h, %s);", st);
        for (int j = 0; !word && j < W; j++) { be_line(b, "gpuc_h_free(gpuc_h, g_agg%d);", j); be_line(b, "gpuc_h_free(gpuc_h, g_incl%d);", j); }
        free(wt);
        b->indent--;
        be_line(b, "}");
        break;
    }
    case IR_K_SCATTER: {
        const char *dn = count_of(c, s->dest);
        be_line(b, "if (%s > 0) {", dn);
        be_line(b, "    GPUC_TRY(gpuc_h_d2d(gpuc_h, %s, %s, (size_t)(%s) * sizeof(%s)));", be_vname(s->outs[0]), be_vname(s->dest), dn, ct(s->outs[0]->elem));
        be_line(b, "}");
        grid_stride_launch(c, k, &p, n, k->block, false);
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
        /* copies: be_vname's buffers are reused after 8 calls */
        const char *rows = be_strf(&c->x, "%s", be_vname(s->w[0])), *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));
        be_line(b, "int g_tpr = 32;");
        be_line(b, "while (g_tpr > 4 && (int64_t)(g_tpr / 2) * %d >= %s) {", per, cols);
        be_line(b, "    g_tpr /= 2;");
        be_line(b, "}");
        be_line(b, "unsigned g_tpb = %d;", tpb0);
        if (st.on) {
            /* rows the registers of a block hold: NAME_regs (grep "ROW REGS");
             * longer rows: a cluster of ROW_CLUSTER blocks per row, each a
             * part (NAME_clregs, NAME_cl: grep "ROW CLUSTER"), on devices
             * with clusters (sm_90 on: the only ones whose blocks may opt
             * into more than 200 KiB of shared memory; A100 163 KiB) */
            be_line(b, "int g_sv = 0;  /* stash vectors per lane and input */");
            be_printf(b, "#ifndef GPUC_ROW_CLUSTER\n#define GPUC_ROW_CLUSTER 1  /* -DGPUC_ROW_CLUSTER=0: no clusters (a comparison) */\n#endif\n");
            be_printf(b, "#ifndef GPUC_ROW_CLUSTER_BLOCKS\n#define GPUC_ROW_CLUSTER_BLOCKS %d  /* the kernels' cluster size (rows.c) */\n#endif\n", ROW_CLUSTER);
            /* One block a row while its registers and whole stash hold the
             * row, unless the post reads other arrays: H100, 2026-11-25,
             * rows of 32768: softmax 0.942 of the copy rate in one block
             * against 0.823 in clusters of 8; LayerNorm (a post reading the
             * weight and bias, half the stash reads in flight) 0.536 against
             * 0.746 (bench/last_run/issue16-session3/rows.txt) */
            int vb1 = 16 * k->stmt->nins, sv1 = st.sv;
            if ((int64_t)sv1 * k->block * vb1 > ROW_STASH_BLOCK_BYTES) { sv1 = ROW_STASH_BLOCK_BYTES / (k->block * vb1); }
            /* ROW BIG: rows longer than the block's registers hold, up to
             * what row_big_block's threads' registers hold, in one block of
             * up to that many threads, without a stash or a cluster, when every
             * row starts on a 16-byte boundary (16-byte aligned arrays,
             * whole vectors a row). On by default since an H100 run
             * (2026-11-25, rows of 32768 f32): LayerNorm 837 us against 969
             * in clusters, softmax 729 against 762; -DGPUC_ROW_BIG_BLOCK=0
             * for comparisons */
            be_printf(b, "#ifndef GPUC_ROW_BIG_BLOCK\n#define GPUC_ROW_BIG_BLOCK 1  /* -DGPUC_ROW_BIG_BLOCK=0: no big block; 1: rows up to %d x %d elements in one block's registers */\n#endif\n",
                      row_big_block(k), per);
            be_line(b, "const bool g_aligned = %s;  /* whole vectors a row, every row on a 16-byte boundary */",
                    row_aligned(c, k, be_strf(&c->x, "%s %% %d == 0", cols, k->vec)));
            be_line(b, "const bool g_big = GPUC_ROW_BIG_BLOCK && %s > (int64_t)%d && %s <= (int64_t)%d && g_aligned;", cols, k->block * per, cols,
                    row_big_block(k) * per);
            /* ROW WARP (rows.c): a warp a row, under GPUC_ROW_WARP */
            row_warp_macro(c);
            be_line(b, "const bool g_warp = GPUC_ROW_WARP && %s <= (int64_t)%d && g_aligned;  (void)g_warp;", cols, 32 * ROW_WARP_ITEMS * k->vec);
            if (st.reads) {
                be_line(b, "const bool g_cl = !g_big && GPUC_ROW_CLUSTER && %s > (int64_t)%d && gpuc_h_shared_max(gpuc_h) > 200 * 1024;", cols, k->block * per);
            } else {
                be_line(b, "const bool g_cl = !g_big && GPUC_ROW_CLUSTER && %s > (int64_t)%d && gpuc_h_shared_max(gpuc_h) > 200 * 1024;  /* longer than one block holds */",
                        cols, k->block * (per + sv1 * k->vec));
            }
            be_line(b, "const int64_t g_len = g_cl ? (%s + GPUC_ROW_CLUSTER_BLOCKS * %d - 1) / (GPUC_ROW_CLUSTER_BLOCKS * %d) * %d : %s;  /* a block's part of the row */",
                    cols, k->vec, k->vec, k->vec, cols);
            be_line(b, "const bool g_regs = g_len <= (int64_t)%d;  /* the register-only kernel */", k->block * per);
            if (row_stream_ok(k)) { row_stream_choice(c, k); }
            cols = "g_len";
        }
        be_line(b, "if (%s > (int64_t)%d%s) {", cols, 32 * per, st.on ? " || g_cl" : "");
        if (st.on) {
            int vb = 16 * k->stmt->nins;  /* bytes of a stash vector per lane, every input */
            be_line(b, "    if (g_big) {");
            be_line(b, "        for (g_tpb = %du; (int64_t)g_tpb * %d < %s; g_tpb *= 2) {", k->block, per, cols);
            be_line(b, "        }");
            be_line(b, "    } else if (g_regs) {");
            be_line(b, "        for (g_tpb = %du; (int64_t)g_tpb * %d < %s; g_tpb *= 2) {", k->block < 128 ? k->block : 128, per, cols);
            be_line(b, "        }");
            be_line(b, "    } else {");
            b->indent++;
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
            b->indent--;
            be_line(b, "    }");
        } else {
            be_line(b, "    for (g_tpb = %d; g_tpb < %du && (int64_t)g_tpb * %d < %s; g_tpb *= 2) {", k->block < 128 ? k->block : 128, k->block, per, cols);
            be_line(b, "    }");
        }
        be_line(b, "    g_tpr = (int)g_tpb;");
        be_line(b, "}");
        if (st.on) { be_line(b, "const unsigned g_shared = (unsigned)g_sv * g_tpb * %du;  /* the stash */", 16 * k->stmt->nins); }
        be_line(b, "const int64_t g_rpb = (int64_t)(g_tpb / (unsigned)g_tpr);");
        if (st.on) {
            /* ROW PERSIST (rows.c): the clusters (gpuc_h_clusters; the
             * runtime's gives 0 where the driver cannot tell: one a row)
             * or big blocks resident at once, each looping over rows, where the variant's
             * GPUC_ROW_PERSIST_<kernel> (gpuc's default per kernel, or
             * -DGPUC_ROW_PERSIST=N for all) says so; else one a row */
            IrKernel regs = *k, stash = *k;
            regs.name = row_variant_name(c, k, true, true);
            stash.name = row_variant_name(c, k, false, true);
            const char *bigname = row_big_name(c, k);
            row_persist_define(c, k, bigname, true);
            row_persist_define(c, k, regs.name, false);
            row_persist_define(c, k, stash.name, false);
            be_line(b, "int64_t g_wave = 0;  /* the clusters (big blocks) resident at once; 0: one a row */");
            be_line(b, "if (g_big && %s) {", row_persist_macro(c, bigname));
            be_line(b, "    int g_fit = 0;");
            be_line(b, "    GPUC_TRY(gpuc_h_resident(gpuc_h, GPUC_KERNEL(%s), g_tpb, &g_fit));", bigname);
            be_line(b, "    g_wave = (int64_t)g_fit * gpuc_h_sms(gpuc_h);");
            be_line(b, "}");
            be_line(b, "if (g_cl && (g_regs ? %s : %s)) {", row_persist_macro(c, regs.name), row_persist_macro(c, stash.name));
            b->indent++;
            row_cluster_optin(c, &regs);
            row_cluster_optin(c, &stash);
            be_line(b, "int g_fit = 0;");
            be_line(b, "GPUC_TRY(gpuc_h_clusters(gpuc_h, g_regs ? GPUC_KERNEL(%s) : GPUC_KERNEL(%s), GPUC_ROW_CLUSTER_BLOCKS, g_tpb, g_regs ? 0u : g_shared, &g_fit));",
                    regs.name, stash.name);
            be_line(b, "g_wave = g_fit;");
            b->indent--;
            be_line(b, "}");
            be_line(b, "const int64_t g_rows = g_wave > 0 && g_wave < %s ? g_wave : %s;  /* rows (of clusters or big blocks) the grid takes at once */", rows, rows);
            be_line(b, "const int64_t g_blocks = g_cl ? (g_rows < 65535 * 2 ? g_rows : 65535 * 2) * GPUC_ROW_CLUSTER_BLOCKS : (g_rows + g_rpb - 1) / g_rpb;");
        } else {
            be_line(b, "const int64_t g_blocks = (%s + g_rpb - 1) / g_rpb;", rows);
        }
        be_line(b, "const unsigned g_grid = (unsigned)(g_blocks < 65535 * 16 ? g_blocks : 65535 * 16);");
        kp_add(c, &p, "", "g_tpr");
        if (st.on) { kp_add(c, &p, "", "g_sv"); }
        be_line(b, "if (%s > 0) {", rows);
        b->indent++;
        if (st.on) {
            /* the register-only kernels take the same arguments less g_sv (the last) */
            KParams pr = p;
            pr.n--;
            IrKernel big = *k;
            big.name = row_big_name(c, k);
            /* ROW WARP: the rows' kernel parameters less g_tpr and g_sv, a warp a row */
            KParams pw = p;
            pw.n -= 2;
            IrKernel warp = *k;
            warp.name = row_warp_name(c, k);
            be_printf(b, "#if GPUC_ROW_WARP\n");
            be_line(b, "if (g_warp) {");
            be_line(b, "    const int64_t g_wblocks = (%s + %d) / %d;", rows, ROW_WARP_BLOCK / 32 - 1, ROW_WARP_BLOCK / 32);
            b->indent++;
            launch_block(c, &warp, &pw, "(unsigned)(g_wblocks < 65535 * 16 ? g_wblocks : 65535 * 16)", "1", be_strf(&c->x, "%du", ROW_WARP_BLOCK), "0");
            b->indent--;
            be_line(b, "} else");
            be_printf(b, "#endif\n");
            if (row_stream_ok(k)) {
                row_stream_launch(c, k);
                be_line(b, "} else if (g_big) {");
            } else {
                be_line(b, "if (g_big) {");
            }
            b->indent++;
            launch_block(c, &big, &pr, "g_grid", "1", "g_tpb", "0");
            b->indent--;
            for (int cl = 0; cl < 2; cl++) {
                IrKernel regs = *k, stash = *k;
                regs.name = row_variant_name(c, k, true, cl);
                stash.name = cl ? row_variant_name(c, k, false, true) : k->name;
                be_line(b, "} else if (%sg_cl && g_regs) {", cl ? "" : "!");
                b->indent++;
                if (cl) { row_cluster_optin(c, &regs); }
                launch_block(c, &regs, &pr, "g_grid", "1", "g_tpb", "0");
                b->indent--;
                be_line(b, "} else if (%sg_cl) {", cl ? "" : "!");
                b->indent++;
                if (cl) { row_cluster_optin(c, &stash); }
                launch_block(c, &stash, &p, "g_grid", "1", "g_tpb", "g_shared");
                b->indent--;
            }
            be_line(b, "}");
        } else {
            launch_block(c, k, &p, "g_grid", "1", "g_tpb", "0");
        }
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
                be_vname(s->w[1]), matmul_tile_cols(k) - 1, matmul_tile_cols(k));
        const char *nonempty = be_strf(&c->x, "%s > 0 && %s > 0", be_vname(s->w[0]), be_vname(s->w[1]));
        if (matmul_tile_cols(k) == k->tile) {
            launch_if(c, k, &p, nonempty, "g_gx", "g_gy");
            break;
        }
        /* the fast kernels: g_ks blocks a tile when k is split */
        be_line(b, "if (%s) {", nonempty);
        b->indent++;
        matmul_host_split(c, k, &p);
        launch(c, k, &p, "g_gx * (unsigned)g_ks", "g_gy");
        be_line(b, "if (g_ks > 1) {");
        be_line(b, "    gpuc_h_free(gpuc_h, g_parts);");
        be_line(b, "    gpuc_h_free(gpuc_h, g_cnt);");
        be_line(b, "}");
        b->indent--;
        be_line(b, "}");
        break;
    }
    case IR_K_HOST: break;
    }
    b->indent--;
    be_line(b, "}");
    /* scalar results come back to the host: later statements take them by value */
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        if (v->rank || device_scalar_result(c, v) >= 0) { continue; }
        if (k->kind == IR_K_REDUCE && reduce_epilogue(c, k) && (host_into || !is_returned(c->e, v))) {
            be_line(b, "gpuc_h_free(gpuc_h, %s_d);  /* read by the epilogue only */", be_vname(v));
            be_line(b, "(void)%s;", be_vname(v));
            continue;
        }
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
        } else if (k->kind == IR_K_FILTER) {
            /* no tiles, no kernel: nothing kept */
            be_line(b, "if (%s > 0) {", n);
            be_line(b, "    GPUC_TRY(gpuc_h_count_read(gpuc_h, &%s, %s_d));", be_vname(v), be_vname(v));
            be_line(b, "} else {");
            be_line(b, "    %s = 0;", be_vname(v));
            be_line(b, "}");
        } else {
            be_line(b, "GPUC_TRY(gpuc_h_d2h(gpuc_h, &%s, %s_d, sizeof(%s)));", be_vname(v), be_vname(v), ct(v->elem));
        }
        be_line(b, "gpuc_h_free(gpuc_h, %s_d);", be_vname(v));
        be_line(b, "(void)%s;", be_vname(v));
    }
    for (int i = 0; i < nret && !host_into; i++) {
        be_line(b, "GPUC_TRY(gpuc_h_d2h(gpuc_h, &%s, %s_res, sizeof(%s)));  /* made by the epilogue */", be_vname(ret[i]), be_vname(ret[i]), ct(ret[i]->elem));
        be_line(b, "gpuc_h_free(gpuc_h, %s_res);", be_vname(ret[i]));
    }
    cuda_shard_combine(c, k);
    kp_free(&p);
}

static bool lambda_checks(const IrLambda *l) {
    if (!l) { return false; }
    for (int i = 0; i < l->nres; i++) { if (expr_checks(l->res[i])) { return true; } }
    return false;
}

/* Is s computed by a matrix-product kernel? Its reads are in bounds by
 * construction (guarded tiles), so it needs no out-of-bounds check: the
 * check's read of the device flag would wait for the product. */
static bool by_matmul(IrEntry *e, const IrStmt *s) {
    for (int i = 0; i < e->nkernels; i++) {
        if (e->kernels[i].stmt == s && e->kernels[i].kind == IR_K_MATMUL) { return true; }
    }
    return false;
}

/* Does any kernel of the entry read an array at an index that may be out
 * of bounds (and so may fail)?  Reads ir/bounds.c proved in bounds do not
 * count (LayerNorm's w[col]: no record to fetch, no wait).  Every lambda of
 * the statement: the map, the post, and the per-row map a row reduction
 * computes at its store (ir/fuse_rows.c: cross-entropy's A[i, t[i]];
 * without it here the device's out-of-bounds record of a fused gather was
 * never read, and the entry succeeded). */
static bool entry_checks(IrEntry *e) {
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead || by_matmul(e, s)) { continue; }
        if (lambda_checks(s->map) || lambda_checks(s->post) || lambda_checks(s->per_row)) { return true; }
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

/* Can the caller allocate every array result before the call? (Whether
 * gpuc_dev_NAME_into exists; emit_lib.c's table thunks ask too.) */
bool cuda_results_known(IrEntry *e) {
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
    } else if (c->shard) {
        be_printf(b, "/* %s:%d: entry %s sharded, on this rank's device arrays */\n", c->m->file, e->line, e->name);
        be_printf(b, "GPUC_HOST_FN ");
        cuda_shard_signature(b, e, "gpuc_dev_shard_", "GpucHost *gpuc_h, const GpucComm *comm");
    } else {
        be_printf(b, "/* %s:%d: entry %s on device arrays */\n", c->m->file, e->line, e->name);
        be_printf(b, "GPUC_HOST_FN ");
        be_entry_signature(b, e, "gpuc_dev_", "GpucHost *gpuc_h");
    }
    be_printf(b, " {\n");
    b->indent = 1;
    be_line(b, "const int g_mark = gpuc_h_mark(gpuc_h);");
    be_line(b, "gpuc_oob_hit = 0;  /* this call's out-of-bounds record: an earlier call's does not fail it */");
    be_line(b, "gpuc_size_msg[0] = 0;");
    if (entry_checks(e)) { be_line(b, "GPUC_TRY(gpuc_h_oob_arm(gpuc_h));  /* where the kernels record an index out of bounds */"); }
    if (c->shard) { cuda_shard_sizes(c); }
    ir_count_uses(e);  /* device_scalar_result needs each value's readers */
    c->x.ntmp = 0;
    for (int i = 0; i < e->nkernels; i++) {
        be_expr_reset(&c->x);
        cuda_shard_before(c, &e->kernels[i]);
        host_stmt(c, &e->kernels[i]);
    }
    if (entry_checks(e)) {
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
            int r = device_scalar_result(c, v);
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

/* gpuc_entry_NAME on host arrays, the C backend's signature, over
 * gpuc_dev_NAME on the default stream: for the generated text main (under
 * GPUC_MAIN, nvcc) and the call table. Sharded (c->shard): gpuc_shard_NAME
 * over gpuc_dev_shard_NAME, what the call table and shard_check use. */
void host_array_entry(CuEmit *c, IrEntry *e) {
    BeBuf *b = c->b;
    if (c->shard) {
        be_printf(b, "/* entry %s sharded, on host arrays, as the C backend's gpuc_shard_%s */\n", e->name, e->name);
        be_printf(b, "GPUC_HAPI ");
        cuda_shard_signature(b, e, "gpuc_shard_", "const GpucComm *comm");
    } else {
        be_printf(b, "/* entry %s on host arrays, as the C backend's gpuc_entry_%s */\n", e->name, e->name);
        be_printf(b, "GPUC_HAPI ");
        be_entry_signature(b, e, "gpuc_entry_", NULL);
    }
    be_printf(b, " {\n");
    b->indent = 1;
    be_line(b, "GpucHost *gpuc_h = 0; /* the default stream */");
    be_line(b, "const int g_mark = gpuc_h_mark(gpuc_h);");
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (!v->rank) { continue; }
        const char *n = count_of(c, v);
        /* a shard may be empty: its block has one element */
        dalloc(c, ct(v->elem), be_strf(&c->x, "g_d%d", i), c->shard ? be_strf(&c->x, "%s > 0 ? %s : 1", n, n) : n);
        be_line(b, "if (%s > 0) { GPUC_TRY(gpuc_h_h2d(gpuc_h, g_d%d, %s, (size_t)(%s) * sizeof(%s))); }", n, i, be_vname(v), n, ct(v->elem));
    }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_line(b, "%s *g_r%d = NULL;", ct(e->results[i]->elem), i); }
    }
    be_printf(b, "    GPUC_TRY(gpuc_dev_%s%s(gpuc_h%s", c->shard ? "shard_" : "", e->name, c->shard ? ", comm" : "");
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, ", %s", be_vname(c->shard ? cuda_shard_local_size(e, e->sizes[i]) : e->sizes[i])); }
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

void cuda_host_stmt(CuEmit *c, IrKernel *k) { host_stmt(c, k); }

/* gpuc_dev_shard_NAME (c->shard, after ir_shard: shard.c) */
void cuda_host_shard_entry(CuEmit *c, IrEntry *e) { host_entry(c, e, false); }

void be_cuda_host_entries(BeBuf *b, IrModule *m) {
    CuEmit c;
    cuda_emit_init(&c, b, m);
    for (int i = 0; i < m->nentries; i++) { host_entry(&c, m->entries[i], false); }
    be_expr_free(&c.x);
}

/* The gpuc_dev_NAME_into launchers of the entries whose result sizes follow
 * from their arguments (--emit=cuda only). */
void cuda_host_into_entries(BeBuf *b, IrModule *m) {
    CuEmit c;
    cuda_emit_init(&c, b, m);
    for (int i = 0; i < m->nentries; i++) {
        if (cuda_results_known(m->entries[i])) { host_entry(&c, m->entries[i], true); }
    }
    be_expr_free(&c.x);
}

/* Do all of an entry's results are scalars (at least one)? */
bool cuda_scalar_results(IrEntry *e) {
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { return false; }
    }
    return e->nresults > 0;
}

/* The gpuc_dev_NAME_into launchers of the entries whose results are all
 * scalars (the executables' adapters time them up to the last kernel and
 * copy the scalars back after: emit_program.c). */
void cuda_host_into_scalar_entries(BeBuf *b, IrModule *m) {
    CuEmit c;
    cuda_emit_init(&c, b, m);
    for (int i = 0; i < m->nentries; i++) {
        if (cuda_scalar_results(m->entries[i])) { host_entry(&c, m->entries[i], true); }
    }
    be_expr_free(&c.x);
}
