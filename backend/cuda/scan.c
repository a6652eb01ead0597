/* scan.c: the scan and filter kernels, single pass with decoupled
 * look-back (Merrill & Garland).
 *   scan    tiles taken in order from an atomic counter, status X/A/P per
 *           tile packed with the value in one 8- or 16-byte word when the
 *           tuple fits (one relaxed load or store, no fence), else flags
 *           and values published apart with a fence (tuples of any size);
 *           non-commutative operators work (the look-back combines in
 *           order); loads and stores staged through padded shared memory;
 *           4-byte scans also have three variants through sm_90 bulk copies
 *           (persistent blocks with two stages; one tile a block with its
 *           one bulk load in flight from the start; the default, a
 *           streaming, warp-specialized kernel of one block an SM, tiles
 *           through a ring of slots: H200, inclusive i32 scan of 2^28 at
 *           0.966 of the copy rate against 0.82; grep "SCAN BULK");
 *           scans of a 16-byte look-back word whose components are input
 *           arrays (the affine recurrence, i64 and f64 scans) have a
 *           streaming kernel too, the default from 2^26 items on
 *           (GPUC_SCAN_WIDE; H200: 0.95x emit_scan's time for the
 *           recurrence and 0.97x for the i64 scans at 2^28, slower below
 *           2^26; grep "SCAN BULK 3 WIDE")
 *   filter  the same look-back over per-warp counts of kept items (ballots;
 *           emit_filter): kept values compacted in order into shared memory
 *           during the look-back, then written as the tile's one run */
#include <assert.h>

#include "cuda_emit.h"

/* ---- scan and filter: single pass, decoupled look-back ---- */
typedef struct {
    IrOperator *op;  /* one combined view over all scans */
    int arity;
} ScanView;

/* apply_op for each of the nsc operators of a scanned tuple, whose
 * components lie one after the other in dst, a and b. */
static void apply_ops(CuEmit *c, IrOperator *ops, int nsc, char **dst, char **a, char **b, bool declare) {
    int at = 0;
    for (int q = 0; q < nsc; q++) {
        apply_op(c, &ops[q], dst + at, (const char *const *)(a + at), (const char *const *)(b + at), declare);
        at += ops[q].arity;
    }
}

/* The shuffle loop of a warp scan or reduction over the values named vals
 * (one per component of the nsc operators, of types wt), in place; tmp
 * names the shuffled copies ("g_y%d_%d": operator, component). up: an
 * inclusive scan (lane l folds in lane l - off's values before its own);
 * else a reduction into lane 0, in lane order (lane l folds in lane l +
 * off's values after its own). */
static void warp_shuffle_fold(CuEmit *c, IrOperator *ops, int nsc, const IrScalar *wt, char **vals, const char *tmp, bool up) {
    BeBuf *b = c->b;
    be_line(b, "for (int g_off = 1; g_off < 32; g_off <<= 1) {");
    b->indent++;
    int at = 0;
    for (int q = 0; q < nsc; q++) {
        char **y = names(c, tmp, q, ops[q].arity);
        for (int j = 0; j < ops[q].arity; j++) { be_line(b, "const %s %s = gpuc_shfl_%s(%s, g_off);", ct(wt[at + j]), y[j], up ? "up" : "down", vals[at + j]); }
        be_line(b, up ? "if (g_lane >= (unsigned)g_off) {" : "if (g_lane + (unsigned)g_off < 32u) {");
        b->indent++;
        if (up) {
            apply_op(c, &ops[q], vals + at, (const char *const *)y, (const char *const *)(vals + at), false);
        } else {
            apply_op(c, &ops[q], vals + at, (const char *const *)(vals + at), (const char *const *)y, false);
        }
        b->indent--;
        be_line(b, "}");
        free(y);
        at += ops[q].arity;
    }
    b->indent--;
    be_line(b, "}");
}

/* An inclusive scan of vals across the 32 lanes of a warp (warp_shuffle_fold). */
static void warp_inclusive_scan(CuEmit *c, IrOperator *ops, int nsc, const IrScalar *wt, char **vals, const char *tmp) {
    warp_shuffle_fold(c, ops, nsc, wt, vals, tmp, true);
}

/* The types of the scanned tuple's components, *W of them (a filter scans
 * its u32 count of kept elements). */
IrScalar *scan_types(IrStmt *s, int *W) {
    *W = 0;
    if (s->kind == IR_S_FILTER) { *W = 1; }
    for (int q = 0; s->kind != IR_S_FILTER && q < s->nscans; q++) { *W += s->scans[q].arity; }
    IrScalar *wt = calloc((size_t)*W + 1, sizeof *wt);
    if (s->kind == IR_S_FILTER) { wt[0] = IR_U32; }
    int at = 0;
    for (int q = 0; s->kind != IR_S_FILTER && q < s->nscans; q++) {
        for (int j = 0; j < s->scans[q].arity; j++) { wt[at++] = s->scans[q].op->ptypes[j]; }
    }
    return wt;
}

/* How the look-back publishes a tile's value: packed with its status in one
 * word when the components fit in 8 bytes of payload (bool and 4-byte types
 * take 32 bits, 8-byte types 64): 8, an 8-byte word (value in the low half,
 * status in the high half) for one 4-byte component; 16, a 16-byte word
 * {payload, status} for one 8-byte or two 4-byte components; else 0: flags
 * and values in separate arrays, ordered by fences (any tuple). */
int scan_word_bytes(const IrScalar *wt, int W) {
    int payload = 0;
    for (int j = 0; j < W; j++) { payload += ir_scalar_size(wt[j]) <= 4 ? 4 : 8; }
    return payload > 8 ? 0 : payload == 4 ? 8 : 16;
}

/* The packed payload of the tuple v: component j at bit 32 * (its 4-byte
 * position), as an unsigned long long. */
static char *word_payload(CuEmit *c, const IrScalar *wt, int W, char **v) {
    char *r = be_strf(&c->x, "%s", "");
    int at = 0;
    for (int j = 0; j < W; j++) {
        const char *bits = wt[j] == IR_F32 ? be_strf(&c->x, "__float_as_uint(%s)", v[j])
                         : wt[j] == IR_F64 ? be_strf(&c->x, "__double_as_longlong(%s)", v[j])
                         : ir_scalar_size(wt[j]) == 8 ? v[j] : be_strf(&c->x, "(uint32_t)%s", v[j]);
        r = be_strf(&c->x, at ? "%s | ((unsigned long long)%s << %d)" : "%s(unsigned long long)%s", r, bits, at);
        at += ir_scalar_size(wt[j]) <= 4 ? 32 : 64;
    }
    return r;
}

/* Component j of the payload w (from bit `at`) as a value of type t. */
static char *word_component(CuEmit *c, IrScalar t, const char *w, int at) {
    const char *lo = at ? be_strf(&c->x, "(uint32_t)(%s >> %d)", w, at) : be_strf(&c->x, "(uint32_t)%s", w);
    switch (t) {
    case IR_F32: return be_strf(&c->x, "__uint_as_float(%s)", lo);
    case IR_F64: return be_strf(&c->x, "__longlong_as_double((long long)%s)", w);
    case IR_I64: case IR_U64: return be_strf(&c->x, "(%s)%s", ct(t), w);
    case IR_BOOL: return be_strf(&c->x, "(%s != 0u)", lo);
    default: return be_strf(&c->x, "(%s)%s", ct(t), lo);
    }
}

/* Lane 0 of warp 0 publishes the tile's value v with status st (1 its
 * aggregate, 2 its inclusive prefix): one store of the packed word, or the
 * values, a fence, then the flag. With `max` (SCAN BULK 3, 8-byte words,
 * where the aggregate and the prefix come from different warps): an atomic
 * maximum of the word, status in the high half, so that a status 1 published
 * late never overwrites a status 2 already there. */
static void publish(CuEmit *c, int word, const IrScalar *wt, int W, const char *tile, int st, char **v, bool max) {
    BeBuf *b = c->b;
    if (word == 8 && max) {
        be_line(b, "atomicMax(g_words + %s, (%dull << 32) | %s);", tile, st, word_payload(c, wt, W, v));
    } else if (word == 8) {
        be_line(b, "gpuc_st_word(g_words + %s, (%dull << 32) | %s);", tile, st, word_payload(c, wt, W, v));
    } else if (word == 16) {
        be_line(b, "gpuc_st_word2(g_words + 2 * %s, %s, %dull);", tile, word_payload(c, wt, W, v), st);
    } else {
        for (int j = 0; j < W; j++) { be_line(b, "g_%s%d[%s] = %s;", st == 2 ? "incl" : "agg", j, tile, v[j]); }
        be_line(b, "__threadfence();");
        be_line(b, "atomicExch(&g_flags[%s], %d);", tile, st);
    }
}

/* Shared staging of one scalar array of the tile (items of them), its bytes
 * rounded up to 16. A warp reads it blocked (lane l: slots l * I .. l * I +
 * I - 1) and writes it striped (consecutive slots). With I odd and values of
 * 4 or 8 bytes the blocked reads fall in distinct banks as they are, and
 * every slot a thread touches is its base address plus a constant (no
 * address arithmetic per item, no address registers kept across the
 * look-back); otherwise one pad element per 128 bytes (gpuc_pad, shift
 * pad_shift) breaks the conflicts. */
static bool padded(IrScalar t, int I) { return I % 2 == 0 || ir_scalar_size(t) < 4; }
static int pad_shift(IrScalar t) { return ir_scalar_size(t) == 8 ? 4 : 5; }
static int staging_bytes(IrScalar t, int I, int items) {
    int n = items + (padded(t, I) ? items >> pad_shift(t) : 0);
    return (ir_scalar_size(t) * n + 15) & ~15;
}

/* The 32-bit shared address of slot `slot` (before padding) of the staging
 * array whose address is `arr` (gpuc_smem32: see the prelude for why). */
static char *staged(CuEmit *c, const char *arr, IrScalar t, int I, const char *slot) {
    if (!padded(t, I)) { return be_strf(&c->x, "%s + %du * (unsigned)(%s)", arr, ir_scalar_size(t), slot); }
    return be_strf(&c->x, "%s + %du * (unsigned)gpuc_pad(%s, %d)", arr, ir_scalar_size(t), slot, pad_shift(t));
}

/* A store of v into slot `slot` of the staging array g_<arr><j> of type t. */
static void stage_store(CuEmit *c, const char *arr, int j, IrScalar t, int I, const char *slot, const char *v) {
    const char *a = be_strf(&c->x, "g_%s%d", arr, j);
    be_line(c->b, "gpuc_sts_%s(%s, %s);", ir_scalar_name(t), staged(c, a, t, I, slot), v);
}

/* A load of slot `slot` of the staging array g_<arr><j> of type t. */
static char *stage_load(CuEmit *c, const char *arr, int j, IrScalar t, int I, const char *slot) {
    const char *a = be_strf(&c->x, "g_%s%d", arr, j);
    return be_strf(&c->x, "gpuc_lds_%s(%s)", ir_scalar_name(t), staged(c, a, t, I, slot));
}

/* Phase 1 of a scan, U unrolled copies of one item each (in a
 * loop over the tile's I / U rounds): the item at slot g_slot = copy * B +
 * threadIdx.x, i.e. coalesced, goes through the map and its staged values
 * (ns of them) into the padded shared arrays g_st<j>. A full tile (full) checks no bound and keeps every
 * copy's values in registers g_r<j>_<copy> until all copies' loads are
 * issued, so they are in flight together; the last tile checks each item
 * against n and stages the neutral elements ne past the end. */
static void scan_phase1(CuEmit *c, IrKernel *k, bool full, const IrScalar *wt, int ns, char **ne) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    int B = k->block, I = k->items, U = k->unroll;
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0]));
    if (I > U) { be_line(b, "for (int g_u = 0; g_u < %d; g_u += %d) {", I, U); b->indent++; }
    if (full) {
        for (int u = 0; u < U; u++) {
            for (int j = 0; j < ns; j++) { be_line(b, "%s g_r%d_%d;", ct(wt[j]), j, u); }
        }
    }
    for (int u = 0; u < U; u++) {
        be_line(b, "{ /* unrolled copy %d of %d */", u + 1, U);
        b->indent++;
        if (I > U) { be_line(b, "const int g_slot = (g_u + %d) * %d + threadIdx.x;", u, B); }
        else { be_line(b, "const int g_slot = %d + threadIdx.x;", u * B); }
        be_line(b, "const int64_t g_i = g_base + g_slot;%s", full ? "  (void)g_i;" : "");
        if (!full) { be_line(b, "if (g_i < %s) {", n); b->indent++; }
        c->x.idx[0] = "g_i";
        c->x.idx[1] = "g_i";
        const char **res = map_body(c, s, "g_i");
        for (int j = 0; j < ns; j++) {
            if (full) { be_line(b, "g_r%d_%d = %s;", j, u, res[j]); }
            else { stage_store(c, "st", j, wt[j], I, "g_slot", res[j]); }
        }
        /* mapped outputs taken over by fusion: written here, coalesced */
        int nmap = ir_stmt_nmapped(s);
        for (int j = 0; j < nmap; j++) {
            be_line(b, "%s[g_i] = %s;", be_vname(s->outs[s->nouts - nmap + j]), res[s->map->nres - nmap + j]);
        }
        free(res);
        if (!full) {
            b->indent--;
            be_line(b, "} else {");
            b->indent++;
            for (int j = 0; j < ns; j++) { stage_store(c, "st", j, wt[j], I, "g_slot", ne[j]); }
            b->indent--;
            be_line(b, "}");
        }
        b->indent--;
        be_line(b, "}");
    }
    if (full) {
        for (int u = 0; u < U; u++) {
            const char *slot = I > U ? be_strf(&c->x, "(g_u + %d) * %d + threadIdx.x", u, B) : be_strf(&c->x, "%d + threadIdx.x", u * B);
            for (int j = 0; j < ns; j++) { stage_store(c, "st", j, wt[j], I, slot, be_strf(&c->x, "g_r%d_%d", j, u)); }
        }
    }
    if (I > U) { b->indent--; be_line(b, "}"); }
}

/* Phase 1 of a filter (its tile has no shared staging): warp w takes the tile's
 * items w * 32 * I .. (w + 1) * 32 * I - 1, copy u of lane l the item 32 * u + l
 * of that run (each copy a coalesced load of 32); copy u's keep flag is bit u
 * of g_bits (32 bits, 64 past 32 items), its values stay in registers
 * g_v<j>_<u> until phase 4. A full tile (full) checks no bound; the last tile
 * keeps nothing past n. */
static void filter_phase1(CuEmit *c, IrKernel *k, bool full, int nv) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    for (int u = 0; u < k->items; u++) {
        be_line(b, "{ /* copy %d of %d */", u + 1, k->items);
        b->indent++;
        be_line(b, "const int64_t g_i = g_seg + %d;", 32 * u);
        if (!full) { be_line(b, "if (g_i < %s) {", be_vname(s->w[0])); b->indent++; }
        c->x.idx[0] = "g_i";
        c->x.idx[1] = "g_i";
        const char **res = map_body(c, s, "g_i");
        be_line(b, "g_bits |= (%s ? %s : 0u) << %d;", res[0], k->items > 32 ? "1ull" : "1u", u);
        for (int j = 0; j < nv; j++) { be_line(b, "g_v%d_%d = %s;", j, u, res[1 + j]); }
        free(res);
        if (!full) { b->indent--; be_line(b, "}"); }
        b->indent--;
        be_line(b, "}");
    }
}

/* A look-back lane's 8-byte status word of tile g_idx (lanes before tile 0
 * take status 2, value 0), re-read with backoff until no lane of the warp
 * sees status 0 (not yet published): the scans' and the filter's look-back. */
static void wait_status_word(BeBuf *b) {
    be_line(b, "unsigned long long g_w = 2ull << 32;");
    be_line(b, "if (g_idx >= 0) {");
    be_line(b, "    g_w = gpuc_ld_word(g_words + g_idx);");
    be_line(b, "}");
    be_line(b, "while (__any_sync(0xffffffffu, (g_w >> 32) == 0)) {");
    be_line(b, "    if ((g_w >> 32) == 0) {");
    be_line(b, "        gpuc_backoff();");
    be_line(b, "        g_w = gpuc_ld_word(g_words + g_idx);");
    be_line(b, "    }");
    be_line(b, "}");
}

/* The 16-byte look-back word of tile IDX re-read into W (value) and S
 * (status) with backoff until no lane of the warp sees status 0 (not yet
 * published): the scans' look-back over 16-byte words. */
static void wait_status_word2(BeBuf *b, const char *idx, const char *w, const char *st) {
    be_line(b, "while (__any_sync(0xffffffffu, %s == 0)) {", st);
    be_line(b, "    if (%s == 0) {", st);
    be_line(b, "        gpuc_backoff();");
    be_line(b, "        gpuc_ld_word2(g_words + 2 * %s, &%s, &%s);", idx, w, st);
    be_line(b, "    }");
    be_line(b, "}");
}

/* Phase 4 of a scan, in warp 0 after the scan across warps: the tile's
 * aggregate g_ta<j>_0 (from g_wsum<j>[NW - 1]) published at once (status 1,
 * or 2 for tile 0), then the decoupled look-back, 32 predecessors at a time,
 * lane l at tile g_j - l; the exclusive prefix of the tile ends in
 * g_ex<j>_0 (declared by the caller, of types wt), and its inclusive prefix
 * is published (status 2). word: scan_word_bytes; ta_declared: the caller
 * has declared g_ta<j>_0 (else it is read from g_wsum<j>[NW - 1]); stream
 * (SCAN BULK 3, 8-byte words, 1): the aggregate and tile 0's prefix are the
 * publisher warp's, so this publishes the prefix alone, by an atomic
 * maximum; stream 3 (SCAN BULK 3 WIDE, 16-byte words, which have no atomic
 * maximum): the publisher warp has stored the aggregate too, and lane 0
 * waits for its pubd barrier (slot g_sl, phase g_pubd_parity) before it stores the
 * prefix, so the status of the word never goes down. One look-back for
 * every scan kernel (emit_scan, the SCAN BULK variants). With 16-byte words
 * and GPUC_SCAN_LOOKBACK=64 (LOOKBACK 64, below) a round is 64
 * predecessors, two words a lane. */
