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

#include <stdlib.h>
#include <string.h>

typedef struct {
    BeBuf *b;
    BeExprCtx x;
    IrEntry *e;
    IrModule *m;
} CEmit;

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
        casc_open(c, &q, "i0", be_strf(&c->x, "%s", be_vname(s->w[0])));
        c->x.idx[0] = "i0";
        c->x.idx[1] = "i0";
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
                    be_line(b, "const %s %s = %s;", ct(op->op->ptypes[k]), t, sacc[i][k]);
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
        c->x.idx[0] = "i0";
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
    for (int o = 0; o < nv; o++) { alloc_array(c, s->outs[o], be_vname(s->w[0])); }
    be_line(b, "int64_t %s = 0;", be_vname(cnt));
    be_line(b, "for (int64_t i0 = 0; i0 < %s; i0++) {", be_vname(s->w[0]));
    b->indent++;
    c->x.idx[0] = "i0";
    const char **p = load_params(c, s, "i0");
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, p, res);
    be_line(b, "if (%s) {", res[0]);
    b->indent++;
    for (int o = 0; o < nv; o++) { be_line(b, "%s[%s] = %s;", be_vname(s->outs[o]), be_vname(cnt), res[1 + o]); }
    be_line(b, "%s++;", be_vname(cnt));
    b->indent--;
    be_line(b, "}");
    free(res);
    free(p);
    b->indent--;
    be_line(b, "}");
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
    c->x.idx[0] = "i0";
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
}

static void emit_scalar(CEmit *c, IrStmt *s) {
    if (s->nouts == 1 && s->outs[0]->has_const && !s->outs[0]->name) {
        return;  /* a constant size: written as a literal where used */
    }
    const char **res = calloc((size_t)s->map->nres + 1, sizeof *res);
    be_lambda(&c->x, s->map, NULL, res);
    for (int o = 0; o < s->nouts; o++) {
        be_line(c->b, "const %s %s = %s;", ct(s->outs[o]->elem), be_vname(s->outs[o]), res[o]);
    }
    free(res);
}

static bool is_result(IrEntry *e, IrValue *v, int before) {
    for (int i = 0; i < before; i++) { if (e->results[i] == v) { return true; } }
    return false;
}

static void emit_entry(CEmit *c, IrEntry *e) {
    BeBuf *b = c->b;
    be_printf(b, "/* %s:%d: entry %s */\n", c->m->file, e->line, e->name);
    be_entry_signature(b, e, "gpuc_entry_", NULL);
    be_printf(b, " {\n");
    b->indent = 1;
    c->e = e;
    c->x.ntmp = 0;
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
    /* an index out of bounds anywhere fails the entry (no results) */
    be_line(b, "if (gpuc_oob_hit) {");
    b->indent++;
    for (int i = 0; i < e->nstmts; i++) {
        IrStmt *s = e->stmts[i];
        if (s->dead) { continue; }
        for (int o = 0; o < s->nouts; o++) {
            if (s->outs[o]->rank) { be_line(b, "free(%s);", be_vname(s->outs[o])); }
        }
    }
    be_line(b, "return 2;");
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
