/* emit_c.c: the reference C99 backend.
 *
 * Every statement of the fused IR becomes a plain loop in index order: scans
 * and integer reductions combine left to right, so this backend's result is
 * *the* meaning of a program; the CUDA backend must match it bit for bit on
 * integers and within the documented tolerance on floats.  Reductions whose
 * operator takes floats are summed pairwise (see "cascade" below), still in
 * order, so that the reference is the more accurate side.
 * Output: the prelude, one `int gpuc_entry_NAME(...)` per entry (arrays
 * in as const pointers, results out through pointers, array results
 * malloc'ed for the caller), and under GPUC_MAIN a text main().
 */
#include "backend.h"
#include "gpuc_comm_vtable.inc"  /* comm_vtable_text: the GPUC_COMM_VTABLE block of runtime/gpuc_comm.h (backend/CMakeLists.txt) */

#include <stdlib.h>
#include <string.h>

typedef struct {
    BeBuf *b;
    BeExprCtx x;
    IrEntry *e;
    IrModule *m;
    bool shard;         /* emitting gpuc_shard_NAME: the entry after ir_shard (docs/sharding.md) */
} CEmit;

static void shard_scan_prefix(CEmit *c, IrStmt *s, char ***sacc);
static void shard_combine_reductions(CEmit *c, IrStmt *s, int first_out);
static const char *shard_row_index(CEmit *c, IrStmt *s);
static void shard_combine_columns(CEmit *c, IrStmt *s, const char *cols);

static const char *ct(IrScalar t) { return ir_scalar_ctype(t); }

/* Element count of an array value as a C expression. */
static const char *count_of(CEmit *c, const IrValue *v) {
    if (v->rank == 1) { return be_strf(&c->x, "%s", be_vname(v->dims[0])); }
    char d0[96];
    snprintf(d0, sizeof d0, "%s", be_vname(v->dims[0]));
    return be_strf(&c->x, "(%s * %s)", d0, be_vname(v->dims[1]));
}

static void alloc_array(CEmit *c, IrValue *v, const char *count) {
    be_line(c->b, "%s *%s = (%s *)gpuc_alloc((size_t)(%s) * sizeof(%s));", ct(v->elem), be_vname(v), ct(v->elem), count, ct(v->elem));
}

/* Parameter names p0.. for the map lambda, loaded from the inputs at `at`. */
static const char **load_params(CEmit *c, IrStmt *s, const char *at) {
    const char **p = calloc((size_t)s->nins + 1, sizeof *p);
    for (int i = 0; i < s->nins; i++) {
        char *n = be_strf(&c->x, "x%d", i);
        be_line(c->b, "const %s %s = %s[%s];  (void)%s;", ct(s->ins[i]->elem), n, be_vname(s->ins[i]), at, n);
        p[i] = n;
    }
    return p;
}

/* dst[0..arity) = op(a, b): a is the left operand */
static void apply_op(CEmit *c, IrOperator *op, char *const *dst, char *const *a, const char *const *b) {
    const char **args = calloc((size_t)op->arity * 2 + 1, sizeof *args);
    const char **res = calloc((size_t)op->arity + 1, sizeof *res);
    for (int k = 0; k < op->arity; k++) { args[k] = a[k]; args[op->arity + k] = b[k]; }
    be_lambda(&c->x, op->op, args, res);
    /* assign through temporaries: later results may read earlier operands */
    if (op->arity > 1) {
        for (int k = 0; k < op->arity; k++) {
            char *t = be_strf(&c->x, "t%d", c->x.ntmp++);
            be_line(c->b, "const %s %s = %s;", ct(op->op->ptypes[k]), t, res[k]);
            res[k] = t;
        }
    }
    for (int k = 0; k < op->arity; k++) { be_line(c->b, "%s = %s;", dst[k], res[k]); }
    free(args);
    free(res);
}

/* acc[0..arity) = op(acc, x) */
static void combine(CEmit *c, IrOperator *op, char **acc, const char **x) { apply_op(c, op, acc, acc, x); }

static char **declare_accs(CEmit *c, IrOperator *op, const char *prefix, int idx) {
    char **acc = calloc((size_t)op->arity + 1, sizeof *acc);
    for (int k = 0; k < op->arity; k++) {
        acc[k] = be_strf(&c->x, "%s%d_%d", prefix, idx, k);
        be_line(c->b, "%s %s = %s;", ct(op->op->ptypes[k]), acc[k], be_expr(&c->x, op->ne[k]));
    }
    return acc;
}

/* ---- cascade: pairwise summation of float reductions ----
 *
 * A sequential f32 sum of n values has a relative error growing like n * eps
 * (1e-4 and worse at 2^24 elements), so reductions whose operator takes
 * floats run in blocks of CASC_BLOCK elements: each block is reduced left to
 * right from the neutral element, and the blocks' partials are combined as a
 * binary tree.  A block's partial is pushed on a stack and merged with equal-
 * sized neighbours like a binary counter (after block b, as many merges as b
 * has trailing zero bits), so the stack holds at most log2(blocks) + 1
 * partials; at the end it is folded right to left.  Every combine is
 * op(left, right) with left the earlier elements: order is kept, so any
 * associative operator (tuples, non-commutative ones) works.  O(n) time,
 * O(log n) space, the same bits on every run.  Integer-only operators keep
 * one left-to-right accumulator (the same bits as always, no overhead), and
 * so do min, max, argmin and argmax, which round nothing.
 */
enum { CASC_BLOCK = 128, CASC_DEPTH = 64 };

typedef struct {
    int nreds;
    IrOperator *reds;
    char ***acc;          /* acc[i][k]: reduction i's accumulator (the current block's, when cascaded) */
    const char ***ne;     /* ne[i][k]: its neutral element */
    bool *on;             /* on[i]: reduction i is cascaded */
    bool any;             /* some reduction is: the loop runs in blocks */
    const char *var;      /* the loop variable */
} Casc;

/* Cascade an operator that takes floats, unless it only selects one operand
 * (min, max, argmin, argmax: exact in any grouping, so the left-to-right
 * loop keeps its tie and NaN behaviour at no cost). */