static void lookback(CuEmit *c, IrOperator *ops, int nsc, const IrScalar *wt, int W, int word, int NW, bool ta_declared, int stream) {
    BeBuf *b = c->b;
    /* LOOKBACK 64 (an experiment, off): with GPUC_SCAN_LOOKBACK=64 in gpuc's
     * environment, a look-back over 16-byte words reads two words a lane, 64
     * predecessors a round, both loads in flight at once. On an H200
     * (2026-11-29, docs/performance.md, sixteenth round) the register
     * kernel's look-back took 2.07 rounds of 32 a tile for the recurrence
     * (2.05 for the i64 scan) while three warps of four waited at the
     * barrier after it: a third of the warps' stall samples. */
    const char *lb_env = getenv("GPUC_SCAN_LOOKBACK");
    const bool pairs = word == 16 && lb_env && strcmp(lb_env, "64") == 0;
    if (stream == 3) {
        be_line(b, "/* the decoupled look-back, 32 predecessors at a time (status 0 none yet, 1");
        be_line(b, " * aggregate, 2 inclusive prefix, packed with the value in one 16-byte word); the");
        be_line(b, " * publisher warp has published the aggregate (tile 0: its prefix) */");
    } else if (stream) {
        be_line(b, "/* the decoupled look-back, 32 predecessors at a time (status 0 none yet, 1");
        be_line(b, " * aggregate, 2 inclusive prefix, packed with the value in one 8-byte word); the");
        be_line(b, " * publisher warp has published the aggregate (tile 0: its prefix) */");
    } else if (word) {
        be_line(b, "/* phase 4: warp 0 goes on with the decoupled look-back, 32 predecessors at a");
        be_line(b, " * time (status 0 none yet, 1 aggregate, 2 inclusive prefix, packed with the");
        be_line(b, " * value in one %d-byte word), while the other warps wait at the barrier */", word);
    } else {
        be_line(b, "/* phase 4: warp 0 goes on with the decoupled look-back, 32 predecessors at a");
        be_line(b, " * time (flags: 0 none yet, 1 aggregate, 2 inclusive prefix; values in their");
        be_line(b, " * own arrays, behind a fence), while the other warps wait at the barrier */");
    }
    char **ta = names(c, "g_ta%d_%d", 0, W);
    char **ex = names(c, "g_ex%d_%d", 0, W);
    char **ne = calloc((size_t)W + 1, sizeof *ne);  /* the neutral elements, g_ne<j> */
    for (int j = 0; j < W; j++) { ne[j] = be_strf(&c->x, "g_ne%d", j); }
    for (int j = 0; j < W; j++) {
        if (!ta_declared) { be_line(b, "const %s %s = g_wsum%d[%d];", ct(wt[j]), ta[j], j, NW - 1); }
        be_line(b, "%s %s = %s;", ct(wt[j]), ex[j], ne[j]);
    }
    if (stream) {
        be_line(b, "if (g_tile != 0) {");
        b->indent++;
    } else {
        be_line(b, "if (g_tile == 0) {");
        b->indent++;
        be_line(b, "if (g_lane == 0) {");
        b->indent++;
        publish(c, word, wt, W, "0", 2, ta, false);
        b->indent--;
        be_line(b, "}");
        b->indent--;
        be_line(b, "} else {");
        b->indent++;
        be_line(b, "if (g_lane == 0) {");
        b->indent++;
        publish(c, word, wt, W, "g_tile", 1, ta, false);
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "for (int64_t g_j = g_tile - 1;; g_j -= %d) {", pairs ? 64 : 32);
    b->indent++;
    be_line(b, "/* lane l looks at tile g_j - l: lane 0 is the nearest predecessor */");
    be_line(b, "const int64_t g_idx = g_j - (int64_t)g_lane;");
    be_line(b, "/* (lanes before tile 0 read nothing and count as a prefix) */");
    if (word == 8) {
        wait_status_word(b);
        be_line(b, "const int g_f = (int)(g_w >> 32);");
    } else if (word == 16) {
        be_line(b, "unsigned long long g_w = 0, g_s = 2;");
        be_line(b, "if (g_idx >= 0) {");
        be_line(b, "    gpuc_ld_word2(g_words + 2 * g_idx, &g_w, &g_s);");
        be_line(b, "}");
        if (pairs) {
            /* the far word's load in flight with the near one's */
            be_line(b, "const int64_t g_idxf = g_idx - 32;  /* the far half: tile g_j - 32 - l */");
            be_line(b, "unsigned long long g_wf = 0, g_sf = 2;");
            be_line(b, "if (g_idxf >= 0) {");
            be_line(b, "    gpuc_ld_word2(g_words + 2 * g_idxf, &g_wf, &g_sf);");
            be_line(b, "}");
        }
        wait_status_word2(b, "g_idx", "g_w", "g_s");
        be_line(b, "const int g_f = (int)g_s;");
    } else {
        be_line(b, "int g_f = g_idx >= 0 ? ((volatile int *)g_flags)[g_idx] : 2;");
        be_line(b, "while (__any_sync(0xffffffffu, g_f == 0)) {");
        be_line(b, "    if (g_f == 0) {");
        be_line(b, "        gpuc_backoff();");
        be_line(b, "        g_f = ((volatile int *)g_flags)[g_idx];");
        be_line(b, "    }");
        be_line(b, "}");
        be_line(b, "__threadfence();");
    }
    be_line(b, "const unsigned g_pmask = __ballot_sync(0xffffffffu, g_f == 2);");
    be_line(b, "const int g_stop = g_pmask ? __ffs(g_pmask) - 1 : 32;  /* nearest lane with a prefix */");
    if (pairs) {
        /* the far half counts only when the near one holds no prefix (a
         * warp-uniform test, so every lane takes part in the wait's vote) */
        be_line(b, "unsigned g_pmaskf = 0;");
        be_line(b, "if (!g_pmask) {");
        b->indent++;
        wait_status_word2(b, "g_idxf", "g_wf", "g_sf");
        be_line(b, "g_pmaskf = __ballot_sync(0xffffffffu, g_sf == 2);");
        b->indent--;
        be_line(b, "}");
        be_line(b, "const int g_stopf = g_pmaskf ? __ffs(g_pmaskf) - 1 : 32;");
    }
    char **pv = names(c, "g_pv%d_%d", 0, W);
    char **pf = pairs ? names(c, "g_pf%d_%d", 0, W) : NULL;
    for (int j = 0, at = 0; j < W; j++) {
        const char *mine = word ? word_component(c, wt[j], "g_w", at)
                                : be_strf(&c->x, "g_f == 2 ? ((volatile %s *)g_incl%d)[g_idx] : ((volatile %s *)g_agg%d)[g_idx]", ct(wt[j]), j, ct(wt[j]), j);
        be_line(b, "%s %s = (g_idx < 0 || (int)g_lane > g_stop) ? %s : %s;", ct(wt[j]), pv[j], ne[j], mine);
        if (pairs) {
            be_line(b, "%s %s = (g_pmask || g_idxf < 0 || (int)g_lane > g_stopf) ? %s : %s;", ct(wt[j]), pf[j], ne[j],
                    word_component(c, wt[j], "g_wf", at));
        }
        at += ir_scalar_size(wt[j]) <= 4 ? 32 : 64;
    }
    be_line(b, "/* ordered warp reduction%s: older tiles (higher lanes) on the left */", pairs ? "s of both halves" : "");
    be_line(b, "for (int g_off = 1; g_off < 32; g_off <<= 1) {");
    b->indent++;
    for (int half = 0; half < (pairs ? 2 : 1); half++) {
        char **v = half ? pf : pv;
        int at = 0;
        for (int q = 0; q < nsc; q++) {
            char **o = names(c, half ? "g_of%d_%d" : "g_ol%d_%d", q, ops[q].arity);
            for (int j = 0; j < ops[q].arity; j++) {
                be_line(b, "const %s %s = gpuc_shfl_down(%s, g_off);", ct(wt[at + j]), o[j], v[at + j]);
            }
            be_line(b, "if (g_lane + g_off < 32) {");
            b->indent++;
            apply_op(c, &ops[q], v + at, (const char *const *)o, (const char *const *)(v + at), false);
            b->indent--;
            be_line(b, "}");
            free(o);
            at += ops[q].arity;
        }
    }
    b->indent--;
    be_line(b, "}");
    apply_ops(c, ops, nsc, ex, pv, ex, false);
    if (pairs) {
        be_line(b, "/* the far half is older than the near one */");
        apply_ops(c, ops, nsc, ex, pf, ex, false);
    }
    be_line(b, "if (%s) {", pairs ? "g_pmask || g_pmaskf" : "g_pmask");
    be_line(b, "    break;");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    char **inc = names(c, "g_in%d_%d", 0, W);
    apply_ops(c, ops, nsc, inc, ex, ta, true);
    be_line(b, "if (g_lane == 0) {");
    b->indent++;
    if (stream == 3) {
        /* the publisher's aggregate is stored first (pubd of the look-back
         * warp's slot g_sl, in the phase g_pubd_parity, both the caller's):
         * a 16-byte word has no atomic maximum to keep the status from going down */
        be_line(b, "gpuc_ss_wait(gpuc_smem32(&g_pubd[g_sl]), g_pubd_parity);  /* the aggregate's store came first */");
    }
    publish(c, word, wt, W, "g_tile", 2, inc, stream == 1);
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    free(ta); free(ex); free(ne); free(pv); free(pf); free(inc);
}

static void emit_scan_bulk(CuEmit *c, IrKernel *k);
static void emit_scan_wide(CuEmit *c, IrKernel *k);
static const char *scan_wide_words(CuEmit *c, const IrKernel *k, const char *n);
static bool scan_bulk_emitting_default;  /* emit_scan_bulk is emitting the default kernel (its #else) */