static bool op_cascades(const IrOperator *op) {
    static const char *const select[] = { "min", "max", "argmin", "argmax" };
    for (size_t i = 0; op->name && i < sizeof select / sizeof *select; i++) {
        if (strcmp(op->name, select[i]) == 0) { return false; }
    }
    for (int k = 0; k < op->arity; k++) { if (ir_scalar_is_float(op->op->ptypes[k])) { return true; } }
    return false;
}

/* In the scope where the accumulators were just declared (their neutral
 * elements are memoised there). */
static void casc_init(CEmit *c, Casc *q, int nreds, IrOperator *reds, char ***acc) {
    q->nreds = nreds;
    q->reds = reds;
    q->acc = acc;
    q->ne = calloc((size_t)nreds + 1, sizeof *q->ne);
    q->on = calloc((size_t)nreds + 1, sizeof *q->on);
    q->any = false;
    for (int i = 0; i < nreds; i++) {
        q->ne[i] = calloc((size_t)reds[i].arity + 1, sizeof *q->ne[i]);
        for (int k = 0; k < reds[i].arity; k++) { q->ne[i][k] = be_expr(&c->x, reds[i].ne[k]); }
        q->on[i] = op_cascades(&reds[i]);
        q->any = q->any || q->on[i];
    }
}

static void casc_free(Casc *q) {
    for (int i = 0; i < q->nreds; i++) { free(q->ne[i]); }
    free(q->ne);
    free(q->on);
}

/* Names acc[i][k] + suffix, for reduction i. */
static char **casc_names(CEmit *c, Casc *q, int i, const char *suffix) {
    char **n = calloc((size_t)q->reds[i].arity + 1, sizeof *n);
    for (int k = 0; k < q->reds[i].arity; k++) { n[k] = be_strf(&c->x, "%s%s", q->acc[i][k], suffix); }
    return n;
}

/* Open `for (var = 0; var < count; var++) {`, in blocks when cascading. */
static void casc_open(CEmit *c, Casc *q, const char *var, const char *count) {
    BeBuf *b = c->b;
    q->var = var;
    if (!q->any) {
        be_line(b, "for (int64_t %s = 0; %s < %s; %s++) {", var, var, count, var);
        b->indent++;
        return;
    }
    be_line(b, "/* float reductions: pairwise over blocks of %d, a stack of partials */", CASC_BLOCK);
    for (int i = 0; i < q->nreds; i++) {
        if (!q->on[i]) { continue; }
        for (int k = 0; k < q->reds[i].arity; k++) {
            be_line(b, "%s %ss[%d];", ct(q->reds[i].op->ptypes[k]), q->acc[i][k], CASC_DEPTH);
        }
    }
    be_line(b, "int cs_sp = 0;");
    be_line(b, "uint64_t cs_nb = 0;");
    be_line(b, "for (int64_t %sb = 0; %sb < %s; %sb += %d) {", var, var, count, var, CASC_BLOCK);
    b->indent++;
    be_line(b, "const int64_t %se = %s - %sb < %d ? %s : %sb + %d;", var, count, var, CASC_BLOCK, count, var, CASC_BLOCK);
    be_line(b, "for (int64_t %s = %sb; %s < %se; %s++) {", var, var, var, var, var);
    b->indent++;
}

/* Close the loop of casc_open; the cascaded accumulators end up holding the
 * reductions of all the elements. */
static void casc_close(CEmit *c, Casc *q) {
    BeBuf *b = c->b;
    b->indent--;
    be_line(b, "}");
    if (!q->any) { return; }
    /* push the block's partial, restart the block; merge equal-sized pairs */
    for (int i = 0; i < q->nreds; i++) {
        if (!q->on[i]) { continue; }
        for (int k = 0; k < q->reds[i].arity; k++) {
            be_line(b, "%ss[cs_sp] = %s;", q->acc[i][k], q->acc[i][k]);
            be_line(b, "%s = %s;", q->acc[i][k], q->ne[i][k]);
        }
    }
    be_line(b, "cs_sp++;");
    be_line(b, "for (uint64_t cs_m = ++cs_nb; !(cs_m & 1u); cs_m >>= 1) {");
    b->indent++;
    be_line(b, "cs_sp--;");
    for (int i = 0; i < q->nreds; i++) {
        if (!q->on[i]) { continue; }
        char **left = casc_names(c, q, i, "s[cs_sp - 1]");
        char **right = casc_names(c, q, i, "s[cs_sp]");
        apply_op(c, &q->reds[i], left, left, (const char **)right);
        free(left);
        free(right);
    }
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    /* fold the stack right to left: s[0] op (s[1] op (... op s[sp-1])) */
    be_line(b, "if (cs_sp > 0) {");
    b->indent++;
    be_line(b, "cs_sp--;");
    for (int i = 0; i < q->nreds; i++) {
        if (!q->on[i]) { continue; }
        for (int k = 0; k < q->reds[i].arity; k++) { be_line(b, "%s = %ss[cs_sp];", q->acc[i][k], q->acc[i][k]); }
    }
    be_line(b, "while (cs_sp > 0) {");
    b->indent++;
    be_line(b, "cs_sp--;");
    for (int i = 0; i < q->nreds; i++) {
        if (!q->on[i]) { continue; }
        char **left = casc_names(c, q, i, "s[cs_sp]");
        apply_op(c, &q->reds[i], q->acc[i], left, (const char **)q->acc[i]);
        free(left);
    }
    b->indent--;
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
}