void emit_scan(CuEmit *c, IrKernel *k) {
    if (scan_bulk_eligible(k) && !scan_bulk_emitting_default) { emit_scan_bulk(c, k); return; }  /* grep "SCAN BULK" */
    if (scan_wide_eligible(k) && !scan_bulk_emitting_default) { emit_scan_wide(c, k); return; }  /* grep "SCAN BULK 3 WIDE" */
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    int B = k->block, I = k->items, NW = B / 32;
    int nsc = s->nscans;
    IrOperator *ops = s->scans;
    int W;
    IrScalar *wt = scan_types(s, &W);
    const int word = scan_word_bytes(wt, W);
    KParams p = { 0 };
    stmt_params(c, s, &p);
    if (word) {
        kp_add(c, &p, "unsigned long long *g_words", "g_words");
    } else {
        kp_add(c, &p, "int *__restrict__ g_flags", "g_flags");
        for (int j = 0; j < W; j++) {
            char d[128], a[64];
            snprintf(d, sizeof d, "%s *__restrict__ g_agg%d", ct(wt[j]), j);
            snprintf(a, sizeof a, "g_agg%d", j);
            kp_add(c, &p, d, a);
            snprintf(d, sizeof d, "%s *__restrict__ g_incl%d", ct(wt[j]), j);
            snprintf(a, sizeof a, "g_incl%d", j);
            kp_add(c, &p, d, a);
        }
    }
    /* shared staging: the scan's inputs, then its outputs */
    int in_bytes = 0, out_bytes = 0;
    for (int j = 0; j < W; j++) { in_bytes += staging_bytes(wt[j], I, B * I); }
    int nout = s->post ? s->post->nres : ir_stmt_scan_width(s);
    for (int j = 0; j < nout; j++) { out_bytes += staging_bytes(s->outs[j]->elem, I, B * I); }
    int smem = in_bytes > out_bytes ? in_bytes : out_bytes;
    /* where shared memory limits the blocks per SM (227 KiB, 1 KiB reserved
     * per block, on sm_80/sm_90) to a number that still leaves 72 registers a
     * thread (e.g. 7 blocks of 128 threads), ask for that many, so that the
     * registers of a full tile's loads do not lower it further */
    int min_blocks = 227 * 1024 / (smem + 1024);
    if (min_blocks > 65536 / (B * 72)) { min_blocks = 0; }
    kernel_comment(c, k);
    signature_min(c, k, &p, min_blocks);
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0]));
    be_line(b, "/* tile of %d threads x %d items; %d bytes of shared staging%s */", B, I, smem, padded(wt[0], I) ? " (padded)" : "");
    be_line(b, "__shared__ __align__(16) unsigned char g_smem[%d];", smem);
    for (int j = 0; j < W; j++) {
        be_line(b, "__shared__ %s g_wsum%d[32];", ct(wt[j]), j);
        be_line(b, "__shared__ %s g_ex_sh%d;", ct(wt[j]), j);
    }
    be_line(b, "const unsigned g_lane = threadIdx.x & 31, g_warp = threadIdx.x >> 5;");
    be_line(b, "/* the tile is the block's index: NVIDIA GPUs start blocks in index order, so");
    be_line(b, " * every predecessor is running or done (CUB's decoupled look-back relies on it too) */");
    be_line(b, "const int64_t g_tile = blockIdx.x;");
    be_line(b, "const int64_t g_base = g_tile * %d;", B * I);
    /* staging arrays */
    int off = 0;
    be_line(b, "const unsigned g_sm = gpuc_smem32(g_smem);");
    for (int j = 0; j < W; j++) {
        be_line(b, "const unsigned g_st%d = g_sm + %du;", j, off);
        off += staging_bytes(wt[j], I, B * I);
    }
    /* the neutral elements */
    char **ne = calloc((size_t)W + 1, sizeof *ne);
    {
        int at = 0;
        for (int q = 0; q < nsc; q++) {
            for (int j = 0; j < ops[q].arity; j++) {
                ne[at] = be_strf(&c->x, "g_ne%d", at);
                be_line(b, "const %s %s = %s;", ct(wt[at]), ne[at], be_expr(&c->x, ops[q].ne[j]));
                at++;
            }
        }
    }
    char **agg = names(c, "g_t%d_%d", 0, W);
    char **wv = names(c, "g_w%d_%d", 0, W);
    char **el = names(c, "g_el%d_%d", 0, W);
    be_line(b, "/* phase 1: coalesced loads, the map, scan inputs staged in shared memory */");
    be_line(b, "if (g_base + %d <= %s) {", B * I, n);
    b->indent++;
    be_line(b, "/* a full tile: no bound checks, every load in flight before the first store */");
    scan_phase1(c, k, true, wt, W, ne);
    b->indent--;
    be_line(b, "} else {");
    b->indent++;
    be_line(b, "/* the last tile: items past n stage the neutral element */");
    scan_phase1(c, k, false, wt, W, ne);
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "/* phase 2: each thread takes %d consecutive items and reduces them */", I);
    for (int u = 0; u < I; u++) {
        const char *slot = be_strf(&c->x, "threadIdx.x * %d + %d", I, u);
        for (int j = 0; j < W; j++) { be_line(b, "const %s g_x%d_%d = %s;", ct(wt[j]), j, u, stage_load(c, "st", j, wt[j], I, slot)); }
    }
    /* per-scan operator views */
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = %s;", ct(wt[j]), agg[j], ne[j]); }
    for (int u = 0; u < I; u++) {
        int at = 0;
        for (int q = 0; q < nsc; q++) {
            const char **xs = calloc((size_t)ops[q].arity + 1, sizeof *xs);
            for (int j = 0; j < ops[q].arity; j++) { xs[j] = be_strf(&c->x, "g_x%d_%d", at + j, u); }
            apply_op(c, &ops[q], agg + at, (const char *const *)(agg + at), xs, false);
            free(xs);
            at += ops[q].arity;
        }
    }
    be_line(b, "/* phase 3: scan of the thread totals: warp shuffles, then across warps */");
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = %s;", ct(wt[j]), wv[j], agg[j]); }
    warp_inclusive_scan(c, ops, nsc, wt, wv, "g_y%d_%d");
    for (int j = 0; j < W; j++) {
        be_line(b, "%s %s = gpuc_shfl_up(%s, 1);", ct(wt[j]), el[j], wv[j]);
        be_line(b, "if (g_lane == 0) { %s = %s; }", el[j], ne[j]);
    }
    be_line(b, "if (g_lane == 31) {");
    for (int j = 0; j < W; j++) { be_line(b, "    g_wsum%d[g_warp] = %s;", j, wv[j]); }
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "if (g_warp == 0) {");
    b->indent++;
    char **ws = names(c, "g_ws%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = g_lane < %d ? g_wsum%d[g_lane] : %s;", ct(wt[j]), ws[j], NW, j, ne[j]); }
    warp_inclusive_scan(c, ops, nsc, wt, ws, "g_z%d_%d");
    be_line(b, "if (g_lane < 32) {");
    for (int j = 0; j < W; j++) { be_line(b, "    g_wsum%d[g_lane] = %s;  /* inclusive over warps */", j, ws[j]); }
    be_line(b, "}");
    be_line(b, "__syncwarp();");
    char **ex = names(c, "g_ex%d_%d", 0, W);
    lookback(c, ops, nsc, wt, W, word, NW, false, 0);
    be_line(b, "if (g_lane == 0) {");
    for (int j = 0; j < W; j++) { be_line(b, "    g_ex_sh%d = %s;", j, ex[j]); }
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    char **wp = names(c, "g_wp%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "const %s %s = g_warp > 0 ? g_wsum%d[g_warp - 1] : %s;", ct(wt[j]), wp[j], j, ne[j]); }
    char **tex = names(c, "g_tx%d_%d", 0, W);
    /* thread exclusive prefix within the tile: op(warp prefix, lane prefix) */
    apply_ops(c, ops, nsc, tex, wp, el, true);
    char **pre = names(c, "g_pre%d_%d", 0, W);
    char **exs = names(c, "g_exs%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "const %s %s = g_ex_sh%d;", ct(wt[j]), exs[j], j); }
    for (int q = 0, at = 0; q < nsc; q++) {
        apply_op(c, &ops[q], pre + at, (const char *const *)(exs + at), (const char *const *)(tex + at), true);
        at += ops[q].arity;
    }
    /* no barrier before the output staging overwrites the input staging:
     * every thread read its inputs (phase 2) before the barrier after
     * phase 3, and has passed the one after the look-back since */
    be_line(b, "/* phase 5: each item's prefix, the post map, outputs staged for coalesced stores */");
    int sw = ir_stmt_scan_width(s);
    int off2 = 0;
    for (int j = 0; j < nout; j++) {
        be_line(b, "const unsigned g_so%d = g_sm + %du;", j, off2);
        off2 += staging_bytes(s->outs[j]->elem, I, B * I);
    }
    for (int u = 0; u < I; u++) {
        be_line(b, "{");
        b->indent++;
        be_line(b, "const int64_t g_i = g_base + threadIdx.x * %d + %d;  (void)g_i;", I, u);
        const char **val = calloc((size_t)sw + 1, sizeof *val);
        int at = 0;
        for (int q = 0; q < nsc; q++) {
            const char **xs = calloc((size_t)ops[q].arity + 1, sizeof *xs);
            for (int j = 0; j < ops[q].arity; j++) { xs[j] = be_strf(&c->x, "g_x%d_%d", at + j, u); }
            if (ops[q].exclusive) {
                for (int j = 0; j < ops[q].arity; j++) {
                    char *t = be_strf(&c->x, "g_e%d_%d", at + j, u);
                    be_line(b, "const %s %s = %s;  (void)%s;", ct(wt[at + j]), t, pre[at + j], t);  /* a post may not read it */
                    val[at + j] = t;
                }
                apply_op(c, &ops[q], pre + at, (const char *const *)(pre + at), xs, false);
            } else {
                apply_op(c, &ops[q], pre + at, (const char *const *)(pre + at), xs, false);
                for (int j = 0; j < ops[q].arity; j++) {
                    char *t = be_strf(&c->x, "g_e%d_%d", at + j, u);
                    be_line(b, "const %s %s = %s;  (void)%s;", ct(wt[at + j]), t, pre[at + j], t);  /* a post may not read it */
                    val[at + j] = t;
                }
            }
            free(xs);
            at += ops[q].arity;
        }
        c->x.idx[0] = "g_i";
        c->x.idx[1] = "g_i";
        if (s->post) {
            const char **pr = calloc((size_t)s->post->nres + 1, sizeof *pr);
            be_lambda(&c->x, s->post, val, pr);
            for (int j = 0; j < nout; j++) { stage_store(c, "so", j, s->outs[j]->elem, I, be_strf(&c->x, "threadIdx.x * %d + %d", I, u), pr[j]); }
            free(pr);
        } else {
            for (int j = 0; j < nout; j++) { stage_store(c, "so", j, s->outs[j]->elem, I, be_strf(&c->x, "threadIdx.x * %d + %d", I, u), val[j]); }
        }
        free(val);
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "__syncthreads();");
    for (int u = 0; u < I; u++) {
        be_line(b, "if (g_base + %d + threadIdx.x < %s) {", u * B, n);
        for (int j = 0; j < nout; j++) {
            be_line(b, "    %s[g_base + %d + threadIdx.x] = %s;", be_vname(s->outs[j]), u * B, stage_load(c, "so", j, s->outs[j]->elem, I, be_strf(&c->x, "%d + threadIdx.x", u * B)));
        }
        be_line(b, "}");
    }
    b->indent = 0;
    be_printf(b, "}\n\n");
    free(ne); free(agg); free(wv); free(el); free(ws); free(tex); free(wp); free(ex);
    free(pre); free(exs); free(wt);
    kp_free(&p);
}


/* ---- SCAN BULK: 4-byte scans through Hopper bulk copies (sm_90) ----
 * Variants of the scan kernel for one 4-byte component loaded as it is
 * from one input array (no map work, no mapped outputs) and one 4-byte
 * output, tiles of an odd item count (blocked reads of the staging without
 * bank conflicts) whose one stage fits what an sm_90 block may opt into
 * (227 KiB, less the 1 KiB the block reserves).
 * Selected per kernel at compile time by the value of
 *   GPUC_SCAN_BULK_<kernel> (default GPUC_SCAN_BULK, default 3, or the
 *   value of GPUC_SCAN_BULK, 0, 1 or 2, in the environment as gpuc emitted
 *   the code), so nvcc -DGPUC_SCAN_BULK=2 or -DGPUC_SCAN_BULK_incl_f32_k0_scan=1
 *   picks one; the host launcher reads the same macros (grid, tile counter):
 *   0  emit_scan's kernel;
 *   1  persistent: min(tiles, a wave) blocks, each taking tiles in order
 *      from a counter after the status words (so every predecessor of a
 *      tile is held by a running block), with two stages of shared staging:
 *      thread 0 issues one cp.async.bulk of the next tile's bytes
 *      (completing on the stage's mbarrier) as the block starts on the
 *      current one, so a tile's loads are in flight during the scan and the
 *      look-back of the one before.  Tiles whose two stages do not fit 48
 *      KiB get mode 2 instead;
 *   2  one tile per block, the block's index (as emit_scan's), one stage:
 *      thread 0 issues the tile's one cp.async.bulk as the block starts, so
 *      every resident block's whole tile is in flight at once and takes no
 *      registers (emit_scan's 39 loads a thread held 61 registers: 8 blocks
 *      of 128 an SM; here shared memory alone bounds them, 10 of 128 x 39).
 *      The stage is dynamic shared memory (extern __shared__, the tile's
 *      bytes passed by the launcher as g_shared), so tiles past 48 KiB are
 *      allowed: the launchers opt the kernel in (gpuc_h_launch of either
 *      prelude). A tile past the 46 KiB that emit_scan stages statically
 *      (scan_bulk_default_fits) has modes 2 and 3 alone: GPUC_SCAN_BULK=0
 *      and 1 do not apply to it;
 *   3  (the default) streaming: the kernel <kernel>_stream, one block an
 *      SM, tiles of 8192 items through a ring of six slots, warp-specialized
 *      (grep "SCAN BULK 3"); mode 2's kernel is emitted too, its fallback
 *      where a block may not opt into the ring (before sm_90).
 * Per tile: wait on the stage's mbarrier; each thread reduces its I
 * consecutive items; warp scans, block scan, decoupled look-back as
 * emit_scan; each item, read again from the staging, its prefix (and post)
 * written back over its input slot; one cp.async.bulk of the tile from
 * shared to global (a bulk group that thread 0 waits to have read the
 * stage before the stage is loaded again or the block exits).  The partial
 * last tile, unaligned arrays and architectures before sm_90 load and store
 * through the threads instead (same kernel). */

/* The staging of one tile, bytes (one stage). */
static int scan_bulk_tile_bytes(const IrKernel *k) { return 4 * k->block * k->items; }

/* Whether emit_scan's kernel (static staging) is emitted beside mode 2:
 * the tile within the 46 KiB bound that ir/to_kernels.c gives other scans. */
static bool scan_bulk_default_fits(const IrKernel *k) { return (long)scan_bulk_tile_bytes(k) * 17 / 16 <= 46 * 1024; }

/* Whether two stages of the tile fit 48 KiB of static shared memory (mode 1 is emitted). */
static bool scan_bulk_two_stages(const IrKernel *k) { return 2 * scan_bulk_tile_bytes(k) + 1024 <= 48 * 1024; }

bool scan_bulk_eligible(const IrKernel *k) {
    if (k->kind != IR_K_SCAN || !ir_scan_copied_input(k->stmt)) { return false; }
    /* odd items: blocked reads without conflicts; one stage within what an
     * sm_90 block may opt into (ir/to_kernels.c bounds the items the same way) */
    return k->items % 2 == 1 && scan_bulk_tile_bytes(k) + 1024 <= 227 * 1024;
}

/* The macros that select the variant of kernel k, once per file each. */
static void scan_bulk_macros(CuEmit *c, const IrKernel *k) {
    /* 3 by default (2 for a kernel without mode 3): H200, inclusive i32 scan
     * of 2^28, 0.966 of the copy rate against mode 2's 0.82 (bench/
     * try_scan_stream.cu); mode 2 (H100, 2026-11-25): f32/i32 scans of 2^28
     * at 0.86-0.87 against 0.82 for the register kernel (= CUB), and
     * 0.67-0.74x CUB's time at 2^10..2^20; GPUC_SCAN_BULK=0, 1 or 2 in gpuc's
     * environment (or -DGPUC_SCAN_BULK=N for nvcc) picks the others, for
     * comparisons */
    const char *env = getenv("GPUC_SCAN_BULK");
    int mode = env && strlen(env) == 1 && env[0] >= '0' && env[0] <= '3' ? env[0] - '0' : 3;
    if (mode == 3 && !scan_stream_eligible(k)) { mode = 2; }
    be_printf(c->b, "#ifndef GPUC_SCAN_BULK\n"
                    "#define GPUC_SCAN_BULK %d  /* eligible 4-byte scans through Hopper bulk copies: 1 persistent, 2 one tile a block, 3 streaming (backend/cuda/scan.c, grep \"SCAN BULK\") */\n"
                    "#endif\n"
                    "#ifndef GPUC_SCAN_BULK_%s\n#define GPUC_SCAN_BULK_%s GPUC_SCAN_BULK\n#endif\n",
              mode, k->name, k->name);
    /* mode 2's variants, off unless GPUC_SCAN_BULK_EARLY=1 or
     * GPUC_SCAN_BULK_WSTORE=1 was in gpuc's environment (grep "SCAN BULK
     * EARLY", "SCAN BULK WSTORE") */
    const char *early = getenv("GPUC_SCAN_BULK_EARLY"), *wstore = getenv("GPUC_SCAN_BULK_WSTORE");
    be_printf(c->b, "#ifndef GPUC_SCAN_BULK_EARLY\n#define GPUC_SCAN_BULK_EARLY %d  /* mode 2: the local scan during the look-back */\n#endif\n"
                    "#ifndef GPUC_SCAN_BULK_EARLY_%s\n#define GPUC_SCAN_BULK_EARLY_%s GPUC_SCAN_BULK_EARLY\n#endif\n"
                    "#ifndef GPUC_SCAN_BULK_WSTORE\n#define GPUC_SCAN_BULK_WSTORE %d  /* mode 2: a bulk store a warp, no barrier before it */\n#endif\n"
                    "#ifndef GPUC_SCAN_BULK_WSTORE_%s\n#define GPUC_SCAN_BULK_WSTORE_%s GPUC_SCAN_BULK_WSTORE\n#endif\n",
              early && strcmp(early, "1") == 0, k->name, k->name, wstore && strcmp(wstore, "1") == 0, k->name, k->name);
}

static void scan_stream_host(CuEmit *c, IrKernel *k);

void scan_bulk_host(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    scan_bulk_macros(c, k);
    be_line(b, "unsigned g_grid = (unsigned)g_ntiles;");
    /* mode 2's stage, dynamic shared memory; none for emit_scan's kernel or mode 1 */
    be_line(b, "unsigned g_shared = 0u;");
    if (!scan_bulk_default_fits(k)) {
        be_line(b, "g_shared = %du;  /* SCAN BULK 2 alone: the tile is past emit_scan's static staging */", scan_bulk_tile_bytes(k));
    } else {
        if (scan_bulk_two_stages(k)) {
            be_printf(b, "#if GPUC_SCAN_BULK_%s && GPUC_SCAN_BULK_%s != 1\n", k->name, k->name);
        } else {
            be_printf(b, "#if GPUC_SCAN_BULK_%s\n", k->name);
        }
        be_line(b, "g_shared = %du;  /* SCAN BULK 2: the tile's stage */", scan_bulk_tile_bytes(k));
        be_printf(b, "#endif\n");
    }
    if (scan_stream_eligible(k)) { scan_stream_host(c, k); }
    if (!scan_bulk_two_stages(k)) { return; }  /* mode 1 is mode 2: a block a tile */
    be_printf(b, "#if GPUC_SCAN_BULK_%s == 1\n", k->name);
    be_line(b, "{ /* SCAN BULK: persistent blocks, one wave of them at most */");
    b->indent++;
    be_line(b, "int g_fit = 1;");
    be_line(b, "GPUC_TRY(gpuc_h_resident(gpuc_h, GPUC_KERNEL(%s), %d, &g_fit));", k->name, k->block);
    be_line(b, "const int64_t g_wave = (int64_t)gpuc_h_sms(gpuc_h) * g_fit;");
    be_line(b, "if (g_ntiles > g_wave) {");
    be_line(b, "    g_grid = (unsigned)g_wave;");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#endif\n");
}

/* The device helpers (PTX, so that NVRTC needs no header), addresses of
 * shared memory as 32-bit offsets (gpuc_smem32).
 * SCAN BULK HINT: the bulk loads and stores carry an L2 evict_first
 * policy (GPUC_SCAN_BULK_HINT 3): a scan reads and writes each byte once.
 * H100, 2026-11-28, bench/try_hints.sh, 4-byte scans of 2^28, two passes
 * each: 793.6-801.9 us with both hints against 801.5-814.4 without (0.89-0.90
 * against 0.88-0.89 of the copy rate); either hint alone gained nothing. */
static void scan_bulk_helpers(CuEmit *c) {
    be_printf(c->b, "#ifndef GPUC_SCAN_BULK_HELPERS\n#define GPUC_SCAN_BULK_HELPERS\n"
                    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
                    "#define GPUC_SCAN_BULK_DEVICE 1\n"
                    "#else\n"
                    "#define GPUC_SCAN_BULK_DEVICE 0\n"
                    "#endif\n"
                    "#ifndef GPUC_SCAN_BULK_HINT\n"
                    "#define GPUC_SCAN_BULK_HINT 3  /* L2 evict_first hints on the bulk copies: 1 loads, 2 stores, 3 both (default), 0 none (backend/cuda/scan.c, grep \"SCAN BULK HINT\") */\n"
                    "#endif\n"
                    "#if GPUC_SCAN_BULK_DEVICE\n"
                    "/* an L2 policy that evicts the lines a copy touches first: the scan reads and writes each byte once */\n"
                    "__device__ __forceinline__ unsigned long long gpuc_sb_evict_first(void) {\n"
                    "    unsigned long long p;\n"
                    "    asm volatile(\"createpolicy.fractional.L2::evict_first.b64 %%0, 1.0;\" : \"=l\"(p));\n"
                    "    return p;\n"
                    "}\n"
                    "/* an mbarrier completing when one thread has arrived and the bytes it announced have landed */\n"
                    "__device__ __forceinline__ void gpuc_sb_init(unsigned bar) {\n"
                    "    asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 1;\\n\\tfence.mbarrier_init.release.cluster;\" :: \"r\"(bar) : \"memory\");\n"
                    "}\n"
                    "/* bytes from global src to shared dst (16-byte aligned, a multiple of 16), completing on bar;\n"
                    " * the fence orders the block's earlier accesses of dst (generic proxy) before the copy's writes */\n"
                    "__device__ __forceinline__ void gpuc_sb_load(unsigned dst, const void *src, unsigned bytes, unsigned bar) {\n"
                    "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
                    "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" :: \"r\"(bar), \"r\"(bytes) : \"memory\");\n"
                    "#if GPUC_SCAN_BULK_HINT & 1\n"
                    "    asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%%0], [%%1], %%2, [%%3], %%4;\"\n"
                    "                 :: \"r\"(dst), \"l\"(src), \"r\"(bytes), \"r\"(bar), \"l\"(gpuc_sb_evict_first()) : \"memory\");\n"
                    "#else\n"
                    "    asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%0], [%%1], %%2, [%%3];\"\n"
                    "                 :: \"r\"(dst), \"l\"(src), \"r\"(bytes), \"r\"(bar) : \"memory\");\n"
                    "#endif\n"
                    "}\n"
                    "__device__ __forceinline__ void gpuc_sb_wait(unsigned bar, unsigned parity) {\n"
                    "    unsigned done;\n"
                    "    do {\n"
                    "        asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%%1], %%2; selp.u32 %%0, 1, 0, p; }\"\n"
                    "                     : \"=r\"(done) : \"r\"(bar), \"r\"(parity) : \"memory\");\n"
                    "    } while (!done);\n"
                    "}\n"
                    "/* this thread's writes of shared memory (generic proxy) before a bulk copy reads them */\n"
                    "__device__ __forceinline__ void gpuc_sb_fence(void) {\n"
                    "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
                    "}\n"
                    "/* bytes from shared src to global dst, as a bulk group */\n"
                    "__device__ __forceinline__ void gpuc_sb_store(void *dst, unsigned src, unsigned bytes) {\n"
                    "#if GPUC_SCAN_BULK_HINT & 2\n"
                    "    asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%%0], [%%1], %%2, %%3;\\n\\tcp.async.bulk.commit_group;\"\n"
                    "                 :: \"l\"(dst), \"r\"(src), \"r\"(bytes), \"l\"(gpuc_sb_evict_first()) : \"memory\");\n"
                    "#else\n"
                    "    asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group [%%0], [%%1], %%2;\\n\\tcp.async.bulk.commit_group;\"\n"
                    "                 :: \"l\"(dst), \"r\"(src), \"r\"(bytes) : \"memory\");\n"
                    "#endif\n"
                    "}\n"
                    "/* this thread's bulk stores have read their shared memory */\n"
                    "__device__ __forceinline__ void gpuc_sb_store_read(void) {\n"
                    "    asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");\n"
                    "}\n"
                    "/* this thread's bulk stores are done */\n"
                    "__device__ __forceinline__ void gpuc_sb_store_done(void) {\n"
                    "    asm volatile(\"cp.async.bulk.wait_group 0;\" ::: \"memory\");\n"
                    "}\n"
                    "#endif\n#endif\n");
}

/* The items of this thread (I consecutive slots from g_mine), each read
 * again from the stage: its prefix from the running value `run` (declared,
 * not const) on, inclusive or exclusive as the operator, then the post
 * when `post` (a local pass of SCAN BULK EARLY writes the tile-relative
 * prefix alone), written back over its slot. */
static void scan_bulk_items(CuEmit *c, IrKernel *k, char *run, bool post) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrOperator *op = &s->scans[0];
    IrScalar t = op->op->ptypes[0], to = post ? s->outs[0]->elem : t;
    for (int u = 0; u < k->items; u++) {
        be_line(b, "{");
        b->indent++;
        be_line(b, "const int64_t g_i = g_base + threadIdx.x * %d + %d;  (void)g_i;", k->items, u);
        char *x = be_strf(&c->x, "g_x0_%d", u), *e = be_strf(&c->x, "g_e0_%d", u);
        be_line(b, "const %s %s = gpuc_lds_%s(g_mine + %du);", ct(t), x, ir_scalar_name(t), 4 * u);
        if (op->exclusive) {
            be_line(b, "const %s %s = %s;  (void)%s;", ct(t), e, run, e);
            apply_op(c, op, &run, (const char *const *)&run, (const char *const *)&x, false);
        } else {
            apply_op(c, op, &run, (const char *const *)&run, (const char *const *)&x, false);
            be_line(b, "const %s %s = %s;  (void)%s;", ct(t), e, run, e);
        }
        const char *v = e;
        if (post && s->post) {
            c->x.idx[0] = "g_i";
            c->x.idx[1] = "g_i";
            const char *pr[2] = { 0 };
            const char *args[1] = { e };
            be_lambda(&c->x, s->post, args, pr);
            v = pr[0];
        }
        be_line(b, "gpuc_sts_%s(g_mine + %du, %s);", ir_scalar_name(to), 4 * u, v);
        b->indent--;
        be_line(b, "}");
    }
}

/* The tile out through the threads (the last tile, unaligned arrays, before
 * sm_90), coalesced, after a barrier. */
static void scan_bulk_thread_stores(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    const char *n = be_vname(s->w[0]), *out = be_vname(s->outs[0]);
    be_line(b, "    for (int g_u = 0; g_u < %d; g_u++) {", k->items);
    be_line(b, "        const int g_slot = g_u * %d + (int)threadIdx.x;", k->block);
    be_line(b, "        if (g_base + g_slot < %s) {", n);
    be_line(b, "            %s[g_base + g_slot] = gpuc_lds_%s(g_st + 4u * (unsigned)g_slot);", out, ir_scalar_name(s->outs[0]->elem));
    be_line(b, "        }");
    be_line(b, "    }");
}

/* SCAN BULK EARLY (mode 2, -DGPUC_SCAN_BULK_EARLY_<kernel>=1): after the
 * barrier on the warps' totals, every warp scans them itself (the tile's
 * aggregate and its warp's prefix, no second wait for warp 0); warp 0 looks
 * back at once while the other warps write their items' tile-relative
 * prefixes over their slots (warp 0 does the same after its look-back);
 * after the look-back's barrier each thread combines the tile's exclusive
 * prefix into its slots and applies the post. A second pass over the items
 * in shared memory, in exchange for the local scan done during the look-back. */
static void scan_bulk_early(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrOperator *op = &s->scans[0];
    IrScalar t = op->op->ptypes[0];
    int NW = k->block / 32;
    char *ws = "g_ws0_0", *ta = "g_ta0_0", *wp = "g_wp0_0", *el = "g_el0_0", *tex = "g_tx0_0", *exs = "g_exs0_0";
    be_line(b, "/* SCAN BULK EARLY: every warp scans the warps' totals itself */");
    be_line(b, "%s %s = g_lane < %d ? g_wsum0[g_lane] : g_ne0;", ct(t), ws, NW);
    warp_inclusive_scan(c, op, 1, &t, &ws, "g_z%d_%d");
    be_line(b, "const %s %s = __shfl_sync(0xffffffffu, %s, %d);  /* the tile's aggregate */", ct(t), ta, ws, NW - 1);
    be_line(b, "const %s g_wq0_0 = __shfl_sync(0xffffffffu, %s, (int)(g_warp + 31u) & 31);", ct(t), ws);
    be_line(b, "const %s %s = g_warp > 0 ? g_wq0_0 : g_ne0;  /* before this warp */", ct(t), wp);
    be_line(b, "if (g_warp == 0) {");
    b->indent++;
    lookback(c, op, 1, &t, 1, 8, NW, true, 0);
    be_line(b, "if (g_lane == 0) {");
    be_line(b, "    g_ex_sh0 = g_ex0_0;");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "/* phase 5a: tile-relative prefixes over the slots (warps 1.. during the look-back) */");
    apply_op(c, op, &tex, (const char *const *)&wp, (const char *const *)&el, true);
    scan_bulk_items(c, k, tex, false);
    be_line(b, "__syncthreads();");
    be_line(b, "/* phase 5b: the tile's exclusive prefix into each slot, and the post */");
    be_line(b, "const %s %s = g_ex_sh0;", ct(t), exs);
    for (int u = 0; u < k->items; u++) {
        be_line(b, "{");
        b->indent++;
        be_line(b, "const int64_t g_i = g_base + threadIdx.x * %d + %d;  (void)g_i;", k->items, u);
        char *y = be_strf(&c->x, "g_f0_%d", u), *e = be_strf(&c->x, "g_e0_%d", u);
        be_line(b, "const %s %s = gpuc_lds_%s(g_mine + %du);", ct(t), y, ir_scalar_name(t), 4 * u);
        apply_op(c, op, &e, (const char *const *)&exs, (const char *const *)&y, true);
        const char *v = e;
        if (s->post) {
            c->x.idx[0] = "g_i";
            c->x.idx[1] = "g_i";
            const char *pr[2] = { 0 };
            const char *args[1] = { e };
            be_lambda(&c->x, s->post, args, pr);
            v = pr[0];
        }
        be_line(b, "gpuc_sts_%s(g_mine + %du, %s);", ir_scalar_name(s->outs[0]->elem), 4 * u, v);
        b->indent--;
        be_line(b, "}");
    }
}

/* A bulk variant's kernel (see SCAN BULK above): persistent (mode 1) or one
 * tile per block (mode 2); same parameters as emit_scan's. */