static void emit_screma(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    int sw = ir_stmt_scan_width(s), rw = ir_stmt_red_width(s), nm = ir_stmt_nmapped(s);
    int nscanouts = s->post ? s->post->nres : sw;
    /* declare outputs */
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        if (v->rank) { alloc_array(c, v, count_of(c, v)); }
        else { be_line(b, "%s %s;", ct(v->elem), be_vname(v)); }
    }
    be_line(b, "{");
    b->indent++;
    char ***sacc = calloc((size_t)s->nscans + 1, sizeof *sacc);
    char ***racc = calloc((size_t)s->nreds + 1, sizeof *racc);
    for (int i = 0; i < s->nscans; i++) { sacc[i] = declare_accs(c, &s->scans[i], "s", i); }
    for (int i = 0; i < s->nreds; i++) { racc[i] = declare_accs(c, &s->reds[i], "r", i); }
    Casc q;
    casc_init(c, &q, s->nreds, s->reds, racc);
    if (s->rank == 1) {
        if (s->sharded && s->nscans) { shard_scan_prefix(c, s, sacc); }
        casc_open(c, &q, "i0", be_strf(&c->x, "%s", be_vname(s->w[0])));
        c->x.idx[0] = shard_row_index(c, s);
        c->x.idx[1] = c->x.idx[0];
        const char **p = load_params(c, s, "i0");
        const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
        be_lambda(&c->x, s->map, p, res);
        /* scans */
        const char **scanres = calloc((size_t)sw + 1, sizeof *scanres);
        int at = 0;
        for (int i = 0; i < s->nscans; i++) {
            IrOperator *op = &s->scans[i];
            if (op->exclusive) {
                for (int k = 0; k < op->arity; k++) {
                    char *t = be_strf(&c->x, "e%d_%d", i, k);
                    be_line(b, "const %s %s = %s;  (void)%s;", ct(op->op->ptypes[k]), t, sacc[i][k], t);  /* a post may not read it */
                    scanres[at + k] = t;
                }
                combine(c, op, sacc[i], res + at);
            } else {
                combine(c, op, sacc[i], res + at);
                for (int k = 0; k < op->arity; k++) { scanres[at + k] = sacc[i][k]; }
            }
            at += op->arity;
        }
        if (s->post) {
            const char **pres = calloc((size_t)s->post->nres + 1, sizeof *pres);
            be_lambda(&c->x, s->post, scanres, pres);
            for (int o = 0; o < s->post->nres; o++) { be_line(b, "%s[i0] = %s;", be_vname(s->outs[o]), pres[o]); }
            free(pres);
        } else {
            for (int o = 0; o < sw; o++) { be_line(b, "%s[i0] = %s;", be_vname(s->outs[o]), scanres[o]); }
        }
        at = sw;
        for (int i = 0; i < s->nreds; i++) {
            combine(c, &s->reds[i], racc[i], res + at);
            at += s->reds[i].arity;
        }
        for (int k = 0; k < nm; k++) {
            be_line(b, "%s[i0] = %s;", be_vname(s->outs[nscanouts + rw + k]), res[sw + rw + k]);
        }
        free(scanres);
        free(res);
        free(p);
        casc_close(c, &q);
    } else {
        /* 2-D map over a row-major n x m shape; with float reductions, one
         * blocked loop over the flat index f (i0, i1 follow it) */
        const char *w0 = be_strf(&c->x, "%s", be_vname(s->w[0]));
        const char *w1 = be_strf(&c->x, "%s", be_vname(s->w[1]));
        if (q.any) {
            be_line(b, "int64_t i0 = 0, i1 = 0;");
            casc_open(c, &q, "f", be_strf(&c->x, "(%s * %s)", w0, w1));
        } else {
            be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", w0);
            b->indent++;
            be_line(b, "for (int64_t i1 = 0; i1 < %s; i1++) {", w1);
            b->indent++;
            be_line(b, "const int64_t f = i0 * %s + i1;", w1);
        }
        c->x.idx[0] = shard_row_index(c, s);
        c->x.idx[1] = "i1";
        const char **p = load_params(c, s, "f");
        const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
        be_lambda(&c->x, s->map, p, res);
        int at = sw;
        for (int i = 0; i < s->nreds; i++) {
            combine(c, &s->reds[i], racc[i], res + at);
            at += s->reds[i].arity;
        }
        for (int k = 0; k < nm; k++) { be_line(b, "%s[f] = %s;", be_vname(s->outs[nscanouts + rw + k]), res[sw + rw + k]); }
        free(res);
        free(p);
        if (q.any) {
            be_line(b, "if (++i1 == %s) { i1 = 0; i0++; }", w1);
            casc_close(c, &q);
        } else {
            b->indent--;
            be_line(b, "}");
            b->indent--;
            be_line(b, "}");
        }
    }
    casc_free(&q);
    int o = nscanouts;
    for (int i = 0; i < s->nreds; i++) {
        for (int k = 0; k < s->reds[i].arity; k++) {
            be_line(b, "%s = %s;", be_vname(s->outs[o]), racc[i][k]);
            be_line(b, "(void)%s;", be_vname(s->outs[o]));
            o++;
        }
    }
    if (s->sharded && s->nreds) { shard_combine_reductions(c, s, nscanouts); }
    for (int i = 0; i < s->nscans; i++) { free(sacc[i]); }
    for (int i = 0; i < s->nreds; i++) { free(racc[i]); }
    free(sacc);
    free(racc);
    b->indent--;
    be_line(b, "}");
}

static void emit_filter(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    int nv = s->nouts - 1;
    IrValue *cnt = s->outs[nv];
    /* sharded: the local count here, the global one and the offset after */
    IrValue *local = s->sharded ? s->outs[0]->dims[0] : cnt;
    for (int o = 0; o < nv; o++) { alloc_array(c, s->outs[o], be_vname(s->w[0])); }
    be_line(b, "int64_t %s = 0;", be_vname(local));
    be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
    b->indent++;
    c->x.idx[0] = shard_row_index(c, s);
    const char **p = load_params(c, s, "i0");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    be_line(b, "if (%s) {", res[0]);
    b->indent++;
    for (int o = 0; o < nv; o++) { be_line(b, "%s[%s] = %s;", be_vname(s->outs[o]), be_vname(local), res[1 + o]); }
    be_line(b, "%s++;", be_vname(local));
    b->indent--;
    be_line(b, "}");
    free(res);
    free(p);
    b->indent--;
    be_line(b, "}");
    if (s->sharded) {
        for (int z = 0; z < c->e->nshards; z++) {
            IrShardSize *sz = &c->e->shards[z];
            if (sz->global != cnt) { continue; }
            be_line(b, "int64_t %s, %s;", be_vname(sz->global), be_vname(sz->offset));
            be_line(b, "gpuc_comm_rc |= gpuc_shard_size(comm, %s, &%s, &%s);", be_vname(sz->local), be_vname(sz->global), be_vname(sz->offset));
            be_line(b, "(void)%s; (void)%s;", be_vname(sz->global), be_vname(sz->offset));
        }
    }
}

static void emit_scatter(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    IrValue *out = s->outs[0];
    const char *n = count_of(c, s->dest);
    alloc_array(c, out, n);
    be_line(b, "if (%s > 0) { memcpy(%s, %s, (size_t)(%s) * sizeof(%s)); }", n, be_vname(out), be_vname(s->dest), n, ct(out->elem));
    be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
    b->indent++;
    c->x.idx[0] = "i0";
    const char **p = load_params(c, s, "i0");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    be_line(b, "if ((uint64_t)(%s) < (uint64_t)(%s)) { %s[%s] = %s; }", res[0], n, be_vname(out), res[0], res[1]);
    free(res);
    free(p);
    b->indent--;
    be_line(b, "}");
}

static void emit_segred(CEmit *c, IrStmt *s) {
    BeBuf *b = c->b;
    const char *rows = be_strf(&c->x, "%s", be_vname(s->w[0]));
    const char *cols = be_strf(&c->x, "%s", be_vname(s->w[1]));
    for (int o = 0; o < s->nouts; o++) {
        IrValue *v = s->outs[o];
        alloc_array(c, v, v->rank == 2 ? be_strf(&c->x, "%s * %s", rows, cols) : s->axis == 1 ? rows : cols);
    }
    const char *outer = s->axis == 1 ? "i0" : "i1", *inner = s->axis == 1 ? "i1" : "i0";
    be_line(b, "for (int64_t %s = 0; %s < %s; %s++) {", outer, outer, s->axis == 1 ? rows : cols, outer);
    b->indent++;
    char ***racc = calloc((size_t)s->nreds + 1, sizeof *racc);
    for (int i = 0; i < s->nreds; i++) { racc[i] = declare_accs(c, &s->reds[i], "r", i); }
    Casc q;
    casc_init(c, &q, s->nreds, s->reds, racc);
    casc_open(c, &q, inner, s->axis == 1 ? cols : rows);
    be_line(b, "const int64_t f = i0 * %s + i1;", cols);
    c->x.idx[0] = shard_row_index(c, s);
    c->x.idx[1] = "i1";
    const char **p = load_params(c, s, "f");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    int at = 0;
    for (int i = 0; i < s->nreds; i++) {
        combine(c, &s->reds[i], racc[i], res + at);
        at += s->reds[i].arity;
    }
    free(res);
    free(p);
    casc_close(c, &q);
    casc_free(&q);
    int o = 0;
    for (int i = 0; i < s->nreds; i++) {
        for (int k = 0; k < s->reds[i].arity; k++) { be_line(b, "%s[%s] = %s;", be_vname(s->outs[o++]), outer, racc[i][k]); }
    }
    if (s->per_row) {
        /* the 1-D map fused at the row (ir/fuse_rows.c): the row's results, the row's index */
        const char **args = calloc((size_t)o + 1, sizeof *args);
        for (int i = 0, at = 0; i < s->nreds; i++) {
            for (int k = 0; k < s->reds[i].arity; k++) { args[at++] = racc[i][k]; }
        }
        c->x.idx[0] = shard_row_index(c, s);
        const char **pres = calloc((size_t)s->per_row->nres + 1, sizeof *pres);
        be_lambda(&c->x, s->per_row, args, pres);
        for (int r = 0; r < s->per_row->nres; r++) { be_line(b, "%s[%s] = %s;", be_vname(s->outs[o + r]), outer, pres[r]); }
        free(pres);
        free(args);
    }
    if (s->post) {
        /* the post over the row again: its elements and the row's results */
        be_line(b, "for (int64_t i1 = 0; i1 < %s; i1++) {", cols);
        b->indent++;
        be_line(b, "const int64_t f = i0 * %s + i1;", cols);
        const char **pp = load_params(c, s, "f");
        const char **args = calloc((size_t)(s->nins + o) + 1, sizeof *args);
        for (int i = 0; i < s->nins; i++) { args[i] = pp[i]; }
        int at = s->nins;
        for (int i = 0; i < s->nreds; i++) {
            for (int k = 0; k < s->reds[i].arity; k++) { args[at++] = racc[i][k]; }
        }
        const char **pres = calloc((size_t)s->post->nres + 1, sizeof *pres);
        be_lambda(&c->x, s->post, args, pres);
        for (int r = 0; r < s->post->nres; r++) { be_line(b, "%s[f] = %s;", be_vname(s->outs[o + r]), pres[r]); }
        free(pres);
        free(args);
        free(pp);
        b->indent--;
        be_line(b, "}");
    }
    for (int i = 0; i < s->nreds; i++) { free(racc[i]); }
    free(racc);
    b->indent--;
    be_line(b, "}");
    if (c->shard && s->sharded && s->axis == 0) { shard_combine_columns(c, s, cols); }
}

static void emit_scalar(CEmit *c, IrStmt *s) {
    if (s->nouts == 1 && s->outs[0]->has_const && !s->outs[0]->name) {
        return;  /* a constant size: written as a literal where used */
    }
    if (ir_size_check_stmt(s)) {
        /* a failed check is recorded and the entry goes on (every operand of
         * another size is read with bounds checks) to fail at the end */
        be_size_check(&c->x, c->m->file, s, NULL);
        return;
    }
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, NULL, res);
    for (int o = 0; o < s->nouts; o++) {
        be_line(c->b, "const %s %s = %s;", ct(s->outs[o]->elem), be_vname(s->outs[o]), res[o]);
    }
    free(res);
}

/* ---- sharded entries (docs/sharding.md) ----
 *
 * After ir_shard, a statement marked `sharded` loops over this rank's shard
 * (its width is the local size); what crosses ranks is emitted here, over
 * the GpucComm vtable (runtime/gpuc_comm.h): the sizes at entry, the scan
 * prefixes before a scan's loop, the reductions after it, a filter's count.
 * Every collective's status is or'ed into gpuc_comm_rc, checked at the end.
 */

static IrShardSize *shard_of_value(IrEntry *e, const IrValue *v) {
    for (int i = 0; i < e->nshards; i++) {
        if (e->shards[i].global == v || e->shards[i].local == v) { return &e->shards[i]; }
    }
    return NULL;
}