static void scan_bulk_kernel(CuEmit *c, IrKernel *k, bool persistent) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrOperator *op = &s->scans[0];
    int B = k->block, I = k->items, NW = B / 32, T = B * I, TB = scan_bulk_tile_bytes(k);
    int stages = persistent ? 2 : 1;
    IrScalar t = op->op->ptypes[0];
    const char *tn = ir_scalar_name(t);
    /* copies: be_vname's strings do not outlive the post's free values' names */
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0])), *in = be_strf(&c->x, "%s", be_vname(ir_scan_copied_input(s))),
               *out = be_strf(&c->x, "%s", be_vname(s->outs[0]));
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kp_add(c, &p, "unsigned long long *g_words", "g_words");
    /* the blocks that the stages let on an SM (227 KiB, 1 KiB reserved a
     * block, and the block's other shared variables), so that ptxas keeps
     * the registers to as many (the items are not held in registers across
     * the look-back: phase 5 reads them again) */
    int min_blocks = 227 * 1024 / (stages * TB + 1024 + 512);
    if (min_blocks > 2048 / B) { min_blocks = 2048 / B; }
    if (min_blocks > 32) { min_blocks = 32; }
    kernel_comment(c, k);
    signature_min(c, k, &p, min_blocks);
    if (persistent) {
        be_line(b, "/* SCAN BULK 1: persistent blocks, tiles of %d threads x %d items, two stages of %d bytes */", B, I, TB);
    } else {
        be_line(b, "/* SCAN BULK 2: one tile of %d threads x %d items a block, one stage of %d bytes */", B, I, TB);
    }
    if (persistent) {
        be_line(b, "__shared__ __align__(128) unsigned char g_smem[%d];", stages * TB);
    } else {
        be_line(b, "extern __shared__ __align__(128) unsigned char g_smem[];  /* %d bytes, the launcher's g_shared */", TB);
    }
    be_line(b, "__shared__ __align__(8) unsigned long long g_bar[%d];  /* stage s's bytes have landed */", stages);
    if (persistent) { be_line(b, "__shared__ int64_t g_tile_sh[2];  /* the tile of stage s */"); }
    be_line(b, "__shared__ %s g_wsum0[32];", ct(t));
    be_line(b, "__shared__ %s g_ex_sh0;", ct(t));
    be_line(b, "const unsigned g_lane = threadIdx.x & 31, g_warp = threadIdx.x >> 5;");
    if (persistent) {
        be_line(b, "const int64_t g_ntiles = (%s + %d) / %d;", n, T - 1, T);
        be_line(b, "/* the next tile to take: a counter after the status words, zeroed with them */");
        be_line(b, "unsigned long long *const g_next = g_words + g_ntiles;");
    }
    be_line(b, "const %s g_ne0 = %s;", ct(t), be_expr(&c->x, op->ne[0]));
    be_line(b, "const unsigned g_sm = gpuc_smem32(g_smem);");
    be_line(b, "const unsigned g_bar0 = gpuc_smem32(&g_bar[0]);");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "const bool g_bulk_ok = ((((uintptr_t)%s) | ((uintptr_t)%s)) & 15u) == 0u;  /* 16-byte aligned arrays */", in, out);
    be_printf(b, "#else\n");
    be_line(b, "const bool g_bulk_ok = false;  /* (before sm_90: through the threads) */");
    be_printf(b, "#endif\n");
    if (!persistent) {
        be_line(b, "/* the tile is the block's index: NVIDIA GPUs start blocks in index order, so");
        be_line(b, " * every predecessor is running or done (CUB's decoupled look-back relies on it too) */");
        be_line(b, "const int64_t g_tile = blockIdx.x;");
    }
    be_line(b, "if (threadIdx.x == 0) {");
    b->indent++;
    const char *first = persistent ? "g_t" : "g_tile";
    if (persistent) {
        be_line(b, "const int64_t g_t = (int64_t)atomicAdd(g_next, 1ull);");
        be_line(b, "g_tile_sh[0] = g_t;");
    }
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "if (g_bulk_ok) {");
    be_line(b, "    gpuc_sb_init(g_bar0);");
    if (persistent) { be_line(b, "    gpuc_sb_init(g_bar0 + 8u);"); }
    be_line(b, "    if ((%s + 1) * %d <= %s) {", first, T, n);
    be_line(b, "        gpuc_sb_load(g_sm, %s + %s * %d, %du, g_bar0);", in, first, T, TB);
    be_line(b, "    }");
    be_line(b, "}");
    be_printf(b, "#endif\n");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    if (persistent) {
        be_line(b, "unsigned g_stage = 0u, g_par = 0u;  /* this tile's stage; bit s: the phase parity of stage s's barrier */");
        be_line(b, "for (;;) {");
        b->indent++;
        be_line(b, "const int64_t g_tile = g_tile_sh[g_stage];");
        be_line(b, "if (g_tile >= g_ntiles) {");
        be_line(b, "    break;");
        be_line(b, "}");
    } else {
        be_line(b, "{");
        b->indent++;
    }
    be_line(b, "const int64_t g_base = g_tile * %d;", T);
    be_line(b, "const bool g_bulk = g_bulk_ok && g_base + %d <= %s;  /* the same in every thread */", T, n);
    if (persistent) {
        be_line(b, "const unsigned g_st = g_sm + g_stage * %du;", TB);
        be_line(b, "if (threadIdx.x == 0) {");
        b->indent++;
        be_line(b, "/* the next tile, into the other stage (last read by the tile before, whose");
        be_line(b, " * bulk store this thread waits for) while this one is scanned */");
        be_line(b, "const int64_t g_t = (int64_t)atomicAdd(g_next, 1ull);");
        be_line(b, "g_tile_sh[g_stage ^ 1u] = g_t;");
        be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
        be_line(b, "if (g_bulk_ok) {");
        be_line(b, "    gpuc_sb_store_read();");
        be_line(b, "    if ((g_t + 1) * %d <= %s) {", T, n);
        be_line(b, "        gpuc_sb_load(g_sm + (g_stage ^ 1u) * %du, %s + g_t * %d, %du, g_bar0 + 8u * (g_stage ^ 1u));", TB, in, T, TB);
        be_line(b, "    }");
        be_line(b, "}");
        be_printf(b, "#endif\n");
        b->indent--;
        be_line(b, "}");
    } else {
        be_line(b, "const unsigned g_st = g_sm;");
    }
    be_line(b, "/* phase 1: the tile in the stage */");
    be_line(b, "if (g_bulk) {");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    if (persistent) {
        be_line(b, "    gpuc_sb_wait(g_bar0 + 8u * g_stage, (g_par >> g_stage) & 1u);");
        be_printf(b, "#endif\n");
        be_line(b, "    g_par ^= 1u << g_stage;");
    } else {
        be_line(b, "    gpuc_sb_wait(g_bar0, 0u);");
        be_printf(b, "#endif\n");
    }
    be_line(b, "} else {");
    b->indent++;
    if (persistent) {
        be_line(b, "/* the last tile (or unaligned arrays, or before sm_90), through the threads: after");
        be_line(b, " * thread 0 has seen the bulk store of the stage's tile before read it */");
        be_line(b, "__syncthreads();");
    } else {
        be_line(b, "/* the last tile (or unaligned arrays, or before sm_90), through the threads */");
    }
    be_line(b, "for (int g_u = 0; g_u < %d; g_u++) {", I);
    be_line(b, "    const int g_slot = g_u * %d + (int)threadIdx.x;", B);
    be_line(b, "    gpuc_sts_%s(g_st + 4u * (unsigned)g_slot, g_base + g_slot < %s ? %s[g_base + g_slot] : g_ne0);", tn, n, in);
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    b->indent--;
    be_line(b, "}");
    be_line(b, "/* phase 2: each thread takes %d consecutive items (odd: no bank conflicts) and reduces them */", I);
    be_line(b, "const unsigned g_mine = g_st + 4u * (threadIdx.x * %du);", I);
    char *agg = "g_t0_0", *wv = "g_w0_0", *el = "g_el0_0";
    be_line(b, "%s %s = g_ne0;", ct(t), agg);
    for (int u = 0; u < I; u++) {
        char *x = be_strf(&c->x, "g_x0_%d", u);
        be_line(b, "{");
        be_line(b, "    const %s %s = gpuc_lds_%s(g_mine + %du);", ct(t), x, tn, 4 * u);
        b->indent++;
        apply_op(c, op, &agg, (const char *const *)&agg, (const char *const *)&x, false);
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "/* phase 3: scan of the thread totals: warp shuffles, then across warps */");
    be_line(b, "%s %s = %s;", ct(t), wv, agg);
    warp_inclusive_scan(c, op, 1, &t, &wv, "g_y%d_%d");
    be_line(b, "%s %s = gpuc_shfl_up(%s, 1);", ct(t), el, wv);
    be_line(b, "if (g_lane == 0) { %s = g_ne0; }", el);
    be_line(b, "if (g_lane == 31) {");
    be_line(b, "    g_wsum0[g_warp] = %s;", wv);
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    char *ws = "g_ws0_0", *ex = "g_ex0_0", *wp = "g_wp0_0", *tex = "g_tx0_0", *exs = "g_exs0_0", *pre = "g_pre0_0";
    if (!persistent) { be_printf(b, "#if GPUC_SCAN_BULK_EARLY_%s\n", k->name); scan_bulk_early(c, k); be_printf(b, "#else\n"); }
    be_line(b, "if (g_warp == 0) {");
    b->indent++;
    be_line(b, "%s %s = g_lane < %d ? g_wsum0[g_lane] : g_ne0;", ct(t), ws, NW);
    warp_inclusive_scan(c, op, 1, &t, &ws, "g_z%d_%d");
    be_line(b, "g_wsum0[g_lane] = %s;  /* inclusive over warps */", ws);
    be_line(b, "__syncwarp();");
    lookback(c, op, 1, &t, 1, 8, NW, false, 0);
    be_line(b, "if (g_lane == 0) {");
    be_line(b, "    g_ex_sh0 = %s;", ex);
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "/* phase 5: each item read again, its prefix (and the post) over its slot */");
    be_line(b, "const %s %s = g_warp > 0 ? g_wsum0[g_warp - 1] : g_ne0;", ct(t), wp);
    apply_op(c, op, &tex, (const char *const *)&wp, (const char *const *)&el, true);
    be_line(b, "const %s %s = g_ex_sh0;", ct(t), exs);
    apply_op(c, op, &pre, (const char *const *)&exs, (const char *const *)&tex, true);
    scan_bulk_items(c, k, pre, true);
    if (!persistent) { be_printf(b, "#endif\n"); }
    if (!persistent) {
        be_printf(b, "#if GPUC_SCAN_BULK_WSTORE_%s\n", k->name);
        be_line(b, "/* phase 6: each warp's part of the tile out by its own bulk store, as soon as");
        be_line(b, " * the warp has written it (no barrier) */");
        be_line(b, "if (g_bulk) {");
        be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
        be_line(b, "    gpuc_sb_fence();  /* this thread's writes before the bulk store reads them */");
        be_line(b, "    __syncwarp();");
        be_line(b, "    if (g_lane == 0) {");
        be_line(b, "        gpuc_sb_store(%s + g_base + g_warp * %du, g_st + g_warp * %du, %du);", out, 32 * I, 4 * 32 * I, 4 * 32 * I);
        be_line(b, "    }");
        be_printf(b, "#endif\n");
        be_line(b, "} else {");
        be_line(b, "    __syncthreads();");
        scan_bulk_thread_stores(c, k);
        be_line(b, "}");
        be_printf(b, "#else\n");
    }
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "gpuc_sb_fence();  /* these writes before the bulk store reads them */");
    be_printf(b, "#endif\n");
    be_line(b, "__syncthreads();");
    be_line(b, "/* phase 6: the tile out */");
    be_line(b, "if (g_bulk) {");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "    if (threadIdx.x == 0) {");
    be_line(b, "        gpuc_sb_store(%s + g_base, g_st, %du);", out, TB);
    be_line(b, "    }");
    be_printf(b, "#endif\n");
    be_line(b, "} else {");
    scan_bulk_thread_stores(c, k);
    be_line(b, "}");
    if (!persistent) { be_printf(b, "#endif\n"); }
    if (persistent) { be_line(b, "g_stage ^= 1u;"); }
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    if (!persistent) {
        be_printf(b, "#if GPUC_SCAN_BULK_WSTORE_%s\n", k->name);
        be_line(b, "if (g_lane == 0 && g_bulk_ok) {  /* every warp's store */");
        be_printf(b, "#else\n");
    }
    be_line(b, "if (threadIdx.x == 0 && g_bulk_ok) {");
    if (!persistent) { be_printf(b, "#endif\n"); }
    if (persistent) {
        be_line(b, "    gpuc_sb_store_done();  /* the block's shared memory outlives its bulk stores */");
    } else {
        be_line(b, "    gpuc_sb_store_read();  /* the block's shared memory outlives the bulk store's reads */");
    }
    be_line(b, "}");
    be_printf(b, "#endif\n");
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* ---- SCAN BULK 3: streaming, warp-specialized (sm_90) ----
 * The kernel <name>_stream, emitted beside mode 2's (its fallback), for the
 * kernels mode 2 takes; bench/try_scan_stream.cu (scan_ws) is its
 * prototype. A persistent grid of one block an SM (the ring takes 192 KiB)
 * takes tiles of SS_ITEMS items: tile t to block t % grid, its step t / grid
 * (static: every block is resident, so every predecessor of a tile is
 * running or done). The tiles go through a ring of SS_SLOTS slots of shared
 * memory, each with four mbarriers (full, pready, totready, done):
 *   producer   warp SS_CONSUMERS + SS_LOOKBACK + 1: lane 0 bulk-loads a
 *              tile into its slot (full); after done, it bulk-stores it, and
 *              reloads the slot once the store SS_PENDING behind has read it;
 *              the partial last tile, unaligned arrays and device code
 *              before sm_90 go through the warp's lanes instead;
 *   consumers  warps 0 .. SS_CONSUMERS - 1, each a contiguous part of the
 *              tile: the part's total to shared memory (pready); SS_LAG
 *              tiles later, from the warp's offset (totready), the part
 *              scanned in place (done);
 *   publisher  warp SS_CONSUMERS: the tile's aggregate (status 1; tile 0 its
 *              prefix, status 2) as soon as the parts' totals are in, by an
 *              atomic maximum of the packed word, then done (it has read the
 *              totals);
 *   look-back  the next SS_LOOKBACK warps, tiles in turn: the decoupled
 *              look-back (lookback, stream), the tile's prefix (status 2, an
 *              atomic maximum) and each consumer warp's offset (totready).
 * Everything combines in index order (the operator need not commute).
 * H200, bench/try_scan_stream.cu, inclusive i32 scan of 2^28: 524.5 us,
 * 0.966 of the copy rate, against mode 2's 617.7 us (0.82) with this
 * configuration (L2 hints off; 4 look-back warps or a hint gained nothing). */
#ifndef SS_LOOKBACK_WARPS  /* -DSS_LOOKBACK_WARPS=4 when building gpuc: a comparison (bench/try_variants.sh) */
#define SS_LOOKBACK_WARPS 2
#endif
#ifndef SS_RING_SLOTS  /* the same: 7 (the most an SM's 227 KiB holds) */
#define SS_RING_SLOTS 6
#endif
enum {
    SS_ITEMS = 8192,     /* a tile: 32 KiB */
    SS_CONSUMERS = 16,   /* consumer warps, SS_ITEMS / SS_CONSUMERS items each */
    SS_LOOKBACK = SS_LOOKBACK_WARPS,  /* look-back warps */
    SS_SLOTS = SS_RING_SLOTS,         /* ring slots */
    SS_LAG = 2,          /* tiles between a part's total and its scan */
    SS_PENDING = 1,      /* bulk stores that may be reading when a slot is reloaded */
    SS_THREADS = (SS_CONSUMERS + SS_LOOKBACK + 2) * 32,
    SS_PART = SS_ITEMS / SS_CONSUMERS,  /* a consumer warp's items */
    SS_VECTORS = SS_PART / 128,         /* 16-byte vectors a lane, per part */
    SS_RING = SS_SLOTS * SS_ITEMS * 4,  /* bytes of dynamic shared memory */
};
_Static_assert(SS_PART % 128 == 0, "whole 16-byte vectors a lane");
_Static_assert(SS_LAG + SS_PENDING < SS_SLOTS, "slots for the lag, the pending stores and the loads in flight");
_Static_assert(SS_CONSUMERS <= 32, "the consumers' totals in one warp");

/* Whether kernel k has a mode 3: mode 2's kernels, whose one 4-byte
 * component packs with its status in one 8-byte word. */
bool scan_stream_eligible(const IrKernel *k) {
    if (!scan_bulk_eligible(k)) { return false; }
    IrScalar t = k->stmt->scans[0].op->ptypes[0];
    return scan_word_bytes(&t, 1) == 8;
}

/* The mode 3 kernel's name. */
const char *scan_stream_name(CuEmit *c, const IrKernel *k) { return be_strf(&c->x, "%s_stream", k->name); }

/* Its threads: each warp's role follows from its index, the producer's last. */
int scan_stream_threads(void) { return SS_THREADS; }

/* The 32 bits u (an expression) as a value of the 4-byte type t, and back. */
static char *ss_from_bits(CuEmit *c, IrScalar t, const char *u) {
    return t == IR_F32 ? be_strf(&c->x, "__uint_as_float(%s)", u) : be_strf(&c->x, "(%s)%s", ct(t), u);
}
static char *ss_to_bits(CuEmit *c, IrScalar t, const char *v) {
    return t == IR_F32 ? be_strf(&c->x, "__float_as_uint(%s)", v) : be_strf(&c->x, "(uint32_t)%s", v);
}

/* The device helpers of mode 3, once per file: mbarriers with a count
 * (sm_80 has them; try_wait, the sink '_' and the proxy fences are sm_90's)
 * and bulk copies without L2 hints (sm_90; GPUC_SCAN_BULK_DEVICE). */
static void scan_stream_helpers(CuEmit *c) {
    be_printf(c->b, "#ifndef GPUC_SCAN_STREAM_HELPERS\n#define GPUC_SCAN_STREAM_HELPERS\n"
                    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
                    "#define GPUC_SCAN_STREAM_DEVICE 1  /* mbarriers (SCAN BULK 3; the bulk copies need sm_90) */\n"
                    "#else\n"
                    "#define GPUC_SCAN_STREAM_DEVICE 0\n"
                    "#endif\n"
                    "#if GPUC_SCAN_STREAM_DEVICE\n"
                    "/* an mbarrier completing when n arrivals (and the bytes announced) are in */\n"
                    "__device__ __forceinline__ void gpuc_ss_init(unsigned bar, unsigned n) {\n"
                    "    asm volatile(\"mbarrier.init.shared.b64 [%%0], %%1;\" :: \"r\"(bar), \"r\"(n) : \"memory\");\n"
                    "}\n"
                    "/* one arrival, releasing this thread's earlier writes to the waiters */\n"
                    "__device__ __forceinline__ void gpuc_ss_arrive(unsigned bar) {\n"
                    "#if GPUC_SCAN_BULK_DEVICE\n"
                    "    asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%%0];\" :: \"r\"(bar) : \"memory\");\n"
                    "#else\n"
                    "    asm volatile(\"{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%%0]; }\" :: \"r\"(bar) : \"memory\");\n"
                    "#endif\n"
                    "}\n"
                    "/* until the phase of the given parity has completed */\n"
                    "__device__ __forceinline__ void gpuc_ss_wait(unsigned bar, unsigned parity) {\n"
                    "    unsigned done;\n"
                    "    do {\n"
                    "#if GPUC_SCAN_BULK_DEVICE\n"
                    "        asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%%1], %%2; selp.u32 %%0, 1, 0, p; }\"\n"
                    "                     : \"=r\"(done) : \"r\"(bar), \"r\"(parity) : \"memory\");\n"
                    "#else\n"
                    "        asm volatile(\"{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%%1], %%2; selp.u32 %%0, 1, 0, p; }\"\n"
                    "                     : \"=r\"(done) : \"r\"(bar), \"r\"(parity) : \"memory\");\n"
                    "#endif\n"
                    "    } while (!done);\n"
                    "}\n"
                    "#endif\n"
                    "#if GPUC_SCAN_BULK_DEVICE\n"
                    "/* bytes from global src to shared dst (16-byte aligned, a multiple of 16), completing on bar;\n"
                    " * the fence orders the warp's earlier reads of dst (generic proxy) before the copy's writes */\n"
                    "__device__ __forceinline__ void gpuc_ss_load(unsigned dst, const void *src, unsigned bytes, unsigned bar) {\n"
                    "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
                    "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" :: \"r\"(bar), \"r\"(bytes) : \"memory\");\n"
                    "    asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%0], [%%1], %%2, [%%3];\"\n"
                    "                 :: \"r\"(dst), \"l\"(src), \"r\"(bytes), \"r\"(bar) : \"memory\");\n"
                    "}\n"
                    "/* bytes from shared src to global dst, as a bulk group */\n"
                    "__device__ __forceinline__ void gpuc_ss_store(void *dst, unsigned src, unsigned bytes) {\n"
                    "    asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group [%%0], [%%1], %%2;\\n\\tcp.async.bulk.commit_group;\"\n"
                    "                 :: \"l\"(dst), \"r\"(src), \"r\"(bytes) : \"memory\");\n"
                    "}\n"
                    "/* all but this thread's %d latest bulk stores have read their shared memory */\n"
                    "__device__ __forceinline__ void gpuc_ss_store_read(void) {\n"
                    "    asm volatile(\"cp.async.bulk.wait_group.read %d;\" ::: \"memory\");\n"
                    "}\n"
                    "#endif\n#endif\n", SS_PENDING, SS_PENDING);
}