/* int gpuc_shard_NAME(const GpucComm *comm, local sizes, params, outs) */
static void shard_signature(BeBuf *b, IrEntry *e) {
    IrEntry local = *e;
    IrValue **sizes = calloc((size_t)e->nsizes + 1, sizeof *sizes);
    for (int i = 0; i < e->nsizes; i++) {
        IrShardSize *z = shard_of_value(e, e->sizes[i]);
        sizes[i] = z ? z->local : e->sizes[i];
    }
    local.sizes = sizes;
    be_entry_signature(b, &local, "gpuc_shard_", "const GpucComm *comm");
    free(sizes);
}

/* The global sizes and this rank's offsets, from the local sizes. */
static void shard_sizes(CEmit *c) {
    be_line(c->b, "int gpuc_comm_rc = 0;");
    for (int i = 0; i < c->e->nshards; i++) {
        IrShardSize *z = &c->e->shards[i];
        if (!z->is_param) { continue; }
        be_line(c->b, "int64_t %s, %s;", be_vname(z->global), be_vname(z->offset));
        be_line(c->b, "gpuc_comm_rc |= gpuc_shard_size(comm, %s, &%s, &%s);", be_vname(z->local), be_vname(z->global),
                be_vname(z->offset));
        be_line(c->b, "(void)%s; (void)%s;", be_vname(z->global), be_vname(z->offset));
    }
}

/* The global index of row (element) i0 of a statement. */
static const char *shard_row_index(CEmit *c, IrStmt *s) {
    if (!c->shard || !s->sharded) { return "i0"; }
    IrShardSize *z = shard_of_value(c->e, s->w[0]);
    if (!z) { IR_UNREACHABLE("sharded statement without a sharded size"); }
    return be_strf(&c->x, "(i0 + %s)", be_vname(z->offset));
}

/* Gather vals[0..arity) of every rank and fold them into acc, in rank order:
 * ranks 0 .. comm->size - 1, or only those before this one (`before`). */
static void shard_gather_fold(CEmit *c, IrOperator *op, char *const *vals, char **acc, bool before) {
    BeBuf *b = c->b;
    int bytes = 0;
    for (int k = 0; k < op->arity; k++) { bytes += ir_scalar_size(op->op->ptypes[k]); }
    be_line(b, "{");
    b->indent++;
    be_line(b, "unsigned char sb[%d];", bytes);
    int at = 0;
    for (int k = 0; k < op->arity; k++) {
        be_line(b, "memcpy(sb + %d, &%s, %d);", at, vals[k], ir_scalar_size(op->op->ptypes[k]));
        at += ir_scalar_size(op->op->ptypes[k]);
    }
    be_line(b, "unsigned char *ab = (unsigned char *)gpuc_alloc((size_t)comm->size * %d);", bytes);
    be_line(b, "gpuc_comm_rc |= comm->all_gather(comm, sb, ab, %d, NULL);", bytes);
    be_line(b, "for (int r = 0; r < %s; r++) {", before ? "comm->rank" : "comm->size");
    b->indent++;
    const char **part = calloc((size_t)op->arity + 1, sizeof *part);
    at = 0;
    for (int k = 0; k < op->arity; k++) {
        part[k] = be_strf(&c->x, "pr%d", k);
        be_line(b, "%s %s;", ct(op->op->ptypes[k]), part[k]);
        be_line(b, "memcpy(&%s, ab + (size_t)r * %d + %d, %d);", part[k], bytes, at, ir_scalar_size(op->op->ptypes[k]));
        at += ir_scalar_size(op->op->ptypes[k]);
    }
    combine(c, op, acc, part);
    free(part);
    b->indent--;
    be_line(b, "}");
    be_line(b, "free(ab);");
    b->indent--;
    be_line(b, "}");
    be_expr_reset(&c->x);  /* temporaries of the closed scopes */
}

/* Each scan starts from the fold of the earlier ranks' totals: a pass over
 * the shard computes this rank's totals, an all-gather shares them. */
static void shard_scan_prefix(CEmit *c, IrStmt *s, char ***sacc) {
    BeBuf *b = c->b;
    be_line(b, "{");
    b->indent++;
    be_line(b, "/* the scans' totals over this shard, then the earlier ranks' prefix */");
    char ***tot = calloc((size_t)s->nscans + 1, sizeof *tot);
    for (int i = 0; i < s->nscans; i++) { tot[i] = declare_accs(c, &s->scans[i], "st", i); }
    be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
    b->indent++;
    c->x.idx[0] = shard_row_index(c, s);
    c->x.idx[1] = c->x.idx[0];
    const char **p = load_params(c, s, "i0");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    int at = 0;
    for (int i = 0; i < s->nscans; i++) {
        combine(c, &s->scans[i], tot[i], res + at);
        at += s->scans[i].arity;
    }
    free(res);
    free(p);
    b->indent--;
    be_line(b, "}");
    be_expr_reset(&c->x);
    for (int i = 0; i < s->nscans; i++) {
        shard_gather_fold(c, &s->scans[i], tot[i], sacc[i], true);
        free(tot[i]);
    }
    free(tot);
    b->indent--;
    be_line(b, "}");
    be_expr_reset(&c->x);
}

/* A column reduction over sharded rows: the outs hold this rank's partial
 * per column; gather every rank's columns and fold each column in rank order. */
static void shard_combine_columns(CEmit *c, IrStmt *s, const char *cols) {
    BeBuf *b = c->b;
    int o = 0;
    be_expr_reset(&c->x);  /* the loops' temporaries are out of scope */
    for (int i = 0; i < s->nreds; i++) {
        IrOperator *op = &s->reds[i];
        int bytes = 0;
        for (int k = 0; k < op->arity; k++) { bytes += ir_scalar_size(op->op->ptypes[k]); }
        be_line(b, "{");
        b->indent++;
        be_line(b, "/* the ranks' partials of every column, combined in rank order */");
        be_line(b, "const size_t cb = (size_t)(%s) * %d;", cols, bytes);
        be_line(b, "unsigned char *sb = (unsigned char *)gpuc_alloc(cb);");
        be_line(b, "unsigned char *ab = (unsigned char *)gpuc_alloc(cb * (size_t)comm->size);");
        be_line(b, "for (int64_t j = 0; j < %s; j++) {", cols);
        b->indent++;
        int at = 0;
        for (int k = 0; k < op->arity; k++) {
            be_line(b, "memcpy(sb + (size_t)j * %d + %d, &%s[j], %d);", bytes, at, be_vname(s->outs[o + k]),
                    ir_scalar_size(op->op->ptypes[k]));
            at += ir_scalar_size(op->op->ptypes[k]);
        }
        b->indent--;
        be_line(b, "}");
        be_line(b, "gpuc_comm_rc |= comm->all_gather(comm, sb, ab, cb, NULL);");
        be_line(b, "for (int64_t j = 0; j < %s; j++) {", cols);
        b->indent++;
        char **acc = declare_accs(c, op, "ca", i);
        be_line(b, "for (int r = 0; r < comm->size; r++) {");
        b->indent++;
        const char **part = calloc((size_t)op->arity + 1, sizeof *part);
        at = 0;
        for (int k = 0; k < op->arity; k++) {
            part[k] = be_strf(&c->x, "pr%d", k);
            be_line(b, "%s %s;", ct(op->op->ptypes[k]), part[k]);
            be_line(b, "memcpy(&%s, ab + (size_t)r * cb + (size_t)j * %d + %d, %d);", part[k], bytes, at,
                    ir_scalar_size(op->op->ptypes[k]));
            at += ir_scalar_size(op->op->ptypes[k]);
        }
        combine(c, op, acc, part);
        free(part);
        b->indent--;
        be_line(b, "}");
        for (int k = 0; k < op->arity; k++) { be_line(b, "%s[j] = %s;", be_vname(s->outs[o + k]), acc[k]); }
        free(acc);
        b->indent--;
        be_line(b, "}");
        be_line(b, "free(sb);");
        be_line(b, "free(ab);");
        b->indent--;
        be_line(b, "}");
        be_expr_reset(&c->x);
        o += op->arity;
    }
}

/* The all_reduce operator of a built-in sum/min/max of one number, or NULL.
 * Float min and max are fminf/fmaxf with NaN as the neutral element (NaNs
 * ignored), which a collective's min/max need not match: they are gathered
 * and combined with the operator itself, like every other reduction. */
static const char *shard_builtin_op(const IrOperator *op) {
    if (op->arity != 1 || !op->name || op->op->ptypes[0] == IR_BOOL) { return NULL; }
    if (strcmp(op->name, "add") == 0) { return "GPUC_COMM_SUM"; }
    if (ir_scalar_is_float(op->op->ptypes[0])) { return NULL; }
    if (strcmp(op->name, "min") == 0) { return "GPUC_COMM_MIN"; }
    if (strcmp(op->name, "max") == 0) { return "GPUC_COMM_MAX"; }
    return NULL;
}

static const char *comm_type(IrScalar t) {
    switch (t) {
    case IR_I32: return "GPUC_COMM_I32";
    case IR_I64: return "GPUC_COMM_I64";
    case IR_U32: return "GPUC_COMM_U32";
    case IR_U64: return "GPUC_COMM_U64";
    case IR_F32: return "GPUC_COMM_F32";
    case IR_F64: return "GPUC_COMM_F64";
    default: IR_UNREACHABLE("no collective type for bool");
    }
}

/* The statement's reduction results (outs from first_out) hold this rank's
 * partials; make them the reductions over all ranks. */
static void shard_combine_reductions(CEmit *c, IrStmt *s, int first_out) {
    BeBuf *b = c->b;
    int o = first_out;
    for (int i = 0; i < s->nreds; i++) {
        IrOperator *op = &s->reds[i];
        const char *builtin = shard_builtin_op(op);
        if (builtin) {
            const char *v = be_vname(s->outs[o]);
            be_line(b, "gpuc_comm_rc |= comm->all_reduce(comm, &%s, &%s, 1, %s, %s, NULL);", v, v,
                    comm_type(op->op->ptypes[0]), builtin);
            o++;
            continue;
        }
        be_line(b, "{");
        b->indent++;
        char **vals = calloc((size_t)op->arity + 1, sizeof *vals);
        for (int k = 0; k < op->arity; k++) { vals[k] = be_strf(&c->x, "%s", be_vname(s->outs[o + k])); }
        char **acc = declare_accs(c, op, "ra", i);
        shard_gather_fold(c, op, vals, acc, false);
        for (int k = 0; k < op->arity; k++) { be_line(b, "%s = %s;", vals[k], acc[k]); }
        free(acc);
        free(vals);
        b->indent--;
        be_line(b, "}");
        be_expr_reset(&c->x);
        o += op->arity;
    }
}

static bool is_result(IrEntry *e, IrValue *v, int before) {
    for (int i = 0; i < before; i++) { if (e->results[i] == v) { return true; } }
    return false;
}