/* The 32-bit shared address of mbarrier `bar` (g_full, ...) of slot s. */
static char *ss_bar(CuEmit *c, const char *bar, const char *s) { return be_strf(&c->x, "gpuc_smem32(&%s[%s])", bar, s); }

/* The producer's load of this block's tile number j (an expression) into
 * its slot: one bulk copy by lane 0, or (the partial last tile, unaligned
 * arrays, before sm_90) the warp's lanes, the neutral element past n. */
static void ss_load(CuEmit *c, IrScalar t, const char *in, const char *n, const char *j) {
    BeBuf *b = c->b;
    be_line(b, "{");
    b->indent++;
    be_line(b, "const int64_t g_lbase = (blockIdx.x + (%s) * g_grid) * %d;", j, SS_ITEMS);
    be_line(b, "const int g_ls = (int)((%s) %% %d);", j, SS_SLOTS);
    be_line(b, "const unsigned g_lslot = g_ring32 + (unsigned)g_ls * %du;", SS_ITEMS * 4);
    be_line(b, "if (g_bulk_ok && g_lbase + %d <= %s) {", SS_ITEMS, n);
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "    if (g_lane == 0) {");
    be_line(b, "        gpuc_ss_load(g_lslot, %s + g_lbase, %du, %s);", in, SS_ITEMS * 4, ss_bar(c, "g_full", "g_ls"));
    be_line(b, "    } else {");
    be_line(b, "        gpuc_ss_arrive(%s);  /* full counts the warp's 32 lanes */", ss_bar(c, "g_full", "g_ls"));
    be_line(b, "    }");
    be_printf(b, "#endif\n");
    be_line(b, "} else {");
    be_line(b, "    for (int g_u = (int)g_lane; g_u < %d; g_u += 32) {", SS_ITEMS);
    be_line(b, "        gpuc_sts_%s(g_lslot + 4u * (unsigned)g_u, g_lbase + g_u < %s ? %s[g_lbase + g_u] : g_ne0);", ir_scalar_name(t), n, in);
    be_line(b, "    }");
    be_line(b, "    gpuc_ss_arrive(%s);  /* each lane after its own writes (release) */", ss_bar(c, "g_full", "g_ls"));
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

/* A consumer warp's items of one 16-byte vector g_q (lane l: vector l +
 * 32 * g_v of its part), in order: g_a<c> the lane's inclusive values,
 * g_sc their last scanned across the warp's lanes. */
static void ss_lane_scan(CuEmit *c, IrOperator *op, IrScalar t) {
    BeBuf *b = c->b;
    const char *comp[4] = { "x", "y", "z", "w" };
    for (int q = 0; q < 4; q++) { be_line(b, "const %s g_x%d = %s;", ct(t), q, ss_from_bits(c, t, be_strf(&c->x, "g_q.%s", comp[q]))); }
    be_line(b, "const %s g_a0 = g_x0;", ct(t));
    for (int q = 1; q < 4; q++) {
        char *dst = be_strf(&c->x, "g_a%d", q), *a = be_strf(&c->x, "g_a%d", q - 1), *x = be_strf(&c->x, "g_x%d", q);
        apply_op(c, op, &dst, (const char *const *)&a, (const char *const *)&x, true);
    }
    be_line(b, "%s g_sc = g_a3;", ct(t));
    char *sc = "g_sc";
    warp_inclusive_scan(c, op, 1, &t, &sc, "g_y%d_%d");
}

/* The publisher warp's loop (SCAN BULK 3 and 3 WIDE): once tile g_j's
 * consumer warps' totals (`wtot`, a format of the component, [slot][warp])
 * are in, their inclusive scan; lane NC - 1 publishes the tile's aggregate
 * in `word`-byte words (status 1; tile 0 its inclusive prefix, 2: 8-byte
 * words by an atomic maximum, 16-byte words by a store) and then runs
 * `then` (a line: the barrier it arrives on); S: the ring's slots. */
static void ss_publisher(CuEmit *c, int S, IrOperator *ops, int nsc, const IrScalar *wt, int W, const char *wtot, int word, const char *then) {
    BeBuf *b = c->b;
    const int NC = SS_CONSUMERS;
    be_line(b, "for (int64_t g_j = 0; g_j < g_count; g_j++) {");
    b->indent++;
    be_line(b, "const int g_s = (int)(g_j %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_j / %d) & 1));", ss_bar(c, "g_pready", "g_s"), S);
    char **pw = names(c, "g_pw%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = g_lane < %du ? %s[g_s][g_lane] : g_ne%d;", ct(wt[j]), pw[j], NC, be_strf(&c->x, wtot, j), j); }
    warp_inclusive_scan(c, ops, nsc, wt, pw, "g_y%d_%d");
    be_line(b, "const int64_t g_tile = blockIdx.x + g_j * g_grid;");
    be_line(b, "if (g_lane == %d) {  /* the tile's aggregate */", NC - 1);
    b->indent++;
    be_line(b, "if (g_tile == 0) {");
    b->indent++;
    publish(c, word, wt, W, "g_tile", 2, pw, word == 8);
    b->indent--;
    be_line(b, "} else {");
    b->indent++;
    publish(c, word, wt, W, "g_tile", 1, pw, word == 8);
    b->indent--;
    be_line(b, "}");
    be_line(b, "%s", then);
    b->indent--;
    be_line(b, "}");
    free(pw);
    b->indent--;
    be_line(b, "}");
}

/* SCAN BULK 3's kernel (see above); emit_scan's parameters. */
static void scan_stream_kernel(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    IrOperator *op = &s->scans[0];
    IrScalar t = op->op->ptypes[0], to = s->outs[0]->elem;
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0])), *in = be_strf(&c->x, "%s", be_vname(ir_scan_copied_input(s))),
               *out = be_strf(&c->x, "%s", be_vname(s->outs[0]));
    const int NC = SS_CONSUMERS, S = SS_SLOTS;
    IrKernel ks = *k;
    ks.name = scan_stream_name(c, k);
    ks.block = SS_THREADS;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kp_add(c, &p, "unsigned long long *g_words", "g_words");
    kernel_comment(c, &ks);
    signature_min(c, &ks, &p, 1);
    be_line(b, "/* SCAN BULK 3: %d consumer warps, a publisher, %d look-back warps and a producer;", NC, SS_LOOKBACK);
    be_line(b, " * tiles of %d items through a ring of %d slots (lag %d, %d pending store) */", SS_ITEMS, S, SS_LAG, SS_PENDING);
    be_printf(b, "#if GPUC_SCAN_STREAM_DEVICE\n");
    be_line(b, "extern __shared__ __align__(128) unsigned char g_ring[];  /* %d bytes, the launcher's g_shared */", SS_RING);
    be_line(b, "__shared__ __align__(8) unsigned long long g_full[%d], g_pready[%d], g_totready[%d], g_done[%d];", S, S, S, S);
    be_line(b, "__shared__ %s g_wtot[%d][%d];  /* each consumer warp's total of its part */", ct(t), S, NC);
    be_line(b, "__shared__ %s g_woff[%d][%d];  /* the prefix before each consumer warp's part */", ct(t), S, NC);
    be_line(b, "const unsigned g_lane = threadIdx.x & 31, g_warp = threadIdx.x >> 5;");
    be_line(b, "const %s g_ne0 = %s;", ct(t), be_expr(&c->x, op->ne[0]));
    be_line(b, "const int64_t g_grid = gridDim.x;");
    be_line(b, "const int64_t g_ntiles = (%s + %d) / %d;", n, SS_ITEMS - 1, SS_ITEMS);
    be_line(b, "/* this block's tiles: blockIdx.x, + g_grid, + 2 g_grid, ... */");
    be_line(b, "const int64_t g_count = g_ntiles > blockIdx.x ? (g_ntiles - blockIdx.x + g_grid - 1) / g_grid : 0;");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "const bool g_bulk_ok = ((((uintptr_t)%s) | ((uintptr_t)%s)) & 15u) == 0u;  /* 16-byte aligned arrays */", in, out);
    be_printf(b, "#else\n");
    be_line(b, "const bool g_bulk_ok = false;  /* (before sm_90: through the producer warp's lanes) */");
    be_printf(b, "#endif\n");
    be_line(b, "if (threadIdx.x == 0) {");
    be_line(b, "    for (int g_s = 0; g_s < %d; g_s++) {", S);
    /* full: the producer warp's 32 lanes (lane 0's arrival announces a bulk
     * copy's bytes); totready: the look-back warp's lanes that write an offset.
     * Each writer arrives itself, so the barrier alone orders its writes
     * before the readers (compute-sanitizer's racecheck sees no other order) */
    be_line(b, "        gpuc_ss_init(%s, 32u);", ss_bar(c, "g_full", "g_s"));
    be_line(b, "        gpuc_ss_init(%s, %du);", ss_bar(c, "g_pready", "g_s"), NC);
    be_line(b, "        gpuc_ss_init(%s, %du);", ss_bar(c, "g_totready", "g_s"), NC);
    be_line(b, "        gpuc_ss_init(%s, %du);  /* the consumers' threads and the publisher */", ss_bar(c, "g_done", "g_s"), NC * 32 + 1);
    be_line(b, "    }");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");");
    be_printf(b, "#endif\n");
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    /* consumers */
    be_line(b, "if (g_warp < %du) {", NC);
    b->indent++;
    be_line(b, "/* a consumer: its part of tile g_j, and (lag %d) its part of tile g_j - %d scanned */", SS_LAG, SS_LAG);
    be_line(b, "for (int64_t g_j = 0; g_j < g_count + %d; g_j++) {", SS_LAG);
    b->indent++;
    be_line(b, "if (g_j < g_count) {");
    b->indent++;
    be_line(b, "const int g_s = (int)(g_j %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_j / %d) & 1));", ss_bar(c, "g_full", "g_s"), S);
    be_line(b, "const uint4 *const g_part = (const uint4 *)(g_ring + g_s * %d + g_warp * %du);", SS_ITEMS * 4, SS_PART * 4);
    be_line(b, "%s g_tot = g_ne0;", ct(t));
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_v = 0; g_v < %d; g_v++) {", SS_VECTORS);
    b->indent++;
    be_line(b, "const uint4 g_q = g_part[g_lane + 32 * g_v];");
    ss_lane_scan(c, op, t);
    be_line(b, "const %s g_vt = __shfl_sync(0xffffffffu, g_sc, 31);  /* the vector's 128 items */", ct(t));
    {
        char *tot = "g_tot", *vt = "g_vt";
        apply_op(c, op, &tot, (const char *const *)&tot, (const char *const *)&vt, false);
    }
    b->indent--;
    be_line(b, "}");
    be_line(b, "if (g_lane == 0) {");
    be_line(b, "    g_wtot[g_s][g_warp] = g_tot;");
    be_line(b, "    gpuc_ss_arrive(%s);", ss_bar(c, "g_pready", "g_s"));
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "if (g_j >= %d) {", SS_LAG);
    b->indent++;
    be_line(b, "const int64_t g_k = g_j - %d;", SS_LAG);
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_k / %d) & 1));", ss_bar(c, "g_totready", "g_s"), S);
    be_line(b, "%s g_carry = g_woff[g_s][g_warp];", ct(t));
    be_line(b, "uint4 *const g_part = (uint4 *)(g_ring + g_s * %d + g_warp * %du);", SS_ITEMS * 4, SS_PART * 4);
    be_line(b, "const int64_t g_first = (blockIdx.x + g_k * g_grid) * %d + g_warp * %d;  (void)g_first;", SS_ITEMS, SS_PART);
    be_line(b, "#pragma unroll");
    be_line(b, "for (int g_v = 0; g_v < %d; g_v++) {", SS_VECTORS);
    b->indent++;
    be_line(b, "uint4 g_q = g_part[g_lane + 32 * g_v];");
    ss_lane_scan(c, op, t);
    be_line(b, "%s g_el = gpuc_shfl_up(g_sc, 1);  /* the lanes before this one */", ct(t));
    be_line(b, "if (g_lane == 0) { g_el = g_ne0; }");
    {
        char *pre = "g_pre", *carry = "g_carry", *el = "g_el";
        apply_op(c, op, &pre, (const char *const *)&carry, (const char *const *)&el, true);
        const char *comp[4] = { "x", "y", "z", "w" };
        for (int q = 0; q < 4; q++) {
            char *e = be_strf(&c->x, "g_e%d", q);
            if (op->exclusive && q == 0) {
                be_line(b, "const %s %s = g_pre;", ct(t), e);
            } else {
                char *a = be_strf(&c->x, "g_a%d", op->exclusive ? q - 1 : q);
                apply_op(c, op, &e, (const char *const *)&pre, (const char *const *)&a, true);
            }
            const char *v = e;
            if (s->post) {
                be_line(b, "{");
                b->indent++;
                be_line(b, "const int64_t g_i = g_first + 4 * (g_lane + 32 * g_v) + %d;  (void)g_i;", q);
                c->x.idx[0] = "g_i";
                c->x.idx[1] = "g_i";
                const char *pr[2] = { 0 };
                const char *args[1] = { e };
                be_lambda(&c->x, s->post, args, pr);
                be_line(b, "g_q.%s = %s;", comp[q], ss_to_bits(c, to, pr[0]));
                b->indent--;
                be_line(b, "}");
            } else {
                be_line(b, "g_q.%s = %s;", comp[q], ss_to_bits(c, to, v));
            }
        }
    }
    be_line(b, "g_part[g_lane + 32 * g_v] = g_q;");
    be_line(b, "const %s g_vt = __shfl_sync(0xffffffffu, g_sc, 31);", ct(t));
    {
        char *carry = "g_carry", *vt = "g_vt";
        apply_op(c, op, &carry, (const char *const *)&carry, (const char *const *)&vt, false);
    }
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "gpuc_sb_fence();  /* these writes before the bulk store reads them */");
    be_printf(b, "#endif\n");
    be_line(b, "gpuc_ss_arrive(%s);", ss_bar(c, "g_done", "g_s"));
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    b->indent--;
    /* the publisher */
    be_line(b, "} else if (g_warp == %du) {", NC);
    b->indent++;
    be_line(b, "/* the publisher: each tile's aggregate (status 1; tile 0 its inclusive prefix, 2) */");
    ss_publisher(c, S, op, 1, &t, 1, "g_wtot", 8, be_strf(&c->x, "gpuc_ss_arrive(%s);  /* the warp has read the totals: the slot may be reloaded */", ss_bar(c, "g_done", "g_s")));
    b->indent--;
    /* the look-back warps */
    be_line(b, "} else if (g_warp <= %du) {", NC + SS_LOOKBACK);
    b->indent++;
    be_line(b, "/* a look-back warp: tiles g_warp - %d, + %d, ... of the block's */", NC + 1, SS_LOOKBACK);
    be_line(b, "for (int64_t g_k = (int64_t)g_warp - %d; g_k < g_count; g_k += %d) {", NC + 1, SS_LOOKBACK);
    b->indent++;
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_k / %d) & 1));", ss_bar(c, "g_pready", "g_s"), S);
    be_line(b, "%s g_lw = g_lane < %du ? g_wtot[g_s][g_lane] : g_ne0;", ct(t), NC);
    {
        char *lw = "g_lw";
        warp_inclusive_scan(c, op, 1, &t, &lw, "g_y%d_%d");
    }
    be_line(b, "%s g_wex = gpuc_shfl_up(g_lw, 1);  /* the parts before this lane's */", ct(t));
    be_line(b, "if (g_lane == 0) { g_wex = g_ne0; }");
    be_line(b, "const %s g_ta0_0 = __shfl_sync(0xffffffffu, g_lw, %d);  /* the tile's aggregate */", ct(t), NC - 1);
    be_line(b, "const int64_t g_tile = blockIdx.x + g_k * g_grid;");
    lookback(c, op, 1, &t, 1, 8, 0, true, 1);
    /* the look-back's window sums are complete in lane 0 alone (an ordered
     * shuffle-down reduction): every lane takes lane 0's prefix before the
     * consumer warps' offsets (without it, offsets 1..15 were wrong) */
    be_line(b, "g_ex0_0 = __shfl_sync(0xffffffffu, g_ex0_0, 0);  /* lane 0's prefix, to every lane */");
    be_line(b, "if (g_lane < %du) {", NC);
    b->indent++;
    {
        char *off = "g_off0", *ex = "g_ex0_0", *wex = "g_wex";
        apply_op(c, op, &off, (const char *const *)&ex, (const char *const *)&wex, true);
    }
    be_line(b, "g_woff[g_s][g_lane] = g_off0;");
    be_line(b, "gpuc_ss_arrive(%s);  /* each offset's lane after its write */", ss_bar(c, "g_totready", "g_s"));
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    b->indent--;
    /* the producer */
    be_line(b, "} else {");
    b->indent++;
    be_line(b, "/* the producer: the first %d tiles' loads, then each tile's store once it is", S);
    be_line(b, " * done, and a slot's reload once the store %d behind has read it */", SS_PENDING);
    be_line(b, "const unsigned g_ring32 = gpuc_smem32(g_ring);");
    be_line(b, "for (int64_t g_j = 0; g_j < %d && g_j < g_count; g_j++) {", S);
    b->indent++;
    ss_load(c, t, in, n, "g_j");
    b->indent--;
    be_line(b, "}");
    be_line(b, "for (int64_t g_k = 0; g_k < g_count; g_k++) {");
    b->indent++;
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_k / %d) & 1));", ss_bar(c, "g_done", "g_s"), S);
    be_line(b, "const int64_t g_base = (blockIdx.x + g_k * g_grid) * %d;", SS_ITEMS);
    be_line(b, "const unsigned g_slot = g_ring32 + (unsigned)g_s * %du;", SS_ITEMS * 4);
    be_line(b, "if (g_bulk_ok && g_base + %d <= %s) {", SS_ITEMS, n);
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "    if (g_lane == 0) {");
    be_line(b, "        gpuc_ss_store(%s + g_base, g_slot, %du);", out, SS_ITEMS * 4);
    be_line(b, "    }");
    be_printf(b, "#endif\n");
    be_line(b, "} else {");
    be_line(b, "    for (int g_u = (int)g_lane; g_u < %d && g_base + g_u < %s; g_u += 32) {", SS_ITEMS, n);
    be_line(b, "        %s[g_base + g_u] = gpuc_lds_%s(g_slot + 4u * (unsigned)g_u);", out, ir_scalar_name(to));
    be_line(b, "    }");
    be_line(b, "}");
    be_line(b, "const int64_t g_r = g_k - %d;  /* the slot to reload */", SS_PENDING);
    be_line(b, "if (g_r >= 0 && g_r + %d < g_count) {", S);
    b->indent++;
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "if (g_lane == 0 && g_bulk_ok) {");
    be_line(b, "    gpuc_ss_store_read();  /* tile g_r's store has read the slot */");
    be_line(b, "}");
    be_printf(b, "#endif\n");
    be_line(b, "__syncwarp();");
    ss_load(c, t, in, n, be_strf(&c->x, "g_r + %d", S));
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "if (g_lane == 0 && g_bulk_ok) {");
    be_line(b, "    gpuc_sb_store_done();  /* the block's shared memory outlives its bulk stores */");
    be_line(b, "}");
    be_printf(b, "#endif\n");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#else\n");
    be_line(b, "__trap();  /* not launched: the launcher takes mode 3 only where its ring fits (sm_90 on) */");
    be_printf(b, "#endif\n");
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}

/* SCAN BULK 3's launch settings, after mode 2's (its fallback): where a
 * block may opt into the ring and its barriers (sm_90 on; sm_80's 163 KiB
 * do not hold it), there is more than one tile and the device is not shared
 * through MPS (whose limits may leave part of the grid unable to start: the
 * static tile order would then hang; docs/reliability.md), g_stream, a grid of the blocks resident at once (one an
 * SM: the occupancy query counts no dynamic shared memory, so the ring's
 * bound is taken apart), never more than the tiles, and the ring. `when`:
 * a further condition (C, over the launcher's variables), or NULL. */
static void scan_stream_host_items(CuEmit *c, IrKernel *k, int items, int ring, int need, const char *when, const char *fallback) {
    BeBuf *b = c->b;
    const char *n = be_vname(k->stmt->w[0]);
    be_printf(b, "#if GPUC_SCAN_BULK_%s == 3\n", k->name);
    be_line(b, "int g_stream = 0;  /* SCAN BULK 3, else %s */", fallback);
    /* one tile or less: mode 2 (H100, session 10's call 7: 6.6-6.8 us at
     * 1024 items against 9.1-9.3 for mode 3, whose pipeline a single tile
     * does not fill; from two tiles, 16384 items, mode 3 was faster, 6.3-7.0
     * against 7.6-7.7) */
    be_line(b, "if (gpuc_h_shared_max(gpuc_h) >= %d && %s > %d && !gpuc_h_mps(gpuc_h)%s%s) {", need, n, items, when ? " && " : "", when ? when : "");
    b->indent++;
    be_line(b, "int g_fit = 1;");
    be_line(b, "GPUC_TRY(gpuc_h_resident(gpuc_h, GPUC_KERNEL(%s), %d, &g_fit));", scan_stream_name(c, k), SS_THREADS);
    be_line(b, "if (g_fit > gpuc_h_shared_max(gpuc_h) / %d) {", need);
    be_line(b, "    g_fit = gpuc_h_shared_max(gpuc_h) / %d;  /* the rings an SM holds */", need);
    be_line(b, "}");
    be_line(b, "const int64_t g_wave = (int64_t)gpuc_h_sms(gpuc_h) * g_fit;");
    be_line(b, "const int64_t g_tiles = (%s + %d) / %d;", n, items - 1, items);
    be_line(b, "g_grid = (unsigned)(g_tiles < g_wave ? g_tiles : g_wave);");
    be_line(b, "g_shared = %du;", ring);
    be_line(b, "g_stream = 1;");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#endif\n");
}

static void scan_stream_host(CuEmit *c, IrKernel *k) {
    scan_stream_host_items(c, k, SS_ITEMS, SS_RING, SS_RING + 2048, NULL, "mode 2");  /* the ring, the block's barriers and totals, the 1 KiB it reserves */
}

/* The status words an eligible scan's launcher allocates and zeroes (an
 * expression over g_ntiles, the tiles of k's own tile, and n): one a tile
 * and mode 1's tile counter, or one a tile of mode 3's smaller tiles; for
 * SCAN BULK 3 WIDE, two 8-byte halves a tile (scan_wide_words). */
const char *scan_bulk_words(CuEmit *c, const IrKernel *k, const char *n) {
    if (scan_wide_eligible(k)) { return scan_wide_words(c, k, n); }
    if (!scan_stream_eligible(k)) { return "g_ntiles + 1"; }
    return be_strf(&c->x, "(g_ntiles + 1 > (%s + %d) / %d ? g_ntiles + 1 : (%s + %d) / %d)", n, SS_ITEMS - 1, SS_ITEMS, n, SS_ITEMS - 1, SS_ITEMS);
}

/* An eligible scan kernel: the bulk variants (mode 3 beside mode 2, mode 1
 * where two stages fit), or (#else) emit_scan's. */
static void emit_scan_bulk(CuEmit *c, IrKernel *k) {
    scan_bulk_macros(c, k);
    scan_bulk_helpers(c);
    if (scan_stream_eligible(k)) {
        /* mode 3's kernel beside mode 2's, which stays its fallback where the ring does not fit */
        scan_stream_helpers(c);
        be_printf(c->b, "#if GPUC_SCAN_BULK_%s == 3\n", k->name);
        scan_stream_kernel(c, k);
        be_printf(c->b, "#endif\n");
        be_expr_reset(&c->x);  /* each kernel's temporaries (a neutral element's) are its own */
    }
    if (!scan_bulk_default_fits(k)) {
        scan_bulk_kernel(c, k, false);  /* mode 2 alone */
        return;
    }
    if (scan_bulk_two_stages(k)) {
        be_printf(c->b, "#if GPUC_SCAN_BULK_%s == 1\n", k->name);
        scan_bulk_kernel(c, k, true);
        be_expr_reset(&c->x);
        be_printf(c->b, "#elif GPUC_SCAN_BULK_%s\n", k->name);
    } else {
        be_printf(c->b, "#if GPUC_SCAN_BULK_%s\n", k->name);
    }
    scan_bulk_kernel(c, k, false);
    be_expr_reset(&c->x);
    be_printf(c->b, "#else\n");
    scan_bulk_emitting_default = true;
    emit_scan(c, k);
    scan_bulk_emitting_default = false;
    be_printf(c->b, "#endif\n");
}


/* ---- SCAN BULK 3 WIDE: the streaming kernel for 16-byte look-back words ----
 * The kernel <name>_stream (SCAN BULK 3's warps, ring, barriers and tile
 * order) for the scans whose look-back word is 16 bytes (scan_word_bytes:
 * two 4-byte components or one 8-byte one) and whose components are each an
 * input array read as it is at index i (a zip of arrays: the affine
 * recurrence of bench/programs/scan.gdsl; i64 and f64 scans), with a post or
 * not, no mapped output. Its fallback is emit_scan's kernel (emitted beside
 * it, not under #if), taken where mode 3 is off (GPUC_SCAN_BULK other than 3)
 * or does not fit (as scan_stream_host).
 *   slot       a tile's items (sw_shape: 4096), the tile's segment
 *              of each input array one after the other (structure of
 *              arrays, 8 bytes an item in all); output j (as wide an item as input j's) is written
 *              over input j's segment, item by item, by the lane that read
 *              the item;
 *   producer   lane j bulk-loads input j's segment (one cp.async.bulk an
 *              array, its own expect_tx: the slot's full barrier completes
 *              when all 32 lanes arrived and every array's bytes landed) and
 *              bulk-stores output j's (its own bulk group, so that its
 *              wait_group.read counts one store a tile); the partial last
 *              tile and unaligned arrays through the warp's lanes;
 *   consumers  each lane takes a run of consecutive 16-byte vectors of
 *              each input (4 items of a 4-byte array, 2 of an 8-byte array
 *              a vector; sw_run_load), scans them in order, then across the
 *              warp: a reduction for the part's total (first pass), a scan
 *              after the part's prefix (second pass, lag tiles later);
 *   publisher  each tile's aggregate (status 1; tile 0 its prefix, 2) as
 *              soon as the parts' totals are in, then an arrival on the
 *              slot's pubd barrier;
 *   look-back  no 128-bit atomic maximum: lane 0 waits on pubd before it
 *              stores the tile's prefix (lookback, stream 3), so the later
 *              store is the prefix and the status never goes down (the
 *              publisher reads the totals before pubd, hence before the
 *              prefix, the offsets and done: done counts the consumers'
 *              threads alone).
 * First form (H200, 2026-11-28, bench/last_run/issue16-session11/call3):
 * correct (2003 GPU test blocks, compute-sanitizer, 1000 random programs)
 * but 6-8% slower than emit_scan's kernel at 2^24..2^28 (recurrence 1032.7
 * against 964.2 us, i64 scans 1272-1288 against 1202-1209): the look-back
 * warps published the aggregates themselves, each when it started its tile,
 * so a tile's successors waited for it; the publisher warp now does it as
 * soon as the totals are in, as in SCAN BULK 3. Second form (call4, the
 * kernel of 1af4054): correct again (2003 GPU test blocks, 23 sanitizer
 * runs, 650 random programs), the recurrence at 2^28 942.4 against 966.1
 * us (0.975x, 0.806 of the copy rate, target 0.85), but 1.02-1.09x at
 * 2^20..2^24, and the i64 scans 1.009-1.14x emit_scan's time at every
 * size: off by default then. Third form (2026-11-29, bench/last_run/
 * issue16-session18): the same kernel with a ring per input shape
 * (then: a lag of 3 or 6 tiles gives a tile's look-back that much
 * longer before its consumers wait on it; ncu, call 2: a third of the
 * consumers' stall samples waited on the look-back's offsets with a lag of
 * 2), on by default from 2^26 items (scan_wide_macros): call 5, the
 * recurrence at 2^28 906.6-909.5 us (0.840 of the copy rate, 0.322x CUB's
 * time), the i64 scans 1168.2-1172.9 (0.869-0.870, 0.953x CUB's); below
 * 2^26 emit_scan's kernel (unchanged); the recurrence's ring at 7 slots,
 * 0.908 (call 7). Fourth form (session 19): each consumer lane takes a run
 * of consecutive vectors (sw_run_load), and one shape for every input, the
 * recurrence's (sw_shape). */
#ifndef SW_TILE_ITEMS  /* -DSW_TILE_ITEMS=N (and -DSW_LAG_TILES=L) when building gpuc: every kernel's, a comparison (bench/try_variants.sh) */
#define SW_TILE_ITEMS 0
#endif
#ifndef SW_LAG_TILES
#define SW_LAG_TILES 0
#endif
enum {
    SW_MIN_ITEMS = 1 << 26,  /* the default (GPUC_SCAN_WIDE 2) takes the kernel from 2^26 items on */
    SW_BLOCK_SHARED = 227 * 1024,  /* sm_90's shared memory a block may opt into, static and dynamic */
};

/* A wide kernel's tiles and ring: tiles of 4096 items (32 KiB) in as many
 * slots as an sm_90 block's 227 KiB hold beside their barriers, totals and
 * offsets (7), with a lag of 3 tiles, for one 8-byte input and for two
 * 4-byte inputs. H200, 2026-11-29, at 2^28 (bench/last_run/
 * issue16-session18, calls 3, 4 and 7, against emit_scan's kernel): the
 * recurrence 0.952-0.954x its time (0.819-0.833 of the copy rate) with 6
 * slots, 0.87x (0.908) with 7, 7 slots and a lag of 4 0.962x the 6 slots'
 * time, 1.055x with tiles of 2048 and a lag of 4 or 6; a lag of 2
 * 0.968-0.977x; a lag of 4 in 6 slots (one slot left to load) 1.40x; 3 or 4
 * look-back warps slower everywhere; the look-back's backoff (0, 30, 100
 * ns) no different. The i64 sum (session 19, calls 1 and 2, against the
 * shape it had then, tiles of 2048 items in 12 slots with a lag of 6,
 * 0.871-0.873): 7 slots of 4096 and a lag of 3 0.986x its time at 2^28
 * (0.883) and 0.976x at 2^26, a lag of 2 1.082x, 6 slots 1.067x, 13 slots
 * of 2048 0.993-0.998x, a lag of 4 1.021x. */
typedef struct {
    int items;  /* a tile's items, 8 bytes each over the inputs */
    int part;   /* a consumer warp's items */
    int slot;   /* bytes a slot */
    int slots;  /* slots in the ring */
    int ring;   /* the ring's bytes: dynamic shared memory */
    int need;   /* the shared memory the launcher asks a block to have */
    int lag;    /* tiles between a part's total and its scan */
} SwShape;

static SwShape sw_shape(const IrKernel *k) {
    int W;
    IrScalar *wt = scan_types(k->stmt, &W);
    int per_slot = 5 * 8;  /* a slot's static shared memory: five barriers, each component's totals and offsets */
    for (int j = 0; j < W; j++) { per_slot += 2 * SS_CONSUMERS * ir_scalar_size(wt[j]); }
    free(wt);
    SwShape h;
    h.items = SW_TILE_ITEMS ? SW_TILE_ITEMS : 4096;
    h.lag = SW_LAG_TILES ? SW_LAG_TILES : 3;
    h.part = h.items / SS_CONSUMERS;
    h.slot = h.items * 8;
    h.slots = (SW_BLOCK_SHARED - 64) / (h.slot + per_slot);  /* as many as fit beside the static shared memory (and 64 bytes of alignment) */
    h.ring = h.slots * h.slot;
    /* the ring after the block's static shared memory, which ends on the
     * ring's 128-byte alignment (ptxas: 2176 bytes for 7 slots of an i64 scan's 2072) */
    h.need = h.ring + (h.slots * per_slot + 127) / 128 * 128 + 64;
    assert(h.lag + SS_PENDING < h.slots);                     /* slots for the lag, the pending stores and the loads in flight */
    assert(h.part % 128 == 0);                                /* whole 16-byte vectors a lane, 2 or 4 items each */
    return h;
}

/* The input array that component j of the scan of s copies (its map result
 * is a parameter), else NULL. */
static IrValue *sw_input(const IrStmt *s, int j) {
    const IrExpr *r = s->map && j < s->map->nres ? s->map->res[j] : NULL;
    if (!r || r->kind != IR_E_PARAM || r->index < 0 || r->index >= s->nins) { return NULL; }
    return s->ins[r->index];
}

bool scan_wide_eligible(const IrKernel *k) {
    if (k->kind != IR_K_SCAN || scan_bulk_eligible(k)) { return false; }
    IrStmt *s = k->stmt;
    if (s->kind != IR_S_SCREMA || s->sharded || s->rank != 1 || s->nreds != 0 || s->nscans < 1 || !s->map) { return false; }
    if (ir_stmt_nmapped(s) != 0) { return false; }
    int W;
    IrScalar *wt = scan_types(s, &W);
    bool ok = scan_word_bytes(wt, W) == 16 && s->map->nres == W;
    int bytes = 0;
    for (int j = 0; ok && j < W; j++) {
        const IrValue *in = sw_input(s, j);
        int z = ir_scalar_size(wt[j]);
        ok = in && in->elem == wt[j] && in->rank == 1 && (z == 4 || z == 8);
        bytes += z;
    }
    ok = ok && bytes == 8;
    /* output j over input j's segment: as wide an item */
    const int nout = s->post ? s->post->nres : W;
    ok = ok && nout >= 1 && nout <= W && s->nouts == nout;
    for (int j = 0; ok && j < nout; j++) { ok = s->outs[j]->rank == 1 && ir_scalar_size(s->outs[j]->elem) == ir_scalar_size(wt[j]); }
    free(wt);
    return ok;
}

/* The status words' 8-byte halves: two a tile, of k's own tiles or of mode
 * 3's, whichever are more. */
static const char *scan_wide_words(CuEmit *c, const IrKernel *k, const char *n) {
    const int items = sw_shape(k).items;
    return be_strf(&c->x, "2 * (g_ntiles > (%s + %d) / %d ? g_ntiles : (%s + %d) / %d)", n, items - 1, items, n, items - 1, items);
}

/* The macros that select mode 3 for kernel k or not (3: the stream kernel
 * where it fits; anything else: emit_scan's kernel). GPUC_SCAN_WIDE 2, the
 * default, takes it from SW_MIN_ITEMS items on; 1 (GPUC_SCAN_WIDE=1 in
 * gpuc's environment, or -DGPUC_SCAN_WIDE=1) wherever it fits (more than
 * one tile: the GPU tests); 0 never. H200 (2026-11-29, bench/last_run/
 * issue16-session18, calls 3 and 4), the stream kernel's time over
 * emit_scan's: the recurrence 0.952-0.954x at 2^28, 0.960-0.964x at 2^26,
 * 0.998-1.000x at 2^24, 1.06x at 2^20; the i64 sum 0.967-0.971x at 2^28,
 * 0.989-0.992x at 2^26, 1.04x at 2^24, 1.14-1.20x at 2^20. */
static void scan_wide_macros(CuEmit *c, const IrKernel *k) {
    const char *env = getenv("GPUC_SCAN_BULK"), *wide = getenv("GPUC_SCAN_WIDE");
    int mode = env && strlen(env) == 1 && env[0] >= '0' && env[0] <= '3' ? env[0] - '0' : 3;
    int wide_mode = wide && strcmp(wide, "1") == 0 ? 1 : wide && strcmp(wide, "0") == 0 ? 0 : 2;
    be_printf(c->b, "#ifndef GPUC_SCAN_BULK\n"
                    "#define GPUC_SCAN_BULK %d  /* eligible 4-byte scans through Hopper bulk copies: 1 persistent, 2 one tile a block, 3 streaming (backend/cuda/scan.c, grep \"SCAN BULK\") */\n"
                    "#endif\n"
                    "#ifndef GPUC_SCAN_WIDE\n"
                    "#define GPUC_SCAN_WIDE %d  /* 16-byte-word scans (GPUC_SCAN_BULK 3): 2 the streaming kernel from %d items on, 1 wherever it fits, 0 emit_scan's kernel (backend/cuda/scan.c, grep \"SCAN BULK 3 WIDE\") */\n"
                    "#endif\n"
                    "#ifndef GPUC_SCAN_BULK_%s\n#define GPUC_SCAN_BULK_%s (GPUC_SCAN_WIDE && GPUC_SCAN_BULK == 3 ? 3 : 2)\n#endif\n",
              mode, wide_mode, SW_MIN_ITEMS, k->name, k->name);
}

/* Item u of the 16-byte vector q (a uint4 of input j, of type t) as a value. */
static char *sw_item(CuEmit *c, IrScalar t, const char *q, int u) {
    const char *comp[4] = { "x", "y", "z", "w" };
    if (ir_scalar_size(t) == 4) { return ss_from_bits(c, t, be_strf(&c->x, "%s.%s", q, comp[u])); }
    const char *w = be_strf(&c->x, "(((unsigned long long)%s.%s << 32) | (unsigned long long)%s.%s)", q, comp[2 * u + 1], q, comp[2 * u]);
    return t == IR_F64 ? be_strf(&c->x, "__longlong_as_double((long long)%s)", w) : be_strf(&c->x, "(%s)%s", ct(t), w);
}

/* A consumer lane's run: its NV vectors of each input are consecutive,
 * items lane * NV * V .. + NV * V - 1 of its warp's part, so that a part
 * takes one warp reduction (its total) and one warp scan. (The first form
 * took vectors lane, lane + 32, ...: a warp scan and a broadcast a vector
 * in each pass, four times the shuffles, which for 8-byte items are two a
 * value. H200, 2026-11-29, bench/last_run/issue16-session19 call 1, at
 * 2^28: this form takes 0.996x the first's time for the recurrence and
 * 0.995x for the i64 sum, 0.906 and 0.873 of the copy rate: the shuffles
 * were not what holds the kernel back.) The lane loads its vectors in a
 * rotated order (g_rot) so that the 8 lanes of each 128-byte phase of a
 * 16-byte access touch 8 different bank groups; g_p<p>_<j> is its vector
 * at position p, g_x<k>_<j> its items and g_a<k>_<j> their inclusive scan
 * in the lane. */