static void emit_entry(CEmit *c, IrEntry *e) {
    BeBuf *b = c->b;
    be_printf(b, "/* %s:%d: entry %s%s */\n", c->m->file, e->line, e->name, c->shard ? ", sharded" : "");
    if (c->shard) { shard_signature(b, e); }
    else { be_entry_signature(b, e, "gpuc_entry_", NULL); }
    be_printf(b, " {\n");
    b->indent = 1;
    be_line(b, "gpuc_oob_hit = 0;  /* this call's out-of-bounds record: an earlier call's does not fail it */");
    be_line(b, "gpuc_size_msg[0] = 0;");
    c->e = e;
    c->x.ntmp = 0;
    if (c->shard) { shard_sizes(c); }
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        be_expr_reset(&c->x);
        if (s->kind != IR_S_SCALAR || !(s->nouts == 1 && s->outs[0]->has_const)) {
            be_line(b, "/* %s:%d */", c->m->file, s->line);
        }
        switch (s->kind) {
        case IR_S_SCREMA: emit_screma(c, s); break;
        case IR_S_FILTER: emit_filter(c, s); break;
        case IR_S_SCATTER: emit_scatter(c, s); break;
        case IR_S_SEGRED: emit_segred(c, s); break;
        case IR_S_SCALAR: emit_scalar(c, s); break;
        }
    }
    /* an index out of bounds or a size error anywhere fails the entry (no results) */
    be_line(b, c->shard ? "if (gpuc_oob_hit || gpuc_comm_rc) {" : "if (gpuc_oob_hit) {");
    b->indent++;
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        for (int o = 0; o < s->nouts; o++) {
            if (s->outs[o]->rank) { be_line(b, "free(%s);", be_vname(s->outs[o])); }
        }
    }
    be_line(b, c->shard ? "return gpuc_oob_hit ? 2 : 3;" : "return 2;");
    b->indent--;
    be_line(b, "}");
    /* results: hand arrays over (copying inputs and repeats), free the rest */
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (!v->rank) { be_line(b, "*out%d = %s;", i, be_vname(v)); continue; }
        const char *n = count_of(c, v);
        be_line(b, "out%d_shape[0] = %s;", i, be_vname(v->dims[0]));
        be_line(b, "out%d_shape[1] = %s;", i, v->rank == 2 ? be_vname(v->dims[1]) : "1");
        if (v->is_param || is_result(e, v, i)) {
            be_line(b, "*out%d = (%s *)gpuc_alloc((size_t)(%s) * sizeof(%s));", i, ct(v->elem), n, ct(v->elem));
            be_line(b, "if (%s > 0) { memcpy(*out%d, %s, (size_t)(%s) * sizeof(%s)); }", n, i, be_vname(v), n, ct(v->elem));
        } else {
            be_line(b, "*out%d = %s;", i, be_vname(v));
        }
    }
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        for (int o = 0; o < s->nouts; o++) {
            IrValue *v = s->outs[o];
            if (v->rank && !is_result(e, v, e->nresults)) { be_line(b, "free(%s);", be_vname(v)); }
        }
    }
    be_line(b, "return 0;");
    b->indent = 0;
    be_printf(b, "}\n\n");
}

int be_emit_c(FILE *out, IrModule *m) {
    BeBuf b = { 0 };
    CEmit c = { 0 };
    c.b = &b;
    c.m = m;
    c.x.b = &b;
    c.x.cuda = false;
    be_printf(&b, "/* Generated by gpuc from %s: reference C backend (C99). */\n", m->file);
    be_prelude(&b, false);
    be_printf(&b,
        "static inline void *gpuc_alloc(size_t n) {\n"
        "    void *p = malloc(n ? n : 1);\n"
        "    if (!p) { fprintf(stderr, \"gpuc: out of memory\\n\"); exit(1); }\n"
        "    return p;\n"
        "}\n\n");
    for (int i = 0; i < m->nentries; i++) {
        be_entry_signature(&b, m->entries[i], "gpuc_entry_", NULL);
        be_printf(&b, ";\n");
    }
    be_printf(&b, "\n");
    for (int i = 0; i < m->nentries; i++) { emit_entry(&c, m->entries[i]); }
    be_printf(&b, "#ifdef GPUC_MAIN\n");
    be_main(&b, m);
    be_printf(&b, "#endif /* GPUC_MAIN */\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_expr_free(&c.x);
    return 0;
}

/* ---- --emit=c-shard: the sharded entries after the plain ones ---- */

void be_shard_prelude(BeBuf *b, bool table, bool cuda) {
    be_printf(b,
        "\n/* ---- sharded entries (gpuc --emit=c-shard, docs/sharding.md) ---- */\n"
        "/* the collectives' vtable, as in runtime/gpuc_comm.h (ORDER COMM VTABLE) */\n");
    be_printf(b, "%s", comm_vtable_text);
    be_printf(b,
        "\n"
        "#ifdef __GNUC__\n"
        "#define GPUC_SHARD_UNUSED __attribute__((unused))\n"
        "#else\n"
        "#define GPUC_SHARD_UNUSED\n"
        "#endif\n");
    if (!cuda) {
        be_printf(b,
        "/* global = the sum of the ranks' local sizes, offset = the sum over earlier ranks */\n"
        "static GPUC_SHARD_UNUSED int gpuc_shard_size(const GpucComm *comm, int64_t local, int64_t *global, int64_t *offset) {\n"
        "    int64_t *all = (int64_t *)gpuc_alloc((size_t)comm->size * sizeof(int64_t));\n"
        "    int rc = comm->all_gather(comm, &local, all, sizeof local, NULL);\n"
        "    *global = 0;\n"
        "    *offset = 0;\n"
        "    for (int r = 0; r < comm->size; r++) {\n"
        "        if (r < comm->rank) { *offset += all[r]; }\n"
        "        *global += all[r];\n"
        "    }\n"
        "    free(all);\n"
        "    return rc;\n"
        "}\n\n");
    }
    if (!table) { return; }
    be_printf(b,
        "/* What a generic driver needs to call an entry plain and sharded\n"
        " * (tests/shard/Inputs/shard_check.c). */\n"
        "typedef struct GpucShardArg {\n"
        "    int kind;          /* scalar kind: 0 bool, 1 i32, 2 i64, 3 u32, 4 u64, 5 f32, 6 f64 */\n"
        "    int rank;          /* 0, 1 or 2 */\n"
        "    int size[2];       /* the entry's size variable of each dimension, or -1 */\n"
        "    int64_t fixed[2];  /* when size[d] is -1: the constant size, or -1 (known at run time) */\n"
        "    int sharded;       /* split over the ranks along the first dimension */\n"
        "} GpucShardArg;\n"
        "/* sizes: the entry's size variables (global for plain, local for sharded);\n"
        " * args: each flattened parameter's data (scalars: a pointer to the value);\n"
        " * results: scalar results are written through results[i]; array results\n"
        " * are returned malloc'ed in results[i] with their shapes. */\n"
        "typedef int (*GpucShardCall)(const GpucComm *comm, const int64_t *sizes, void *const *args, void **results,\n"
        "                             int64_t (*shapes)[2]);\n"
        "typedef struct GpucShardEntry {\n"
        "    const char *name;\n"
        "    int nsizes;\n"
        "    const int *size_sharded;   /* per size variable: split over the ranks */\n"
        "    int nargs;\n"
        "    const GpucShardArg *args;\n"
        "    int nresults;\n"
        "    const GpucShardArg *results;\n"
        "    GpucShardCall plain;       /* gpuc_entry_NAME (comm unused) */\n"
        "    GpucShardCall sharded;     /* gpuc_shard_NAME */\n"
        "} GpucShardEntry;\n\n");
}

static int size_index(IrEntry *e, const IrValue *v) {
    for (int i = 0; i < e->nsizes; i++) {
        IrShardSize *z = shard_of_value(e, e->sizes[i]);
        if (e->sizes[i] == v || (z && z->local == v)) { return i; }
    }
    return -1;
}

static void shard_arg_row(BeBuf *b, IrEntry *e, const IrValue *v) {
    int sz[2] = { -1, -1 };
    long long fixed[2] = { 0, 0 };
    for (int d = 0; d < v->rank; d++) {
        sz[d] = size_index(e, v->dims[d]);
        fixed[d] = sz[d] >= 0 ? 0 : v->dims[d]->has_const ? (long long)v->dims[d]->const_val : -1;
    }
    bool sharded = v->rank >= 1 && shard_of_value(e, v->dims[0]) != NULL;
    be_printf(b, "    { %d, %d, { %d, %d }, { %lld, %lld }, %d },\n", (int)v->elem, v->rank, sz[0], sz[1], fixed[0], fixed[1],
              sharded ? 1 : 0);
}

/* A GpucShardCall over gpuc_entry_NAME (prefix "gpuc_entry_", no comm) or gpuc_shard_NAME. */
static void shard_wrapper(BeBuf *b, IrEntry *e, bool sharded) {
    const char *kind = sharded ? "sharded" : "plain";
    be_line(b, "static int gpuc_shard_call_%s_%s(const GpucComm *comm, const int64_t *sizes, void *const *args, void **results,", kind, e->name);
    be_line(b, "                                 int64_t (*shapes)[2]) {");
    b->indent++;
    be_line(b, "(void)comm; (void)sizes; (void)args; (void)results; (void)shapes;");
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_line(b, "%s *o%d = NULL;", ct(e->results[i]->elem), i); }
    }
    be_printf(b, "%*sint rc = %s%s(%s", b->indent * 4, "", sharded ? "gpuc_shard_" : "gpuc_entry_", e->name, sharded ? "comm" : "");
    bool first = !sharded;
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, "%ssizes[%d]", first ? "" : ", ", i); first = false; }
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (v->rank) { be_printf(b, "%s(const %s *)args[%d]", first ? "" : ", ", ct(v->elem), i); }
        else { be_printf(b, "%s*(const %s *)args[%d]", first ? "" : ", ", ct(v->elem), i); }
        first = false;
    }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_printf(b, "%s&o%d, shapes[%d]", first ? "" : ", ", i, i); }
        else { be_printf(b, "%s(%s *)results[%d]", first ? "" : ", ", ct(e->results[i]->elem), i); }
        first = false;
    }
    be_printf(b, ");\n");
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_line(b, "results[%d] = o%d;", i, i); }
    }
    be_line(b, "return rc;");
    b->indent--;
    be_line(b, "}");
}

void be_shard_table(BeBuf *b, IrModule *m) {
    int n = 0;
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        if (!e->sharded) { continue; }
        n++;
        be_printf(b, "static const int gpuc_shard_sizes_%s[] = {", e->name);
        for (int k = 0; k < e->nsizes; k++) { be_printf(b, " %d,", shard_of_value(e, e->sizes[k]) ? 1 : 0); }
        be_printf(b, " 0 };\n");
        be_printf(b, "static const GpucShardArg gpuc_shard_args_%s[] = {\n", e->name);
        for (int k = 0; k < e->nparams; k++) { shard_arg_row(b, e, e->params[k]); }
        be_printf(b, "    { 0, 0, { -1, -1 }, { 0, 0 }, 0 },\n};\n");
        be_printf(b, "static const GpucShardArg gpuc_shard_results_%s[] = {\n", e->name);
        for (int k = 0; k < e->nresults; k++) { shard_arg_row(b, e, e->results[k]); }
        be_printf(b, "    { 0, 0, { -1, -1 }, { 0, 0 }, 0 },\n};\n");
        shard_wrapper(b, e, false);
        shard_wrapper(b, e, true);
        be_printf(b, "\n");
    }
    be_printf(b, "static GPUC_SHARD_UNUSED const GpucShardEntry gpuc_shard_entries[] = {\n");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        if (!e->sharded) { continue; }
        be_printf(b, "    { \"%s\", %d, gpuc_shard_sizes_%s, %d, gpuc_shard_args_%s, %d, gpuc_shard_results_%s, "
                     "gpuc_shard_call_plain_%s, gpuc_shard_call_sharded_%s },\n",
                  e->name, e->nsizes, e->name, e->nparams, e->name, e->nresults, e->name, e->name, e->name);
    }
    be_printf(b, "    { NULL, 0, NULL, 0, NULL, 0, NULL, NULL, NULL },\n};\n");
    be_printf(b, "static GPUC_SHARD_UNUSED const int gpuc_shard_num_entries = %d;\n", n);
}

/* Call after be_emit_c wrote the plain entries and ir_shard rewrote the
 * module: the entries it sharded, and with `table` (every entry sharded)
 * the call table of shard_check. */
int be_emit_c_shard(FILE *out, IrModule *m, bool table) {
    BeBuf b = { 0 };
    CEmit c = { 0 };
    c.b = &b;
    c.m = m;
    c.x.b = &b;
    c.x.cuda = false;
    c.shard = true;
    be_shard_prelude(&b, table, false);
    for (int i = 0; i < m->nentries; i++) {
        if (!m->entries[i]->sharded) { continue; }
        shard_signature(&b, m->entries[i]);
        be_printf(&b, ";\n");
    }
    be_printf(&b, "\n");
    for (int i = 0; i < m->nentries; i++) {
        if (m->entries[i]->sharded) { emit_entry(&c, m->entries[i]); }
    }
    if (table) { be_shard_table(&b, m); }
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_expr_free(&c.x);
    return 0;
}