static void sw_run_load(CuEmit *c, IrOperator *ops, int nsc, const IrScalar *wt, int W, int V, int NV) {
    BeBuf *b = c->b;
    const int per_phase = 8 / NV > 0 ? 8 / NV : 1;  /* lanes a phase whose vectors share a rotation */
    be_line(b, "const unsigned g_rot = %s;  /* this lane's first vector loaded */", NV == 1 ? "0u" : be_strf(&c->x, "(g_lane / %du) %% %du", per_phase, NV));
    for (int v = 0; v < NV; v++) {
        for (int j = 0; j < W; j++) { be_line(b, "const uint4 g_r%d_%d = g_io%d[g_lane * %du + (%du + g_rot) %% %du];", v, j, j, NV, v, NV); }
    }
    for (int p = 0; p < NV; p++) {
        for (int j = 0; j < W; j++) {
            char *sel = be_strf(&c->x, "g_r%d_%d", p, j);
            for (int r = 1; r < NV; r++) { sel = be_strf(&c->x, "g_rot == %du ? g_r%d_%d : %s", r, (p - r + NV) % NV, j, sel); }
            be_line(b, "const uint4 g_p%d_%d = %s;  /* position %d */", p, j, sel, p);
        }
    }
    const int K = NV * V;
    for (int k = 0; k < K; k++) {
        for (int j = 0; j < W; j++) { be_line(b, "const %s g_x%d_%d = %s;", ct(wt[j]), k, j, sw_item(c, wt[j], be_strf(&c->x, "g_p%d_%d", k / V, j), k % V)); }
    }
    char **a0 = names(c, "g_a%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "const %s %s = g_x0_%d;", ct(wt[j]), a0[j], j); }
    free(a0);
    for (int k = 1; k < K; k++) {
        char **dst = names(c, "g_a%d_%d", k, W), **a = names(c, "g_a%d_%d", k - 1, W), **x = names(c, "g_x%d_%d", k, W);
        apply_ops(c, ops, nsc, dst, a, x, true);
        free(dst); free(a); free(x);
    }
}

/* A consumer's end of tile g_k in slot g_s: its writes ordered before the
 * bulk stores that read them, then its arrival on done. */
static void sw_tile_done(CuEmit *c) {
    BeBuf *b = c->b;
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "gpuc_sb_fence();  /* these writes before the bulk stores read them */");
    be_printf(b, "#endif\n");
    be_line(b, "gpuc_ss_arrive(%s);", ss_bar(c, "g_done", "g_s"));
}

/* A consumer's first pass over its part (g_warp) of the tile in slot g_s:
 * its total, by a warp reduction in lane order, into g_wtot<j>[g_s][g_warp];
 * then the part's arrival on pready. */
static void sw_run_total(CuEmit *c, const SwShape *h, const int *off, IrOperator *ops, int nsc, const IrScalar *wt, int W, int V, int NV) {
    BeBuf *b = c->b;
    for (int j = 0; j < W; j++) {
        be_line(b, "const uint4 *const g_io%d = (const uint4 *)(g_ring + g_s * %d + %d + g_warp * %du);  /* input %d's part */", j, h->slot, off[j], h->part * ir_scalar_size(wt[j]), j);
    }
    sw_run_load(c, ops, nsc, wt, W, V, NV);
    char **t = names(c, "g_t%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = g_a%d_%d;", ct(wt[j]), t[j], NV * V - 1, j); }
    warp_shuffle_fold(c, ops, nsc, wt, t, "g_y%d_%d", false);  /* the part's total, into lane 0 */
    be_line(b, "if (g_lane == 0) {");
    for (int j = 0; j < W; j++) { be_line(b, "    g_wtot%d[g_s][g_warp] = %s;", j, t[j]); }
    be_line(b, "    gpuc_ss_arrive(%s);", ss_bar(c, "g_pready", "g_s"));
    be_line(b, "}");
    free(t);
}

/* A consumer's second pass over its part (g_warp) of tile g_k in slot
 * g_s: its items scanned after the part's prefix (g_carry<j>, from
 * g_woff<j>), posted, and written over the vectors they came from. */
static void sw_run_scan(CuEmit *c, const SwShape *h, const int *off, IrStmt *s, const IrScalar *wt, int W, int V, int NV) {
    BeBuf *b = c->b;
    IrOperator *ops = s->scans;
    const int nsc = s->nscans, K = NV * V;
    const int nout = s->post ? s->post->nres : W;
    for (int j = 0; j < W; j++) { be_line(b, "%s g_carry0_%d = g_woff%d[g_s][g_warp];", ct(wt[j]), j, j); }
    for (int j = 0; j < W; j++) {
        be_line(b, "uint4 *const g_io%d = (uint4 *)(g_ring + g_s * %d + %d + g_warp * %du);  /* input %d's part%s */", j, h->slot, off[j], h->part * ir_scalar_size(wt[j]), j, j < nout ? be_strf(&c->x, ", output %d's over it", j) : "");
    }
    be_line(b, "const int64_t g_first = (blockIdx.x + g_k * g_grid) * %d + g_warp * %d;  (void)g_first;", h->items, h->part);
    sw_run_load(c, ops, nsc, wt, W, V, NV);
    char **sc = names(c, "g_sc%d_%d", 0, W), **el = names(c, "g_el%d_%d", 0, W), **pre = names(c, "g_pre%d_%d", 0, W);
    char **carry = names(c, "g_carry%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = g_a%d_%d;", ct(wt[j]), sc[j], K - 1, j); }
    warp_inclusive_scan(c, ops, nsc, wt, sc, "g_y%d_%d");
    for (int j = 0; j < W; j++) {
        be_line(b, "%s %s = gpuc_shfl_up(%s, 1);  /* the lanes before this one */", ct(wt[j]), el[j], sc[j]);
        be_line(b, "if (g_lane == 0) { %s = g_ne%d; }", el[j], j);
    }
    apply_ops(c, ops, nsc, pre, carry, el, true);
    for (int p = 0; p < NV; p++) {
        for (int j = 0; j < nout; j++) { be_line(b, "uint4 g_o%d_%d;", p, j); }
    }
    const char *comp[4] = { "x", "y", "z", "w" };
    for (int k = 0; k < K; k++) {
        const int p = k / V, u = k % V;
        be_line(b, "{ /* item %d of the lane's %d */", k, K);
        b->indent++;
        char **e = names(c, "g_e%d_%d", k, W);
        for (int q = 0, at = 0; q < nsc; q++) {
            if (ops[q].exclusive && k == 0) {
                for (int j = 0; j < ops[q].arity; j++) { be_line(b, "const %s %s = %s;  (void)%s;", ct(wt[at + j]), e[at + j], pre[at + j], e[at + j]); }
            } else {
                char **a = names(c, "g_a%d_%d", ops[q].exclusive ? k - 1 : k, W);
                const int ar = ops[q].arity;
                const char **args = calloc((size_t)ar * 2 + 1, sizeof *args), **res = calloc((size_t)ar + 1, sizeof *res);
                for (int j = 0; j < ar; j++) { args[j] = pre[at + j]; args[ar + j] = a[at + j]; }
                be_lambda(&c->x, ops[q].op, args, res);
                for (int j = 0; j < ar; j++) { be_line(b, "const %s %s = %s;", ct(wt[at + j]), e[at + j], res[j]); }
                free(args); free(res); free(a);
            }
            at += ops[q].arity;
        }
        for (int j = 0; j < W; j++) { be_line(b, "(void)%s;  /* a post may not read it */", e[j]); }
        const char **val = calloc((size_t)nout + 1, sizeof *val);
        if (s->post) {
            be_line(b, "const int64_t g_i = g_first + (int64_t)g_lane * %d + %d;  (void)g_i;", K, k);
            c->x.idx[0] = "g_i";
            c->x.idx[1] = "g_i";
            be_lambda(&c->x, s->post, (const char *const *)e, val);
        } else {
            for (int j = 0; j < nout; j++) { val[j] = e[j]; }
        }
        for (int j = 0; j < nout; j++) {
            IrScalar to = s->outs[j]->elem;
            if (ir_scalar_size(to) == 4) {
                be_line(b, "g_o%d_%d.%s = %s;", p, j, comp[u], ss_to_bits(c, to, val[j]));
            } else {
                const char *bits = to == IR_F64 ? be_strf(&c->x, "(unsigned long long)__double_as_longlong(%s)", val[j]) : be_strf(&c->x, "(unsigned long long)%s", val[j]);
                be_line(b, "const unsigned long long g_ob%d = %s;", j, bits);
                be_line(b, "g_o%d_%d.%s = (unsigned)g_ob%d;", p, j, comp[2 * u], j);
                be_line(b, "g_o%d_%d.%s = (unsigned)(g_ob%d >> 32);", p, j, comp[2 * u + 1], j);
            }
        }
        free(val);
        free(e);
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "/* each output's vectors over the input vectors this lane read (the same items, the same rotated order) */");
    for (int v = 0; v < NV; v++) {
        for (int j = 0; j < nout; j++) {
            char *sel = be_strf(&c->x, "g_o%d_%d", v, j);
            for (int r = 1; r < NV; r++) { sel = be_strf(&c->x, "g_rot == %du ? g_o%d_%d : %s", r, (v + r) % NV, j, sel); }
            be_line(b, "g_io%d[g_lane * %du + (%du + g_rot) %% %du] = %s;", j, NV, v, NV, sel);
        }
    }
    free(sc); free(el); free(pre); free(carry);
}

/* The producer's load of this block's tile number j (an expression) into
 * its slot: lane i bulk-loads input i's segment, or (the partial last tile,
 * unaligned arrays, before sm_90) the warp's lanes store every input's
 * items, the neutral elements past n. */
static void sw_load(CuEmit *c, const SwShape *h, int W, const IrScalar *wt, char **in, const int *off, const char *n, const char *j) {
    BeBuf *b = c->b;
    be_line(b, "{");
    b->indent++;
    be_line(b, "const int64_t g_lbase = (blockIdx.x + (%s) * g_grid) * %d;", j, h->items);
    be_line(b, "const int g_ls = (int)((%s) %% %d);", j, h->slots);
    be_line(b, "const unsigned g_lslot = g_ring32 + (unsigned)g_ls * %du;", h->slot);
    be_line(b, "if (g_bulk_ok && g_lbase + %d <= %s) {", h->items, n);
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    b->indent++;
    be_line(b, "/* one bulk copy an input array, each announcing its bytes on the slot's full barrier */");
    for (int i = 0; i < W; i++) {
        be_line(b, "%sif (g_lane == %du) {", i ? "} else " : "", i);
        be_line(b, "    gpuc_ss_load(g_lslot + %du, %s + g_lbase, %du, %s);", off[i], in[i], h->items * ir_scalar_size(wt[i]), ss_bar(c, "g_full", "g_ls"));
    }
    be_line(b, "} else {");
    be_line(b, "    gpuc_ss_arrive(%s);  /* full counts the warp's 32 lanes */", ss_bar(c, "g_full", "g_ls"));
    be_line(b, "}");
    b->indent--;
    be_printf(b, "#endif\n");
    be_line(b, "} else {");
    b->indent++;
    be_line(b, "for (int g_u = (int)g_lane; g_u < %d; g_u += 32) {", h->items);
    be_line(b, "    const bool g_live = g_lbase + g_u < %s;", n);
    for (int i = 0; i < W; i++) {
        be_line(b, "    gpuc_sts_%s(g_lslot + %du + %du * (unsigned)g_u, g_live ? %s[g_lbase + g_u] : g_ne%d);", ir_scalar_name(wt[i]), off[i], ir_scalar_size(wt[i]), in[i], i);
    }
    be_line(b, "}");
    be_line(b, "gpuc_ss_arrive(%s);  /* each lane after its own writes (release) */", ss_bar(c, "g_full", "g_ls"));
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

/* SCAN BULK 3 WIDE's kernel (see above); emit_scan's parameters. */
static void scan_wide_kernel(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    const SwShape h = sw_shape(k);
    IrStmt *s = k->stmt;
    IrOperator *ops = s->scans;
    const int nsc = s->nscans;
    int W;
    IrScalar *wt = scan_types(s, &W);
    const int nout = s->post ? s->post->nres : W;
    const int NC = SS_CONSUMERS, S = h.slots;
    const int V = 16 / ir_scalar_size(wt[0]);  /* items a lane a step: 4 (two 4-byte inputs) or 2 (one 8-byte input) */
    const int NV = h.part / (32 * V);
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0]));
    char **in = calloc((size_t)W + 1, sizeof *in), **out = calloc((size_t)nout + 1, sizeof *out);
    int off[8] = { 0 };
    for (int j = 0; j < W; j++) {
        in[j] = be_strf(&c->x, "%s", be_vname(sw_input(s, j)));
        if (j + 1 < W) { off[j + 1] = off[j] + h.items * ir_scalar_size(wt[j]); }
    }
    for (int j = 0; j < nout; j++) { out[j] = be_strf(&c->x, "%s", be_vname(s->outs[j])); }
    IrKernel ks = *k;
    ks.name = scan_stream_name(c, k);
    ks.block = SS_THREADS;
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kp_add(c, &p, "unsigned long long *g_words", "g_words");
    kernel_comment(c, &ks);
    signature_min(c, &ks, &p, 1);
    be_line(b, "/* SCAN BULK 3 WIDE: %d consumer warps, a publisher (aggregates), %d look-back warps", NC, SS_LOOKBACK);
    be_line(b, " * (prefixes, after the publisher's store; 16-byte words) and a producer; tiles of %d items,", h.items);
    be_line(b, " * one segment an input array, through a ring of %d slots (lag %d, %d pending store) */", S, h.lag, SS_PENDING);
    be_printf(b, "#if GPUC_SCAN_STREAM_DEVICE\n");
    be_line(b, "extern __shared__ __align__(128) unsigned char g_ring[];  /* %d bytes, the launcher's g_shared */", h.ring);
    be_line(b, "__shared__ __align__(8) unsigned long long g_full[%d], g_pready[%d], g_totready[%d], g_done[%d], g_pubd[%d];", S, S, S, S, S);
    for (int j = 0; j < W; j++) {
        be_line(b, "__shared__ %s g_wtot%d[%d][%d];  /* each consumer warp's total of its part, component %d */", ct(wt[j]), j, S, NC, j);
        be_line(b, "__shared__ %s g_woff%d[%d][%d];  /* the prefix before each consumer warp's part */", ct(wt[j]), j, S, NC);
    }
    be_line(b, "const unsigned g_lane = threadIdx.x & 31, g_warp = threadIdx.x >> 5;");
    for (int q = 0, at = 0; q < nsc; q++) {
        for (int j = 0; j < ops[q].arity; j++, at++) { be_line(b, "const %s g_ne%d = %s;", ct(wt[at]), at, be_expr(&c->x, ops[q].ne[j])); }
    }
    be_line(b, "const int64_t g_grid = gridDim.x;");
    be_line(b, "const int64_t g_ntiles = (%s + %d) / %d;", n, h.items - 1, h.items);
    be_line(b, "/* this block's tiles: blockIdx.x, + g_grid, + 2 g_grid, ... */");
    be_line(b, "const int64_t g_count = g_ntiles > blockIdx.x ? (g_ntiles - blockIdx.x + g_grid - 1) / g_grid : 0;");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    {
        char *al = be_strf(&c->x, "%s", "");
        for (int j = 0; j < W; j++) { al = be_strf(&c->x, "%s%s((uintptr_t)%s)", al, j ? " | " : "", in[j]); }
        for (int j = 0; j < nout; j++) { al = be_strf(&c->x, "%s | ((uintptr_t)%s)", al, out[j]); }
        be_line(b, "const bool g_bulk_ok = ((%s) & 15u) == 0u;  /* 16-byte aligned arrays */", al);
    }
    be_printf(b, "#else\n");
    be_line(b, "const bool g_bulk_ok = false;  /* (before sm_90: through the producer warp's lanes) */");
    be_printf(b, "#endif\n");
    be_line(b, "if (threadIdx.x == 0) {");
    be_line(b, "    for (int g_s = 0; g_s < %d; g_s++) {", S);
    be_line(b, "        gpuc_ss_init(%s, 32u);", ss_bar(c, "g_full", "g_s"));
    be_line(b, "        gpuc_ss_init(%s, %du);", ss_bar(c, "g_pready", "g_s"), NC);
    be_line(b, "        gpuc_ss_init(%s, %du);", ss_bar(c, "g_totready", "g_s"), NC);
    be_line(b, "        gpuc_ss_init(%s, %du);  /* the consumers' threads */", ss_bar(c, "g_done", "g_s"), NC * 32);
    be_line(b, "        gpuc_ss_init(%s, 1u);  /* the publisher's store of the tile's aggregate */", ss_bar(c, "g_pubd", "g_s"));
    be_line(b, "    }");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");");
    be_printf(b, "#endif\n");
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    /* consumers */
    be_line(b, "if (g_warp < %du) {", NC);
    b->indent++;
    be_line(b, "/* a consumer: its part of tile g_j, and (lag %d) its part of tile g_j - %d scanned */", h.lag, h.lag);
    be_line(b, "for (int64_t g_j = 0; g_j < g_count + %d; g_j++) {", h.lag);
    b->indent++;
    be_line(b, "if (g_j < g_count) {");
    b->indent++;
    be_line(b, "const int g_s = (int)(g_j %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_j / %d) & 1));", ss_bar(c, "g_full", "g_s"), S);
    sw_run_total(c, &h, off, ops, nsc, wt, W, V, NV);
    b->indent--;
    be_line(b, "}");
    be_line(b, "if (g_j >= %d) {", h.lag);
    b->indent++;
    be_line(b, "const int64_t g_k = g_j - %d;", h.lag);
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_k / %d) & 1));", ss_bar(c, "g_totready", "g_s"), S);
    sw_run_scan(c, &h, off, s, wt, W, V, NV);
    sw_tile_done(c);
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    b->indent--;
    /* the publisher: each tile's aggregate as soon as its parts' totals are
     * in (status 1; tile 0 its prefix, 2), then pubd, on which the tile's
     * look-back warp waits before it stores the prefix: 16-byte words have
     * no atomic maximum, so the two stores are ordered through the block */
    be_line(b, "} else if (g_warp == %du) {", NC);
    b->indent++;
    be_line(b, "/* the publisher: each tile's aggregate (status 1; tile 0 its inclusive prefix, 2), then pubd */");
    ss_publisher(c, S, ops, nsc, wt, W, "g_wtot%d", 16, be_strf(&c->x, "gpuc_ss_arrive(%s);  /* after the store: the look-back's prefix comes later */", ss_bar(c, "g_pubd", "g_s")));
    b->indent--;
    /* the look-back warps */
    be_line(b, "} else if (g_warp <= %du) {", NC + SS_LOOKBACK);
    b->indent++;
    be_line(b, "/* a look-back warp: tiles g_warp - %d, + %d, ... of the block's */", NC + 1, SS_LOOKBACK);
    be_line(b, "for (int64_t g_k = (int64_t)g_warp - %d; g_k < g_count; g_k += %d) {", NC + 1, SS_LOOKBACK);
    b->indent++;
    be_line(b, "const int g_sl = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_k / %d) & 1));", ss_bar(c, "g_pready", "g_sl"), S);
    char **lw = names(c, "g_lw%d_%d", 0, W), **wex = names(c, "g_wex%d_%d", 0, W), **ex = names(c, "g_ex%d_%d", 0, W), **offs = names(c, "g_off%d_%d", 0, W);
    for (int j = 0; j < W; j++) { be_line(b, "%s %s = g_lane < %du ? g_wtot%d[g_sl][g_lane] : g_ne%d;", ct(wt[j]), lw[j], NC, j, j); }
    warp_inclusive_scan(c, ops, nsc, wt, lw, "g_y%d_%d");
    for (int j = 0; j < W; j++) {
        be_line(b, "%s %s = gpuc_shfl_up(%s, 1);  /* the parts before this lane's */", ct(wt[j]), wex[j], lw[j]);
        be_line(b, "if (g_lane == 0) { %s = g_ne%d; }", wex[j], j);
    }
    for (int j = 0; j < W; j++) { be_line(b, "const %s g_ta0_%d = __shfl_sync(0xffffffffu, %s, %d);  /* the tile's aggregate */", ct(wt[j]), j, lw[j], NC - 1); }
    be_line(b, "const int64_t g_tile = blockIdx.x + g_k * g_grid;");
    be_line(b, "const unsigned g_pubd_parity = (unsigned)((g_k / %d) & 1);  /* the phase of pubd the prefix waits for */", S);
    lookback(c, ops, nsc, wt, W, 16, 0, true, 3);
    for (int j = 0; j < W; j++) { be_line(b, "%s = __shfl_sync(0xffffffffu, %s, 0);  /* lane 0's prefix, to every lane */", ex[j], ex[j]); }
    be_line(b, "if (g_lane < %du) {", NC);
    b->indent++;
    apply_ops(c, ops, nsc, offs, ex, wex, true);
    for (int j = 0; j < W; j++) { be_line(b, "g_woff%d[g_sl][g_lane] = %s;", j, offs[j]); }
    be_line(b, "gpuc_ss_arrive(%s);  /* each offset's lane after its writes */", ss_bar(c, "g_totready", "g_sl"));
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    b->indent--;
    /* the producer */
    be_line(b, "} else {");
    b->indent++;
    be_line(b, "/* the producer: the first %d tiles' loads, then each tile's stores once it is", S);
    be_line(b, " * done (lane j: output j's), and a slot's reload once the stores %d behind have read it */", SS_PENDING);
    be_line(b, "const unsigned g_ring32 = gpuc_smem32(g_ring);");
    be_line(b, "for (int64_t g_j = 0; g_j < %d && g_j < g_count; g_j++) {", S);
    b->indent++;
    sw_load(c, &h, W, wt, in, off, n, "g_j");
    b->indent--;
    be_line(b, "}");
    be_line(b, "for (int64_t g_k = 0; g_k < g_count; g_k++) {");
    b->indent++;
    be_line(b, "const int g_s = (int)(g_k %% %d);", S);
    be_line(b, "gpuc_ss_wait(%s, (unsigned)((g_k / %d) & 1));", ss_bar(c, "g_done", "g_s"), S);
    be_line(b, "const int64_t g_base = (blockIdx.x + g_k * g_grid) * %d;", h.items);
    be_line(b, "const unsigned g_slot = g_ring32 + (unsigned)g_s * %du;", h.slot);
    be_line(b, "if (g_bulk_ok && g_base + %d <= %s) {", h.items, n);
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    for (int j = 0; j < nout; j++) {
        be_line(b, "    if (g_lane == %du) {", j);
        be_line(b, "        gpuc_ss_store(%s + g_base, g_slot + %du, %du);", out[j], off[j], h.items * ir_scalar_size(s->outs[j]->elem));
        be_line(b, "    }");
    }
    be_printf(b, "#endif\n");
    be_line(b, "} else {");
    be_line(b, "    for (int g_u = (int)g_lane; g_u < %d && g_base + g_u < %s; g_u += 32) {", h.items, n);
    for (int j = 0; j < nout; j++) {
        IrScalar to = s->outs[j]->elem;
        be_line(b, "        %s[g_base + g_u] = gpuc_lds_%s(g_slot + %du + %du * (unsigned)g_u);", out[j], ir_scalar_name(to), off[j], ir_scalar_size(to));
    }
    be_line(b, "    }");
    be_line(b, "}");
    be_line(b, "const int64_t g_r = g_k - %d;  /* the slot to reload */", SS_PENDING);
    be_line(b, "if (g_r >= 0 && g_r + %d < g_count) {", S);
    b->indent++;
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "if (g_lane < %du && g_bulk_ok) {", nout);
    be_line(b, "    gpuc_ss_store_read();  /* tile g_r's store of this lane's output has read the slot */");
    be_line(b, "}");
    be_printf(b, "#endif\n");
    be_line(b, "__syncwarp();");
    sw_load(c, &h, W, wt, in, off, n, be_strf(&c->x, "g_r + %d", S));
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#if GPUC_SCAN_BULK_DEVICE\n");
    be_line(b, "if (g_lane < %du && g_bulk_ok) {", nout);
    be_line(b, "    gpuc_sb_store_done();  /* the block's shared memory outlives its bulk stores */");
    be_line(b, "}");
    be_printf(b, "#endif\n");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "#else\n");
    be_line(b, "__trap();  /* not launched: the launcher takes mode 3 only where its ring fits (sm_90 on) */");
    be_printf(b, "#endif\n");
    b->indent = 0;
    be_printf(b, "}\n\n");
    free(lw); free(wex); free(ex); free(offs);
    free(in); free(out); free(wt);
    kp_free(&p);
}

/* SCAN BULK 3 WIDE's launch settings: g_grid and g_shared for emit_scan's
 * kernel, then, where mode 3 is on and fits (as scan_stream_host: sm_90's
 * opt-in shared memory, more than one tile, no MPS), g_stream, the grid and
 * the ring. */
void scan_wide_host(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    scan_wide_macros(c, k);
    be_printf(b, "#if GPUC_SCAN_BULK_%s == 3\n", k->name);
    be_line(b, "unsigned g_grid = (unsigned)g_ntiles, g_shared = 0u;  /* set where mode 3 is taken */");
    be_printf(b, "#endif\n");
    const char *when = be_strf(&c->x, "(GPUC_SCAN_WIDE == 1 || %s >= %d)", be_vname(k->stmt->w[0]), SW_MIN_ITEMS);
    const SwShape h = sw_shape(k);
    scan_stream_host_items(c, k, h.items, h.ring, h.need, when, "emit_scan's kernel");
}

/* A SCAN BULK 3 WIDE kernel: the stream kernel (#if mode 3), then
 * emit_scan's, its fallback. */
static void emit_scan_wide(CuEmit *c, IrKernel *k) {
    scan_wide_macros(c, k);
    scan_bulk_helpers(c);
    scan_stream_helpers(c);
    be_printf(c->b, "#if GPUC_SCAN_BULK_%s == 3\n", k->name);
    scan_wide_kernel(c, k);
    be_printf(c->b, "#endif\n");
    be_expr_reset(&c->x);  /* the stream kernel's temporaries (a neutral element's) are out of scope */
    scan_bulk_emitting_default = true;
    emit_scan(c, k);
    scan_bulk_emitting_default = false;
}


/* ---- filter: the same look-back over counts, kept values staged in order ---- */

/* Shared staging of kept values of type t for a tile of `items` items: the
 * tile's bytes plus 16, so that the aligned 16-byte reads of phase 5 may
 * run past the last kept value (grep "FILTER WRITE"). */
static int filter_staging_bytes(IrScalar t, int items) { return ir_scalar_size(t) * items + 16; }

/* Phase 5 of a filter for one output: the tile's cnt kept values, in order
 * in the staging array g_keep<j> (of type t), go to out[g_dst ..] with
 * consecutive threads on consecutive values (full 32-byte sectors but for the
 * run's two ends). Values of 4 or 8 bytes go as 32-bit words: a head of
 * words up to the first 16-byte boundary of the destination, then 16-byte
 * stores, each built from two aligned 16-byte shared loads rotated by the
 * head (the same rotation for the whole block, so no bank conflicts and no
 * divergence), then a tail of words. Other sizes go one value a thread.
 * grep "FILTER WRITE" */
static void filter_write(CuEmit *c, int B, int j, IrScalar t, const char *out) {
    BeBuf *b = c->b;
    int size = ir_scalar_size(t);
    if (size != 4 && size != 8) {
        be_line(b, "for (uint32_t g_q = threadIdx.x; g_q < g_cnt; g_q += %du) {", B);
        be_line(b, "    %s[g_dst + g_q] = g_keep%d[g_q];", out, j);
        be_line(b, "}");
        return;
    }
    be_line(b, "{ /* output %d: FILTER WRITE in 32-bit words */", j);
    b->indent++;
    be_line(b, "uint32_t *const g_ow = (uint32_t *)(%s + g_dst);", out);
    be_line(b, "const uint32_t *const g_kw = (const uint32_t *)g_keep%d;", j);
    be_line(b, "const uint32_t g_nw = g_cnt * %du;  /* words to write */", size / 4);
    be_line(b, "uint32_t g_hw = (uint32_t)((16u - ((uintptr_t)g_ow & 15u)) & 15u) >> 2;  /* head words */");
    be_line(b, "if (g_hw > g_nw) {");
    be_line(b, "    g_hw = g_nw;");
    be_line(b, "}");
    be_line(b, "if (threadIdx.x < g_hw) {");
    be_line(b, "    g_ow[threadIdx.x] = g_kw[threadIdx.x];");
    be_line(b, "}");
    be_line(b, "const uint32_t g_nv = (g_nw - g_hw) >> 2;  /* 16-byte stores */");
    be_line(b, "const uint4 *const g_ka = (const uint4 *)(g_kw + (g_hw & ~3u));");
    be_line(b, "uint4 *const g_ov = (uint4 *)(g_ow + g_hw);");
    be_line(b, "const uint32_t g_rot = g_hw & 3u;  /* the same for the whole block */");
    be_line(b, "for (uint32_t g_q = threadIdx.x; g_q < g_nv; g_q += %du) {", B);
    b->indent++;
    be_line(b, "const uint4 g_a = g_ka[g_q];");
    be_line(b, "uint4 g_r = g_a;");
    be_line(b, "if (g_rot != 0u) {");
    b->indent++;
    be_line(b, "const uint4 g_c = g_ka[g_q + 1];");
    be_line(b, "if (g_rot == 1u) {");
    be_line(b, "    g_r = make_uint4(g_a.y, g_a.z, g_a.w, g_c.x);");
    be_line(b, "} else if (g_rot == 2u) {");
    be_line(b, "    g_r = make_uint4(g_a.z, g_a.w, g_c.x, g_c.y);");
    be_line(b, "} else {");
    be_line(b, "    g_r = make_uint4(g_a.w, g_c.x, g_c.y, g_c.z);");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "g_ov[g_q] = g_r;");
    b->indent--;
    be_line(b, "}");
    be_line(b, "const uint32_t g_tw = g_hw + 4u * g_nv;  /* the tail from here */");
    be_line(b, "if (g_tw + threadIdx.x < g_nw) {");
    be_line(b, "    g_ow[g_tw + threadIdx.x] = g_kw[g_tw + threadIdx.x];");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

/* A filter kernel: per tile (one block, B threads x I items),
 *   1  coalesced loads and the map: warp w takes the tile's items w * 32 * I
 *      .. (w + 1) * 32 * I - 1 (filter_phase1), keep flags as mask bits, kept
 *      values in registers;
 *   2  each warp's count of kept items to shared memory; barrier;
 *   3  every warp reads all the warps' counts: its own offset in the tile and
 *      the tile's count, which lane 0 of warp 0 publishes at once (status 1,
 *      or 2 for tile 0), before anything else, so a successor's look-back
 *      need not wait for this tile's compaction;
 *   4  every warp scatters its kept values, in order, into the shared
 *      staging (ballots: copy u of lane l follows the warp's kept items of
 *      copies before u and those of lanes before l), then warp 0 runs the
 *      decoupled look-back (u32 counts packed with their status in 8-byte
 *      words) while the others wait at the barrier;
 *   5  the tile's kept values go out as one run, consecutive threads on
 *      consecutive values (filter_write); the last tile writes the count. */
void emit_filter(CuEmit *c, IrKernel *k) {
    BeBuf *b = c->b;
    IrStmt *s = k->stmt;
    int B = k->block, I = k->items, NW = B / 32;
    int nv = s->nouts - 1;  /* kept value arrays; outs[nv] is the count */
    const char *n = be_strf(&c->x, "%s", be_vname(s->w[0]));
    KParams p = { 0 };
    stmt_params(c, s, &p);
    kp_add(c, &p, "unsigned long long *g_words", "g_words");
    int smem = 0;
    for (int j = 0; j < nv; j++) { smem += filter_staging_bytes(s->outs[j]->elem, B * I); }
    /* the blocks per SM: the kept values' registers plus 16 a thread (48 for
     * f32 at 256 x 32: 5 blocks of 256, as the registers alone would give
     * before phase 5 was staged; without the bound ptxas took 58, 4 blocks;
     * the 8 bytes it spills at 48 are in the last tile's path), and no
     * more than the staging lets in (227 KiB an SM, 1 KiB reserved a block) */
    int vregs = 16;
    bool words = true;  /* values of 1 or 2 bytes: no bound (bool at 5 blocks spills 28 bytes) */
    for (int j = 0; j < nv; j++) {
        vregs += I * ((ir_scalar_size(s->outs[j]->elem) + 3) / 4);
        words = words && ir_scalar_size(s->outs[j]->elem) >= 4;
    }
    int min_blocks = words ? 65536 / (B * vregs) : 0;
    if (min_blocks > 227 * 1024 / (smem + 1024)) { min_blocks = 227 * 1024 / (smem + 1024); }
    if (min_blocks > 2048 / B) { min_blocks = 2048 / B; }  /* threads an SM (sm_80, sm_90) */
    if (min_blocks > 32) { min_blocks = 32; }               /* blocks an SM */
    kernel_comment(c, k);
    signature_min(c, k, &p, min_blocks);
    be_line(b, "/* tile of %d threads x %d items; %d bytes of shared staging for the kept values */", B, I, smem);
    for (int j = 0; j < nv; j++) {
        be_line(b, "__shared__ __align__(16) %s g_keep%d[%d];", ct(s->outs[j]->elem), j, filter_staging_bytes(s->outs[j]->elem, B * I) / ir_scalar_size(s->outs[j]->elem));
    }
    be_line(b, "__shared__ uint32_t g_wsum[%d];", NW);
    be_line(b, "__shared__ int64_t g_dst_sh;");
    be_line(b, "const unsigned g_lane = threadIdx.x & 31, g_warp = threadIdx.x >> 5;");
    be_line(b, "/* the tile is the block's index: NVIDIA GPUs start blocks in index order, so");
    be_line(b, " * every predecessor is running or done (CUB's decoupled look-back relies on it too) */");
    be_line(b, "const int64_t g_tile = blockIdx.x;");
    be_line(b, "const int64_t g_base = g_tile * %d;", B * I);
    be_line(b, "/* phase 1: coalesced loads and the map; keep flags in g_bits, kept values in registers */");
    for (int u = 0; u < I; u++) {
        for (int j = 0; j < nv; j++) { be_line(b, "%s g_v%d_%d = (%s)0;", ct(s->outs[j]->elem), j, u, ct(s->outs[j]->elem)); }
    }
    be_line(b, "%s g_bits = 0u;", I > 32 ? "uint64_t" : "uint32_t");
    be_line(b, "const int64_t g_seg = g_base + (int64_t)g_warp * %d + g_lane;  /* the warp's run of %d items */", 32 * I, 32 * I);
    be_line(b, "if (g_base + %d <= %s) {", B * I, n);
    b->indent++;
    be_line(b, "/* a full tile: no bound checks */");
    filter_phase1(c, k, true, nv);
    b->indent--;
    be_line(b, "} else {");
    b->indent++;
    be_line(b, "/* the last tile: items past n are not kept */");
    filter_phase1(c, k, false, nv);
    b->indent--;
    be_line(b, "}");
    be_line(b, "/* phase 2: the warp's count of kept items (butterfly), one per warp to shared memory */");
    be_line(b, "uint32_t g_wc = %s(g_bits);", I > 32 ? "__popcll" : "__popc");
    be_line(b, "for (int g_off = 16; g_off > 0; g_off >>= 1) {");
    be_line(b, "    g_wc += __shfl_xor_sync(0xffffffffu, g_wc, g_off);");
    be_line(b, "}");
    be_line(b, "if (g_lane == 0) {");
    be_line(b, "    g_wsum[g_warp] = g_wc;");
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "/* phase 3: each warp's offset in the tile and the tile's count, in every warp */");
    be_line(b, "uint32_t g_wi = g_lane < %du ? g_wsum[g_lane] : 0u;  /* inclusive over warps */", NW);
    be_line(b, "for (int g_off = 1; g_off < %d; g_off <<= 1) {", NW);
    be_line(b, "    const uint32_t g_y = __shfl_up_sync(0xffffffffu, g_wi, g_off);");
    be_line(b, "    if (g_lane >= (unsigned)g_off) {");
    be_line(b, "        g_wi += g_y;");
    be_line(b, "    }");
    be_line(b, "}");
    be_line(b, "const uint32_t g_cnt = __shfl_sync(0xffffffffu, g_wi, %d);  /* kept in the tile */", NW - 1);
    be_line(b, "const uint32_t g_wp = __shfl_sync(0xffffffffu, g_wi, g_warp) - g_wc;  /* kept before this warp */");
    be_line(b, "if (threadIdx.x == 0) {");
    be_line(b, "    /* status 2 (inclusive prefix) for tile 0, else 1 (the tile's own count) */");
    be_line(b, "    gpuc_st_word(g_words + g_tile, ((g_tile == 0 ? 2ull : 1ull) << 32) | g_cnt);");
    be_line(b, "}");
    be_line(b, "/* phase 4: kept values, in order, into the staging: copy u of lane l follows the");
    be_line(b, " * warp's kept items of copies before u and those of lanes before l in copy u */");
    be_line(b, "{");
    b->indent++;
    be_line(b, "const unsigned g_lt = (1u << g_lane) - 1u;  /* the lanes before this one */");
    be_line(b, "uint32_t g_run = g_wp;");
    for (int u = 0; u < I; u++) {
        be_line(b, "{");
        b->indent++;
        be_line(b, "const unsigned g_m = __ballot_sync(0xffffffffu, (g_bits >> %d) & 1u);", u);
        be_line(b, "if ((g_bits >> %d) & 1u) {", u);
        for (int j = 0; j < nv; j++) { be_line(b, "    g_keep%d[g_run + __popc(g_m & g_lt)] = g_v%d_%d;", j, j, u); }
        be_line(b, "}");
        be_line(b, "g_run += __popc(g_m);");
        b->indent--;
        be_line(b, "}");
    }
    b->indent--;
    be_line(b, "}");
    be_line(b, "/* the look-back: warp 0, 32 predecessors at a time (status 0 none yet, 1 a");
    be_line(b, " * count, 2 an inclusive prefix, packed with the u32 value in one 8-byte word);");
    be_line(b, " * lane l looks at tile g_j - l, lane 0 the nearest predecessor */");
    be_line(b, "if (g_warp == 0) {");
    b->indent++;
    be_line(b, "uint32_t g_ex = 0u;  /* kept before this tile (u32, as the words hold) */");
    be_line(b, "for (int64_t g_j = g_tile - 1; g_j >= 0; g_j -= 32) {");
    b->indent++;
    be_line(b, "const int64_t g_idx = g_j - (int64_t)g_lane;");
    be_line(b, "/* (lanes before tile 0 read nothing and count as a prefix of 0) */");
    wait_status_word(b);
    be_line(b, "const unsigned g_pmask = __ballot_sync(0xffffffffu, (g_w >> 32) == 2);");
    be_line(b, "const int g_stop = g_pmask ? __ffs(g_pmask) - 1 : 32;  /* nearest lane with a prefix */");
    be_line(b, "uint32_t g_pv = (int)g_lane > g_stop ? 0u : (uint32_t)g_w;");
    be_line(b, "for (int g_off = 16; g_off > 0; g_off >>= 1) {");
    be_line(b, "    g_pv += __shfl_xor_sync(0xffffffffu, g_pv, g_off);");
    be_line(b, "}");
    be_line(b, "g_ex += g_pv;");
    be_line(b, "if (g_pmask) {");
    be_line(b, "    break;");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "if (g_lane == 0) {");
    be_line(b, "    if (g_tile > 0) {");
    be_line(b, "        gpuc_st_word(g_words + g_tile, (2ull << 32) | (g_ex + g_cnt));");
    be_line(b, "    }");
    be_line(b, "    g_dst_sh = (int64_t)g_ex;");
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "__syncthreads();");
    be_line(b, "/* phase 5: the tile's kept values out as one run, after the kept values of all");
    be_line(b, " * earlier tiles */");
    be_line(b, "const int64_t g_dst = g_dst_sh;");
    for (int j = 0; j < nv; j++) { filter_write(c, B, j, s->outs[j]->elem, be_vname(s->outs[j])); }
    be_line(b, "if (g_base + %d >= %s && threadIdx.x == 0) {", B * I, n);
    be_line(b, "    *%s_out = g_dst + (int64_t)g_cnt;  /* the last tile knows the total */", be_vname(s->outs[nv]));
    be_line(b, "}");
    b->indent = 0;
    be_printf(b, "}\n\n");
    kp_free(&p);
}
